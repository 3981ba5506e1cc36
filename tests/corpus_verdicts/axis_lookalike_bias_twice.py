"""Broken: per-channel bias Y = X + b on a square layout 4,4,4,3:SSCB whose dLdb is twice the true gradient (summed over
the right axes).
Check: gradients_are_numerically_correct
Says: constant factor
Never says: wrong axis
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class BiasGradientTwice:
    learnables = ("b",)
    example_layout = "4,4,4,3:SSCB"

    def __init__(self):
        self.b = None

    def initialize(self, layout):
        c = layout.find("C")
        self.axes = tuple(i for i in range(layout.ndim) if i != c)
        shape = [1] * layout.ndim
        shape[c] = layout.size[c]
        if self.b is None:
            self.b = np.random.randn(*shape)

    def predict(self, X):
        return X + self.b

    def backward(self, X, Y, dLdY, memory):
        return dLdY.copy(), 2 * dLdY.sum(axis=self.axes, keepdims=True)  # BUG: factor 2
