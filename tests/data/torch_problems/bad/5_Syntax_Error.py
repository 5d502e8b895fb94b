import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x)
        return x


n = 8


def get_inputs():
    return [torch.rand(n)]


def get_init_inputs():
    return []
