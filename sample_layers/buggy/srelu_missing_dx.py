"""SReLU layer: faithful port of the MATLAB example, INCLUDING its bug.

BUG (from the MATLAB documentation example "Specify Custom Layer Backward Function",
sreluLayer): `backward` computes the local derivative ``dYdX`` but never assigns
``dLdX = dLdY .* dYdX``; it still returns ``dLdX`` as its first output. In MATLAB that
is an "output argument not assigned" error; in Python the `return` statement raises
``NameError: name 'dLdX' is not defined``. layercheck must report backward_does_not_error
as failed and name the cause (dLdX never assigned). The fix is in ../srelu.py.

Learnables keep the MATLAB names and order (LeftSlope, RightSlope, LeftThreshold,
RightThreshold -> left_slope, right_slope, left_threshold, right_threshold), and the
backward returns their gradients in that order: dLdX, dLdLS, dLdRS, dLdLT, dLdRT.
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class SReLUMissingDX:
    """SReLU whose backward never assigns dLdX (bug kept from the MATLAB example)."""

    learnables = ("left_slope", "right_slope", "left_threshold", "right_threshold")
    example_layout = "8,8,4,2:SSCB"

    def __init__(self, name="srelu"):
        self.name = name
        self.description = "SReLU"
        self.left_slope = None
        self.right_slope = None
        self.left_threshold = None
        self.right_threshold = None
        self.channel_axis = None

    def initialize(self, layout):
        # Find number of channels.
        idx = layout.find("C")
        self.channel_axis = idx
        sz = [1] * layout.ndim
        if idx is not None:
            sz[idx] = layout.size[idx]
        # Initialize empty learnable parameters.
        if self.left_slope is None:
            self.left_slope = np.random.rand(*sz)
        if self.right_slope is None:
            self.right_slope = np.random.rand(*sz)
        if self.left_threshold is None:
            self.left_threshold = np.random.rand(*sz)
        if self.right_threshold is None:
            self.right_threshold = np.random.rand(*sz)

    def predict(self, X):
        tl = self.left_threshold
        al = self.left_slope
        tr = self.right_threshold
        ar = self.right_slope
        dtype = X.dtype
        return (
            (X <= tl).astype(dtype) * (tl + al * (X - tl))
            + ((tl < X) & (X < tr)).astype(dtype) * X
            + (tr <= X).astype(dtype) * (tr + ar * (X - tr))
        )

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        ndims = X.ndim
        idxC = self.channel_axis
        tl = self.left_threshold
        al = self.left_slope
        tr = self.right_threshold
        ar = self.right_slope
        dtype = X.dtype

        dYdX = (X <= tl).astype(dtype) * al + ((X > tl) & (X < tr)).astype(dtype) + (X >= tr).astype(dtype) * ar  # noqa: F841 (unused: the bug)
        # BUG (kept from the MATLAB example): dLdX = dLdY * dYdX is missing.

        idx = tuple(i for i in range(ndims) if i != idxC)
        dLdLT = xp.sum(dLdY * (X <= tl).astype(dtype) * (1 - al), axis=idx, keepdims=True)
        dLdRT = xp.sum(dLdY * (tr <= X).astype(dtype) * (1 - ar), axis=idx, keepdims=True)
        dLdLS = xp.sum(dLdY * (X <= tl).astype(dtype) * (X - tl), axis=idx, keepdims=True)
        dLdRS = xp.sum(dLdY * (tr <= X).astype(dtype) * (X - tr), axis=idx, keepdims=True)
        return dLdX, dLdLS, dLdRS, dLdLT, dLdRT  # noqa: F821 -- dLdX is never assigned
