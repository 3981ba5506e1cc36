"""Correct: a scaled tanh whose GPU branch computes the same thing another way (one fused
expression and a reduction in another order). Every check must pass: no false alarm for code
that differs on the GPU only in how it computes."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class GpuBranchTanh:
    learnables = ("w",)
    example_layout = "5,4,6:SCB"

    def initialize(self, layout):
        if self.w is None:
            self.w = np.random.rand(1, layout.size[1], 1) + 0.5

    def __init__(self):
        self.w = None

    def predict(self, X):
        xp = get_array_module(X)
        if xp is not np:
            return xp.tanh(X * self.w)
        return np.tanh(self.w * X)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dZ = dLdY * (1 - Y * Y)
        if xp is not np:
            dLdw = xp.einsum("scb,scb->c", dZ, X).reshape(self.w.shape)
        else:
            dLdw = (dZ * X).sum(axis=(0, 2), keepdims=True)
        return dZ * self.w, dLdw
