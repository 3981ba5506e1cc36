"""Broken gradient: the embedding's table gradient is written with a fancy-index update,
dLdW[:, tokens] += dLdY, which keeps one contribution per repeated token id instead of
summing them (the classic np.add.at bug). Right only where an id occurs once.
Must fail: gradients_are_numerically_correct (argument W)"""

import numpy as np


class EmbeddingFancyIndex:
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
        dLdW[:, tokens] += dLdY  # BUG: repeated ids are not accumulated
        return None, dLdW
