"""Broken output size: predict sums over the batch axis with keepdims, so a mini-batch of
B observations gives an output with batch size 1 (shape (4,3,5,1) for the example
layout) instead of B. No backward.
Must fail: output_batch_size_matches_input."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class SumOverBatch:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="sum_over_batch"):
        self.name = name
        self.batch_axis = None

    def initialize(self, layout):
        self.batch_axis = layout.find("B")

    def predict(self, X):
        xp = get_array_module(X)
        return xp.sum(X, axis=self.batch_axis, keepdims=True)  # BUG: batch size 1 out
