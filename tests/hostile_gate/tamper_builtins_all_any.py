r"""Failed: the module replaced builtins\.all and builtins\.any when it was imported"""

import builtins

import numpy as np

# A hunt: with `all` always true and `any` always false, the guard's own comparisons saw
# nothing changed, and this layer, whose outputs are all NaN, passed (exit 0).
builtins.all = lambda iterable: True
builtins.any = lambda iterable: False


class NaNOutputsBlindGuard:
    """Every output is NaN: outputs_are_finite must fail, whatever all and any say."""

    example_layout = "3,2:CB"

    def predict(self, X):
        return X * np.nan
