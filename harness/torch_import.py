"""harness/torch_import.py - turn PyTorch problem files (KernelBench's form:
Model, get_inputs(), get_init_inputs(), module-level size constants) into
kevo task folders of the torch kind (docs/torch-tasks.md, "Import").

Run by `kevo tasks import` inside kevo's sandbox, once for all problems
(one interpreter: torch is imported once), on copies of the files:

    python torch_import.py --mode kernelbench|torch --scale S|auto
        --tolerance T --fd 4 LEVEL:NAME:PATH...

For each problem it writes OUT/<task>/{task.json,reference.py} and one JSON
line {"file", "ok", "task", "level", "note"} or {"file", "ok": false,
"reason"} to the result stream (fd --fd, else stdout), flushed, so kevo
shows progress and knows which problem a crash happened in. An exception
in one problem never stops the others.

Must not: need the network, write outside its work folder, or trust what
the problem's code does (it runs only in the sandbox). kevo validates every
task.json it writes with its own parser before keeping it.
"""
import argparse
import inspect
import json
import math
import os
import re
import shutil
import signal
import sys
import time
from fractions import Fraction


def _sandbox_friendly():
    """torch_problem.sandbox_friendly, and the inductor cache named."""
    import torch_problem
    torch_problem.sandbox_friendly("kevo-import")
    # kevo gives the sandboxed importer a writable cache/ next to out/
    cache = "cache" if os.access("cache", os.W_OK) else "."
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.abspath(os.path.join(cache, "inductor")))


_sandbox_friendly()

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

import torch_problem  # noqa: E402

try:  # imported once, here: a failed import leaves torch half-registered
    from torch.utils.flop_counter import FlopCounterMode  # noqa: E402
except Exception as _e:  # noqa: BLE001
    import traceback
    FlopCounterMode = None
    FLOP_COUNTER_ERROR = "".join(traceback.format_exception(_e)[-3:]).replace("\n", " | ")

DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.int32: "i32",
          torch.int64: "i64", torch.uint8: "u8"}
C_KEYWORDS = set("""auto break case char const continue default do double else enum extern
float for goto if inline int long register restrict return short signed sizeof static struct
switch typedef union unsigned void volatile while _Bool _Complex _Imaginary bool true false
NULL""".split())
# constants never scaled even when they look like a dimension (a safety net
# behind the detection by proportional dimensions)
NEVER_SCALED = re.compile(r"kernel|stride|padding|dilation|groups|pool|window|dim_?$|axis")
PROBLEM_TIME_S = 150        # one problem's budget (checked between steps)
TARGET_MS, LOW_MS, HIGH_MS = 40.0, 5.0, 200.0
# never allocate more than this for real tensors, and no task's tensors take
# more at its timed sizes: kevo keeps every seed's inputs and outputs of
# every size set in memory plus the runners' shared buffers (about 6x this
# per task evaluated; `kevo tasks check --jobs 2` on 2 GB tasks was killed
# for memory on a 24 GB machine)
REAL_BYTES_MAX = 5.12e8


class Skip(Exception):
    """A problem that cannot be imported; the message is the reason."""


class Timeout(Exception):
    pass


def one_line(e, limit=240):
    text = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")
    text = text.rstrip(": ")
    return text if len(text) <= limit else text[:limit - 3] + "..."


# ---------------------------------------------------------------- running

def run(path, sizes, device, eval_mode, forward=True):
    """Load the problem at `sizes`, build inputs and Model on `device`,
    optionally run forward. Returns (module, inputs, model, outputs)."""
    mod = torch_problem.load(path, sizes)
    torch.manual_seed(0)
    with torch.device(device):
        inputs = mod.get_inputs()
        if not isinstance(inputs, (list, tuple)):
            raise Skip("get_inputs() returns a %s, not a list" % type(inputs).__name__)
        inputs = list(inputs)
        init = mod.get_init_inputs()
        if not isinstance(init, (list, tuple)):
            init = [init]
        model = mod.Model(*init)
        if not isinstance(model, nn.Module):
            raise Skip("Model(...) is not an nn.Module")
        if eval_mode:
            model.eval()
        out = None
        if forward:
            with torch.no_grad():
                out = model(*inputs)
    return mod, inputs, model, out


def out_list(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)) and out and all(isinstance(o, torch.Tensor) for o in out):
        return list(out)
    if isinstance(out, (tuple, list)):
        bad = [type(o).__name__ for o in out if not isinstance(o, torch.Tensor)]
        raise Skip("forward returns a %s holding a %s, not only tensors"
                   % (type(out).__name__, bad[0] if bad else "nothing"))
    raise Skip("forward returns a %s, not a tensor" % type(out).__name__)


def state_items(model):
    items = list(model.named_parameters()) + list(model.named_buffers())
    return [(k, v) for k, v in items if v is not None]


