"""A layer that multiplies by a NumPy constant array, which CuPy refuses to mix in.
Must fail: predict_is_consistent_on_gpu"""

import numpy as np


class NumpyConstant:
    example_layout = "4,5,6:SCB"

    def predict(self, X):
        return X * np.full(X.shape, 3.0, dtype=X.dtype)

    def backward(self, X, Y, dLdY, memory):
        return dLdY * 3
