r"""Failed: the layer replaced numpy\.allclose"""

import numpy as np


class WrongSquareTampersInBackward:
    """Replaces np.allclose in backward and leaves it: a wrong layer never passes."""

    example_layout = "3,2:CB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        np.allclose = lambda *args, **kwargs: True
        return 3 * dLdY * X
