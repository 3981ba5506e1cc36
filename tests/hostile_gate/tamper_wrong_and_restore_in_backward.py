r"""Failed: the layer replaced numpy\.isfinite"""

import numpy as np


class WrongSquareTampersInBackward:
    """Replaces np.isfinite in backward and leaves it: a wrong layer never passes."""

    example_layout = "3,2:CB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        np.isfinite = lambda *args, **kwargs: True
        return 3 * dLdY * X
