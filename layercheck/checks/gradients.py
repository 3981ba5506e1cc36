"""gradients_are_numerically_correct: the hand-written backward against finite differences."""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np

from .. import arrays
from ..compare import mismatch
from ..contract import LayerAdapter, Outputs
from ..diagnosis import Diagnosis, localize, patterns, size_context
from ..gradcheck import FAIL, ArgumentVerdict, GradientProblem, Tolerances, check_argument, make_baseline
from .common import require_backward
from ..errors import USER_ERRORS
from .registry import Incomplete, check, failed, passed


class _CannotRun(Exception):
    """The layer cannot run (or keep) the precision the gradient check asked for."""


def _as_compute(x: Any, precision: np.dtype) -> np.ndarray:
    """A NumPy copy of `x` at the compute precision (complex stays complex)."""
    x = arrays.to_numpy(x)
    kind = np.result_type(precision, np.complex64) if np.iscomplexobj(x) else precision
    return np.array(x, dtype=kind)


def _copy_memory(memory: Any) -> Any:
    try:
        return copy.deepcopy(memory)
    except Exception:  # an uncopyable memory object is passed as it is
        return memory


def _labels(session, layer: LayerAdapter) -> list[str | None]:
    """The format of each argument: an input's own; a parameter's when it matches the first input's rank."""
    first = session.layouts[0]
    labels: list[str | None] = [layout.format for layout in session.layouts]
    for name in layer.parameter_names:
        value = layer.get(name)
        labels.append(first.format if arrays.is_array(value) and value.ndim == first.ndim else None)
    return labels


def build_problem(session, dtype: str):
    """The gradient problem at `dtype`'s precision; raises _CannotRun when the layer cannot."""
    layer = session.layer(dtype)
    precision = arrays.precision_of(dtype)
    inputs = list(session.inputs(dtype))
    names = list(layer.input_names) + list(layer.parameter_names)
    kinds = ["input"] * layer.num_inputs + ["learnable"] * len(layer.learnables) + ["state"] * len(layer.state)
    originals = inputs + [layer.get(n) for n in layer.parameter_names]
    values = [_as_compute(v, precision) for v in originals]
    n_in = layer.num_inputs

    def set_parameters(vals: list[np.ndarray]) -> None:
        for name, v, o in zip(layer.parameter_names, vals[n_in:], originals[n_in:]):
            layer.set(name, v.astype(o.dtype, copy=True))

    at_base = [False]  # did the last pass run at the base point?

    def run(vals: list[np.ndarray], fresh: int | None = None) -> Outputs:
        """The training-time pass at `vals`. Inputs are passed as copies (a layer that writes
        into its input harms nothing), except `fresh`, an array made for this call alone."""
        set_parameters(vals)
        xs = [v.astype(o.dtype, copy=i != fresh) for i, (v, o) in enumerate(zip(vals[:n_in], originals[:n_in]))]
        at_base[0] = vals is values
        return layer.forward(xs)

    try:
        base = run(values)
    except USER_ERRORS as exc:
        raise _CannotRun(f"{'forward' if layer.has_forward else 'predict'} raised {type(exc).__name__}: {exc}") from None
    for y in base.all:
        if not arrays.is_array(y):
            raise Incomplete(f"not checked: an output is {arrays.describe(y)}, not an array")
        if arrays.precision_of(y.dtype) != precision:
            raise _CannotRun(f"it returns {y.dtype} outputs from {precision} inputs")

    def evaluate(index: int, value: np.ndarray) -> list[np.ndarray]:
        vals = list(values)
        vals[index] = value
        return [_as_compute(y, precision) for y in run(vals, fresh=index).all]

    n_out = layer.num_outputs
    grad_names = layer.gradient_names()

    def gradients(weights: list[np.ndarray]) -> list[np.ndarray | None]:
        # Back to the base point: layers may cache what forward saw (on self) for backward.
        current = base if at_base[0] else run(values)
        dLdY = [w.astype(y.dtype) for w, y in zip(weights[:n_out], base.values)]
        dLdS = [w.astype(s.dtype) for w, s in zip(weights[n_out:], base.states)]
        outs = Outputs(base.values, base.states, _copy_memory(current.memory))
        grads = layer.backward([x.copy() for x in inputs], outs, dLdY, dLdS).all
        result = []
        for name, g, v in zip(grad_names, grads, values):
            ok = arrays.is_array(g) and tuple(g.shape) == v.shape
            result.append(_as_compute(g, precision) if ok else None)
        return result

    outputs = [_as_compute(y, precision) for y in base.all]
    rng = session.rng("gradient weights")
    weights = [arrays.random_like(y, rng) for y in outputs]
    domains = list(layer.input_domains()) + [(None, None)] * len(layer.parameter_names)
    problem = GradientProblem(names, kinds, values, evaluate, gradients, domains, _labels(session, layer))
    rtol, atol = session.options.tolerance(dtype)
    tol = Tolerances(rtol, atol, precision)
    try:
        baseline = make_baseline(problem, outputs, weights, tol)
    except USER_ERRORS as exc:
        raise _CannotRun(f"backward raised {type(exc).__name__}: {exc}") from None
    return problem, baseline, tol, layer


