"""Correct: a naive convolution (loops over the output positions) in the CS231n layout.

x (N, C, H, W), w (F, C, HH, WW), b (F,); conv_param = {'stride': s, 'pad': p} gives the
stride and the zero padding on each side of the two spatial axes.
"""

import numpy as np


def conv_forward_naive(x, w, b, conv_param):
    s, p = conv_param['stride'], conv_param['pad']
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    H_out, W_out = 1 + (H + 2 * p - HH) // s, 1 + (W + 2 * p - WW) // s
    x_pad = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), mode='constant')
    out = np.zeros((N, F, H_out, W_out), dtype=x.dtype)
    for r in range(H_out):
        for c in range(W_out):
            patch = x_pad[:, :, r * s:r * s + HH, c * s:c * s + WW]
            out[:, :, r, c] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3])) + b
    cache = (x, w, b, conv_param)
    return out, cache


def conv_backward_naive(dout, cache):
    x, w, b, conv_param = cache
    s, p = conv_param['stride'], conv_param['pad']
    _, _, H, W = x.shape
    _, _, HH, WW = w.shape
    x_pad = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), mode='constant')
    dx_pad, dw = np.zeros_like(x_pad), np.zeros_like(w)
    for r in range(dout.shape[2]):
        for c in range(dout.shape[3]):
            g = dout[:, :, r, c]  # (N, F)
            patch = x_pad[:, :, r * s:r * s + HH, c * s:c * s + WW]
            dx_pad[:, :, r * s:r * s + HH, c * s:c * s + WW] += np.tensordot(g, w, axes=(1, 0))
            dw += np.tensordot(g, patch, axes=(0, 0))
    db = dout.sum(axis=(0, 2, 3))
    dx = dx_pad[:, :, p:p + H, p:p + W]
    return dx, dw, db
