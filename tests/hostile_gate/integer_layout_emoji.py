"""Passed

An embedding whose layout `5:B:int=0..9` holds `:B:`, rich's emoji code for 🅱, in a class
named `X`, which rich would print as ❌ wherever it stands between colons. Both are printed
as typed.
"""

import numpy as np


class X:
    learnables = ("W",)
    example_layout = "5:B:int=0..9"

    def __init__(self, dim=3, vocabulary=10):
        self.dim, self.vocabulary = dim, vocabulary
        self.W = None

    def initialize(self, layout):
        if self.W is None:
            self.W = np.random.randn(self.dim, self.vocabulary)

    def output_format(self, fmt):
        return "C" + fmt

    def predict(self, tokens):
        return self.W[:, tokens]

    def backward(self, tokens, Y, dLdY, memory):
        dLdW = np.zeros_like(self.W)
        np.add.at(dLdW.T, tokens.reshape(-1), dLdY.T)
        return None, dLdW
