"""SReLU layer with a custom backward function (corrected).

Python port of the MATLAB example "Specify Custom Layer Backward Function" (sreluLayer),
with the example's bug fixed: the MATLAB backward computes ``dYdX`` but never assigns
``dLdX``; here ``dLdX = dLdY * dYdX``.

    Y = (X <= tl) * (tl + al*(X - tl))
      + ((tl < X) & (X < tr)) * X
      + (tr <= X) * (tr + ar*(X - tr))

Learnable names, mapped from the MATLAB example:

    tl  LeftThreshold      al  LeftSlope
    tr  RightThreshold     ar  RightSlope

The learnables are listed, and their gradients returned, in the order (tl, al, tr, ar).
Each has one value per channel: its shape is all ones except along the channel axis of
the input layout, e.g. ``(1, 1, C, 1)`` for ``SSCB``. As in the MATLAB example all four
are initialized with ``rand`` (so the thresholds lie in [0, 1) and ``tl`` may exceed
``tr``; the formula above is kept as is).
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class SReLU:
    """S-shaped ReLU with learnable thresholds and slopes per channel."""

    learnables = ("tl", "al", "tr", "ar")
    example_layout = "8,8,4,2:SSCB"

    def __init__(self, name="srelu"):
        self.name = name
        self.description = "SReLU"
        self.tl = None  # LeftThreshold
        self.al = None  # LeftSlope
        self.tr = None  # RightThreshold
        self.ar = None  # RightSlope
        self.channel_axis = None

    def initialize(self, layout):
        """Find the channel axis; fill the empty learnables with rand(1,..,C,..,1)."""
        self.channel_axis = layout.find("C")
        shape = [1] * layout.ndim
        if self.channel_axis is not None:
            shape[self.channel_axis] = layout.size[self.channel_axis]
        # Same order as the MATLAB example: slopes first, then thresholds.
        if self.al is None:
            self.al = np.random.rand(*shape)
        if self.ar is None:
            self.ar = np.random.rand(*shape)
        if self.tl is None:
            self.tl = np.random.rand(*shape)
        if self.tr is None:
            self.tr = np.random.rand(*shape)

    def predict(self, X):
        tl, al, tr, ar = self.tl, self.al, self.tr, self.ar
        dtype = X.dtype
        left = (X <= tl).astype(dtype)
        middle = ((tl < X) & (X < tr)).astype(dtype)
        right = (tr <= X).astype(dtype)
        return left * (tl + al * (X - tl)) + middle * X + right * (tr + ar * (X - tr))

    def backward(self, X, Y, dLdY, memory):
        """Return (dLdX, dLdtl, dLdal, dLdtr, dLdar)."""
        xp = get_array_module(X)
        tl, al, tr, ar = self.tl, self.al, self.tr, self.ar
        dtype = X.dtype
        left = (X <= tl).astype(dtype)
        middle = ((X > tl) & (X < tr)).astype(dtype)
        right = (X >= tr).astype(dtype)

        dYdX = left * al + middle + right * ar
        dLdX = dLdY * dYdX

        # Sum over every axis except the channel axis, keeping the dimensions.
        axes = tuple(i for i in range(X.ndim) if i != self.channel_axis)
        dLdtl = xp.sum(dLdY * left * (1 - al), axis=axes, keepdims=True)
        dLdal = xp.sum(dLdY * left * (X - tl), axis=axes, keepdims=True)
        dLdtr = xp.sum(dLdY * right * (1 - ar), axis=axes, keepdims=True)
        dLdar = xp.sum(dLdY * right * (X - tr), axis=axes, keepdims=True)
        return dLdX, dLdtl, dLdal, dLdtr, dLdar
