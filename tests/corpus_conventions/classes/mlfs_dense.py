"""Correct: a fully connected layer in the style of ML-From-Scratch: forward_pass(X, training)
returns the output, backward_pass(accum_grad) returns the gradient with respect to the layer's
input, and the weights' gradients are kept in self.grad_W and self.grad_w0.
"""

import math

import numpy as np


class Dense:
    """A fully-connected NN layer.

    Parameters:
    -----------
    n_units: int
        The number of neurons in the layer.
    input_shape: tuple
        The expected input shape of the layer, (n_features,).
    """

    def __init__(self, n_units, input_shape):
        self.layer_input = None
        self.input_shape = input_shape
        self.n_units = n_units
        bound = 1 / math.sqrt(self.input_shape[0])
        self.W = np.random.uniform(-bound, bound, (self.input_shape[0], self.n_units))
        self.w0 = np.zeros((1, self.n_units))

    def forward_pass(self, X, training=True):
        self.layer_input = X
        return X.dot(self.W) + self.w0

    def backward_pass(self, accum_grad):
        # Gradients of the layer's weights, kept for the optimizer
        self.grad_W = self.layer_input.T.dot(accum_grad)
        self.grad_w0 = np.sum(accum_grad, axis=0, keepdims=True)
        # The gradient handed on to the layer below
        return accum_grad.dot(self.W.T)
