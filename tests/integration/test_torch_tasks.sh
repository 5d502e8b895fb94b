#!/usr/bin/env bash
# PyTorch-defined tasks (docs/torch-tasks.md) end to end: the torch
# reference runner checks tasks, judges C candidates against PyTorch
# (training-mode semantics: BatchNorm with batch statistics), times them
# against PyTorch eager and says so (latency.baseline), refuses broken tasks
# with one line naming the problem, and kevo run drafts from the PyTorch
# source (LLM) or from a task's draft.c (built-in), reporting the baseline.
# Skipped (77) without a Python that imports torch (scripts/setup.sh --with-torch).
set -uo pipefail
KEVO=${KEVO:-build/kevo}
SRC=${KEVO_SRC:-.}
SERVER=${KEVO_BUILD:-build}/tests/fake_llm_server
T=$SRC/tests/data/torch_tasks
C=$SRC/tests/candidates_torch
PY=${KEVO_TORCH_PYTHON:-/var/cache/kevo/torch-venv/bin/python}
if ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "skip: no Python with torch ($PY); run scripts/setup.sh --with-torch"
  exit 77
fi
tmp=$(mktemp -d)
chmod 755 "$tmp"
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails+1)); fi; }

# ---- tasks check: the torch reference runs on every size set and seed
out=$("$KEVO" tasks check "$T" 2>&1); rc=$?
echo "$out" | tail -4
check "tasks check passes the three torch tasks" "[ $rc -eq 0 ] && echo \"\$out\" | grep -q '3 passed, 0 failed'"

# ---- eval: verdicts against PyTorch, speedups over PyTorch eager
ev() { "$KEVO" eval "$T/$1" "$C/$2.c" --quick --json 2> "$tmp/$2.err" > "$tmp/$2.json"; }
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); v=d; exec('for k in sys.argv[2].split(\".\"): v = v.get(k) if isinstance(v, dict) else None'); print(v)" "$tmp/$1.json" "$2"; }
ev relu relu_omp
check "honest OpenMP relu is correct" "[ \"\$(field relu_omp verdict)\" = correct ]"
check "its speedup is over torch-eager-cpu" "[ \"\$(field relu_omp latency.baseline)\" = torch-eager-cpu ]"
check "both sides were timed" "python3 -c \"import json; l=json.load(open('$tmp/relu_omp.json'))['latency']; assert l['candidate_us'] > 0 and l['reference_us'] > 0 and l['reference_samples'] >= 3\""
ev relu relu_wrong
check "a leaky relu is incorrect" "[ \"\$(field relu_wrong verdict)\" = incorrect ]"
check "with the usual structured feedback" "field relu_wrong feedback | grep \"output 'y'\" > /dev/null"
ev linear_relu linear_relu
check "Linear+ReLU in C with the module's weight and bias is correct" "[ \"\$(field linear_relu verdict)\" = correct ]"
ev batchnorm2d batchnorm_batch_stats
check "BatchNorm2d with batch statistics (training mode) is correct" "[ \"\$(field batchnorm_batch_stats verdict)\" = correct ]"
ev batchnorm2d batchnorm_running_stats
check "BatchNorm2d with running statistics (eval mode) is incorrect" "[ \"\$(field batchnorm_running_stats verdict)\" = incorrect ]"
out=$("$KEVO" eval "$T/relu" "$C/relu_omp.c" --quick 2>&1)
check "the text form names PyTorch eager" "echo \"\$out\" | grep -q 'speedup .*x over torch-eager-cpu'"

