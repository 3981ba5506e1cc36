"""Broken: Y = X with the batch reversed (observation b gets observation B-1-b), whose backward returns dLdY without
reversing it back, on a batch of 40: shown among the first 8 observations run alone, then for the first and the
last among all 40. Each end's input moves only the other end's outputs, which the loss on the others' outputs of
both ends leaves out: each is moved again for the loss on every observation's outputs but its own.
Check: gradients_are_numerically_correct
Says: the gradient of X leaves out how each observation's X moves the other observations' outputs
Says: then for observations 0 and 39 among all 40: moving observation 0, the loss on the 39 other observations'
Says: likely cause: backward leaves out the dependence across observations
Never says: constant factor
"""


class BatchReversed:
    example_layout = "4,3,40:SCB"

    def initialize(self, layout):
        self.batch_axis = layout.find("B")

    def predict(self, X):
        return X[(slice(None),) * self.batch_axis + (slice(None, None, -1),)].copy()

    def backward(self, X, Y, dLdY, memory):
        return dLdY  # BUG: the reversal's gradient reverses dLdY back
