"""A common recipe (a hunt): `json.JSONEncoder.default` taught NumPy's types, so that
`json.dumps` writes arrays and NumPy scalars anywhere in a library's code."""

import json

import numpy as np

_default = json.JSONEncoder.default


def _numpy_default(self, o):
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.generic):
        return o.item()
    return _default(self, o)


json.JSONEncoder.default = _numpy_default


class EncodesNumPy:
    """Passed"""

    learnables = ("w",)
    example_layout = "6,4:CB"

    def __init__(self):
        self.w = np.linspace(0.5, 1.5, 6).reshape(6, 1)

    def predict(self, X):
        return self.w * np.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        t = np.tanh(X)
        return dLdY * self.w * (1 - t * t), (dLdY * t).sum(axis=1, keepdims=True)


class EncodesNumPyWrong(EncodesNumPy):
    """Failed: the gradient of w is off by a constant factor 2"""

    def backward(self, X, Y, dLdY, memory):
        dX, dw = super().backward(X, Y, dLdY, memory)
        return dX, 2 * dw
