"""A ReLU activation whose backward zeroes the incoming gradient in place: self.dinputs is the
caller's dvalues itself, not a copy, so the layer above sees its own gradient changed.
Must fail: backward_does_not_modify_inputs
"""

import numpy as np


class Activation_ReLU:
    """max(0, x), elementwise."""

    def forward(self, inputs):
        # Keep the inputs: the backward pass masks with them
        self.inputs = inputs
        self.output = np.maximum(0, inputs)

    def backward(self, dvalues):
        # Zero gradient where the input was zero or negative
        self.dinputs = dvalues  # BUG: should be dvalues.copy()
        self.dinputs[self.inputs <= 0] = 0
