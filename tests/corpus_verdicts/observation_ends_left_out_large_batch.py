"""Broken: batch centering Y = X - mean of X over the batch, whose backward applies the mean's term in a loop over
observations 1 to B-2 (an off-by-one), on a batch of 40: observations 0 and 39 get dLdY alone. The first 8
observations run alone have their own ends, 0 and 7, wrong; the batch has 7 right and 39 wrong: the region found
there is carried over with its last observation standing for the batch's last, and proven on the whole batch.
Check: gradients_are_numerically_correct
Says: wrong only in observations 0, 39 of X
Says: right in the 38 others checked
Never says: other observations' outputs
Never says: observations 0, 7
"""

import numpy as np


class CenteringEndsLeftOut:
    example_layout = "4,4,3,40:SSCB"

    def initialize(self, layout):
        self.batch_axis = layout.find("B")

    def predict(self, X):
        return X - X.mean(axis=self.batch_axis, keepdims=True)

    def backward(self, X, Y, dLdY, memory):
        dLdX = np.moveaxis(dLdY - dLdY.mean(axis=self.batch_axis, keepdims=True), self.batch_axis, 0).copy()
        raw = np.moveaxis(dLdY, self.batch_axis, 0)
        dLdX[0], dLdX[-1] = raw[0], raw[-1]  # BUG: the loop ran over range(1, B - 1)
        return np.moveaxis(dLdX, 0, self.batch_axis)
