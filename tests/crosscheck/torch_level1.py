"""PyTorch definitions of the Level 1 C tasks that translate a KernelBench
problem (task.json "kernelbench"). See crosscheck.py --torch.

Each Model is written in KernelBench's form (class Model(nn.Module) with
__init__(hyper-parameters) and forward(inputs)) from the operator and the
hyper-parameters of the named KernelBench level1 problem; the task's sizes
stand in for KernelBench's (larger) ones. A check builds the Model, copies
the task's weight inputs into the module's parameters, and runs forward in
training mode (the module as constructed: KernelBench's harness never calls
.eval(), so BatchNorm2d uses batch statistics); crosscheck.py calls it under
torch.no_grad() and compares at atol = rtol = 1e-4 in float32.

TORCH = {task_name: fn(inputs, sizes) -> {output_name: tensor}} or, for a
task that needs another tolerance, {"fn": fn, "atol": a, "rtol": r, "why":
reason} (none needed so far: every Level 1 task passes at 1e-4).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


# --------------------------------------------------------------- activations

class Unary(nn.Module):
    """Model(f): forward(x) = f(x); the activations of level1/19..32, 88."""

    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, x):
        return self.f(x)


def unary(f):
    return lambda inp, sizes: {"y": Unary(f)(inp["x"])}


def leaky_relu(inp, sizes):
    class Model(nn.Module):  # level1/20_LeakyReLU.py
        def __init__(self, negative_slope: float = 0.01):
            super().__init__()
            self.negative_slope = negative_slope

        def forward(self, x):
            return F.leaky_relu(x, negative_slope=self.negative_slope)
    return {"y": Model(inp["negative_slope"])(inp["x"])}


def elu(inp, sizes):
    class Model(nn.Module):  # level1/31_ELU.py
        def __init__(self, alpha: float = 1.0):
            super().__init__()
            self.alpha = alpha

        def forward(self, x):
            return F.elu(x, alpha=self.alpha)
    return {"y": Model(inp["alpha"])(inp["x"])}


class Softmax(nn.Module):  # level1/23_Softmax.py, 24_LogSoftmax.py
    def __init__(self, dim: int = 1, log: bool = False):
        super().__init__()
        self.dim, self.log = dim, log

    def forward(self, x):
        return torch.log_softmax(x, dim=self.dim) if self.log else torch.softmax(x, dim=self.dim)


# ------------------------------------------------------------------- matmul

class Matmul(nn.Module):
    """level1/1, 2, 3 (bmm), 4, 7, 10, 16, 17: forward(A, B) = f(A, B)."""

    def __init__(self, f=torch.matmul):
        super().__init__()
        self.f = f

    def forward(self, A, B):
        return self.f(A, B)


def matmul(f=torch.matmul, a="A", b="B", out="C"):
    return lambda inp, sizes: {out: Matmul(f)(inp[a], inp[b])}


def matvec(inp, sizes):  # level1/4: B is (K, 1), the result (M, 1)
    return {"y": Matmul()(inp["A"], inp["x"].reshape(-1, 1))}


def matmul_diag(inp, sizes):  # level1/12: diag(A) * B as A.unsqueeze(1) * B
    return {"C": Matmul(lambda A, B: A.unsqueeze(1) * B)(inp["a"], inp["B"])}


# --------------------------------------------------------------------- norms

def batchnorm(inp, sizes):
    class Model(nn.Module):  # level1/33_BatchNorm.py
        def __init__(self, num_features: int):
            super().__init__()
            self.bn = nn.BatchNorm2d(num_features=num_features)

        def forward(self, x):
            return self.bn(x)
    m = Model(sizes["C"])  # training mode: batch statistics, biased variance
    m.bn.weight.copy_(inp["gamma"])
    m.bn.bias.copy_(inp["beta"])
    return {"y": m(inp["x"])}


def layernorm(inp, sizes):
    class Model(nn.Module):  # level1/40_LayerNorm.py (normalized_shape = the row)
        def __init__(self, normalized_shape: tuple):
            super().__init__()
            self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

        def forward(self, x):
            return self.ln(x)
    m = Model((sizes["C"],))
    m.ln.weight.copy_(inp["gamma"])
    m.ln.bias.copy_(inp["beta"])
    return {"y": m(inp["x"])}


def instancenorm(inp, sizes):
    class Model(nn.Module):  # level1/34_InstanceNorm.py
        def __init__(self, num_features: int):
            super().__init__()
            self.inorm = nn.InstanceNorm2d(num_features=num_features)

        def forward(self, x):
            return self.inorm(x)
    return {"y": Model(sizes["C"])(inp["x"])}


def groupnorm(inp, sizes):
    class Model(nn.Module):  # level1/35_GroupNorm_.py
        def __init__(self, num_features: int, num_groups: int):
            super().__init__()
            self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)

        def forward(self, x):
            return self.gn(x)
    m = Model(sizes["C"], sizes["G"])
    m.gn.weight.copy_(inp["gamma"])
    m.gn.bias.copy_(inp["beta"])
    return {"y": m(inp["x"])}


def rmsnorm(inp, sizes):
    class Model(nn.Module):  # level1/36_RMSNorm_.py
        def __init__(self, num_features: int, eps: float = 1e-5):
            super().__init__()
            self.num_features = num_features
            self.eps = eps

        def forward(self, x):
            rms = torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + self.eps)
            return x / rms
    return {"y": Model(sizes["C"], inp["eps"])(inp["x"])}


def l2norm(inp, sizes):
    class Model(nn.Module):  # level1/39_L2Norm_.py
        def forward(self, x):
            return x / torch.norm(x, p=2, dim=1, keepdim=True)
    return {"y": Model()(inp["x"])}


def frobenius(inp, sizes):
    class Model(nn.Module):  # level1/37_FrobeniusNorm_.py
        def forward(self, x):
            norm = torch.norm(x, p="fro")
            return x / norm
    return {"y": Model()(inp["x"])}


# ------------------------------------------------------------------- pooling

class Pool(nn.Module):
    """level1/41..46: self.pool = the nn pooling module with the problem's
    kernel_size, stride, padding (and dilation for max pooling)."""

    def __init__(self, cls, **kw):
        super().__init__()
        self.pool = cls(**kw)

    def forward(self, x):
        return self.pool(x)


def pool(cls, dilation=False):
    def fn(inp, sizes):
        kw = dict(kernel_size=sizes["K"], stride=sizes["S"], padding=sizes["P"])
        if dilation:
            kw["dilation"] = sizes.get("DIL", 1)
        return {"y": Pool(cls, **kw)(inp["x"])}
    return fn


# ---------------------------------------------------------------- reductions

class Reduce(nn.Module):
    """level1/47..53: forward(x) = f(x, dim=self.dim)."""

    def __init__(self, f, dim: int):
        super().__init__()
        self.f, self.dim = f, dim

    def forward(self, x):
        return self.f(x, self.dim)


def reduce(f):
    return lambda inp, sizes: {"y": Reduce(f, 1)(inp["x"])}


# --------------------------------------------------------------------- scans

class Scan(nn.Module):
    """level1/89..92: forward(x) along self.dim."""

    def __init__(self, kind: str, dim: int):
        super().__init__()
        self.kind, self.dim = kind, dim

    def forward(self, x):
        d = self.dim
        if self.kind == "cumsum":
            return torch.cumsum(x, dim=d)
        if self.kind == "cumprod":
            return torch.cumprod(x, dim=d)
        if self.kind == "reverse":
            return torch.cumsum(x.flip(d), dim=d).flip(d)
        cumsum = torch.cumsum(x.narrow(dim=d, start=0, length=x.size(d) - 1), dim=d)
        return torch.cat((torch.zeros_like(x.select(d, 0).unsqueeze(d)), cumsum), dim=d)


def scan(kind):
    return lambda inp, sizes: {"y": Scan(kind, 1)(inp["x"])}


def cumsum_masked(inp, sizes):
    class Model(nn.Module):  # level1/93_masked_cumsum.py
        def __init__(self, dim):
            super().__init__()
            self.dim = dim

        def forward(self, x, mask):
            return torch.cumsum(x * mask, dim=self.dim)
    return {"y": Model(1)(inp["x"], inp["mask"].bool())}


# ---------------------------------------------------------------------- conv

class Conv(nn.Module):
    """level1/54, 57, 63, 67, 82, 87: self.conv = nn.ConvNd / ConvTransposeNd
    with bias=False (KernelBench's default for these problems)."""

    def __init__(self, cls, *args, **kw):
        super().__init__()
        self.conv = cls(*args, bias=False, **kw)

    def forward(self, x):
        return self.conv(x)


def conv(cls, square_dims=0, pointwise=False, depthwise=False, transpose=False):
    def fn(inp, sizes):
        w = inp["w"]
        if depthwise:
            C = sizes["C"]
            m = Conv(cls, C, C, sizes["K"], groups=C)
            w = w.reshape(C, 1, sizes["K"], sizes["K"])
        elif pointwise:
            m = Conv(cls, sizes["C"], sizes["OC"], kernel_size=1)
            w = w.reshape(sizes["OC"], sizes["C"], 1, 1)
        elif transpose:
            m = Conv(cls, sizes["C"], sizes["OC"], sizes["K"])
        else:
            m = Conv(cls, sizes["C"], sizes["OC"], (sizes["K"],) * square_dims)
        m.conv.weight.copy_(w)
        return {"y": m(inp["x"])}
    return fn


# -------------------------------------------------------------------- losses

class Loss(nn.Module):
    """level1/94..96, 98, 100: forward(predictions, targets) = f(...)."""

    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, predictions, targets):
        return self.f(predictions, targets)