def signature(inputs, model, out):
    """What the probe saw: [(kind, label, shape|None, dtype|pyvalue)]."""
    sig = []
    for k, v in enumerate(inputs):
        if isinstance(v, torch.Tensor):
            sig.append(("input", k, tuple(v.shape), v.dtype))
        elif isinstance(v, bool) or not isinstance(v, (int, float)):
            raise Skip("get_inputs() value %d is a %s (tensors, ints and floats are supported)"
                       % (k, type(v).__name__))
        else:
            sig.append(("input", k, None, v))
    for key, v in state_items(model):
        sig.append(("state", key, tuple(v.shape), v.dtype))
    for k, v in enumerate(out_list(out)):
        sig.append(("output", k, tuple(v.shape), v.dtype))
    return sig


def same_structure(a, b):
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x[0] != y[0] or x[1] != y[1] or (x[2] is None) != (y[2] is None):
            return False
        if x[2] is not None and (len(x[2]) != len(y[2]) or x[3] != y[3]):
            return False
    return True


# ---------------------------------------------------------------- fitting

def c_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def eval_fit(fit, sizes):
    kind = fit[0]
    if kind == "lit":
        return fit[1]
    if kind == "mono":
        v = fit[1]
        for n in fit[2]:
            v *= sizes[n]
        return v
    if kind == "nest":
        return fit[1] * eval_fit(fit[2], sizes) + fit[3]
    _, coef, b, c = fit
    return c_div(sum(a * sizes[n] for n, a in coef.items()) + b, c)


def fit_text(fit):
    kind = fit[0]
    if kind == "lit":
        return fit[1]
    if kind == "mono":
        names = list(fit[2])
        if fit[1] != 1:
            names.insert(0, str(fit[1]))
        return "*".join(names)
    if kind == "nest":
        inner = fit_text(fit[2])
        e = fit[3]
        return "%d*(%s)%s" % (fit[1], inner, "" if not e else " %s %d" % ("+" if e > 0 else "-", abs(e)))
    _, coef, b, c = fit
    terms = []
    for n, a in coef.items():
        if a == 1:
            terms.append((1, n))
        elif a == -1:
            terms.append((-1, n))
        else:
            terms.append((1 if a > 0 else -1, "%d*%s" % (abs(a), n)))
    if b:
        terms.append((1 if b > 0 else -1, str(abs(b))))
    text = ""
    for sign, t in terms:
        if not text:
            text = t if sign > 0 else "-" + t
        else:
            text += (" + " if sign > 0 else " - ") + t
    if c == 1:
        return text
    if len(terms) > 1:
        text = "(" + text + ")"
    return "%s / %d" % (text, c)


