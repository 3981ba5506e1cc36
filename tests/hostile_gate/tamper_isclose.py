r"""Failed: the module replaced numpy\.isclose when it was imported"""

import numpy as np

np.isclose = lambda a, b, *args, **kwargs: np.ones(np.broadcast(a, b).shape, dtype=bool)


class WrongSquare:
    example_layout = "3,2:CB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        return 3 * dLdY * X
