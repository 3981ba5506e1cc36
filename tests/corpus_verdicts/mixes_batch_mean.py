"""Broken: centering layer Y = X - mean of X over the batch axis in predict, which makes each observation depend on the
others; its backward is the right derivative of that.
Check: predict_is_consistent_across_observations
Says: mixes observations
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class SubtractsBatchMean:
    example_layout = "6,6,4,5:SSCB"

    def initialize(self, layout):
        self.batch_axis = layout.find("B")

    def predict(self, X):
        return X - X.mean(axis=self.batch_axis, keepdims=True)  # BUG: statistics over the batch

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        return dLdY - xp.mean(dLdY, axis=self.batch_axis, keepdims=True)
