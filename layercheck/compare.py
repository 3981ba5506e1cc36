"""Elementwise comparison with failure messages that name the worst element, the absolute
and relative difference and the tolerance (in the manner of torch.testing.assert_close)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .arrays import is_array, to_numpy


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

    def describe(self, what: str) -> str:
        text = (
            f"{what}: {self.count} of {self.total} element(s) differ; the worst, at index {self.index}, "
            f"is {_fmt(self.actual)} instead of {_fmt(self.expected)} "
            f"(abs diff {self.abs_diff:.3g}, rel diff {self.rel_diff:.3g}"
        )
        if self.rtol or self.atol:
            text += f"; allowed rtol={self.rtol:g}, atol={self.atol:g}"
        return text + ")"

    def to_dict(self) -> dict[str, Any]:
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
        }


def _fmt(x: complex) -> str:
    return f"{x:.6g}" if not isinstance(x, complex) else f"{x.real:.6g}{x.imag:+.6g}j"


def _jsonable(x: complex) -> Any:
    if isinstance(x, complex):
        return [x.real, x.imag]
    return x if np.isfinite(x) else str(x)


def mismatch(actual: Any, expected: Any, rtol: float = 0.0, atol: float = 0.0) -> Mismatch | None:
    """None when `actual` equals `expected` within tolerance (NaN equals NaN), else the worst element."""
    a = np.asarray(to_numpy(actual))
    e = np.asarray(to_numpy(expected))
    if a.shape != e.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {e.shape}")
    a64 = a.astype(np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(e) else np.float64)
    e64 = e.astype(a64.dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a64 - e64)
        allowed = atol + rtol * np.abs(e64)
        same_nan = np.isnan(a64) & np.isnan(e64)
        same_inf = np.isinf(a64) & (a64 == e64)
        bad = ~((diff <= allowed) | same_nan | same_inf)
    n_bad = int(np.count_nonzero(bad))
    if n_bad == 0:
        return None
    score = np.where(bad, np.nan_to_num(diff, nan=np.inf, posinf=np.inf), -1.0)
    flat = int(np.argmax(score))
    index = tuple(int(i) for i in np.unravel_index(flat, a.shape)) if a.ndim else ()
    worst_a, worst_e = a64.reshape(-1)[flat], e64.reshape(-1)[flat]
    abs_diff = float(diff.reshape(-1)[flat])
    scale = abs(worst_e)
    rel_diff = abs_diff / scale if scale > 0 else float("inf")
    as_scalar = complex if np.iscomplexobj(a64) else float
    return Mismatch(n_bad, a.size, index, as_scalar(worst_a), as_scalar(worst_e), abs_diff, rel_diff, rtol, atol)


def repeat_tolerance(y: Any) -> float:
    """How far two calls with the same inputs may differ: a few ulps of the largest finite
    value (exact up to reordered reductions); 0 for integer outputs."""
    y = np.asarray(to_numpy(y))
    if y.dtype.kind not in "fc":
        return 0.0
    finite = np.abs(y[np.isfinite(y)])
    return 16 * float(np.finfo(y.dtype).eps) * (float(finite.max()) if finite.size else 0.0)


def scaled_atol(rtol: float, atol: float, values: Any) -> float:
    """`atol`, raised to `rtol` times the largest magnitude among the arrays in `values`: for
    results whose sums ran in another order (a batch against its observations, the GPU
    against the CPU), where an element near zero carries the round-off of the large ones."""
    scale = max((float(np.max(np.abs(to_numpy(v)), initial=0.0)) for v in values if is_array(v)), default=0.0)
    return max(atol, rtol * scale)
