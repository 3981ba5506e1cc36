"""A softplus whose backward takes another branch on the GPU and forgets the sigmoid there.
Must fail: backward_is_consistent_on_gpu"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class GpuBranchSoftplus:
    example_layout = "4,5,6:SCB"

    def predict(self, X):
        xp = get_array_module(X)
        return xp.logaddexp(X, 0)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        if xp is not np:
            return dLdY * X  # the GPU-only path: wrong
        return dLdY / (1 + xp.exp(-X))
