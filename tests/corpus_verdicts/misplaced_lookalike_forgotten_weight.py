"""Broken: a weighted residual sum Y = X1 + 0.5 * X2 whose backward forgets the 0.5 on X2: dLdX2
is off by a constant factor 2, and equals X1's gradient only because X1's weight is 1.
Check: gradients_are_numerically_correct
Says: the gradient of X2 is off by a constant factor 2
Never says: the gradient of X1
"""


class WeightedResidual:
    example_layout = ["5,5,3,4:SSCB", "5,5,3,4:SSCB"]

    def predict(self, X1, X2):
        return X1 + 0.5 * X2

    def backward(self, X1, X2, Y, dLdY, memory):
        return dLdY, dLdY.copy()  # BUG: dLdX2 = 0.5 * dLdY
