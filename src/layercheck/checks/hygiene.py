"""Beyond MATLAB: layers must not modify their arguments and must be deterministic."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from layercheck.checks.backward import fresh_training_step
from layercheck.checks.common import (
    dtype_name,
    named_outputs,
    primary_dtype,
    raised,
    require_backward,
    require_own_forward,
)
from layercheck.checks.context import CheckContext
from layercheck.checks.evidence import call_evidence
from layercheck.checks.registry import LAYERS_ONLY, Incomplete, Outcome, Skip, check, failed, passed
from layercheck.contract.adapter import Adapter
from layercheck.errors import USER_ERRORS
from layercheck.findings.comparison import Compared, ComparisonReport
from layercheck.findings.problems import Modification, RaisedWhen
from layercheck.numerics import arrays
from layercheck.numerics.compare import mismatch, repeat_tolerance
from layercheck.reproducers.evidence import Evidence, LazyEvidence, ReproKind
from layercheck.results import Call, Kind, cause_of

__all__ = [
    "backward_does_not_modify_inputs",
    "backward_is_repeatable",
    "forward_does_not_modify_inputs",
    "predict_does_not_modify_inputs",
    "predict_is_deterministic",
]


def _modified(
    method: str, before: Sequence[tuple[str, Any]], after: Sequence[tuple[str, Any]], replaced: Sequence[bool] = ()
) -> Modification | None:
    rebound = list(replaced) + [False] * (len(before) - len(replaced))
    for (name, old), (_, new), anew in zip(before, after, rebound):
        if not arrays.is_array(old) or new is old:  # the session keeps what a call left as it was
            continue
        if not arrays.is_array(new) or new.shape != old.shape:
            return Modification(method, name, was=arrays.describe(old), became=arrays.describe(new))
        diff = mismatch(new, old)
        if diff is not None:
            return Modification(method, name, diff, rebound=anew)
    return None


def _argument_names(layer: Adapter) -> list[str]:
    """The arguments of a call, in `CallArguments` order: inputs, learnables, state."""
    return [*layer.input_names, *(f"learnable {n}" for n in layer.learnables), *(f"state {n}" for n in layer.state)]


def _left_modified(session: CheckContext, method: str, names: list[str]) -> Modification | None:
    """What the session's step of `method` (at the primary dtype: a fresh layer given fresh
    inputs, as a check of its own would call it) modified of its arguments, or None."""
    seen = session.call_arguments(method, primary_dtype(session))
    return _modified(method, list(zip(names, seen.before)), list(zip(names, seen.after)), seen.replaced)


def _mutation_evidence(session: CheckContext, method: str) -> LazyEvidence:
    """For --repro: the arguments the call was given (for backward, dL/dY and dL/dS_out too)."""

    def build() -> Evidence:
        layer, dtype = session.reference, primary_dtype(session)
        given = session.call_arguments(method, dtype).before
        n = layer.num_inputs + len(layer.parameter_names)
        loss = given[n + layer.num_outputs :] if method == "backward" else ()
        return call_evidence(
            session, ReproKind.MUTATION, f"{method}_does_not_modify_inputs", method, dtype, given[:n], loss
        )

    return build


def _does_not_modify(session: CheckContext, method: str) -> Outcome:
    problem = _left_modified(session, method, _argument_names(session.reference))
    if problem:
        return failed(evidence=_mutation_evidence(session, method), **problem.to_details())
    return passed()


@check(
    "predict_does_not_modify_inputs",
    "predict leaves its inputs, learnables and state unchanged",
    kinds=LAYERS_ONLY,
    repro=ReproKind.MUTATION,
    calls=(Call.PREDICT,),
)
def predict_does_not_modify_inputs(session: CheckContext) -> Outcome:
    return _does_not_modify(session, "predict")


@check(
    "forward_does_not_modify_inputs",
    "forward leaves its inputs, learnables and state unchanged (it returns updated states instead)",
    repro=ReproKind.MUTATION,
    calls=(Call.FORWARD,),
)
def forward_does_not_modify_inputs(session: CheckContext) -> Outcome:
    require_own_forward(session.reference, "predict_does_not_modify_inputs")
    return _does_not_modify(session, "forward")


@check(
    "backward_does_not_modify_inputs",
    "backward leaves X, Y, dLdY, learnables and state unchanged",
    repro=ReproKind.MUTATION,
    calls=(Call.FORWARD, Call.BACKWARD),
)
def backward_does_not_modify_inputs(session: CheckContext) -> Outcome:
    layer = session.reference
    require_backward(layer)
    names = _argument_names(layer) + [f"output {n}" for n in layer.output_names]
    names += [layer.d(n) for n in layer.output_names] + [f"dLd{s}_out" for s in layer.state]
    problem = _left_modified(session, "backward", names)
    if problem:
        return failed(evidence=_mutation_evidence(session, "backward"), **problem.to_details())
    return passed()


@check(
    "predict_is_deterministic",
    "predict returns the same outputs when called twice with the same inputs",
    kinds=LAYERS_ONLY,
    repro=ReproKind.REPEAT,
    calls=(Call.PREDICT,),
)
def predict_is_deterministic(session: CheckContext) -> Outcome:
    dtype = primary_dtype(session)
    session.predict(dtype).require()
    layer = session.layer(dtype)
    try:
        # Copies of the first call's outputs: a layer that returns a workspace it keeps and
        # writes into again would make both calls one array, alike whatever it computed.
        first = [(name, arrays.copy_tree(y)) for name, y in named_outputs(layer, layer.predict(session.inputs(dtype)))]
        second = named_outputs(layer, layer.predict(session.inputs(dtype)))
    except USER_ERRORS as exc:
        raise Incomplete(
            f"not checked: predict raised {type(exc).__name__} when called again", cause=cause_of(exc)
        ) from None
    for (name, a), (_, b) in zip(first, second):
        if not (arrays.is_array(a) and arrays.is_array(b)) or a.shape != b.shape:
            replaced = ComparisonReport(
                Compared.DETERMINISTIC, name, None, was=arrays.describe(a), became=arrays.describe(b)
            )
            return failed(**replaced.to_details())
        diff = mismatch(b, a, atol=repeat_tolerance(a))
        if diff is not None:
            return failed(
                evidence=lambda: call_evidence(session, ReproKind.REPEAT, "predict_is_deterministic", "predict", dtype),
                **ComparisonReport(Compared.DETERMINISTIC, name, diff).to_details(),
            )
    return passed()


def _training_step(layer: Adapter, xs: Sequence[Any], dLdY: Sequence[Any], dLdS: Sequence[Any]) -> tuple[Any, ...]:
    outputs = layer.forward(xs)
    return layer.backward(xs, outputs, list(dLdY), list(dLdS)).all  # fresh draws: no copy needed


def _comparable(value: Any) -> Any:
    """An array to compare, or None: a NumPy or Python number is compared as a 0-d array (its
    shape is backward_is_consistent_in_size's to judge, not whether it repeats)."""
    if arrays.is_array(value):
        return value
    if isinstance(value, (np.generic, int, float, complex)) and not isinstance(value, bool):
        return np.asarray(value)
    return None


def _forward_repeats(layer: Adapter, session: CheckContext, dtype: str) -> bool:
    """Whether forward, run twice in a row on one layer object with the same inputs (no
    backward between: one that changes the layer, an update in backward, is not forward's
    doing), gives the same outputs. A forward that raises now is taken as repeatable: the
    gradients' difference is then said as it is."""
    try:
        first = [arrays.copy_tree(y) for y in layer.forward(session.inputs(dtype)).all]
        second = layer.forward(session.inputs(dtype)).all
    except USER_ERRORS:
        return True
    for a, b in zip(first, second):
        a, b = _comparable(a), _comparable(b)
        if a is None or b is None:
            continue
        if a.shape != b.shape or mismatch(b, a, atol=repeat_tolerance(a)) is not None:
            return False
    return True


@check(
    "backward_is_repeatable",
    "forward then backward, run twice on the same layer object (with predict between), give "
    "the same gradients: nothing cached or accumulated between calls changes them",
    repro=ReproKind.REPEAT,
    calls=(Call.PREDICT, Call.FORWARD, Call.BACKWARD),
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
            when = RaisedWhen.NEW_OBJECT
        else:
            when = RaisedWhen.SECOND_STEP
        problem = raised("training step", exc, when, dtype=dtype_name(dtype))
        return failed(cause=cause_of(exc), **problem.to_details())
    for name, a, b in zip(layer.gradient_names(), first, second):
        if a is None and b is None:
            continue
        x, y = _comparable(a), _comparable(b)
        if x is None or y is None or x.shape != y.shape:
            replaced = ComparisonReport(
                Compared.REPEATABLE, name, None, was=arrays.describe(a), became=arrays.describe(b)
            )
            return failed(**replaced.to_details())
        diff = mismatch(y, x, atol=repeat_tolerance(x))
        if diff is not None and layer.has_forward and not _forward_repeats(layer, session, dtype):
            # A forward of its own that draws at random (dropout's mask, from a generator the
            # layer keeps) gives the second step other outputs, and other gradients with them.
            # Its draws are state kept between calls too: what changed cannot be told, and the
            # words say only what was shown.
            raise Skip(
                "forward is not repeatable (run twice on one layer object with the same inputs, it gives other "
                "outputs, as dropout's random draws do): the gradients of two steps are not compared"
            )
        if diff is not None:
            return failed(
                evidence=lambda: call_evidence(
                    session,
                    ReproKind.REPEAT,
                    "backward_is_repeatable",
                    "backward",
                    dtype,
                    loss=sum(session.training_output_gradients(first_step.outputs, dtype), ()),
                ),
                **ComparisonReport(Compared.REPEATABLE, name, diff).to_details(),
            )
    return passed()
