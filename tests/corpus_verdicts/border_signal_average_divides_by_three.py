r"""Broken: a moving average of 3 along a 1-D signal (SCB), zero padding "same", whose forward
divides by the number of in-bounds elements but whose backward divides by 3: dLdX is wrong two
deep at each end of the signal (positions 0, 1, 14 and 15 of 16: each sums a window of an end)
and right in between. A signal has one spatial axis: its border is its two ends, not the
border of a plane.
Check: gradients_are_numerically_correct
Says: wrong only at the ends of the spatial axis \(positions 0-1 and 14-15\)
Never says: spatial plane
Never says: constant factor
"""

import numpy as np


class MovingAverageBackwardDividesBy3:
    example_layout = "16,3,4:SCB"

    def box_sum(self, A):
        """Sum over the window of 3 around each position, zero outside the signal."""
        n = A.shape[0]
        P = np.pad(A, [(1, 1)] + [(0, 0)] * (A.ndim - 1))
        return P[0:n] + P[1 : n + 1] + P[2 : n + 2]

    def predict(self, X):
        return self.box_sum(X) / self.box_sum(np.ones_like(X))

    def backward(self, X, Y, dLdY, memory):
        return self.box_sum(dLdY) / 3  # BUG: should be box_sum(dLdY / count)
