"""Correct: Y = abs(X) with backward dLdX = sign(X) * dLdY (kink at 0). Every check must pass."""


class Abs:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="abs"):
        self.name = name

    def predict(self, X):
        xp = X.__array_namespace__()
        return xp.abs(X)

    def backward(self, X, Y, dLdY, memory):
        xp = X.__array_namespace__()
        return dLdY * xp.sign(X)
