"""backward runs and returns one gradient of the right size per argument."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import Enum
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
    "Axis",
    "Reduction",
    "SizeProblem",
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


class Misshape(Enum):
    """How a gradient's shape differs from its argument's."""

    KEEPDIMS = "right elements, wrong number of axes"
    AXES = "wrong number of axes"
    TRANSPOSED = "transposed"
    SUMMED = "summed over the wrong axes"
    SIZES = "axis sizes differ"


@dataclass(frozen=True)
class Axis:
    """An axis of an argument, by index, with its letter in the argument's format if known."""

    index: int
    label: str | None = None

    def __str__(self) -> str:
        return f"axis {self.index}" if self.label is None else f"axis {self.index} ({self.label})"


@dataclass(frozen=True)
class Reduction:
    """How a gradient of shape `gradient` differs from its argument of shape `argument`: the
    axes it was not summed over (it keeps an axis the argument has at size 1), the axes it has at
    size 1 where the argument does not, or what else."""

    kind: Misshape
    gradient: tuple[int, ...]
    argument: tuple[int, ...]
    not_summed: tuple[Axis, ...] = ()
    summed: tuple[Axis, ...] = ()

    @classmethod
    def of(cls, gradient: tuple[int, ...], argument: tuple[int, ...], labels: str | None) -> Reduction:
        """`labels`: the argument's format (a letter per axis), or None."""
        if len(gradient) != len(argument):
            same = sorted(d for d in gradient if d != 1) == sorted(d for d in argument if d != 1)
            return cls(Misshape.KEEPDIMS if same else Misshape.AXES, gradient, argument)
        if tuple(reversed(gradient)) == argument and len(argument) == 2:
            return cls(Misshape.TRANSPOSED, gradient, argument)

        def axis(i: int) -> Axis:
            return Axis(i, labels[i] if labels and i < len(labels) else None)

        pairs = list(enumerate(zip(gradient, argument)))
        not_summed = tuple(axis(i) for i, (g, a) in pairs if a == 1 and g != 1)
        summed = tuple(axis(i) for i, (g, a) in pairs if a != 1 and g == 1)
        kind = Misshape.SUMMED if not_summed or summed else Misshape.SIZES
        return cls(kind, gradient, argument, not_summed, summed)

    def says(self, subject: str = "it") -> str:
        """The reduction in words, of `subject` ("it", or "each" for several gradients)."""
        if self.kind is Misshape.KEEPDIMS:
            return f"{subject} has the right elements but the wrong number of axes (reshape or keepdims=True)"
        if self.kind is Misshape.AXES:
            return f"{subject} has {len(self.gradient)} axes instead of {len(self.argument)}"
        if self.kind is Misshape.TRANSPOSED:
            return f"{subject} is transposed"
        if self.kind is Misshape.SIZES:
            return "the axis sizes differ"
        parts = []
        if self.not_summed:
            parts.append("was not summed over " + ", ".join(map(str, self.not_summed)))
        if self.summed:
            # The shape shows that the axis is gone, not how: a sum, a mean, or one slice of it
            # (numpy-ml's LSTM unpacks a cell's single gradient into its first observation).
            one = len(self.summed) == 1
            sizes = ", ".join(str(self.argument[axis.index]) for axis in self.summed)
            parts.append(
                f"has size 1 along {', '.join(map(str, self.summed))}, where the argument has {sizes} "
                f"(summed, averaged or sliced over {'it' if one else 'them'}?)"
            )
        return "; ".join(f"{subject if k == 0 else 'it'} {part}" for k, part in enumerate(parts))


class Fault(Enum):
    """What is wrong with a gradient backward returned, before its values are compared."""

    FOR_INTEGER_INPUT = "returned for an integer input"
    NONE = "None"
    NOT_AN_ARRAY = "not an array"
    NOT_NUMBERS = "holds no numbers"
    SHAPE = "wrong shape"


@dataclass(frozen=True)
class SizeProblem:
    """One gradient's problem: the `argument`'s name, what is wrong, what was returned in its
    place (`returned`: described, or its dtype where it holds no numbers, and what that
    dtype holds), and for a wrong shape how it differs (`reduction`)."""

    argument: str
    fault: Fault
    returned: str = ""
    holds: str = ""
    reduction: Reduction | None = None

    def sentence(self) -> str:
        name = self.argument
        if self.fault is Fault.FOR_INTEGER_INPUT:
            return f"backward returned {self.returned} as the gradient of {name}, an integer input: it must return None for it"
        if self.fault is Fault.NONE:
            return f"backward returned None as the gradient of {name}"
        if self.fault is Fault.NOT_AN_ARRAY:
            return f"the gradient of {name} is {self.returned}, not an array"
        if self.fault is Fault.NOT_NUMBERS:
            return (
                f"the gradient of {name} is an array of dtype {self.returned}, which holds {self.holds}; "
                "gradients must hold numbers"
            )
        assert self.reduction is not None
        return _shape_sentence([name], self.reduction)

    def details(self) -> dict[str, Any]:
        """The report's details of the check (the keys of the JSON schema)."""
        if self.reduction is None:
            return {"argument": self.argument}
        return {
            "argument": self.argument,
            "gradient_shape": list(self.reduction.gradient),
            "argument_shape": list(self.reduction.argument),
            "diagnosis": self.reduction.says(),
        }


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
    # The problems in order, those of one wrong shape for one reason at the first one's place.
    shapes: dict[Reduction, list[str]] = {}
    places: list[SizeProblem | Reduction] = []
    for problem in found:
        if problem.reduction is None:
            places.append(problem)
        elif problem.reduction not in shapes:
            shapes[problem.reduction] = [problem.argument]
            places.append(problem.reduction)
        else:
            shapes[problem.reduction].append(problem.argument)
    message = "; ".join(
        place.sentence() if isinstance(place, SizeProblem) else _shape_sentence(shapes[place], place)
        for place in places
    )
    details = found[0].details()
    if len(found) > 1:
        details["problem_arguments"] = [problem.argument for problem in found]
    return message, details


def _shape_sentence(names: list[str], reduction: Reduction) -> str:
    gradient, argument = reduction.gradient, reduction.argument
    if len(names) == 1:
        name = names[0]
        return f"the gradient of {name} has shape {gradient} but {name} has shape {argument}: {reduction.says()}"
    joined = ", ".join(names[:-1]) + " and " + names[-1]
    return (
        f"the gradients of {joined} have shape {gradient} but {joined} have shape {argument}: {reduction.says('each')}"
    )


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
