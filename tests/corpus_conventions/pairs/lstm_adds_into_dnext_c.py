"""One time step of an LSTM whose backward adds the path through next_h into the caller's
dnext_c in place (dnext_c += ...), so the array the caller passed is changed.
Must fail: backward_does_not_modify_inputs

The activations a = x @ Wx + prev_h @ Wh + b (N, 4H) are split into the input, forget and
output gates and the candidate cell g, in that order.
"""

import numpy as np


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b):
    H = prev_h.shape[1]
    a = x.dot(Wx) + prev_h.dot(Wh) + b
    gate_i, gate_f, gate_o = _sigmoid(a[:, :H]), _sigmoid(a[:, H:2 * H]), _sigmoid(a[:, 2 * H:3 * H])
    g = np.tanh(a[:, 3 * H:])
    next_c = gate_f * prev_c + gate_i * g
    tanh_c = np.tanh(next_c)
    next_h = gate_o * tanh_c
    cache = (x, prev_h, prev_c, Wx, Wh, gate_i, gate_f, gate_o, g, tanh_c)
    return next_h, next_c, cache


def lstm_step_backward(dnext_h, dnext_c, cache):
    """Return dx, dprev_h, dprev_c, dWx, dWh, db."""
    x, prev_h, prev_c, Wx, Wh, gate_i, gate_f, gate_o, g, tanh_c = cache
    dnext_c += dnext_h * gate_o * (1 - tanh_c ** 2)  # BUG: writes into the caller's array
    dc = dnext_c
    d_i = dc * g * gate_i * (1 - gate_i)
    d_f = dc * prev_c * gate_f * (1 - gate_f)
    d_o = dnext_h * tanh_c * gate_o * (1 - gate_o)
    d_g = dc * gate_i * (1 - g ** 2)
    da = np.hstack([d_i, d_f, d_o, d_g])
    dprev_c = dc * gate_f
    return da.dot(Wx.T), da.dot(Wh.T), dprev_c, x.T.dot(da), prev_h.T.dot(da), da.sum(axis=0)
