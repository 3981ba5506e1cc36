"""Complex scaling layer whose weight gradient misses a complex conjugate.

BUG: `backward` returns ``dLdw = sum(X .* dLdY)`` instead of ``sum(conj(X) .* dLdY)``, the
formula a real-valued layer would use. For real inputs the two agree, so the bug only shows
with complex inputs: layercheck checks a layer with a complex learnable at complex dtypes too,
unless ``--dtype`` says otherwise. dLdX and dLdb are
right, and every gradient has the right shape and dtype, so only the gradient check can
catch it.
Must fail: gradients_are_numerically_correct (argument w)
The correct layer is ../complex_scale.py.
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ComplexScaleNoConj:
    """Complex per-channel scale plus a real bias, with conj(X) missing from dLdw."""

    learnables = ("w", "b")
    example_layout = "8,8,4,2:SSCB"

    def __init__(self, name="complex_scale"):
        self.name = name
        self.description = "Complex scale with real bias"
        self.w = None
        self.b = None
        self.channel_axis = None

    def initialize(self, layout):
        self.channel_axis = layout.find("C")
        shape = [1] * len(layout.size)
        if self.channel_axis is not None:
            shape[self.channel_axis] = layout.size[self.channel_axis]
        if self.w is None:
            self.w = np.random.randn(*shape) + 1j * np.random.randn(*shape)
        if self.b is None:
            self.b = np.random.randn(*shape)

    def predict(self, X):
        return self.w * X + self.b

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dLdX = xp.conj(self.w) * dLdY
        if X.dtype.kind != "c":
            dLdX = xp.real(dLdX)
        axes = tuple(i for i in range(X.ndim) if i != self.channel_axis)
        dLdw = xp.sum(X * dLdY, axis=axes, keepdims=True)  # BUG: should be conj(X) * dLdY
        dLdb = xp.sum(xp.real(dLdY), axis=axes, keepdims=True)
        return dLdX, dLdw, dLdb
