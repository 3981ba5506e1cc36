"""backward runs and returns one gradient of the right size per argument."""

from __future__ import annotations

import functools
from typing import Any

from layercheck.checks.common import dtype_name, first_failure, primary_dtype, require_backward
from layercheck.checks.context import CallError, CheckContext, Step
from layercheck.checks.evidence import call_evidence
from layercheck.checks.registry import Incomplete, Outcome, check, failed, passed
from layercheck.contract.adapter import not_numbers
from layercheck.errors import USER_ERRORS
from layercheck.findings.problems import RaisedWhen
from layercheck.findings.sizes import Fault, Reduction, SizeProblem, SizeReport
from layercheck.numerics import arrays
from layercheck.reproducers.evidence import ReproKind
from layercheck.results import Blocked, Call
from layercheck.safetext import safe_str
from layercheck.userframes import exception_summary

__all__ = [
    "backward_does_not_error",
    "backward_is_consistent_in_size",
    "fresh_training_step",
    "gradient_size_problem",
]


@check(
    "backward_does_not_error",
    "backward runs without error at every tested dtype",
    "backwardDoesNotError",
    calls=(Call.FORWARD, Call.BACKWARD),
)
def backward_does_not_error(session: CheckContext) -> Outcome:
    require_backward(session.reference)

    def describe(step: Step, dtype: str) -> Outcome | None:
        if step.error is None:
            return None
        if step.error.is_contract:
            raise Incomplete(
                f"backward ran but broke the contract: {step.error.summary()} (see function_syntaxes_are_correct)",
                blocked=Blocked(Call.BACKWARD, broke_contract=True),
            )
        if step.error.method != "backward":
            raise Incomplete(f"not checked: {step.error.summary()}", cause=step.error.cause)
        _raise_if_only_repeats_fail(session, dtype, step.error)
        hint = _unassigned_hint(step.error.exception) or ""
        problem = step.error.raised(RaisedWhen.DTYPE, dtype=dtype_name(dtype), hint=hint)
        return failed(traceback=step.error.traceback, cause=step.error.cause, **problem.to_details())

    return first_failure(session, session.backward, describe) or passed()


def _raise_if_only_repeats_fail(session: CheckContext, dtype: str, error: CallError) -> None:
    """backward raised at `dtype` after running at an earlier dtype: if the earlier call now
    raises too, on a new layer object, what fails is calling backward again, not this dtype
    (backward_is_repeatable reports it)."""
    for earlier in session.options.dtypes[: session.options.dtypes.index(dtype)]:
        if not session.backward(earlier).ok:
            continue
        again = fresh_training_step(session, earlier)
        if again is not None:
            raise Incomplete(
                f"not checked: backward ran with {dtype_name(earlier)} inputs, then raised on later calls, even on "
                f"new layer objects ({error.summary()} with {dtype_name(dtype)} inputs; {again} with "
                f"{dtype_name(earlier)} inputs again): see backward_is_repeatable",
                cause=error.cause,
            )


def fresh_training_step(session: CheckContext, dtype: Any) -> str | None:
    """forward and backward on a new layer object at `dtype`: what they raised, or None."""
    layer = session.layer(dtype)
    xs = session.inputs(dtype)
    try:
        outputs = layer.forward(xs)
        dLdY, dLdS = session.training_output_gradients(outputs, dtype)
        layer.backward(xs, outputs, dLdY, dLdS)
    except USER_ERRORS as exc:
        return f"raised {exception_summary(exc)}"
    return None


def _unassigned_hint(exc: BaseException) -> str | None:
    """NameError/UnboundLocalError on a dLd... name: the gradient was never assigned."""
    name = getattr(exc, "name", None)
    if isinstance(exc, NameError) and name and name.lower().startswith("dld"):
        return f"{name} is returned but never assigned"
    return None


@check(
    "backward_is_consistent_in_size",
    "backward returns one gradient per input, learnable and state, each of its argument's shape",
    "backwardIsConsistentInSize",
    repro=ReproKind.SIZES,
    calls=(Call.FORWARD, Call.BACKWARD),
)
def backward_is_consistent_in_size(session: CheckContext) -> Outcome:
    require_backward(session.reference)
    problem = gradient_size_problem(session)
    if problem is None:
        return passed()
    dtype = primary_dtype(session)
    result = session.backward(dtype).require()
    loss = sum(session.training_output_gradients(result.outputs, dtype), ())
    evidence = functools.partial(
        call_evidence, session, ReproKind.SIZES, "backward_is_consistent_in_size", "backward", dtype, loss=loss
    )
    return failed(evidence=evidence, **problem.to_details())


def gradient_size_problem(session: CheckContext) -> SizeReport | None:
    """What is wrong with backward's gradients at the primary dtype, or None: one gradient per
    argument, an array of numbers of the argument's shape (None for an integer input). The
    checks that take gradients apart by axis need it to hold. Every argument with a problem
    is named (a batch normalization's dgamma and dbeta both of shape (1, D))."""
    layer = session.reference
    result = session.backward(primary_dtype(session)).require()
    args = list(result.inputs) + [result.layer.get(n) for n in layer.parameter_names]
    found = [
        problem
        for i, (name, grad, arg) in enumerate(zip(layer.gradient_names(), result.gradients.all, args))
        if (problem := _size_problem(session, i, name, grad, arg)) is not None
    ]
    return SizeReport(tuple(found)) if found else None


def _size_problem(session: CheckContext, i: int, name: str, grad: Any, arg: Any) -> SizeProblem | None:
    """What is wrong with the gradient `grad` of the `i`th argument, `name`, or None."""
    if session.integer_arguments[i]:
        return None if grad is None else SizeProblem(name, Fault.FOR_INTEGER_INPUT, arrays.describe(grad))
    if grad is None:
        return SizeProblem(name, Fault.NONE)
    if not arrays.is_array(grad):
        return SizeProblem(name, Fault.NOT_AN_ARRAY, arrays.describe(grad))
    held = not_numbers(grad.dtype)
    if held is not None:
        return SizeProblem(name, Fault.NOT_NUMBERS, safe_str(grad.dtype, 80), held)
    if tuple(grad.shape) == tuple(arg.shape):
        return None
    first = session.layouts[0]
    labels = (
        session.layouts[i].format
        if i < session.reference.num_inputs
        else (first.format if arg.ndim == first.ndim else None)
    )
    return SizeProblem(name, Fault.SHAPE, reduction=Reduction.of(tuple(grad.shape), tuple(arg.shape), labels))
