"""Correct: plain ReLU with a correct backward. The test-suite feeds it inputs placed near
the kink at 0 (within a few finite-difference steps); the checker must not report a false
failure there. Must pass every check (gradients_are_numerically_correct may be incomplete,
never failed)."""


class NearKinkReLU:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="relu"):
        self.name = name

    def predict(self, X):
        xp = X.__array_namespace__()
        return xp.maximum(X, 0)

    def backward(self, X, Y, dLdY, memory):
        return dLdY * (X > 0).astype(dLdY.dtype)
