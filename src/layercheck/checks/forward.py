"""predict and forward: they run, agree in size, and produce finite values."""

from __future__ import annotations

import dataclasses
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
        return failed(
            step.error.summary() + f" with {dtype_name(dtype)} inputs",
            traceback=step.error.traceback,
            cause=step.error.cause,
            dtype=dtype_name(dtype),
        )

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
                f"{name} has shape {tuple(f.shape)} from forward but {tuple(p.shape)} from predict",
                output=name,
                forward_shape=list(f.shape),
                predict_shape=list(p.shape),
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
                message = (
                    f"{method} output {name} has {n_nan} NaN and {n_inf} infinite value(s) of {y.size} "
                    f"with {dtype_name(dtype)} inputs (first at index {first})"
                )
                return failed(
                    message,
                    evidence=functools.partial(
                        call_evidence, session, ReproKind.FINITE, "outputs_are_finite", method, dtype
                    ),
                    method=method,
                    output=name,
                    nan=n_nan,
                    inf=n_inf,
                    first_index=list(first),
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
            if all(d == (None, None) for d in session.input_domains()):
                hint = "; if the layer is only defined on part of the real line, declare input_domain, e.g. (0, None)"
                problem = dataclasses.replace(problem, message=problem.message + hint)
            return problem
    if not ran:
        raise Incomplete(f"not checked: {methods[0]} failed at every tested dtype", blocked=Blocked(Call(methods[0])))
    return passed()
