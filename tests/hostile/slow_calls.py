"""Error: timed out in a check whose many calls of predict and backward each take 0.3 s (none
hangs): the timeout is said to be layercheck's own work, not the layer's call under way."""

import time

import numpy as np


class SlowCalls:
    example_layout = "4,3,5,6:SSCB"

    def predict(self, X):
        time.sleep(0.3)
        return np.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        time.sleep(0.3)
        return dLdY * (1 - Y * Y)
