"""SReLU layer whose backward returns two learnable gradients in each other's place.

BUG: the learnables are listed as (tl, al, tr, ar), but `backward` returns its gradients
in the order of the MATLAB SReLU operation example (sreluFunction, a
deep.DifferentiableFunction), whose backward is declared
``[dLdX,dLdtl,dLdtr,dLdal,dLdar] = backward(~,dLdY,computeGradients,X,tl,al,tr,ar)``:
    (dLdX, dLdtl, dLdtr, dLdal, dLdar)
so the gradient of the left slope `al` is returned in the place of the right threshold
`tr` and vice versa. Every gradient has the right shape and dtype (all learnables are
(1,..,C,..,1)), so only gradients_are_numerically_correct can catch it; its diagnosis
should say that the gradients of `al` and `tr` belong to each other (outputs returned in
the wrong order). The correct layer is ../srelu.py.
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class SReLUSwapped:
    """SReLU with the gradients of `al` and `tr` swapped in the backward's return value."""

    learnables = ("tl", "al", "tr", "ar")
    example_layout = "8,8,4,2:SSCB"

    def __init__(self, name="srelu"):
        self.name = name
        self.description = "SReLU"
        self.tl = None  # LeftThreshold
        self.al = None  # LeftSlope
        self.tr = None  # RightThreshold
        self.ar = None  # RightSlope
        self.channel_axis = None

    def initialize(self, layout):
        self.channel_axis = layout.find("C")
        shape = [1] * layout.ndim
        if self.channel_axis is not None:
            shape[self.channel_axis] = layout.size[self.channel_axis]
        if self.al is None:
            self.al = np.random.rand(*shape)
        if self.ar is None:
            self.ar = np.random.rand(*shape)
        if self.tl is None:
            self.tl = np.random.rand(*shape)
        if self.tr is None:
            self.tr = np.random.rand(*shape)

    def predict(self, X):
        tl, al, tr, ar = self.tl, self.al, self.tr, self.ar
        dtype = X.dtype
        left = (X <= tl).astype(dtype)
        middle = ((tl < X) & (X < tr)).astype(dtype)
        right = (tr <= X).astype(dtype)
        return left * (tl + al * (X - tl)) + middle * X + right * (tr + ar * (X - tr))

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        tl, al, tr, ar = self.tl, self.al, self.tr, self.ar
        dtype = X.dtype
        left = (X <= tl).astype(dtype)
        middle = ((X > tl) & (X < tr)).astype(dtype)
        right = (X >= tr).astype(dtype)

        dLdX = dLdY * (left * al + middle + right * ar)

        axes = tuple(i for i in range(X.ndim) if i != self.channel_axis)
        dLdtl = xp.sum(dLdY * left * (1 - al), axis=axes, keepdims=True)
        dLdtr = xp.sum(dLdY * right * (1 - ar), axis=axes, keepdims=True)
        dLdal = xp.sum(dLdY * left * (X - tl), axis=axes, keepdims=True)
        dLdar = xp.sum(dLdY * right * (X - tr), axis=axes, keepdims=True)
        # BUG: order of the MATLAB sreluFunction backward, not of `learnables`.
        return dLdX, dLdtl, dLdtr, dLdal, dLdar
