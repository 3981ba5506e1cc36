"""An affine pair whose backward multiplies in the wrong order: dw = dout.T @ x has the shape
(M, D) of w.T, not the shape (D, M) of w.
Must fail: backward_is_consistent_in_size

The checks that need a gradient of w's shape (gradients_are_numerically_correct for w, and
backward_is_consistent_across_observations) are left undecided and point at the size check.
"""

import numpy as np


def affine_forward(x, w, b):
    """out = x_flat @ w + b, each observation of x flattened to a row."""
    x_rows = x.reshape(x.shape[0], -1)
    out = x_rows @ w + b
    cache = (x, w, b)
    return out, cache


def affine_backward(dout, cache):
    x, w, b = cache
    x_rows = x.reshape(x.shape[0], -1)
    dx = (dout @ w.T).reshape(x.shape)
    dw = dout.T @ x_rows  # BUG: should be x_rows.T @ dout
    db = dout.sum(axis=0)
    return dx, dw, db
