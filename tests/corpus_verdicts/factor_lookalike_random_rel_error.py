"""Broken: per-channel scale Y = w*X whose dLdX carries a fixed per-element relative error of about 1e-5 (it is
multiplied by 1 + 1e-5*noise, with one fixed noise pattern for every observation).
Check: gradients_are_numerically_correct
Never says: constant factor
Never says: zero everywhere
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ScaleNoisyGradient:
    learnables = ("w",)
    example_layout = "6,6,4,5:SSCB"

    def __init__(self):
        self.w = None

    def initialize(self, layout):
        c = layout.find("C")
        self.axes = tuple(i for i in range(layout.ndim) if i != c)
        shape = [1] * layout.ndim
        shape[c] = layout.size[c]
        if self.w is None:
            self.w = np.random.rand(*shape) + 0.5
        one_observation = list(layout.size)
        one_observation[layout.find("B")] = 1  # the same pattern for every observation
        self.noise = np.random.default_rng(0).standard_normal(one_observation)

    def predict(self, X):
        return self.w * X

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        noise = xp.asarray(self.noise, dtype=X.dtype)
        dLdX = self.w * dLdY * (1 + 1e-5 * noise)  # BUG: a relative error of ~1e-5 per element
        dLdw = xp.sum(dLdY * X, axis=self.axes, keepdims=True)
        return dLdX, dLdw
