r"""Broken: Y = X(row 0) - X(row 1), the difference of two rows, whose backward has the wrong sign: the right
gradient (dL/dY, -dL/dY) is odd under reversing the rows, so the gradient returned is the right one reversed along
them too. The sign is the simpler claim, and is said; the reversal is not.
Check: gradients_are_numerically_correct
Says: the gradient of X has the wrong sign
Never says: flipped
Never says: reversed
"""

import numpy as np


class RowDifference:
    example_layout = "2,5,3:SCB"

    def predict(self, X):
        return X[:1] - X[1:]

    def backward(self, X, Y, dLdY, memory):
        return np.concatenate([-dLdY, dLdY])  # BUG: the sign
