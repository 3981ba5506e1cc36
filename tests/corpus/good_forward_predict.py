"""Correct: SiLU layer Y = X * sigmoid(X) with both predict and forward (same values).
forward returns (Y, memory), memory caching sigmoid(X), which backward uses.
Every check must pass (backward_is_repeatable included: nothing is cached on self)."""


def _sigmoid(xp, X):
    # exp(-log(1 + exp(-X))), stable for large |X|; keeps the dtype of X.
    return xp.exp(-xp.logaddexp(0, -X))


class SiLU:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="silu"):
        self.name = name

    def predict(self, X):
        xp = X.__array_namespace__()
        return X * _sigmoid(xp, X)

    def forward(self, X):
        xp = X.__array_namespace__()
        s = _sigmoid(xp, X)
        return X * s, s

    def backward(self, X, Y, dLdY, memory):
        xp = X.__array_namespace__()
        s = memory if memory is not None else _sigmoid(xp, X)
        return dLdY * (s + X * s * (1 - s))
