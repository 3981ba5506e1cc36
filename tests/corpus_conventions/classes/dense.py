"""Correct: a dense layer in the style of "Neural Networks from Scratch": forward stores
self.output, backward stores self.dinputs and the parameter gradients self.dweights and
self.dbiases, and neither returns anything.
"""

import numpy as np


class Layer_Dense:

    def __init__(self, n_inputs, n_neurons):
        # Small random weights, one column per neuron, and a row of zero biases
        self.weights = 0.01 * np.random.randn(n_inputs, n_neurons)
        self.biases = np.zeros((1, n_neurons))

    def forward(self, inputs):
        # Remember the inputs: the weights' gradient needs them
        self.inputs = inputs
        self.output = np.dot(inputs, self.weights) + self.biases

    def backward(self, dvalues):
        # Gradients on the parameters
        self.dweights = np.dot(self.inputs.T, dvalues)
        self.dbiases = np.sum(dvalues, axis=0, keepdims=True)
        # Gradient on the values, for the previous layer
        self.dinputs = np.dot(dvalues, self.weights.T)
