#!/usr/bin/env bash
# Requests that reasoning models accept (issue 15), `kevo run` against the
# fake OpenAI-compatible server playing such a model:
#  - no `temperature` unless asked for (--temperature / KEVO_TEMPERATURE);
#  - `max_tokens` refused with OpenAI's HTTP 400: the request is retried once
#    with `max_completion_tokens`, which the provider then keeps;
#  - --max-tokens-param, --reasoning-effort and their KEVO_* variables;
#  - a reply cut off at finish_reason "length": one retry with double the
#    budget, else a failure that says to raise --max-tokens;
#  - a reply whose text is only in message.reasoning_content;
#  - the settings stored with the run; the key only in the Authorization header.
set -uo pipefail
KEVO=${KEVO:-build/kevo}
SRC=${KEVO_SRC:-.}
SERVER=${KEVO_BUILD:-build}/tests/fake_llm_server
TASK="$SRC/suites/c/level1/001_relu"
tmp=$(mktemp -d)
spid=
# every server is stopped once used: one left running holds the test's
# output open, and ctest waits out its whole --lifetime
stop_server() { if [ -n "$spid" ]; then kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; spid=; fi; }
cleanup() { stop_server; rm -rf "$tmp"; }
trap cleanup EXIT
fails=0; passes=0
check() { if eval "$2"; then echo "ok   $1"; passes=$((passes+1)); else echo "FAIL $1"; fails=$((fails+1)); fi; }

# start_server SCRIPT [NAME]: serves $tmp/SCRIPT.jsonl, logs to $tmp/NAME.log
# (NAME defaults to SCRIPT; one NAME per server), sets $base
start_server() {
  local name=${2:-$1}
  "$SERVER" --script "$tmp/$1.jsonl" --log "$tmp/$name.log" --lifetime 120 > "$tmp/$name.port" &
  spid=$!
  for _ in $(seq 1 50); do [ -s "$tmp/$name.port" ] && break; sleep 0.1; done
  base="http://127.0.0.1:$(head -1 "$tmp/$name.port")/v1"
}
# kevo_run NAME [flags...]: one draft against the current server, db $tmp/NAME.db
kevo_run() {
  local name=$1; shift
  "$KEVO" run "$TASK" --no-audit --generator openai --api-base "$base" --model fake \
    --iterations 1 --quick --db "$tmp/$name.db" "$@" > "$tmp/$name.out" 2>&1
}
verdicts() { python3 -c "import sqlite3,sys;print(' '.join(r[0] for r in sqlite3.connect(sys.argv[1]).execute('select verdict from attempts order by id')))" "$tmp/$1.db"; }
feedback() { python3 -c "import sqlite3,sys;print(' '.join(r[0] or '' for r in sqlite3.connect(sys.argv[1]).execute('select feedback from attempts order by id')))" "$tmp/$1.db"; }
# field LOG N KEY: the N-th (from 0) request body's KEY: a string bare, else as
# JSON ("null" when absent)
field() { python3 -c "import json,sys;l=open(sys.argv[1]).readlines();v=json.loads(l[int(sys.argv[2])])['body'].get(sys.argv[3]);print(v if isinstance(v,str) else json.dumps(v))" "$tmp/$1.log" "$2" "$3"; }
requests() { [ -f "$tmp/$1.log" ] && wc -l < "$tmp/$1.log" | tr -d ' ' || echo 0; }

export KEVO_API_KEY=test-secret-key-compat
unset KEVO_TEMPERATURE KEVO_MAX_TOKENS_PARAM KEVO_REASONING_EFFORT

