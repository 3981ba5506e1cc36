"""Signatures, return arities and initialization."""

from __future__ import annotations

import functools

import numpy as np

from layercheck.checks.common import primary_dtype
from layercheck.checks.context import CheckContext
from layercheck.checks.evidence import call_evidence
from layercheck.checks.registry import LAYERS_ONLY, Incomplete, Outcome, Skip, check, failed, passed
from layercheck.contract.adapter import Adapter
from layercheck.errors import USER_ERRORS
from layercheck.findings.comparison import Compared, ComparisonReport
from layercheck.findings.problems import RaisedWhen
from layercheck.findings.syntax import SyntaxFault, SyntaxProblem, SyntaxReport
from layercheck.numerics import arrays
from layercheck.numerics.compare import mismatch
from layercheck.reproducers.evidence import ReproKind
from layercheck.results import Call, Kind, cause_of

__all__ = [
    "function_syntaxes_are_correct",
    "initialize_does_not_change_nonempty_learnables",
    "initialize_does_not_change_nonempty_states",
    "initialize_does_not_error",
]


def _signature_problems(layer: Adapter) -> list[SyntaxProblem]:
    problems = []
    for method, count, names in layer.expected_calls():
        sig = layer.method_signature(method)
        if sig is not None and not sig.accepts(count):
            problems.append(SyntaxProblem(SyntaxFault.CALL, method, sig.describe(), count, names))
    sig, n = layer.input_signature, layer.num_inputs
    if not sig.variadic and sig.required != n:
        problems.append(
            SyntaxProblem(SyntaxFault.NUM_INPUTS, layer.input_method, sig.describe(), n, required=sig.required)
        )
    return problems


def _parameter_problems(session: CheckContext) -> list[SyntaxProblem]:
    layer = session.reference
    problems = []
    for group, names in (("learnable", layer.learnables), ("state", layer.state)):
        for name in names:
            if not hasattr(layer.obj, name):
                problems.append(SyntaxProblem(SyntaxFault.NO_ATTRIBUTE, group=group, name=name))
                continue
            value = session.reference_parameters[name]
            if not arrays.is_array(value):
                described, initialized = arrays.describe(value), layer.has_initialize
                problems.append(
                    SyntaxProblem(
                        SyntaxFault.NOT_ARRAY, group=group, name=name, value=described, initialized=initialized
                    )
                )
            elif np.dtype(value.dtype).kind not in "fc":
                problems.append(SyntaxProblem(SyntaxFault.NOT_FLOATING, group=group, name=name, value=str(value.dtype)))
    return problems


def _return_problems(session: CheckContext) -> list[SyntaxProblem]:
    """Return arities broken by predict, forward and (when those ran) backward."""
    layer = session.reference
    dtype = primary_dtype(session)
    passes = ([session.predict(dtype)] if layer.kind == Kind.LAYER else []) + (
        [session.forward(dtype)] if layer.has_forward else []
    )
    broken = [str(step.error.exception) for step in passes if step.error is not None and step.error.is_contract]
    if layer.has_backward and not broken and all(step.ok for step in passes):
        error = session.backward(dtype).error
        if error is not None and error.is_contract:
            broken.append(str(error.exception))
    return [SyntaxProblem(SyntaxFault.CONTRACT, text=text) for text in broken]


@check(
    "function_syntaxes_are_correct",
    "predict, forward, backward and initialize take and return as many values as the inputs, "
    "outputs, learnables and state require (for an operation: forward and backward, with the "
    "mask, saved inputs and outputs and memory values)",
    "functionSyntaxesAreCorrect",
    calls=(Call.INITIALIZE, Call.PREDICT, Call.FORWARD, Call.BACKWARD),
)
def function_syntaxes_are_correct(session: CheckContext) -> Outcome:
    layer = session.reference
    problems = _signature_problems(layer)
    initialize_error = session.initialize_step.error
    if initialize_error is None:
        problems += _parameter_problems(session)
    else:
        problems.append(SyntaxProblem(SyntaxFault.UNCHECKED, text=initialize_error.summary()))
    try:
        problems += _return_problems(session)
    except Incomplete:
        if not problems:
            raise
    if problems:
        cause = None if initialize_error is None else initialize_error.cause
        return failed(cause=cause, **SyntaxReport(tuple(problems)).to_details())
    return passed()


