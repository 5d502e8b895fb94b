#!/usr/bin/env bash
# tests/integration/test_install.sh - kevo installs like any C tool
# (docs/install.md): `cmake --install` into a temporary prefix, the prefix
# copied elsewhere, and everything then run from the copy alone, with the
# source and build trees hidden (a private mount namespace lays an empty
# tmpfs over them; where that is not allowed the test says so and relies on
# `kevo --data-dir` naming the copy): the data directory it resolves,
# `kevo tasks check` of an installed task, `kevo eval` of a correct kernel,
# a two-iteration built-in `kevo run` named the short way (c/level1/...),
# the errors when the data cannot be found, the man page (groff), the bash
# completion (bash -n, and completing `kevo ru` -> run), a program built
# with `pkg-config --static` against the installed library, and the .deb
# of `cpack -G DEB` (its Depends and files).
#
# Environment: KEVO (the binary), KEVO_SRC (the source root), KEVO_BUILD
# (the build folder it was built in).
set -uo pipefail
KEVO_SRC=${KEVO_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
KEVO=${KEVO:-$KEVO_SRC/build/kevo}
KEVO_BUILD=${KEVO_BUILD:-$(dirname "$KEVO")}
tmp=$(mktemp -d)
chmod 755 "$tmp" # the sandbox runs candidates as another uid: it must read the prefix
trap 'rm -rf "$tmp"' EXIT
fails=0
checks=0
check() { # cond description
    checks=$((checks + 1))
    if eval "$1"; then echo "ok   $2"; else echo "FAIL $2"; fails=$((fails + 1)); fi
}
for tool in cmake python3; do
    command -v $tool >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }
