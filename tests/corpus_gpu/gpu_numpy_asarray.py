"""A layer that converts its input with numpy.asarray, which CuPy refuses.
Must fail: predict_is_consistent_on_gpu"""

import numpy as np


class CallsNumpyAsarray:
    example_layout = "4,5,6:SCB"

    def predict(self, X):
        return np.asarray(X) * 2

    def backward(self, X, Y, dLdY, memory):
        return dLdY * 2
