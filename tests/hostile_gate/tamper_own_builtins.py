r"""Failed: the module replaced layercheck\.sandbox\.own\.OWN_BUILTINS\.all, layercheck\.sandbox\.own\.OWN_BUILTINS\.any and numpy\.isfinite"""

import numpy as np

from layercheck.sandbox.own import OWN_BUILTINS

# A review: the sandbox's own copy of the builtins, which its comparisons resolve `all` and
# `any` in, is within a layer's reach; with NumPy's isfinite replaced too, a layer whose
# outputs are all NaN passed every check.
OWN_BUILTINS["all"] = lambda iterable: True
OWN_BUILTINS["any"] = lambda iterable: False
np.isfinite = lambda x, *args, **kwargs: np.ones(np.shape(x), dtype=bool)


class NaNOutputsOwnBuiltins:
    """Every output is NaN: outputs_are_finite must fail."""

    example_layout = "3,2:CB"

    def predict(self, X):
        return X * np.nan
