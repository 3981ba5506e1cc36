"""Broken layout: global average pooling over the spatial axes, SSCB (H, W, C, B) -> (C, B),
WITHOUT an `output_format` method. The output has rank 2 but the layer does not declare
that it changes the layout, so the output cannot be labelled with the input's format SSCB.
Must fail: output_format_is_consistent.
The backward (dLdY / (H*W) spread over the spatial positions) is correct."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class GlobalAveragePoolingNoFormat:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="gap"):
        self.name = name
        self.spatial_axes = None

    def initialize(self, layout):
        self.spatial_axes = tuple(i for i, label in enumerate(layout.format) if label == "S")

    def predict(self, X):
        xp = get_array_module(X)
        return xp.mean(X, axis=self.spatial_axes)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        shape = list(X.shape)
        count = 1
        for axis in self.spatial_axes:
            count *= X.shape[axis]
            shape[axis] = 1
        return xp.broadcast_to(xp.reshape(dLdY, tuple(shape)), X.shape) / count
