r"""Passed"""

# A learnable name of a str subclass whose methods lie or raise: layercheck takes its plain
# value ("w") without calling any of them, and checks the layer as written (issue 36; it
# was refused as a contract error before).

import numpy as np


class Name(str):
    """Equal to every name, with one hash for all: an attribute lookup by it finds nothing."""

    def __eq__(self, other):
        return True

    def __hash__(self):
        return 0

    def __str__(self):
        raise RuntimeError("no text")

    def __repr__(self):
        raise RuntimeError("no repr")


class StrSubclassLearnable:
    example_layout = "4,3,2:SCB"
    learnables = (Name("w"),)

    def __init__(self):
        self.w = np.ones(3)

    def predict(self, X):
        return X * self.w[None, :, None]

    def backward(self, X, Y, dLdY, memory):
        return dLdY * self.w[None, :, None], (X * dLdY).sum(axis=(0, 2))
