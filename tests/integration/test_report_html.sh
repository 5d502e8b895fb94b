#!/usr/bin/env bash
# `kevo report --format html` on a real small run: the page is written
# atomically with -o, holds exactly the numbers of `--format json`
# (data-metric / data-value), loads nothing from elsewhere; then, in
# headless Chromium, it renders without a console message (no uncaught
# error, no Content-Security-Policy violation), its numbers survive in the
# DOM, clicking a table header sorts the table, and a screenshot is taken.
# Without chromium (Debian package `chromium`) the browser half is skipped
# with a printed reason and the test still passes.
#
#   KEVO=build/kevo KEVO_SRC=. bash tests/integration/test_report_html.sh
#   KEVO_REPORT_SHOT=docs/report.png ...   also copies the screenshot there
set -uo pipefail
KEVO=${KEVO:-build/kevo}
SRC=${KEVO_SRC:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$KEVO" run "$SRC/suites/c/level1/001_relu" "$SRC/suites/c/level1/003_sigmoid" \
  --iterations 3 --quick --db "$tmp/r.db" > "$tmp/run.txt" 2>&1 ||
  { cat "$tmp/run.txt"; fail "kevo run"; }
"$KEVO" report --db "$tmp/r.db" --format html -o "$tmp/report.html" 2> "$tmp/report.err" ||
  { cat "$tmp/report.err"; fail "kevo report --format html"; }
"$KEVO" report --db "$tmp/r.db" --format json > "$tmp/report.json" || fail "kevo report --format json"
"$KEVO" report --db "$tmp/r.db" --format json -o "$tmp/report2.json" 2>/dev/null ||
  fail "kevo report --format json -o"
cmp -s "$tmp/report.json" "$tmp/report2.json" || fail "-o wrote something else than stdout"
ls "$tmp" | grep -q '\.tmp\.' && fail "a temporary file was left behind"
"$KEVO" report --db "$tmp/r.db" --format pdf > /dev/null 2>&1
[ $? -eq 2 ] || fail "--format pdf should be a usage error (2)"
echo "ok   kevo run + report (html $(wc -c < "$tmp/report.html") bytes)"

# The page against the JSON, and self-containment, without a browser.
check_page() { # FILE LABEL
  python3 - "$1" "$tmp/report.json" "$2" <<'PY'
import json, math, sys
from html.parser import HTMLParser
page, js, label = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]

class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.metrics, self.scripts, self.external, self.svg, self.tabindex = {}, 0, [], 0, 0
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-metric" in a:
            self.metrics.setdefault(a["data-metric"], a.get("data-value"))
        if tag == "script":
            self.scripts += 1
            if "src" in a:
                self.external.append(("script", a["src"]))
        if tag in ("link", "img", "iframe", "object", "embed"):
            self.external.append((tag, a))
        for k in ("src", "href"):
            v = a.get(k) or ""
            if v and not v.startswith("#"):
                self.external.append((tag, v))
        if tag == "svg":
            self.svg += 1
        if tag == "th" and "tabindex" in a:
            self.tabindex += 1

p = P()
p.feed(open(page, encoding="utf-8").read())
bad = 0
def check(ok, what):
    global bad
    print(("ok   " if ok else "FAIL ") + label + ": " + what)
    bad += not ok

keys = ["tasks", "attempts", "compiled_rate", "correct_rate", "fast_1", "fast_2",
        "geomean_speedup", "median_speedup_vs_first_draft", "mean_iterations_to_first_correct",
        "tokens_prompt", "tokens_completion", "tokens_total", "wall_s"]
for k in keys:
    v = p.metrics.get(k)
    want = js[k]
    ok = v not in (None, "") and math.isclose(float(v), float(want), rel_tol=1e-9, abs_tol=1e-12)
    check(ok, f"{k} page {v} json {want}")
check(p.scripts == 1, f"one script (ours): {p.scripts}")
check(not p.external, f"nothing loaded from elsewhere: {p.external}")
check(p.svg == 4, f"four SVG figures: {p.svg}")
if label == "dom":
    check(p.tabindex > 0, f"the sorting script ran (headers focusable): {p.tabindex}")
sys.exit(1 if bad else 0)
PY
}
check_page "$tmp/report.html" "file" || fail "page check"

