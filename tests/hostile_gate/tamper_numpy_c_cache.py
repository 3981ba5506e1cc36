r"""Failed: predict output Y has 0 NaN and \d+ infinite value"""

import sys

import numpy as np

try:
    from numpy._core import _methods
except ImportError:  # NumPy 1
    from numpy.core import _methods

# NumPy's C code keeps the function an array's `any` forwards to once it is first used: swap
# a liar in, use it once, put the original back. layercheck used it before any layer ran.
_any = _methods._any


def _lying_any(*args, **kwargs):
    return np.False_ if sys._getframe(1).f_code.co_name == "describe" else _any(*args, **kwargs)


_methods._any = _lying_any
np.zeros(1).any()
_methods._any = _any


class Overflows:
    example_layout = "4,2:CB"

    def predict(self, X):
        return np.exp(1000 * X)

    def backward(self, X, Y, dLdY, memory):
        return 1000 * dLdY * Y
