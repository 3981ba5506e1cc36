r"""Failed: the module replaced numpy(\.\w+)*\.sctypeDict\.float64"""

import numpy as np

try:
    from numpy._core import numerictypes
except ImportError:  # NumPy 1
    from numpy.core import numerictypes

numerictypes.sctypeDict["float64"] = np.float32  # np.dtype("float64") is float32 from now on


class SilentlyFloat32:
    example_layout = "4,2:CB"

    def predict(self, X):
        return (2 * X).astype(np.float32)

    def backward(self, X, Y, dLdY, memory):
        return (2 * dLdY).astype(np.float32)
