#!/usr/bin/env bash
# test_status_line.sh - `kevo run`'s progress as terminal users see it, in a
# real terminal (tmux): while it runs the last line on the screen is one
# status line (run id, tasks k/2, the task at work, elapsed), redrawn in
# place (never a trail of them) under the scrolling per-attempt lines, cut
# to the terminal's width; verdicts in colour unless NO_COLOR is set; gone
# at the end, where the last lines name `kevo report` and `kevo best` (and
# those commands work as printed); gone
# too after Ctrl-C, the stop message on a clean line. With TERM=dumb, and
# piped, not one escape code or carriage return, and the plain lines of
# before. Needs tmux (scripts/setup.sh installs it; skipped without it).
set -euo pipefail

: "${KEVO:?set KEVO to the kevo binary}"
: "${KEVO_SRC:?set KEVO_SRC to the source tree}"
command -v tmux >/dev/null || { echo "SKIP: tmux is not installed (scripts/setup.sh installs it)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kevo-status.XXXXXX")
sock="$tmp/tmux.sock"
tm() { tmux -S "$sock" -f /dev/null "$@"; }
trap 'tm kill-server 2>/dev/null || true; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# a wrong exit status is noted and the screens are still checked below
expect_rc() { # expect_rc NAME WANT
    local got; got=$(cat "$tmp/$1/rc")
    [ "$got" = "$2" ] || { echo "$1: exit status $got, expected $2" >>"$tmp/failures"; tail -5 "$tmp/$1/final" >&2; }
}

T1=suites/c/level1/001_relu
T2=suites/c/level1/002_leaky_relu

# run NAME WIDTH COMMAND...: COMMAND in a detached terminal WIDTH x 30 in
# the source tree, a capture of the screen with escapes (-e) every 0.1 s
# into $tmp/NAME/NNNN until it exits, its exit status in $tmp/NAME/rc and
# the whole screen with its history in $tmp/NAME/final. With STOP_AFTER set,
# Ctrl-C is typed once the screen shows that many attempt lines.
run() {
    local name=$1 width=$2; shift 2
    local dir="$tmp/$name" n=0 sent=0 t0=$SECONDS
    mkdir -p "$dir"
    printf '%q ' "$@" >"$dir/cmd"
    printf '\n' >>"$dir/cmd"
    tm new-session -d -s "$name" -x "$width" -y 30 -c "$KEVO_SRC" \
        "bash $dir/cmd; echo \$? >$dir/rc.tmp; mv $dir/rc.tmp $dir/rc; sleep 600"
    while [ ! -f "$dir/rc" ]; do
        n=$((n + 1))
        # generous: a loaded machine or a sanitizer build is many times slower
        [ $((SECONDS - t0)) -lt 600 ] || fail "$name: still running after 600 s"
        tm capture-pane -p -e -t "$name" >"$dir/$(printf %04d $n)" 2>/dev/null || true
        if [ -n "${STOP_AFTER:-}" ] && [ $sent = 0 ] &&
            [ "$(grep -c '^\[1/1\] ' "$dir/$(printf %04d $n)" || true)" -ge "$STOP_AFTER" ]; then
            tm send-keys -t "$name" C-c
            sent=1
        fi
        sleep 0.1
    done
    tm capture-pane -p -e -S - -t "$name" >"$dir/final"
    tm kill-session -t "$name"
}

