"""State parameters: updated states keep their shape and dtype, and reset_state resets them."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from layercheck.checks.common import dtype_name, primary_dtype, raised, require_forward
from layercheck.checks.context import CheckContext
from layercheck.checks.evidence import call_evidence
from layercheck.checks.registry import LAYERS_ONLY, Incomplete, Outcome, Skip, check, failed, passed
from layercheck.contract.adapter import Adapter
from layercheck.errors import USER_ERRORS
from layercheck.findings.comparison import Compared, ComparisonReport
from layercheck.findings.problems import RaisedWhen, StateFault, StateProblem
from layercheck.numerics import arrays
from layercheck.numerics.compare import mismatch
from layercheck.reproducers.evidence import ReproKind
from layercheck.results import Blocked, Call, Status, cause_of

__all__ = [
    "forward_returns_valid_states",
    "predict_returns_valid_states",
    "require_state",
    "reset_state_does_not_error",
]


def require_state(layer: Adapter) -> None:
    if not layer.state:
        raise Skip("the layer has no state")


def _state_problem(name: str, updated: Any, current: Any, method: str, dtype: Any) -> StateProblem | None:
    found = functools.partial(StateProblem, name, method, dtype_name(dtype), arrays.describe(updated))
    if not arrays.is_array(updated):
        return found(StateFault.NOT_ARRAY)
    if updated.shape != current.shape:
        return found(StateFault.SHAPE, str(tuple(current.shape)))
    if np.dtype(updated.dtype) != np.dtype(current.dtype):
        return found(StateFault.DTYPE, str(current.dtype))
    if arrays.array_module(updated) is not arrays.array_module(current):
        return found(StateFault.MODULE, arrays.describe(current))
    return None


def _returns_valid_states(session: CheckContext, method: str) -> Outcome:
    layer = session.reference
    require_state(layer)
    ran = False
    for dtype in session.options.dtypes:
        step = session.step(method, dtype)
        if not step.ok:
            continue
        ran = True
        for name, updated in zip(layer.state, step.value.states):
            current = session.parameters(dtype)[name]
            problem = _state_problem(name, updated, current, method, dtype)
            if problem:
                evidence = functools.partial(
                    call_evidence,
                    session,
                    ReproKind.SIZES,
                    f"{method}_returns_valid_states",
                    method,
                    dtype,
                    judged="states",  # what the script checks of the call (its outputs' shapes, else)
                )
                return failed(evidence=evidence, **problem.to_details())
    if not ran:
        raise Incomplete(f"not checked: {method} failed at every tested dtype", blocked=Blocked(Call(method)))
    return passed()


@check(
    "predict_returns_valid_states",
    "the states predict returns are arrays of the shape and dtype of the states they update",
    "predictReturnsValidStates",
    kinds=LAYERS_ONLY,
    repro=ReproKind.SIZES,
    calls=(Call.PREDICT,),
)
def predict_returns_valid_states(session: CheckContext) -> Outcome:
    return _returns_valid_states(session, "predict")


@check(
    "forward_returns_valid_states",
    "the states forward returns are arrays of the shape and dtype of the states they update",
    "forwardReturnsValidStates",
    kinds=LAYERS_ONLY,
    repro=ReproKind.SIZES,
    calls=(Call.FORWARD,),
)
def forward_returns_valid_states(session: CheckContext) -> Outcome:
    require_forward(session.reference)
    return _returns_valid_states(session, "forward")


@check(
    "reset_state_does_not_error",
    "after predict has updated the state, reset_state runs without error and restores the initial state",
    "resetStateDoesNotError",
    kinds=LAYERS_ONLY,
    repro=ReproKind.MUTATION,
    calls=(Call.PREDICT, Call.RESET_STATE),
)
def reset_state_does_not_error(session: CheckContext) -> Outcome:
    reference = session.reference
    require_state(reference)
    if not reference.has_reset_state:
        raise Skip("no reset_state defined")
    # At every tested dtype: a state reset to the default dtype (np.zeros) is float64 in a
    # float32 layer, and float64 alone would not show it.
    primary = primary_dtype(session)
    others = [d for d in session.options.dtypes if np.dtype(d) != np.dtype(primary)]
    outcome = _reset(session, primary)
    for dtype in others:
        if outcome.status is not Status.PASSED:
            break
        try:
            found = _reset(session, dtype, primary=False)
        except Incomplete:
            continue  # predict failed at that dtype: its own checks say so
        if found.status is not Status.PASSED:
            outcome = found
    return outcome


def _reset(session: CheckContext, dtype: Any, primary: bool = True) -> Outcome:
    """reset_state after predict on a layer at `dtype`: what it left of each state (a failure
    at another dtype than the `primary` one names it)."""
    layer = session.layer(dtype)
    initial = {name: layer.get(name) for name in layer.state}
    try:
        updated = layer.predict(session.inputs(dtype)).states
    except USER_ERRORS as exc:
        raise Incomplete(f"not checked: predict raised {type(exc).__name__}", cause=cause_of(exc)) from None
    layer.set_parameters(dict(zip(layer.state, updated)))  # what a network does between time steps
    evidence = functools.partial(
        call_evidence, session, ReproKind.MUTATION, "reset_state_does_not_error", "reset_state", dtype
    )
    try:
        layer.reset_state()
    except USER_ERRORS as exc:
        when = RaisedWhen.PLAIN if primary else RaisedWhen.DTYPE
        problem = raised("reset_state", exc, when, dtype=dtype_name(dtype))
        return failed(cause=cause_of(exc), evidence=evidence, **problem.to_details())
    at = None if primary else dtype_name(dtype)
    changed = []
    for name, before, after_predict in zip(layer.state, initial.values(), updated):
        after = layer.get(name)
        if (
            not arrays.is_array(after)
            or after.shape != before.shape
            or after.dtype != before.dtype
            or arrays.array_module(after) is not arrays.array_module(before)
        ):
            was, became = arrays.describe(before), arrays.describe(after)
            replaced = ComparisonReport(Compared.RESTORED, name, None, at, was=was, became=became)
            return failed(evidence=evidence, **replaced.to_details())
        diff = mismatch(after, before)
        if diff is not None:
            return failed(
                evidence=evidence,
                **ComparisonReport(Compared.RESTORED, name, diff, at).to_details(),
            )
        if (
            arrays.is_array(after_predict)
            and after_predict.shape == before.shape
            and mismatch(after_predict, before) is not None
        ):
            changed.append(name)
    note = f"{', '.join(changed)} updated by predict and restored" if changed else "predict left the state as it was"
    return passed(note)
