"""Correct: deeplearning.ai's ReLU pair, as the course writes it: `relu(Z)` returns
`(A, cache)` and `relu_backward(dA, cache)` takes the cache; the forward bears no suffix.
"""

import numpy as np


def relu(Z):
    A = np.maximum(0, Z)
    cache = Z
    return A, cache


def relu_backward(dA, cache):
    Z = cache
    dZ = np.array(dA, copy=True)  # just converting dz to a correct object.
    dZ[Z <= 0] = 0
    return dZ