# ---- colour, 2 tasks: the status line while it runs, the end lines
run live 120 env -u NO_COLOR "$KEVO" run $T1 $T2 --iterations 3 --quick --db "$tmp/live.db"
expect_rc live 0
# ---- NO_COLOR, a narrow terminal: no escape at all, the status line cut to fit
run nocolor 60 env NO_COLOR=1 "$KEVO" run $T1 --iterations 2 --quick --db "$tmp/nocolor.db"
expect_rc nocolor 0
# ---- TERM=dumb on a terminal: the plain lines
run dumb 120 env TERM=dumb "$KEVO" run $T1 --iterations 2 --quick --db "$tmp/dumb.db"
expect_rc dumb 0
# ---- Ctrl-C after the first attempt: stops after the attempt in flight
STOP_AFTER=1 run stop 120 "$KEVO" run $T1 --iterations 40 --quick --db "$tmp/stop.db"
expect_rc stop 130
# ---- piped (stdout a pipe, stderr the terminal)
run piped 120 bash -c "\"\$0\" run $T1 $T2 --iterations 3 --quick --db '$tmp/piped.db' | cat >'$tmp/piped.out'" "$KEVO"
expect_rc piped 0
# the end lines' commands work as printed
for what in "best kernels" "HTML report"; do
    line=$(grep "^  $what: *kevo " "$tmp/piped.out" || true)
    [ -n "$line" ] || { echo "piped: no '$what' line" >>"$tmp/failures"; continue; }
    read -r -a words <<<"${line#*: }"
    (cd "$tmp" && "$KEVO" "${words[@]:1}" >"$tmp/endcmd.out" 2>&1) ||
        { echo "'${line#*: }' as printed failed: $(head -3 "$tmp/endcmd.out")" >>"$tmp/failures"; }
done
[ -f "$tmp/best-run-1/relu.c" ] || echo "kevo best as printed wrote no best-run-1/relu.c" >>"$tmp/failures"
grep -q "<html" "$tmp/run-1.html" 2>/dev/null || echo "kevo report as printed wrote no run-1.html" >>"$tmp/failures"

python3 - "$tmp" <<'PY'
import os, re, sys

tmp = sys.argv[1]
ESC = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
STATUS = re.compile(r"^kevo run \d+ \| tasks \d+/\d+ \|")
ATTEMPT = re.compile(r"^\[\d+/\d+\] ")
bad = []
if os.path.exists(os.path.join(tmp, "failures")):
    bad += open(os.path.join(tmp, "failures")).read().split("\n")[:-1]

def check(ok, what):
    if not ok:
        bad.append(what)
    return ok

def samples(name):
    d = os.path.join(tmp, name)
    for f in sorted(os.listdir(d)):
        if f.isdigit():
            raw = open(os.path.join(d, f), encoding="utf-8", errors="replace").read()
            lines = [l.rstrip() for l in ESC.sub("", raw).split("\n")]
            yield raw, [l for l in lines if l]

def final(name):
    raw = open(os.path.join(tmp, name, "final"), encoding="utf-8", errors="replace").read()
    return raw, [l.rstrip() for l in ESC.sub("", raw).split("\n") if l.strip()]

def live_run(name, width, ntasks, iters, task_names):
    running = with_attempts = named = no_status = 0
    elapsed = set()
    for raw, lines in samples(name):
        if not lines or any("finished; see" in l or l.startswith("kevo run: stopped") for l in lines):
            continue  # not started yet, or over
        running += 1
        st = [i for i, l in enumerate(lines) if STATUS.match(l)]
        check(len(st) <= 1, f"{name}: {len(st)} status lines on one screen (a trail):\n" + "\n".join(lines))
        if not st:
            no_status += 1
            continue
        s = lines[st[-1]]
        check(st[-1] == len(lines) - 1, f"{name}: the status line is not the last line:\n" + "\n".join(lines))
        check(len(s) <= width - 1, f"{name}: status line of {len(s)} chars in a {width}-column terminal: {s!r}")
        check(f"| tasks " in s and re.search(rf"\| tasks [0-{ntasks}]/{ntasks} ", s + " "), f"{name}: no tasks k/{ntasks}: {s!r}")
        m = re.search(r"(\d+m\d\ds) elapsed", s)
        if width >= 100:
            check(m is not None, f"{name}: no elapsed time: {s!r}")
        if m:
            elapsed.add(m.group(1))
        if re.search(rf"\| ({'|'.join(task_names)}) iter [1-{iters}]/{iters} (draft|refine): (proposing|verifying)", s):
            named += 1
        if any(ATTEMPT.match(l) for l in lines[:st[-1]]):
            with_attempts += 1
    check(running >= 5, f"{name}: only {running} screens caught while running")
    # the one moment a screen may show no status line: the status line
    # erased at the end, before the final lines are printed
    check(no_status <= 2, f"{name}: {no_status} screens without the status line while running")
    check(named >= 1, f"{name}: the status line never named the task at work")
    check(with_attempts >= 1, f"{name}: never attempt lines above the status line")
    return elapsed

