"""predict and forward: they run, agree in size, and produce finite values."""

from __future__ import annotations

import functools

from layercheck.checks.common import (
    dtype_name,
    first_failure,
    named_outputs,
    primary_dtype,
    require_arrays,
    require_forward,
    require_own_forward,
)
from layercheck.checks.context import CheckContext, Step
from layercheck.checks.evidence import call_evidence
from layercheck.checks.registry import LAYERS_ONLY, Incomplete, Outcome, check, failed, passed
from layercheck.findings.problems import NonFinite, RaisedWhen, SizesDiffer
from layercheck.numerics import arrays
from layercheck.reproducers.evidence import ReproKind
from layercheck.results import Blocked, Call, Kind

__all__ = [
    "forward_does_not_error",
    "forward_predict_are_consistent_in_size",
    "outputs_are_finite",
    "predict_does_not_error",
]


def _does_not_error(session: CheckContext, method: str) -> Outcome:
    step_of = functools.partial(session.step, method)

    def describe(step: Step, dtype: str) -> Outcome | None:
        if step.error is None:
            return None
        if step.error.is_contract:
            raise Incomplete(
                f"{method} ran but broke the contract: {step.error.summary()} (see function_syntaxes_are_correct)",
                blocked=Blocked(Call(method), broke_contract=True),
            )
        problem = step.error.raised(RaisedWhen.DTYPE, dtype=dtype_name(dtype))
        return failed(traceback=step.error.traceback, cause=step.error.cause, **problem.to_details())

    return first_failure(session, step_of, describe) or passed()


@check(
    "predict_does_not_error",
    "predict runs without error at every tested dtype",
    "predictDoesNotError",
    kinds=LAYERS_ONLY,
    calls=(Call.PREDICT,),
)
def predict_does_not_error(session: CheckContext) -> Outcome:
    return _does_not_error(session, "predict")


@check(
    "forward_does_not_error",
    "forward runs without error at every tested dtype",
    "forwardDoesNotError",
    calls=(Call.FORWARD,),
)
def forward_does_not_error(session: CheckContext) -> Outcome:
    require_forward(session.reference)
    return _does_not_error(session, "forward")


@check(
    "forward_predict_are_consistent_in_size",
    "forward and predict return outputs and states of the same sizes",
    "forwardPredictAreConsistentInSize",
    kinds=LAYERS_ONLY,
    repro=ReproKind.SIZES,
    calls=(Call.PREDICT, Call.FORWARD),
)
def forward_predict_are_consistent_in_size(session: CheckContext) -> Outcome:
    layer = session.reference
    require_own_forward(layer, "predict_does_not_error")
    dtype = primary_dtype(session)
    predicted = named_outputs(layer, session.predict(dtype).require())
    trained = named_outputs(layer, session.forward(dtype).require())
    require_arrays(predicted, "predict")
    require_arrays(trained, "forward")
    for (name, p), (_, f) in zip(predicted, trained):
        if p.shape != f.shape:
            return failed(
                **SizesDiffer(name, tuple(f.shape), tuple(p.shape)).to_details(),
                evidence=functools.partial(
                    call_evidence, session, ReproKind.SIZES, "forward_predict_are_consistent_in_size", "forward", dtype
                ),
            )
    return passed()


def _nonfinite(session: CheckContext, method: str) -> Outcome | None:
    layer = session.reference
    step_of = functools.partial(session.step, method)

    def describe(step: Step, dtype: str) -> Outcome | None:
        if not step.ok:
            return None
        for name, y in named_outputs(layer, step.value):
            if not arrays.is_array(y):
                continue
            xp = arrays.array_module(y)
            bad = ~xp.isfinite(y)
            if bool(bad.any()):
                first = tuple(int(i) for i in arrays.to_host(xp.argwhere(bad)[0]).tolist())
                n_nan, n_inf = int(xp.count_nonzero(xp.isnan(y))), int(xp.count_nonzero(xp.isinf(y)))
                # Where no input domain is declared, the layer may be defined on part of the
                # real line only: its message says how to declare it.
                undeclared = all(d == (None, None) for d in session.input_domains())
                problem = NonFinite(method, name, dtype_name(dtype), n_nan, n_inf, int(y.size), first, undeclared)
                return failed(
                    evidence=functools.partial(
                        call_evidence, session, ReproKind.FINITE, "outputs_are_finite", method, dtype
                    ),
                    **problem.to_details(),
                )
        return None

    return first_failure(session, step_of, describe)


@check(
    "outputs_are_finite",
    "predict and forward return no NaN or infinite values on inputs inside the layer's domain",
    "",
    repro=ReproKind.FINITE,
    calls=(Call.PREDICT, Call.FORWARD),
)
def outputs_are_finite(session: CheckContext) -> Outcome:
    layer = session.reference
    methods = (["predict"] if layer.kind == Kind.LAYER else []) + (["forward"] if layer.has_forward else [])
    ran = False
    for method in methods:
        ran = ran or any(session.step(method, d).ok for d in session.options.dtypes)
        problem = _nonfinite(session, method)
        if problem:
            return problem
    if not ran:
        raise Incomplete(f"not checked: {methods[0]} failed at every tested dtype", blocked=Blocked(Call(methods[0])))
    return passed()
