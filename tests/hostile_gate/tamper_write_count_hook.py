r"""Failed: the layer replaced the code of layercheck\.numerics\.compare\.mismatch and the code of layercheck\.sandbox\.integrity\._count_writes"""

# The audit hook that counts writes of functions' code and defaults (sandbox.integrity) cannot
# be removed, but its defaults can be replaced: with a count of the layer's own, later writes
# move a count no look reads. Replacing them is a write the hook still counts, so the next
# look compares every function and finds both; the wrong gradient (3/2) still fails.

import itertools

import layercheck.numerics.compare as compare
from layercheck.sandbox import integrity


class BlindsTheWriteCount:
    example_layout = "3,2:CB"
    done = False

    def predict(self, X):
        if not BlindsTheWriteCount.done:
            BlindsTheWriteCount.done = True
            own = itertools.count()
            integrity._count_writes.__defaults__ = (own.__next__, type, type(lambda: 0))
            compare.mismatch.__defaults__ = (1e9, 1e9)  # a write the count no longer sees
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        return 3 * dLdY
