"""Broken: Y = X + 0.01 * (mean of X over the batch) in predict, whose backward leaves the mean's own gradient out:
each observation's gradient misses what the others' dL/dY add through the mean.
Check: gradients_are_numerically_correct
Says: the gradient of X leaves out how each observation's X moves the other observations' outputs
Says: likely cause: backward leaves out the dependence across observations
Never says: only in channel
Never says: constant factor
"""


class AddsBatchMeanForgetsIt:
    example_layout = "4,4,3,6:SSCB"

    def initialize(self, layout):
        self.batch_axis = layout.find("B")

    def predict(self, X):
        return X + 0.01 * X.mean(axis=self.batch_axis, keepdims=True)

    def backward(self, X, Y, dLdY, memory):
        return dLdY  # BUG: the mean's term, 0.01 * mean of dLdY over the batch, is left out
