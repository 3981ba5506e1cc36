"""A framework that reloads NumPy at import to switch on NEP 50's weak promotion."""

import os
import sys
import warnings

os.environ["NPY_PROMOTION_STATE"] = "weak"
del sys.modules["numpy"]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # NumPy warns that it was imported a second time
    import numpy as np


class Reloaded:
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


class ReloadedWrong(Reloaded):
    """Failed: the gradient of X has the wrong sign"""

    def backward(self, X, Y, dLdY, memory):
        dX, dW = super().backward(X, Y, dLdY, memory)
        return -dX, dW
