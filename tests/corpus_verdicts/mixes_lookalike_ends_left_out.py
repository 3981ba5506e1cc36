"""Broken: batch centering Y = X - mean of X over the batch, whose backward applies the mean's term in a loop
over observations 1 to B-2 (an off-by-one): observations 0 and B-1 get dLdY alone, their dependence across
observations left out, while every other observation has it. Moved alone, the first and the last show what
a backward that leaves out the dependence for every observation shows; one between them does not.
Check: gradients_are_numerically_correct
Says: wrong only in observations 0, 7 of X
Never says: other observations' outputs
"""

import numpy as np


class CenteringEndsLeftOut:
    example_layout = "4,4,3,8:SSCB"

    def initialize(self, layout):
        self.batch_axis = layout.find("B")

    def predict(self, X):
        return X - X.mean(axis=self.batch_axis, keepdims=True)

    def backward(self, X, Y, dLdY, memory):
        dLdX = np.moveaxis(dLdY - dLdY.mean(axis=self.batch_axis, keepdims=True), self.batch_axis, 0).copy()
        raw = np.moveaxis(dLdY, self.batch_axis, 0)
        dLdX[0], dLdX[-1] = raw[0], raw[-1]  # BUG: the loop ran over range(1, B - 1)
        return np.moveaxis(dLdX, 0, self.batch_axis)
