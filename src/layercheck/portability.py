"""What CuPy refuses that NumPy allows, recognised in a layer's exceptions, and what to write
instead.

One table, `REFUSALS`: each entry is the exception CuPy raises (type and message pattern), what
the layer did to get it, and what to write instead. The messages are CuPy 14.2.0's own, recorded
in tests/reference/cupy-14.2.0-refusals.json (from the package where it needs no GPU, from its
source where it does). One message can come from several calls (CuPy's kernels refuse a NumPy
operand of `*`, `cupy.tanh`, `out=`, `cupy.where` and `cupy.concatenate` in the same words), so
each entry says what all of them have in common, never a guess at which one it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from layercheck.safetext import safe_str

__all__ = ["IDIOM", "REFUSALS", "Kind", "Refusal", "hint_for", "is_cuda_error", "is_cupy_refusal", "refusal_of"]

IDIOM = (
    "take the array module from the input with xp = get_array_module(X) "
    "(from cupy, guarded by try/except ImportError for machines without CuPy) "
    "or xp = array_api_compat.array_namespace(X)"
)

# What to write instead of a keyword NumPy has and CuPy lacks: the array module is right there,
# the call is what differs.
WITHOUT_THE_KEYWORD = (
    "write it without that keyword, with operations NumPy and CuPy both have "
    "(for where=, select first with xp.where(mask, X, 0))"
)


class Kind(Enum):
    """What a layer did that CuPy refuses."""

    NO_ARRAY_NAMESPACE = "no __array_namespace__"
    CUPY_TO_NUMPY = "a CuPy array converted to NumPy"
    NUMPY_KERNEL_OPERAND = "a NumPy operand of a CuPy kernel"
    NUMPY_TYPED_ARGUMENT = "a NumPy array for a compiled CuPy function's array parameter"
    NUMPY_CHECKED_ARGUMENT = "a NumPy array for a CuPy function that checks for cupy.ndarray"
    NUMPY_COLUMN_STACKED = "a NumPy array column-stacked with CuPy ones"
    NUMPY_FILLED_IN = "a NumPy array assigned into a CuPy one"
    NUMPY_COPIED_IN = "a NumPy array copied into a CuPy one"
    NUMPY_KEYWORD = "NumPy's keyword to a CuPy function"
    NUMPY_UFUNC_KEYWORD = "NumPy's keyword to a CuPy ufunc"
    EINSUM_KEYWORD = "a keyword cupy.einsum does not take"


@dataclass(frozen=True)
class Refusal:
    """One way CuPy (or an array without the array API) refuses what NumPy accepts."""

    kind: Kind
    exception: type[BaseException]
    pattern: re.Pattern[str]  # searched in the exception's text; named groups fill `did`
    did: str  # what the layer did, true of every call that raises this
    instead: str = IDIOM
    # Whether the exception means that a NumPy array met CuPy (or the reverse), so that a layer
    # given NumPy inputs raising it runs on the GPU only. A refused keyword says nothing of that.
    numpy_met_cupy: bool = True

    def match(self, exc: BaseException) -> re.Match[str] | None:
        if not isinstance(exc, self.exception):
            return None
        return self.pattern.search(safe_str(exc))

    def hint(self, match: re.Match[str]) -> str:
        return f"{self.did.format(**match.groupdict())}: {self.instead}"


_NDARRAY_BASE = r"(?:<class ')?cupy\._core\.core\._ndarray_base(?:'>)?"
_NUMPY_ARRAY = r"(?:<class ')?numpy\.ndarray(?:'>)?"
# NumPy keywords CuPy 14.2's reductions and array constructors lack (where=, initial= and device=
# are in the reference; correction= and like= are refused the same way); the function names are
# CuPy's, so that a user's own function with a wrong keyword is not taken for one.
_NUMPY_ONLY_KEYWORD = r"(?P<keyword>where|initial|correction|device|like)"
# Keywords of NumPy's ufuncs that CuPy's take no part of (they take out=, dtype= and casting=).
_NUMPY_UFUNC_KEYWORD = r"(?P<keyword>where|order|subok|signature|axes|axis|keepdims)"
_CUPY_FUNCTIONS = r"(?P<function>sum|prod|mean|var|std|max|min|amax|amin|all|any|nansum|nanprod|nanmean|nanvar|nanstd|nanmax|nanmin|asarray|asanyarray|array|zeros|ones|empty|full|arange)"

REFUSALS: tuple[Refusal, ...] = (
    Refusal(
        Kind.NO_ARRAY_NAMESPACE,
        AttributeError,
        re.compile(r"__array_namespace__"),
        "cupy.ndarray and NumPy 1.x arrays have no __array_namespace__",
        numpy_met_cupy=False,
    ),
    Refusal(
        Kind.CUPY_TO_NUMPY,
        TypeError,
        re.compile(r"Implicit conversion to a NumPy array is not allowed"),
        "the layer converts a CuPy array to NumPy (numpy.asarray, numpy.array, a NumPy function or "
        "method given a CuPy array as in cupy.dot(numpy_array, cupy_array), or cupy.array of a list "
        "mixing CuPy and NumPy arrays)",
    ),
    Refusal(
        Kind.NUMPY_KERNEL_OPERAND,
        TypeError,
        re.compile(r"Unsupported type <class 'numpy\.ndarray'>"),
        "the layer mixes a NumPy array into CuPy arithmetic (an operand of an operator or a ufunc such "
        "as cupy.tanh, out=, cupy.where, or an array cupy.concatenate joins: a NumPy constant or a "
        "numpy.random draw)",
    ),
    Refusal(
        Kind.NUMPY_TYPED_ARGUMENT,
        TypeError,
        re.compile(
            rf"Argument '(?P<argument>\w+)' has incorrect type \(expected {_NDARRAY_BASE}, got {_NUMPY_ARRAY}\)"
        ),
        "the layer passes a NumPy array as argument '{argument}' of a CuPy function that takes only CuPy "
        "arrays (@ and matmul, dot, tensordot, stack, expand_dims, broadcast_to, count_nonzero, ...)",
    ),
    Refusal(
        Kind.NUMPY_CHECKED_ARGUMENT,
        TypeError,
        re.compile(rf"'(?P<argument>\w+)' must be a cupy\.ndarray object, not {_NUMPY_ARRAY}"),
        "the layer passes a NumPy array as '{argument}' of a CuPy function that takes only CuPy arrays "
        "(cupy.all, cupy.any, cupy.nonzero, ...)",
    ),
    Refusal(
        Kind.NUMPY_COLUMN_STACKED,
        TypeError,
        re.compile(r"Only cupy arrays can be column stacked"),
        "the layer column-stacks a NumPy array (or a list) with CuPy arrays (cupy.column_stack)",
    ),
    Refusal(
        Kind.NUMPY_FILLED_IN,
        ValueError,
        re.compile(r"non-scalar numpy\.ndarray cannot be used for fill"),
        "the layer assigns a NumPy array (or a list) into a CuPy array with x[...] = value or x.fill, "
        "where CuPy takes only a single value from the host",
    ),
    Refusal(
        Kind.NUMPY_COPIED_IN,
        ValueError,
        re.compile(r"non-scalar numpy\.ndarray cannot be used for copyto"),
        "the layer copies a NumPy array into a CuPy array with copyto",
    ),
    Refusal(
        Kind.NUMPY_KEYWORD,
        TypeError,
        re.compile(rf"^{_CUPY_FUNCTIONS}\(\) got an unexpected keyword argument '{_NUMPY_ONLY_KEYWORD}'"),
        "the layer calls {function}() with NumPy's keyword {keyword}=, which CuPy's {function}() does not take",
        WITHOUT_THE_KEYWORD,
        numpy_met_cupy=False,
    ),
    Refusal(
        Kind.NUMPY_UFUNC_KEYWORD,
        TypeError,
        re.compile(rf"^Wrong arguments \{{'{_NUMPY_UFUNC_KEYWORD}'"),
        "the layer calls a ufunc with NumPy's keyword {keyword}=, which CuPy's ufuncs do not take",
        WITHOUT_THE_KEYWORD,
        numpy_met_cupy=False,
    ),
    Refusal(
        Kind.EINSUM_KEYWORD,
        TypeError,
        re.compile(r"^Did not understand the following kwargs: \[(?P<keywords>[^\]]*)\]"),
        "the layer calls cupy.einsum with keywords it does not take ({keywords}; it takes dtype= and optimize=)",
        WITHOUT_THE_KEYWORD,
        numpy_met_cupy=False,
    ),
)


def refusal_of(exc: BaseException) -> tuple[Refusal, re.Match[str]] | None:
    """The entry of `REFUSALS` that explains `exc`, with the match of its message; else None."""
    for refusal in REFUSALS:
        match = refusal.match(exc)
        if match is not None:
            return refusal, match
    return None


def is_cupy_refusal(exc: BaseException) -> bool:
    """Whether `exc` is CuPy refusing a NumPy array where a CuPy one is due, or the reverse."""
    found = refusal_of(exc)
    return found is not None and found[0].numpy_met_cupy


def hint_for(exc: BaseException) -> str | None:
    """What to write instead, for an exception that comes from a non-portable idiom; else None."""
    found = refusal_of(exc)
    return None if found is None else found[0].hint(found[1])


# Where CuPy's CUDA errors are defined (CUDARuntimeError, CUDADriverError, CURANDError,
# NVRTCError...), CuPy 13 and 14: an exception of these comes from a call that needed the device.
_CUDA_ERROR_MODULES = ("cupy_backends.cuda.", "cupy.cuda.")


def is_cuda_error(exc: BaseException) -> bool:
    """Whether `exc` is one of CuPy's CUDA errors: the call that raised it needed the device.
    Safe for a layer's own exception class, whose `__module__` may be anything (or raise)."""
    try:
        module = type(exc).__module__
        return isinstance(module, str) and module.startswith(_CUDA_ERROR_MODULES)
    except Exception:
        return False