def fit_dim(obs, base, singles):
    """obs: [(sizes, value)], obs[0] at `base`. singles: name -> [indices
    into obs of probes that changed only that name]. Returns a fit or None."""
    v0 = obs[0][1]
    deps = [n for n, idx in singles.items() if any(obs[i][1] != v0 for i in idx)]
    def ok(fit):
        return all(eval_fit(fit, s) == v for s, v in obs)
    if not deps:
        fit = ("lit", v0)
        return fit if ok(fit) else None
    prod = 1
    for n in deps:
        prod *= base[n]
    if prod and v0 % prod == 0 and v0 // prod >= 1:
        fit = ("mono", v0 // prod, deps)
        if ok(fit):
            return fit
    slopes = {}
    for n in deps:
        i = max(singles[n], key=lambda i: abs(obs[i][0][n] - base[n]))
        slopes[n] = Fraction(obs[i][1] - v0, obs[i][0][n] - base[n])
    for c in range(1, 17):
        coef = {}
        for n in deps:
            a = slopes[n] * c
            r = round(a)
            if abs(a - r) > Fraction(1, 2) or r == 0:
                break
            coef[n] = int(r)
        else:
            n0 = sum(a * base[n] for n, a in coef.items())
            for b in range(c * v0 - n0, c * v0 - n0 + c):
                fit = ("lin", coef, b, c)
                if ok(fit):
                    return fit
    # m*((a*X + b) / c) + e: a pooling before a transposed convolution
    for m in (2, 3, 4):
        for e in (0, 1, -1, 2, -2, 3, -3, 4, -4):
            if all((v - e) % m == 0 for _, v in obs):
                inner = fit_dim([(s, (v - e) // m) for s, v in obs], base, singles)
                if inner is not None and inner[0] == "lin" and inner[3] > 1:
                    return ("nest", m, inner, e)
    return None


def odd_use(fit, fixed):
    """Whether a fit uses a never-scaled constant other than as a plain
    term (height - kernel_size + 1 reads well; 63*reduce_dim - 62 is a
    coincidence of the probes): then the literal fit is preferred."""
    if fit[0] == "nest":
        return odd_use(fit[2], fixed)
    if fit[0] == "mono":
        return any(n in fixed for n in fit[2])
    if fit[0] == "lin":
        return any(n in fixed and abs(a) > 2 * fit[3] for n, a in fit[1].items())
    return False


# ---------------------------------------------------------------- the probes

class Problem:
    def __init__(self, path, label, level, mode, args):
        self.path, self.label, self.level, self.mode, self.args = path, label, level, mode, args
        self.notes = []

    # -- step 1: load, constants, structure
    def load(self):
        try:
            with open(self.path, encoding="utf-8") as f:
                self.source = f.read()
            torch_problem.load(self.path)
        except SyntaxError as e:
            raise Skip("does not parse: SyntaxError: %s (line %s)" % (e.msg, e.lineno))
        except ValueError as e:
            raise Skip(str(e).split(": ", 1)[-1])
        except Exception as e:
            raise Skip("does not import: %s" % one_line(e))
        consts = torch_problem.int_constants(self.path)
        self.base = {}
        for name, value in consts:
            if value < 0:
                continue  # not a size: sizes are non-negative; stays as written
            if name in C_KEYWORDS or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
                continue
            self.base[name] = value
        if not self.base:
            raise Skip("has no module-level non-negative integer constants (the sizes)")
        self.eval_mode = self.stochastic()

    def stochastic(self):
        found = re.search(r"\bF\.dropout|functional\.dropout|torch\.dropout|\bdropout\(", self.source)
        try:
            _, _, model, _ = run(self.path, None, "meta", False, forward=False)
            for m in model.modules():
                if isinstance(m, nn.modules.dropout._DropoutNd) and m.p > 0:
                    self.notes.append("torch_mode eval (%s p=%g)" % (type(m).__name__, m.p))
                    return True
        except Skip:
            raise
        except Exception:
            pass
        if found:
            self.notes.append("torch_mode eval (dropout in forward)")
            return True
        return False

    def probe(self, sizes, device=None):
        """The signature at sizes, or None when the model fails there."""
        device = device or self.device
        try:
            _, inputs, model, out = run(self.path, sizes, device, self.eval_mode)
            return signature(inputs, model, out)
        except Skip:
            raise
        except Exception:
            return None

    def first_probe(self):
        self.device = "meta"
        try:
            _, inputs, model, out = run(self.path, self.base, "meta", self.eval_mode)
            self.sig0 = signature(inputs, model, out)
            return
        except Skip:
            raise
        except Exception as e:
            meta_error = one_line(e, 160)
        # data-dependent models do not run on meta: probe on the CPU at
        # sizes whose inputs are small
        self.device = "cpu"
        small = self.shrink_inputs(4e6)
        try:
            _, inputs, model, out = run(self.path, small, "cpu", self.eval_mode)
        except Skip:
            raise
        except Exception as e:
            raise Skip("fails on the meta device (%s) and on the CPU at small sizes (%s)"
                       % (meta_error, one_line(e, 160)))
        self.sig0 = signature(inputs, model, out)
        self.base_orig = dict(self.base)
        self.base = small
        self.notes.append("probed on the CPU (meta: %s)" % meta_error)

    def shrink_inputs(self, max_bytes):
        """Sizes at which get_inputs() (on meta) holds at most max_bytes."""
        sizes = dict(self.base)
        for _ in range(40):
            try:
                _, inputs, _, _ = run(self.path, sizes, "meta", self.eval_mode, forward=False)
            except Exception:
                return sizes
            total = sum(t.numel() * t.element_size() for t in inputs if isinstance(t, torch.Tensor))
            if total <= max_bytes:
                return sizes
            big = max(sizes, key=lambda n: sizes[n])
            if sizes[big] <= 2:
                return sizes
            sizes[big] = max(1, sizes[big] // 2)
        return sizes

    # -- step 2: perturb and fit
    def perturb(self):
        base = self.base
        used = set(base.values())
        self.obs_sizes = [dict(base)]
        self.obs_sigs = [self.sig0]
        self.singles = {}
        for name, v0 in base.items():
            # multiples first (a group count must still divide the channels),
            # then an odd value, which tells truncating divisions apart
            idx = []
            multiples = [k * v0 for k in range(2, 8)] if v0 > 0 else [1, 2]
            for cand in multiples + [2 * v0 + 1, 2 * v0 + 3]:
                if cand in used or (len(idx) >= 1 and cand in multiples and
                                    any(self.obs_sizes[i][name] in multiples for i in idx)):
                    continue
                s = dict(base)
                s[name] = cand
                sig = self.probe(s)
                if sig is not None and same_structure(sig, self.sig0):
                    self.obs_sizes.append(s)
                    self.obs_sigs.append(sig)
                    idx.append(len(self.obs_sizes) - 1)
                if len(idx) >= 2:
                    break
            if idx:
                self.singles[name] = idx
        # which constants act as tensor dimensions: a dimension of an input
        # or output that doubles when the constant doubles
        self.scalable = []
        for name, idx in self.singles.items():
            if NEVER_SCALED.search(name.lower()) or base[name] < 2:
                continue
            i = idx[0]
            factor = Fraction(self.obs_sizes[i][name], base[name])
            for a, b in zip(self.sig0, self.obs_sigs[i]):
                if a[0] == "state" or a[2] is None:
                    continue
                if any(x and Fraction(y, x) == factor and x % base[name] == 0
                       for x, y in zip(a[2], b[2])):
                    self.scalable.append(name)
                    break
        # joint probes: every perturbable constant at once, then only the
        # scalable ones, each to its own value
        self.joint_all = self.joint(list(self.singles))
        self.joint_scal = self.joint(self.scalable)

    def joint(self, names):
        """All of `names` changed at once, names sharing a value to
        different values: multiples first, then offsets."""
        if not names:
            return None
        patterns = [lambda v, k: v * (2 + k % 4), lambda v, k: v * (3 + k % 3),
                    lambda v, k: v + 1 + k, lambda v, k: v * 2 + 1 + 2 * k]
        for f in patterns:
            s = dict(self.base)
            used = set()
            for k, n in enumerate(names):
                v = f(self.base[n], k)
                while v in used:
                    v += self.base[n] or 1
                used.add(v)
                s[n] = v
            sig = self.probe(s)
            if sig is not None and same_structure(sig, self.sig0):
                self.obs_sizes.append(s)
                self.obs_sigs.append(sig)
                return len(self.obs_sizes) - 1
        return None

    def fit(self):
        """One expression per dimension of every tensor: first over every
        perturbable constant, else over the scalable ones with the others
        at their values (they never change between size sets)."""
        fixed = [n for n in self.singles if n not in self.scalable]
        levels = [(list(range(len(self.obs_sizes))), self.singles)]
        if fixed:
            keep = [i for i, s in enumerate(self.obs_sizes)
                    if all(s[n] == self.base[n] for n in fixed)]
            levels.append((keep, {n: idx for n, idx in self.singles.items() if n in self.scalable}))
        self.fits = []
        for t, entry in enumerate(self.sig0):
            if entry[2] is None:
                self.fits.append(None)
                continue
            dims = []
            for d in range(len(entry[2])):
                fit = None
                for keep, singles in levels:
                    pos = {i: j for j, i in enumerate(keep)}
                    obs = [(self.obs_sizes[i], self.obs_sigs[i][t][2][d]) for i in keep]
                    sub = {n: [pos[i] for i in idx if i in pos] for n, idx in singles.items()}
                    fit = fit_dim(obs, self.base, {n: v for n, v in sub.items() if v})
                    if fit is not None and (len(levels) == 1 or not odd_use(fit, fixed)):
                        break
                if fit is None:
                    values = sorted({self.obs_sigs[i][t][2][d] for i in range(len(self.obs_sigs))})
                    raise Skip("cannot fit dimension %d of %s to an expression over the sizes "
                               "(values %s at the probes)" % (d, self.tensor_label(t),
                                                              values[:6]))
                dims.append(fit)
            self.fits.append(dims)

    def tensor_label(self, t):
        kind, key = self.sig0[t][0], self.sig0[t][1]
        if kind == "state":
            return "state '%s'" % key
        return "%s %d" % (kind, key)

    def matches(self, sizes, sig=None):
        """Whether the model runs at sizes with the fitted shapes."""
        sig = sig or self.probe(sizes, "meta" if self.device == "meta" else "cpu")
        if sig is None or not same_structure(sig, self.sig0):
            return False
        for t, entry in enumerate(sig):
            if entry[2] is None:
                continue
            if tuple(eval_fit(f, sizes) for f in self.fits[t]) != entry[2]:
                return False
        return True

    # -- step 3: scale
    def scaled(self, s, cap=64):
        out = dict(self.orig())
        for n in self.scalable:
            v0 = out[n]
            m = 1
            while v0 % (m * 2) == 0 and m * 2 <= cap:
                m *= 2
            while m > 1 and v0 * s < m:
                m //= 2
            out[n] = max(1, int(round(v0 * s / m)) * m)
        return out

    def orig(self):
        return getattr(self, "base_orig", self.base)

    def cost(self, sizes):
        """(estimated ms, bytes) of one forward at sizes, from the meta
        device: flops (FlopCounterMode) and every tensor's bytes."""
        key = tuple(sorted(sizes.items()))
        if key in self._costs:
            return self._costs[key]
        if FlopCounterMode is None:
            raise Skip("cannot count flops: torch.utils.flop_counter does not import: %s"
                       % FLOP_COUNTER_ERROR)
        result = None
        try:
            mod = torch_problem.load(self.path, sizes)
            with torch.device("meta"):
                inputs = list(mod.get_inputs())
                model = mod.Model(*mod.get_init_inputs())
                if self.eval_mode:
                    model.eval()
                with torch.no_grad(), FlopCounterMode(display=False) as fc:
                    out = model(*inputs)
            nbytes = sum(t.numel() * t.element_size() for t in inputs if isinstance(t, torch.Tensor))
            nbytes += sum(v.numel() * v.element_size() for _, v in state_items(model))
            outs = out_list(out)
            nbytes += sum(t.numel() * t.element_size() for t in outs)
            flops = fc.get_total_flops()
            if not flops:
                flops = sum(t.numel() for t in outs)
                counted = False
            else:
                counted = True
            result = (flops / 1.5e10 * 1e3 + nbytes / 3e9 * 1e3, nbytes, flops, counted)
        except Skip:
            raise
        except Exception as e:
            self._cost_error = one_line(e, 160)
            result = None
        self._costs[key] = result
        return result

    def time_real(self, sizes):
        """ms of one forward with real tensors (the fastest of a few)."""
        _, inputs, model, _ = run(self.path, sizes, "cpu", self.eval_mode, forward=False)
        with torch.no_grad():
            t0 = time.perf_counter()
            model(*inputs)
            first = (time.perf_counter() - t0) * 1e3
            best = first
            # the fastest of up to 5 more within about a second: the first
            # call pays for allocation and kernel selection
            spent = 0.0
            for _ in range(5):
                if spent > 1000 or first > 1000:
                    break
                t0 = time.perf_counter()
                model(*inputs)
                ms = (time.perf_counter() - t0) * 1e3
                spent += ms
                best = min(best, ms)
        self._real = (sizes, inputs, model)
        return best

    def valid_at(self, sizes):
        return self.matches(sizes) and (self.device == "meta" or True)

    def find_scale(self, want_ms):
        """The largest scale whose estimated cost <= want_ms and at which the
        model runs: steps of 2**-0.5 down from 1, then 2**-0.0625 between
        the last step too big and the first small enough."""
        def fits(s):
            c = self.cost(self.scaled(s))
            return None if c is None else (c[0] <= want_ms and c[1] <= REAL_BYTES_MAX)
        smallest, above = None, None
        for k in range(0, 40):
            s = 2 ** (-k / 2)
            f = fits(s)
            if f is None:
                continue
            smallest = s
            if f:
                if above is None:
                    return s
                best = s
                for j in range(1, 8):
                    t = s * 2 ** (j / 16)
                    if t >= above:
                        break
                    if fits(t):
                        best = t
                    else:
                        break
                return best
            above = s
        return smallest or 1.0

    def choose_sizes(self):
        self._costs = {}
        self._real = None
        self.timed_ms = None
        if not self.scalable:
            self.sizes = dict(self.orig())
            self.notes.append("no constant acts as a dimension: sizes as written")
            c = self.cost(self.sizes)
            if c is not None and c[1] > REAL_BYTES_MAX:
                raise Skip("no constant can be scaled (sizes as written) and those take %.0f MB, "
                           "over the %.0f MB a task may take" % (c[1] / 1e6, REAL_BYTES_MAX / 1e6))
            if self.args.scale == "auto":
                self.timed_ms = self.time_real(self.sizes)
            return
        if self.args.scale != "auto":
            s = float(self.args.scale)
            for cand in self.backoff(s):
                if self.matches(cand):
                    self.sizes = cand
                    return
            raise Skip("the model fails at every scaled size set (scale %g, backing off to 1)" % s)
        tried = []
        want = TARGET_MS * 0.5
        s = self.find_scale(want)
        for _ in range(4):
            cand = None
            for c in self.backoff(s):
                if self.matches(c):
                    cand = c
                    break
            if cand is None:
                raise Skip("the model fails at every scaled size set")
            est = self.cost(cand)
            if est is not None and est[1] > REAL_BYTES_MAX:
                raise Skip("runs only at sizes that need more than %.0f MB (%s): it fails at every "
                           "smaller scaled set (constants that must change together?)"
                           % (REAL_BYTES_MAX / 1e6, ", ".join("%s=%d" % kv for kv in cand.items())))
            ms = self.time_real(cand)
            tried.append((ms, cand, est))
            if LOW_MS <= ms <= HIGH_MS or (ms < LOW_MS and s >= 1.0):
                break
            if est is None or time.monotonic() > self.deadline - 30:
                break
            want = est[0] * TARGET_MS / max(ms, 0.01)
            s_new = self.find_scale(want)
            if abs(math.log(s_new / s)) < 0.05:
                break
            s = s_new
        def off(ms):
            return 0 if LOW_MS <= ms <= HIGH_MS else abs(math.log(ms / (LOW_MS if ms < LOW_MS else HIGH_MS)))
        ms, cand, _ = min(tried, key=lambda t: off(t[0]))
        self.sizes, self.timed_ms = cand, ms
        if self._real and self._real[0] != cand:
            self._real = None

    def backoff(self, s):
        """Size sets to try for scale s: rounded to keep powers of two, then
        larger scales up to the original."""
        seen = []
        while True:
            for cap in (64, 1024, 1):
                c = self.scaled(s, cap)
                if c not in seen:
                    seen.append(c)
                    yield c
            if s >= 1.0:
                break
            s = min(1.0, s * 2)

    def choose_check(self):
        """One smaller size set with non-round values, names sharing a value
        kept apart."""
        primes = [p for p in range(2, 5000) if all(p % q for q in range(2, int(p ** 0.5) + 1))]
        def below(v, skip):
            c = [p for p in primes if p <= v]
            return c[max(0, len(c) - 1 - skip)] if c else 1
        plans = []
        def plan(f):
            out = dict(self.sizes)
            seen = {}
            for n in self.scalable:
                t = self.sizes[n]
                k = seen.get(t, 0)
                seen[t] = k + 1
                out[n] = f(t, k)
            return out
        if self.scalable:
            plans.append(plan(lambda t, k: t if t <= 2 else below(max(2, t // 2), k)))
            plans.append(plan(lambda t, k: t if t <= 2 else min(t - 1, max(1, (t // 2) | 1) + 2 * k)))
            plans.append(plan(lambda t, k: t if t <= 2 else below(max(2, t // 2), 0)))
            for cap in (64, 1024):
                m_plan = {}
                for n in self.scalable:
                    t, m = self.sizes[n], 1
                    while t % (m * 2) == 0 and m * 2 <= cap:
                        m *= 2
                    m_plan[n] = max(m, (t // 2) // m * m) if t > m else t
                    if m_plan[n] == t and t > 1 and t // 2 >= 1 and (t // 2) % m == 0:
                        m_plan[n] = t // 2
                out = dict(self.sizes)
                out.update(m_plan)
                plans.append(out)
        for cand in plans:
            if cand != self.sizes and self.matches(cand):
                self.check = [cand]
                return
        # one name at a time (a group count must still divide the channels,
        # a reshape its factors): the first smaller value that runs
        cand = dict(self.sizes)
        for k, n in enumerate(self.scalable):
            t, m = self.sizes[n], 1
            while t % (m * 2) == 0:
                m *= 2
            options = [below(max(2, t // 2), k), (t // 2) | 1, t // 2, t - m, (t // 4) * 2,
                       t // m * m // 2, t - 1, 1]
            for v in options:
                if 1 <= v < t:
                    trial = dict(cand)
                    trial[n] = v
                    if self.matches(trial):
                        cand = trial
                        break
        if cand != self.sizes:
            self.check = [cand]
            return
        self.check = []
        self.notes.append("no smaller size set runs: no check_sizes")

    # -- step 4: the task
    def build(self, out_dir, name):
        self.deadline = time.monotonic() + PROBLEM_TIME_S
        self.load()
        self.first_probe()
        self.perturb()
        self.fit()
        self.choose_sizes()
        for s in [self.sizes]:
            if not self.matches(s):
                raise Skip("the fitted shapes do not hold at the chosen sizes %s" % s)
        self.choose_check()
        return self.write(out_dir, name)

    def real_instance(self):
        if self._real and self._real[0] == self.sizes:
            return self._real[1], self._real[2]
        c = self.cost(self.sizes)
        at = self.sizes if (c is None or c[1] <= REAL_BYTES_MAX / 2) else (self.check[0] if self.check else self.sizes)
        _, inputs, model, _ = run(self.path, at, "cpu", self.eval_mode, forward=False)
        return inputs, model

    def atol(self):
        """--tolerance when given; else KernelBench's 1e-2, or less where an
        output's values span a small range at some size set: kevo tasks
        check refuses an atol over 1% of the range (a kernel could pass
        from the input distribution alone)."""
        tol = self.args.tolerance
        if self.args.tolerance_given:
            return tol
        smallest = None
        sets = [self.sizes] + self.check
        small = [s for s in sets if (lambda c: c is not None and c[1] <= REAL_BYTES_MAX)(self.cost(s))]
        # the output range is the input distribution's, not the sizes': when
        # every set is too large to run here, measure it at smaller sizes
        for sizes in small or [self.shrink_inputs(REAL_BYTES_MAX / 8)]:
            try:
                _, _, _, out = run(self.path, sizes, "cpu", self.eval_mode)
            except Exception:
                continue
            for t in out_list(out):
                if t.is_floating_point() and t.numel() > 1:
                    x = t.detach().double()
                    x = x[torch.isfinite(x)]
                    if x.numel():
                        r = float(x.max() - x.min())
                        if r > 0 and (smallest is None or r < smallest):
                            smallest = r
        if smallest is None or tol <= 0.005 * smallest:
            return tol
        want = 0.005 * smallest
        atol = float("%.1g" % want)
        if atol > want:
            atol = float("%.1g" % (atol - 10 ** math.floor(math.log10(want))))
        atol = atol if atol > 0 else float("%.1g" % want)
        self.notes.append("atol %g (an output spans only %.3g)" % (atol, smallest))
        return atol

    def write(self, out_dir, name):
        inputs, model = self.real_instance()
        try:
            fwd = inspect.signature(model.forward)
            arg_names = [p.name for p in fwd.parameters.values()
                         if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            arg_names = []
        taken = set(self.base)
        def unique(n):
            n = re.sub(r"[^A-Za-z0-9_]", "_", n) or "p"
            if n[0].isdigit():
                n = "p_" + n
            if n in C_KEYWORDS:
                n += "_"
            cand, k = n, 2
            while cand in taken:
                cand = "%s_%d" % (n, k)
                k += 1
            taken.add(cand)
            return cand
        params = []
        state = dict(state_items(model))
        tensors = 0
        for t, entry in enumerate(self.sig0):
            kind, key, shape, dt = entry
            if kind == "input":
                pname = unique(arg_names[key] if key < len(arg_names) else "in%d" % key)
                if shape is None:
                    later = [self.obs_sigs[i][t][3] for i in range(len(self.obs_sigs))]
                    if any(v != dt for v in later):
                        raise Skip("get_inputs() value %d (a number) changes with the sizes" % key)
                    params.append({"name": pname, "role": "scalar",
                                   "type": "i64" if isinstance(dt, int) else "f64",
                                   "value": dt, "torch": "input:%d" % key})
                    continue
                value = inputs[key]
                role = "in"
                binding = "input:%d" % key
            elif kind == "state":
                pname = unique(key.replace(".", "_"))
                value = state[key]
                role = "in"
                binding = "state:%s" % key
            else:
                pname = None
                value = None
                role = "out"
                binding = "output:%d" % key
            if dt not in DTYPES:
                what = {"input": "input %d" % key, "state": "state '%s'" % key,
                        "output": "output %d" % key}[kind]
                raise Skip("unsupported dtype %s (%s)" % (str(dt).replace("torch.", ""), what))
            shape_text = [fit_text(f) for f in self.fits[t]] or [1]
            p = {"name": pname, "role": role, "type": DTYPES[dt], "shape": shape_text,
                 "torch": binding}
            if role == "in":
                p["init"] = init_of(value, kind == "state")
                init = p["init"]
                # class indices below a size (CrossEntropy's targets below
                # num_classes): the range follows the size on every set
                if init["dist"] == "randint" and init["low"] >= 0 and init["high"] > 2:
                    for n in self.base:
                        if self.sizes.get(n) == init["high"]:
                            init["high"] = n
                            break
            params.append(p)
            tensors += 1
        nout = sum(1 for e in self.sig0 if e[0] == "output")
        for p, e in zip(params, self.sig0):
            if e[0] == "output":
                p["name"] = unique("out" if nout == 1 else "out%d" % e[1])
        for n in self.base:
            params.append({"name": n, "role": "scalar", "type": "i64"})
        atol = self.atol()
        c = self.cost(self.sizes)
        if c is None:
            raise Skip("cannot count the work at the chosen sizes: %s"
                       % getattr(self, "_cost_error", "?"))
        est_ms, nbytes, flops, counted = c
        doc = inspect.getdoc(type(model)) or ""
        first = doc.strip().splitlines()[0].strip() if doc.strip() else type(model).__name__
        if not first or first == "Model":
            first = "Model"
        task = {"name": name, "level": self.level, "category": category(self.label, self.level),
                "description": "%s (%s %s)" % (first, "KernelBench" if self.mode == "kernelbench"
                                               else "PyTorch", self.label),
                "reference": "reference.py"}
        if self.mode == "kernelbench":
            task["kernelbench"] = self.label
        if self.eval_mode:
            task["torch_mode"] = "eval"
        task.update({"params": params, "sizes": self.sizes, "check_sizes": self.check,
                     "tolerance": {"atol": atol, "rtol": self.args.tolerance},
                     "flops": str(int(flops)), "bytes": str(int(nbytes))})
        folder = os.path.join(out_dir, name)
        os.makedirs(folder)
        with open(os.path.join(folder, "task.json"), "w") as f:
            json.dump(task, f, indent=2)
            f.write("\n")
        shutil.copyfile(self.path, os.path.join(folder, "reference.py"))
        if self.scalable:
            self.notes.insert(0, "dimension sizes %s (found by proportional shapes)"
                              % ",".join(self.scalable))
        if self.timed_ms is not None:
            self.notes.insert(0, "forward %.1f ms" % self.timed_ms)
        if not counted:
            self.notes.append("flops = output elements (FlopCounterMode counts none)")
        return task


def nice(v, grid, up):
    if grid <= 0:
        return float(v)
    q = (math.ceil if up else math.floor)(v / grid - 1e-9 if up else v / grid + 1e-9)
    return float("%.6g" % (q * grid))


def init_of(t, is_state):
    x = t.detach().reshape(-1)
    if x.numel() == 0:
        return {"dist": "const", "value": 0}
    if not x.is_floating_point():
        lo, hi = int(x.min()), int(x.max())
        if lo == hi:
            return {"dist": "const", "value": lo}
        return {"dist": "randint", "low": lo, "high": hi + 1}
    x = x.double()
    lo, hi = float(x.min()), float(x.max())
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return {"dist": "normal", "mean": 0, "std": 1}
    r = hi - lo
    if r <= 1e-6 * max(1.0, abs(lo)):
        return {"dist": "const", "value": float("%.6g" % lo)}
    grid = 10 ** math.floor(math.log10(r / 100))
    if is_state or lo >= 0:
        a, b = nice(lo, grid, False), nice(hi, grid, True)
        if lo >= 0:
            a = max(0.0, a)
        return {"dist": "uniform", "low": a, "high": b}
    mean, std = float(x.mean()), float(x.std()) if x.numel() > 1 else 1.0
    if abs(mean) < 0.05 * std:
        mean = 0.0
    return {"dist": "normal", "mean": float("%.3g" % mean), "std": float("%.2g" % std)}


CATEGORIES = [
    ("loss", r"loss"),
    ("attention", r"attention|attn"),
    ("conv", r"conv"),
    ("matmul", r"matmul|gemm|linear|bmm|matrix|_mm_|matvec"),
    ("pooling", r"pool"),
    ("norm", r"norm"),
    ("softmax", r"softmax"),
    ("scan", r"cumsum|cumprod|scan"),
    ("reduction", r"reduction|_sum|_mean|_max|_min|argmax|argmin|_prod"),
    ("activation", r"relu|gelu|sigmoid|tanh|elu|selu|softplus|softsign|swish|silu|hardtanh|"
                   r"hardsigmoid|mish|leaky"),
]


def category(label, level):
    name = "_" + os.path.basename(label).lower()
    for cat, pat in CATEGORIES:
        if re.search(pat, name):
            return cat
    return "fused" if level >= 2 else "elementwise"


def task_name(label, level, mode):
    stem = os.path.splitext(os.path.basename(label))[0]
    if mode == "kernelbench":
        m = re.match(r"^(\d+)_?(.*)$", stem)
        if m:
            rest = re.sub(r"[^a-z0-9]+", "_", m.group(2).lower()).strip("_")
            return ("l%d_%03d_%s" % (level, int(m.group(1)), rest)).rstrip("_")
        return "l%d_%s" % (level, re.sub(r"[^a-z0-9]+", "_", stem.lower()).strip("_") or "problem")
    name = re.sub(r"[^A-Za-z0-9_]+", "_", stem).strip("_") or "problem"
    if name[0].isdigit():
        name = "t_" + name
    if name in C_KEYWORDS:
        name += "_"
    return name


def on_alarm(signum, frame):
    raise Timeout()


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["kernelbench", "torch"], required=True)
    ap.add_argument("--scale", default="1")
    ap.add_argument("--tolerance", type=float, default=None)
    ap.add_argument("--out", default="out")
    ap.add_argument("--fd", type=int, default=None)
    ap.add_argument("--taken", default="", help="task names already used (comma-separated)")
    ap.add_argument("problems", nargs="+", help="LEVEL:LABEL:PATH")
    args = ap.parse_args(argv)
    args.tolerance_given = args.tolerance is not None
    if args.tolerance is None:
        args.tolerance = 1e-2
    torch.set_num_threads(os.cpu_count() or 1)
    sink = os.fdopen(args.fd, "w") if args.fd is not None else sys.stdout
    os.makedirs(args.out, exist_ok=True)
    names = set(n for n in args.taken.split(",") if n)
    signal.signal(signal.SIGALRM, on_alarm)
    for spec in args.problems:
        level_text, label, path = spec.split(":", 2)
        level = int(level_text)
        name = task_name(label, level, args.mode)
        base, k = name, 2
        while name in names:
            name = "%s_%d" % (base, k)
            k += 1
        names.add(name)
        line = {"file": label}
        signal.alarm(PROBLEM_TIME_S + 60)
        try:
            p = Problem(path, label, level, args.mode, args)
            p.build(args.out, name)
            line.update(ok=True, task=name, level=level, note="; ".join(p.notes))
        except Skip as e:
            line.update(ok=False, reason=str(e))
        except Timeout:
            line.update(ok=False, reason="took longer than %d s to import" % (PROBLEM_TIME_S + 60))
        except RecursionError as e:
            line.update(ok=False, reason="fails: %s" % one_line(e))
        except MemoryError:
            line.update(ok=False, reason="ran out of memory while importing")
        except BaseException as e:  # the problem's own code may raise anything
            if isinstance(e, KeyboardInterrupt):
                raise
            line.update(ok=False, reason="fails: %s" % one_line(e))
        finally:
            signal.alarm(0)
        if not line["ok"]:
            shutil.rmtree(os.path.join(args.out, name), ignore_errors=True)
        sink.write(json.dumps(line) + "\n")
        sink.flush()
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main(sys.argv[1:]))
