r"""Broken: a residual block Y = X + w tanh(X) + b with a weight and a bias per channel, whose backward returns the
gradient through w tanh(X) alone: the skip connection's, dL/dY itself, is left out.
Check: gradients_are_numerically_correct
Says: the gradient of X leaves out a term equal to dL/dY: the gradient of an identity path
Says: likely cause: dL/dY left out \(an identity path\)
Never says: constant factor
"""

import numpy as np


class TanhResidual:
    learnables = ("w", "b")
    example_layout = "4,4,6,3:SSCB"

    def __init__(self):
        self.w = None
        self.b = None

    def initialize(self, layout):
        shape = [1] * layout.ndim
        shape[layout.find("C")] = layout.size[layout.find("C")]
        rng = np.random.default_rng(5)
        if self.w is None:
            self.w = rng.standard_normal(shape)
        if self.b is None:
            self.b = rng.standard_normal(shape)

    def predict(self, X):
        return X + self.w * np.tanh(X) + self.b

    def backward(self, X, Y, dLdY, memory):
        t = np.tanh(X)
        axes = (0, 1, 3)
        dLdw = np.sum(dLdY * t, axis=axes, keepdims=True)
        dLdb = np.sum(dLdY, axis=axes, keepdims=True)
        return dLdY * self.w * (1 - t * t), dLdw, dLdb  # BUG: dLdY + dLdY * self.w * (1 - t * t)
