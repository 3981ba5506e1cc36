"""Broken: Y = w*tanh(X) + b whose predict takes a float32 fast path for batches of 32 or more (float64 outputs of
float32 accuracy there) and float64 below, with a right backward: at its own batch it computes in float32, which
the type check says; its gradients are right at that precision (a precision measured on a few observations would
miss the fast path, and call the round-off of right gradients wrong).
Check: predict_is_consistent_in_type
Says: float32
Never says: gradient of w|gradient of b|gradient of X
"""

import numpy as np


class Float32AtLargeBatches:
    learnables = ("w", "b")
    example_layout = "6,6,4,32:SSCB"

    def __init__(self):
        self.w = None
        self.b = None

    def initialize(self, layout):
        c = layout.find("C")
        self.batch_axis = layout.find("B")
        self.axes = tuple(i for i in range(layout.ndim) if i != c)
        shape = [1] * layout.ndim
        shape[c] = layout.size[c]
        if self.w is None:
            self.w = np.random.rand(*shape) + 0.5
            self.b = np.random.randn(*shape)

    def predict(self, X):
        if X.shape[self.batch_axis] >= 32:
            f = np.float32
            return (self.w.astype(f) * np.tanh(X.astype(f)) + self.b.astype(f)).astype(X.dtype)
        return self.w * np.tanh(X) + self.b

    def backward(self, X, Y, dLdY, memory):
        t = np.tanh(X)
        dLdX = self.w * dLdY * (1 - t * t)
        return dLdX, np.sum(dLdY * t, axis=self.axes, keepdims=True), np.sum(dLdY, axis=self.axes, keepdims=True)
