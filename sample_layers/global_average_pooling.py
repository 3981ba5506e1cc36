"""Global average pooling layer with a custom backward function.

Averages each channel of each observation over all spatial positions, like MATLAB's
globalAveragePooling2dLayer followed by flattening: the spatial axes are removed, so an
``SSCB`` input of size (H, W, C, B) gives a ``CB`` output of size (C, B). Because the
layout changes, the layer declares the output format with `output_format`.

The spatial axes are read from the input layout in `initialize` (every axis labelled
``S``), so the layer works for ``SSCB``, ``SCB``, ``SSSCB``, ``SCBT``, ...

    Z[c, b] = mean over the spatial positions p of X[p, c, b]
    dLdX[p, c, b] = dLdZ[c, b] / (number of spatial positions)

No learnables. Runs on NumPy and CuPy and keeps the input's dtype.
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class GlobalAveragePooling:
    """Mean over every spatial axis; the spatial axes are dropped from the output."""

    example_layout = "6,5,4,3:SSCB"

    def __init__(self, name="global_average_pooling"):
        self.name = name
        self.description = "Global average pooling"
        self.spatial_axes = None

    def initialize(self, layout):
        """Find the spatial axes of the input layout."""
        self.spatial_axes = tuple(i for i, label in enumerate(layout.format) if label == "S")
        if not self.spatial_axes:
            raise ValueError(f"{self.name!r} needs an input with spatial (S) axes, got format {layout.format!r}")

    def output_format(self, input_format):
        """The input format without its S labels, e.g. "SSCB" -> "CB"."""
        return "".join(label for label in input_format if label != "S")

    def predict(self, X):
        xp = get_array_module(X)
        return xp.mean(X, axis=self.spatial_axes)

    def backward(self, X, Z, dLdZ, memory):
        """Spread dLdZ evenly over the spatial positions it was averaged from."""
        xp = get_array_module(X)
        count = 1
        shape = list(X.shape)
        for axis in self.spatial_axes:
            count *= X.shape[axis]
            shape[axis] = 1
        # Put size-1 axes back where the spatial axes were, then broadcast over them.
        dLdX = xp.broadcast_to(xp.reshape(dLdZ, tuple(shape)), X.shape) / count
        return dLdX
