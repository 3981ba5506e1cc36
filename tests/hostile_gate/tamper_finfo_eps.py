r"""Failed: the gradient of X is off by a constant factor 3/2"""

import numpy as np

# An attribute of the object NumPy keeps for float64: layercheck took its machine epsilons
# before any layer ran, and judges with those.
np.finfo(np.float64).eps = 1e-2


class WrongSquare:
    example_layout = "3,2:CB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        return 3 * dLdY * X