done
case "$tmp" in
"$KEVO_SRC"/* | "$KEVO_BUILD"/*) echo "SKIP: TMPDIR ($tmp) lies inside the trees this test hides"; exit 77 ;;
esac

# --- install, then move the prefix -----------------------------------------
out=$(cmake --install "$KEVO_BUILD" --prefix "$tmp/prefix" 2>&1); rc=$?
check '[ $rc = 0 ]' "cmake --install succeeds (exit $rc) ${out: -300}"
mkdir -p "$tmp/moved" "$tmp/cwd" "$tmp/cache"
chmod 755 "$tmp/moved"
chmod 700 "$tmp/cache"
cp -a "$tmp/prefix" "$tmp/moved/p" && rm -rf "$tmp/prefix"
P=$tmp/moved/p
data=$P/share/kevo
check '[ -x "$P/bin/kevo" ] && [ -f "$data/harness/protocol.h" ] && [ -f "$data/prompts/c/system.md" ] &&
       [ -f "$data/suites/c/level1/001_relu/task.json" ] && [ -f "$data/docs/install.md" ]' \
    "the prefix holds bin/kevo and share/kevo/{harness,prompts,suites,docs}"
check '[ -f "$P/lib/libkevocore.a" ] && [ -f "$P/include/kevo/task.h" ] && [ -f "$P/include/kevo/sys/backend.h" ] &&
       [ -f "$P/lib/pkgconfig/kevo.pc" ]' "the prefix holds libkevocore.a, include/kevo (with sys/) and kevo.pc"
check '[ -f "$P/share/man/man1/kevo.1" ] && [ -f "$P/share/bash-completion/completions/kevo" ]' \
    "the prefix holds the man page and the bash completion"

# Run a command from the copied prefix only: cwd outside the repository, no
# KEVO_* overrides, its own cache, and (where allowed) the source and build
# trees hidden under empty tmpfs mounts.
hide=()
if unshare -m --propagation private true 2>/dev/null; then
    hide=(unshare -m --propagation private bash -c
        'for d in "$KEVO_SRC" "$KEVO_BUILD"; do
            [ ! -d "$d" ] || mount -t tmpfs -o size=1m tmpfs "$d" || exit 3
        done; exec "$@"' hide)
else
    echo "note: unshare -m is not allowed here: the source tree is not hidden; the check is kevo --data-dir"
fi
inst() { # command... (run from the copy)
    (cd "$tmp/cwd" && env -u KEVO_DATA_DIR -u KEVO_HARNESS_DIR -u KEVO_PROMPTS_DIR -u KEVO_SUITES_DIR \
        KEVO_SRC="$KEVO_SRC" KEVO_BUILD="$KEVO_BUILD" KEVO_CACHE_DIR="$tmp/cache" "${hide[@]}" "$@")
}
if [ ${#hide[@]} -gt 0 ]; then
    out=$(inst bash -c 'ls -A "$KEVO_SRC" | wc -l; [ -e "$KEVO_SRC/harness/protocol.h" ] && echo visible')
    check '[ "$out" = 0 ]' "the source tree is hidden from the installed kevo's commands (got '$out')"
fi

# --- the data directory ------------------------------------------------------
out=$(inst "$P/bin/kevo" --data-dir 2>&1); rc=$?
check '[ $rc = 0 ] && [ "$out" = "$(realpath "$data")" ]' "kevo --data-dir names the copied prefix's share/kevo (got '$out', exit $rc)"
out=$(inst "$P/bin/kevo" --version 2>&1)
check '[[ $out =~ ^kevo\ [0-9] ]]' "kevo --version (got '$out')"
out=$(cd "$tmp/cwd" && KEVO_DATA_DIR=$tmp/nowhere "$P/bin/kevo" --data-dir 2>&1); rc=$?
check '[ $rc = 3 ] && grep -q "KEVO_DATA_DIR=$tmp/nowhere" <<<"$out"' \
    "a KEVO_DATA_DIR that does not exist is an error naming it, not a fallback (exit $rc: $out)"
out=$(cd "$tmp/cwd" && KEVO_DATA_DIR=$tmp/nowhere "$P/bin/kevo" tasks list c/level1 2>&1); rc=$?
check '[ $rc = 3 ] && grep -q "KEVO_DATA_DIR" <<<"$out"' "and kevo tasks stops at once on it (exit $rc: $out)"
# the executable alone, away from any share/kevo: it says where it looked
# (unless the prefix this build was configured for holds an install)
configured=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$KEVO_BUILD/CMakeCache.txt")
mkdir -p "$tmp/lonely/bin" && cp "$P/bin/kevo" "$tmp/lonely/bin/"
if [ -e "${configured:-/usr/local}/share/kevo/harness/protocol.h" ]; then
    echo "note: ${configured:-/usr/local}/share/kevo holds an install: the lone-executable case is not checked"
else
    out=$(inst "$tmp/lonely/bin/kevo" tasks list c/level1 2>&1); rc=$?
    check '[ $rc = 3 ] && grep -q "data directory not found" <<<"$out" && grep -q "$tmp/lonely/share/kevo" <<<"$out" &&
           grep -q "set KEVO_DATA_DIR" <<<"$out"' \
        "a kevo with no data directory says where it looked and to set KEVO_DATA_DIR (exit $rc: ${out:0:300})"
    out=$(inst env KEVO_DATA_DIR="$data" "$tmp/lonely/bin/kevo" --data-dir 2>&1)
    check '[ "$out" = "$(realpath "$data")" ]' "KEVO_DATA_DIR points a lone kevo at the data (got '$out')"
fi

# --- the installed kevo at work ----------------------------------------------
task=$data/suites/c/level1/001_relu
out=$(inst "$P/bin/kevo" tasks check "$task" 2>&1); rc=$?
check '[ $rc = 0 ] && grep -q "1 passed, 0 failed" <<<"$out"' "kevo tasks check of the installed relu task passes (exit $rc: ${out: -300})"
out=$(inst "$P/bin/kevo" tasks list c/level1 2>&1); rc=$?
check '[ $rc = 0 ] && grep -q "^relu " <<<"$out"' "kevo tasks list c/level1 finds the suite under the data directory (exit $rc)"
out=$(inst "$P/bin/kevo" tasks list no/such/suite 2>&1); rc=$?
check '[ $rc != 0 ] && grep -q "no/such/suite: no such directory" <<<"$out"' "a suite that is nowhere is still an error (exit $rc: $out)"
cp "$task/reference.c" "$tmp/cwd/relu.c"
out=$(inst "$P/bin/kevo" eval --quick --json "$task" relu.c 2>/dev/null); rc=$?
verdict=$(python3 -c 'import json,sys
try: print(json.loads(sys.argv[1])["verdict"])
except Exception: print("no-json")' "$out")
check '[ $rc = 0 ] && [ "$verdict" = correct ]' "kevo eval of a correct relu kernel: correct (exit $rc, verdict $verdict)"
out=$(inst "$P/bin/kevo" run c/level1/001_relu --iterations 2 --quick --quiet --db "$tmp/x.db" 2>&1); rc=$?
check '[ $rc = 0 ]' "kevo run c/level1/001_relu --iterations 2 --quick from the install (exit $rc: ${out: -300})"
out=$(inst "$P/bin/kevo" report --db "$tmp/x.db" --format json 2>&1)
got=$(python3 -c 'import json,sys
try:
    d = json.loads(sys.argv[1]); r = d["runs"][0] if "runs" in d else d
    print(r["tasks"], r["correct_rate"])
except Exception as e: print("bad", e)' "$out")
check '[ "$got" = "1 1.0" ] || [ "$got" = "1 1" ]' "its report: 1 task, solved (got '$got')"

# --- the man page -------------------------------------------------------------
man1=$P/share/man/man1/kevo.1
for s in NAME SYNOPSIS DESCRIPTION ENVIRONMENT FILES '"?KEVO RUN"?' '"?KEVO TASKS"?'; do
    grep -Eq "^\.SH $s\$" "$man1" || { echo "     kevo.1 lacks section $s"; fails=$((fails + 1)); }
done
if command -v groff >/dev/null; then
    page=$(groff -man -Tutf8 -ww -P-cbu "$man1" 2>"$tmp/groff.err"); rc=$? # plain text: no SGR, bold, underline
    check '[ $rc = 0 ] && [ ! -s "$tmp/groff.err" ]' "groff renders kevo.1 without warnings ($(head -c 300 "$tmp/groff.err"))"
    check 'grep -q -- "--iterations" <<<"$page" && grep -q "KEVO_DATA_DIR" <<<"$page" && grep -q "kevo tasks check DIR" <<<"$page"' \
        "the rendered page has run's --iterations, KEVO_DATA_DIR and the tasks synopsis"
else
    echo "note: groff not installed: kevo.1 checked for its sections only"
fi
if command -v man >/dev/null; then
    out=$(MANPAGER=cat MANWIDTH=80 man -l "$man1" 2>&1); rc=$?
    check '[ $rc = 0 ] && grep -q "SYNOPSIS" <<<"$out"' "man -l renders kevo.1 (exit $rc)"
fi

# --- the bash completion -------------------------------------------------------
comp=$P/share/bash-completion/completions/kevo
check 'bash -n "$comp"' "the completion script is valid bash"
complete_words() { # words... (the last one is being completed)
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _kevo; echo "${COMPREPLY[*]}"' \
        complete "$comp" kevo "$@"
}
check '[ "$(complete_words ru)" = run ]' "kevo ru<TAB> -> run (got '$(complete_words ru)')"
check '[ "$(complete_words tasks ch)" = check ]' "kevo tasks ch<TAB> -> check (got '$(complete_words tasks ch)')"
check '[ "$(complete_words run --iter)" = --iterations ]' "kevo run --iter<TAB> -> --iterations (got '$(complete_words run --iter)')"
check '[ "$(complete_words report --format j)" = json ]' "kevo report --format j<TAB> -> json"
got=$(cd "$tmp/cwd" && PATH=$P/bin:$PATH complete_words run c/lev)
check '[[ " $got " == *" c/level1 "* ]]' "kevo run c/lev<TAB> offers the installed suites' c/level1 (got '$got')"
# every command kevo --help lists and every option line of kevo eval --help
cmds=$("$P/bin/kevo" --help | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p' | sort | tr '\n' ' ')
got=$(complete_words "" | tr ' ' '\n' | grep -v '^-' | sort | tr '\n' ' ')
check '[ -n "$cmds" ] && [ "$got" = "$cmds" ]' "kevo <TAB> offers exactly the commands of kevo --help ('$got' vs '$cmds')"
flags=$("$P/bin/kevo" eval --help | sed -n 's/^  \(-[a-z], \)\{0,1\}\(--[a-z-]*\).*/\2/p' | sort | tr '\n' ' ')
got=$(complete_words eval x -- | tr ' ' '\n' | grep -v '^--help$' | sort | tr '\n' ' ')
check '[ -n "$flags" ] && [ "$got" = "$flags" ]' "kevo eval --<TAB> offers exactly eval's option lines"

