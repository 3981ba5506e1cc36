"""An experiment's module: seeds every generator, configures logging, deepens recursion."""

import logging
import random
import sys

import numpy as np

np.random.seed(1234)
random.seed(1234)
logging.basicConfig(level=logging.DEBUG, format="%(asctime)s %(message)s")
logging.captureWarnings(True)
sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))


class Seeded:
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


class SeededWrong(Seeded):
    """Failed: the gradient of w is off by a constant factor -2"""

    def backward(self, X, Y, dLdY, memory):
        dX, dW = super().backward(X, Y, dLdY, memory)
        return dX, -2 * dW