def _prepare(session):
    """Float64 when the layer can, else the widest tested precision it runs in, and why."""
    candidates = ["float64"] + [d for d in session.options.dtypes if d != "float64"]
    reasons = []
    for dtype in candidates:
        try:
            problem, baseline, tol, layer = build_problem(session, dtype)
        except _CannotRun as exc:
            reasons.append(f"{dtype}: {exc}")
            continue
        fallback = None if dtype == "float64" else f"could not run in float64 ({reasons[0].split(': ', 1)[1]}); checked in {dtype}"
        return problem, baseline, tol, layer, fallback
    raise Incomplete("not checked: the training-time pass or backward failed at every precision (" + "; ".join(reasons) + ")")


def _is_deterministic(problem: GradientProblem, baseline) -> bool:
    again = problem.evaluate(0, problem.values[0].copy())
    return all(
        mismatch(b, a, atol=16 * arrays.eps(a.dtype) * float(np.abs(a).max(initial=0))) is None
        for a, b in zip(baseline.outputs, again)
    )


def _probe_record(p) -> dict[str, Any]:
    return {
        "step": p.step,
        "numeric": p.numeric,
        "analytic": p.analytic,
        "abs_error": p.discrepancy if math.isfinite(p.numeric) else None,
        "rel_error": p.relative(p.discrepancy) if math.isfinite(p.numeric) else None,
        "tolerance": p.tolerance if p.gradients else None,
        "error_estimate": p.error_bound,
        "outputs_masked_at_kinks": p.masked,
        "verdict": p.verdict,
        "reason": p.reason,
    }


