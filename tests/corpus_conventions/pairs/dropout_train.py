"""Inverted dropout in train mode; dropout_param = {'p': keep probability,
'mode': 'train' | 'test', 'seed': optional}. With a seed the mask is drawn again from that
seed at every call, so the pair is deterministic and its gradients are correct; but the mask
of an observation depends on its place in the batch (and on the batch's size), so the
checks that compare a batch with its observations alone fail, by design of the seeding.
Must fail: predict_is_consistent_across_observations
Must fail: backward_is_consistent_across_observations
"""

import numpy as np


def dropout_forward(x, dropout_param):
    keep, mode = dropout_param['p'], dropout_param['mode']
    if 'seed' in dropout_param:
        np.random.seed(dropout_param['seed'])
    if mode == 'train':
        mask = (np.random.rand(*x.shape) < keep).astype(x.dtype) / keep
        out = x * mask
    else:
        mask = None
        out = x.copy()
    return out, (dropout_param, mask)


def dropout_backward(dout, cache):
    dropout_param, mask = cache
    if dropout_param['mode'] == 'train':
        return dout * mask
    return dout
