#!/usr/bin/env bash
# tests/integration/test_torch_import.sh - `kevo tasks import`: the problem
# files of tests/data/torch_problems (written for kevo in KernelBench's
# form) become torch tasks whose task.json kevo parses, whose shapes are
# expressions that give the model's real shapes at every size set, bound
# to the module (inputs, state, outputs, sizes); the bad ones are skipped,
# each with its reason; an existing task folder is not overwritten; usage
# errors exit 2. Skipped (77) without a Python that imports torch.
#
# Environment: KEVO (the binary), KEVO_SRC (the source root).
set -uo pipefail
KEVO_SRC=${KEVO_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
KEVO=${KEVO:-$KEVO_SRC/build/kevo}
py=${KEVO_TORCH_PYTHON:-/var/cache/kevo/torch-venv/bin/python}
[ -x "$py" ] || py=$HOME/.cache/kevo/torch-venv/bin/python
if ! [ -x "$py" ] || ! "$py" -c "import torch" 2>/dev/null; then
    echo "skip: no Python with torch (scripts/setup.sh --with-torch)"
    exit 77
fi
data=$KEVO_SRC/tests/data/torch_problems
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
fails=0
n=0
check() { # cond description
    n=$((n + 1))
    if eval "$1"; then echo "ok   $2"; else echo "FAIL $2"; fails=$((fails + 1)); fi
}

# usage errors: one line, the --help pointer, exit 2
out=$("$KEVO" tasks import pytorch "$data/level1" --out "$tmp/x" 2>&1); rc=$?
check '[ $rc = 2 ] && grep -q "unknown mode .*--help" <<<"$out"' "unknown mode: exit 2 (got $rc: $out)"
out=$("$KEVO" tasks import kernelbench "$data/level1" 2>&1); rc=$?
check '[ $rc = 2 ] && grep -q "missing --out" <<<"$out"' "missing --out: exit 2 (got $rc)"
out=$("$KEVO" tasks import kernelbench "$data/level1" --out "$tmp/x" --scale 2 2>&1); rc=$?
check '[ $rc = 2 ] && grep -q "scale" <<<"$out"' "--scale 2: exit 2 (got $rc)"
check '! [ -e "$tmp/x" ]' "a usage error writes nothing"

# the import: 6 good problems, 4 bad ones (the folder 'bad' is no levelN: --level, 1)
dir=$tmp/tasks
log=$("$KEVO" tasks import kernelbench "$data/level1" "$data/level2" "$data/bad" --out "$dir" \
      --scale 0.5 2>&1); rc=$?
echo "$log" | sed 's/^/    /'
check '[ $rc = 1 ]' "some skipped: exit 1 (got $rc)"
check 'grep -q "imported 6 of 10; 4 skipped" <<<"$log"' "summary: imported 6 of 10; 4 skipped"
check 'grep -q "^\[  1/10\] imported level1/1_Scaled_Add.py -> $dir/level1/l1_001_scaled_add" <<<"$log"' \
    "one line per problem with progress, level folder and task name"
check 'grep -q "skipped level1/5_Syntax_Error.py: does not parse: SyntaxError" <<<"$log"' \
    "syntax error: skipped with the reason"
check 'grep -q "skipped level1/6_No_Model.py: defines no Model" <<<"$log"' "no Model: skipped"
check 'grep -q "skipped level1/7_Returns_Number.py: forward returns a float, not a tensor" <<<"$log"' \
    "forward returning a number: skipped"
check 'grep -q "skipped level1/8_Half_Input.py: unsupported dtype float16 (input 0)" <<<"$log"' \
    "float16 input: skipped naming the dtype and the tensor"
check 'grep -q "l2_002_linear_dropout_softmax (.*torch_mode eval (Dropout p=0.25)" <<<"$log"' \
    "Dropout: the line says torch_mode eval"
list=$("$KEVO" tasks list "$dir" 2>&1); rc=$?
check '[ $rc = 0 ] && grep -q "^6 tasks$" <<<"$list"' "kevo parses all 6 task.json (tasks list exit $rc)"

# shapes, bindings and fields, against the model itself at every size set
"$py" - "$dir" "$data" "$KEVO_SRC/harness" <<'PY'
import ast, filecmp, glob, json, os, sys
sys.path.insert(0, sys.argv[3])
import torch, torch_problem
root, data = sys.argv[1], sys.argv[2]
bad = 0
def fail(msg):
    global bad
    bad += 1
    print("     " + msg)
def c_eval(expr, sizes):
    def ev(n):
        if isinstance(n, ast.Expression): return ev(n.body)
        if isinstance(n, ast.Constant): return n.value
        if isinstance(n, ast.Name): return sizes[n.id]
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub): return -ev(n.operand)
        a, b = ev(n.left), ev(n.right)
        if isinstance(n.op, ast.Add): return a + b
        if isinstance(n.op, ast.Sub): return a - b
        if isinstance(n.op, ast.Mult): return a * b
        if isinstance(n.op, ast.Div):
            q = abs(a) // abs(b)
            return q if (a >= 0) == (b > 0) else -q
        if isinstance(n.op, ast.Mod): return a - b * (c_eval("(%d)/(%d)" % (a, b), {}))
        raise ValueError(expr)
    return ev(ast.parse(str(expr), mode="eval"))
