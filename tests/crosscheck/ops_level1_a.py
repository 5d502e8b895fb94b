"""NumPy definitions of Level 1 tasks (first part). See crosscheck.py."""
import numpy as np


def relu(inp, sizes):
    return {"y": np.maximum(inp["x"].astype(np.float64), 0.0)}


CHECKS = {
    "relu": relu,
}
