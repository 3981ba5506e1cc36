r"""Failed: the module replaced layercheck\.contract\.calls\._before"""

import numpy as np

from layercheck.contract import calls

calls._before = None  # no look owed taken before a call of the layer


class WrongSquareTampersLater:
    example_layout = "3,2:CB"

    def predict(self, X):
        np.isfinite = lambda *args, **kwargs: True
        return X * X

    def backward(self, X, Y, dLdY, memory):
        return 3 * dLdY * X
