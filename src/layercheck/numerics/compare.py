"""Elementwise comparison with failure messages that name the worst element, the absolute
and relative difference and the tolerance (in the manner of torch.testing.assert_close).

As torch.testing, checking and wording stay apart: `mismatch` returns the data (`Mismatch`),
and its `describe(what)` or `detail()` words it once; a caller that puts its own lead-in
before the finding takes `detail()`, never cuts a finished message."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from layercheck.numerics import reading
from layercheck.numerics.arrays import fetch, is_array, machine_epsilon, namespace_of, to_host

__all__ = ["Mismatch", "largest_magnitude", "mismatch", "repeat_tolerance", "scaled_atol"]


@dataclass(frozen=True)
class Mismatch:
    count: int
    total: int
    index: tuple[int, ...]
    actual: complex
    expected: complex
    abs_diff: float
    rel_diff: float
    rtol: float
    atol: float
    # The greatest relative difference and its index, when another element than the worst
    # absolute one has a greater relative difference (None otherwise).
    max_rel_diff: float | None = None
    max_rel_index: tuple[int, ...] | None = None

    def placed(self, axis: int, index: int) -> Mismatch:
        """The mismatch of a slice of one index along `axis` (one observation of a batch),
        its elements' indices those of the whole array: `index` along that axis."""

        def place(at: tuple[int, ...] | None) -> tuple[int, ...] | None:
            return None if at is None or axis >= len(at) else (*at[:axis], index, *at[axis + 1 :])

        return dataclasses.replace(self, index=place(self.index) or self.index, max_rel_index=place(self.max_rel_index))

    def describe(self, what: str) -> str:
        """`what: N of M element(s) differ; the worst, ...`: the finding, led by `what`."""
        return f"{what}: {self.detail()}"

    def detail(self) -> str:
        """The finding without a lead-in: `N of M element(s) differ; the worst, at index ...`."""
        text = (
            f"{self.count} of {self.total} element(s) differ; the worst, at index {self.index}, "
            f"is {_fmt_pair(self.actual, self.expected)} "
            f"(abs diff {self.abs_diff:.3g}, rel diff {self.rel_diff:.3g}"
        )
        if self.rtol or self.atol:
            text += f"; allowed rtol={self.rtol:g}, atol={self.atol:g}"
        text += ")"
        if self.max_rel_index is not None and self.max_rel_diff is not None:
            text += f"; the greatest relative difference, {self.max_rel_diff:.3g}, is at index {self.max_rel_index}"
        return text

    def to_dict(self) -> dict[str, Any]:
        """The JSON details: what `detail` says, read back by `from_dict`. The greatest relative
        difference and its index are null where the worst element has it."""
        return {
            "mismatched": self.count,
            "total": self.total,
            "worst_index": list(self.index),
            "actual": _jsonable(self.actual),
            "expected": _jsonable(self.expected),
            "abs_diff": self.abs_diff,
            "rel_diff": self.rel_diff,
            "rtol": self.rtol,
            "atol": self.atol,
            "max_rel_diff": self.max_rel_diff,
            "max_rel_index": None if self.max_rel_index is None else list(self.max_rel_index),
        }

    @classmethod
    def from_dict(cls, data: Any) -> Mismatch:
        """The inverse of `to_dict`, strict, for a report's details read back (JSON: complex
        numbers as [re, im], non-finite floats as strings) or a check's own.

        Raises:
            MalformedFinding: one line that says what does not fit.
        """
        fields = reading.mapping(data, "a mismatch")
        unknown = sorted(set(fields) - _MISMATCH_KEYS)
        if unknown or not _MISMATCH_REQUIRED <= set(fields):
            raise reading.MalformedFinding(
                f"a mismatch has the keys {', '.join(sorted(map(str, fields)))}, not {', '.join(sorted(_MISMATCH_KEYS))}"
            )
        count, total = reading.whole(fields["mismatched"], "mismatched"), reading.whole(fields["total"], "total")
        if not 0 < count <= total:
            raise reading.MalformedFinding(f"a mismatch of {count} of {total} element(s)")
        where = fields.get("max_rel_index")
        return cls(
            count,
            total,
            reading.indices(fields["worst_index"], "worst_index"),
            reading.number(fields["actual"], "actual"),
            reading.number(fields["expected"], "expected"),
            reading.real(fields["abs_diff"], "abs_diff"),
            reading.real(fields["rel_diff"], "rel_diff"),
            reading.real(fields["rtol"], "rtol"),
            reading.real(fields["atol"], "atol"),
            None if fields.get("max_rel_diff") is None else reading.real(fields["max_rel_diff"], "max_rel_diff"),
            None if where is None else reading.indices(where, "max_rel_index"),
        )


_MISMATCH_REQUIRED = frozenset(
    {"mismatched", "total", "worst_index", "actual", "expected", "abs_diff", "rel_diff", "rtol", "atol"}
)
# The greatest relative difference, additive keys: a report of an earlier version lacks them.
_MISMATCH_KEYS = _MISMATCH_REQUIRED | {"max_rel_diff", "max_rel_index"}


def _fmt(x: complex, digits: int = 6) -> str:
    if isinstance(x, complex):
        return f"{x.real:.{digits}g}{x.imag:+.{digits}g}j"
    return f"{x:.{digits}g}"


