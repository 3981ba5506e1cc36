r"""Failed: the layer replaced builtins\.abs during gradients_are_numerically_correct"""

import builtins
import sys

_abs = builtins.abs


def _lying_abs(x):
    return 0.0 if sys._getframe(1).f_code.co_name == "discrepancy" else _abs(x)


def _inside(name):
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == name:
            return True
        frame = frame.f_back
    return False


class WrongSquare:
    """Replaces builtins.abs during the gradient check only, and puts it back when the check
    lets go of the layer (a finalizer), before the look after the check."""

    example_layout = "3,2:CB"

    def predict(self, X):
        if _inside("gradients_are_numerically_correct"):
            builtins.abs = _lying_abs
        return X * X

    def backward(self, X, Y, dLdY, memory):
        return 3 * dLdY * X

    def __del__(self):
        builtins.abs = _abs
