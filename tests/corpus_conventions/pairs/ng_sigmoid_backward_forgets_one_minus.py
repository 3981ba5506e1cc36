"""deeplearning.ai's sigmoid pair with the derivative's (1 - s) left out of the backward.
Must fail: gradients_are_numerically_correct
"""

import numpy as np


def sigmoid(Z):
    A = 1 / (1 + np.exp(-Z))
    cache = Z
    return A, cache


def sigmoid_backward(dA, cache):
    Z = cache
    s = 1 / (1 + np.exp(-Z))
    dZ = dA * s  # BUG: s * (1 - s) is the derivative
    return dZ
