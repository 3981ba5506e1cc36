"""Outputs and gradients keep the tested precision and the array type of the inputs."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from layercheck.checks.common import dtype_name, named_outputs, require_backward, require_own_forward
from layercheck.checks.context import CheckContext
from layercheck.checks.evidence import call_evidence
from layercheck.checks.registry import LAYERS_ONLY, Incomplete, Outcome, check, failed, passed
from layercheck.contract.adapter import Adapter
from layercheck.findings.problems import LostPrecision, TypeFault, TypeProblem
from layercheck.numerics import arrays
from layercheck.reproducers.evidence import LazyEvidence, ReproKind
from layercheck.results import Blocked, Call, Kind

__all__ = [
    "backward_is_consistent_in_type",
    "complex_allowed",
    "expected_dtype",
    "forward_is_consistent_in_type",
    "predict_is_consistent_in_type",
    "type_problem",
]


def expected_dtype(dtype: Any, complex_allowed: bool, actual: Any) -> np.dtype[Any]:
    """The tested precision, complex only where the layer may legitimately produce complex values."""
    real = arrays.precision_of(dtype)
    if complex_allowed and np.dtype(actual.dtype).kind == "c":
        return np.result_type(real, np.complex64)
    return real


def complex_allowed(session: CheckContext, dtype: Any) -> bool:
    """Outputs may be complex when an input or a learnable is complex."""
    params = session.reference_parameters.values()
    return np.dtype(dtype).kind == "c" or any(arrays.is_array(p) and np.dtype(p.dtype).kind == "c" for p in params)


def type_problem(
    name: str, value: Any, expected: np.dtype[Any] | None, dtype: Any, module: Any, *, gradient: bool = False
) -> TypeProblem | None:
    """What is wrong with the type of `value` (an output, or with `gradient` a gradient, of
    the argument whose dtype is `expected`); None when nothing is."""
    tested = dtype_name(dtype)
    if not arrays.is_array(value):
        return TypeProblem(name, tested, TypeFault.NOT_ARRAY, arrays.describe(value))
    if arrays.array_module(value) is not module:
        return TypeProblem(name, tested, TypeFault.OTHER_MODULE, arrays.describe(value), module.__name__)
    found = np.dtype(value.dtype)
    if expected is not None and found != expected:
        fault = TypeFault.COMPLEX if found.kind == "c" and expected.kind != "c" else TypeFault.DTYPE
        return TypeProblem(name, tested, fault, str(found), str(expected), gradient)
    return None


def _evidence(session: CheckContext, method: str, dtype: str, **meta: Any) -> LazyEvidence:
    """For --repro: the call of `method` at `dtype` whose result has another type."""
    return functools.partial(
        call_evidence, session, ReproKind.TYPES, f"{method}_is_consistent_in_type", method, dtype, **meta
    )


def _precision_carried(session: CheckContext) -> bool:
    """Whether an argument carries the tested precision: an input of numbers, or a learnable or
    state of floats. Where every input is integers and nothing else is held, each tested dtype
    gives the layer the same arguments, and its outputs' precision is its own to choose."""
    floats = (p for p in session.reference_parameters.values() if arrays.is_array(p))
    return not all(session.integer_inputs) or any(np.dtype(p.dtype).kind in "fc" for p in floats)


