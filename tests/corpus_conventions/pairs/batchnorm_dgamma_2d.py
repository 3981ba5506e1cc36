"""Batch normalization (train mode) whose backward sums dgamma and dbeta with keepdims=True:
they come back of shape (1, D) where gamma and beta have shape (D,). The observation
check that compares outputs fails, as for any batch normalization in train mode.
Must fail: backward_is_consistent_in_size
Must fail: predict_is_consistent_across_observations

gradients_are_numerically_correct (for gamma and beta) and
backward_is_consistent_across_observations are left undecided: they need gradients of the
parameters' shapes, and point at the size check.
"""

import numpy as np


def batchnorm_forward(x, gamma, beta, bn_param):
    eps = bn_param.get('eps', 1e-5)
    mu = np.mean(x, axis=0)
    centered = x - mu
    var = np.mean(centered ** 2, axis=0)
    std = np.sqrt(var + eps)
    x_norm = centered / std
    out = gamma * x_norm + beta
    cache = (x_norm, gamma, std)
    return out, cache


def batchnorm_backward(dout, cache):
    x_norm, gamma, std = cache
    N = dout.shape[0]
    dbeta = np.sum(dout, axis=0, keepdims=True)  # BUG: shape (1, D)
    dgamma = np.sum(dout * x_norm, axis=0, keepdims=True)  # BUG: shape (1, D)
    dx_norm = dout * gamma
    dx = (N * dx_norm - dx_norm.sum(axis=0) - x_norm * (dx_norm * x_norm).sum(axis=0)) / (N * std)
    return dx, dgamma, dbeta
