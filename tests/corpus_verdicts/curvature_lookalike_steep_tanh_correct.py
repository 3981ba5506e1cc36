"""Correct: Y = tanh(10 X) alone, with the exact derivative 10 / cosh(10 X)^2 (no cancellation in 1 - Y^2).
Smooth everywhere; a probe of its one argument estimated its error from the second differences
(the curvature, ten times steeper than tanh's) and was left undecided at every step.
Never says: bent sharply
"""

import numpy as np


class SteepTanh:
    example_layout = "5,3:CB"

    def predict(self, X):
        return np.tanh(10 * X)

    def backward(self, X, Y, dLdY, memory):
        with np.errstate(over="ignore"):  # cosh overflows far out, where the derivative is 0
            return dLdY * (10 / np.cosh(10 * X) ** 2)
