"""NumPy definitions of Level 2 (fused) tasks. See crosscheck.py.

Written from the task descriptions with whole-array NumPy (einsum over
sliding windows, reshapes for pooling and group statistics), all in float64;
not a translation of the reference loops.
"""
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view as windows

_erf = np.vectorize(math.erf, otypes=[np.float64])


def f64(a):
    return np.asarray(a, dtype=np.float64)


# ---- activations -----------------------------------------------------------

def gelu(v):
    return 0.5 * v * (1.0 + _erf(v / math.sqrt(2.0)))


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def softplus(v):
    return np.logaddexp(0.0, v)


def mish(v):
    return v * np.tanh(softplus(v))


def softmax(v, axis):
    e = np.exp(v - v.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# ---- linear algebra / convolutions -----------------------------------------

def linear(x, w, b=None):
    """x: (M, K), w: (N, K) -> x w^T + b."""
    y = f64(x) @ f64(w).T
    return y if b is None else y + f64(b)


def conv1d(x, w, b=None):
    """Valid cross-correlation, stride 1. x: (N, CI, L), w: (CO, CI, K)."""
    k = w.shape[-1]
    y = np.einsum("nclk,ock->nol", windows(f64(x), k, axis=2), f64(w))
    return y if b is None else y + f64(b)[None, :, None]


def conv2d(x, w, b=None, pad=0):
    """Cross-correlation, stride 1, zero padding `pad`. x: NCHW, w: (CO, CI, KH, KW)."""
    x = f64(x)
    if pad:
        x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    kh, kw = w.shape[-2:]
    y = np.einsum("nchwij,ocij->nohw", windows(x, (kh, kw), axis=(2, 3)), f64(w))
    return y if b is None else y + f64(b)[None, :, None, None]


def conv3d(x, w, b=None):
    """Valid cross-correlation, stride 1. x: NCDHW, w: (CO, CI, k, k, k)."""
    k = w.shape[-3:]
    y = np.einsum("ncdhwijk,ocijk->nodhw",
                  windows(f64(x), k, axis=(2, 3, 4)), f64(w))
    return y if b is None else y + f64(b)[None, :, None, None, None]


def conv_transpose2d(x, w, stride, pad=0, out_pad=0):
    """Transposed conv as the gradient-of-conv identity: dilate the input by
    the stride, zero-pad by K-1-pad, and correlate with the spatially flipped,
    in/out-swapped kernel. x: (N, CI, H, W), w: (CI, CO, K, K)."""
    n, ci, h, wd = x.shape
    k = w.shape[-1]
    d = np.zeros((n, ci, (h - 1) * stride + 1, (wd - 1) * stride + 1))
    d[:, :, ::stride, ::stride] = f64(x)
    q = k - 1 - pad
    d = np.pad(d, ((0, 0), (0, 0), (q, q + out_pad), (q, q + out_pad)))
    wf = f64(w).transpose(1, 0, 2, 3)[:, :, ::-1, ::-1]
    return conv2d(d, wf)


def conv_transpose3d(x, w, stride, pad=0, out_pad=0):
    """3-D transposed conv by the same identity as conv_transpose2d: dilate by
    the stride, pad by K-1-pad (+out_pad at the far end), correlate with the
    flipped, in/out-swapped kernel. x: NCDHW, w: (CI, CO, k, k, k)."""
    n, ci = x.shape[:2]
    k = w.shape[-1]
    sp = x.shape[2:]
    d = np.zeros((n, ci) + tuple((s - 1) * stride + 1 for s in sp))
    d[:, :, ::stride, ::stride, ::stride] = f64(x)
    q = k - 1 - pad
    d = np.pad(d, ((0, 0), (0, 0)) + ((q, q + out_pad),) * 3)
    wf = f64(w).transpose(1, 0, 2, 3, 4)[:, :, ::-1, ::-1, ::-1]
    return conv3d(d, wf)


# ---- pooling / normalisation -----------------------------------------------

def pool_last_axes(v, p, nd, op):
    """Non-overlapping window p along each of the last nd axes, remainder dropped."""
    lead = v.shape[:-nd]
    dims = v.shape[-nd:]
    v = v[(Ellipsis,) + tuple(slice(0, (s // p) * p) for s in dims)]
    shape = list(lead)
    for s in dims:
        shape += [s // p, p]
    v = v.reshape(shape)
    axes = tuple(len(lead) + 2 * i + 1 for i in range(nd))
    return op(v, axis=axes)


def normalize(v, axes, eps):
    mu = v.mean(axis=axes, keepdims=True)
    var = v.var(axis=axes, keepdims=True)  # biased
    return (v - mu) / np.sqrt(var + eps)


def group_norm_rows(v, g, eps):
    """(M, N) rows split into g groups of N/g features."""
    m, n = v.shape
    return normalize(v.reshape(m, g, n // g), 2, eps).reshape(m, n)


def group_norm_nchw(v, g, eps):
    n, c, h, w = v.shape
    return normalize(v.reshape(n, g, c // g, h, w), (2, 3, 4), eps).reshape(n, c, h, w)


def group_norm_channels(v, g, eps):
    """(N, C, *spatial): G groups of C/G channels, statistics over each group's channels and positions."""
    n, c = v.shape[:2]
    r = v.reshape((n, g, -1))
    mu = r.mean(axis=2, keepdims=True)
    var = r.var(axis=2, keepdims=True)
    return ((r - mu) / np.sqrt(var + eps)).reshape(v.shape)


def affine(v, gamma, beta):
    nd = v.ndim - 2
    return v * per_channel(gamma, nd) + per_channel(beta, nd)


def hardswish(v):
    return v * np.clip(v + 3.0, 0.0, 6.0) / 6.0


def per_channel(a, nd):
    """Reshape a (C,) vector to broadcast over an (N, C, *spatial) array with nd spatial dims."""
    return f64(a).reshape((1, -1) + (1,) * nd)


# ---- tasks ------------------------------------------------------------------

def t001(i, s):
    z = np.maximum(conv2d(i["x"], i["w"], i["cb"]), 0.0)
    return {"y": z + per_channel(i["b"], 2)}


def t002(i, s):
    return {"y": sigmoid(linear(i["x"], i["w"], i["b"])).sum(axis=1)}


def t003(i, s):
    z = linear(i["x"], i["w"], i["b"])
    return {"y": z * i["s"] + z}


def t004(i, s):
    z = conv2d(i["x"], i["w"], pad=1)
    z = (z - per_channel(i["mean"], 2)) / np.sqrt(per_channel(i["var"], 2) + i["eps"])
    z = z * per_channel(i["gamma"], 2) + per_channel(i["beta"], 2)
    return {"y": np.maximum(z, 0.0)}


def t005(i, s):
    z = normalize(linear(i["x"], i["w"], i["b"]), 1, i["eps"])
    return {"y": gelu(z * f64(i["gamma"]) + f64(i["beta"]))}


def t006(i, s):
    return {"y": gelu(conv2d(i["x"], i["w"], i["cb"])).mean(axis=(2, 3))}


def t007(i, s):
    return {"y": softmax(linear(i["x"], i["w"], i["b"]), axis=1)}


def t008(i, s):
    z = linear(i["x"], i["w"], i["b"])
    return {"y": gelu(z.max(axis=1) - z.mean(axis=1))}


def t009(i, s):
    z = np.tanh(conv1d(i["x"], i["w"], i["b"]))
    return {"y": pool_last_axes(z, s["P"], 1, np.max)}


def t010(i, s):
    z = conv_transpose2d(i["x"], i["w"], s["S"], s["P"], s["OP"])
    z = z + per_channel(i["cb"], 2) + per_channel(i["b"], 2)
    z = np.clip(np.clip(z, 0.0, 1.0) * i["s"], 0.0, 1.0)
    return {"y": z / i["s"]}


def t011(i, s):
    z = linear(i["x"], i["w"], i["b"])
    return {"y": i["s"] * z * sigmoid(z)}


def t012(i, s):
    z = group_norm_nchw(conv2d(i["x"], i["w"], i["cb"]), s["G"], i["eps"])
    z = z * per_channel(i["gamma"], 2) + per_channel(i["beta"], 2)
    z = z * per_channel(i["sc"], 2)
    return {"y": np.clip(pool_last_axes(z, s["MP"], 2, np.max), i["lo"], i["hi"])}


def t013(i, s):
    z = np.maximum(conv3d(i["x"], i["w"], i["cb"]), 0.0)
    z = np.where(z >= 0, z, i["slope"] * z)
    return {"y": sigmoid(gelu(z)) + per_channel(i["b"], 3)}


def t014(i, s):
    z = np.clip(i["s"] * linear(i["x"], i["w"], i["b"]), -2.0, 2.0)
    return {"y": gelu(z)}


def t015(i, s):
    return {"y": i["s"] * (linear(i["x"], i["w"]) / 2.0).sum(axis=1)}


def t016(i, s):
    z = linear(i["x"], i["w"], i["b"])
    z = (z - f64(i["bn_mean"])) / np.sqrt(f64(i["bn_var"]) + i["eps"]) * f64(i["bn_gamma"]) + f64(i["bn_beta"])
    z = group_norm_rows(gelu(z), s["G"], i["eps"])
    return {"y": z * f64(i["gn_gamma"]) + f64(i["gn_beta"])}


def t017(i, s):
    c = i["c"]
    return {"y": np.minimum(linear(i["x"], i["w"], i["b"]), c) - c}


def t018(i, s):
    z = np.tanh(conv2d(i["x"], i["w"], i["cb"]) - i["s1"]) - i["s2"]
    return {"y": pool_last_axes(z, 2, 2, np.mean)}


def t019(i, s):
    return {"y": normalize(conv2d(i["x"], i["w"], i["cb"]), (2, 3), i["eps"]) / i["d"]}


def t020(i, s):
    return {"y": mish(mish(conv2d(i["x"], i["w"], i["cb"])))}


def t021(i, s):
    z = linear(i["x"], i["w"], i["b"])
    nrm = np.maximum(np.linalg.norm(z, axis=1, keepdims=True), i["eps"])
    return {"y": i["s"] * z / nrm}


def t022(i, s):
    z = pool_last_axes(conv2d(i["x"], i["w"], i["cb"]), s["PK"], 2, np.mean)
    return {"y": sigmoid(z).sum(axis=(1, 2, 3))}


def t023(i, s):
    z = group_norm_rows(linear(i["x"], i["w"], i["b"]), s["G"], i["eps"])
    z = z * f64(i["gamma"]) + f64(i["beta"])
    z = z * sigmoid(z) * f64(i["mw"])
    return {"y": z * sigmoid(z)}


def t024(i, s):
    z = conv2d(i["x"], i["w"], i["cb"])
    z = z * np.clip(z + 3.0, 0.0, 6.0) / 6.0
    return {"y": np.maximum(z, 0.0)}


def t025(i, s):
    z = conv_transpose2d(i["x"], i["w"], s["S"], s["P"]) + per_channel(i["b"], 2)
    z = np.clip(pool_last_axes(z, 2, 2, np.max), -1.0, 1.0)
    return {"y": np.tanh(z.mean(axis=(2, 3)))}


def t026(i, s):
    r = f64(i["r"])
    z = normalize(linear(i["x"], i["w"], i["b"]), 1, i["eps"])
    return {"y": (z + r) * r}


def t027(i, s):
    return {"y": (i["s"] * conv2d(i["x"], i["w"], i["cb"])).min(axis=1)}


def t028(i, s):
    z = linear(i["x"], i["w"], i["b"])
    return {"y": i["s"] * sigmoid(z) + z}


def t029(i, s):
    c = s["C"]
    # depthwise conv = grouped conv: every channel with its own 3x3 kernel
    h = np.einsum("nchwij,cij->nchw",
                  windows(np.pad(f64(i["x"]), ((0, 0), (0, 0), (1, 1), (1, 1))), (3, 3), axis=(2, 3)),
                  f64(i["wd"]).reshape(c, 3, 3)) + per_channel(i["bd"], 2)
    h = np.clip(h, 0.0, 6.0)
    y = np.einsum("oc,nchw->nohw", f64(i["wp"]), h) + per_channel(i["bp"], 2)
    return {"y": np.clip(y, 0.0, 6.0)}


def t030(i, s):
    z = normalize(linear(i["x"], i["w"], i["b"]) + f64(i["r"]), 1, i["eps"])
    return {"y": z * f64(i["gamma"]) + f64(i["beta"])}


def t031(i, s):
    h = gelu(linear(i["x"], i["w1"], i["b1"]))
    return {"y": linear(h, i["w2"], i["b2"])}


def t032(i, s):
    z = softmax(conv3d(i["x"], i["w"], i["cb"]), axis=1)
    return {"y": pool_last_axes(pool_last_axes(z, 2, 3, np.max), 2, 3, np.max)}


# ---- 033..042: KernelBench problems added with issue 14 ---------------------

def t033(i, s):
    z = np.maximum(conv_transpose3d(i["x"], i["w"], 1), 0.0)
    return {"y": affine(group_norm_channels(z, s["G"], i["eps"]), i["gamma"], i["beta"])}


def t034(i, s):
    z = conv_transpose3d(i["x"], i["w"], s["S"], s["P"]) + per_channel(i["cb"], 3)
    # training-mode batch norm: statistics over batch and voxels of each channel
    z = affine(normalize(z, (0, 2, 3, 4), i["eps"]), i["gamma"], i["beta"])
    return {"y": z - z.mean(axis=(2, 3, 4), keepdims=True)}


def t035(i, s):
    v = conv_transpose3d(i["x"], i["w"], s["S"], s["P"], s["OP"]) + per_channel(i["cb"], 3)
    v = v + f64(i["a"])
    return {"y": v * hardswish(v)}


def t036(i, s):
    z = gelu(conv_transpose2d(i["x"], i["w"], s["S"]) + per_channel(i["cb"], 2))
    return {"y": affine(group_norm_channels(z, s["G"], i["eps"]), i["gamma"], i["beta"])}


def t037(i, s):
    z = conv3d(i["x"], i["w"], i["cb"])
    z = np.where(z >= 0, z, i["slope"] * z) + per_channel(i["st"], 3)
    return {"y": gelu(np.clip(z, -1.0, 1.0))}


def t038(i, s):
    z = conv3d(i["x"], i["w"], i["cb"]).min(axis=2)
    return {"y": softmax(z, axis=1)}


def t039(i, s):
    z = normalize(linear(i["x"], i["w"], i["b"]), 0, i["eps"]) * f64(i["gamma"]) + f64(i["beta"])
    return {"y": np.maximum(gelu(z), 0.0)}


def t040(i, s):
    z = group_norm_rows(linear(i["x"], i["w"], i["b"]), s["G"], i["eps"])
    return {"y": np.clip(z * f64(i["gamma"]) + f64(i["beta"]), -2.0, 2.0)}


def t041(i, s):
    z = pool_last_axes(linear(i["x"], i["w"], i["b"]), s["PK"], 1, np.max)
    return {"y": z.sum(axis=1) * i["s"]}


def t042(i, s):
    z = conv_transpose2d(i["x"], i["w"], s["S"], s["P"], s["OP"]) + per_channel(i["cb"], 2)
    return {"y": np.tanh(z - per_channel(i["b"], 2))}


CHECKS = {
    "fused_conv2d_relu_biasadd": t001,
    "fused_gemm_sigmoid_sum": t002,
    "fused_gemm_scale_residual": t003,
    "fused_conv2d_batchnorm_relu": t004,
    "fused_gemm_layernorm_gelu": t005,
    "fused_conv2d_gelu_gap": t006,
    "fused_matmul_bias_softmax": t007,
    "fused_gemm_max_submean_gelu": t008,
    "fused_conv1d_tanh_maxpool1d": t009,
    "fused_convtranspose2d_bias_clamp": t010,
    "fused_gemm_swish_scale": t011,
    "fused_conv2d_groupnorm_scale_maxpool": t012,
    "fused_conv3d_leakyrelu_gelu_biasadd": t013,
    "fused_gemm_scale_hardtanh_gelu": t014,
    "fused_gemm_divide_sum_scale": t015,
    "fused_gemm_batchnorm_gelu_groupnorm": t016,
    "fused_linear_min_subtract": t017,
    "fused_conv2d_sub_tanh_sub_avgpool": t018,
    "fused_conv2d_instancenorm_divide": t019,
    "fused_conv2d_mish_mish": t020,
    "fused_gemm_l2norm_scale": t021,
    "fused_conv2d_avgpool_sigmoid_chansum": t022,
    "fused_gemm_groupnorm_swish_mul_swish": t023,
    "fused_conv2d_hardswish_relu": t024,
    "fused_convtranspose2d_maxpool_hardtanh": t025,
    "fused_gemm_instancenorm_residual_mul": t026,
    "fused_conv2d_scale_min": t027,
    "fused_gemm_sigmoid_scale_residual": t028,
    "fused_dwconv_pwconv_relu6": t029,
    "fused_gemm_residual_layernorm": t030,
    "fused_gemm_gelu_gemm": t031,
    "fused_conv3d_softmax_maxpool3d": t032,
    "fused_convtranspose3d_relu_groupnorm": t033,
    "fused_convtranspose3d_batchnorm_subtract": t034,
    "fused_convtranspose3d_add_hardswish": t035,
    "fused_convtranspose2d_gelu_groupnorm": t036,
    "fused_conv3d_leakyrelu_sum_clamp_gelu": t037,
    "fused_conv3d_min_softmax": t038,
    "fused_gemm_batchnorm_gelu_relu": t039,
    "fused_gemm_groupnorm_hardtanh": t040,
    "fused_matmul_maxpool_sum_scale": t041,
    "fused_convtranspose2d_subtract_tanh": t042,
}