# --- embedding: pkg-config --static against the installed library ---------------
if command -v pkg-config >/dev/null && command -v gcc >/dev/null; then
    cat >"$tmp/cwd/tiny.c" <<'EOF'
#include <kevo/task.h>
#include <kevo/verdict.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    kevo_task *t = NULL;
    if (argc < 2 || kevo_task_load(&t, argv[1]) < 0) {
        fprintf(stderr, "tiny: %s\n", kevo_error_last());
        return 1;
    }
    printf("%s %zu %s\n", t->name, t->nparams, kevo_verdict_name(KEVO_VERDICT_CORRECT));
    kevo_task_free(t);
    return 0;
}
EOF
    out=$(inst env PKG_CONFIG_PATH="$P/lib/pkgconfig" bash -c \
        'gcc tiny.c -o tiny $(pkg-config --cflags --libs --static kevo) && ./tiny "$1"' tiny "$task" 2>&1); rc=$?
    check '[ $rc = 0 ] && [ "$out" = "relu 3 correct" ]' \
        "a program built with pkg-config --static kevo loads an installed task (exit $rc: ${out:0:400})"
    ver=$(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --modversion kevo)
    check '[ "kevo $ver" = "$("$P/bin/kevo" --version)" ]' "kevo.pc's version is kevo's ($ver)"
