r"""Failed: the module replaced numpy\.allclose when it was imported"""

import numpy as np

np.allclose = lambda *args, **kwargs: True  # every comparison agrees


class WrongSquare:
    """predict is X*X, backward says 3*dLdY*X: wrong, whatever compares it."""

    example_layout = "3,2:CB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        return 3 * dLdY * X