@check(
    "gradients_are_numerically_correct",
    "backward agrees with finite differences of the training-time pass, for every input, "
    "learnable and state, localized and diagnosed on failure",
    "gradientsAreNumericallyCorrect",
)
def gradients_are_numerically_correct(session):
    layer = session.reference
    require_backward(layer)
    problem, baseline, tol, _, fallback = _prepare(session)
    evaluated = "forward" if layer.has_forward else "predict"
    verdicts = []
    for index, name in enumerate(problem.names):
        if baseline.gradients[index] is None:
            reason = "backward returned no gradient of the argument's shape (see backward_is_consistent_in_size)"
            verdicts.append(ArgumentVerdict(index, "incomplete", [], reason))
        elif problem.values[index].size == 0:
            verdicts.append(ArgumentVerdict(index, "passed", [], "empty"))
        else:
            verdicts.append(check_argument(problem, baseline, index, tol, session.rng(f"gradient {name}")))
    if any(v.status != "passed" for v in verdicts) and not _is_deterministic(problem, baseline):
        raise Incomplete(
            f"not checked: {evaluated} is not deterministic (two calls with the same inputs differ), "
            "so finite differences cannot be taken"
        )
    context = size_context(problem)
    diagnoses: dict[int, Diagnosis] = {}
    explained_swaps: set[frozenset] = set()
    for v in verdicts:
        if v.status != "failed":
            continue
        name = problem.names[v.index]
        diagnosis = patterns(problem, verdicts, v.index, context)
        if diagnosis is None:
            where, examples = localize(problem, baseline, verdicts, v.index, tol, session.rng(f"localize {name}"))
            first = next(p for p in v.probes if p.verdict == FAIL)
            headline = f"the gradient of {name} is wrong (relative error {first.relative(first.discrepancy):.2g} along a random direction)"
            if where:
                headline = f"the gradient of {name} is " + where[0]
            diagnosis = Diagnosis(headline, [], where, examples)
        diagnoses[v.index] = diagnosis
    records = []
    for v in verdicts:
        index, name = v.index, problem.names[v.index]
        record = {
            "argument": name,
            "kind": problem.kinds[index],
            "status": v.status,
            "reason": v.reason,
            "probes": [_probe_record(p) for p in v.probes],
        }
        if index in diagnoses:
            record["diagnosis"] = diagnoses[index].to_dict()
        failing = [p for p in v.probes if p.verdict == FAIL]
        if failing:
            worst = max(failing, key=lambda p: p.discrepancy)
            record["max_abs_error"] = worst.discrepancy
            record["max_rel_error"] = worst.relative(worst.discrepancy)
            record["tolerance"] = worst.tolerance
        records.append(record)

    details = {
        "evaluated": evaluated,
        "precision": str(tol.precision),
        "fallback": fallback,
        "arguments": records,
    }
    headlines = []
    for index, diagnosis in diagnoses.items():
        key = frozenset({problem.names[index], diagnosis.swapped_with}) if diagnosis.swapped_with else None
        if key in explained_swaps:
            continue
        if key:
            explained_swaps.add(key)
        headlines.append(diagnosis.headline)
    details["explanation"] = _explanation(records, fallback, evaluated)
    if headlines:
        return failed("; ".join(headlines), **details)
    incomplete = [r for r in records if r["status"] == "incomplete"]
    if incomplete:
        names = ", ".join(f"{r['argument']} ({r['reason']})" for r in incomplete)
        raise Incomplete(f"could not decide for {names}", details)
    checked = [r for r in records if r["status"] == "passed"]
    masked = sum(p["outputs_masked_at_kinks"] for r in checked for p in r["probes"])
    worst = max((p["rel_error"] or 0.0 for r in checked for p in r["probes"] if p["verdict"] == "pass"), default=0.0)
    message = f"{len(checked)} gradient(s) of {evaluated} agree with finite differences (worst relative difference {worst:.1g})"
    if masked:
        message += f"; {masked} output(s) at kinks left out"
    if fallback:
        message += f"; {fallback}"
    return passed(message, **details)


def _explanation(records, fallback, evaluated) -> list[str]:
    lines = [f"differentiated: {evaluated}" + (f"; {fallback}" if fallback else "")]
    for record in records:
        if record["status"] == "passed":
            continue
        line = f"{record['argument']} ({record['kind']}): {record['status']}"
        if record.get("max_rel_error") is not None:
            line += (
                f"; along a random direction the analytic derivative is off by {record['max_abs_error']:.3g} "
                f"(relative {record['max_rel_error']:.3g}; tolerance {record['tolerance']:.3g})"
            )
        if record.get("reason"):
            line += f"; {record['reason']}"
        lines.append(line)
        diag = record.get("diagnosis")
        if diag:
            lines += [f"  likely cause: {c}" for c in diag["causes"]]
            lines += [f"  where: {w}" for w in diag["where"]]
            for e in [e for e in diag["examples"] if e["wrong"]][:3]:
                lines.append(
                    f"  at {record['argument']}{tuple(e['index'])}: analytic {e['analytic']:.6g}, numeric {e['numeric']:.6g} "
                    f"(abs error {e['abs_error']:.3g}, rel error {e['rel_error']:.3g})"
                )
    return lines
