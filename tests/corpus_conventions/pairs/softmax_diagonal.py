"""A softmax pair whose backward keeps only the diagonal of the Jacobian: dx = dout * p * (1 - p).
The softmax couples every class of a row, so the off-diagonal terms -p_i p_j are missing (argument x).
Must fail: gradients_are_numerically_correct
"""

import numpy as np


def softmax_forward(x):
    """Row-wise softmax of the scores x (N, C), shifted by the row maximum for stability."""
    z = x - np.max(x, axis=1, keepdims=True)
    exp_z = np.exp(z)
    probs = exp_z / np.sum(exp_z, axis=1, keepdims=True)
    return probs, probs


def softmax_backward(dout, cache):
    probs = cache
    # BUG: the full product is probs * (dout - sum(dout * probs, axis=1, keepdims=True))
    dx = dout * probs * (1 - probs)
    return dx
