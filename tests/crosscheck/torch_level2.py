"""PyTorch definitions of the Level 2 C tasks that translate a KernelBench
problem (task.json "kernelbench"). See crosscheck.py --torch.

Each check builds a Model in KernelBench's form: the problem's __init__
signature (its hyper-parameters, in its order) and its forward steps,
written here from the operator definitions, called with the problem's
get_init_inputs() list positionally, with the task's sizes standing in for
KernelBench's (larger) ones and the problem's own constants (scales, clamp
bounds, pool sizes, group counts given by the task). The task's weight
inputs are copied into the module's parameters, and forward runs in the
module's default training mode (KernelBench's harness never calls .eval():
BatchNorm uses batch statistics). The one exception is level2/66, whose
Dropout(p=0.2) has no deterministic training-mode result: it runs in eval
mode, as kevo's importer does for stochastic modules (task 007 says so).
crosscheck.py wraps every call in torch.no_grad() and compares at
atol = rtol = 1e-4 in float32.

TORCH = {task_name: fn(inputs, sizes) -> {output_name: tensor}}.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def load(param, value):
    """Copy a task input into a module parameter of the same number of values."""
    param.copy_(value.reshape(param.shape))


# ---------------------------------------------------------------- Conv2d ---

def t001(i, s):  # level2/1_Conv2D_ReLU_BiasAdd.py
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
            super().__init__()
            self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
            self.bias = nn.Parameter(torch.randn(bias_shape))

        def forward(self, x):
            return torch.relu(self.conv(x)) + self.bias
    m = Model(s["CI"], s["CO"], s["KS"], (s["CO"], 1, 1))
    load(m.conv.weight, i["w"]); load(m.conv.bias, i["cb"]); load(m.bias, i["b"])
    return {"y": m(i["x"])}


def t006(i, s):  # level2/67_Conv2d_GELU_GlobalAvgPool.py
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size):
            super().__init__()
            self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

        def forward(self, x):
            x = F.gelu(self.conv(x))
            return F.adaptive_avg_pool2d(x, 1).squeeze(-1).squeeze(-1)
    m = Model(s["CI"], s["CO"], s["KS"])
    load(m.conv.weight, i["w"]); load(m.conv.bias, i["cb"])
    return {"y": m(i["x"])}


def t012(i, s):  # level2/85_Conv2d_GroupNorm_Scale_MaxPool_Clamp.py
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, num_groups, scale_shape,
                     maxpool_kernel_size, clamp_min, clamp_max):
            super().__init__()
            self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
            self.group_norm = nn.GroupNorm(num_groups, out_channels)
            self.scale = nn.Parameter(torch.ones(scale_shape))
            self.maxpool = nn.MaxPool2d(kernel_size=maxpool_kernel_size)
            self.clamp_min, self.clamp_max = clamp_min, clamp_max

        def forward(self, x):
            x = self.group_norm(self.conv(x)) * self.scale
            return torch.clamp(self.maxpool(x), self.clamp_min, self.clamp_max)
    m = Model(s["CI"], s["CO"], s["KS"], s["G"], (s["CO"], 1, 1), s["MP"], 0.0, 1.0)
    load(m.conv.weight, i["w"]); load(m.conv.bias, i["cb"])
    load(m.group_norm.weight, i["gamma"]); load(m.group_norm.bias, i["beta"])
    load(m.scale, i["sc"])
    return {"y": m(i["x"])}


def t018(i, s):  # level2/46_Conv2d_Subtract_Tanh_Subtract_AvgPool.py
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, subtract1_value,
                     subtract2_value, kernel_size_pool):
            super().__init__()
            self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
            self.subtract1_value, self.subtract2_value = subtract1_value, subtract2_value
            self.avgpool = nn.AvgPool2d(kernel_size_pool)

        def forward(self, x):
            x = torch.tanh(self.conv(x) - self.subtract1_value) - self.subtract2_value
            return self.avgpool(x)
    m = Model(s["CI"], s["CO"], s["KS"], 0.5, 0.2, 2)
    load(m.conv.weight, i["w"]); load(m.conv.bias, i["cb"])
    return {"y": m(i["x"])}


def t019(i, s):  # level2/17_Conv2d_InstanceNorm_Divide.py
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, divide_by):
            super().__init__()
            self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
            self.instance_norm = nn.InstanceNorm2d(out_channels)
            self.divide_by = divide_by

        def forward(self, x):
            return self.instance_norm(self.conv(x)) / self.divide_by
    m = Model(s["CI"], s["CO"], s["KS"], 2.0)
    load(m.conv.weight, i["w"]); load(m.conv.bias, i["cb"])
    return {"y": m(i["x"])}


def t020(i, s):  # level2/4_Conv2d_Mish_Mish.py
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size):
            super().__init__()
            self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

        def forward(self, x):
            return F.mish(F.mish(self.conv(x)))
    m = Model(s["CI"], s["CO"], s["KS"])
    load(m.conv.weight, i["w"]); load(m.conv.bias, i["cb"])
    return {"y": m(i["x"])}


def t022(i, s):  # level2/65_Conv2d_AvgPool_Sigmoid_Sum.py
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, pool_kernel_size):
            super().__init__()
            self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
            self.avg_pool = nn.AvgPool2d(pool_kernel_size)

        def forward(self, x):
            x = torch.sigmoid(self.avg_pool(self.conv(x)))
            return torch.sum(x, dim=[1, 2, 3])
    m = Model(s["CI"], s["CO"], s["KS"], s["PK"])
    load(m.conv.weight, i["w"]); load(m.conv.bias, i["cb"])
    return {"y": m(i["x"])}


def t024(i, s):  # level2/69_Conv2d_HardSwish_ReLU.py
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size):
            super().__init__()
            self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

        def forward(self, x):
            return torch.relu(F.hardswish(self.conv(x)))
    m = Model(s["CI"], s["CO"], s["KS"])
    load(m.conv.weight, i["w"]); load(m.conv.bias, i["cb"])
    return {"y": m(i["x"])}


def t027(i, s):  # level2/32_Conv2d_Scaling_Min.py
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, scale_factor):
            super().__init__()
            self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
            self.scale_factor = scale_factor

        def forward(self, x):
            x = self.conv(x) * self.scale_factor
            return torch.min(x, dim=1, keepdim=True)[0]
    m = Model(s["CI"], s["CO"], s["KS"], 2.0)
    load(m.conv.weight, i["w"]); load(m.conv.bias, i["cb"])
    return {"y": m(i["x"])}


# ------------------------------------------------------- ConvTranspose2d ---

def t010(i, s):  # level2/2_ConvTranspose2d_BiasAdd_Clamp_Scaling_Clamp_Divide.py
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, stride, padding,
                     output_padding, bias_shape, scaling_factor):
            super().__init__()
            self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size,
                                                     stride=stride, padding=padding,
                                                     output_padding=output_padding)
            self.bias = nn.Parameter(torch.randn(bias_shape))
            self.scaling_factor = scaling_factor

        def forward(self, x):
            x = self.conv_transpose(x) + self.bias
            x = torch.clamp(x, min=0.0, max=1.0) * self.scaling_factor
            return torch.clamp(x, min=0.0, max=1.0) / self.scaling_factor
    m = Model(s["CI"], s["CO"], s["KS"], s["S"], s["P"], s["OP"], (s["CO"], 1, 1), 2.0)
    load(m.conv_transpose.weight, i["w"]); load(m.conv_transpose.bias, i["cb"])
    load(m.bias, i["b"])
    return {"y": m(i["x"])}


def t025(i, s):  # level2/10_ConvTranspose2d_MaxPool_Hardtanh_Mean_Tanh.py
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, stride, padding,
                     maxpool_kernel_size, maxpool_stride, hardtanh_min, hardtanh_max):
            super().__init__()
            self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size,
                                                     stride=stride, padding=padding)
            self.maxpool = nn.MaxPool2d(kernel_size=maxpool_kernel_size, stride=maxpool_stride)
            self.hardtanh = nn.Hardtanh(min_val=hardtanh_min, max_val=hardtanh_max)

        def forward(self, x):
            x = self.hardtanh(self.maxpool(self.conv_transpose(x)))
            return torch.tanh(torch.mean(x, dim=(2, 3), keepdim=True))
    m = Model(s["CI"], s["CO"], s["KS"], s["S"], s["P"], 2, 2, -1, 1)
    load(m.conv_transpose.weight, i["w"]); load(m.conv_transpose.bias, i["b"])
    return {"y": m(i["x"])}


def t036(i, s):  # level2/19_ConvTranspose2d_GELU_GroupNorm.py
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, stride, groups, num_groups):
            super().__init__()
            self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size,
                                                     stride=stride)
            self.group_norm = nn.GroupNorm(num_groups=num_groups, num_channels=out_channels)

        def forward(self, x):
            return self.group_norm(F.gelu(self.conv_transpose(x)))
    m = Model(s["CI"], s["CO"], s["KS"], s["S"], s["G"], s["G"])
    load(m.conv_transpose.weight, i["w"]); load(m.conv_transpose.bias, i["cb"])
    load(m.group_norm.weight, i["gamma"]); load(m.group_norm.bias, i["beta"])
    return {"y": m(i["x"])}


def t042(i, s):  # level2/5_ConvTranspose2d_Subtract_Tanh.py
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, bias_shape, stride=2,
                     padding=1, output_padding=1):
            super().__init__()
            self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size,
                                                     stride=stride, padding=padding,
                                                     output_padding=output_padding)
            self.bias = nn.Parameter(torch.randn(bias_shape))

        def forward(self, x):
            return torch.tanh(self.conv_transpose(x) - self.bias)
    # KernelBench passes [in, out, kernel, bias_shape] and keeps the defaults
    # stride 2, padding 1, output padding 1; a check size that varies them
    # passes them by keyword
    m = Model(s["CI"], s["CO"], s["KS"], (s["CO"], 1, 1),
              stride=s["S"], padding=s["P"], output_padding=s["OP"])
    load(m.conv_transpose.weight, i["w"]); load(m.conv_transpose.bias, i["cb"])
    load(m.bias, i["b"])
    return {"y": m(i["x"])}


# ---------------------------------------------------------------- Conv3d ---

def t013(i, s):  # level2/7_Conv3d_ReLU_LeakyReLU_GELU_Sigmoid_BiasAdd.py
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
            super().__init__()
            self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
            self.bias = nn.Parameter(torch.randn(bias_shape))

        def forward(self, x):
            x = torch.relu(self.conv(x))
            x = F.leaky_relu(x, negative_slope=0.01)
            return torch.sigmoid(F.gelu(x)) + self.bias
    m = Model(s["CI"], s["CO"], s["KS"], (s["CO"], 1, 1, 1))
    load(m.conv.weight, i["w"]); load(m.conv.bias, i["cb"]); load(m.bias, i["b"])
    return {"y": m(i["x"])}


def t032(i, s):  # level2/6_Conv3d_Softmax_MaxPool_MaxPool.py
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, pool_kernel_size):
            super().__init__()
            self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
            self.pool1 = nn.MaxPool3d(pool_kernel_size)
            self.pool2 = nn.MaxPool3d(pool_kernel_size)

        def forward(self, x):
            return self.pool2(self.pool1(torch.softmax(self.conv(x), dim=1)))
    m = Model(s["CI"], s["CO"], s["KS"], 2)
    load(m.conv.weight, i["w"]); load(m.conv.bias, i["cb"])
    return {"y": m(i["x"])}


def t037(i, s):  # level2/90_Conv3d_LeakyReLU_Sum_Clamp_GELU.py
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, sum_tensor_shape):
            super().__init__()
            self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
            self.sum_tensor = nn.Parameter(torch.randn(sum_tensor_shape))

        def forward(self, x):
            x = F.leaky_relu(self.conv(x), negative_slope=0.2) + self.sum_tensor
            return F.gelu(torch.clamp(x, min=-1.0, max=1.0))
    m = Model(s["CI"], s["CO"], s["KS"], (s["CO"], 1, 1, 1))
    load(m.conv.weight, i["w"]); load(m.conv.bias, i["cb"]); load(m.sum_tensor, i["st"])
    return {"y": m(i["x"])}


def t038(i, s):  # level2/24_Conv3d_Min_Softmax.py
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, dim):
            super().__init__()
            self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
            self.dim = dim

        def forward(self, x):
            x = torch.min(self.conv(x), dim=self.dim)[0]
            return torch.softmax(x, dim=1)
    m = Model(s["CI"], s["CO"], s["KS"], 2)
    load(m.conv.weight, i["w"]); load(m.conv.bias, i["cb"])
    return {"y": m(i["x"])}


# ------------------------------------------------------- ConvTranspose3d ---

def t033(i, s):  # level2/61_ConvTranspose3d_ReLU_GroupNorm.py
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, groups, bias=False):
            super().__init__()
            self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size,
                                                     bias=bias)
            self.relu = nn.ReLU()
            self.group_norm = nn.GroupNorm(num_groups=groups, num_channels=out_channels)

        def forward(self, x):
            return self.group_norm(self.relu(self.conv_transpose(x)))
    m = Model(s["CI"], s["CO"], s["KS"], s["G"], False)
    load(m.conv_transpose.weight, i["w"])
    load(m.group_norm.weight, i["gamma"]); load(m.group_norm.bias, i["beta"])
    return {"y": m(i["x"])}


def t034(i, s):  # level2/15_ConvTranspose3d_BatchNorm_Subtract.py
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, stride, padding, bias=True):
            super().__init__()
            self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size,
                                                     stride=stride, padding=padding, bias=bias)
            self.batch_norm = nn.BatchNorm3d(out_channels)

        def forward(self, x):
            x = self.batch_norm(self.conv_transpose(x))
            return x - torch.mean(x, dim=(2, 3, 4), keepdim=True)
    m = Model(s["CI"], s["CO"], s["KS"], s["S"], s["P"])  # training mode: batch statistics
    load(m.conv_transpose.weight, i["w"]); load(m.conv_transpose.bias, i["cb"])
    load(m.batch_norm.weight, i["gamma"]); load(m.batch_norm.bias, i["beta"])
    return {"y": m(i["x"])}


def t035(i, s):  # level2/26_ConvTranspose3d_Add_HardSwish.py
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, stride, padding,
                     output_padding, bias_shape):
            super().__init__()
            self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size,
                                                     stride=stride, padding=padding,
                                                     output_padding=output_padding)
            self.bias = nn.Parameter(torch.randn(bias_shape))  # unused by forward, as in KB

        def forward(self, x, add_input):
            x = self.conv_transpose(x) + add_input
            return x * F.hardswish(x)
    m = Model(s["CI"], s["CO"], s["KS"], s["S"], s["P"], s["OP"], (s["CO"], 1, 1, 1, 1))
    load(m.conv_transpose.weight, i["w"]); load(m.conv_transpose.bias, i["cb"])
    return {"y": m(i["x"], i["a"])}


# ------------------------------------------------------------------ GEMM ---

def t002(i, s):  # level2/56_Matmul_Sigmoid_Sum.py
    class Model(nn.Module):
        def __init__(self, input_size, hidden_size):
            super().__init__()
            self.linear = nn.Linear(input_size, hidden_size)

        def forward(self, x):
            return torch.sum(torch.sigmoid(self.linear(x)), dim=1, keepdim=True)
    m = Model(s["K"], s["N"])
    load(m.linear.weight, i["w"]); load(m.linear.bias, i["b"])
    return {"y": m(i["x"])}


def t003(i, s):  # level2/40_Matmul_Scaling_ResidualAdd.py
    class Model(nn.Module):
        def __init__(self, in_features, out_features, scaling_factor):
            super().__init__()
            self.matmul = nn.Linear(in_features, out_features)
            self.scaling_factor = scaling_factor

        def forward(self, x):
            x = self.matmul(x)
            original_x = x.clone().detach()
            return x * self.scaling_factor + original_x
    m = Model(s["K"], s["N"], 0.5)
    load(m.matmul.weight, i["w"]); load(m.matmul.bias, i["b"])
    return {"y": m(i["x"])}


def t007(i, s):  # level2/66_Matmul_Dropout_Softmax.py
    class Model(nn.Module):
        def __init__(self, in_features, out_features, dropout_p):
            super().__init__()
            self.matmul = nn.Linear(in_features, out_features)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, x):
            return torch.softmax(self.dropout(self.matmul(x)), dim=1)
    m = Model(s["K"], s["N"], 0.2)
    m.eval()  # the one stochastic module: dropout as the identity (see the module doc)
    load(m.matmul.weight, i["w"]); load(m.matmul.bias, i["b"])
    return {"y": m(i["x"])}


def t011(i, s):  # level2/59_Matmul_Swish_Scaling.py
    class Model(nn.Module):
        def __init__(self, in_features, out_features, scaling_factor):
            super().__init__()
            self.matmul = nn.Linear(in_features, out_features)
            self.scaling_factor = scaling_factor

        def forward(self, x):
            x = self.matmul(x)
            return x * torch.sigmoid(x) * self.scaling_factor
    m = Model(s["K"], s["N"], 2.0)
    load(m.matmul.weight, i["w"]); load(m.matmul.bias, i["b"])
    return {"y": m(i["x"])}


def t014(i, s):  # level2/53_Gemm_Scaling_Hardtanh_GELU.py
    class Model(nn.Module):
        def __init__(self, in_features, out_features, scaling_factor, hardtanh_min,
                     hardtanh_max):
            super().__init__()
            self.gemm = nn.Linear(in_features, out_features)
            self.scaling_factor = scaling_factor
            self.hardtanh = nn.Hardtanh(min_val=hardtanh_min, max_val=hardtanh_max)
            self.gelu = nn.GELU()

        def forward(self, x):
            return self.gelu(self.hardtanh(self.gemm(x) * self.scaling_factor))
    m = Model(s["K"], s["N"], 0.5, -2, 2)
    load(m.gemm.weight, i["w"]); load(m.gemm.bias, i["b"])
    return {"y": m(i["x"])}


def t015(i, s):  # level2/14_Gemm_Divide_Sum_Scaling.py
    class Model(nn.Module):
        def __init__(self, input_size, hidden_size, scaling_factor):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
            self.scaling_factor = scaling_factor

        def forward(self, x):
            x = torch.matmul(x, self.weight.T) / 2
            return torch.sum(x, dim=1, keepdim=True) * self.scaling_factor
    m = Model(s["K"], s["N"], 1.5)
    load(m.weight, i["w"])
    return {"y": m(i["x"])}


def t017(i, s):  # level2/68_Matmul_Min_Subtract.py
    class Model(nn.Module):
        def __init__(self, in_features, out_features, constant):
            super().__init__()
            self.linear = nn.Linear(in_features, out_features)
            self.constant = nn.Parameter(torch.tensor(constant))

        def forward(self, x):
            return torch.min(self.linear(x), self.constant) - self.constant
    m = Model(s["K"], s["N"], 2.0)
    load(m.linear.weight, i["w"]); load(m.linear.bias, i["b"])
    return {"y": m(i["x"])}


def t023(i, s):  # level2/88_Gemm_GroupNorm_Swish_Multiply_Swish.py
    class Model(nn.Module):
        def __init__(self, in_features, out_features, num_groups, multiply_weight_shape):
            super().__init__()
            self.gemm = nn.Linear(in_features, out_features)
            self.group_norm = nn.GroupNorm(num_groups, out_features)
            self.multiply_weight = nn.Parameter(torch.randn(multiply_weight_shape))

        def forward(self, x):
            x = self.group_norm(self.gemm(x))
            x = x * torch.sigmoid(x) * self.multiply_weight
            return x * torch.sigmoid(x)
    m = Model(s["K"], s["N"], s["G"], (s["N"],))
    load(m.gemm.weight, i["w"]); load(m.gemm.bias, i["b"])
    load(m.group_norm.weight, i["gamma"]); load(m.group_norm.bias, i["beta"])
    load(m.multiply_weight, i["mw"])
    return {"y": m(i["x"])}


def t026(i, s):  # level2/28_BMM_InstanceNorm_Sum_ResidualAdd_Multiply.py
    class Model(nn.Module):
        def __init__(self, in_features, out_features, eps=1e-5, momentum=0.1):
            super().__init__()
            self.bmm = nn.Linear(in_features, out_features)
            self.instance_norm = nn.InstanceNorm2d(out_features, eps=eps, momentum=momentum)

        def forward(self, x, y):
            x = self.bmm(x)
            # (M, 1, 1, N): one "channel" per row, normalised over its N features
            x = self.instance_norm(x.unsqueeze(1).unsqueeze(1)).squeeze(1).squeeze(1)
            return (x + y) * y
    m = Model(s["K"], s["N"])
    load(m.bmm.weight, i["w"]); load(m.bmm.bias, i["b"])
    import warnings
    with warnings.catch_warnings():  # InstanceNorm2d warns that C=1 != out_features
        warnings.simplefilter("ignore")
        return {"y": m(i["x"], i["r"])}


def t028(i, s):  # level2/70_Gemm_Sigmoid_Scaling_ResidualAdd.py
    class Model(nn.Module):
        def __init__(self, input_size, hidden_size, scaling_factor):
            super().__init__()
            self.gemm = nn.Linear(input_size, hidden_size)
            self.scaling_factor = scaling_factor

        def forward(self, x):
            x = self.gemm(x)
            return torch.sigmoid(x) * self.scaling_factor + x
    m = Model(s["K"], s["N"], 2.0)
    load(m.gemm.weight, i["w"]); load(m.gemm.bias, i["b"])
    return {"y": m(i["x"])}


def t039(i, s):  # level2/41_Gemm_BatchNorm_GELU_ReLU.py
    class Model(nn.Module):
        def __init__(self, in_features, out_features):
            super().__init__()
            self.gemm = nn.Linear(in_features, out_features)
            self.batch_norm = nn.BatchNorm1d(out_features)

        def forward(self, x):
            return torch.relu(F.gelu(self.batch_norm(self.gemm(x))))
    m = Model(s["K"], s["N"])  # training mode: batch statistics
    load(m.gemm.weight, i["w"]); load(m.gemm.bias, i["b"])
    load(m.batch_norm.weight, i["gamma"]); load(m.batch_norm.bias, i["beta"])
    return {"y": m(i["x"])}


def t040(i, s):  # level2/30_Gemm_GroupNorm_Hardtanh.py
    class Model(nn.Module):
        def __init__(self, in_features, out_features, num_groups, hardtanh_min, hardtanh_max):
            super().__init__()
            self.gemm = nn.Linear(in_features, out_features)
            self.group_norm = nn.GroupNorm(num_groups, out_features)
            self.hardtanh = nn.Hardtanh(min_val=hardtanh_min, max_val=hardtanh_max)

        def forward(self, x):
            return self.hardtanh(self.group_norm(self.gemm(x)))
    m = Model(s["K"], s["N"], s["G"], -2.0, 2.0)
    load(m.gemm.weight, i["w"]); load(m.gemm.bias, i["b"])
    load(m.group_norm.weight, i["gamma"]); load(m.group_norm.bias, i["beta"])
    return {"y": m(i["x"])}


def t041(i, s):  # level2/55_Matmul_MaxPool_Sum_Scale.py
    class Model(nn.Module):
        def __init__(self, in_features, out_features, kernel_size, scale_factor):
            super().__init__()
            self.matmul = nn.Linear(in_features, out_features)
            self.max_pool = nn.MaxPool1d(kernel_size)
            self.scale_factor = scale_factor

        def forward(self, x):
            x = self.max_pool(self.matmul(x).unsqueeze(1)).squeeze(1)
            return torch.sum(x, dim=1) * self.scale_factor
    m = Model(s["K"], s["N"], s["PK"], 0.5)
    load(m.matmul.weight, i["w"]); load(m.matmul.bias, i["b"])
    return {"y": m(i["x"])}


TORCH = {
    "fused_conv2d_relu_biasadd": t001,
    "fused_gemm_sigmoid_sum": t002,
    "fused_gemm_scale_residual": t003,
    "fused_conv2d_gelu_gap": t006,
    "fused_matmul_bias_softmax": t007,
    "fused_convtranspose2d_bias_clamp": t010,
    "fused_gemm_swish_scale": t011,
    "fused_conv2d_groupnorm_scale_maxpool": t012,
    "fused_conv3d_leakyrelu_gelu_biasadd": t013,
    "fused_gemm_scale_hardtanh_gelu": t014,
    "fused_gemm_divide_sum_scale": t015,
    "fused_linear_min_subtract": t017,
    "fused_conv2d_sub_tanh_sub_avgpool": t018,
    "fused_conv2d_instancenorm_divide": t019,
    "fused_conv2d_mish_mish": t020,
    "fused_conv2d_avgpool_sigmoid_chansum": t022,
    "fused_gemm_groupnorm_swish_mul_swish": t023,
    "fused_conv2d_hardswish_relu": t024,
    "fused_convtranspose2d_maxpool_hardtanh": t025,
    "fused_gemm_instancenorm_residual_mul": t026,
    "fused_conv2d_scale_min": t027,
    "fused_gemm_sigmoid_scale_residual": t028,
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
