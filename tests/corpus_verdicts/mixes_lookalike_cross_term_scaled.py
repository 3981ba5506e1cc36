"""Broken: Y = X + 0.5 * (mean of X over the batch) on a batch of 128, whose backward has the mean's term divided by the
batch size twice: the dependence across observations is in backward, wrongly scaled, not left out.
Check: gradients_are_numerically_correct
Says: the gradient of X is wrong
Never says: other observations' outputs
Never says: constant factor
"""


class CrossTermScaled:
    example_layout = "3,128:CB"

    def initialize(self, layout):
        self.batch_axis = layout.find("B")

    def predict(self, X):
        return X + 0.5 * X.mean(axis=self.batch_axis, keepdims=True)

    def backward(self, X, Y, dLdY, memory):
        batch = X.shape[self.batch_axis]
        return dLdY + 0.5 * dLdY.mean(axis=self.batch_axis, keepdims=True) / batch  # BUG: divided by the batch twice
