#!/usr/bin/env python3
"""Independent cross-check of every suite reference against NumPy.

For each task folder (a folder holding task.json) under the given roots:
compile reference.c into a shared library, generate inputs with NumPy for
every configuration in `check_sizes` (small by design), call the reference
through ctypes, and compare its outputs with an independent NumPy
implementation of the same operator, written from the task's description.

The NumPy implementations live in tests/crosscheck/ops_*.py; each module
defines CHECKS = {task_name: fn}, where

    fn(inputs, sizes) -> {output_name: ndarray}

`inputs` maps every `in`/`inout` param to an ndarray of its declared shape
and dtype, and every `scalar` param to its Python value; `sizes` is the size
configuration. Return one array per `out`/`inout` param (any float dtype;
compute in float64 where it matters).

Flags:
  --time   also time the reference at the timed `sizes` (built -O3
           -march=native) and flag tasks outside 5..200 ms.
  --only NAME[,NAME]  check only these task names.
  --torch  instead of NumPy, compare with PyTorch (run this with a Python
           that has torch: /var/cache/kevo/torch-venv/bin/python or
           $KEVO_TORCH_PYTHON). Every task with a `kernelbench` field must
           have a check in tests/crosscheck/torch_*.py, each defining
           TORCH = {task_name: entry}, where entry is either

               fn(inputs, sizes) -> {output_name: tensor}

           or {"fn": fn, "atol": a, "rtol": r, "why": "reason"} for a task
           that cannot meet the default. `inputs` are the same values as
           above as torch tensors (float32 stays float32; scalars stay
           Python values). fn builds the task's KernelBench-form Model with
           the task's hyper-parameters, copies the task's weight inputs into
           its parameters, and runs forward in training mode (no .eval(),
           as KernelBench's harness) under torch.no_grad(). Outputs are
           compared at atol = rtol = 1e-4 (TORCH_TOL) unless the entry says
           otherwise; the task's own looser tolerance is not used. Tasks
           without `kernelbench` and without a torch check are skipped.
Exit status 0 when every task has a check and passes.
"""
import argparse
import ctypes
import glob
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

NP_TYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32,
            "i64": np.int64, "u8": np.uint8}
CT_TYPES = {"f32": ctypes.c_float, "f64": ctypes.c_double,
            "i32": ctypes.c_int32, "i64": ctypes.c_int64, "u8": ctypes.c_uint8}


TORCH_TOL = {"atol": 1e-4, "rtol": 1e-4}


def load_checks(pattern="ops_*.py", attr="CHECKS"):
    checks = {}
    for path in sorted(glob.glob(os.path.join(HERE, pattern))):
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for name, fn in getattr(mod, attr).items():
            if name in checks:
                raise SystemExit(f"{path}: check for '{name}' defined twice")
            checks[name] = fn
    return checks


def eval_expr(expr, sizes, integer=True):
    if isinstance(expr, (int, float)):
        return expr
    if not re.fullmatch(r"[A-Za-z0-9_+\-*/%() .]+", expr):
        raise ValueError(f"bad expression {expr!r}")
    src = expr.replace("/", "//") if integer else expr
    return eval(src, {"__builtins__": {}}, dict(sizes))


def make_input(p, shape, rng):
    dt = NP_TYPES[p["type"]]
    init = p.get("init") or ({"dist": "randint", "low": 0, "high": 100}
                            if p["type"] in ("i32", "i64", "u8")
                            else {"dist": "normal", "mean": 0, "std": 1})
    d = init["dist"]
    if d == "normal":
        a = rng.normal(init.get("mean", 0), init.get("std", 1), size=shape)
    elif d == "uniform":
        a = rng.uniform(init.get("low", 0), init.get("high", 1), size=shape)
    elif d == "randint":
        a = rng.integers(init["low"], init["high"], size=shape)
    elif d == "const":
        a = np.full(shape, init["value"])
    else:
        raise ValueError(f"unknown dist {d}")
    return np.ascontiguousarray(a.astype(dt))


def build(ref, opt):
    out = tempfile.NamedTemporaryFile(suffix=".so", delete=False).name
    subprocess.run(["gcc", opt, "-march=native", "-shared", "-fPIC", "-std=gnu11",
                    "-o", out, ref, "-lm"], check=True)
    return ctypes.CDLL(out), out