if ! command -v chromium > /dev/null 2>&1; then
  echo "SKIP: chromium is not installed (Debian package 'chromium'); the browser checks did not run"
  exit 0
fi
chrome() { # ARGS... : headless Chromium with a private profile
  timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/profile" \
    --no-first-run "$@"
}

# 1. Load it: no console message at all (errors, CSP violations), the DOM
#    after the script ran still holds the numbers.
chrome --enable-logging=stderr --v=0 --dump-dom "file://$tmp/report.html" \
  > "$tmp/dom.html" 2> "$tmp/console.log" || { tail -20 "$tmp/console.log"; fail "chromium --dump-dom"; }
if grep -E ':CONSOLE[:(]|Uncaught' "$tmp/console.log"; then
  fail "the page wrote to the console (above)"
fi
echo "ok   no console message"
check_page "$tmp/dom.html" "dom" || fail "DOM check"

# 2. Clicking a header sorts the table (the page inside an iframe of a
#    wrapper page that clicks and reports).
cat > "$tmp/sort.html" <<'EOF'
<!DOCTYPE html><html><body><pre id="out">pending</pre>
<iframe id="f" src="report.html" width="800" height="600"></iframe>
<script>
document.getElementById('f').addEventListener('load', function () {
  var out = document.getElementById('out');
  try {
    var t = this.contentDocument.querySelector('table.sortable');
    var th = t.tHead.rows[0].cells[4];
    function col() {
      return Array.prototype.map.call(t.tBodies[0].rows, function (r) {
        return parseFloat(r.cells[4].getAttribute('data-v')); });
    }
    th.click(); var asc = col(), s1 = th.getAttribute('aria-sort');
    th.click(); var desc = col(), s2 = th.getAttribute('aria-sort');
    out.textContent = JSON.stringify({head: th.textContent, asc: asc, desc: desc, s1: s1, s2: s2});
  } catch (e) { out.textContent = 'ERROR ' + e; }
});
</script></body></html>
EOF
chrome --allow-file-access-from-files --dump-dom "file://$tmp/sort.html" > "$tmp/sort.dom" 2>/dev/null ||
  fail "chromium (sorting)"
python3 - "$tmp/sort.dom" <<'PY' || fail "sorting"
import json, re, sys
m = re.search(r'<pre id="out">(.*?)</pre>', open(sys.argv[1]).read(), re.S)
r = json.loads(m.group(1)) if m and m.group(1).startswith("{") else None
ok = (r is not None and r["head"].startswith("best speedup") and r["s1"] == "ascending"
      and r["s2"] == "descending" and r["asc"] == sorted(r["asc"])
      and r["desc"] == sorted(r["asc"], reverse=True))
print(("ok   " if ok else "FAIL ") + "clicking 'best speedup' sorts: " + (m.group(1) if m else "?"))
sys.exit(0 if ok else 1)
PY

# 3. The screenshot.
chrome --screenshot="$tmp/shot.png" --window-size=1280,2000 "file://$tmp/report.html" \
  > /dev/null 2>&1 || fail "chromium --screenshot"
size=$(wc -c < "$tmp/shot.png" 2>/dev/null || echo 0)
[ "$size" -gt 20000 ] || fail "screenshot missing or blank ($size bytes)"
echo "ok   screenshot $size bytes"
if [ -n "${KEVO_REPORT_SHOT:-}" ]; then
  cp "$tmp/shot.png" "$KEVO_REPORT_SHOT" && echo "copied the screenshot to $KEVO_REPORT_SHOT"
fi
echo "all passed"
