"""Correct: inference-style normalization with a learnable per-channel variance v whose values span
8 orders of magnitude (1e-6 .. 1e2, as feature variances of unnormalized data do):
Y = (X - m) / sqrt(v + eps) * g, all in float64. Measuring its precision moved every element of v
by 1e-8 of v's RMS, which carried the smallest variances below zero: NaN outputs, read as a layer
that rounds to float32.
Never says: float32
"""

import numpy as np

EPS = 1e-8


class WideRangeVariance:
    learnables = ("m", "v", "g")
    example_layout = "8,8,16,32:SSCB"

    def __init__(self, low=-6.0, high=2.0):
        self.low, self.high = low, high
        self.m = self.v = self.g = None

    def initialize(self, layout):
        c = layout.find("C")
        self.axes = tuple(i for i in range(layout.ndim) if i != c)
        shape = [1] * layout.ndim
        shape[c] = layout.size[c]
        if self.m is None:
            self.m = 0.1 * np.random.randn(*shape)
        if self.v is None:
            self.v = np.logspace(self.low, self.high, layout.size[c]).reshape(shape)
        if self.g is None:
            self.g = 1 + 0.1 * np.random.randn(*shape)

    def predict(self, X):
        return (X - self.m) / np.sqrt(self.v + EPS) * self.g

    def backward(self, X, Y, dLdY, memory):
        r = 1 / np.sqrt(self.v + EPS)
        xc = X - self.m
        dX = dLdY * self.g * r
        dm = -np.sum(dX, axis=self.axes, keepdims=True)
        dv = np.sum(dLdY * self.g * xc * (-0.5) * r**3, axis=self.axes, keepdims=True)
        dg = np.sum(dLdY * xc * r, axis=self.axes, keepdims=True)
        return dX, dm, dv, dg