def call(lib, task, sizes, inputs):
    """Call the reference; return {name: array} for out/inout params."""
    fn = getattr(lib, task["name"])
    args, argtypes, outs = [], [], {}
    for p in task["params"]:
        role, t = p["role"], p["type"]
        if role == "scalar":
            v = p["value"] if "value" in p else sizes[p["name"]]
            argtypes.append(CT_TYPES[t])
            args.append(CT_TYPES[t](v))
            continue
        shape = [eval_expr(d, sizes) for d in p["shape"]]
        if role == "out":
            arr = np.full(shape, np.nan if t in ("f32", "f64") else 0x5A, dtype=NP_TYPES[t])
            outs[p["name"]] = arr
        elif role == "inout":
            arr = inputs[p["name"]].copy()
            outs[p["name"]] = arr
        else:
            arr = inputs[p["name"]]
        argtypes.append(ctypes.c_void_p)
        args.append(arr.ctypes.data_as(ctypes.c_void_p))
    fn.argtypes = argtypes
    fn.restype = None
    fn(*args)
    return outs


def gen_inputs(task, sizes, rng):
    inputs = {}
    for p in task["params"]:
        if p["role"] in ("in", "inout"):
            shape = [eval_expr(d, sizes) for d in p["shape"]]
            inputs[p["name"]] = make_input(p, shape, rng)
        elif p["role"] == "scalar":
            inputs[p["name"]] = p["value"] if "value" in p else sizes[p["name"]]
    return inputs


def compare(name, got, want, tol, ptype):
    want = np.asarray(want)
    if want.shape != got.shape:
        want = want.reshape(got.shape)
    if ptype in ("i32", "i64", "u8"):
        bad = int(np.sum(got != want))
        return bad, 0.0
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    err = np.abs(g - w)
    bad = int(np.sum(~(err <= tol["atol"] + tol["rtol"] * np.abs(w))))
    return bad, float(np.nanmax(err)) if err.size else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("roots", nargs="+")
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--torch", action="store_true")
    args = ap.parse_args()
    if args.torch:
        return main_torch(args)
    checks = load_checks()
    only = set(filter(None, args.only.split(",")))
    tasks = []
    for root in args.roots:
        for tj in sorted(glob.glob(os.path.join(root, "**", "task.json"), recursive=True)):
            tasks.append(os.path.dirname(tj))
    failures = 0
    passed = 0
    for tdir in tasks:
        with open(os.path.join(tdir, "task.json")) as f:
            task = json.load(f)
        name = task["name"]
        if only and name not in only:
            continue
        if not task.get("reference", "reference.c").endswith(".c"):
            continue  # a PyTorch-defined task: nothing in C to check
        if name not in checks:
            print(f"FAIL {tdir}: no NumPy check for '{name}'")
            failures += 1
            continue
        tol = {"atol": 1e-2, "rtol": 1e-2}
        tol.update(task.get("tolerance", {}))
        lib, so = build(os.path.join(tdir, "reference.c"), "-O1")
        ok = True
        msgs = []
        configs = task.get("check_sizes") or []
        if not configs:
            ok = False
            msgs.append("no check_sizes")
        for ci, sizes in enumerate(configs):
            full = dict(task["sizes"])
            full.update(sizes)
            rng = np.random.default_rng(1234 + ci)
            inputs = gen_inputs(task, full, rng)
            got = call(lib, task, full, {k: v.copy() if isinstance(v, np.ndarray) else v
                                         for k, v in inputs.items()})
            want = checks[name]({k: v.copy() if isinstance(v, np.ndarray) else v
                                 for k, v in inputs.items()}, full)
            for p in task["params"]:
                if p["role"] not in ("out", "inout"):
                    continue
                if p["name"] not in want:
                    ok = False
                    msgs.append(f"check returned no '{p['name']}'")
                    continue
                bad, maxerr = compare(p["name"], got[p["name"]], want[p["name"]], tol, p["type"])
                if bad:
                    ok = False
                    msgs.append(f"{p['name']} sizes={full}: {bad} mismatches, max abs err {maxerr:.3g}")
                g = got[p["name"]].astype(np.float64)
                if g.size > 1 and p["type"] in ("f32", "f64") and \
                        np.nanmax(g) - np.nanmin(g) <= 2 * tol["atol"]:
                    ok = False
                    msgs.append(f"{p['name']} sizes={full}: near-constant output")
        os.unlink(so)
        timing = ""
        if args.time:
            lib3, so3 = build(os.path.join(tdir, "reference.c"), "-O3")
            inputs = gen_inputs(task, task["sizes"], np.random.default_rng(7))
            times = []
            for _ in range(3):
                t0 = time.perf_counter()
                call(lib3, task, task["sizes"], inputs)
                times.append((time.perf_counter() - t0) * 1e3)
            med = sorted(times)[1]
            timing = f" ref {med:.1f} ms"
            if not (5.0 <= med <= 200.0):
                ok = False
                msgs.append(f"timed reference takes {med:.1f} ms, outside 5..200 ms")
            os.unlink(so3)
        if ok:
            passed += 1
            print(f"ok   {tdir}{timing}")
        else:
            failures += 1
            print(f"FAIL {tdir}{timing}: " + "; ".join(msgs))
    print(f"crosscheck: {passed} passed, {failures} failed")
    return 1 if failures else 0


