r"""Failed: the layer replaced numpy\.isfinite as its objects were freed after the checks"""

import numpy as np


class TampersWhenFreed:
    """A correct layer whose first instance (the one the run sets up first and keeps to the
    end) replaces numpy.isfinite when it is freed: after the checks, before the worker sends
    its report."""

    example_layout = "3,2:CB"
    made = 0

    def __init__(self):
        TampersWhenFreed.made += 1
        self.first = TampersWhenFreed.made == 1

    def predict(self, X):
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        return 2 * dLdY

    def __del__(self):
        if self.first:
            np.isfinite = lambda x, *args, **kwargs: np.ones(np.shape(x), dtype=bool)
