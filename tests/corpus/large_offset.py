"""Correct but awkward: Y = X + 1000 with backward dLdX = dLdY. The large offset makes
finite differences lose digits to cancellation; the checker must not report a false
failure. Must pass every check."""


class LargeOffset:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="large_offset"):
        self.name = name

    def predict(self, X):
        return X + 1000.0

    def backward(self, X, Y, dLdY, memory):
        return dLdY * 1.0
