r"""Failed: the layer replaced numpy\.isfinite during \w+"""

import numpy as np


class WrongSquareTampersLater:
    """Imports clean; its first predict replaces np.isfinite (and keeps it replaced)."""

    example_layout = "3,2:CB"

    def predict(self, X):
        np.isfinite = lambda *args, **kwargs: True
        return X * X

    def backward(self, X, Y, dLdY, memory):
        return 3 * dLdY * X
