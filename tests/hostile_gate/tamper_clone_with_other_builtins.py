r"""Failed: the module replaced layercheck\.checks\.gradients\._verdicts"""

import builtins
import types

from layercheck.checks import gradients

# A copy of one of layercheck's functions, of the same code and globals, made while the
# module's builtins had a `range` that yields nothing: equal to the eye, not in what it does.
_original = gradients._verdicts
_builtins = vars(gradients)["__builtins__"]
_evil = dict(vars(builtins), range=lambda *args: ())
vars(gradients)["__builtins__"] = _evil
_clone = types.FunctionType(_original.__code__, _original.__globals__, _original.__name__)
vars(gradients)["__builtins__"] = _builtins
_clone.__qualname__ = _original.__qualname__
gradients._verdicts = _clone


class WrongSquare:
    example_layout = "3,2:CB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        return 3 * dLdY * X
