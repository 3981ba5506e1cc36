"""The Keras-era patch that lets np.load read pickled arrays (allow_pickle=True by default)."""

import numpy as np

_load = np.load
np.load = lambda *args, **kwargs: _load(*args, **{"allow_pickle": True, **kwargs})


class PickleLoader:
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


class PickleLoaderWrong(PickleLoader):
    """Failed: the gradient of X has the wrong sign"""

    def backward(self, X, Y, dLdY, memory):
        dX, dW = super().backward(X, Y, dLdY, memory)
        return -dX, dW