# ---- broken tasks: one line naming the problem, exit non-zero
broken() { # NAME PYTHON-EDIT: a copy of a task with its task.json edited
  rm -rf "$tmp/$1"; cp -r "$T/$2" "$tmp/$1"; chmod -R a+rX "$tmp/$1"
  python3 - "$tmp/$1/task.json" "$3" <<'PYEDIT'
import json, sys
p, code = sys.argv[1], sys.argv[2]
t = json.load(open(p))
exec(code)
json.dump(t, open(p, "w"))
PYEDIT
}
broken bad_shape relu 't["params"][0]["shape"] = ["batch_size", "dim + 1"]'
out=$("$KEVO" tasks check "$tmp/bad_shape" 2>&1); rc=$?
check "a shape that is not the module's: named ('x', shape)" "[ $rc -ne 0 ] && echo \"\$out\" | grep -q \"'x' (input:0) has shape\""
broken bad_state linear_relu 't["params"][1]["torch"] = "state:fc.nope"'
out=$("$KEVO" tasks check "$tmp/bad_state" 2>&1); rc=$?
check "a binding to no parameter: named, with what there is" "[ $rc -ne 0 ] && echo \"\$out\" | grep -q 'no such parameter or buffer (it has: fc.weight, fc.bias)'"
broken no_model relu 'pass'
sed -i 's/^class Model/class Modle/' "$tmp/no_model/reference.py"
out=$("$KEVO" tasks check "$tmp/no_model" 2>&1); rc=$?
check "a module file without Model: said" "[ $rc -ne 0 ] && echo \"\$out\" | grep -q 'defines no Model'"
broken c_binding relu 't.pop("reference")'
out=$("$KEVO" tasks check "$tmp/c_binding" 2>&1); rc=$?
check "a C task with torch bindings: the field is named" "[ $rc -ne 0 ] && echo \"\$out\" | grep -q \"params\\[0\\].torch'\""
out=$(KEVO_TORCH_PYTHON=/nonexistent/python "$KEVO" tasks check "$T/relu" 2>&1); rc=$?
check "no torch Python: the way to get one is said" "[ $rc -ne 0 ] && echo \"\$out\" | grep -q 'KEVO_TORCH_PYTHON=/nonexistent/python is not an executable'"

# ---- tasks link: a C draft from the C task translating the same problem
broken linkable relu 't["kernelbench"] = "level1/19_ReLU.py"'
out=$("$KEVO" tasks link "$tmp/linkable" --from "$SRC/suites/c" 2>&1); rc=$?
echo "$out"
check "link: the relu torch task gets suites/c/level1/001_relu's reference as draft.c" "[ $rc -eq 0 ] && echo \"\$out\" | grep -q 'linked .*001_relu' && [ -f '$tmp/linkable/draft.c' ] && python3 -c \"import json; assert json.load(open('$tmp/linkable/task.json'))['draft'] == 'draft.c'\""
check "the linked draft is correct under kevo eval" "\"$KEVO\" eval '$tmp/linkable' '$tmp/linkable/draft.c' --no-latency --json | grep -q '\"verdict\":[[:space:]]*\"correct\"'"
broken mislinked relu 't["kernelbench"] = "level1/20_LeakyReLU.py"'
out=$("$KEVO" tasks link "$tmp/mislinked" --from "$SRC/suites/c" 2>&1)
echo "$out"
check "link: a C task of another function is refused by the verifier, not linked" "echo \"\$out\" | grep -q 'is not this task.s function (incorrect' && [ ! -f '$tmp/mislinked/draft.c' ]"

# ---- tasks import kernelbench links drafts itself (--no-link: not)
mkdir -p "$tmp/kb/level1"; cp "$T/relu/reference.py" "$tmp/kb/level1/19_ReLU.py"; chmod -R a+rX "$tmp/kb"
out=$("$KEVO" tasks import kernelbench "$tmp/kb/level1" --out "$tmp/imp" --scale 1 2>&1); rc=$?
echo "$out" | tail -3
check "import kernelbench links the imported relu to 001_relu's reference" "[ $rc -eq 0 ] && echo \"\$out\" | grep -q 'linked .*l1_019_relu: draft.c from .*001_relu' && [ -f '$tmp/imp/level1/l1_019_relu/draft.c' ]"
out=$("$KEVO" tasks import kernelbench "$tmp/kb/level1" --out "$tmp/imp2" --scale 1 --no-link 2>&1)
check "--no-link imports without a draft" "! echo \"\$out\" | grep -q linking && [ ! -f '$tmp/imp2/level1/l1_019_relu/draft.c' ]"

# ---- link pairs buffers by shape and name, not position: a module whose
# own bias (cout, 1, 1) is listed before the conv's weight and bias gets
# suites/c/level2/001's reference (x, w, cb, b) with each buffer where it
# belongs (paired by position, w took the bias and the draft crashed)
mkdir -p "$tmp/kb2/level2"
cat > "$tmp/kb2/level2/1_Conv2D_ReLU_BiasAdd.py" <<'EOF'
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, cin, cout, k, bias_shape):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(cin, cout, k)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return torch.relu(self.conv(x)) + self.bias

batch_size = 2
cin = 3
cout = 5
height = 9
width = 7
k = 3
bias_shape = (cout, 1, 1)

