"""Correct: a hyperbolic tangent activation whose forward returns its output (and keeps it)
and whose backward returns the gradient with respect to its input; it has no parameters.
"""

import numpy as np


class TanH:
    """Elementwise tanh: the derivative 1 - tanh(x)**2 is computed from the kept output."""

    def __init__(self):
        self.out = None

    def forward(self, x):
        self.out = np.tanh(x)
        return self.out

    def backward(self, grad):
        local = 1 - self.out ** 2
        return grad * local
