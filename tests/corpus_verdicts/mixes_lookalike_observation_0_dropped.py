"""Broken: Y = X + 0.01 * (mean of X over the batch), whose backward has the mean's term right but sets observation 0's
gradient to zero (a loop from 1): observation 0 moved alone changes the others' outputs and backward gives nothing
there, yet the dependence is there for every other observation.
Check: gradients_are_numerically_correct
Says: wrong only in observation 0 of X
Never says: other observations' outputs
"""


class MeanRightObservation0Dropped:
    example_layout = "4,4,3,6:SSCB"

    def initialize(self, layout):
        self.batch_axis = layout.find("B")

    def predict(self, X):
        return X + 0.01 * X.mean(axis=self.batch_axis, keepdims=True)

    def backward(self, X, Y, dLdY, memory):
        dLdX = dLdY + 0.01 * dLdY.mean(axis=self.batch_axis, keepdims=True)
        dLdX[..., 0] = 0  # BUG: observation 0 left out
        return dLdX