python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
good = "Here it is:\n```c\n#include <stdint.h>\nvoid relu(const float *x, float *y, int64_t N) { for (int64_t i = 0; i < N; i++) y[i] = x[i] > 0 ? x[i] : 0.0f; }\n```"
u = {"prompt_tokens": 900, "completion_tokens": 80}
scripts = {
  # a reasoning model: refuses max_tokens and temperature
  "reasoning": [{"reject_params": ["max_tokens", "temperature"], "content": good, "usage": u}],
  "plain": [{"content": good, "usage": u}],
  # the answer needs more than 3000 tokens: below, it is cut in half
  "budget": [{"min_budget": 3000, "content": good, "usage": u}],
  "cut": [{"content": good[:60], "finish_reason": "length", "usage": u}],
  "thinking": [{"content": "", "reasoning_content": "Let me think about relu first...", "usage": u}],
}
for name, steps in scripts.items():
    open(f"{tmp}/{name}.jsonl", "w").write("".join(json.dumps(s) + "\n" for s in steps))
PY

# 1. defaults against a reasoning model: the 400 on max_tokens is met once
start_server reasoning
kevo_run r1 --iterations 2 --record "$tmp/r1.rec"
rc=$?
stop_server
cat "$tmp/r1.out"
check "reasoning model, defaults: run exits 0" "[ $rc -eq 0 ]"
check "both attempts correct ($(verdicts r1))" "[ \"$(verdicts r1)\" = 'correct correct' ]"
check "three requests: the refused one, its retry, then the next attempt's ($(requests reasoning))" \
  "[ $(requests reasoning) -eq 3 ]"
check "the first asked max_tokens 4096" "[ $(field reasoning 0 max_tokens) = 4096 ]"
check "its retry asked max_completion_tokens 4096 instead" \
  "[ $(field reasoning 1 max_completion_tokens) = 4096 ] && [ $(field reasoning 1 max_tokens) = null ]"
check "the next request went straight to max_completion_tokens (learnt for the run)" \
  "[ $(field reasoning 2 max_completion_tokens) = 4096 ] && [ $(field reasoning 2 max_tokens) = null ]"
check "no temperature, no reasoning_effort unless asked for" \
  "[ $(field reasoning 0 temperature) = null ] && [ $(field reasoning 2 temperature) = null ] && [ $(field reasoning 0 reasoning_effort) = null ]"
check "the recording holds no temperature and no key" \
  "! grep -q temperature $tmp/r1.rec && ! grep -q $KEVO_API_KEY $tmp/r1.rec"
check "the key only in the Authorization header" \
  "python3 -c \"import json,sys; sys.exit(1 if any('$KEVO_API_KEY' in json.dumps(json.loads(l)['body']) for l in open('$tmp/reasoning.log')) else 0)\" && grep -q 'Bearer $KEVO_API_KEY' $tmp/reasoning.log"

# 2. a temperature asked for is sent, and the model's refusal (an error, not
# retried: the agent gives up the task) says which setting sent it
start_server reasoning refused
kevo_run r2 --temperature 0.7
stop_server
check "--temperature is sent when asked for ($(field refused 0 temperature)); refused, not retried" \
  "[ $(field refused 0 temperature) = 0.7 ] && [ $(field refused 1 temperature) = 0.7 ] && [ $(requests refused) -eq 2 ]"
check "  the refusal comes with the server's words and the setting to drop" \
  "grep -q \"'temperature' does not support 0.7\" $tmp/r2.out && grep -q 'leave --temperature and KEVO_TEMPERATURE unset' $tmp/r2.out"
check "  and no key in the message" "! grep -q $KEVO_API_KEY $tmp/r2.out"

# 3. the settings by flag, by environment, flags winning
start_server plain
kevo_run p1 --temperature 0.2 --max-tokens 1000 --max-tokens-param max_completion_tokens --reasoning-effort high
rc1=$?
KEVO_TEMPERATURE=0.5 KEVO_MAX_TOKENS_PARAM=max_completion_tokens KEVO_REASONING_EFFORT=low kevo_run p2
rc2=$?
KEVO_TEMPERATURE=0.5 KEVO_REASONING_EFFORT=low kevo_run p3 --temperature 0 --reasoning-effort medium --max-tokens-param max_tokens
rc3=$?
stop_server
check "flag and environment runs exit 0 ($rc1 $rc2 $rc3)" "[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ $rc3 -eq 0 ]"
check "flags: temperature 0.2, max_completion_tokens 1000, reasoning_effort high" \
  "[ $(field plain 0 temperature) = 0.2 ] && [ $(field plain 0 max_completion_tokens) = 1000 ] && [ $(field plain 0 max_tokens) = null ] && [ $(field plain 0 reasoning_effort) = high ]"
