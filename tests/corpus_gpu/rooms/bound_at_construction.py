"""Correct, and bound to CuPy: its constructor makes a CuPy array wherever CuPy is installed.
Where no GPU is usable (the real CuPy without a driver) that is one line that says the layer
runs only on the GPU and why none is usable, naming the layer's line, never CuPy's."""

try:
    import cupy as xp
except ImportError:
    import numpy as xp


class BoundScale:
    learnables = ("w",)
    example_layout = "4,5,6:SCB"

    def __init__(self):
        self.w = xp.ones((1, 5, 1))

    def predict(self, X):
        return self.w * X

    def backward(self, X, Y, dLdY, memory):
        return dLdY * self.w, xp.sum(dLdY * X, axis=(0, 2), keepdims=True)
