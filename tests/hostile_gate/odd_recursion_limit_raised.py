"""Passed"""

import sys

# A recursion limit raised is harmless: kept, and no word of tampering.
sys.setrecursionlimit(50_000)


class DoubleRaisesTheLimit:
    example_layout = "3,2:CB"

    def predict(self, X):
        sys.setrecursionlimit(100_000)
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        return 2 * dLdY
