"""Output layouts: each output has the rank of its format, and the batch size carries through."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from layercheck.checks.common import dtype_name, named_outputs, primary_dtype, raised, require_arrays
from layercheck.checks.context import CheckContext, StepFailed
from layercheck.checks.evidence import call_evidence, layouts_meta
from layercheck.checks.registry import LAYERS_ONLY, Incomplete, Outcome, Skip, check, failed, passed
from layercheck.errors import USER_ERRORS
from layercheck.findings.problems import BatchSize, Declared, FormatRank, RaisedWhen
from layercheck.reproducers.evidence import LazyEvidence, ReproKind
from layercheck.results import Call, cause_of

__all__ = [
    "OTHER_BATCH_SIZES",
    "other_batch_size",
    "output_batch_axes",
    "output_batch_size_matches_input",
    "output_format_is_consistent",
    "require_batch",
]

# The second batch size output_batch_size_matches_input checks: the first of these that differs
# from the layout's own (a layer that hard-codes its layout's batch size fails at it). Its
# description is written from this constant, so that list-checks says what the check does.
OTHER_BATCH_SIZES = (2, 3)


def require_batch(session: CheckContext) -> int:
    """The number of observations; `Skip` when no input layout has a B axis."""
    sizes = {layout.size[axis] for layout in session.layouts if (axis := layout.find("B")) is not None}
    if not sizes:
        raise Skip("no input layout has a batch (B) axis")
    if len(sizes) > 1:
        raise Incomplete(f"not checked: the inputs have different batch sizes {sorted(sizes)}")
    return sizes.pop()


def output_batch_axes(session: CheckContext, outputs: Sequence[Any]) -> list[int | None]:
    """The B axis of each output (of the arrays `outputs`, in the layer's order) by its
    declared format (`Incomplete` on a rank mismatch)."""
    formats = session.output_formats()
    axes: list[int | None] = []
    for name, y, fmt in zip(session.reference.output_names, outputs, formats):
        if y.ndim != len(fmt):
            raise Incomplete(
                f"not checked: output {name} has {y.ndim} dimension(s) but its format {fmt!r} has {len(fmt)} (see output_format_is_consistent)"
            )
        axes.append(fmt.find("B") if "B" in fmt else None)
    return axes


@check(
    "output_format_is_consistent",
    "every output has as many dimensions as its format: the one output_format declares, else the first input's",
    kinds=LAYERS_ONLY,
    repro=ReproKind.SIZES,
    calls=(Call.PREDICT, Call.OUTPUT_FORMAT),
)
def output_format_is_consistent(session: CheckContext) -> Outcome:
    layer = session.reference
    try:
        formats = session.output_formats()
    except StepFailed as exc:  # output_format's own failure is this check's
        return failed(**exc.error.raised(RaisedWhen.FORMAT).to_details())
    dtype = primary_dtype(session)
    outputs = session.predict(dtype).require()
    require_arrays(named_outputs(layer, outputs), "predict")
    declared = (
        Declared.INFERRED
        if layer.formats_inferred
        else Declared.DECLARED
        if getattr(layer.obj, "output_format", None) is not None
        else Declared.FIRST_INPUT
    )
    for name, y, fmt in zip(layer.output_names, outputs.values, formats):
        if y.ndim != len(fmt):
            return failed(
                **FormatRank(name, tuple(y.shape), fmt, declared).to_details(),
                evidence=functools.partial(
                    call_evidence, session, ReproKind.SIZES, "output_format_is_consistent", "predict", dtype
                ),
            )
    return passed(", ".join(f"{name}: {fmt}" for name, fmt in zip(layer.output_names, formats)))


def other_batch_size(n: int) -> int:
    """The batch size checked besides the layout's `n`."""
    return next(size for size in OTHER_BATCH_SIZES if size != n)


@check(
    "output_batch_size_matches_input",
    "predict returns as many observations as it is given, at the layout's batch size and, on a fresh layer, at "
    f"{OTHER_BATCH_SIZES[0]} ({OTHER_BATCH_SIZES[1]} when the layout's is {OTHER_BATCH_SIZES[0]})",
    "",
    kinds=LAYERS_ONLY,
    repro=ReproKind.SIZES,
    calls=(Call.PREDICT,),
)
def output_batch_size_matches_input(session: CheckContext) -> Outcome:
    n = require_batch(session)
    dtype = primary_dtype(session)
    outputs = session.predict(dtype).require()
    require_arrays(named_outputs(session.reference, outputs), "predict")
    axes = output_batch_axes(session, outputs.values)
    if all(axis is None for axis in axes):
        raise Skip(f"no output has a batch axis (output formats {', '.join(session.output_formats())})")
    evidence = _batch_evidence(session, dtype, n)
    for size in (n, other_batch_size(n)):
        if size != n:
            layouts = [layout.with_batch_size(size) for layout in session.layouts]
            layer = session.layer(dtype, layouts)
            xs = session.random_inputs(layouts, dtype, f"inputs batch {size}")
            # What predict is given, before it runs (a layer may replace its learnables).
            held = [layer.get(name) for name in layer.parameter_names]
            evidence = _batch_evidence(session, dtype, size, [*xs, *held], layouts_meta(layouts))
            try:
                outputs = layer.predict(xs)
            except USER_ERRORS as exc:
                problem = raised(
                    "predict",
                    exc,
                    RaisedWhen.BATCH_SIZE,
                    dtype=dtype_name(dtype),
                    observations=size,
                    layout_observations=n,
                )
                return failed(cause=cause_of(exc), evidence=evidence, **problem.to_details())
            require_arrays(named_outputs(layer, outputs), "predict")
        for name, y, axis in zip(session.reference.output_names, outputs.values, axes):
            if axis is not None and (y.ndim <= axis or y.shape[axis] != size):
                return failed(**BatchSize(name, size, tuple(y.shape), axis).to_details(), evidence=evidence)
    return passed(f"checked with {n} and {other_batch_size(n)} observations")


def _batch_evidence(
    session: CheckContext, dtype: str, size: int, arguments: list[Any] | None = None, layouts: Any = None
) -> LazyEvidence:
    """For --repro: predict's call with `size` observations (the session's own call, or the
    `arguments` on `layouts` of another batch size)."""
    extra = {} if layouts is None else {"layouts": layouts}
    return functools.partial(
        call_evidence,
        session,
        ReproKind.SIZES,
        "output_batch_size_matches_input",
        "predict",
        dtype,
        arguments,
        observations=size,
        **extra,
    )
