"""Broken in type only: a per-channel affine layer whose dLdb is accumulated in a float32 buffer,
so with float64 inputs it comes back float32. Its values are right to float32's rounding: the
gradient check and the observation-sum check judge that array at its own precision and pass.
Must fail: backward_is_consistent_in_type"""

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:
    import numpy as np

    def get_array_module(*arrays):
        return np


class AffineFloat32Bias:
    learnables = ("w", "b")
    example_layout = "8,8,4,16:SSCB"

    def __init__(self):
        import numpy as np

        rng = np.random.default_rng(0)
        self.w = rng.standard_normal((1, 1, 4, 1)) + 1
        self.b = rng.standard_normal((1, 1, 4, 1))

    def predict(self, X):
        return self.w * X + self.b

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        db = xp.zeros((1, 1, 4, 1), dtype=xp.float32)  # BUG: float32 from float64 inputs
        db += dLdY.sum(axis=(0, 1, 3), keepdims=True).astype(xp.float32)
        return dLdY * self.w, (dLdY * X).sum(axis=(0, 1, 3), keepdims=True), db
