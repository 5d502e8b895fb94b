"""NumPy definitions of Level 1 tasks 031..064 (pooling, reductions, scans,
convolutions, losses, attention). See crosscheck.py.

Written from the task descriptions with vectorised NumPy (sliding windows,
einsum, cumsum), not by translating the C references.
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view as swv


def f64(a):
    return np.asarray(a, dtype=np.float64)


# ---------------------------------------------------------------- pooling

def _windows(x, nd, K, S, P, padval, DIL=1):
    """Windows over the last nd axes of x padded by P with padval: shape
    (..., O1..Ond, K1..Knd), output positions taken every S, window taps
    every DIL."""
    lead = x.ndim - nd
    xp = np.pad(x, [(0, 0)] * lead + [(P, P)] * nd, constant_values=padval)
    axes = tuple(range(lead, x.ndim))
    w = swv(xp, (DIL * (K - 1) + 1,) * nd, axis=axes)
    idx = (slice(None),) * lead + (slice(None, None, S),) * nd + (slice(None, None, DIL),) * nd
    return w[idx]


def _max_pool(nd):
    def fn(inp, s):
        x = f64(inp["x"])
        w = _windows(x, nd, s["K"], s["S"], s["P"], -np.inf, s.get("DIL", 1))
        return {"y": w.max(axis=tuple(range(-nd, 0)))}
    return fn


def _avg_pool_include(nd):
    # count_include_pad = true: every window sum is divided by K^nd
    def fn(inp, s):
        x = f64(inp["x"])
        w = _windows(x, nd, s["K"], s["S"], s["P"], 0.0)
        return {"y": w.sum(axis=tuple(range(-nd, 0))) / float(s["K"] ** nd)}
    return fn


# ---------------------------------------------------------------- reductions

def _reduce(op):
    def fn(inp, s):
        return {"y": op(f64(inp["x"]), axis=1)}
    return fn


def argmax_dim(inp, s):
    return {"y": np.argmax(inp["x"], axis=1).astype(np.int64)}


def argmin_dim(inp, s):
    return {"y": np.argmin(inp["x"], axis=1).astype(np.int64)}


def logsumexp_dim(inp, s):
    x = f64(inp["x"])
    m = x.max(axis=1, keepdims=True)
    return {"y": (m + np.log(np.exp(x - m).sum(axis=1, keepdims=True)))[:, 0, :]}


# ---------------------------------------------------------------- scans

def cumsum_rows(inp, s):
    return {"y": np.cumsum(f64(inp["x"]), axis=1)}


def cumprod_rows(inp, s):
    return {"y": np.cumprod(f64(inp["x"]), axis=1)}


def cumsum_reverse_rows(inp, s):
    x = f64(inp["x"])
    return {"y": x.sum(axis=1, keepdims=True) - np.cumsum(x, axis=1) + x}


def cumsum_exclusive_rows(inp, s):
    x = f64(inp["x"])
    z = np.zeros((x.shape[0], 1))
    return {"y": np.cumsum(np.concatenate([z, x[:, :-1]], axis=1), axis=1)}


def cumsum_masked_rows(inp, s):
    x = f64(inp["x"])
    return {"y": np.cumsum(np.where(inp["mask"] != 0, x, 0.0), axis=1)}


# ---------------------------------------------------------------- convolutions

def conv1d(inp, s):
    # KernelBench convolutions have bias=False
    x, w = f64(inp["x"]), f64(inp["w"])
    win = swv(x, w.shape[2], axis=2)                       # N C LO K
    return {"y": np.einsum("nclk,ock->nol", win, w)}


def _conv2d_general(x, w, b, P, S, DL):
    K = w.shape[-1]
    xp = np.pad(x, [(0, 0), (0, 0), (P, P), (P, P)])
    ext = DL * (K - 1) + 1
    win = swv(xp, (ext, ext), axis=(2, 3))                 # N C H' W' ext ext
    win = win[:, :, ::S, ::S, ::DL, ::DL]                  # N C OH OW K K
    return np.einsum("nchwij,ocij->nohw", win, w) + b[None, :, None, None]


def conv2d(inp, s):
    w = f64(inp["w"])
    return {"y": _conv2d_general(f64(inp["x"]), w, np.zeros(w.shape[0]), 0, 1, 1)}


def conv2d_strided_dilated(inp, s):
    return {"y": _conv2d_general(f64(inp["x"]), f64(inp["w"]), f64(inp["b"]), s["P"], 2, 2)}


def conv2d_depthwise(inp, s):
    x, w = f64(inp["x"]), f64(inp["w"])
    win = swv(x, w.shape[1:], axis=(2, 3))                 # N C OH OW K K
    return {"y": np.einsum("nchwij,cij->nchw", win, w)}


def conv_transpose2d(inp, s):
    # Transposed conv (stride 1, padding 0) = ordinary correlation of the
    # input padded by K-1 with the spatially flipped kernel (in/out channels
    # swapped).
    x, w = f64(inp["x"]), f64(inp["w"])
    K = w.shape[-1]
    q = K - 1
    xp = np.pad(x, [(0, 0), (0, 0), (q, q), (q, q)])
    win = swv(xp, (K, K), axis=(2, 3))
    wf = w[:, :, ::-1, ::-1]                               # C OC K K
    return {"y": np.einsum("nchwij,coij->nohw", win, wf)}


def conv3d(inp, s):
    x, w = f64(inp["x"]), f64(inp["w"])
    win = swv(x, w.shape[2:], axis=(2, 3, 4))              # N C OD OH OW K K K
    return {"y": np.einsum("ncdhwijk,ocijk->nodhw", win, w)}


def conv2d_pointwise(inp, s):
    x, w = f64(inp["x"]), f64(inp["w"])
    return {"y": np.einsum("nchw,oc->nohw", x, w)}


# ---------------------------------------------------------------- losses

# KernelBench's losses reduce to one scalar (reduction mean / batchmean)

def mse_loss(inp, s):
    return {"y": np.mean((f64(inp["pred"]) - f64(inp["target"])) ** 2).reshape(1)}


def huber_loss(inp, s):
    # smooth L1 with beta (= 1)
    r = np.abs(f64(inp["pred"]) - f64(inp["target"]))
    beta = inp["beta"]
    l = np.where(r < beta, 0.5 * r * r / beta, r - 0.5 * beta)
    return {"y": l.mean().reshape(1)}


def kl_div_loss(inp, s):
    # kl_div(log(predictions), targets, 'batchmean'): KL(targets || predictions) / B
    p, t = f64(inp["predictions"]), f64(inp["targets"])
    return {"y": (np.sum(t * np.log(t / p)) / p.shape[0]).reshape(1)}


def hinge_loss(inp, s):
    # targets of shape (D,) broadcast along the last dim
    t = np.where(inp["label"] != 0, 1.0, -1.0)[None, :]
    return {"y": np.maximum(0.0, 1.0 - t * f64(inp["pred"])).mean().reshape(1)}


def cross_entropy_loss(inp, s):
    z = f64(inp["logits"])
    m = z.max(axis=1)
    lse = m + np.log(np.exp(z - m[:, None]).sum(axis=1))
    picked = np.take_along_axis(z, inp["target"][:, None], axis=1)[:, 0]
    return {"y": np.mean(lse - picked).reshape(1)}


def cosine_similarity_loss(inp, s):
    a, c = f64(inp["a"]), f64(inp["c"])
    den = np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(c, axis=1), 1e-8)
    return {"y": 1.0 - np.einsum("bd,bd->b", a, c) / den}


def triplet_margin_loss(inp, s):
    # pairwise_distance adds eps = 1e-6 to the difference; reduction mean
    a, p, n = f64(inp["anchor"]), f64(inp["positive"]), f64(inp["negative"])
    eps = 1e-6
    dp = np.linalg.norm(a - p + eps, axis=1)
    dn = np.linalg.norm(a - n + eps, axis=1)
    return {"y": np.mean(np.maximum(0.0, dp - dn + inp["margin"])).reshape(1)}


# ---------------------------------------------------------------- attention

def sdpa_single_head(inp, s):
    q, k, v = f64(inp["q"]), f64(inp["k"]), f64(inp["v"])
    scores = q @ k.T / np.sqrt(q.shape[1])
    scores -= scores.max(axis=1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(axis=1, keepdims=True)
    return {"o": p @ v}


CHECKS = {
    "max_pool1d": _max_pool(1),
    "avg_pool1d": _avg_pool_include(1),
    "max_pool2d": _max_pool(2),
    "avg_pool2d": _avg_pool_include(2),
    "max_pool3d": _max_pool(3),
    "avg_pool3d": _avg_pool_include(3),
    "reduce_sum_dim": _reduce(np.sum),
    "reduce_mean_dim": _reduce(np.mean),
    "reduce_max_dim": _reduce(np.max),
    "reduce_min_dim": _reduce(np.min),
    "argmax_dim": argmax_dim,
    "argmin_dim": argmin_dim,
    "reduce_prod_dim": _reduce(np.prod),
    "logsumexp_dim": logsumexp_dim,
    "cumsum_rows": cumsum_rows,
    "cumprod_rows": cumprod_rows,
    "cumsum_reverse_rows": cumsum_reverse_rows,
    "cumsum_exclusive_rows": cumsum_exclusive_rows,
    "cumsum_masked_rows": cumsum_masked_rows,
    "conv1d": conv1d,
    "conv2d": conv2d,
    "conv2d_depthwise": conv2d_depthwise,
    "conv_transpose2d": conv_transpose2d,
    "conv3d": conv3d,
    "conv2d_pointwise": conv2d_pointwise,
    "conv2d_strided_dilated": conv2d_strided_dilated,
    "mse_loss": mse_loss,
    "huber_loss": huber_loss,
    "kl_div_loss": kl_div_loss,
    "hinge_loss": hinge_loss,
    "cross_entropy_loss": cross_entropy_loss,
    "cosine_similarity_loss": cosine_similarity_loss,
    "triplet_margin_loss": triplet_margin_loss,
    "sdpa_single_head": sdpa_single_head,
}
