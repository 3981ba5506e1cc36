"""Y = X.^2 with dLdX = 2X .* dLdY: the real-valued derivative, conj missing (right only
for real inputs; run with a complex dtype).
Must fail: gradients_are_numerically_correct (argument X)"""


class ComplexSquareNoConj:
    example_layout = "4,3,5,6:SSCB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        return 2 * X * dLdY  # BUG: should be conj(2X) * dLdY
