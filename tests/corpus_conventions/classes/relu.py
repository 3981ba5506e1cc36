"""Correct: a ReLU activation in the style of "Neural Networks from Scratch": forward stores
self.output, backward copies the incoming gradient before zeroing it where the input was not
positive, and stores the result in self.dinputs.
"""

import numpy as np


class Activation_ReLU:

    def forward(self, inputs):
        # Keep the inputs: the backward pass masks with them
        self.inputs = inputs
        self.output = np.maximum(0, inputs)

    def backward(self, dvalues):
        # A copy, since the caller's array must not change
        self.dinputs = dvalues.copy()
        # Zero gradient where the input was zero or negative
        self.dinputs[self.inputs <= 0] = 0
