"""Broken: Y = X with the batch reversed (observation b gets observation B-1-b), whose backward returns dLdY without
reversing it back: no observation's X moves its own outputs, and backward gives nothing of how it moves the others'.
Check: gradients_are_numerically_correct
Says: the gradient of X leaves out how each observation's X moves the other observations' outputs
Says: likely cause: backward leaves out the dependence across observations
Never says: constant factor
"""


class BatchReversed:
    example_layout = "4,3,6:SCB"

    def initialize(self, layout):
        self.batch_axis = layout.find("B")

    def predict(self, X):
        return X[(slice(None),) * self.batch_axis + (slice(None, None, -1),)].copy()

    def backward(self, X, Y, dLdY, memory):
        return dLdY  # BUG: the reversal's gradient reverses dLdY back
