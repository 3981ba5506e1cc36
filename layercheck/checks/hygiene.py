"""Beyond MATLAB: layers must not modify their arguments and must be deterministic."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from layercheck.checks.backward import fresh_training_step
from layercheck.checks.common import named_outputs, primary_dtype, require_backward, require_forward, snapshot
from layercheck.checks.context import CheckContext
from layercheck.checks.registry import LAYERS_ONLY, Incomplete, Outcome, check, failed, passed
from layercheck.contract.adapter import Adapter
from layercheck.errors import USER_ERRORS
from layercheck.numerics import arrays
from layercheck.numerics.compare import mismatch, repeat_tolerance
from layercheck.results import Kind, cause_of
from layercheck.userframes import exception_summary

__all__ = [
    "backward_does_not_modify_inputs",
    "backward_is_repeatable",
    "forward_does_not_modify_inputs",
    "predict_does_not_modify_inputs",
    "predict_is_deterministic",
]


def _modified(before: Sequence[tuple[str, Any]], after: Sequence[tuple[str, Any]]) -> str | None:
    for (name, old), (_, new) in zip(before, after):
        if not arrays.is_array(old):
            continue
        if not arrays.is_array(new) or new.shape != old.shape:
            return f"{name} was replaced ({arrays.describe(old)} became {arrays.describe(new)})"
        diff = mismatch(new, old)
        if diff is not None:
            return f"{name} was modified in place: " + diff.detail()
    return None


def _arguments(layer: Adapter, xs: Sequence[Any]) -> list[tuple[str, Any]]:
    return (
        list(zip(layer.input_names, xs))
        + [(f"learnable {n}", layer.get(n)) for n in layer.learnables]
        + [(f"state {n}", layer.get(n)) for n in layer.state]
    )


def _does_not_modify(session: CheckContext, method: str) -> Outcome:
    dtype = primary_dtype(session)
    getattr(session, method)(dtype).require()
    layer = session.layer(dtype)
    xs = session.inputs(dtype)
    before = snapshot(_arguments(layer, xs))
    try:
        getattr(layer, method)(xs)
    except USER_ERRORS as exc:
        raise Incomplete(f"not checked: {method} raised {type(exc).__name__}", cause=cause_of(exc)) from None
    problem = _modified(before, _arguments(layer, xs))
    if problem:
        return failed(f"{method} modifies its arguments: {problem}")
    return passed()


@check(
    "predict_does_not_modify_inputs",
    "predict leaves its inputs, learnables and state unchanged",
    kinds=LAYERS_ONLY,
)
def predict_does_not_modify_inputs(session: CheckContext) -> Outcome:
    return _does_not_modify(session, "predict")


@check(
    "forward_does_not_modify_inputs",
    "forward leaves its inputs, learnables and state unchanged (it returns updated states instead)",
)
def forward_does_not_modify_inputs(session: CheckContext) -> Outcome:
    require_forward(session.reference)
    return _does_not_modify(session, "forward")


@check(
    "backward_does_not_modify_inputs",
    "backward leaves X, Y, dLdY, learnables and state unchanged",
)
def backward_does_not_modify_inputs(session: CheckContext) -> Outcome:
    require_backward(session.reference)
    dtype = primary_dtype(session)
    session.backward(dtype).require()
    layer = session.layer(dtype)
    xs = session.inputs(dtype)
    outputs = layer.forward(xs)
    dLdY, dLdS = session.output_gradients(outputs, "dLdY modify")
    names = [f"output {n}" for n in layer.output_names] + [f"dLd{n}" for n in layer.output_names]
    names += [f"dLd{s}_out" for s in layer.state]
    args = _arguments(layer, xs) + list(zip(names, [*outputs.values, *dLdY, *dLdS]))
    before = snapshot(args)
    try:
        layer.backward(xs, outputs, dLdY, dLdS)
    except USER_ERRORS as exc:
        raise Incomplete(f"not checked: backward raised {type(exc).__name__}", cause=cause_of(exc)) from None
    after = _arguments(layer, xs) + list(zip(names, [*outputs.values, *dLdY, *dLdS]))
    problem = _modified(before, after)
    if problem:
        return failed(f"backward modifies its arguments: {problem}")
    return passed()


@check(
    "predict_is_deterministic",
    "predict returns the same outputs when called twice with the same inputs",
    kinds=LAYERS_ONLY,
)
def predict_is_deterministic(session: CheckContext) -> Outcome:
    dtype = primary_dtype(session)
    session.predict(dtype).require()
    layer = session.layer(dtype)
    try:
        first = named_outputs(layer, layer.predict(session.inputs(dtype)))
        second = named_outputs(layer, layer.predict(session.inputs(dtype)))
    except USER_ERRORS as exc:
        raise Incomplete(
            f"not checked: predict raised {type(exc).__name__} when called again", cause=cause_of(exc)
        ) from None
    for (name, a), (_, b) in zip(first, second):
        if not (arrays.is_array(a) and arrays.is_array(b)) or a.shape != b.shape:
            return failed(f"two calls of predict return {name} as {arrays.describe(a)} and {arrays.describe(b)}")
        diff = mismatch(b, a, atol=repeat_tolerance(a))
        if diff is not None:
            return failed(
                "predict is not deterministic: " + diff.describe(f"{name} of the second call"),
                output=name,
                mismatch=diff.to_dict(),
            )
    return passed()


def _training_step(layer: Adapter, xs: Sequence[Any], dLdY: Sequence[Any], dLdS: Sequence[Any]) -> tuple[Any, ...]:
    outputs = layer.forward(xs)
    return layer.backward(xs, outputs, list(dLdY), list(dLdS)).all  # fresh draws: no copy needed


@check(
    "backward_is_repeatable",
    "forward then backward, run twice on the same layer object (with predict between), give "
    "the same gradients: nothing cached or accumulated between calls changes them",
)
def backward_is_repeatable(session: CheckContext) -> Outcome:
    layer = session.reference
    require_backward(layer)
    dtype = primary_dtype(session)
    # The session's training step ran on a new layer object: its gradients are the first
    # step's (copied: a layer that returns a buffer it accumulates into would change them).
    first_step = session.backward(dtype).require()
    layer = first_step.layer
    first = [arrays.copy_tree(g) for g in first_step.gradients.all]
    # The values the first backward was given, as fresh arrays: it may have overwritten its
    # dL/dY (a failure of its own, reported by backward_does_not_modify_inputs), which is not a
    # value cached between calls.
    dLdY, dLdS = session.training_output_gradients(first_step.outputs, dtype)
    try:
        if layer.kind == Kind.LAYER:
            layer.predict(session.inputs(dtype))
        second = _training_step(layer, session.inputs(dtype), dLdY, dLdS)
    except USER_ERRORS as exc:
        if fresh_training_step(session, dtype) is not None:
            # The same step ran on a new layer object before: now a new object raises too.
            return failed(
                f"forward and backward ran once, and now raise {exception_summary(exc)} on a new layer object "
                "with the same inputs: calls after the first fail, even on new layer objects",
                cause=cause_of(exc),
            )
        return failed(
            f"the second training step on the same layer raised {exception_summary(exc)}", cause=cause_of(exc)
        )
    for name, a, b in zip(layer.gradient_names(), first, second):
        if a is None and b is None:
            continue
        if not (arrays.is_array(a) and arrays.is_array(b)) or a.shape != b.shape:
            return failed(
                f"the gradient of {name} is {arrays.describe(a)} at the first step and {arrays.describe(b)} at the second"
            )
        diff = mismatch(b, a, atol=repeat_tolerance(a))
        if diff is not None:
            return failed(
                f"the second forward+backward on the same layer gives another gradient of {name} "
                "(a value cached or accumulated between calls?): " + diff.detail(),
                argument=name,
                mismatch=diff.to_dict(),
            )
    return passed()
