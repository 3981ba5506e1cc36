"""Weighted addition layer with several inputs and a custom backward function.

Python port of the MATLAB example "Define Custom Deep Learning Layer with Multiple Inputs"
(weightedAdditionLayer): the layer takes ``num_inputs`` inputs X1, ..., XN of the same
size and adds them up, each scaled by its own learnable scalar weight:

    Z = w[0]*X1 + w[1]*X2 + ... + w[N-1]*XN

`weights` has shape ``(num_inputs,)``, one scalar per input. As in the MATLAB example it
is initialized with ``rand``. The backward function returns the input gradients first,
then the gradient of `weights`:

    dLdXi = w[i-1] * dLdZ          dLdw[i-1] = sum(dLdZ .* Xi)

The default, ``num_inputs=2``, matches ``example_layout`` (two ``8,8,4,2:SSCB`` inputs).
Runs on NumPy and CuPy and keeps the input's dtype.
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class WeightedAddition:
    """Weighted sum of its inputs with one learnable scalar weight per input."""

    learnables = ("weights",)
    example_layout = ["8,8,4,2:SSCB", "8,8,4,2:SSCB"]

    def __init__(self, num_inputs=2, name="weighted_addition"):
        if isinstance(num_inputs, bool) or not isinstance(num_inputs, int) or num_inputs < 1:
            raise ValueError(f"num_inputs must be a positive integer, got {num_inputs!r}")
        self.name = name
        self.num_inputs = num_inputs  # predict takes *X, so the count is declared here
        self.description = f"Weighted addition of {num_inputs} inputs"
        self.weights = None

    def initialize(self, *layouts):
        """Check the inputs have the same size; set weights = rand(num_inputs) if empty."""
        sizes = {tuple(layout.size) for layout in layouts}
        if len(sizes) > 1:
            raise ValueError(f"the inputs of {self.name!r} must have the same size, got {sorted(sizes)}")
        if self.weights is None:
            self.weights = np.random.rand(self.num_inputs)

    def predict(self, *X):
        # Z = X1*W1 + ... + Xn*Wn
        W = self.weights
        Z = X[0] * W[0]
        for i in range(1, self.num_inputs):
            Z = Z + X[i] * W[i]
        return Z

    def backward(self, *args):
        """backward(X1, ..., XN, Z, dLdZ, memory) -> (dLdX1, ..., dLdXN, dLdweights)."""
        n = self.num_inputs
        X = args[:n]
        dLdZ = args[n + 1]
        xp = get_array_module(dLdZ)
        W = self.weights
        dLdX = [W[i] * dLdZ for i in range(n)]
        dLdW = xp.stack([xp.sum(dLdZ * X[i]) for i in range(n)])
        return (*dLdX, dLdW)
