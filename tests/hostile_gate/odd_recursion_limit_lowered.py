"""Passed"""

import sys

# A recursion limit lowered below what layercheck's own code needs is raised back, silently:
# it cannot make a wrong layer pass, and a correct one passes.
sys.setrecursionlimit(60)


class DoubleLowersTheLimit:
    example_layout = "3,2:CB"

    def predict(self, X):
        sys.setrecursionlimit(40)
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        return 2 * dLdY
