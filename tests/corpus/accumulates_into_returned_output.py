"""Broken across calls: predict writes tanh(X) into a workspace it keeps (to save an
allocation) with += instead of =, and returns the workspace itself, so every call after the
first returns the sum of the calls so far (compared as returned, the two calls would be one
array and look alike). The first call is right.
Must fail: predict_is_deterministic"""

import numpy as np


class AccumulatesIntoReturnedOutput:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self):
        self.workspace = None

    def predict(self, X):
        if self.workspace is None or self.workspace.shape != X.shape:
            self.workspace = np.zeros_like(X)
        self.workspace += np.tanh(X)  # BUG: should be self.workspace[...] = np.tanh(X)
        return self.workspace
