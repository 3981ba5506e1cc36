r"""Failed: the layer replaced layercheck\.sandbox\.integrity\._FUNCTION_WRITES and the code of layercheck\.numerics\.compare\.mismatch"""

# A fresh count in place of the one the audit hook moves: it never moves, so a look would take
# the functions for unchanged. The name is watched: the look that reads it finds it replaced
# before it trusts it, and compares every function.

import itertools

import layercheck.numerics.compare as compare
from layercheck.sandbox import integrity


class ReplacesTheWriteCount:
    example_layout = "3,2:CB"
    done = False

    def predict(self, X):
        if not ReplacesTheWriteCount.done:
            ReplacesTheWriteCount.done = True
            integrity._FUNCTION_WRITES = itertools.count()
            compare.mismatch.__defaults__ = (1e9, 1e9)
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        return 3 * dLdY
