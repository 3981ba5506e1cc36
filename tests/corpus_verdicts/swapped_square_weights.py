"""Broken: Y = tanh(X P + tanh(X) Q) with two 16x16 weights, whose gradients backward returns
in each other's place (numpy-ml's RNN cell with the Waa and Wax lines swapped; a hunt). Each
weight is small enough to be measured element by element, but not both within the
diagnosis's budget: the swap was said of P alone ("the gradient returned for P is the
gradient of Q"), and Q was "wrong at every element measured".
Check: gradients_are_numerically_correct
Says: the gradients of P and Q are returned in each other's place
Never says: the gradient returned for|wrong at every element
"""

import numpy as np


class SwappedSquareWeights:
    learnables = ("P", "Q")
    example_layout = "64,16:BC"

    def initialize(self, layout):
        rng = np.random.default_rng(0)
        n = layout.size[1]
        if getattr(self, "P", None) is None:
            self.P = rng.standard_normal((n, n)) / np.sqrt(n)
        if getattr(self, "Q", None) is None:
            self.Q = rng.standard_normal((n, n)) / np.sqrt(n)

    def predict(self, X):
        return np.tanh(X @ self.P + np.tanh(X) @ self.Q)

    def backward(self, X, Y, dLdY, memory):
        dZ = dLdY * (1 - Y**2)
        T = np.tanh(X)
        dX = dZ @ self.P.T + (dZ @ self.Q.T) * (1 - T**2)
        return dX, T.T @ dZ, X.T @ dZ  # BUG: dL/dQ in P's place and dL/dP in Q's
