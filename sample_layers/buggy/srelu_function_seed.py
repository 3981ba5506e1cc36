"""SReLU operation: faithful port of the MATLAB example, INCLUDING its bug.

BUG (from the MATLAB documentation example "Specify Custom Operation Backward Function",
sreluFunction, a deep.DifferentiableFunction): the operation's inputs are
``forward(~,X,tl,al,tr,ar)``, in the order (X, tl, al, tr, ar), but its backward is declared

    function [dLdX,dLdtl,dLdtr,dLdal,dLdar] = backward(~,dLdY,computeGradients,X,tl,al,tr,ar)

and gates each gradient by the mask entry of its place in that output list, not of its input:

    if computeGradients(1)  -> dLdX      if computeGradients(4)  -> dLdal
    if computeGradients(2)  -> dLdtl     if computeGradients(5)  -> dLdar
    if computeGradients(3)  -> dLdtr

Ported to Python (0-based): ``compute_gradients[0..4]`` gate dLdX, dLdtl, dLdtr, dLdal, dLdar,
and backward returns ``(dLdX, dLdtl, dLdtr, dLdal, dLdar)``. The caller reads the returned
values in input order (dLdX, dLdtl, dLdal, dLdtr, dLdar), so the third value (taken as the
gradient of the left slope ``al``) is really the gradient of the right threshold ``tr``, and
the fourth (taken as the gradient of ``tr``) is really the gradient of ``al``. That is a swap
of exactly two arguments: dLdX, dLdtl and dLdar are right. Both wrong values have the shape
(1,..,C,..,1) of the slot they land in, and the mask indices agree with the return places
(entry i gates the value returned in place i, None where it is False), so the size, type and
backward_respects_compute_gradients checks pass; only the gradient check can catch it, and
layercheck must name the swap: the gradients of ``al`` and ``tr`` are returned in each other's
place (outputs returned in the wrong order).
Must fail: gradients_are_numerically_correct (arguments al and tr)

The corrected operation is ../srelu_function.py.

Two more defects of the MATLAB text are NOT reproduced, so that the port runs and the order is
the only bug (both would stop the MATLAB code before it returns anything):

* backward's first argument is ``~`` but its body reads ``fcn.Format`` (``fcn`` is undefined
  there); the port reads ``self.format``.
* ``dYdX(X <= tl) = al;`` (and ``= ar``) assign the 1x1xC array to a logical selection, which
  MATLAB only accepts for a scalar (C = 1). The port writes the intended broadcast value,
  ``dYdX = (X <= tl)*al + ((tl < X) & (X < tr)) + (tr <= X)*ar``, the same sum of masks as
  forward (as the layer ports in this folder do). Successive assignments would instead keep
  only ``ar`` where tl > tr and tr <= X <= tl, where forward's slope is al + ar.
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class SReLUFunctionSeed:
    """SReLU operation whose backward returns the gradients of `al` and `tr` swapped."""

    num_outputs = 1
    save_inputs_for_backward = True
    save_outputs_for_backward = False
    num_memory_values = 0
    example_layout = ["8,8,4,2:SSCB", "1,1,4,1:SSCU", "1,1,4,1:SSCU", "1,1,4,1:SSCU", "1,1,4,1:SSCU"]

    def __init__(self, format="SSCB"):
        # Create a sreluFunction.
        #
        # fcn = sreluFunction(format) create a sreluFunction object
        # that operations on data with the specified format.
        # MATLAB: fcn@deep.DifferentiableFunction(1,SaveInputsForBackward=true);
        self.format = str(format)

    def forward(self, X, tl, al, tr, ar):
        # Forward input data through the function and output the result.
        #
        # Inputs:
        #     X  - Function input data
        #     tl - Left threshold
        #     al - Left slope
        #     tr - Right threshold
        #     ar - Right slope
        # Outputs:
        #     Y  - Output of function forward function
        dtype = X.dtype
        Y = (
            (X <= tl).astype(dtype) * (tl + al * (X - tl))
            + ((tl < X) & (X < tr)).astype(dtype) * X
            + (tr <= X).astype(dtype) * (tr + ar * (X - tr))
        )
        return Y

    def backward(self, dLdY, compute_gradients, X, tl, al, tr, ar):
        # Backward propagate the derivative of the loss function through the function.
        #
        # Outputs (MATLAB: [dLdX,dLdtl,dLdtr,dLdal,dLdar]):
        #     dLdX  - Derivative of loss with respect to function input
        #     dLdtl - Derivative of loss with respect to left threshold
        #     dLdtr - Derivative of loss with respect to right threshold
        #     dLdal - Derivative of loss with respect to left slope
        #     dLdar - Derivative of loss with respect to right slope
        xp = get_array_module(X)
        dtype = X.dtype

        ndims = len(self.format)  # ndims = strlength(fcn.Format);
        idxC = self.format.find("C")  # idxC = strfind(fcn.Format,"C");  (-1 if none)

        dLdX = None
        if compute_gradients[0]:  # if computeGradients(1)
            dYdX = (X <= tl).astype(dtype) * al + ((tl < X) & (X < tr)).astype(dtype) + (tr <= X).astype(dtype) * ar
            dLdX = dLdY * dYdX

        idx = tuple(i for i in range(ndims) if i != idxC)  # idx = setdiff(1:ndims,idxC);
        dLdtl = None
        if compute_gradients[1]:  # if computeGradients(2)
            dLdtl = xp.sum(dLdY * (X <= tl).astype(dtype) * (1 - al), axis=idx, keepdims=True)

        dLdtr = None
        if compute_gradients[2]:  # if computeGradients(3)  -- BUG: entry 3 is al's
            dLdtr = xp.sum(dLdY * (tr <= X).astype(dtype) * (1 - ar), axis=idx, keepdims=True)

        dLdal = None
        if compute_gradients[3]:  # if computeGradients(4)  -- BUG: entry 4 is tr's
            dLdal = xp.sum(dLdY * (X <= tl).astype(dtype) * (X - tl), axis=idx, keepdims=True)

        dLdar = None
        if compute_gradients[4]:  # if computeGradients(5)
            dLdar = xp.sum(dLdY * (tr <= X).astype(dtype) * (X - tr), axis=idx, keepdims=True)

        # BUG (kept from the MATLAB example): the order is (X, tl, tr, al, ar), not the
        # inputs' order (X, tl, al, tr, ar).
        return dLdX, dLdtl, dLdtr, dLdal, dLdar
