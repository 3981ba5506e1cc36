"""Broken: batch normalization in training, per channel over the spatial and batch axes, whose backward treats the
batch mean and variance as constants (dLdX = dLdXhat / sigma): each observation's gradient misses what the other
observations' outputs owe it through the statistics, the most common hand-written batch-norm bug.
Check: gradients_are_numerically_correct
Says: the gradient of X leaves out how each observation's X moves the other observations' outputs
Never says: constant factor
Never says: only in channel
"""

import numpy as np

EPSILON = 1e-5


class BatchNormStatisticsAsConstants:
    learnables = ("gamma", "beta")
    example_layout = "4,4,3,8:SSCB"

    def __init__(self):
        self.gamma = None
        self.beta = None

    def initialize(self, layout):
        c = layout.find("C")
        self.axes = tuple(i for i in range(layout.ndim) if i != c)
        shape = [1] * layout.ndim
        shape[c] = layout.size[c]
        if self.gamma is None:
            self.gamma = 1 + 0.1 * np.random.randn(*shape)
            self.beta = 0.1 * np.random.randn(*shape)

    def forward(self, X):
        mean = X.mean(axis=self.axes, keepdims=True)
        sigma = np.sqrt(X.var(axis=self.axes, keepdims=True) + EPSILON)
        xhat = (X - mean) / sigma
        return self.gamma * xhat + self.beta, (xhat, sigma)

    def predict(self, X):
        return self.forward(X)[0]

    def backward(self, X, Y, dLdY, memory):
        xhat, sigma = memory
        dLdxhat = dLdY * self.gamma
        dLdX = dLdxhat / sigma  # BUG: the mean's and the variance's terms are left out
        return dLdX, (dLdY * xhat).sum(axis=self.axes, keepdims=True), dLdY.sum(axis=self.axes, keepdims=True)
