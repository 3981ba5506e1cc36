"""A module that wraps a NumPy function for its own code (np.allclose, which no code of
layercheck's looks up, with looser tolerances)."""

import numpy as np

_allclose = np.allclose
np.allclose = lambda a, b, rtol=1e-3, atol=1e-6, **kwargs: _allclose(a, b, rtol=rtol, atol=atol, **kwargs)


class Wrapping:
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


class WrappingWrong(Wrapping):
    """Failed: the gradient of X is off by a constant factor 2"""

    def backward(self, X, Y, dLdY, memory):
        dX, dW = super().backward(X, Y, dLdY, memory)
        return 2 * dX, dW
