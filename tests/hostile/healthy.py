"""Passes: a plain scaled tanh, the one healthy module of the folder."""

import numpy as np


class Healthy:
    example_layout = "3,2:CB"

    def predict(self, X):
        return 2 * np.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        return 2 * (1 - np.tanh(X) ** 2) * dLdY
