"""Differentiable operations: backward honours its `compute_gradients` mask."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from layercheck.checks.common import dtype_name, primary_dtype, raised
from layercheck.checks.context import CheckContext
from layercheck.checks.evidence import call_evidence
from layercheck.checks.registry import OPERATIONS_ONLY, Incomplete, Outcome, check, failed, passed
from layercheck.errors import USER_ERRORS
from layercheck.findings.problems import MaskFault, MaskProblem, RaisedWhen
from layercheck.numerics import arrays
from layercheck.numerics.compare import mismatch, repeat_tolerance
from layercheck.reproducers.evidence import Evidence, ReproKind
from layercheck.results import Call, cause_of

__all__ = ["backward_respects_compute_gradients"]


def _mask_problem(
    names: Sequence[str], mask: Sequence[bool], gradients: Sequence[Any], reference: Sequence[Any]
) -> MaskProblem | None:
    """What is wrong with one masked call's gradients, compared with the all-True call."""
    found = functools.partial(MaskProblem, tuple(names), tuple(mask))
    for name, wanted, grad, full in zip(names, mask, gradients, reference):
        if not wanted and grad is not None:
            return found(name, MaskFault.UNREQUESTED)
        if wanted and grad is None:
            return found(name, MaskFault.MISSING)
        if wanted:
            if not arrays.is_array(grad) or grad.shape != full.shape:
                return found(name, MaskFault.MALFORMED, arrays.describe(grad), arrays.describe(full))
            diff = mismatch(grad, full, atol=repeat_tolerance(full))
            if diff is not None:
                return found(name, MaskFault.DIFFERS, mismatch=diff)
    return None


@check(
    "backward_respects_compute_gradients",
    "with a single gradient requested, and with all, backward returns exactly the requested "
    "gradients (None for the others), equal to those of the all-True call",
    kinds=OPERATIONS_ONLY,
    repro=ReproKind.MASKS,
    calls=(Call.FORWARD, Call.BACKWARD),
)
def backward_respects_compute_gradients(session: CheckContext) -> Outcome:
    operation = session.reference
    dtype = primary_dtype(session)
    full = session.backward(dtype).require()
    names = operation.input_names
    reference = full.gradients.inputs
    differentiable = operation.differentiable

    def evidence() -> Evidence:  # for --repro only: dL/dY as the full call's
        loss = list(session.training_output_gradients(full.outputs, dtype)[0])
        return call_evidence(
            session, ReproKind.MASKS, "backward_respects_compute_gradients", "backward", dtype, loss=loss
        )

    missing = [name for name, grad, d in zip(names, reference, differentiable) if d and not arrays.is_array(grad)]
    if missing:
        none = MaskProblem(names, differentiable, missing[0], MaskFault.NONE_AT_ALL, missing=tuple(missing))
        return failed(evidence=evidence, **none.to_details())
    n = operation.num_inputs
    masks = [tuple(j == i for j in range(n)) for i in range(n) if differentiable[i]] + [differentiable]
    for mask in masks:
        op = session.layer(dtype)
        xs = session.inputs(dtype)
        try:
            outputs = op.forward(xs)
        except USER_ERRORS as exc:
            raise Incomplete(
                f"not checked: forward raised {type(exc).__name__} on a second call", cause=cause_of(exc)
            ) from None
        try:
            dLdY, _ = session.training_output_gradients(full.outputs, dtype)  # as the full call's, unwritten
            gradients = op.backward(xs, outputs, list(dLdY), (), mask).inputs
        except USER_ERRORS as exc:
            error = raised("backward", exc, RaisedWhen.MASK, dtype=dtype_name(dtype), inputs=names, mask=mask)
            return failed(cause=cause_of(exc), **error.to_details())
        problem = _mask_problem(names, mask, gradients, reference)
        if problem:
            return failed(evidence=evidence, **problem.to_details())
    return passed(f"{len(masks)} masks checked")
