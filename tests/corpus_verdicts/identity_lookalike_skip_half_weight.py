r"""Broken: a residual block Y = X + w tanh(X) whose backward returns half the skip connection's gradient, 0.5 dL/dY
where dL/dY is due: neither dL/dY left out nor a constant factor makes it right, and neither is said.
Check: gradients_are_numerically_correct
Says: the gradient of X is wrong
Never says: identity path
Never says: constant factor
"""

import numpy as np


class TanhResidual:
    learnables = ("w",)
    example_layout = "4,4,6,3:SSCB"

    def __init__(self):
        self.w = None

    def initialize(self, layout):
        shape = [1] * layout.ndim
        shape[layout.find("C")] = layout.size[layout.find("C")]
        if self.w is None:
            self.w = np.random.default_rng(5).standard_normal(shape)

    def predict(self, X):
        return X + self.w * np.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        t = np.tanh(X)
        dLdw = np.sum(dLdY * t, axis=(0, 1, 3), keepdims=True)
        return 0.5 * dLdY + dLdY * self.w * (1 - t * t), dLdw  # BUG: dLdY + ...
