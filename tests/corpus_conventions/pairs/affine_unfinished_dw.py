"""An affine pair whose backward is unfinished: dw is left as the zeros it was
started with (argument w).
Must fail: gradients_are_numerically_correct
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
    dw = np.zeros_like(w)
    # TODO: compute dw
    db = np.sum(dout, axis=0)
    return dx, dw, db
