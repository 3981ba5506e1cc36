"""Correct: a rectified linear unit as a forward/backward pair with a cache.

The forward caches its input x; the backward lets the upstream gradient through where x was
positive. dx is a new array: the caller's dout is left as it was.
"""

import numpy as np


def relu_forward(x):
    """Elementwise max(0, x)."""
    out = np.maximum(x, 0)
    cache = x
    return out, cache


def relu_backward(dout, cache):
    """The upstream gradient passes where the input was positive, and is zero elsewhere."""
    x = cache
    dx = np.where(x > 0, dout, 0)
    return dx
