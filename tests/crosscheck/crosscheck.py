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


def load_checks():
    checks = {}
    for path in sorted(glob.glob(os.path.join(HERE, "ops_*.py"))):
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for name, fn in mod.CHECKS.items():
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
    args = ap.parse_args()
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


if __name__ == "__main__":
    sys.exit(main())
