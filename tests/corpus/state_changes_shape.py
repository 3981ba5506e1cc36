"""Broken state: the hidden state starts as one column (C, 1), MATLAB-style, and predict
returns it with one column per observation (C, B): an updated state must keep its shape.
Must fail: predict_returns_valid_states"""

import numpy as np


class BroadcastState:
    state = ("h",)
    example_layout = "5,4:CB"

    def __init__(self):
        self.h = None

    def initialize(self, layout):
        if self.h is None:
            self.h = np.zeros((layout.size[layout.find("C")], 1))

    def predict(self, X):
        Y = X + self.h
        return Y, Y  # BUG: the updated state has the batch size, the state had one column
