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
from layercheck.numerics import arrays
from layercheck.reproducers.evidence import ReproKind
from layercheck.results import Blocked, Call
from layercheck.safetext import safe_str
from layercheck.userframes import exception_summary

__all__ = [
    "backward_does_not_error",
    "backward_is_consistent_in_size",
    "describe_reduction",
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
        message = step.error.summary() + f" with {dtype_name(dtype)} inputs"
        hint = _unassigned_hint(step.error.exception)
        if hint:
            message += f": {hint}"
        return failed(message, traceback=step.error.traceback, cause=step.error.cause, dtype=dtype_name(dtype))

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


def describe_reduction(grad_shape: tuple[int, ...], arg_shape: tuple[int, ...], labels: str | None) -> str:
    """Name the axes a wrongly shaped gradient was (or was not) reduced over."""
    if len(grad_shape) != len(arg_shape):
        if sorted(d for d in grad_shape if d != 1) == sorted(d for d in arg_shape if d != 1):
            return "it has the right elements but the wrong number of axes (reshape or keepdims=True)"
        return f"it has {len(grad_shape)} axes instead of {len(arg_shape)}"
    if tuple(reversed(grad_shape)) == tuple(arg_shape) and len(arg_shape) == 2:
        return "it is transposed"

    def axis(i: int) -> str:
        return f"axis {i} ({labels[i]})" if labels and i < len(labels) else f"axis {i}"

    not_reduced = [axis(i) for i, (g, a) in enumerate(zip(grad_shape, arg_shape)) if a == 1 and g != 1]
    over_reduced = [axis(i) for i, (g, a) in enumerate(zip(grad_shape, arg_shape)) if a != 1 and g == 1]
    parts = []
    if not_reduced:
        parts.append("it was not summed over " + ", ".join(not_reduced))
    if over_reduced:
        parts.append("it was summed over " + ", ".join(over_reduced) + ", which the argument keeps")
    return "; ".join(parts) or "the axis sizes differ"


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
    message, details = problem
    dtype = primary_dtype(session)
    result = session.backward(dtype).require()
    loss = sum(session.training_output_gradients(result.outputs, dtype), ())
    evidence = functools.partial(
        call_evidence, session, ReproKind.SIZES, "backward_is_consistent_in_size", "backward", dtype, loss=loss
    )
    return failed(message, evidence=evidence, **details)


def gradient_size_problem(session: CheckContext) -> tuple[str, dict[str, Any]] | None:
    """What is wrong with backward's gradients at the primary dtype, with the check's details,
    or None: one gradient per argument, an array of numbers of the argument's shape (None
    for an integer input). The checks that take gradients apart by axis need it to hold.

    Every argument with a problem is named (a batch normalization's dgamma and dbeta both of
    shape (1, D)); those with the same wrong shape for the same reason in one sentence. The
    details are the first's, with `problem_arguments` naming them all."""
    layer = session.reference
    result = session.backward(primary_dtype(session)).require()
    args = list(result.inputs) + [result.layer.get(n) for n in layer.parameter_names]
    found = [
        problem
        for i, (name, grad, arg) in enumerate(zip(layer.gradient_names(), result.gradients.all, args))
        if (problem := _size_problem(session, i, name, grad, arg)) is not None
    ]
    if not found:
        return None
    sentences: list[str] = []
    shapes: dict[tuple[Any, ...], list[str]] = {}  # (gradient shape, argument shape, why) -> names
    for message, details in found:
        if "diagnosis" in details:
            key = (tuple(details["gradient_shape"]), tuple(details["argument_shape"]), details["diagnosis"])
            if key not in shapes:
                sentences.append("")  # its place, filled below
                shapes[key] = []
            shapes[key].append(details["argument"])
            continue
        sentences.append(message)
    grouped = iter(_shape_sentence(names, *key) for key, names in shapes.items())
    message = "; ".join(sentence or next(grouped) for sentence in sentences)
    details = dict(found[0][1])
    if len(found) > 1:
        details["problem_arguments"] = [d["argument"] for _, d in found]
    return message, details


def _shape_sentence(
    names: list[str], gradient_shape: tuple[int, ...], argument_shape: tuple[int, ...], why: str
) -> str:
    if len(names) == 1:
        name = names[0]
        return f"the gradient of {name} has shape {gradient_shape} but {name} has shape {argument_shape}: {why}"
    joined = ", ".join(names[:-1]) + " and " + names[-1]
    each = "each " + why[len("it ") :] if why.startswith("it ") else why  # "each is transposed"
    return f"the gradients of {joined} have shape {gradient_shape} but {joined} have shape {argument_shape}: {each}"


def _size_problem(session: CheckContext, i: int, name: str, grad: Any, arg: Any) -> tuple[str, dict[str, Any]] | None:
    """What is wrong with the gradient `grad` of the `i`th argument, `name`, or None."""
    if session.integer_arguments[i]:
        if grad is not None:
            return (
                f"backward returned {arrays.describe(grad)} as the gradient of {name}, an integer input: "
                "it must return None for it"
            ), {"argument": name}
        return None
    if grad is None:
        return f"backward returned None as the gradient of {name}", {"argument": name}
    if not arrays.is_array(grad):
        return f"the gradient of {name} is {arrays.describe(grad)}, not an array", {"argument": name}
    held = not_numbers(grad.dtype)
    if held is not None:
        return (
            f"the gradient of {name} is an array of dtype {safe_str(grad.dtype, 80)}, which holds {held}; "
            "gradients must hold numbers"
        ), {"argument": name}
    if tuple(grad.shape) == tuple(arg.shape):
        return None
    first = session.layouts[0]
    labels = (
        session.layouts[i].format
        if i < session.reference.num_inputs
        else (first.format if arg.ndim == first.ndim else None)
    )
    why = describe_reduction(tuple(grad.shape), tuple(arg.shape), labels)
    return (f"the gradient of {name} has shape {tuple(grad.shape)} but {name} has shape {tuple(arg.shape)}: {why}"), {
        "argument": name,
        "gradient_shape": list(grad.shape),
        "argument_shape": list(arg.shape),
        "diagnosis": why,
    }
