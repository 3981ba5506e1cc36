"""Passed"""

import numpy as np

# What notebook helpers do: a display method added to NumPy's classes, read by no check.
np.poly1d._repr_latex_ = lambda self: "$p(x)$"


class Double:
    example_layout = "3,2:CB"

    def predict(self, X):
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        return 2 * dLdY
