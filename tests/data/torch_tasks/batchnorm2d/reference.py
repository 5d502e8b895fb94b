# A KernelBench-form problem written for kevo's tests: BatchNorm2d as
# KernelBench's harness runs it (training mode: the batch's statistics).
import torch
import torch.nn as nn


class Model(nn.Module):
    """Batch normalisation over (N, H, W) per channel."""

    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x):
        return self.bn(x)


batch_size = 8
channels = 16
height = 32
width = 32


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
