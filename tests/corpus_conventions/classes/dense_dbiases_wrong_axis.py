"""A dense layer whose backward sums the bias gradient over the neurons (axis=1) instead of
over the samples (axis=0): dbiases has shape (n_samples, 1) where biases has (1, n_neurons).
Must fail: backward_is_consistent_in_size

The checks that need a gradient of the biases' shape (gradients_are_numerically_correct for
biases, and backward_is_consistent_across_observations) are left undecided and point at the
size check.
"""

import numpy as np


class Layer_Dense:

    def __init__(self, n_inputs, n_neurons):
        self.weights = 0.01 * np.random.randn(n_inputs, n_neurons)
        self.biases = np.zeros((1, n_neurons))

    def forward(self, inputs):
        self.inputs = inputs
        self.output = np.dot(inputs, self.weights) + self.biases

    def backward(self, dvalues):
        self.dweights = np.dot(self.inputs.T, dvalues)
        self.dbiases = np.sum(dvalues, axis=1, keepdims=True)  # BUG: should be axis=0
        self.dinputs = np.dot(dvalues, self.weights.T)
