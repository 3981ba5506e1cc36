"""Broken in precision only: tanh computed in float32 inside and cast back, so with float64
inputs it returns float64 arrays with float32's round-off. The checks that compare two
computations (observations alone and together) judge it at float32, the precision it really
computes in, and say so; only the dtype check fails.
Must fail: predict_is_consistent_in_type"""

import numpy as np


class TanhInFloat32:
    example_layout = "4,3,5,6:SSCB"

    def predict(self, X):
        return np.tanh(X.astype(np.float32)).astype(X.dtype)

    def backward(self, X, Y, dLdY, memory):
        y = Y.astype(np.float32)
        return (dLdY.astype(np.float32) * (1 - y * y)).astype(X.dtype)
