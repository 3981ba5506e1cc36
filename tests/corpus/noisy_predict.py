"""Broken: predict adds random noise (1e-3 * randn), so two calls on the same input
differ. Must fail: predict_is_deterministic. (Side effects: it may also fail
predict_is_consistent_across_observations and the GPU parity checks, which compare
separate calls.)"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class NoisyPredict:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="noisy"):
        self.name = name

    def predict(self, X):
        xp = get_array_module(X)
        noise = xp.random.standard_normal(X.shape).astype(X.dtype)  # BUG: not deterministic
        return X + 1e-3 * noise
