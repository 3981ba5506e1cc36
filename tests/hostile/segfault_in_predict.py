"""Error: the worker died with signal SIGSEGV (reads address 0 in predict)."""

import ctypes


class SegfaultInPredict:
    example_layout = "3,2:CB"

    def predict(self, X):
        ctypes.string_at(0)
        return X
