r"""Broken: Y = 2 X, whose backward returns dL/dY: off by a constant factor 1/2, which is also dL/dY left out of
the right 2 dL/dY. The factor is the simpler claim, and is said; the identity path is not.
Check: gradients_are_numerically_correct
Says: off by a constant factor 1/2
Never says: identity path
Never says: left out
"""


class Doubles:
    example_layout = "4,4,6,3:SSCB"

    def predict(self, X):
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        return dLdY  # BUG: 2 * dLdY
