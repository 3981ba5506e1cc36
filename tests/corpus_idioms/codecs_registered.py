"""A library that registers a codec search function and an error handler."""

import codecs

import numpy as np


def _search(name):
    return None  # knows no codec: Python asks the next search function


codecs.register(_search)
codecs.register_error("layercheck_corpus_question", lambda error: ("?", error.end))


class Coded:
    """Passed"""

    learnables = ("w",)
    example_layout = "6,4:CB"

    def __init__(self):
        self.w = np.linspace(0.5, 1.5, 6).reshape(6, 1)

    def predict(self, X):
        return np.log1p(np.exp(self.w * X))  # softplus(w x)

    def backward(self, X, Y, dLdY, memory):
        s = 1.0 / (1.0 + np.exp(-self.w * X))
        return dLdY * s * self.w, (dLdY * s * X).sum(axis=1, keepdims=True)


class CodedWrong(Coded):
    """Failed: the gradient of w has the wrong sign"""

    def backward(self, X, Y, dLdY, memory):
        dX, dW = super().backward(X, Y, dLdY, memory)
        return dX, -dW
