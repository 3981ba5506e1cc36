r"""Failed: the module replaced builtins\.all, builtins\.any and numpy\.isfinite when it was imported"""

import builtins
import sys

import numpy as np

_any, _all = builtins.any, builtins.all


def _asked_by_the_guard():
    return "sandbox" in sys._getframe(2).f_code.co_filename


def any(iterable):  # noqa: A001 - lies to layercheck's sandbox only
    return False if _asked_by_the_guard() else _any(iterable)


def all(iterable):  # noqa: A001
    return True if _asked_by_the_guard() else _all(iterable)


builtins.any, builtins.all = any, all
np.isfinite = lambda x, *args, **kwargs: np.ones(np.shape(x), dtype=bool)


class NaNOutputsLyingBuiltins:
    """A hunt: builtins that lie to the sandbox's code alone, and an isfinite that finds every
    output finite. Every output is NaN: outputs_are_finite must fail."""

    example_layout = "3,2:CB"

    def predict(self, X):
        return X * np.nan
