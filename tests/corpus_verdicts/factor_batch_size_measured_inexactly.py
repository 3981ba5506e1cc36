r"""Broken: a grouped 1x1 convolution (2 groups) whose dW is divided by the batch size, at the size users
check. The ratio the failing probes measure carries their error (1.7e-7 of 1/128 on seed 1), more than the
tolerance allows where dW is large: the factor its name gives, 1/128 exactly, is what is proven, where
the measured ratio failed the proof and the layer read "the gradient of W is wrong".
Check: gradients_are_numerically_correct
Says: off by a constant factor 1/128 \(1/batch size\)
Never says: the gradient of W is wrong
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class GroupedConv1x1MeanOverBatch:
    learnables = ("W",)
    example_layout = "24,24,20,128:SSCB"
    G = 2

    def initialize(self, layout):
        g = layout.size[2] // self.G
        if getattr(self, "W", None) is None:
            self.W = np.random.randn(self.G, g, g) / np.sqrt(g)

    def predict(self, X):
        xp = get_array_module(X)
        H, W, C, B = X.shape
        Xg = X.reshape(H, W, self.G, C // self.G, B)
        return xp.einsum("goi,hwgib->hwgob", self.W, Xg).reshape(H, W, C, B)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        H, W, C, B = X.shape
        Xg = X.reshape(H, W, self.G, C // self.G, B)
        dYg = dLdY.reshape(H, W, self.G, C // self.G, B)
        dX = xp.einsum("goi,hwgob->hwgib", self.W, dYg).reshape(H, W, C, B)
        dW = xp.einsum("hwgob,hwgib->goi", dYg, Xg) / B  # the bug: a mean over the observations
        return dX, dW
