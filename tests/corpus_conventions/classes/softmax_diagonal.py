"""A softmax activation whose backward keeps only the diagonal of each row's Jacobian,
dinputs = dvalues * p * (1 - p): the terms -p_i * p_j that couple the classes are missing
(argument inputs).
Must fail: gradients_are_numerically_correct
"""

import numpy as np


class Activation_Softmax:

    def forward(self, inputs):
        # Remember the inputs, as every layer of the network does
        self.inputs = inputs
        # Subtract each row's largest value so that exp cannot overflow
        exp_values = np.exp(inputs - np.max(inputs, axis=1, keepdims=True))
        self.output = exp_values / np.sum(exp_values, axis=1, keepdims=True)

    def backward(self, dvalues):
        # BUG: d softmax_i / d input_j = p_i * (delta_ij - p_j); only i == j is kept here
        self.dinputs = dvalues * self.output * (1 - self.output)
