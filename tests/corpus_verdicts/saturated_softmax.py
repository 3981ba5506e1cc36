"""Correct: softmax over channels of 15*X (large logits), with a cancellation-free backward:
dX_c = K * Y_c * sum_j Y_j (g_c - g_j)   (uses sum_j Y_j = 1; the j = c term vanishes),
so even the dominant channel's gradient (Y_c ~ 1) has full relative precision. Saturated: a
move of an observation's small logits changes its outputs near 1 by less than half an ulp,
which a probe's round-off, taken over the outputs that changed, left out: "the gradient of X is
wrong" or "off by a constant factor" at 6 of 16 seeds (a hunt for false alarms, at 30*X: 11).
"""

import numpy as np

K = 15.0


class SoftmaxAccurate:
    example_layout = "10,4:CB"

    def __init__(self, k=K):
        self.k = k

    def initialize(self, layout):
        self.c = layout.find("C")

    def predict(self, X):
        z = self.k * X
        z = z - z.max(axis=self.c, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=self.c, keepdims=True)

    def backward(self, X, Y, dLdY, memory):
        c = self.c
        g_c = np.expand_dims(dLdY, c + 1)  # axis c: c, axis c+1: j
        g_j = np.expand_dims(dLdY, c)
        y_j = np.expand_dims(Y, c)
        inner = np.sum(y_j * (g_c - g_j), axis=c + 1)
        return self.k * Y * inner
