"""Correct: a layer bound to one device, as small NumPy/CuPy frameworks write them: the array
module is chosen once, at import, so on a machine with CuPy it takes only CuPy arrays. With
--device gpu every check must pass (the gradient check too, on the device); on the host it
is one target error that says so."""

try:
    import cupy as xp
except ImportError:
    import numpy as xp


class BoundScaledTanh:
    learnables = ("w",)
    example_layout = "4,5,6:SCB"

    def __init__(self):
        self.w = None

    def initialize(self, layout):
        if self.w is None:
            self.w = xp.random.rand(1, layout.size[1], 1) + 0.5

    def predict(self, X):
        return xp.tanh(self.w * X)

    def backward(self, X, Y, dLdY, memory):
        dZ = dLdY * (1 - Y * Y)
        return dZ * self.w, xp.sum(dZ * X, axis=(0, 2), keepdims=True)