def mse(inp, sizes):  # level1/94_MSELoss.py
    f = lambda p, t: torch.mean((p - t) ** 2)
    return {"y": Loss(f)(inp["pred"], inp["target"])}


def huber(inp, sizes):  # level1/96_HuberLoss.py
    return {"y": Loss(F.smooth_l1_loss)(inp["pred"], inp["target"])}


def kl_div(inp, sizes):  # level1/98_KLDivLoss.py
    f = lambda p, t: F.kl_div(torch.log(p), t, reduction="batchmean")
    return {"y": Loss(f)(inp["predictions"], inp["targets"])}


def hinge(inp, sizes):  # level1/100_HingeLoss.py; targets = label*2 - 1, shape (D,)
    f = lambda p, t: torch.mean(torch.clamp(1 - p * t, min=0))
    return {"y": Loss(f)(inp["pred"], inp["label"].float() * 2 - 1)}


def cross_entropy(inp, sizes):  # level1/95_CrossEntropyLoss.py
    return {"y": Loss(F.cross_entropy)(inp["logits"], inp["target"])}


def triplet(inp, sizes):
    class Model(nn.Module):  # level1/99_TripletMarginLoss.py
        def __init__(self, margin=1.0):
            super().__init__()
            self.loss_fn = torch.nn.TripletMarginLoss(margin=margin)

        def forward(self, anchor, positive, negative):
            return self.loss_fn(anchor, positive, negative)
    return {"y": Model(inp["margin"])(inp["anchor"], inp["positive"], inp["negative"])}


