"""Batch normalization checked in train mode: it normalizes with the batch's mean and
variance, so each observation's output depends on the others by design and the checks
that compare a batch with its observations alone fail. Its gradients are correct.
Must fail: predict_is_consistent_across_observations
Must fail: backward_is_consistent_across_observations

x (N, D), gamma (D,), beta (D,); bn_param = {'mode': 'train' | 'test', 'eps', 'momentum',
'running_mean', 'running_var'}.
"""

import numpy as np


def batchnorm_forward(x, gamma, beta, bn_param):
    mode, eps = bn_param['mode'], bn_param.get('eps', 1e-5)
    momentum = bn_param.get('momentum', 0.9)
    D = x.shape[1]
    run_mean = bn_param.get('running_mean', np.zeros(D, dtype=x.dtype))
    run_var = bn_param.get('running_var', np.ones(D, dtype=x.dtype))
    if mode == 'train':
        mean, var = x.mean(axis=0), x.var(axis=0)
        bn_param['running_mean'] = momentum * run_mean + (1 - momentum) * mean
        bn_param['running_var'] = momentum * run_var + (1 - momentum) * var
    elif mode == 'test':
        mean, var = run_mean, run_var
    else:
        raise ValueError('Invalid forward batchnorm mode "%s"' % mode)
    inv_std = 1 / np.sqrt(var + eps)
    x_hat = (x - mean) * inv_std
    out = gamma * x_hat + beta
    return out, (mode, x_hat, gamma, inv_std)


def batchnorm_backward(dout, cache):
    mode, x_hat, gamma, inv_std = cache
    dbeta = dout.sum(axis=0)
    dgamma = (dout * x_hat).sum(axis=0)
    dx_hat = dout * gamma
    if mode == 'test':  # the statistics are constants
        return dx_hat * inv_std, dgamma, dbeta
    dx = inv_std * (dx_hat - dx_hat.mean(axis=0) - x_hat * (dx_hat * x_hat).mean(axis=0))
    return dx, dgamma, dbeta
