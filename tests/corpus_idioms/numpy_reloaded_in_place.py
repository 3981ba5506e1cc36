"""A module that reloads NumPy in place (importlib.reload), as some plugin systems do."""

import importlib
import warnings

import numpy as np

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # NumPy warns that it was imported a second time
    np = importlib.reload(np)


class ReloadedInPlace:
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


class ReloadedInPlaceWrong(ReloadedInPlace):
    """Failed: the gradient of w is off by a constant factor 2"""

    def backward(self, X, Y, dLdY, memory):
        dX, dW = super().backward(X, Y, dLdY, memory)
        return dX, 2 * dW
