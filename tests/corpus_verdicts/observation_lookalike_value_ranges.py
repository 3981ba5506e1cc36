"""Broken: an affine layer on 6 observations whose backward loops over the first five only
(an off-by-one), so dL/dX is zero in observation 5. Each of the 30 elements of X is measured
on its own: the five wrong ones sit in value ranges that hold fourteen, where they are a
minority, so no range of values is said, only the observation.
Check: gradients_are_numerically_correct
Says: wrong only in observation 5 of X
Never says: ranges of X
"""

import numpy as np


class AffineSkipsTheLastObservation:
    learnables = ("w", "b")
    example_layout = "6,5:BC"

    def __init__(self):
        self.w = np.linspace(-1.0, 1.0, 15).reshape(5, 3)
        self.b = np.array([[0.1, -0.2, 0.3]])

    def predict(self, X):
        return X @ self.w + self.b

    def output_format(self, fmt):
        return "BC"

    def backward(self, X, Y, dLdY, memory):
        dLdX = np.zeros_like(X)
        for i in range(X.shape[0] - 1):  # BUG: range(X.shape[0])
            dLdX[i] = dLdY[i] @ self.w.T
        return dLdX, X.T @ dLdY, dLdY.sum(axis=0, keepdims=True)