def sdpa(inp, sizes):
    class Model(nn.Module):  # level1/97_ScaledDotProductAttention.py
        def forward(self, Q, K, V):
            return F.scaled_dot_product_attention(Q, K, V)
    q, k, v = (inp[n][None, None] for n in ("q", "k", "v"))  # batch 1, 1 head
    return {"o": Model()(q, k, v)}


TORCH = {
    "relu": unary(torch.relu),
    "leaky_relu": leaky_relu,
    "sigmoid": unary(torch.sigmoid),
    "tanh_activation": unary(torch.tanh),
    "gelu_exact": unary(F.gelu),
    "selu": unary(torch.selu),
    "elu": elu,
    "softplus": unary(F.softplus),
    "softsign": unary(lambda x: x / (1 + torch.abs(x))),
    "hardtanh": unary(lambda x: F.hardtanh(x, min_val=-1., max_val=1.)),
    "hardsigmoid": unary(F.hardsigmoid),
    "swish": unary(lambda x: x * torch.sigmoid(x)),
    "softmax_rows": lambda inp, sizes: {"y": Softmax(1)(inp["x"])},
    "log_softmax_rows": lambda inp, sizes: {"y": Softmax(1, log=True)(inp["x"])},
    "matmul_square": matmul(),
    "matmul_rect": matmul(),
    "matmul_tall_skinny": matmul(),
    "matmul_batched": matmul(torch.bmm),
    "matvec": matvec,
    "matmul_trans_a": matmul(lambda A, B: torch.matmul(A.T, B)),
    "matmul_trans_b": matmul(lambda A, B: torch.matmul(A, B.T)),
    "matmul_diag": matmul_diag,
    "matmul_3d_tensor": matmul(),
    "batchnorm_inference": batchnorm,
    "layernorm_lastdim": layernorm,
    "instancenorm": instancenorm,
    "groupnorm": groupnorm,
    "rmsnorm_lastdim": rmsnorm,
    "l2norm_rows": l2norm,
    "frobenius_norm": frobenius,
    "max_pool1d": pool(nn.MaxPool1d, dilation=True),
    "avg_pool1d": pool(nn.AvgPool1d),
    "max_pool2d": pool(nn.MaxPool2d, dilation=True),
    "avg_pool2d": pool(nn.AvgPool2d),
    "max_pool3d": pool(nn.MaxPool3d, dilation=True),
    "avg_pool3d": pool(nn.AvgPool3d),
    "reduce_sum_dim": reduce(lambda x, d: torch.sum(x, dim=d, keepdim=True)),
    "reduce_mean_dim": reduce(lambda x, d: torch.mean(x, dim=d)),
    "reduce_max_dim": reduce(lambda x, d: torch.max(x, dim=d)[0]),
    "reduce_min_dim": reduce(lambda x, d: torch.min(x, dim=d)[0]),
    "argmax_dim": reduce(lambda x, d: torch.argmax(x, dim=d)),
    "argmin_dim": reduce(lambda x, d: torch.argmin(x, dim=d)),
    "cumsum_rows": scan("cumsum"),
    "cumprod_rows": scan("cumprod"),
    "cumsum_reverse_rows": scan("reverse"),
    "cumsum_exclusive_rows": scan("exclusive"),
    "cumsum_masked_rows": cumsum_masked,
    "conv1d": conv(nn.Conv1d, 1),
    "conv2d": conv(nn.Conv2d, 2),
    "conv2d_depthwise": conv(nn.Conv2d, depthwise=True),
    "conv_transpose2d": conv(nn.ConvTranspose2d, transpose=True),
    "conv3d": conv(nn.Conv3d, 3),
    "conv2d_pointwise": conv(nn.Conv2d, pointwise=True),
    "mse_loss": mse,
    "huber_loss": huber,
    "kl_div_loss": kl_div,
    "hinge_loss": hinge,
    "cross_entropy_loss": cross_entropy,
    "triplet_margin_loss": triplet,
    "sdpa_single_head": sdpa,
}
