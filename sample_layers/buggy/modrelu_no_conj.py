"""modReLU whose input gradient misses a complex conjugate in the radial projection.

BUG: the component of dLdY along the phase u = X/|X| of the input is Re(conj(u) .* dLdY);
`backward` computes it as ``real(unit * dLdY)`` for dLdX, the way one writes a projection
for real numbers. dLdb uses the right projection (written separately), so only dLdX is
wrong, and only for complex inputs (for real inputs u = conj(u) = sign(X)): run it with
``--dtype complex128`` (or complex64). Shapes and dtypes are right, so only the gradient
check can catch it.
Must fail: gradients_are_numerically_correct (argument X)
The correct layer, with the derivation, is ../modrelu.py.
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ModReLUNoConj:
    """modReLU with conj missing from the radial projection in dLdX."""

    learnables = ("b",)
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="modrelu"):
        self.name = name
        self.description = "modReLU"
        self.b = None
        self.channel_axis = None

    def initialize(self, layout):
        self.channel_axis = layout.find("C")
        shape = [1] * len(layout.size)
        if self.channel_axis is not None:
            shape[self.channel_axis] = layout.size[self.channel_axis]
        if self.b is None:
            self.b = -0.5 * np.random.rand(*shape)

    def _parts(self, X):
        xp = get_array_module(X)
        r = xp.abs(X)
        nonzero = r > 0
        r_safe = xp.where(nonzero, r, 1)
        s = r + self.b
        active = (s > 0) & nonzero
        return r_safe, s, active, X / r_safe

    def predict(self, X):
        xp = get_array_module(X)
        r_safe, s, active, unit = self._parts(X)
        return xp.where(active, s / r_safe, 0) * X

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        r_safe, s, active, unit = self._parts(X)
        # BUG: should be xp.real(xp.conj(unit) * dLdY)
        dLdX = xp.where(active, (s / r_safe) * dLdY - (self.b / r_safe) * unit * xp.real(unit * dLdY), 0)
        axes = tuple(i for i in range(X.ndim) if i != self.channel_axis)
        dLdb = xp.sum(xp.where(active, xp.real(xp.conj(unit) * dLdY), 0), axis=axes, keepdims=True)
        return dLdX, dLdb
