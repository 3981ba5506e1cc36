"""One code path for NumPy and CuPy: array modules, dtypes, random inputs."""

from __future__ import annotations

from typing import Any

import numpy as np

from .layout import Layout

REAL_DTYPES = ("float32", "float64")
DTYPES = REAL_DTYPES + ("complex64", "complex128")


def array_module(x: Any):
    """The array namespace of `x`: numpy for NumPy arrays, cupy for CuPy arrays."""
    if type(x).__module__.split(".")[0] == "cupy":
        import cupy  # noqa: PLC0415 - optional dependency

        return cupy
    return np


def is_array(x: Any) -> bool:
    return isinstance(x, np.ndarray) or type(x).__module__.split(".")[0] == "cupy"


def to_numpy(x: Any) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "get"):
        return x.get()
    return np.asarray(x)


def describe(x: Any) -> str:
    """`float32 array of shape (2, 3)` for messages."""
    if is_array(x):
        kind = "CuPy" if array_module(x) is not np else "NumPy"
        return f"{kind} {x.dtype} array of shape {tuple(x.shape)}"
    if x is None:
        return "None"
    return f"{type(x).__name__} {x!r}"[:80]


def precision_of(dtype: Any) -> np.dtype:
    """The real floating type that carries a dtype's precision (complex64 -> float32)."""
    dtype = np.dtype(dtype)
    return np.finfo(dtype).dtype if dtype.kind == "c" else dtype


def at_precision(dtype: Any, like: Any) -> np.dtype:
    """The dtype of `like`'s kind (real or complex) at `dtype`'s precision.

    Learnables keep their kind when the tested precision changes: a real bias stays real
    beside complex inputs and a complex weight stays complex beside real ones.
    """
    real = precision_of(dtype)
    if np.dtype(getattr(like, "dtype", float)).kind == "c":
        return np.result_type(real, np.complex64)
    return real


def cast(x: Any, dtype: Any) -> Any:
    """`x` at `dtype`'s precision, keeping its real or complex kind and its array module."""
    if not is_array(x) or np.dtype(x.dtype).kind not in "fc":
        return x
    return x.astype(at_precision(dtype, x), copy=True)


def copy_tree(x: Any) -> Any:
    if is_array(x):
        return x.copy()
    if isinstance(x, (tuple, list)):
        return type(x)(copy_tree(v) for v in x)
    return x


def random_array(layout: Layout, dtype: Any, rng: np.random.Generator, domain=(None, None)) -> np.ndarray:
    """Standard normal data (complex normal for complex dtypes) inside `domain`; uniform
    int64 integers in the layout's range for an integer input."""
    dtype = np.dtype(dtype)
    low, high = domain
    shape = layout.size
    if layout.integer is not None:
        return rng.integers(layout.integer[0], layout.integer[1], shape, endpoint=True, dtype=np.int64)
    if low is not None and high is not None:
        span = high - low
        x = rng.uniform(low + 0.05 * span, high - 0.05 * span, shape)
    elif low is not None:
        x = low + rng.lognormal(0.0, 0.75, shape)
    elif high is not None:
        x = high - rng.lognormal(0.0, 0.75, shape)
    else:
        x = rng.standard_normal(shape)
    if dtype.kind == "c":
        x = (x + 1j * rng.standard_normal(shape)) / np.sqrt(2)
    return np.asarray(x, dtype=dtype)


def at_dtype(x: Any, dtype: Any) -> Any:
    """`x` as `dtype`, except integer inputs, which keep their integers."""
    return x if np.dtype(x.dtype).kind in "iub" else x.astype(dtype)


def random_like(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Standard normal array of `x`'s shape and kind, in float64 or complex128."""
    if np.iscomplexobj(x):
        return (rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape)) / np.sqrt(2)
    return rng.standard_normal(x.shape)
