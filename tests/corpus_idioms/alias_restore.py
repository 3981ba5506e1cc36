"""An older library restores the aliases NumPy removed, so that its code imports."""

import numpy as np

np.int = int
np.float = float
np.complex = complex
np.object = object
np.str = str
np.long = int
np.unicode = str
np.asscalar = lambda a: a.item()
# Only where they are missing: NumPy 2 has np.bool (its own type) and np.float_ is gone.
for _name, _value in (("bool", bool), ("float_", np.float64), ("NaN", np.nan), ("Inf", np.inf)):
    if _name not in vars(np):
        setattr(np, _name, _value)


class AliasRestored:
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


class AliasRestoredWrong(AliasRestored):
    """Failed: the gradient of w is off by a constant factor 2"""

    def backward(self, X, Y, dLdY, memory):
        dX, dW = super().backward(X, Y, dLdY, memory)
        return dX, 2 * dW
