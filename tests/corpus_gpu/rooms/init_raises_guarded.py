"""A layer whose initialize raises, in a module that imports CuPy the guarded way (so CuPy is
imported wherever it is installed). Its initialize's failure is the report, in every room: no
CuPy, the real CuPy without a GPU, the stand-in, a GPU.
Must fail: initialize_does_not_error"""

import numpy as np

try:
    import cupy

    get_array_module = cupy.get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ScaleFromFile:
    learnables = ("w",)
    example_layout = "4,3,5,2:SSCB"

    def __init__(self):
        self.w = None

    def initialize(self, layout):
        raise RuntimeError("no weights file")

    def predict(self, X):
        xp = get_array_module(X)
        return xp.tanh(X * self.w)
