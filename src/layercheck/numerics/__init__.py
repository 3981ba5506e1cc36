"""The numerics, one code path for NumPy and CuPy: array modules and transfers, comparisons,
the gradient engine and its diagnosis, and the GPU backend."""

__all__: list[str] = []  # the modules of this place are its interface
