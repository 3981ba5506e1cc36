"""Broken contract: the embedding returns a zero array as the "gradient" of its integer token
ids; an integer input is not differentiated and its gradient must be None.
Must fail: backward_is_consistent_in_size"""

import numpy as np


class EmbeddingZeroIdGradient:
    learnables = ("W",)
    example_layout = "5,6:BT:int=0..9"

    def __init__(self):
        self.W = None

    def initialize(self, layout):
        if self.W is None:
            self.W = np.random.randn(4, 10)

    def output_format(self, fmt):
        return "C" + fmt

    def predict(self, tokens):
        return self.W[:, tokens]

    def backward(self, tokens, Y, dLdY, memory):
        dLdW = np.zeros_like(self.W)
        np.add.at(dLdW.T, tokens.reshape(-1), dLdY.reshape(4, -1).T)
        return np.zeros(tokens.shape), dLdW  # BUG: must be None
