"""Failed: backward raised Hostile"""

import numpy as np


class Hostile(Exception):
    def __str__(self):
        raise KeyboardInterrupt

    def __repr__(self):
        raise SystemExit(1)


class ExceptionReprAndArgsRaise:
    example_layout = "3,2:CB"

    def predict(self, X):
        return np.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        raise Hostile()