def get_inputs():
    return [torch.rand(batch_size, cin, height, width)]

def get_init_inputs():
    return [cin, cout, k, bias_shape]
EOF
chmod -R a+rX "$tmp/kb2"
out=$("$KEVO" tasks import kernelbench "$tmp/kb2/level2" --out "$tmp/imp3" --scale 1 2>&1); rc=$?
echo "$out" | tail -3
d3=$(find "$tmp/imp3" -name draft.c | head -1)
check "a conv + bias module links 001_conv2d_relu_biasadd's reference, buffers paired by shape and name" "[ $rc -eq 0 ] && echo \"\$out\" | grep -q 'linked .*draft.c from .*001_conv2d_relu_biasadd' && [ -n '$d3' ]"
check "its draft pairs the conv's weight and bias with w and cb, the module's bias with b" "grep -Eq 'const float \*(b|w|cb), const float \*(b|w|cb), const float \*(b|w|cb)' '$d3' && grep -q 'const int64_t CO = (kb_cout);' '$d3'"

# ---- kevo run, built-in: no C draft -> skipped; with draft.c -> runs
rm -rf "$tmp/drafted"; cp -r "$T/relu" "$tmp/drafted"
cat > "$tmp/drafted/draft.c" <<'EOF'
#include <stdint.h>
void t_relu(const float *x, float *y, int64_t batch_size, int64_t dim)
{
    for (int64_t i = 0; i < batch_size * dim; i++)
        y[i] = x[i] > 0 ? x[i] : 0.0f;
}
EOF
python3 - "$tmp/drafted/task.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1])); t["draft"] = "draft.c"; json.dump(t, open(sys.argv[1], "w"))
PY
chmod -R a+rX "$tmp/drafted"
"$KEVO" run "$T/relu" "$tmp/drafted" --iterations 2 --quick --db "$tmp/b.db" > "$tmp/b.txt" 2>&1; rc=$?
cat "$tmp/b.txt"
check "built-in run exits 0" "[ $rc -eq 0 ]"
check "the task without draft.c is skipped, saying why" "grep -q 'skipped: a PyTorch-defined task without a C draft' '$tmp/b.txt'"
check "the task with draft.c drafts it correct" "grep -q 'iter  1/2 draft .* correct' '$tmp/b.txt'"
"$KEVO" report --db "$tmp/b.db" --format json > "$tmp/b.json"
check "the report says the speedups are over torch-eager-cpu" "python3 -c \"import json; d=json.load(open('$tmp/b.json')); t=d['per_task']; assert len(t) == 1 and t[0]['baseline'] == 'torch-eager-cpu', t\""

# ---- kevo run, LLM: the prompt shows the PyTorch source
python3 - "$tmp/script.jsonl" "$C/relu_omp.c" <<'PY'
import json, sys
code = open(sys.argv[2]).read()
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"content": "```c\n" + code + "```", "usage": {"prompt_tokens": 500, "completion_tokens": 90}}) + "\n")
PY
"$SERVER" --script "$tmp/script.jsonl" --log "$tmp/requests.jsonl" --lifetime 120 > "$tmp/port" &
spid=$!
for _ in $(seq 1 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
KEVO_API_KEY=test-key "$KEVO" run "$T/relu" --generator openai --no-audit --api-base "http://127.0.0.1:$(head -1 "$tmp/port")/v1" \
  --model fake --iterations 1 --quick --db "$tmp/c.db" > "$tmp/c.txt" 2>&1; rc=$?
kill "$spid" 2>/dev/null; spid=
cat "$tmp/c.txt"
check "LLM run exits 0 with a correct kernel" "[ $rc -eq 0 ] && grep -q 'correct' '$tmp/c.txt'"
cat > "$tmp/prompt_check.py" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
text = " ".join(m["content"] for r in reqs for m in r["body"]["messages"])
fence = "`" * 3 + "python"
assert fence in text and "class Model(nn.Module)" in text and "torch.relu(x)" in text, text[:500]
PY
check "the draft prompt carries the PyTorch module in a python block" "python3 '$tmp/prompt_check.py' '$tmp/requests.jsonl'"
"$KEVO" report --db "$tmp/c.db" > "$tmp/c.report"
check "the text report names the baseline" "grep -q 'torch-eager-cpu' '$tmp/c.report'"

echo "test_torch_tasks: $fails failure(s)"
[ "$fails" -eq 0 ]
