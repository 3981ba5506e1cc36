"""Sizes a library tunes at import: the regular expression cache (`re._MAXCACHE`) and the
default buffer of the files it opens (`io.DEFAULT_BUFFER_SIZE`)."""

import io
import re

import numpy as np

re._MAXCACHE = 1024
io.DEFAULT_BUFFER_SIZE = 1 << 16


class TunesSizes:
    """Passed"""

    learnables = ("w",)
    example_layout = "6,4:CB"

    def __init__(self):
        self.w = np.linspace(0.5, 1.5, 6).reshape(6, 1)

    def predict(self, X):
        return np.sin(self.w * X)

    def backward(self, X, Y, dLdY, memory):
        c = np.cos(self.w * X)
        return dLdY * c * self.w, (dLdY * c * X).sum(axis=1, keepdims=True)


class TunesSizesWrong(TunesSizes):
    """Failed: the gradient of X has the wrong sign"""

    def backward(self, X, Y, dLdY, memory):
        dX, dw = super().backward(X, Y, dLdY, memory)
        return -dX, dw