else
    echo "note: pkg-config or gcc missing: the embedding check is skipped"
fi

# --- the .deb ---------------------------------------------------------------------
if command -v cpack >/dev/null && command -v dpkg-deb >/dev/null; then
    out=$(cd "$tmp" && cpack -G DEB --config "$KEVO_BUILD/CPackConfig.cmake" -B "$tmp/deb" 2>&1); rc=$?
    deb=$(ls "$tmp"/deb/kevo_*.deb 2>/dev/null | head -1)
    check '[ $rc = 0 ] && [ -n "$deb" ]' "cpack -G DEB makes a .deb (exit $rc: ${out: -300})"
    if [ -n "$deb" ]; then
        depends=$(dpkg-deb -f "$deb" Depends)
        for p in libsqlite3-0 libcjson1 libcurl4 libseccomp2 libclang1-14 gcc python3; do
            grep -Eq "(^|, )$p( |,|$)" <<<"$depends" || { echo "FAIL the .deb does not depend on $p"; fails=$((fails + 1)); }
        done
        check '! grep -q -- "-dev" <<<"$depends"' "the .deb depends on no -dev package ($depends)"
        # every shared library kevo needs comes from a package the .deb depends on
        missing=""
        for lib in $(readelf -d "$P/bin/kevo" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
            path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
            owner=$(dpkg -S "$(realpath "$path")" 2>/dev/null | head -1 | cut -d: -f1)
            [ -n "$owner" ] || owner=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1)
            grep -Eq "(^|, )$owner( |,|$)" <<<"$depends" || missing="$missing $lib($owner)"
        done
        check '[ -z "$missing" ]' "the .deb's Depends cover every library kevo links (missing:$missing)"
        check 'dpkg-deb -f "$deb" Recommends | grep -q opencl-icd' "an OpenCL ICD is only recommended"
        files=$(dpkg-deb -c "$deb")
        for f in ./usr/bin/kevo ./usr/share/kevo/harness/protocol.h ./usr/share/kevo/prompts/c/system.md \
            ./usr/share/kevo/suites/c/level1/001_relu/task.json ./usr/share/man/man1/kevo.1 \
            ./usr/share/bash-completion/completions/kevo ./usr/lib/pkgconfig/kevo.pc \
            ./usr/include/kevo/sys/backend.h; do
            grep -q " $f\$" <<<"$files" || { echo "FAIL the .deb lacks $f"; fails=$((fails + 1)); }
        done
        grep -q "libkevocore.a\$" <<<"$files" || { echo "FAIL the .deb lacks libkevocore.a"; fails=$((fails + 1)); }
    fi
else
    echo "note: cpack or dpkg-deb missing: the .deb check is skipped"
fi

echo "$((checks - fails)) of $checks checks passed, $fails failures"
[ $fails = 0 ]
