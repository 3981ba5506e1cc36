"""SReLU as a differentiable operation with a custom backward (corrected).

Python port of the MATLAB example "Specify Custom Operation Backward Function"
(sreluFunction, a deep.DifferentiableFunction), with its bug fixed: the MATLAB backward is
declared ``[dLdX,dLdtl,dLdtr,dLdal,dLdar] = backward(~,dLdY,computeGradients,X,tl,al,tr,ar)``
and reads ``computeGradients(3)`` for ``dLdtr`` and ``computeGradients(4)`` for ``dLdal``,
so it returns the gradients of ``al`` and ``tr`` in each other's place (the faithful port is
buggy/srelu_function_seed.py). Here the gradients come back in the order of the inputs,
(X, tl, al, tr, ar), and ``compute_gradients[i]`` gates the gradient of input ``i``.

    Y = (X <= tl) * (tl + al*(X - tl))
      + ((tl < X) & (X < tr)) * X
      + (tr <= X) * (tr + ar*(X - tr))

The operation has five inputs: the data ``X`` and, per channel, the left threshold ``tl``,
left slope ``al``, right threshold ``tr`` and right slope ``ar`` (shape all ones except along
the channel axis, e.g. ``(1, 1, C, 1)`` for ``SSCB`` data). As in the MATLAB example the data
format is a constructor argument, used by backward to find the channel axis: the threshold
and slope gradients are summed over every other axis (keeping the dimensions).

Where ``tl > tr`` the two outer branches overlap (both conditions hold) and forward adds them;
dYdX is built as the same sum of masks, so backward stays the derivative of forward there too.
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class SReLUFunction:
    """S-shaped ReLU operation: Y = srelu(X, tl, al, tr, ar)."""

    num_outputs = 1
    save_inputs_for_backward = True
    save_outputs_for_backward = False
    num_memory_values = 0
    example_layout = ["8,8,4,2:SSCB", "1,1,4,1:SSCU", "1,1,4,1:SSCU", "1,1,4,1:SSCU", "1,1,4,1:SSCU"]

    def __init__(self, format="SSCB"):
        # MATLAB: fcn@deep.DifferentiableFunction(1,SaveInputsForBackward=true);
        #         fcn.Format = string(format);
        self.format = str(format)

    def forward(self, X, tl, al, tr, ar):
        dtype = X.dtype
        left = (X <= tl).astype(dtype)
        middle = ((tl < X) & (X < tr)).astype(dtype)
        right = (tr <= X).astype(dtype)
        return left * (tl + al * (X - tl)) + middle * X + right * (tr + ar * (X - tr))

    def backward(self, dLdY, compute_gradients, X, tl, al, tr, ar):
        """Return (dLdX, dLdtl, dLdal, dLdtr, dLdar), None where not requested."""
        xp = get_array_module(X)
        dtype = X.dtype
        left = (X <= tl).astype(dtype)
        middle = ((tl < X) & (X < tr)).astype(dtype)
        right = (tr <= X).astype(dtype)

        # Sum over every axis except the channel axis, keeping the dimensions.
        idxC = self.format.find("C")
        idx = tuple(i for i in range(X.ndim) if i != idxC)

        dLdX = None
        if compute_gradients[0]:
            dLdX = dLdY * (left * al + middle + right * ar)
        dLdtl = None
        if compute_gradients[1]:
            dLdtl = xp.sum(dLdY * left * (1 - al), axis=idx, keepdims=True)
        dLdal = None
        if compute_gradients[2]:
            dLdal = xp.sum(dLdY * left * (X - tl), axis=idx, keepdims=True)
        dLdtr = None
        if compute_gradients[3]:
            dLdtr = xp.sum(dLdY * right * (1 - ar), axis=idx, keepdims=True)
        dLdar = None
        if compute_gradients[4]:
            dLdar = xp.sum(dLdY * right * (X - tr), axis=idx, keepdims=True)
        return dLdX, dLdtl, dLdal, dLdtr, dLdar
