"""Correct: smooth tanh layer, no learnables, custom backward. Every check must pass."""


class Tanh:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="tanh"):
        self.name = name

    def predict(self, X):
        xp = X.__array_namespace__()
        return xp.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        return dLdY * (1 - Y * Y)
