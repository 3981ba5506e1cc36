"""modReLU: the complex ReLU of Arjovsky, Shah & Bengio, "Unitary Evolution Recurrent
Neural Networks" (ICML 2016).

    Y = relu(|X| + b) .* X ./ |X|

The magnitude of each complex input is shifted by a real learnable bias `b` (one per channel,
shape ``(1, 1, C, 1)`` for ``SSCB``) and clipped at zero; the phase is kept. Where
|X| + b <= 0 (or X = 0) the output is 0.

Gradient convention (docs/contracts.md, DESIGN.md section 3): for a real loss L and complex z = a + ib
the gradient passed in and returned is dL/da + i*dL/db. modReLU is not holomorphic, so
dLdX is not conj(f'(X)) .* dLdY. With r = |X|, u = X/r (unit phase), s = r + b and
G = dLdY, in the active region s > 0 the layer is Y = s*u:

* along u (radial) a change of r changes |Y| = r + b one for one: factor 1;
* across u (tangential) a change of phase moves Y by s/r times as much as X: factor s/r.

Splitting G into its radial part u*Re(conj(u)*G) and the rest gives

    dLdX = (s/r) * G - (b/r) * u * Re(conj(u) * G)           (0 where inactive)
    dLdb = sum(Re(conj(u) * G))   over the active elements, every axis but channels

(In Wirtinger form dY/dz = 1 + b/(2r), dY/dconj(z) = -b z^2/(2 r^3), and
dLdX = conj(dY/dz)*G + dY/dconj(z)*conj(G), which is the same thing.)

Real inputs work too: u is then sign(X) and dLdX reduces to dLdY where active. Runs on NumPy
and CuPy and keeps the precision of its inputs (b stays real).
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ModReLU:
    """modReLU with a real learnable bias per channel."""

    learnables = ("b",)
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="modrelu"):
        self.name = name
        self.description = "modReLU"
        self.b = None
        self.channel_axis = None

    def initialize(self, layout):
        """Find the channel axis; set b = -0.5*rand (small, negative: a dead zone) if empty."""
        self.channel_axis = layout.find("C")
        shape = [1] * len(layout.size)
        if self.channel_axis is not None:
            shape[self.channel_axis] = layout.size[self.channel_axis]
        if self.b is None:
            self.b = -0.5 * np.random.rand(*shape)

    def _parts(self, X):
        """(r, safe r, s, active mask, unit phase); no division by zero where X = 0."""
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
        """Return (dLdX, dLdb)."""
        xp = get_array_module(X)
        r_safe, s, active, unit = self._parts(X)
        radial = xp.real(xp.conj(unit) * dLdY)  # component of dLdY along the phase of X
        dLdX = xp.where(active, (s / r_safe) * dLdY - (self.b / r_safe) * unit * radial, 0)
        axes = tuple(i for i in range(X.ndim) if i != self.channel_axis)
        dLdb = xp.sum(xp.where(active, radial, 0), axis=axes, keepdims=True)
        return dLdX, dLdb
