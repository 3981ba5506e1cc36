"""PReLU-like layer with a learnable per-channel slope and NO backward: nothing it computes is
wrong, and its slope cannot be trained (NumPy computes no gradients). The backward checks are
skipped (no backward defined). Left incomplete: gradients_are_numerically_correct"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class PReLUNoBackward:
    learnables = ("alpha",)
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="prelu_nb"):
        self.name = name
        self.alpha = None

    def initialize(self, layout):
        c = layout.find("C")
        shape = [1] * layout.ndim
        if c is not None:
            shape[c] = layout.size[c]
        if self.alpha is None:
            self.alpha = np.random.rand(*shape)

    def predict(self, X):
        xp = get_array_module(X)
        return xp.maximum(X, 0) + self.alpha * xp.minimum(X, 0)
