"""Broken: Y = (a + b) * X with per-channel a and b, whose true gradients are equal; backward
returns dLda doubled and dLdb right. The gradient returned for a is not b's gradient (it is
twice it), so no misplaced-gradient claim may be made.
Check: gradients_are_numerically_correct
Says: the gradient of a is off by a constant factor 2
Never says: gradient of b|each other's place
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class SumOfScales:
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
        return (self.a + self.b) * X

    def backward(self, X, Y, dLdY, memory):
        axes = (0, 1, 3)
        dLdX = (self.a + self.b) * dLdY
        dLdb = (dLdY * X).sum(axis=axes, keepdims=True)
        return dLdX, 2 * dLdb, dLdb  # BUG: dLda doubled