def _outputs_type(session: CheckContext, method: str) -> Outcome:
    layer = session.reference
    ran = False
    carried = _precision_carried(session)
    for dtype in session.options.dtypes:
        step = session.step(method, dtype)
        if not step.ok:
            continue
        ran = True
        allowed = complex_allowed(session, dtype)
        for name, y in named_outputs(layer, step.value):
            expected = expected_dtype(dtype, allowed, y) if arrays.is_array(y) and carried else None
            problem = type_problem(f"{method} output {name}", y, expected, dtype, session.home_module())
            if problem and not carried:
                problem = dataclasses.replace(problem, dtype="integer")  # what the inputs were, at every dtype
            if problem:
                return failed(
                    evidence=_evidence(session, method, dtype, complex_allowed=allowed),
                    method=method,
                    output=name,
                    dtype=dtype_name(dtype),
                    **problem.to_details(),
                )
    if not ran:
        raise Incomplete(f"not checked: {method} failed at every tested dtype", blocked=Blocked(Call(method)))
    if method == ("predict" if layer.kind == Kind.LAYER else "forward"):
        for dtype in session.options.dtypes:
            finding = session.precision(dtype)
            if finding.at_float32:
                lost = LostPrecision(
                    method, dtype_name(dtype), finding.moved, finding.step, finding.roundoff, finding.float32_values
                )
                return failed(**lost.to_details())
    return passed()


@check(
    "predict_is_consistent_in_type",
    "predict keeps the precision and array type of its inputs and learnables",
    "predictIsConsistentInType",
    kinds=LAYERS_ONLY,
    repro=ReproKind.TYPES,
    calls=(Call.PREDICT,),
)
def predict_is_consistent_in_type(session: CheckContext) -> Outcome:
    return _outputs_type(session, "predict")


@check(
    "forward_is_consistent_in_type",
    "forward keeps the precision and array type of its inputs and learnables",
    "forwardIsConsistentInType",
    repro=ReproKind.TYPES,
    calls=(Call.FORWARD,),
)
def forward_is_consistent_in_type(session: CheckContext) -> Outcome:
    require_own_forward(session.reference, "predict_is_consistent_in_type")
    return _outputs_type(session, "forward")


def _given(layer: Adapter, outputs: Sequence[Any], grad: Any, dtype: Any, problem: TypeProblem) -> TypeProblem:
    """Why a gradient may have the dtype it has: the dL/dY backward was given had it, as an
    output of the training step did at the tested `dtype` (a wrong dtype of that pass's, which
    its own check names): the problem with that output, where one explains it."""
    method = "forward" if layer.has_forward and not layer.forward_is_predict else "predict"
    for name, y in zip(layer.output_names, outputs):
        if arrays.is_array(y) and y.dtype != np.dtype(dtype) and y.dtype == getattr(grad, "dtype", None):
            return dataclasses.replace(problem, given=name, given_by=method, given_dtype=dtype_name(y.dtype))
    return problem


@check(
    "backward_is_consistent_in_type",
    "each gradient has the dtype and array type of its argument",
    "backwardIsConsistentInType",
    repro=ReproKind.TYPES,
    calls=(Call.FORWARD, Call.BACKWARD),
)
def backward_is_consistent_in_type(session: CheckContext) -> Outcome:
    layer = session.reference
    require_backward(layer)
    ran = False
    for dtype in session.options.dtypes:
        step = session.backward(dtype)
        if not step.ok:
            continue
        ran = True
        result = step.value
        args = list(result.inputs) + [result.layer.get(n) for n in layer.parameter_names]
        integer = session.integer_arguments
        for name, grad, arg, skip in zip(layer.gradient_names(), result.gradients.all, args, integer):
            if grad is None or skip or not arrays.is_array(arg):
                continue  # reported by backward_is_consistent_in_size
            problem = type_problem(
                f"gradient {layer.d(name)}", grad, np.dtype(arg.dtype), dtype, arrays.array_module(arg), gradient=True
            )
            if problem:
                return failed(
                    evidence=_evidence(
                        session,
                        "backward",
                        dtype,
                        loss=sum(session.training_output_gradients(result.outputs, dtype), ()),
                    ),
                    argument=name,
                    dtype=dtype_name(dtype),
                    **_given(layer, result.outputs.values, grad, dtype, problem).to_details(),
                )
    if not ran:
        raise Incomplete("not checked: backward failed at every tested dtype", blocked=Blocked(Call.BACKWARD))
    return passed()
