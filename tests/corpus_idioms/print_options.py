"""A notebook's helper module that sets how arrays print."""

import sys

import numpy as np

np.set_printoptions(precision=2, suppress=True, threshold=sys.maxsize, linewidth=40, floatmode="fixed")
np.set_printoptions(legacy="1.13")


class Printed:
    """Passed"""

    learnables = ("w",)
    example_layout = "6,4:CB"

    def __init__(self):
        self.w = np.linspace(0.5, 1.5, 6).reshape(6, 1)

    def predict(self, X):
        return np.log1p(np.exp(self.w * X))  # softplus(w x)

    def backward(self, X, Y, dLdY, memory):
        s = 1.0 / (1.0 + np.exp(-self.w * X))
        return dLdY * s * self.w, (dLdY * s * X).sum(axis=1, keepdims=True)


class PrintedWrong(Printed):
    """Failed: the gradient of X is off by a constant factor 2"""

    def backward(self, X, Y, dLdY, memory):
        dX, dW = super().backward(X, Y, dLdY, memory)
        return 2 * dX, dW
