#!/usr/bin/env bash
# The agent against the fake OpenAI-compatible server: a scripted sequence
# (429, compile error, broken response, wrong result, correct, faster) must
# give the right verdicts, an attempt tree rooted at the first correct
# kernel, the verifier's feedback in the next prompt, every prompt within
# the token budget, and a --record file that replays to the same verdicts.
set -uo pipefail
KEVO=${KEVO:-build/kevo}
SRC=${KEVO_SRC:-.}
SERVER=${KEVO_BUILD:-build}/tests/fake_llm_server
tmp=$(mktemp -d)
cleanup() { [ -n "${spid:-}" ] && kill "$spid" 2>/dev/null; pkill -f "$tmp/script" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fails=0; passes=0
check() { if eval "$2"; then echo "ok   $1"; passes=$((passes+1)); else echo "FAIL $1"; fails=$((fails+1)); fi; }

python3 - "$tmp/script.jsonl" <<'PY'
import json, sys
bad_compile = "```c\n#include <stdint.h>\nvoid relu(const float *x, float *y, int64_t N) { for (int64_t i = 0; i < N; i++) y[i] = x[i] > 0 ? x[i] : 0 }\n```"
wrong = "```c\n#include <stdint.h>\nvoid relu(const float *x, float *y, int64_t N) { for (int64_t i = 0; i + 8 <= N; i += 8) for (int k = 0; k < 8; k++) y[i+k] = x[i+k] > 0 ? x[i+k] : 0; }\n```"
good = "Here it is:\n```c\n#include <stdint.h>\nvoid relu(const float *x, float *y, int64_t N) { for (int64_t i = 0; i < N; i++) y[i] = x[i] > 0 ? x[i] : 0.0f; }\n```"
fast = "```c\n// kevo: cflags -fopenmp\n#include <stdint.h>\nvoid relu(const float *restrict x, float *restrict y, int64_t N) {\n#pragma omp parallel for simd\n for (int64_t i = 0; i < N; i++) y[i] = x[i] > 0 ? x[i] : 0.0f; }\n```"
u = {"prompt_tokens": 900, "completion_tokens": 80, "total_tokens": 980}
steps = [
  {"status": 429, "retry_after": 0, "error": "slow down"},
  {"content": bad_compile, "usage": u},
  {"raw": "{not json"},
  {"content": wrong, "usage": u},
  {"content": good, "usage": u},
  {"content": fast, "usage": u},
]
with open(sys.argv[1], "w") as f:
    for s in steps: f.write(json.dumps(s) + "\n")
PY
"$SERVER" --script "$tmp/script.jsonl" --log "$tmp/requests.jsonl" --lifetime 300 > "$tmp/port" &
spid=$!
for _ in $(seq 1 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(head -1 "$tmp/port")
export KEVO_API_KEY=test-secret-key
"$KEVO" run "$SRC/suites/c/level1/001_relu" --no-audit --generator openai --api-base "http://127.0.0.1:$port/v1" \
  --model fake --iterations 5 --quick --token-budget 1500 --db "$tmp/a.db" --record "$tmp/rec.jsonl" \
  > "$tmp/run.txt" 2>&1
rc=$?
cat "$tmp/run.txt"
check "run exits 0" "[ $rc -eq 0 ]"
"$KEVO" report --db "$tmp/a.db" --format json > "$tmp/report.json"
python3 - "$tmp" <<'PY' || fails=$((fails+1))
import json, sqlite3, sys
tmp = sys.argv[1]
db = sqlite3.connect(tmp + "/a.db")
cols = [r[1] for r in db.execute("PRAGMA table_info(attempts)")]
rows = db.execute("SELECT * FROM attempts ORDER BY id").fetchall()
A = [dict(zip(cols, r)) for r in rows]
verdicts = [a["verdict"] for a in A]
bad = 0
def check(name, cond):
    global bad
    print(("ok   " if cond else "FAIL ") + name)
    bad += not cond
check("verdicts compile_error, compile_error(broken reply), incorrect, correct, correct: %s" % verdicts,
      verdicts == ["compile_error", "compile_error", "incorrect", "correct", "correct"])
check("the last attempt refines the first correct one", A[4]["parent_id"] == A[3]["id"])
check("drafts have no parent", all(not a["parent_id"] for a in A[:4]))
log = [json.loads(l) for l in open(tmp + "/requests.jsonl")]
prompts = ["\n".join(m["content"] for m in r["body"]["messages"]) for r in log if isinstance(r["body"], dict)]
check("6 requests reached the server (one 429 retried)", len(log) == 6)
check("the key went only in the Authorization header",
      all("test-secret-key" not in json.dumps(r["body"]) for r in log))
check("the prompt after the compile error shows the compiler's feedback",
      "Compilation failed" in prompts[2] or "error" in prompts[2])
check("the prompt after the wrong result shows the mismatch feedback", "mismatch" in prompts[4])
check("the refine prompt shows the start point", "0.0f" in prompts[5])
check("later prompts carry lessons distilled from earlier attempts", "Tried: " in prompts[4])
report = json.load(open(tmp + "/report.json"))
check("report: 1 task, correct_rate 1", report["tasks"] == 1 and report["correct_rate"] == 1)
# four replies carry usage (900 + 80); the broken one is estimated (prompt only)
check("report: tokens counted from usage (%d prompt, %d completion)" % (report["tokens_prompt"], report["tokens_completion"]),
      report["tokens_prompt"] > 900 * 4 and report["tokens_completion"] == 80 * 4)
sys.exit(1 if bad else 0)
PY
# every request's memory context stays within the budget: the template adds ~400 tokens
python3 - "$tmp/requests.jsonl" <<'PY' || fails=$((fails+1))
import json, sys
ok = True
for l in open(sys.argv[1]):
    r = json.loads(l)
    if not isinstance(r["body"], dict): continue
    n = sum(len(m["content"]) for m in r["body"]["messages"])
    if n / 3.2 > 1500 + 600: ok = False
print(("ok   " if ok else "FAIL ") + "every prompt within the token budget plus the template")
sys.exit(0 if ok else 1)
PY
kill "$spid" 2>/dev/null; spid=
# replay the recording: same verdicts, no server
"$KEVO" run "$SRC/suites/c/level1/001_relu" --no-audit --generator replay --replay "$tmp/rec.jsonl" \
  --iterations 5 --quick --token-budget 1500 --db "$tmp/b.db" > "$tmp/replay.txt" 2>&1
check "replay exits 0" "[ $? -eq 0 ]"
va=$(python3 -c "import sqlite3;print([r[0] for r in sqlite3.connect('$tmp/a.db').execute('select verdict from attempts order by id')])")
vb=$(python3 -c "import sqlite3;print([r[0] for r in sqlite3.connect('$tmp/b.db').execute('select verdict from attempts order by id')])")
check "replay reproduces the verdicts ($vb)" "[ \"$va\" = \"$vb\" ]"
check "the recording holds no API key" "! grep -q test-secret-key $tmp/rec.jsonl"
# --refine-with builtin:1 gives every refine iteration to the zero-token recipes
python3 -c 'import json; print(json.dumps({"content": "```c\n#include <stdint.h>\nvoid relu(const float *x, float *y, int64_t N) { for (int64_t i = 0; i < N; i++) y[i] = x[i] > 0 ? x[i] : 0.0f; }\n```", "usage": {"prompt_tokens": 700, "completion_tokens": 60}}))' > "$tmp/script2.jsonl"
"$SERVER" --script "$tmp/script2.jsonl" --log "$tmp/requests2.jsonl" --lifetime 300 > "$tmp/port2" &
spid=$!
for _ in $(seq 1 50); do [ -s "$tmp/port2" ] && break; sleep 0.1; done
"$KEVO" run "$SRC/suites/c/level1/001_relu" --no-audit --generator openai --api-base "http://127.0.0.1:$(head -1 "$tmp/port2")/v1" \
  --model fake --iterations 3 --quick --db "$tmp/c.db" --refine-with builtin:1 > "$tmp/run3.txt" 2>&1
check "refine-with run exits 0" "[ $? -eq 0 ]"
"$KEVO" report --db "$tmp/c.db" --format json > "$tmp/report3.json"
check "one LLM request, two built-in refinements, tokens saved reported" \
  "python3 -c \"import json,sys; r=json.load(open('$tmp/report3.json')); n=sum(1 for _ in open('$tmp/requests2.jsonl')); sys.exit(0 if n==1 and r['builtin_attempts']==2 and r['tokens_saved_estimate']==2*760 else 1)\""
kill "$spid" 2>/dev/null; spid=
# The auditor (EvoKernel App. C.2), on by default for LLM runs: it judges a
# candidate that passed the static gate BEFORE it is compiled, answers JSON,
# and fails closed. Script: draft 1 is good and judged invalid (rejected,
# never compiled); draft 2 does not even compile, and the auditor's
# {"valid": "yes"} (no boolean) rejects it before the compiler would; draft
# 3 breaks the static gate (no audit request for it); draft 4 is good and
# valid. --reflect stores a lesson for every attempt.
python3 - "$tmp/script3.jsonl" <<'PY'
import json, sys
good = "```c\n#include <stdint.h>\nvoid relu(const float *x, float *y, int64_t N) { for (int64_t i = 0; i < N; i++) y[i] = x[i] > 0 ? x[i] : 0.0f; }\n```"
broken = "```c\n#include <stdint.h>\nvoid relu(const float *x, float *y, int64_t N) { for (int64_t i = 0; i < N; i++) y[i] = x[i] > 0 ? x[i] : 0.0f }\n```"
static_bad = "```c\n#include <stdint.h>\n#include <stdlib.h>\nvoid relu(const float *x, float *y, int64_t N) { system(\"true\"); for (int64_t i = 0; i < N; i++) y[i] = x[i] > 0 ? x[i] : 0.0f; }\n```"
lesson = {"content": "Lesson: the auditor flags kernels that look cached; keep kernels stateless."}
steps = [{"content": good},
         {"content": '```json\n{"valid": false, "reason": "it returns results cached from an earlier call"}\n```',
          "usage": {"prompt_tokens": 900, "completion_tokens": 20}}, lesson,
         {"content": broken}, {"content": '{"valid": "yes", "reason": "looks fine"}'}, lesson,
         {"content": static_bad}, lesson,
         {"content": good}, {"content": '{"valid": true, "reason": "computes relu for every element"}'}, lesson]
open(sys.argv[1], "w").write("".join(json.dumps(s) + "\n" for s in steps))
PY
"$SERVER" --script "$tmp/script3.jsonl" --log "$tmp/requests3.jsonl" --lifetime 300 > "$tmp/port3" &
spid=$!
for _ in $(seq 1 50); do [ -s "$tmp/port3" ] && break; sleep 0.1; done
"$KEVO" run "$SRC/suites/c/level1/001_relu" --generator openai --api-base "http://127.0.0.1:$(head -1 "$tmp/port3")/v1" \
  --model fake --iterations 4 --quick --db "$tmp/d.db" --reflect > "$tmp/run4.txt" 2>&1
check "audit run exits 0" "[ $? -eq 0 ]"
# every server is stopped once used: a server left running holds the
# test's output open, and ctest waits out its whole --lifetime
kill "$spid" 2>/dev/null; spid=
python3 - "$tmp/d.db" "$tmp/requests3.jsonl" <<'PY' || fails=$((fails+1))
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT verdict, feedback, gates, tokens_prompt FROM attempts ORDER BY iteration").fetchall()
names = [[g["name"] for g in json.loads(r[2] or "[]")] for r in rows]
audits = sum(1 for l in open(sys.argv[2]) if "You audit" in l)
refl = db.execute("SELECT count(*) FROM items WHERE tags LIKE '%reflection%' AND body LIKE 'Lesson:%'").fetchone()[0]
edge = db.execute("SELECT count(*) FROM distilled_from d JOIN items i ON i.id = d.item_id WHERE i.tags LIKE '%reflection%'").fetchone()[0]
checks = [
  (rows[0][0] == "rejected" and "auditor" in rows[0][1] and "cached" in rows[0][1] and names[0] == ["anti-hack", "audit"],
   f"an invalid answer rejects before the compile ({rows[0][0]}, gates {names[0]})"),
  (rows[0][3] >= 900, f"the auditor's tokens count in the attempt's ({rows[0][3]})"),
  (rows[1][0] == "rejected" and names[1] == ["anti-hack", "audit"] and "did not answer" in rows[1][1],
   f"a non-boolean valid fails closed, before the compiler ({rows[1][0]}, {names[1]})"),
  (rows[2][0] == "rejected" and names[2] == ["anti-hack"], f"the static gate's rejects never reach the auditor ({names[2]})"),
  (rows[3][0] == "correct" and "audit" in names[3] and "compile" in names[3], f"a valid answer lets the candidate on ({rows[3][0]}, {names[3]})"),
  (audits == 3, f"three audit requests: none for the static gate's reject ({audits})"),
  (refl == 4 and edge == 4, f"the reflections are stored as experience, distilled from the attempts ({refl}, {edge})"),
]
for ok, what in checks:
    print(("ok   " if ok else "FAIL ") + what)
sys.exit(0 if all(ok for ok, _ in checks) else 1)
PY
# --strategy passk: independent drafts, no feedback, no memory in the prompt,
# one demonstration (App. D.1); --strategy refine (App. D.2): each
# refinement starts from the fastest correct kernel so far (a slower or wrong
# one is reverted), and the prompt is the conversation: every earlier kernel
# as the model's turn and the verifier's feedback on it
python3 - "$tmp/script5.jsonl" <<'PY'
import json, sys
good = "```c\n#include <stdint.h>\nvoid relu(const float *x, float *y, int64_t N) { for (int64_t i = 0; i < N; i++) y[i] = x[i] > 0 ? x[i] : 0.0f; }\n```"
wrong = "```c\n#include <stdint.h>\nvoid relu(const float *x, float *y, int64_t N) { for (int64_t i = 0; i < N; i++) y[i] = x[i]; }\n```"
simd = "```c\n#include <stdint.h>\nvoid relu(const float *restrict x, float *restrict y, int64_t N) { for (int64_t i = 0; i < N; i++) y[i] = x[i] > 0 ? x[i] : 0.0f; }\n```"
steps = [{"content": wrong}, {"content": good}, {"content": simd},   # passk
         {"content": good}, {"content": simd}, {"content": good.replace("0.0f", "0.f")}]  # refine
open(sys.argv[1], "w").write("".join(json.dumps(s) + "\n" for s in steps))
PY
"$SERVER" --script "$tmp/script5.jsonl" --log "$tmp/requests5.jsonl" --lifetime 300 > "$tmp/port5" &
spid=$!
for _ in $(seq 1 50); do [ -s "$tmp/port5" ] && break; sleep 0.1; done
base="http://127.0.0.1:$(head -1 "$tmp/port5")/v1"
"$KEVO" run "$SRC/suites/c/level1/001_relu" --no-audit --generator openai --api-base "$base" --model fake \
  --iterations 3 --quick --db "$tmp/e.db" --strategy passk > "$tmp/run5.txt" 2>&1
check "passk run exits 0" "[ $? -eq 0 ]"
"$KEVO" run "$SRC/suites/c/level1/001_relu" --no-audit --generator openai --api-base "$base" --model fake \
  --iterations 3 --quick --db "$tmp/f.db" --strategy refine > "$tmp/run6.txt" 2>&1
check "refine run exits 0" "[ $? -eq 0 ]"
python3 - "$tmp" <<'PY' || fails=$((fails+1))
import json, sqlite3, sys
tmp = sys.argv[1]
bad = 0
def check(name, cond):
    global bad
    print(("ok   " if cond else "FAIL ") + name)
    bad += not cond
e = sqlite3.connect(tmp + "/e.db").execute("SELECT stage, parent_id, verdict FROM attempts ORDER BY id").fetchall()
check("passk: three independent drafts %s" % e, [r[0] for r in e] == [1, 1, 1] and all(not r[1] for r in e))
log = [json.loads(l) for l in open(tmp + "/requests5.jsonl")]
prompts = ["\n".join(m["content"] for m in r["body"]["messages"]) for r in log]
check("passk: the draft after a wrong result is not shown the mismatch", "mismatch" not in prompts[1])
check("passk: no lessons from memory in the prompts", all("Tried: " not in p for p in prompts[:3]))
check("passk: one demonstration in every prompt", all(p.count("An example (a different operator") == 1 for p in prompts[:3]))
f = sqlite3.connect(tmp + "/f.db").execute("SELECT id, stage, parent_id, verdict, speedup FROM attempts ORDER BY id").fetchall()
fastest_before_3 = max(f[:2], key=lambda r: r[4])[0] if len(f) == 3 else None
check("refine: draft, then each refinement from the fastest correct kernel so far %s" % [r[:4] for r in f],
      len(f) == 3 and [r[3] for r in f] == ["correct"] * 3 and f[1][2] == f[0][0] and f[2][2] == fastest_before_3)
msgs = [r["body"]["messages"] for r in log[3:6]]
roles = [[m["role"] for m in ms] for ms in msgs]
check("refine: the prompt is the conversation so far %s" % roles,
      roles[0] == ["system", "user"] and roles[1] == ["system", "user", "assistant", "user"] and
      roles[2] == ["system", "user", "assistant", "user", "assistant", "user"])
check("refine: the verifier's feedback after each kernel, and the request to improve the best",
      "verdict on that kernel: correct" in msgs[2][3]["content"] and "FASTER" in msgs[2][-1]["content"] and
      "restrict" in msgs[2][4]["content"])
sys.exit(1 if bad else 0)
PY
kill "$spid" 2>/dev/null; spid=
echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
