"""Passed"""

import numpy as np


class DoubleRestores:
    """Replaces np.isfinite inside predict and puts it back before returning: no verdict can
    have read the replacement, and the layer is right."""

    example_layout = "3,2:CB"

    def predict(self, X):
        original = np.isfinite
        np.isfinite = lambda *args, **kwargs: True
        try:
            return 2 * X
        finally:
            np.isfinite = original

    def backward(self, X, Y, dLdY, memory):
        return 2 * dLdY
