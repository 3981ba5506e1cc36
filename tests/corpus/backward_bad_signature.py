"""Broken: backward takes only (self, X, dLdY); the contract calls
backward(X, Y, dLdY, memory). Must fail: function_syntaxes_are_correct."""


class BackwardBadSignature:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="bad_signature"):
        self.name = name

    def predict(self, X):
        return 3 * X

    def backward(self, X, dLdY):  # BUG: Y and memory parameters missing
        return 3 * dLdY
