"""Correct: ReLU with a custom backward (kink at 0). Every check must pass."""


class ReLU:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="relu"):
        self.name = name

    def predict(self, X):
        xp = X.__array_namespace__()
        return xp.maximum(X, 0)

    def backward(self, X, Y, dLdY, memory):
        return dLdY * (X > 0).astype(X.dtype)
