r"""Broken: per-channel scale Y = s*X over 20 channels with s = 1e-8 in channel 3, whose backward doubles dLdX in
channel 1 and triples it in the tiny channel 3. Past 16 channels the channels are probed in blocks of two, and a
block holding channel 3 beside channel 4 is judged at channel 4's scale, which cannot see channel 3: "channel 1"
alone was found, which the probe of channel 3 on its own contradicted, and only "wrong" was said. Channel 3, found
wrong on its own, is set apart and judged alone.
Check: gradients_are_numerically_correct
Says: wrong only in channels 1, 3 of X \(right in the 18 others checked\)
Never says: right in the 19 others
"""

import numpy as np


class TinyChannelAmongTwenty:
    learnables = ("s",)
    example_layout = "5,5,20,6:SSCB"

    def __init__(self):
        self.s = None

    def initialize(self, layout):
        c = layout.find("C")
        self.c = c
        self.axes = tuple(i for i in range(layout.ndim) if i != c)
        shape = [1] * layout.ndim
        shape[c] = layout.size[c]
        if self.s is None:
            s = np.random.rand(*shape) + 0.5
            s.reshape(-1)[3] = 1e-8
            self.s = s

    def predict(self, X):
        return self.s * X

    def backward(self, X, Y, dLdY, memory):
        dLdX = self.s * dLdY
        dLdX[:, :, 1] *= 2  # BUG
        dLdX[:, :, 3] *= 3  # BUG, in the channel whose gradient is tiny
        return dLdX, np.sum(dLdY * X, axis=self.axes, keepdims=True)
