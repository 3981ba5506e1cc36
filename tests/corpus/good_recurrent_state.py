"""Correct recurrent layer with a state: a leaky accumulator over time, h_t = a*h_{t-1} + X_t,
Y_t = h_t, with a learnable decay `a` per channel and the state h of shape (C, B) carried
between calls; forward, backward through time (dLdSout and dLdSin), and reset_state."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class LeakyAccumulator:
    learnables = ("a",)
    state = ("h",)
    example_layout = "3,4,5:CBT"

    def __init__(self):
        self.a = None
        self.h = None

    def initialize(self, layout):
        channels, batch = layout.size[layout.find("C")], layout.size[layout.find("B")]
        if self.a is None:
            self.a = np.random.uniform(0.2, 0.8, (channels, 1))
        if self.h is None:
            self.h = np.zeros((channels, batch))

    def predict(self, X):
        Y, h, _ = self._run(X)
        return Y, h

    def forward(self, X):
        Y, h, history = self._run(X)
        return Y, h, history

    def _run(self, X):
        xp = get_array_module(X)
        h = self.h
        history = [h]
        for t in range(X.shape[2]):
            h = self.a * h + X[:, :, t]
            history.append(h)
        return xp.stack(history[1:], axis=2), h, history

    def backward(self, X, Y, dLdY, dLdh_out, history):
        xp = get_array_module(X)
        dh = dLdh_out
        dLdX = xp.zeros_like(X)
        dLda = xp.zeros_like(self.a)
        for t in reversed(range(X.shape[2])):
            dh = dh + dLdY[:, :, t]
            dLdX[:, :, t] = dh
            dLda = dLda + xp.sum(dh * history[t], axis=1, keepdims=True)
            dh = self.a * dh
        return dLdX, dLda, dh

    def reset_state(self):
        self.h = np.zeros_like(self.h)
