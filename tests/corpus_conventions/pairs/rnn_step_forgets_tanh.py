"""One time step of a vanilla (tanh) recurrent network whose backward forgets the derivative
of the tanh: the upstream gradient is passed on as if the step were linear.
Must fail: gradients_are_numerically_correct

next_h = tanh(x @ Wx + prev_h @ Wh + b), with x (N, D), prev_h (N, H), Wx (D, H),
Wh (H, H) and b (H,).
"""

import numpy as np


def rnn_step_forward(x, prev_h, Wx, Wh, b):
    pre = x.dot(Wx) + prev_h.dot(Wh) + b
    next_h = np.tanh(pre)
    cache = (x, prev_h, Wx, Wh, next_h)
    return next_h, cache


def rnn_step_backward(dnext_h, cache):
    """Return the gradients of x, prev_h, Wx, Wh and b, in the forward's order."""
    x, prev_h, Wx, Wh, next_h = cache
    dpre = dnext_h  # BUG: should be dnext_h * (1 - next_h ** 2)
    dx = dpre.dot(Wx.T)
    dprev_h = dpre.dot(Wh.T)
    dWx = x.T.dot(dpre)
    dWh = prev_h.T.dot(dpre)
    db = dpre.sum(axis=0)
    return dx, dprev_h, dWx, dWh, db
