"""Complex scaling layer: a complex weight and a real bias per channel.

    Y = w .* X + b

`w` is complex and `b` is real; both have one value per channel, with a shape that is all
ones except along the channel axis of the input layout (``(1, 1, C, 1)`` for ``SSCB``), so
they broadcast against the input. Y is complex (a real bias added to a complex product).

Gradient convention (docs/contracts.md, DESIGN.md section 3): for a real loss L and a complex value
z = a + ib the gradient passed in and returned is dL/da + i*dL/db. For Y = w*X this gives

    dLdX = conj(w) .* dLdY
    dLdw = sum(conj(X) .* dLdY)      over every axis but the channel axis
    dLdb = sum(real(dLdY))           b is real, so its gradient is real

Real inputs are allowed (Y is still complex); dLdX is then the real part of conj(w)*dLdY,
because a real X can only move along the real axis. Runs on NumPy and CuPy and keeps the
precision of its inputs (complex64 in, complex64 out; the real bias stays real).
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ComplexScale:
    """Complex per-channel scale plus a real per-channel bias."""

    learnables = ("w", "b")
    example_layout = "8,8,4,2:SSCB"

    def __init__(self, name="complex_scale"):
        self.name = name
        self.description = "Complex scale with real bias"
        self.w = None
        self.b = None
        self.channel_axis = None

    def initialize(self, layout):
        """Find the channel axis; set w = complex randn and b = randn (per channel) if empty."""
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
        """Return (dLdX, dLdw, dLdb)."""
        xp = get_array_module(X)
        dLdX = xp.conj(self.w) * dLdY
        if X.dtype.kind != "c":
            dLdX = xp.real(dLdX)  # a real input gets a real gradient
        axes = tuple(i for i in range(X.ndim) if i != self.channel_axis)
        dLdw = xp.sum(xp.conj(X) * dLdY, axis=axes, keepdims=True)
        dLdb = xp.sum(xp.real(dLdY), axis=axes, keepdims=True)
        return dLdX, dLdw, dLdb