@check(
    "initialize_does_not_error",
    "initialize runs without error on the given layouts",
    kinds=LAYERS_ONLY,
    calls=(Call.INITIALIZE,),
)
def initialize_does_not_error(session: CheckContext) -> Outcome:
    if not session.reference.has_initialize:
        raise Skip("no initialize defined")
    error = session.initialize_step.error
    if error is not None:
        problem = error.raised(RaisedWhen.PLAIN)
        return failed(traceback=error.traceback, cause=error.cause, **problem.to_details())
    return passed()


def _initialize_keeps(session: CheckContext, names: tuple[str, ...], group: str, check_name: str) -> Outcome:
    """The check `check_name`: initialize keeps the `group` `names` that were set before it ran."""
    if not session.reference.has_initialize:
        raise Skip("no initialize defined")
    if not names:
        raise Skip(f"the layer has no {group}")
    session.initialize_step.require()
    preset = {}
    rng = session.rng(f"preset {group}")
    for name in names:
        ref = session.reference_parameters[name]
        if not arrays.is_array(ref):
            raise Incomplete(f"not checked: {name!r} is not an array after initialize")
        # An array, a 0-d one too (NumPy makes a scalar of 0-d array + 3.0): a preset set as a
        # scalar would read back as one, and the check blame initialize for it.
        value = np.asarray(arrays.random_host_like(ref, rng) + 3.0, dtype=ref.dtype)
        preset[name] = arrays.to_module(value, arrays.array_module(ref))
    layer = session.new_layer(initialize=False)
    layer.set_parameters({name: arrays.copy_tree(v) for name, v in preset.items()})
    try:
        layer.initialize(session.layouts)
    except USER_ERRORS as exc:  # reported by initialize_does_not_error
        raise Incomplete(
            f"not checked: initialize raised {type(exc).__name__} on a layer with preset {group}", cause=cause_of(exc)
        ) from None
    evidence = functools.partial(
        call_evidence,
        session,
        ReproKind.MUTATION,
        check_name,
        "initialize",
        primary_dtype(session),
        list(preset.values()),
        preset=list(preset),
        group=group,
    )
    compared = Compared.of(check_name)
    assert compared is not None  # either check of this function compares
    for name, value in preset.items():
        after = layer.get(name)
        if not arrays.is_array(after) or after.shape != value.shape:
            replaced = ComparisonReport(compared, name, None, was=arrays.describe(value), became=arrays.describe(after))
            return failed(evidence=evidence, **replaced.to_details())
        diff = mismatch(after, value)
        if diff is not None:
            return failed(
                evidence=evidence,
                **ComparisonReport(compared, name, diff).to_details(),
            )
    return passed()


@check(
    "initialize_does_not_change_nonempty_learnables",
    "initialize leaves learnables that are already set unchanged",
    "initializeDoesNotChangeLearnableParametersWhenTheyAreNotEmpty",
    kinds=LAYERS_ONLY,
    repro=ReproKind.MUTATION,
    calls=(Call.INITIALIZE,),
)
def initialize_does_not_change_nonempty_learnables(session: CheckContext) -> Outcome:
    return _initialize_keeps(
        session, session.reference.learnables, "learnables", "initialize_does_not_change_nonempty_learnables"
    )


@check(
    "initialize_does_not_change_nonempty_states",
    "initialize leaves state parameters that are already set unchanged",
    "initializeDoesNotChangeStatefulParametersWhenTheyAreNotEmpty",
    kinds=LAYERS_ONLY,
    repro=ReproKind.MUTATION,
    calls=(Call.INITIALIZE,),
)
def initialize_does_not_change_nonempty_states(session: CheckContext) -> Outcome:
    return _initialize_keeps(session, session.reference.state, "state", "initialize_does_not_change_nonempty_states")
