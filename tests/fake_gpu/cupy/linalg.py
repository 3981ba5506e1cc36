"""The stand-in's `cupy.linalg`: numpy.linalg computed on the device copy (names CuPy 14.2.0 has)."""

import numpy as _np
from numpy.linalg import LinAlgError  # noqa: F401 - as CuPy re-exports it

from cupy import _device_function

_NAMES = (
    "matrix_power cross matmul matrix_transpose cholesky qr svd eigh eig eigvalsh eigvals norm cond det"
    " matrix_rank slogdet solve tensorsolve lstsq inv pinv tensorinv"
).split()

for _name in _NAMES:
    if hasattr(_np.linalg, _name):
        globals()[_name] = _device_function(_name, getattr(_np.linalg, _name), "cupy.linalg")
del _name
