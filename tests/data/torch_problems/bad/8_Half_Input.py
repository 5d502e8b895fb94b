import torch
import torch.nn as nn


class Model(nn.Module):
    """Doubles a float16 tensor."""

    def forward(self, x):
        return x * 2


n = 8


def get_inputs():
    return [torch.rand(n, dtype=torch.float16)]


def get_init_inputs():
    return []
