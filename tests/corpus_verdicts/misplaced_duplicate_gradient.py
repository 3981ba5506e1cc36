"""Broken: Y = a * X + b with per-channel a and b; backward returns the gradient of b in the
place of a as well (a copy-paste bug), and b's own gradient is right.
Check: gradients_are_numerically_correct
Says: the gradient returned for a is the gradient of b
Never says: each other's place
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class DuplicatedBiasGradient:
    learnables = ("a", "b")
    example_layout = "5,5,3,4:SSCB"

    def initialize(self, layout):
        shape = [1] * layout.ndim
        shape[layout.find("C")] = layout.size[layout.find("C")]
        if getattr(self, "a", None) is None:
            self.a = np.random.rand(*shape)
        if getattr(self, "b", None) is None:
            self.b = np.random.rand(*shape)

    def predict(self, X):
        return self.a * X + self.b

    def backward(self, X, Y, dLdY, memory):
        axes = (0, 1, 3)
        dLdb = dLdY.sum(axis=axes, keepdims=True)
        return self.a * dLdY, dLdb.copy(), dLdb  # BUG: b's gradient in a's place