check "environment: temperature 0.5, max_completion_tokens 4096, reasoning_effort low" \
  "[ $(field plain 1 temperature) = 0.5 ] && [ $(field plain 1 max_completion_tokens) = 4096 ] && [ $(field plain 1 reasoning_effort) = low ]"
check "flags win over the environment (temperature 0, medium, max_tokens)" \
  "[ $(field plain 2 temperature) = 0 ] && [ $(field plain 2 reasoning_effort) = medium ] && [ $(field plain 2 max_tokens) = 4096 ]"
check "the run stores the settings it was given" \
  "python3 -c \"import json,sqlite3,sys; c=json.loads(sqlite3.connect('$tmp/p1.db').execute('select config from runs').fetchone()[0]); sys.exit(0 if (c['temperature'],c['max_tokens'],c['max_tokens_param'],c['reasoning_effort'])==(0.2,1000,'max_completion_tokens','high') else 1)\""
check "  and none it was not given" \
  "python3 -c \"import json,sqlite3,sys; c=json.loads(sqlite3.connect('$tmp/p2.db').execute('select config from runs').fetchone()[0]); sys.exit(0 if not {'temperature','max_tokens_param','reasoning_effort'} & set(c) else 1)\""

# 4. cut off at the budget kevo set: once more with twice the budget
start_server budget
kevo_run b1 --max-tokens 2000
rc=$?
stop_server
check "a reply cut at length is retried with double the budget: correct ($rc, $(verdicts b1))" \
  "[ $rc -eq 0 ] && [ \"$(verdicts b1)\" = correct ]"
check "  budgets sent: 2000, then 4000" \
  "[ $(requests budget) -eq 2 ] && [ $(field budget 0 max_tokens) = 2000 ] && [ $(field budget 1 max_tokens) = 4000 ]"

# 5. still cut after the retry: a failure that says what to do
start_server cut
kevo_run c1 --max-tokens 100
rc=$?
stop_server
check "a reply still cut: the run goes on ($rc), two requests ($(requests cut))" "[ $rc -eq 0 ] && [ $(requests cut) -eq 2 ]"
check "  the attempt says it was cut off and to raise --max-tokens" \
  "feedback c1 | grep -q 'cut off at the token limit' && feedback c1 | grep -q 'raise --max-tokens' && feedback c1 | grep -q 'max_tokens 100, then 200'"

# 6. the text only in a reasoning field
start_server thinking
kevo_run t1
rc=$?
stop_server
check "text only in reasoning_content: the run goes on ($rc), one request" "[ $rc -eq 0 ] && [ $(requests thinking) -eq 1 ]"
check "  the attempt says where the text was and to raise --max-tokens" \
  "feedback t1 | grep -q 'only in message.reasoning_content' && feedback t1 | grep -q 'raise --max-tokens'"

# 7. bad values are refused before anything is sent
start_server plain bad
kevo_run bad1 --max-tokens-param max_new_tokens
rc1=$?
kevo_run bad2 --reasoning-effort extreme
rc2=$?
KEVO_REASONING_EFFORT=extreme kevo_run bad3
rc3=$?
stop_server
check "--max-tokens-param max_new_tokens: usage error ($rc1)" \
  "[ $rc1 -eq 2 ] && grep -q max_completion_tokens $tmp/bad1.out"
check "--reasoning-effort extreme: usage error ($rc2)" "[ $rc2 -eq 2 ] && grep -q 'low, medium or high' $tmp/bad2.out"
check "KEVO_REASONING_EFFORT=extreme: refused, naming the variable ($rc3)" \
  "[ $rc3 -ne 0 ] && grep -q 'KEVO_REASONING_EFFORT' $tmp/bad3.out && grep -q extreme $tmp/bad3.out"
check "  nothing reached the server" "[ $(requests bad) -eq 0 ]"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
