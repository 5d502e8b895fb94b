"""NumPy definitions of Level 1 tasks (first part). See crosscheck.py.

Each function is written from the operator's mathematical definition (as in
PyTorch's documentation), in float64, independently of the C reference.
"""
import math

import numpy as np


def _f64(a):
    return np.asarray(a, dtype=np.float64)


# ---------------------------------------------------------------- activations

def relu(inp, sizes):
    return {"y": np.maximum(inp["x"].astype(np.float64), 0.0)}


def leaky_relu(inp, sizes):
    x = _f64(inp["x"])
    return {"y": np.where(x >= 0, x, inp["negative_slope"] * x)}


def sigmoid(inp, sizes):
    x = _f64(inp["x"])
    return {"y": 1.0 / (1.0 + np.exp(-x))}


def tanh_activation(inp, sizes):
    x = _f64(inp["x"])
    # tanh from its exponential definition
    e2 = np.exp(-2.0 * np.abs(x))
    return {"y": np.sign(x) * (1.0 - e2) / (1.0 + e2)}


def gelu_exact(inp, sizes):
    x = _f64(inp["x"])
    cdf = 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))
    return {"y": x * cdf}


def selu(inp, sizes):
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    x = _f64(inp["x"])
    return {"y": scale * (np.maximum(x, 0.0) + np.minimum(0.0, alpha * (np.exp(x) - 1.0)))}


def elu(inp, sizes):
    x = _f64(inp["x"])
    a = inp["alpha"]
    return {"y": np.maximum(x, 0.0) + np.minimum(0.0, a * (np.exp(x) - 1.0))}


def softplus(inp, sizes):
    x = _f64(inp["x"])
    return {"y": np.logaddexp(0.0, x)}


def softsign(inp, sizes):
    x = _f64(inp["x"])
    return {"y": x / (1.0 + np.abs(x))}


def hardtanh(inp, sizes):
    x = _f64(inp["x"])
    return {"y": np.clip(x, -1.0, 1.0)}


def hardsigmoid(inp, sizes):
    x = _f64(inp["x"])
    return {"y": np.minimum(np.maximum(x + 3.0, 0.0), 6.0) / 6.0}


def swish(inp, sizes):
    x = _f64(inp["x"])
    return {"y": x * (1.0 / (1.0 + np.exp(-x)))}


def softmax_rows(inp, sizes):
    x = _f64(inp["x"]).reshape(sizes["R"], sizes["C"])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return {"y": e / e.sum(axis=1, keepdims=True)}


def log_softmax_rows(inp, sizes):
    x = _f64(inp["x"]).reshape(sizes["R"], sizes["C"])
    m = x.max(axis=1, keepdims=True)
    return {"y": x - (m + np.log(np.exp(x - m).sum(axis=1, keepdims=True)))}


# ---------------------------------------------------------------- matmul

def _mm(inp, sizes):
    return {"C": _f64(inp["A"]) @ _f64(inp["B"])}


def matmul_batched(inp, sizes):
    return {"C": np.matmul(_f64(inp["A"]), _f64(inp["B"]))}


def matvec(inp, sizes):
    return {"y": _f64(inp["A"]) @ _f64(inp["x"])}


def matmul_trans_a(inp, sizes):
    return {"C": _f64(inp["A"]).T @ _f64(inp["B"])}


def matmul_trans_b(inp, sizes):
    return {"C": _f64(inp["A"]) @ _f64(inp["B"]).T}


def matmul_diag(inp, sizes):
    return {"C": np.diag(_f64(inp["a"])) @ _f64(inp["B"])}


def matmul_3d_tensor(inp, sizes):
    return {"C": np.einsum("bmk,kn->bmn", _f64(inp["A"]), _f64(inp["B"]))}


# ---------------------------------------------------------------- norms

def batchnorm_inference(inp, sizes):
    # training mode (KernelBench): statistics of this batch, biased variance
    x = _f64(inp["x"])
    mu = x.mean(axis=(0, 2, 3), keepdims=True)
    var = x.var(axis=(0, 2, 3), keepdims=True)
    ch = lambda v: _f64(v)[None, :, None, None]
    xhat = (x - mu) / np.sqrt(var + inp["eps"])
    return {"y": xhat * ch(inp["gamma"]) + ch(inp["beta"])}


def layernorm_lastdim(inp, sizes):
    x = _f64(inp["x"])
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)  # biased (ddof=0)
    return {"y": (x - mu) / np.sqrt(var + inp["eps"]) * _f64(inp["gamma"]) + _f64(inp["beta"])}


def instancenorm(inp, sizes):
    x = _f64(inp["x"])
    mu = x.mean(axis=(2, 3), keepdims=True)
    var = x.var(axis=(2, 3), keepdims=True)
    return {"y": (x - mu) / np.sqrt(var + inp["eps"])}


def groupnorm(inp, sizes):
    N, C, H, W, G = (sizes[k] for k in ("N", "C", "H", "W", "G"))
    x = _f64(inp["x"]).reshape(N, G, C // G, H, W)
    mu = x.mean(axis=(2, 3, 4), keepdims=True)
    var = x.var(axis=(2, 3, 4), keepdims=True)
    xhat = ((x - mu) / np.sqrt(var + inp["eps"])).reshape(N, C, H, W)
    return {"y": xhat * _f64(inp["gamma"])[None, :, None, None] + _f64(inp["beta"])[None, :, None, None]}


def rmsnorm_lastdim(inp, sizes):
    # KernelBench level1/36: over dim 1 (channels) of NCHW, no weight
    x = _f64(inp["x"])
    rms = np.sqrt(np.mean(x * x, axis=1, keepdims=True) + inp["eps"])
    return {"y": x / rms}


def l2norm_rows(inp, sizes):
    x = _f64(inp["x"])
    return {"y": x / np.linalg.norm(x, ord=2, axis=1, keepdims=True)}


def frobenius_norm(inp, sizes):
    x = _f64(inp["x"])
    return {"y": x / np.sqrt(np.sum(x ** 2))}


CHECKS = {
    "relu": relu,
    "leaky_relu": leaky_relu,
    "sigmoid": sigmoid,
    "tanh_activation": tanh_activation,
    "gelu_exact": gelu_exact,
    "selu": selu,
    "elu": elu,
    "softplus": softplus,
    "softsign": softsign,
    "hardtanh": hardtanh,
    "hardsigmoid": hardsigmoid,
    "swish": swish,
    "softmax_rows": softmax_rows,
    "log_softmax_rows": log_softmax_rows,
    "matmul_square": _mm,
    "matmul_rect": _mm,
    "matmul_tall_skinny": _mm,
    "matmul_batched": matmul_batched,
    "matvec": matvec,
    "matmul_trans_a": matmul_trans_a,
    "matmul_trans_b": matmul_trans_b,
    "matmul_diag": matmul_diag,
    "matmul_3d_tensor": matmul_3d_tensor,
    "batchnorm_inference": batchnorm_inference,
    "layernorm_lastdim": layernorm_lastdim,
    "instancenorm": instancenorm,
    "groupnorm": groupnorm,
    "rmsnorm_lastdim": rmsnorm_lastdim,
    "l2norm_rows": l2norm_rows,
    "frobenius_norm": frobenius_norm,
}
