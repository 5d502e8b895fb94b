"""PyTorch definitions of the Level 1 transposed convolutions (suites/c/level1
065..080, KernelBench level1 58, 61, 64, 65, 68-75, 77-79, 81). See
crosscheck.py --torch.

Each check builds a Model in KernelBench's form: the problem's __init__
signature (the same parameters, in the same order, with the same defaults)
wrapping the problem's nn.ConvTranspose{1,2,3}d, and calls it with the
problem's get_init_inputs() list, positionally as KernelBench's harness
does, with the task's channel counts standing in for KernelBench's. That
keeps level1/73's quirk: its list [in, out, kernel, stride, padding,
groups] puts groups = 4 into Model's output_padding parameter, which its
Model does not pass on, so the module is ungrouped (task 074 says so).
The task's weight is copied into the module (none of the problems has a
bias: bias=False is every problem's default), and forward runs in the
module's default training mode; crosscheck.py wraps the call in
torch.no_grad() and compares at atol = rtol = 1e-4.
"""
import torch
import torch.nn as nn

CONVT = {1: nn.ConvTranspose1d, 2: nn.ConvTranspose2d, 3: nn.ConvTranspose3d}


def model_plain(dims, cube=False, pass_output_padding=True):
    """level1/57, 58, 61, 64, 65, 68, 71, 72, 73: (in, out, kernel, stride,
    padding, output_padding, groups, bias); 61 and 73 take an int kernel and
    make it a cube; 73 does not pass output_padding to the conv."""
    class Model(nn.Module):
        def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                     padding=0, output_padding=0, groups: int = 1, bias: bool = False):
            super().__init__()
            k = (kernel_size,) * 3 if cube else kernel_size
            extra = {"output_padding": output_padding} if pass_output_padding else {}
            self.conv_transpose = CONVT[dims](in_channels, out_channels, k, stride=stride,
                                              padding=padding, groups=groups, bias=bias,
                                              **extra)

        def forward(self, x):
            return self.conv_transpose(x)
    return Model


def model_dilated_op(dims, cube=False):
    """level1/69, 70: (in, out, kernel, stride, padding, output_padding,
    dilation, groups, bias); 70 takes an int kernel and makes it a cube."""
    class Model(nn.Module):
        def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                     padding=0, output_padding=0, dilation=1, groups: int = 1,
                     bias: bool = False):
            super().__init__()
            k = (kernel_size,) * 3 if cube else kernel_size
            self.conv_transpose = CONVT[dims](in_channels, out_channels, k, stride=stride,
                                              padding=padding, output_padding=output_padding,
                                              dilation=dilation, groups=groups, bias=bias)

        def forward(self, x):
            return self.conv_transpose(x)
    return Model


def model_dilated(dims, cube=False):
    """level1/74, 77, 79, 81: (in, out, kernel, stride, padding, dilation,
    bias); 77 takes an int kernel and makes it a cube."""
    class Model(nn.Module):
        def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                     padding=0, dilation=1, bias: bool = False):
            super().__init__()
            k = (kernel_size,) * 3 if cube else kernel_size
            self.conv_transpose = CONVT[dims](in_channels, out_channels, k, stride=stride,
                                              padding=padding, dilation=dilation, bias=bias)

        def forward(self, x):
            return self.conv_transpose(x)
    return Model


def model_dilated_grouped(dims):
    """level1/75: (in, out, kernel, stride, padding, dilation, groups, bias)."""
    class Model(nn.Module):
        def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=(1, 1),
                     padding=(0, 0), dilation=(1, 1), groups: int = 1, bias: bool = False):
            super().__init__()
            self.conv_transpose = CONVT[dims](in_channels, out_channels, kernel_size,
                                              stride=stride, padding=padding,
                                              dilation=dilation, groups=groups, bias=bias)

        def forward(self, x):
            return self.conv_transpose(x)
    return Model


def model_padded(dims):
    """level1/78: (in, out, kernel, stride, padding, bias)."""
    class Model(nn.Module):
        def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=(1, 1),
                     padding=(0, 0), bias: bool = False):
            super().__init__()
            self.conv_transpose = CONVT[dims](in_channels, out_channels, kernel_size,
                                              stride=stride, padding=padding, bias=bias)

        def forward(self, x):
            return self.conv_transpose(x)
    return Model


def check(model, init_tail):
    """A TORCH entry: Model(C, OC, *init_tail) (KernelBench's get_init_inputs()
    after the two channel counts), weight from the task, forward(x)."""
    def fn(inp, sizes):
        m = model(sizes["C"], sizes["OC"], *init_tail)
        conv = m.conv_transpose
        if tuple(conv.weight.shape) != tuple(inp["w"].shape):
            raise ValueError(f"module weight {tuple(conv.weight.shape)}, "
                             f"task weight {tuple(inp['w'].shape)}")
        conv.weight.copy_(inp["w"])
        return {"y": m(inp["x"])}
    return fn


TORCH = {
    # level1/58: [in, out, (3, 5, 7)]
    "conv_transpose3d_asym_input_asym_kernel": check(model_plain(3), [(3, 5, 7)]),
    # level1/61: [in, out, 3]
    "conv_transpose3d": check(model_plain(3, cube=True), [3]),
    # level1/64: [in, out, 3]
    "conv_transpose1d": check(model_plain(1), [3]),
    # level1/65: [in, out, (3, 7)]
    "conv_transpose2d_asym_kernel": check(model_plain(2), [(3, 7)]),
    # level1/68: [in, out, (kernel_depth, kernel_width, kernel_height)] = (3, 5, 5)
    "conv_transpose3d_asym_kernel": check(model_plain(3), [(3, 5, 5)]),
    # level1/69: [in, out, (3, 5)]
    "conv_transpose2d_asym_input_asym_kernel": check(model_dilated_op(2), [(3, 5)]),
    # level1/70: [in, out, 3]
    "conv_transpose3d_asym_input": check(model_dilated_op(3, cube=True), [3]),
    # level1/71: [in, out, 3]
    "conv_transpose2d_asym_input": check(model_plain(2), [3]),
    # level1/72: [in, out, (3, 5, 7), stride, padding, output_padding, groups]
    "conv_transpose3d_asym_strided_padded_grouped":
        check(model_plain(3), [(3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), 4]),
    # level1/73: [in, out, 3, stride, padding, groups] into (.., output_padding, groups)
    "conv_transpose3d_strided_padded":
        check(model_plain(3, cube=True, pass_output_padding=False), [3, 2, 1, 4]),
    # level1/74: [in, out, 5, stride, padding, dilation]
    "conv_transpose1d_dilated": check(model_dilated(1), [5, 1, 0, 3]),
    # level1/75: [in, out, (3, 5), stride, padding, dilation, groups]
    "conv_transpose2d_strided_grouped_padded_dilated":
        check(model_dilated_grouped(2), [(3, 5), (2, 3), (1, 2), (2, 1), 4]),
    # level1/77: [in, out, 3, stride, padding, dilation]
    "conv_transpose3d_padded_dilated_strided": check(model_dilated(3, cube=True), [3, 2, 1, 2]),
    # level1/78: [in, out, (3, 7), stride, padding]
    "conv_transpose2d_asym_padded": check(model_padded(2), [(3, 7), (1, 1), (1, 3)]),
    # level1/79: [in, out, 3, stride, padding, dilation]
    "conv_transpose1d_padded_strided_dilated": check(model_dilated(1), [3, 2, 1, 2]),
    # level1/81: [in, out, 3, stride, padding, dilation]
    "conv_transpose2d_dilated_padded_strided": check(model_dilated(2), [3, 5, 1, 2]),
}
