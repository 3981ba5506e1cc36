"""Correct: Y = X.^2, holomorphic, so dLdX = conj(f'(X)) .* dLdY = conj(2X) .* dLdY
(gradient convention dL/da + i*dL/db). Every check must pass."""


class ComplexSquare:
    example_layout = "4,3,5,6:SSCB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        xp = X.__array_namespace__()
        return xp.conj(2 * X) * dLdY
