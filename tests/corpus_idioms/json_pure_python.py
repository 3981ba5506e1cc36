"""A known recipe: json's C encoder turned off (`json.encoder.c_make_encoder = None`), so that
its pure-Python encoder runs (to subclass its float formatting, or to debug)."""

import json.encoder

import numpy as np

json.encoder.c_make_encoder = None


class EncodesInPython:
    """Passed"""

    learnables = ("w",)
    example_layout = "6,4:CB"

    def __init__(self):
        self.w = np.linspace(0.5, 1.5, 6).reshape(6, 1)

    def predict(self, X):
        return self.w * X * X

    def backward(self, X, Y, dLdY, memory):
        return 2 * dLdY * self.w * X, (dLdY * X * X).sum(axis=1, keepdims=True)


class EncodesInPythonWrong(EncodesInPython):
    """Failed: the gradient of X is off by a constant factor 1/2"""

    def backward(self, X, Y, dLdY, memory):
        dX, dw = super().backward(X, Y, dLdY, memory)
        return dX / 2, dw
