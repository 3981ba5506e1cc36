"""A dense layer whose backward computes the weights' gradient from its own output instead of
its inputs: dweights = output.T @ dvalues. With as many neurons as inputs the shape is right,
so only the values are wrong (argument weights).
Must fail: gradients_are_numerically_correct
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
        self.dweights = np.dot(self.output.T, dvalues)  # BUG: should be self.inputs.T
        self.dbiases = np.sum(dvalues, axis=0, keepdims=True)
        self.dinputs = np.dot(dvalues, self.weights.T)
