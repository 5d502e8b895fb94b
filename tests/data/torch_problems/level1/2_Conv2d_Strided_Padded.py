import torch
import torch.nn as nn


class Model(nn.Module):
    """A 2D convolution with stride and zero padding (the output size is an expression)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride,
                              padding=padding)

    def forward(self, x):
        return self.conv(x)


batch_size = 4
in_channels = 6
out_channels = 8
height = width = 40
kernel_size = 3
stride = 2
padding = 1


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
