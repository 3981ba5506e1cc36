"""Weighted addition layer whose backward returns the input gradients in each other's place.

BUG: the gradient of each input is scaled by the weight of the other input. For two
inputs (the default) ``dLdX1 = w[1]*dLdZ`` and ``dLdX2 = w[0]*dLdZ``: the correct
gradients, returned in the wrong order. The gradient of `weights` is right, and every
gradient has the right shape and dtype, so only the gradient check can catch it; its
diagnosis should say that the gradients of X1 and X2 belong to each other.
Must fail: gradients_are_numerically_correct (arguments X1 and X2).
The correct layer is ../weighted_addition.py.
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class WeightedAdditionSwapped:
    """Weighted addition with the input gradients returned in reverse order."""

    learnables = ("weights",)
    example_layout = ["8,8,4,2:SSCB", "8,8,4,2:SSCB"]

    def __init__(self, num_inputs=2, name="weighted_addition"):
        if isinstance(num_inputs, bool) or not isinstance(num_inputs, int) or num_inputs < 1:
            raise ValueError(f"num_inputs must be a positive integer, got {num_inputs!r}")
        self.name = name
        self.num_inputs = num_inputs
        self.description = f"Weighted addition of {num_inputs} inputs"
        self.weights = None

    def initialize(self, *layouts):
        sizes = {tuple(layout.size) for layout in layouts}
        if len(sizes) > 1:
            raise ValueError(f"the inputs of {self.name!r} must have the same size, got {sorted(sizes)}")
        if self.weights is None:
            self.weights = np.random.rand(self.num_inputs)

    def predict(self, *X):
        W = self.weights
        Z = X[0] * W[0]
        for i in range(1, self.num_inputs):
            Z = Z + X[i] * W[i]
        return Z

    def backward(self, *args):
        n = self.num_inputs
        X = args[:n]
        dLdZ = args[n + 1]
        xp = get_array_module(dLdZ)
        W = self.weights
        # BUG: the weight of the last input scales the gradient of the first, and so on.
        dLdX = [W[n - 1 - i] * dLdZ for i in range(n)]
        dLdW = xp.stack([xp.sum(dLdZ * X[i]) for i in range(n)])
        return (*dLdX, dLdW)