tasks = {}
for tj in sorted(glob.glob(root + "/level*/*/task.json")):
    t = json.load(open(tj))
    tasks[t["name"]] = t
    folder = os.path.dirname(tj)
    if sorted(os.listdir(folder)) != ["reference.py", "task.json"]:
        fail("%s holds %s" % (t["name"], os.listdir(folder)))
    src = os.path.join(data, t["kernelbench"])
    if not filecmp.cmp(src, os.path.join(folder, "reference.py"), shallow=False):
        fail("%s: reference.py is not the problem file" % t["name"])
    if not t["check_sizes"]:
        fail("%s: no check_sizes" % t["name"])
    for sizes in [t["sizes"]] + t["check_sizes"]:
        mod = torch_problem.load(os.path.join(folder, "reference.py"), sizes)
        with torch.device("meta"):
            inputs = mod.get_inputs()
            model = mod.Model(*mod.get_init_inputs())
            out = model(*inputs)
        outs = list(out) if isinstance(out, tuple) else [out]
        state = dict(list(model.named_parameters()) + list(model.named_buffers()))
        for p in t["params"]:
            if p["role"] == "scalar":
                continue
            kind, key = p["torch"].split(":", 1)
            real = {"input": lambda: inputs[int(key)], "state": lambda: state[key],
                    "output": lambda: outs[int(key)]}[kind]()
            want = [c_eval(d, sizes) for d in p["shape"]]
            if list(real.shape) != want:
                fail("%s %s at %s: shape %s evaluates to %s, the model has %s"
                     % (t["name"], p["name"], sizes, p["shape"], want, list(real.shape)))
    for n in t["sizes"]:
        if not any(p["name"] == n and p["role"] == "scalar" and p["type"] == "i64"
                   for p in t["params"]):
            fail("%s: size %s is no i64 scalar param" % (t["name"], n))
    smaller = all(cs[n] <= t["sizes"][n] for cs in t["check_sizes"] for n in cs)
    if not smaller:
        fail("%s: a check size set is larger than the timed one" % t["name"])
def param(task, name):
    return next(p for p in tasks[task]["params"] if p["name"] == name)
