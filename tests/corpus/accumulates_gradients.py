"""Broken across calls: backward accumulates the weight gradient in an attribute (as an
optimizer's gradient buffer would) and returns the running total, so the second training
step returns twice the gradient. The first call is right.
Must fail: backward_is_repeatable"""

import numpy as np


class AccumulatingScale:
    learnables = ("w",)
    example_layout = "4,3,5,6:SSCB"

    def __init__(self):
        self.w = None
        self.grad_w = None

    def initialize(self, layout):
        if self.w is None:
            self.w = np.random.rand(1, 1, layout.size[2], 1)

    def predict(self, X):
        return self.w * X

    def backward(self, X, Y, dLdY, memory):
        grad = (dLdY * X).sum(axis=(0, 1, 3), keepdims=True)
        self.grad_w = grad if self.grad_w is None else self.grad_w + grad  # BUG: accumulates
        return self.w * dLdY, self.grad_w
