"""Correct: a logistic sigmoid pair whose backward returns its gradient in a dict.

The cache keeps the output: the derivative of s(x) is s(x) * (1 - s(x)).
"""

import numpy as np


def sigmoid_forward(x):
    """Numerically stable sigmoid: exp is only ever taken of a non-positive number."""
    e = np.exp(-np.abs(x))
    out = np.where(x >= 0, 1 / (1 + e), e / (1 + e))
    return out, out


def sigmoid_backward(dout, cache):
    s = cache
    grads = {}
    grads['dx'] = dout * s * (1 - s)
    return grads
