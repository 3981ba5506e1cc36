"""Broken: Y = X - 0.5 * X[observation 0] (every observation measured against the first), whose backward returns dLdY:
only observation 0 moves the other observations' outputs, so the dependence is left out for it alone.
Check: gradients_are_numerically_correct
Says: wrong only in observation 0 of X
Never says: other observations' outputs
"""


class AnchorObservation:
    example_layout = "4,4,3,6:SSCB"

    def predict(self, X):
        return X - 0.5 * X[..., :1]

    def backward(self, X, Y, dLdY, memory):
        return dLdY  # BUG: observation 0's term, -0.5 * (sum of dLdY over the batch), is left out
