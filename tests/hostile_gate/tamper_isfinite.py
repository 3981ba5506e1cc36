r"""Failed: the module replaced numpy\.isfinite when it was imported"""

import numpy as np

np.isfinite = lambda x, *args, **kwargs: np.ones(np.shape(x), dtype=bool)


class NaNOutputs:
    """Every output is NaN: outputs_are_finite must fail, whatever isfinite says."""

    example_layout = "3,2:CB"

    def predict(self, X):
        return X * np.nan
