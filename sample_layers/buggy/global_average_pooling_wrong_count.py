"""Global average pooling whose backward divides by the wrong number of positions.

BUG: `backward` divides dLdZ by the size H of the first spatial axis only, instead of by
the number of spatial positions H*W, so dLdX is too large by a factor W (5 for the
example layout 6,5,4,3:SSCB). Its shape and dtype are right, so only the gradient check
can catch it; its diagnosis should say that dLdX is off by a constant factor.
Must fail: gradients_are_numerically_correct (argument X).
The correct layer is ../global_average_pooling.py.
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class GlobalAveragePoolingWrongCount:
    """Global average pooling with dLdX off by the factor W."""

    example_layout = "6,5,4,3:SSCB"

    def __init__(self, name="global_average_pooling"):
        self.name = name
        self.description = "Global average pooling"
        self.spatial_axes = None

    def initialize(self, layout):
        self.spatial_axes = tuple(i for i, label in enumerate(layout.format) if label == "S")
        if not self.spatial_axes:
            raise ValueError(f"{self.name!r} needs an input with spatial (S) axes, got format {layout.format!r}")

    def output_format(self, input_format):
        return "".join(label for label in input_format if label != "S")

    def predict(self, X):
        xp = get_array_module(X)
        return xp.mean(X, axis=self.spatial_axes)

    def backward(self, X, Z, dLdZ, memory):
        xp = get_array_module(X)
        shape = list(X.shape)
        for axis in self.spatial_axes:
            shape[axis] = 1
        count = X.shape[self.spatial_axes[0]]  # BUG: H only, not H*W
        dLdX = xp.broadcast_to(xp.reshape(dLdZ, tuple(shape)), X.shape) / count
        return dLdX
