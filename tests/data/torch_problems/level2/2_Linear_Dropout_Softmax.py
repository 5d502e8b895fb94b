import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear, dropout with p = 0.25, then softmax over the features."""

    def __init__(self, in_features, out_features, dropout_p):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, x):
        return torch.softmax(self.dropout(self.fc(x)), dim=1)


batch_size = 32
in_features = 96
out_features = 80
dropout_p = 0.25


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, dropout_p]
