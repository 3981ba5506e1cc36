"""Correct embedding: integer token ids (B observations, T steps, ids 0..9) index the
columns of a learnable table W (E x V); the output is CBT with the embedding as channels.
The token input is not differentiated: backward returns None for it."""

import numpy as np


class Embedding:
    learnables = ("W",)
    example_layout = "5,6:BT:int=0..9"

    def __init__(self, dim=4, vocabulary=10):
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
        # np.add.at accumulates repeated ids; dLdW[:, tokens] += ... would keep only one.
        np.add.at(dLdW.T, tokens.reshape(-1), dLdY.reshape(self.dim, -1).T)
        return None, dLdW
