r"""Failed: predict output Y with float64 inputs is float16, expected float64"""

import numpy as np


class OddFloat16Output:
    """Right but for its dtype: every check compares float16 results without an internal error."""

    example_layout = "4,3:CB"

    def predict(self, X):
        return (3 * X).astype(np.float16)

    def backward(self, X, Z, dLdZ, memory):
        return (3 * dLdZ).astype(np.float16)
