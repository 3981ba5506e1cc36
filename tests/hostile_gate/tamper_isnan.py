r"""Failed: the module replaced numpy\.isnan when it was imported"""

import numpy as np

np.isnan = lambda x, *args, **kwargs: np.zeros(np.shape(x), dtype=bool)


class NaNOutputs:
    example_layout = "3,2:CB"

    def predict(self, X):
        return X * np.nan
