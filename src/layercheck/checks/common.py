"""Small helpers shared by the check families."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from layercheck.checks.context import CheckContext, Step
from layercheck.checks.registry import Incomplete, Outcome, Skip
from layercheck.contract.adapter import Adapter, Outputs
from layercheck.findings.problems import Raised, RaisedWhen
from layercheck.numerics import arrays
from layercheck.userframes import exception_summary

__all__ = [
    "dtype_name",
    "first_failure",
    "named_outputs",
    "output_names",
    "primary_dtype",
    "raised",
    "require_arrays",
    "require_backward",
    "require_forward",
    "require_own_forward",
    "snapshot",
    "widened",
]


def raised(call: str, exc: BaseException, when: RaisedWhen, **context: Any) -> Raised:
    """The failure that is `call` raising `exc` (`when`, with what that needs: `Raised`'s
    fields); `CallError.raised` says the same of a step's error."""
    return Raised(call, exception_summary(exc), when, **context)


def primary_dtype(session: CheckContext) -> str:
    """The dtype for checks that run once: float64 when tested, else the first tested dtype."""
    dtypes = session.options.dtypes
    return "float64" if "float64" in dtypes else ("complex128" if "complex128" in dtypes else dtypes[0])


def require_forward(layer: Adapter) -> None:
    if not layer.has_forward:
        raise Skip("no forward defined (predict is used at training time)")


def require_own_forward(layer: Adapter, checked_by: str) -> None:
    """Skip a check of forward that would repeat `checked_by`'s verdict: the training pass of a
    function pair or of a class that keeps its gradients is the very call predict makes
    (`contract.conventions`)."""
    require_forward(layer)
    if layer.forward_is_predict:
        raise Skip(f"forward and predict make the same call of {layer.name}'s code: {checked_by} checks it")


def require_backward(layer: Adapter) -> None:
    if not layer.has_backward:
        raise Skip("no backward defined")


def output_names(layer: Adapter) -> tuple[str, ...]:
    return layer.output_names + tuple(f"updated {s}" for s in layer.state)


def named_outputs(layer: Adapter, outputs: Outputs) -> list[tuple[str, Any]]:
    return list(zip(output_names(layer), outputs.all))


def require_arrays(items: Iterable[tuple[str, Any]], method: str) -> None:
    for name, value in items:
        if not arrays.is_array(value):
            raise Incomplete(f"not checked: {method} returned {arrays.describe(value)} as {name}, not an array")


def first_failure(
    session: CheckContext, step_of: Callable[[str], Step], describe: Callable[[Step, str], Outcome | None]
) -> Outcome | None:
    """Run `describe(step, dtype)` over the tested dtypes; the first failure it returns, or None."""
    for dtype in session.options.dtypes:
        problem = describe(step_of(dtype), dtype)
        if problem is not None:
            return problem
    return None


def snapshot(values: Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    return [(name, arrays.copy_tree(value)) for name, value in values]


def dtype_name(dtype: Any) -> str:
    name: str = np.dtype(dtype).name  # LiteralString in NumPy's stubs, which mypy reads as Any
    return name


def widened(session: CheckContext, dtypes: Iterable[Any]) -> dict[str, Any]:
    """What a check that compared two computations says of its tolerance: for each tested
    dtype at which the layer was found to compute below it (a float64 layer rounding to
    float32 inside), the precision it was judged at (`Session.tolerance` widens to it).
    Empty where nothing was widened, or the precision was not measured (none is then)."""
    judged = {}
    for dtype in dtypes:
        finding = session.measured_precision(dtype)
        if finding is not None and finding.lost:
            judged[dtype_name(dtype)] = str(finding.effective)
    return {"judged_at_precision": judged} if judged else {}
