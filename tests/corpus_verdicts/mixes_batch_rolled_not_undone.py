"""Broken: Y = X rolled by one observation along the batch (observation b gets observation b-1, the first gets the
last), whose backward returns dLdY without rolling it back, on a batch of 40: shown among the first 8 observations
run alone, then for the first and the last among all 40. The last observation's input moves only the first's
outputs, which the loss on the others' outputs of both ends leaves out: the last is moved again for the loss on
every observation's outputs but its own.
Check: gradients_are_numerically_correct
Says: the gradient of X leaves out how each observation's X moves the other observations' outputs
Says: then for observations 0 and 39 among all 40: moving observation 0, the loss on the 38 other observations'
Says: likely cause: backward leaves out the dependence across observations
Never says: constant factor
"""

import numpy as np


class BatchRolled:
    example_layout = "4,3,40:SCB"

    def initialize(self, layout):
        self.batch_axis = layout.find("B")

    def predict(self, X):
        return np.roll(X, 1, axis=self.batch_axis)

    def backward(self, X, Y, dLdY, memory):
        return dLdY  # BUG: the roll's gradient rolls dLdY back
