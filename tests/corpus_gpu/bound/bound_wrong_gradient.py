"""A layer bound to CuPy at import whose learnable gradient misses the factor of the tanh's
derivative. With --device gpu: Must fail: gradients_are_numerically_correct (argument w)"""

try:
    import cupy as xp
except ImportError:
    import numpy as xp


class BoundWrongGradient:
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
        return dZ * self.w, xp.sum(dLdY * X, axis=(0, 2), keepdims=True)
