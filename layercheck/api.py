"""The Python API: check a layer from a test suite or a notebook."""

from __future__ import annotations

import copy
import inspect
from typing import Any, Mapping, Sequence

from .layout import Layout, parse_layout
from .results import TargetReport
from .runner import run_target
from .session import DEFAULT_TOLERANCES, Options


def _layouts(layout: Any) -> list[Layout]:
    if isinstance(layout, (list, tuple)) and not (layout and isinstance(layout[0], int)):
        return [parse_layout(item) for item in layout]
    return [parse_layout(layout)]


def make_options(
    dtypes: Sequence[str] = ("float64", "float32"),
    seed: int = 0,
    tolerances: Mapping[str, Mapping[str, float]] | None = None,
    checks: Sequence[str] | None = None,
    skip: Sequence[str] = (),
    inputs: Sequence[Any] | None = None,
) -> Options:
    merged = {k: dict(v) for k, v in DEFAULT_TOLERANCES.items()}
    for dtype, tol in (tolerances or {}).items():
        merged.setdefault(dtype, {}).update(tol)
    return Options(
        dtypes=tuple(dtypes),
        seed=int(seed),
        tolerances=merged,
        checks=tuple(checks) if checks is not None else None,
        skip=tuple(skip),
        inputs=tuple(inputs) if inputs is not None else None,
    )


def check_layer(layer: Any, layout: Any, *, args: Mapping[str, Any] | None = None, **options: Any) -> TargetReport:
    """Check a layer class (constructed with `args`), a layer instance, or a plain function.

    `layout` is `"24,24,20,128:SSCB"`, a Layout, a `{size, format}` mapping, or a list with
    one of those per input. Options: dtypes, seed, tolerances ({dtype: {rtol, atol}}), checks,
    skip, and inputs (arrays to check at, one per input, instead of random draws).
    An instance is copied for every fresh layer the checks need; it is never modified.
    """
    if inspect.isclass(layer):
        def factory():
            return layer(**dict(args or {}))
        label = layer.__name__
    elif inspect.isfunction(layer):
        def factory():
            return layer
        label = layer.__name__
    else:
        def factory():
            return copy.deepcopy(layer)
        label = type(layer).__name__
    return run_target(label, factory, _layouts(layout), make_options(**options))
