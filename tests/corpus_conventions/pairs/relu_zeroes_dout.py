"""A ReLU pair whose backward zeroes the upstream gradient in place and hands it back as dx:
the caller's dout (which another branch of the graph may still read) is changed.
Must fail: backward_does_not_modify_inputs
"""

import numpy as np


def relu_forward(x):
    """Elementwise max(0, x); the input is cached for the backward."""
    out = x * (x > 0)
    cache = x
    return out, cache


def relu_backward(dout, cache):
    """The gradient flows where the input was positive."""
    x = cache
    dx = dout
    dx[x <= 0] = 0  # BUG: dx is the caller's dout, not a copy
    return dx