def _fmt_pair(actual: complex, expected: complex) -> str:
    """`A instead of E` with as many significant digits (6 at least) as it takes for the two
    to read differently: a float32 difference of one unit in the 7th digit is visible."""
    for digits in range(6, 18):
        a, e = _fmt(actual, digits), _fmt(expected, digits)
        if a != e:
            break
    return f"{a} instead of {e}"


def _jsonable(x: complex) -> Any:
    if isinstance(x, complex):
        return [x.real, x.imag]
    return x if np.isfinite(x) else str(x)


def mismatch(actual: Any, expected: Any, rtol: float = 0.0, atol: float = 0.0) -> Mismatch | None:
    """None when `actual` equals `expected` within tolerance (NaN equals NaN), else the worst element.

    Runs in the arrays' module (both on the host or both on the device: a mix is a TypeError);
    only the count and the worst element reach the host.
    """
    xp = namespace_of(actual, expected)
    a, e = xp.asarray(actual), xp.asarray(expected)
    if a.shape != e.shape:
        raise ValueError(f"shapes differ: {tuple(a.shape)} vs {tuple(e.shape)}")
    if a.dtype == e.dtype and bool(xp.array_equal(a, e)):
        return None  # the common case, in one pass (NaNs, never equal, take the long way)
    is_complex = np.dtype(a.dtype).kind == "c" or np.dtype(e.dtype).kind == "c"
    wide = np.complex128 if is_complex else np.float64
    a64, e64 = a.astype(wide, copy=False), e.astype(wide, copy=False)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = xp.abs(a64 - e64)
        allowed = atol + rtol * xp.abs(e64)
        same_nan = xp.isnan(a64) & xp.isnan(e64)
        same_inf = xp.isinf(a64) & (a64 == e64)
        bad = ~((diff <= allowed) | same_nan | same_inf)
    n_bad = int(xp.count_nonzero(bad))
    if n_bad == 0:
        return None
    score = xp.where(bad, xp.nan_to_num(diff, nan=np.inf, posinf=np.inf), -1.0)
    flat = int(xp.argmax(score))
    index = _unravel(flat, a.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        magnitude = xp.abs(e64)
        relative = xp.where(magnitude > 0, diff / xp.where(magnitude > 0, magnitude, 1.0), np.inf)
        rel_score = xp.where(bad, xp.nan_to_num(relative, nan=np.inf, posinf=np.inf), -1.0)
    flat_rel = int(xp.argmax(rel_score))
    worst_a, worst_e, abs_diff, max_rel = (complex(v) for v in _elements(flat, a64, e64, diff, rel_score, at=flat_rel))
    scale = abs(worst_e)
    rel_diff = abs_diff.real / scale if scale > 0 else float("inf")
    as_scalar = complex if is_complex else (lambda z: z.real)
    # Both extremes, as torch.testing gives them, when they are not the same element.
    elsewhere = flat_rel != flat and max_rel.real > rel_diff
    return Mismatch(
        n_bad,
        int(a.size),
        index,
        as_scalar(worst_a),
        as_scalar(worst_e),
        abs_diff.real,
        rel_diff,
        rtol,
        atol,
        max_rel.real if elsewhere else None,
        _unravel(flat_rel, a.shape) if elsewhere else None,
    )


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if len(shape) else ()


def _elements(flat: int, *arrays: Any, at: int | None = None) -> list[Any]:
    """Element `flat` of each array (of the last at `at`, when given), fetched to the host in
    one transfer."""
    xp = namespace_of(*arrays)
    last = len(arrays) - 1
    elements: list[Any] = to_host(  # ndarray.tolist() is Any to NumPy's stubs
        xp.stack([x.reshape(-1)[at if at is not None and i == last else flat] for i, x in enumerate(arrays)])
    ).tolist()
    return elements


def largest_magnitude(x: Any) -> float:
    """max |x| over the finite elements of `x` (0 when there is none), as a host float."""
    xp = namespace_of(x)
    if x.size == 0:
        return 0.0
    if np.dtype(x.dtype).kind == "f":
        # Two reductions and no temporary, where every element is finite (the common case):
        # a NaN or an infinity makes one of them non-finite, and the masked way below runs.
        high, low = fetch(xp.max(x), xp.min(x))
        if math.isfinite(high) and math.isfinite(low):
            return float(max(high, -low))
    magnitude = xp.abs(x)
    return float(xp.max(xp.where(xp.isfinite(magnitude), magnitude, 0)))


def repeat_tolerance(y: Any) -> float:
    """How far two calls with the same inputs may differ: a few ulps of the largest finite
    value (exact up to reordered reductions); 0 for integer outputs."""
    if np.dtype(y.dtype).kind not in "fc":
        return 0.0
    return 16 * machine_epsilon(y.dtype) * largest_magnitude(y)


def scaled_atol(rtol: float, atol: float, values: Any) -> float:
    """`atol`, raised to `rtol` times the largest magnitude among the arrays in `values`: for
    results whose sums ran in another order (a batch against its observations, the GPU
    against the CPU), where an element near zero carries the round-off of the large ones."""
    scale = max((_max_abs(v) for v in values if is_array(v)), default=0.0)
    return max(atol, rtol * scale)


def _max_abs(x: Any) -> float:
    """max |x|, NaN when x holds a NaN (as NumPy's max), 0 for an empty array."""
    xp = namespace_of(x)
    return float(xp.max(xp.abs(x))) if x.size else 0.0
