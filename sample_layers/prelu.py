"""PReLU layer with a custom backward function.

Python port of the MATLAB example "Specify Custom Layer Backward Function" (preluLayer).

    Z = max(X, 0) + alpha .* min(0, X)

`alpha` holds one slope per channel. Its shape is all ones except along the channel axis
of the input layout (for example ``(1, 1, C, 1)`` for ``SSCB``), so it broadcasts against
the input. Runs on NumPy and CuPy and keeps the input's dtype.
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class PReLU:
    """Parametric ReLU: negative inputs are scaled by a learnable slope per channel."""

    learnables = ("alpha",)
    example_layout = "8,8,4,2:SSCB"

    def __init__(self, name="prelu", num_channels=None):
        self.name = name
        self.num_channels = num_channels
        self.description = "PReLU" if num_channels is None else f"PReLU with {num_channels} channels"
        self.alpha = None
        self.channel_axis = None

    def initialize(self, layout):
        """Find the channel axis of the layout; set alpha = rand(1,..,C,..,1) if it is empty."""
        self.channel_axis = layout.find("C")
        shape = [1] * layout.ndim
        if self.channel_axis is not None:
            num_channels = layout.size[self.channel_axis]
            if self.num_channels is not None and self.num_channels != num_channels:
                raise ValueError(
                    f"PReLU {self.name!r} was built for {self.num_channels} channels "
                    f"but the input layout has {num_channels}"
                )
            shape[self.channel_axis] = num_channels
        if self.alpha is None:
            self.alpha = np.random.rand(*shape)

    def predict(self, X):
        xp = get_array_module(X)
        return xp.maximum(X, 0) + self.alpha * xp.minimum(0, X)

    def backward(self, X, Z, dLdZ, memory):
        """Return (dLdX, dLdAlpha), exactly as in the MATLAB example."""
        xp = get_array_module(X)
        dLdX = self.alpha * dLdZ
        positive = X > 0
        dLdX[positive] = dLdZ[positive]
        dLdAlpha = xp.minimum(0, X) * dLdZ
        # Sum over every axis except the channel axis (spatial axes and the observations
        # of the mini-batch), keeping the dimensions so the shape matches alpha.
        axes = tuple(i for i in range(X.ndim) if i != self.channel_axis)
        dLdAlpha = xp.sum(dLdAlpha, axis=axes, keepdims=True)
        return dLdX, dLdAlpha