def to_torch(inputs):
    import torch
    return {k: torch.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v
            for k, v in inputs.items()}


def main_torch(args):
    """Compare every C reference that names a KernelBench problem with a
    PyTorch module of that problem (tests/crosscheck/torch_*.py)."""
    import torch
    checks = load_checks("torch_*.py", "TORCH")
    only = set(filter(None, args.only.split(",")))
    tasks = []
    for root in args.roots:
        for tj in sorted(glob.glob(os.path.join(root, "**", "task.json"), recursive=True)):
            tasks.append(os.path.dirname(tj))
    passed = failures = skipped = 0
    t_start = time.perf_counter()
    for tdir in tasks:
        with open(os.path.join(tdir, "task.json")) as f:
            task = json.load(f)
        name = task["name"]
        if only and name not in only:
            continue
        if not task.get("reference", "reference.c").endswith(".c"):
            continue  # a PyTorch-defined task: its reference is torch already
        kb = task.get("kernelbench")
        if name not in checks:
            if kb:
                print(f"FAIL {tdir}: kernelbench {kb} but no torch check for '{name}'")
                failures += 1
            else:
                skipped += 1
            continue
        entry = checks[name]
        tol = dict(TORCH_TOL)
        if isinstance(entry, dict):
            fn = entry["fn"]
            tol.update({k: entry[k] for k in ("atol", "rtol") if k in entry})
        else:
            fn = entry
        lib, so = build(os.path.join(tdir, "reference.c"), "-O1")
        ok, msgs = True, []
        configs = task.get("check_sizes") or []
        if not configs:
            ok = False
            msgs.append("no check_sizes")
        for ci, sizes in enumerate(configs):
            full = dict(task["sizes"])
            full.update(sizes)
            rng = np.random.default_rng(4321 + ci)
            inputs = gen_inputs(task, full, rng)
            got = call(lib, task, full, {k: v.copy() if isinstance(v, np.ndarray) else v
                                         for k, v in inputs.items()})
            try:
                with torch.no_grad():
                    want = fn(to_torch(inputs), full)
            except Exception as e:  # a check that does not fit the task is a failure
                ok = False
                msgs.append(f"sizes={full}: torch check raised {type(e).__name__}: {e}")
                continue
            for p in task["params"]:
                if p["role"] not in ("out", "inout"):
                    continue
                if p["name"] not in want:
                    ok = False
                    msgs.append(f"torch check returned no '{p['name']}'")
                    continue
                w = want[p["name"]]
                w = w.detach().cpu().numpy() if hasattr(w, "detach") else np.asarray(w)
                if w.size != got[p["name"]].size:
                    ok = False
                    msgs.append(f"{p['name']} sizes={full}: torch gives {w.size} values, "
                                f"the reference {got[p['name']].size}")
                    continue
                bad, maxerr = compare(p["name"], got[p["name"]], w, tol, p["type"])
                if bad:
                    ok = False
                    msgs.append(f"{p['name']} sizes={full}: {bad} mismatches, "
                                f"max abs err {maxerr:.3g}")
        os.unlink(so)
        note = "" if tol == TORCH_TOL else f" (atol {tol['atol']:g} rtol {tol['rtol']:g})"
        if ok:
            passed += 1
            print(f"ok   {tdir} {kb or '-'}{note}")
        else:
            failures += 1
            print(f"FAIL {tdir} {kb or '-'}{note}: " + "; ".join(msgs))
    print(f"crosscheck --torch: {passed} passed, {failures} failed, {skipped} without "
          f"kernelbench skipped ({time.perf_counter() - t_start:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