try:
    a = param("l1_001_scaled_add", "alpha")
    if (a["role"], a["type"], a["value"], a["torch"]) != ("scalar", "f64", 0.5, "input:2"):
        fail("scalar input alpha: %s" % a)
    x = param("l1_001_scaled_add", "a")
    if x["init"] != {"dist": "uniform", "low": 0.0, "high": 1.0}:
        fail("torch.rand input: init %s, not uniform(0, 1)" % x["init"])
    if param("l1_001_scaled_add", "b")["init"]["dist"] != "normal":
        fail("torch.randn input: not a normal init")
    conv = param("l1_002_conv2d_strided_padded", "out")["shape"]
    if conv[2] != "(height + 1) / 2" or conv[3] != "(width + 1) / 2":
        fail("conv output %s: not the stride-2 padded expression" % conv)
    cs = tasks["l1_002_conv2d_strided_padded"]["check_sizes"][0]
    if cs["height"] == cs["width"]:
        fail("height = width: the check sizes keep them apart (%s)" % cs)
    w = param("l2_001_linear_gelu", "fc_weight")
    if (w["torch"], w["shape"]) != ("state:fc.weight", ["out_features", "in_features"]):
        fail("Linear weight: %s" % w)
    if w["init"]["dist"] != "uniform" or not w["init"]["low"] < 0 < w["init"]["high"]:
        fail("Linear weight init %s: not its default range" % w["init"])
    r = param("l1_003_sum_over_dim", "out")["shape"]
    if r != ["batch_size", 1, "dim2"] or tasks["l1_003_sum_over_dim"]["sizes"]["reduce_dim"] != 1:
        fail("sum over dim 1: out %s, reduce_dim stays 1" % r)
    o0, o1 = param("l1_004_min_and_argmin", "out0"), param("l1_004_min_and_argmin", "out1")
    if (o0["type"], o0["torch"], o1["type"], o1["torch"]) != ("f32", "output:0", "i64", "output:1"):
        fail("tuple output: %s %s" % (o0, o1))
    d = tasks["l2_002_linear_dropout_softmax"]
    if d.get("torch_mode") != "eval" or "torch_mode" in tasks["l2_001_linear_gelu"]:
        fail("torch_mode: eval only for the Dropout model")
    if d["kernelbench"] != "level2/2_Linear_Dropout_Softmax.py" or d["level"] != 2:
        fail("kernelbench/level fields: %s %s" % (d["kernelbench"], d["level"]))
    order = [p["torch"].split(":")[0] if "torch" in p else "size" for p in d["params"]]
    if order != sorted(order, key=["input", "state", "output", "size"].index):
        fail("prototype order %s: not inputs, state, outputs, sizes" % order)
    if tasks["l1_002_conv2d_strided_padded"]["sizes"]["batch_size"] != 2:
        fail("--scale 0.5: batch_size 4 -> 2")
    if tasks["l1_002_conv2d_strided_padded"]["sizes"]["kernel_size"] != 3:
        fail("--scale 0.5 left kernel_size alone")
except (KeyError, StopIteration) as e:
    fail("missing: %r" % e)
sys.exit(1 if bad else 0)
PY
rc=$?
check '[ $rc = 0 ]' "shapes hold at the timed and the check sizes; bindings, inits, fields as documented"

if [ -f "$KEVO_SRC/harness/torch_runner.py" ]; then
    out=$("$KEVO" tasks check "$dir" 2>&1); rc=$?
    check '[ $rc = 0 ]' "kevo tasks check passes the imported tasks (exit $rc) ${out: -600}"
fi

# an existing task folder is kept as it is
echo '{"marker": 1}' >"$dir/level1/l1_001_scaled_add/task.json"
log=$("$KEVO" tasks import kernelbench "$data/level1/1_Scaled_Add.py" --out "$dir" 2>&1); rc=$?
check '[ $rc = 1 ] && grep -q "skipped level1/1_Scaled_Add.py: .*l1_001_scaled_add exists (not overwritten)" <<<"$log"' \
    "an existing folder: skipped, exit 1 (got $rc)"
check 'grep -q marker "$dir/level1/l1_001_scaled_add/task.json"' "and left as it was"

# torch mode: the user's own module, --level, no kernelbench field, exit 0
log=$("$KEVO" tasks import torch "$data/level2/1_Linear_GELU.py" --out "$tmp/mine" --level 2 \
      --tolerance 0.001 --scale 1 2>&1); rc=$?
check '[ $rc = 0 ] && grep -q "imported 1_Linear_GELU.py -> $tmp/mine/level2/t_1_Linear_GELU" <<<"$log"' \
    "torch mode: imported under level2, named after the file (exit $rc)"
check '"$py" -c "import json,sys; t=json.load(open(sys.argv[1])); sys.exit(\"kernelbench\" in t or t[\"tolerance\"] != {\"atol\": 0.001, \"rtol\": 0.001})" "$tmp/mine/level2/t_1_Linear_GELU/task.json"' \
    "torch mode: no kernelbench field; --tolerance sets atol = rtol"
echo "$((n - fails)) passed, $fails failed"
[ $fails = 0 ]
