"""harness/torch_problem.py - load a PyTorch problem file (KernelBench's form:
Model, get_inputs(), get_init_inputs(), module-level size constants) with
some of its integer constants set to other values.

Shared by the torch runner (harness/torch_runner.py) and the importer
(harness/torch_import.py). The file is executed as written, except that
every top-level assignment to an overridden name assigns the new value, so
constants derived from it (`bias_shape = (out_channels, 1, 1)`) follow.
Runs the problem's own code: only ever inside kevo's sandbox.
"""
import ast
import os
import types


def sandbox_friendly(user):
    """Before `import torch` in kevo's sandbox, which kills a process that
    forks or opens a socket: `import torch` runs `ldconfig -p` through
    ctypes.util.find_library (vfork), and torch._dynamo asks
    getpass.getuser() (a passwd lookup through nscd's socket). Find
    libraries by globbing, and name the user."""
    import ctypes.util
    import glob

    def find_library(name):
        for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
                  "/lib", "/usr/lib", "/usr/local/lib", "/lib/aarch64-linux-gnu",
                  "/usr/lib/aarch64-linux-gnu"):
            hits = sorted(glob.glob("%s/lib%s.so*" % (d, name)))
            if hits:
                return os.path.basename(hits[0])
        return None
    ctypes.util.find_library = find_library
    os.environ.setdefault("USER", user)
    os.environ.setdefault("LOGNAME", user)


def _read(path):
    with open(path, "r", encoding="utf-8") as f:
        return f.read()


def int_constants(path):
    """The top-level names bound to a plain int (not bool) by the file, in
    the order they are first assigned, with the value the file gives them:
    the candidates for sizes."""
    tree = ast.parse(_read(path), filename=path)
    env, found = {}, []
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        try:
            value = eval(compile(ast.Expression(node.value), path, "eval"), {}, dict(env))
        except Exception:
            continue
        for target, v in _bound(node.targets, value):
            env[target] = v
            if type(v) is int and target not in [n for n, _ in found]:
                found.append((target, v))
    return found


def _bound(targets, value):
    """(name, value) for each plain name the assignment binds, unpacking
    `d, h, w = 16, 32, 32` (a tuple target with a value of its length)."""
    out = []
    for target in targets:
        if isinstance(target, ast.Name):
            out.append((target.id, value))
        elif (isinstance(target, ast.Tuple) and isinstance(value, (tuple, list))
              and len(value) == len(target.elts)):
            for t, v in zip(target.elts, value):
                out.extend(_bound([t], v))
    return out


def _tuple_names(targets):
    names = []
    for target in targets:
        if isinstance(target, ast.Tuple):
            for t in target.elts:
                names.extend([t.id] if isinstance(t, ast.Name) else _tuple_names([t]))
    return names


class _Override(ast.NodeTransformer):
    def __init__(self, values):
        self.values = values

    def visit_Module(self, node):
        body = []
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id in self.values for t in stmt.targets):
                kept = [t for t in stmt.targets
                        if not (isinstance(t, ast.Name) and t.id in self.values)]
                if kept:
                    body.append(ast.copy_location(ast.Assign(targets=kept, value=stmt.value), stmt))
                for t in stmt.targets:
                    if isinstance(t, ast.Name) and t.id in self.values:
                        body.append(ast.copy_location(ast.Assign(
                            targets=[ast.Name(id=t.id, ctx=ast.Store())],
                            value=ast.Constant(value=self.values[t.id])), stmt))
            elif isinstance(stmt, ast.Assign) and any(
                    n in self.values for n in _tuple_names(stmt.targets)):
                # `d, h, w = 16, 32, 32`: as written, then the new values
                body.append(stmt)
                for n in _tuple_names(stmt.targets):
                    if n in self.values:
                        body.append(ast.copy_location(ast.Assign(
                            targets=[ast.Name(id=n, ctx=ast.Store())],
                            value=ast.Constant(value=self.values[n])), stmt))
            else:
                body.append(stmt)
        node.body = body
        return node


def load(path, overrides=None, name="kevo_problem"):
    """Execute the problem file with `overrides` (name -> int) and return
    it as a module. Raises ValueError naming what is missing."""
    tree = ast.parse(_read(path), filename=path)
    if overrides:
        tree = ast.fix_missing_locations(_Override(dict(overrides)).visit(tree))
    module = types.ModuleType(name)
    module.__file__ = path
    exec(compile(tree, path, "exec"), module.__dict__)
    for needed in ("Model", "get_inputs", "get_init_inputs"):
        if needed not in module.__dict__:
            raise ValueError("%s: defines no %s (a problem file has Model, get_inputs() and "
                             "get_init_inputs())" % (path, needed))
    return module