# colour
el = live_run("live", 120, 2, 3, ["relu", "leaky_relu"])
check(len(el) >= 2, f"live: the elapsed time never moved: {sorted(el)}")
raw, lines = final("live")
check(not any(STATUS.match(l) for l in lines), "live: the status line is still there at the end:\n" + "\n".join(lines))
check(any(re.match(r"^run \d+ finished; see `kevo report --run \d+ --db ", l) for l in lines), "live: no 'finished; see kevo report' line")
check(any("kevo best --db " in l and "--out " in l for l in lines), "live: the end does not name kevo best")
check(any("kevo report" in l and "--format html" in l for l in lines), "live: the end does not name the HTML report")
check(lines[-1].lstrip().startswith("HTML report:"), f"live: last line {lines[-1]!r}")
check(sum(1 for l in lines if ATTEMPT.match(l)) == 6, "live: not 6 attempt lines at the end")
check("\x1b[32m" in raw or any("\x1b[32m" in r for r, _ in samples("live")), "live: verdicts not coloured (no green) on a terminal")

# NO_COLOR, 60 columns
live_run("nocolor", 60, 1, 2, ["relu"])
for raw, _ in samples("nocolor"):
    if not check("\x1b" not in raw, "nocolor: an escape sequence with NO_COLOR=1: " + repr(raw[:400])):
        break
raw, lines = final("nocolor")
check("\x1b" not in raw, "nocolor: escapes in the final screen")
check(not any(STATUS.match(l) for l in lines), "nocolor: status line left at the end")

# TERM=dumb: plain lines only
for raw, lines in list(samples("dumb")) + [final("dumb")]:
    check("\x1b" not in raw, "dumb: an escape sequence with TERM=dumb")
    check(not any(STATUS.match(l) for l in lines), "dumb: a status line with TERM=dumb")

# Ctrl-C
raw, lines = final("stop")
check(not any(STATUS.match(l) for l in lines), "stop: the status line is left after Ctrl-C:\n" + "\n".join(lines))
check(any(l.startswith("kevo run: stopped; continue with `kevo run --resume ") for l in lines),
      "stop: the stop message does not start a clean line:\n" + "\n".join(lines))

# piped: the exact plain format
out = open(os.path.join(tmp, "piped.out"), "rb").read()
check(b"\r" not in out and b"\x1b" not in out, "piped: carriage returns or escapes in piped output")
pl = out.decode().split("\n")
check(pl[-1] == "", "piped: output does not end with a newline")
pl = pl[:-1]
att = re.compile(r"^\[[12]/2\] (relu|leaky_relu) +iter  [1-3]/3 (draft |refine) .{24} "
                 r"(correct|incorrect|compile_error|rejected|timeout|crash|infra_error) +( *[0-9.]+x| {7})  best [0-9.]+x$")
fmt = [
    re.compile(r"^run \d+: 2 tasks, 3 iterations each, generator builtin, store .*piped\.db$"),
    *[att] * 3,
    re.compile(r"^-- 1 of 2 tasks done, \d+m\d\ds elapsed, about \d+m\d\ds left$"),
    *[att] * 3,
    re.compile(r"^run \d+ finished; see `kevo report --run \d+ --db .*piped\.db`$"),
    re.compile(r"^  best kernels: kevo best --db .*piped\.db --run \d+ --out \S+$"),
    re.compile(r"^  HTML report:  kevo report --run \d+ --db .*piped\.db --format html -o \S+\.html$"),
]
check(len(pl) == len(fmt), f"piped: {len(pl)} lines, expected {len(fmt)}:\n" + "\n".join(pl))
for i, (l, r) in enumerate(zip(pl, fmt)):
    check(r.match(l) is not None, f"piped: line {i + 1} is not in the plain format: {l!r}")
check(all(" relu " in l for l in pl[1:4]) and all("leaky_relu" in l for l in pl[5:8]), "piped: tasks out of order")

if bad:
    print("\n".join("FAIL: " + b for b in bad), file=sys.stderr)
    sys.exit(1)
print("status line: live, NO_COLOR, TERM=dumb, Ctrl-C and piped all as expected")
PY
