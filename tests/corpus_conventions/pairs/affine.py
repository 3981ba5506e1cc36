"""Correct: a fully connected layer written as a forward/backward pair with a cache.

Each observation of x, of shape (N, d_1, ..., d_k), is flattened into a row of
D = d_1 * ... * d_k values before the product with w (D, M); b has shape (M,).
"""

import numpy as np


def affine_forward(x, w, b):
    """Return out = x_flat @ w + b, of shape (N, M), and what the backward needs."""
    num_obs = x.shape[0]
    flat = x.reshape(num_obs, -1)
    out = flat.dot(w) + b
    cache = (x, w, b)
    return out, cache


def affine_backward(dout, cache):
    """Given dL/dout (N, M), return dL/dx (shaped as x), dL/dw and dL/db."""
    x, w, b = cache
    flat = x.reshape(x.shape[0], -1)
    dx = dout.dot(w.T).reshape(x.shape)
    dw = flat.T.dot(dout)
    db = np.sum(dout, axis=0)
    return dx, dw, db
