"""Broken gradient: the two-input layer Z = X1 * tanh(X2) + a * X1 of two_inputs_good.py
whose backward returns dLdX2 in the place of dLdX1 and vice versa. Both inputs have the
same shape, so the shapes and dtypes are right; dLda is correct.
Must fail: gradients_are_numerically_correct (arguments X1 and X2; diagnosis: the two
gradients are returned in each other's place)."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class TwoInputsSwapped:
    learnables = ("a",)
    example_layout = ["4,3,5,6:SSCB", "4,3,5,6:SSCB"]

    def __init__(self, name="two_inputs"):
        self.name = name
        self.a = None
        self.channel_axis = None

    def initialize(self, layout1, layout2):
        self.channel_axis = layout1.find("C")
        shape = [1] * layout1.ndim
        if self.channel_axis is not None:
            shape[self.channel_axis] = layout1.size[self.channel_axis]
        if self.a is None:
            self.a = np.random.rand(*shape)

    def predict(self, X1, X2):
        xp = get_array_module(X1)
        return X1 * xp.tanh(X2) + self.a * X1

    def backward(self, X1, X2, Z, dLdZ, memory):
        xp = get_array_module(X1)
        t = xp.tanh(X2)
        dLdX1 = dLdZ * (t + self.a)
        dLdX2 = dLdZ * X1 * (1 - t * t)
        axes = tuple(i for i in range(X1.ndim) if i != self.channel_axis)
        dLda = xp.sum(dLdZ * X1, axis=axes, keepdims=True)
        return dLdX2, dLdX1, dLda  # BUG: swapped
