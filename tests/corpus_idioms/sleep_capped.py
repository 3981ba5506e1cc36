"""A test helper's recipe (a hunt): `time.sleep` capped at import, so that the retries and
back-offs of a library's code do not slow its tests down."""

import time

import numpy as np

_sleep = time.sleep
time.sleep = lambda seconds: _sleep(min(seconds, 0.01))


class SleepsBriefly:
    """Passed"""

    learnables = ("w",)
    example_layout = "6,4:CB"

    def __init__(self):
        self.w = np.linspace(0.5, 1.5, 6).reshape(6, 1)

    def predict(self, X):
        return self.w * X * X

    def backward(self, X, Y, dLdY, memory):
        return 2 * dLdY * self.w * X, (dLdY * X * X).sum(axis=1, keepdims=True)


class SleepsBrieflyWrong(SleepsBriefly):
    """Failed: the gradient of X is off by a constant factor 1/2"""

    def backward(self, X, Y, dLdY, memory):
        dX, dw = super().backward(X, Y, dLdY, memory)
        return dX / 2, dw
