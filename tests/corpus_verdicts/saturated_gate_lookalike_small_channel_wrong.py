r"""Lookalike: the gate of saturated_gate_channel_factor.py, whose dL/dt is doubled in channel 5 and
tripled in channel 40, a channel nearly saturated (t = 18: its gradient about 1e-8 of the rest, too
small for a probe of the whole, large enough for a probe of its own). A factor said of channel 5
alone would call channel 40 right: it is wrong. Before, "wrong only in channel 5 of t (right in the 299
others checked)" was said: a region was said right elsewhere without a probe of such a channel. Then
nothing narrower than "wrong": channel 40's own probe contradicted "channel 5", and the block of
channels 37-55 that holds it was judged at the others' scale. Channel 40, found wrong on its own, is
now set apart from that block and judged alone: "channels 5, 40".
Check: gradients_are_numerically_correct
Says: wrong only in channels 5, 40 of t \(right in the 298 others checked\)
Never says: factor 2 in channel 5 of t|right in the 299 others
"""

import numpy as np


class NearlySaturatedGate:
    learnables = ("t",)
    example_layout = "300,16:CB"

    def initialize(self, layout):
        C = layout.size[0]
        if getattr(self, "t", None) is None:
            self.t = np.random.uniform(-1, 1, (C, 1))
            self.t[40] = 18.0

    def predict(self, X):
        return np.tanh(X) / (1 + np.exp(-self.t))

    def backward(self, X, Y, dLdY, memory):
        s = 1 / (1 + np.exp(-self.t))
        dt = (dLdY * np.tanh(X)).sum(axis=1, keepdims=True) * s * (1 - s)
        dt[5] *= 2  # BUG: channel 5
        dt[40] *= 3  # BUG: and channel 40, whose gradient is small
        return dLdY * s * (1 - np.tanh(X) ** 2), dt
