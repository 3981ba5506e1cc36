"""What CuPy refuses that NumPy allows, recognised in a layer's exceptions, and what to write
instead. The messages are CuPy 13/14's own (recorded in tests/reference on a real GPU)."""

from __future__ import annotations

from layercheck.safetext import safe_str

__all__ = ["IDIOM", "hint_for", "is_cupy_refusal"]

IDIOM = (
    "take the array module from the input with xp = get_array_module(X) "
    "(from cupy, guarded by try/except ImportError for machines without CuPy) "
    "or xp = array_api_compat.array_namespace(X)"
)

_NO_NAMESPACE = "__array_namespace__"
_IMPLICIT_CONVERSION = "Implicit conversion to a NumPy array is not allowed"
_UNSUPPORTED_NUMPY = "Unsupported type <class 'numpy.ndarray'>"


def is_cupy_refusal(exc: BaseException) -> bool:
    """CuPy's TypeError for a NumPy array where a CuPy one is due, or the reverse."""
    return isinstance(exc, TypeError) and any(m in safe_str(exc) for m in (_IMPLICIT_CONVERSION, _UNSUPPORTED_NUMPY))


def hint_for(exc: BaseException) -> str | None:
    """What to write instead, for an exception that comes from a non-portable idiom; else None."""
    text = safe_str(exc)
    if isinstance(exc, AttributeError) and _NO_NAMESPACE in text:
        return f"cupy.ndarray and NumPy 1.x arrays have no __array_namespace__: {IDIOM}"
    if isinstance(exc, TypeError) and _IMPLICIT_CONVERSION in text:
        return f"the layer converts a CuPy array to NumPy (numpy.asarray, numpy.array): {IDIOM}"
    if isinstance(exc, TypeError) and _UNSUPPORTED_NUMPY in text:
        return f"the layer mixes a NumPy array into CuPy arithmetic (a NumPy constant or numpy.random draw): {IDIOM}"
    return None
