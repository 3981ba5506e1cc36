r"""Failed: predict returned a numpy\.ma\.MaskedArray as Y"""

import numpy as np


class MaskedOutput:
    example_layout = "4,3,2:SCB"

    def predict(self, X):
        return np.ma.masked_array(np.log(X), mask=X < 0)
