"""Correct but awkward: Y = 1e-6 * X**2 with backward dLdX = 2e-6 * X * dLdY. Outputs and
gradients are tiny, so absolute tolerances alone would hide any error and relative ones
must be scaled properly. Must pass every check."""


class TinyValues:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="tiny_values"):
        self.name = name

    def predict(self, X):
        return 1e-6 * (X * X)

    def backward(self, X, Y, dLdY, memory):
        return 2e-6 * X * dLdY
