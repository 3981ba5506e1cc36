"""An affine pair whose backward is unfinished: db is still the None it was started with.
Must fail: backward_is_consistent_in_size

The checks that need a gradient of b's shape (gradients_are_numerically_correct for b, and
backward_is_consistent_across_observations) are left undecided and point at the size check.
"""

import numpy as np


def affine_forward(x, w, b):
    """out = x @ w + b for x (N, D), w (D, M), b (M,)."""
    out = np.dot(x, w) + b
    cache = (x, w, b)
    return out, cache


def affine_backward(dout, cache):
    x, w, b = cache
    dx, dw, db = None, None, None
    dx = np.dot(dout, w.T)
    dw = np.dot(x.T, dout)
    # TODO: compute db
    return dx, dw, db
