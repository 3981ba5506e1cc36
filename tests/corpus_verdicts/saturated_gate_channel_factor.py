r"""Broken: a gate over CB, Y = tanh(X) * sigmoid(t) with one t per channel, 300 channels, two of
them saturated (t = 45: their gradient is about 1e-20 of the rest, and no probe of them alone can
tell it from round-off), whose dL/dt is doubled in channel 5 alone. The factor corrected in channel
5 was held to the saturated channels too, which it leaves as backward returned them, and undecided
there: the factor was dropped ("wrong only in channel 5 of t"), on every seed tried; a highway unit at
`512,256:CB` lost it on one seed of four. The two saturated channels (and any other channel whose
gradient the draw made as small) were counted "right in the 299 others checked", which no probe
decided: they are named undecided, and left out of the count.
Check: gradients_are_numerically_correct
Says: off by a factor 2 in channel 5 of t \(right in the 29[0-7] others checked; undecided in channels 40, (\d+, )*200, whose gradient is below 0.001 of the largest channel's\)
Never says: the gradient of t is wrong only
"""

import numpy as np


class SaturatedGate:
    learnables = ("t",)
    example_layout = "300,16:CB"

    def initialize(self, layout):
        C = layout.size[0]
        if getattr(self, "t", None) is None:
            self.t = np.random.uniform(-1, 1, (C, 1))
            self.t[[40, 200]] = 45.0  # saturated: sigmoid'(45) is about 3e-20

    def predict(self, X):
        return np.tanh(X) / (1 + np.exp(-self.t))

    def backward(self, X, Y, dLdY, memory):
        s = 1 / (1 + np.exp(-self.t))
        dt = (dLdY * np.tanh(X)).sum(axis=1, keepdims=True) * s * (1 - s)
        dt[5] *= 2  # BUG: channel 5 only
        return dLdY * s * (1 - np.tanh(X) ** 2), dt
