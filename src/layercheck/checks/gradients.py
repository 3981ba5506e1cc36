"""gradients_are_numerically_correct: the hand-written backward against finite differences."""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from layercheck.checks import subsets
from layercheck.checks.common import require_backward
from layercheck.checks.context import CheckContext
from layercheck.checks.gradient_evidence import gradient_evidence
from layercheck.checks.layouts import require_batch
from layercheck.checks.registry import Incomplete, Outcome, Skip, check, failed, passed
from layercheck.clock import monotonic
from layercheck.contract.adapter import Adapter, Outputs, not_numbers
from layercheck.errors import USER_ERRORS
from layercheck.findings import gradient_wording as wording
from layercheck.findings.gradient import Agreement
from layercheck.numerics import arrays
from layercheck.numerics.blocks import small_scale_blocks
from layercheck.numerics.compare import mismatch, repeat_tolerance
from layercheck.numerics.gradients.budget import CALLS, WorkBudget, calls_for
from layercheck.numerics.gradients.diagnosis import Diagnostician, group
from layercheck.numerics.gradients.engine import (
    ArgumentVerdict,
    Baseline,
    EvaluationError,
    GradientProblem,
    Probe,
    Tolerances,
    Verdict,
    check_argument,
    check_jointly,
    make_baseline,
)
from layercheck.numerics.gradients.evidence import worst_failing
from layercheck.numerics.gradients.findings import Diagnosis, NonFiniteMove, Numbers, resolution_text
from layercheck.numerics.gradients.localization import numbers_of
from layercheck.numerics.gradients.sub_batch import SubBatch, call_share, observations_for
from layercheck.reproducers.evidence import Evidence, ReproKind
from layercheck.results import Blocked, Call, Kind, Status, cause_of
from layercheck.safetext import exception_text
from layercheck.userframes import being_handled, detached

__all__ = [
    "ArgumentRecord",
    "ProbeRecord",
    "TrainingPass",
    "build_problem",
    "gradients_are_numerically_correct",
]


class _CannotRun(Exception):
    """The layer cannot run (or keep) the precision the gradient check asked for; `method`
    is the one that raised, where one did."""

    def __init__(self, message: str, method: str | None = None):
        super().__init__(message)
        self.method = method


@dataclass(frozen=True)
class ProbeRecord:
    """One probe as the details record it."""

    step: float
    numeric: float
    analytic: float
    abs_error: float | None  # None where the numeric side is not finite
    rel_error: float | None
    tolerance: float | None  # None where the probe had no gradient to compare
    error_estimate: float
    outputs_masked_at_kinks: int
    verdict: Verdict
    reason: str  # why it could not decide, in words ("" when it decided)

    @classmethod
    def of(cls, p: Probe) -> ProbeRecord:
        finite = math.isfinite(p.numeric)
        return cls(
            step=p.step,
            numeric=p.numeric,
            analytic=p.analytic,
            abs_error=p.discrepancy if finite else None,
            rel_error=p.relative(p.discrepancy) if finite else None,
            tolerance=p.tolerance if p.gradients else None,
            error_estimate=p.error_bound,
            outputs_masked_at_kinks=p.masked,
            verdict=p.verdict,
            reason=p.reason_text,
        )

    def to_dict(self) -> dict[str, Any]:
        """The fields, in their order, under their names (the JSON keys)."""
        return {**dataclasses.asdict(self), "verdict": self.verdict.value}


@dataclass(frozen=True)
class ArgumentRecord:
    """One argument's outcome, its probes and, when it failed, the diagnosis and worst error."""

    argument: str
    kind: str
    status: Status
    reason: str
    probes: tuple[ProbeRecord, ...]
    shape: tuple[int, ...] = ()
    labels: str | None = None  # the format ("SSCB") of an input, or of one broadcasting against it (`_labels`)
    diagnosis: Diagnosis | None = None
    worst: Numbers | None = None  # the worst failing probe: the numbers of the argument's claim
    # Where a probe's outputs went NaN or infinite (the last such probe), with the names of the
    # arguments and outputs its indices refer to.
    non_finite: NonFiniteMove | None = None
    names: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    # Passed at a reduced resolution (`ArgumentVerdict.reduced`): the probe that agreed, and
    # the resolution it reached (`Probe.resolution`).
    reduced: ProbeRecord | None = None
    resolution: float | None = None

    @property
    def deciding(self) -> tuple[ProbeRecord, ...]:
        """The probes a pass rests on: those that passed, or the one that agreed at a reduced
        resolution."""
        passing = tuple(p for p in self.probes if p.verdict is Verdict.PASS)
        return passing if self.reduced is None else (*passing, self.reduced)

    def to_dict(self) -> dict[str, Any]:
        """The argument's entry of the JSON details."""
        record: dict[str, Any] = {
            "argument": self.argument,
            "kind": self.kind,
            "status": self.status.value,
            "reason": self.reason,
            "shape": list(self.shape),
            "labels": self.labels,
            "probes": [p.to_dict() for p in self.probes],
        }
        if self.diagnosis is not None:
            record["diagnosis"] = self.diagnosis.to_dict()
        if self.non_finite is not None:
            record["non_finite"] = self.non_finite.to_dict(*self.names)
        if self.resolution is not None:
            record["resolution"] = self.resolution
        if self.worst is not None:
            record["max_abs_error"] = self.worst.abs_error
            record["max_rel_error"] = self.worst.rel_error
            record["tolerance"] = self.worst.tolerance
        return record


def _as_compute(x: Any, precision: np.dtype, xp: Any, copy: bool = True) -> Any:
    """A copy of `x` (`x` itself where it is one already and `copy` is false) at the compute
    precision (complex stays complex), in the engine's module `xp`: a layer that returns arrays
    from another device is moved back (outputs_stay_on_device reports it), so that the
    arithmetic never mixes devices."""
    x = arrays.to_module(x, xp)
    return x.astype(_compute_dtype(x.dtype, precision), copy=copy)


def _require_arrays(outputs: list[Any], precision: np.dtype) -> None:
    """Every output an array at the compute precision (else the check cannot run)."""
    for y in outputs:
        if not arrays.is_array(y):
            raise Incomplete(f"not checked: an output is {arrays.describe(y)}, not an array")
        if arrays.precision_of(y.dtype) != precision:
            raise _CannotRun(f"it returns {y.dtype} outputs from {precision} inputs")


def _compute_dtype(dtype: Any, precision: np.dtype) -> np.dtype:
    """The compute precision, complex for a complex `dtype`."""
    return np.result_type(precision, np.complex64) if np.dtype(dtype).kind == "c" else precision


# Python 3.14 may borrow the references of its evaluation stack (NumPy's own refcount-based
# shortcut broke on it: numpy/numpy#28681): from there on an array's reference count no
# longer shows that nothing else holds it, and every output is copied.
_REFCOUNTS_TELL = sys.version_info < (3, 14)


def _owned(arrays_in: list[Any], precision: np.dtype, xp: Any) -> list[Any]:
    """Each array of `arrays_in` at the compute precision: the array itself where nothing but
    the list refers to it (a NumPy array of the right dtype that owns its data, which neither
    the layer nor a view of it keeps: it is the engine's alone, to read and to write into),
    else a copy. The list is emptied as it goes, so that its references are the only ones."""
    computed = []
    for k in range(len(arrays_in)):
        y = arrays_in[k]
        arrays_in[k] = None
        # The references now: `y` and getrefcount's argument. A layer that keeps the array (a
        # buffer it writes into again), a view of it or a memory that holds it adds one.
        alone = (
            _REFCOUNTS_TELL
            and type(y) is np.ndarray
            and xp is np
            and y.dtype == _compute_dtype(y.dtype, precision)
            and y.flags.owndata
            and y.flags.writeable
            and sys.getrefcount(y) <= 2
        )
        computed.append(y if alone else _as_compute(y, precision, xp))
        del y
    return computed


def _copy_memory(memory: Any) -> Any:
    try:
        return copy.deepcopy(memory)
    except Exception:  # an uncopyable memory object is passed as it is
        return memory


def _labels(session: CheckContext, layer: Adapter) -> list[str | None]:
    """The format of each argument: an input's own; a parameter's when it broadcasts against
    the first input (each axis of the input's size or 1, as a per-channel scale), so that an
    embedding table's rows are never called observations."""
    first = session.layouts[0]
    labels: list[str | None] = [layout.format for layout in session.layouts]
    for name in layer.parameter_names:
        value = layer.get(name)
        fits = (
            arrays.is_array(value)
            and value.ndim == first.ndim
            and all(n in (1, m) for n, m in zip(value.shape, first.size))
        )
        labels.append(first.format if fits else None)
    return labels


class TrainingPass:
    """The layer's training-time pass and backward at one precision, as the engine sees them.

    Arguments are the inputs, then learnables, then state; `evaluate` runs the pass with one
    argument replaced and `gradients` runs backward at the base point for given loss weights.
    """

    def __init__(
        self,
        session: CheckContext,
        dtype: str,
        new_layer: Callable[[], Adapter] | None = None,
        inputs: Sequence[Any] | None = None,
    ):
        """The pass on the session's layer and inputs, or on `new_layer()` (each fresh layer)
        and `inputs` (a sub-batch's: arrays of its own, never written into)."""
        self.session, self.dtype = session, dtype
        self._new_layer = new_layer or (lambda: session.layer(dtype))
        self.layer = layer = self._new_layer()
        self.backward_calls = 0
        self.remarks: list[str] = []
        # The precision of each argument whose gradient backward returned coarser than the
        # compute precision (float32 from float64 inputs): a dtype failure of its own
        # (backward_is_consistent_in_type), whose rounding the engine must not take for an error.
        self.coarse: dict[int, np.dtype] = {}
        # Set when backward raised on a repeat call but ran on a fresh layer: every backward
        # then runs on a fresh layer (backward_is_repeatable reports the repeat failure).
        self.fresh_for_backward = False
        # The arrays live where the session runs the layer (the GPU with --device gpu), and
        # so does every array operation of the check: only scalars come to the host.
        self.xp = session.home_module()
        self.precision = arrays.precision_of(dtype)
        # The session's own inputs, never written into: the layer gets copies of them.
        self.inputs = list(session.inputs(dtype, shared=True) if inputs is None else inputs)
        self.originals = self.inputs + [layer.get(n) for n in layer.parameter_names]
        self.values = [
            _as_compute(v, self.precision, self.xp, copy=i >= len(self.inputs)) for i, v in enumerate(self.originals)
        ]
        self.n_in = layer.num_inputs
        self.at_base = False
        # The layer reads the engine's arrays through read-only views; one that writes into
        # them raises, and from then on gets copies (*_does_not_modify_inputs reports it).
        self.copy_arguments = False
        try:
            try:
                base = self.run(self.values)
            except USER_ERRORS:
                self.copy_arguments = True
                base = self.run(self.values)
        except USER_ERRORS as exc:
            raise _CannotRun(f"{self.method} raised {exception_text(exc)}", self.method) from None
        returned = list(base.all)
        _require_arrays(returned, self.precision)
        self.n_out, self.memory = len(base.values), base.memory
        # Backward is given Y as forward returned it: a fresh copy of the engine's where that
        # is the same array, so that forward's own need not be held as well.
        self._returned = [
            None if arrays.array_module(y) is self.xp and y.dtype == _compute_dtype(y.dtype, self.precision) else y
            for y in returned
        ]
        del base
        # The base point's outputs and states at the compute precision: the engine's own (the
        # arrays forward returned where nothing else refers to them, else copies). Let go while
        # the joint probe's pair runs (`release_outputs`), and computed again when asked for.
        self._outputs: list[Any] | None = _owned(returned, self.precision, self.xp)

    @property
    def outputs(self) -> list[Any]:
        """The base point's outputs and states, evaluated again if they were let go (the layer
        is then at the base point, its memory that call's)."""
        if self._outputs is None:
            try:
                base = self.run(self.values)
            except USER_ERRORS as exc:
                raise EvaluationError(f"{self.method} raised {exception_text(exc)} at the base point, again") from None
            self.memory = base.memory
            self._outputs = _owned(list(base.all), self.precision, self.xp)
        return self._outputs

    def release_outputs(self) -> None:
        self._outputs = None

    @property
    def method(self) -> str:
        return "forward" if self.layer.has_forward else "predict"

    def run(self, values: list[np.ndarray], fresh: Collection[int] = ()) -> Outputs:
        """The pass at `values`. Inputs are passed as read-only views or copies (a layer that
        writes into its input harms nothing), except those in `fresh`, arrays made for this
        call alone."""
        n = self.n_in
        for name, v, o in zip(self.layer.parameter_names, values[n:], self.originals[n:]):
            self.layer.set(name, v.astype(o.dtype, copy=True))
        xs = [
            v.astype(o.dtype, copy=False) if i in fresh else self._guard(v, o.dtype)
            for i, (v, o) in enumerate(zip(values[:n], self.originals[:n]))
        ]
        self.at_base = values is self.values
        return self.layer.forward(xs)

    def evaluate_many(self, replaced: dict[int, np.ndarray]) -> list[np.ndarray]:
        values = list(self.values)
        for index, value in replaced.items():
            values[index] = value
        try:
            returned = list(self.run(values, fresh=set(replaced)).all)  # the outputs alone
        except USER_ERRORS as exc:
            raise EvaluationError(f"{self.method} raised {exception_text(exc)} at a perturbed point") from None
        return _owned(returned, self.precision, self.xp)

    def gradients(self, weights: list[np.ndarray]) -> list[np.ndarray | None]:
        """backward at the base point with dL/dY = weights; None where no gradient of the right
        shape, or one that holds no numbers (a structured array of zeros is not a zero gradient)."""
        try:
            grads = self._backward(weights)
        except USER_ERRORS as exc:
            if self.backward_calls <= 1 or self.fresh_for_backward:
                raise EvaluationError(f"backward raised {exception_text(exc)}") from None
            # It ran before on this layer: a repeat call fails. Check the gradients on fresh layers.
            self.fresh_for_backward = True
            try:
                grads = self._backward(weights)
            except USER_ERRORS as again:
                raise EvaluationError(f"backward raised {exception_text(again)}") from None
            # The same call ran on a fresh layer: it is the repeat that fails.
            self.remarks.append(
                f"backward raised {type(exc).__name__} when called again on the same layer and ran on a fresh one "
                "(see backward_is_repeatable): every backward ran on a fresh layer"
            )
        returned: list[Any] = list(grads)
        del grads
        computed: list[Any] = []
        for i, v in enumerate(self.values):
            g: Any = returned[i] if i < len(returned) else None
            if i < len(returned):
                returned[i] = None
            if not (arrays.is_array(g) and tuple(g.shape) == tuple(v.shape) and not_numbers(g.dtype) is None):
                computed.append(None)
                continue
            own = arrays.coarser_precision(g, self.coarse.get(i, self.precision))  # the coarsest seen
            if own is not None:
                self.coarse[i] = own
            single = [g]
            del g
            computed.extend(_owned(single, self.precision, self.xp))
        return computed

    def _guard(self, x: Any, dtype: Any) -> Any:
        return x.astype(dtype, copy=True) if self.copy_arguments else arrays.read_only(x, dtype)

    def _backward(self, weights: list[np.ndarray]) -> tuple[Any, ...]:
        self.backward_calls += 1
        try:
            return self._backward_once(weights)
        except USER_ERRORS:
            if self.copy_arguments:
                raise
            # Perhaps it writes into X, Y or dL/dY: again from the base point, with copies.
            self.copy_arguments, self.at_base = True, False
            return self._backward_once(weights)

    def _backward_once(self, weights: list[np.ndarray]) -> tuple[Any, ...]:
        if self.fresh_for_backward:
            self.layer = self._new_layer()
            self.at_base = False
        # Back to the base point first: layers may cache on self what forward saw. The memory
        # of a pass run for this call alone needs no copy.
        memory = _copy_memory(self.memory) if self.at_base else self.run(self.values).memory
        given = [self._guard(y, y.dtype) if r is None else r for y, r in zip(self.outputs, self._returned)]
        loss = [self._guard(w, y.dtype) for w, y in zip(weights, given)]
        m = self.n_out
        outputs = Outputs(tuple(given[:m]), tuple(given[m:]), memory)
        xs = [self._guard(x, x.dtype) for x in self.inputs]
        return self.layer.backward(xs, outputs, loss[:m], loss[m:]).all

    def problem(self, session: CheckContext, labels: list[str | None] | None = None) -> GradientProblem:
        """The gradient problem; `labels`: each argument's format where the session's layouts
        do not give them (a sub-batch's, whose sizes are not the layouts')."""
        layer = self.layer
        kinds = ["integer input" if integer else "input" for integer in session.integer_inputs]
        kinds += ["learnable"] * len(layer.learnables) + ["state"] * len(layer.state)
        domains = list(session.input_domains()) + [(None, None)] * len(layer.parameter_names)
        names = list(layer.input_names) + list(layer.parameter_names)
        return GradientProblem(
            names,
            kinds,
            self.values,
            self.evaluate_many,
            self.gradients,
            domains,
            _labels(session, layer) if labels is None else labels,
            self.remarks,
            self.coarse,
            list(layer.output_names) + [f"updated {s}" for s in layer.state],
            _output_labels(session) + [None] * len(layer.state),
            base_outputs=lambda: self.outputs,
            release_base=self.release_outputs,
        )


def _output_labels(session: CheckContext) -> list[str | None]:
    """Each output's format, as output_format declares it or the first input's (none where
    output_format breaks: output_format_is_consistent reports it)."""
    try:
        return list(session.output_formats())
    except Incomplete:
        return [None] * len(session.reference.output_names)


def build_problem(
    session: CheckContext, dtype: str, measure: bool = True
) -> tuple[GradientProblem, Baseline, Tolerances]:
    """The gradient problem at `dtype`'s precision; raises _CannotRun when the layer cannot.
    `measure`: measure the precision the layer computes in first, else use it only if some
    other check measured it already (the nominal precision otherwise)."""
    training = TrainingPass(session, dtype)
    problem = training.problem(session)
    outputs = training.outputs
    rng = session.rng("gradient weights")
    weights = [arrays.random_like(y, rng) for y in outputs]
    # A layer that rounds to float32 inside is differentiated at float32's steps and judged
    # at float32's tolerances: finite differences at float64 steps see only its round-off.
    finding = session.precision(dtype) if measure else session.measured_precision(dtype)
    if finding is None:
        tol = Tolerances(*session.options.tolerance(dtype), training.precision)
    else:
        tol = Tolerances(*session.tolerance(dtype), finding.effective, 0.0 if finding.lost else finding.roundoff)
    try:
        baseline = make_baseline(problem, outputs, weights, tol)
    except EvaluationError as exc:
        raise _CannotRun(str(exc), "backward") from None
    return problem, baseline, tol


def sub_batch(
    session: CheckContext,
    dtype: str,
    tol: Tolerances,
    labels: list[str | None],
    whole: Baseline,
    start: int = 0,
) -> SubBatch | None:
    """The gradient problem on a few observations of a large batch (the first ones, or those
    from `start`), where a failed gradient is localized at a fraction of the cost
    (`numerics.gradients.sub_batch`); None where the batch is small, cannot be cut by
    observation, or the layer cannot run on a part of it. `whole`: the whole batch's base
    point, whose outputs show which axis of each is the batch's."""
    try:
        method = "forward" if session.reference.has_forward else "predict"
        outputs = whole.outputs[: len(session.reference.output_names)]
        split, _ = subsets.split_by_observation(session, method, outputs)
        batch = require_batch(session)
        size = observations_for(batch)
        if size is None or not 0 <= start <= batch - size:
            return None
        split = dataclasses.replace(split, dtype=dtype)
        observations = range(start, start + size)

        def fresh() -> Adapter:  # as a perturbed point the layer raised at: nothing said of it
            try:
                return subsets.subset_layer(session, split, observations)
            except Incomplete as exc:
                raise EvaluationError(str(exc)) from None

        training = TrainingPass(
            session, dtype, new_layer=fresh, inputs=subsets.subset_inputs(session, split, observations)
        )
        problem = dataclasses.replace(training.problem(session, labels), share=call_share(size, batch))
        rng = session.rng("gradient weights sub-batch" + (f" from {start}" if start else ""))
        weights = [arrays.random_like(y, rng) for y in training.outputs]
        base = make_baseline(problem, training.outputs, weights, tol)
    except (Skip, Incomplete, _CannotRun, EvaluationError):
        return None
    learnables = [None] * len(session.reference.learnables)
    axes = (*split.inputs, *learnables, *split.states.values())
    return SubBatch(problem, base, size, batch, axes, start)


def _prepare(session: CheckContext, measure: bool) -> tuple[GradientProblem, Baseline, Tolerances, str | None, str]:
    """Float64 (complex128 when complex dtypes are tested) when the layer can run and
    differentiate there, else the widest tested precision it can, and why; and that dtype."""
    widest = "complex128" if any(np.dtype(d).kind == "c" for d in session.options.dtypes) else "float64"
    candidates = [widest] + [d for d in session.options.dtypes if d != widest]
    failures: list[tuple[str, _CannotRun]] = []
    outside = being_handled()  # a caller's exceptions, which those raised here chain
    for dtype in candidates:
        try:
            problem, baseline, tol = build_problem(session, dtype, measure)
        except _CannotRun as exc:
            # Kept for the words and the cause alone: with their tracebacks, whose frames hold
            # this one's locals, they made a cycle that kept the session and its arrays alive.
            failures.append((dtype, detached(exc, outside)))
            continue
        fallback = None if dtype == widest else f"could not run in {widest} ({failures[0][1]}); checked in {dtype}"
        finding = session.measured_precision(dtype)
        if finding is not None and finding.lost:
            method = "predict" if session.reference.kind == Kind.LAYER else "forward"
            why = (
                f"see {method}_is_consistent_in_type"
                if finding.at_float32
                else f"its outputs carry round-off of {finding.roundoff:.1g} of their size"
            )
            lowered = (
                f"judged at {tol.precision} precision: the layer computes below {arrays.precision_of(dtype)} ({why})"
            )
            fallback = f"{fallback}; {lowered}" if fallback else lowered
        return problem, baseline, tol, fallback, dtype
    methods = {exc.method for _, exc in failures}
    raise Incomplete(
        "not checked: the training-time pass or backward failed at every precision ("
        + "; ".join(f"{dtype}: {exc}" for dtype, exc in failures)
        + ")",
        blocked=Blocked(Call(methods.pop())) if len(methods) == 1 and None not in methods else None,
        cause=next((cause_of(exc) for _, exc in failures if cause_of(exc) is not None), None),
    )


def _is_deterministic(problem: GradientProblem, baseline: Baseline) -> bool:
    try:
        again = problem.evaluate(0, problem.values[0].copy())
    except EvaluationError as exc:
        raise Incomplete(f"not checked: {exc}", cause=cause_of(exc)) from None
    return all(mismatch(b, a, atol=repeat_tolerance(a)) is None for a, b in zip(baseline.outputs, again))


@check(
    "gradients_are_numerically_correct",
    "backward agrees with finite differences of the training-time pass, for every input, "
    "learnable and state, localized and diagnosed on failure",
    "gradientsAreNumericallyCorrect",
    repro=ReproKind.GRADIENT,
    calls=(Call.FORWARD, Call.BACKWARD),
)
def gradients_are_numerically_correct(session: CheckContext) -> Outcome:
    layer = session.reference
    if not layer.has_backward and layer.learnables:
        # Not a check that does not apply: NumPy differentiates nothing, so without a backward
        # the learnables cannot be trained, and no verdict was reached on their gradients.
        raise Incomplete(
            f"not checked: the layer has learnables ({', '.join(layer.learnables)}) and defines no backward; "
            f"NumPy computes no gradients, so they cannot be trained: write backward to return {layer.backward_returns()[1]}"
        )
    require_backward(layer)
    evaluated = "forward" if layer.has_forward else "predict"
    decided = (Status.PASSED, Status.SKIPPED)
    # The precision the layer computes in matters only when the check cannot pass at the
    # nominal one (nor at the full resolution: a pass at a reduced one may be the layer's
    # round-off taken for curvature, the step made smaller where a larger one resolves it): it
    # is measured then (two or four forward calls), and the check run again if the layer
    # turns out to round to float32 or to cancel large terms.
    problem, baseline, tol, fallback, dtype = _prepare(session, measure=False)
    run = _verdicts(session, problem, baseline, tol)
    verdicts = run.verdicts
    # A failure the joint probe proved at the full resolution is no artefact of a coarser
    # precision inside: the outputs followed its moves smoothly (only arguments that fail
    # too are left to decide, so nothing is to be rescued by measuring the precision).
    proven = run.joint_failed and all(v.status in (*decided, Status.FAILED) for v in verdicts)
    short = any(v.status not in decided or v.reduced is not None for v in verdicts)
    if short and session.measured_precision(dtype) is None and not proven:
        finding = session.precision(dtype)
        if finding.lost or finding.roundoff > 16 * tol.eps:
            problem, baseline, tol, fallback, dtype = _prepare(session, measure=True)
            run = _verdicts(session, problem, baseline, tol)
            verdicts = run.verdicts
    verdicts = _against_the_joint_failure(verdicts, run.joint_failed)
    # Nor of outputs that differ from call to call: those would have shown in the joint
    # probe's differences (its third, four calls apart, or its second, three), as an error
    # bound above its resolution.
    if any(v.status not in decided for v in verdicts) and not proven and not _is_deterministic(problem, baseline):
        raise Incomplete(
            f"not checked: {evaluated} is not deterministic (two calls with the same inputs differ), "
            "so finite differences cannot be taken"
        )
    timeout = session.options.timeout
    left = None if timeout is None else timeout - (monotonic() - session.started)
    # Calls of the layer, as many as the problem's size allows: the same diagnosis on every
    # machine. The timeout only bounds it, so that the failure is reported in time.
    elements = max([int(a.size) for a in problem.values] + baseline.output_sizes)
    budget = WorkBudget(calls_for(elements), diagnosis_seconds(timeout, left), most=CALLS.most)
    labels = problem.labels
    doctor = Diagnostician(
        problem,
        baseline,
        verdicts,
        tol,
        session.rng,
        budget,
        functools.partial(sub_batch, session, dtype, tol, labels, baseline),
        small_blocks=run.small,
    )
    diagnoses = {v.index: doctor.diagnose(v.index) for v in verdicts if v.status == Status.FAILED}
    records = [_record(problem, v, diagnoses.get(v.index)) for v in verdicts]
    device = "gpu" if arrays.on_gpu(session.home_module()) else "cpu"
    details: dict[str, Any] = {
        "evaluated": evaluated,
        "device": device,
        "precision": str(tol.precision),
        "fallback": fallback,
        "arguments": [r.to_dict() for r in records],
    }
    if problem.coarse:  # their round-off was taken at their own precision: said
        details["judged_at_own_precision"] = {problem.names[i]: str(d) for i, d in sorted(problem.coarse.items())}
    if problem.remarks:
        fallback = "; ".join([fallback, *problem.remarks] if fallback else problem.remarks)
        details["fallback"] = fallback
    # The explanation, as the message of a failure, is rendered from these details where the
    # result is made (`CheckResult`, `GradientReport.explanation`).
    if diagnoses:
        # Each claim once: a swap is one finding, not one per argument, and arguments with the
        # same finding share one ("the gradients of X and w are missing a conjugate").
        details["findings"] = [f.to_dict() for f in group([d.finding for d in diagnoses.values()])]

        def evidence() -> Evidence:  # for --repro: the data of each failing probe
            return gradient_evidence(session, problem, baseline, tol, dtype, verdicts, diagnoses, evaluated)

        return failed(evidence=evidence, **details)
    incomplete = [r for r in records if r.status == Status.INCOMPLETE]
    if incomplete:
        names = ", ".join(f"{r.argument} ({_undecided_reason(r)})" for r in incomplete)
        cause = next((v.cause for v in verdicts if v.cause is not None), None)
        raise Incomplete(f"could not decide for {names}", details, cause=cause)
    # Its message is rendered from these details where the result is made (`CheckResult`).
    return passed("", **details, agreement=_agreement(records, device).to_dict())


def _against_the_joint_failure(verdicts: list[ArgumentVerdict], joint_failed: bool) -> list[ArgumentVerdict]:
    """Where the joint probe failed at the full resolution and no argument's own probes fail,
    an argument that agrees only at a reduced resolution (a steep sigmoid off by 5e-5, passed
    "to a reduced resolution of 9e-05"), or only within its round-off with the bound of its
    curvature left out (`Probe.within_roundoff`: a pass that takes no error to cancel the
    truncation, where the joint probe showed one), cannot rule out what it showed: undecided."""
    if not joint_failed or any(v.status is Status.FAILED for v in verdicts):
        return verdicts
    return [_undecided_against_the_joint(v) if v.status is Status.PASSED else v for v in verdicts]


def _undecided_against_the_joint(verdict: ArgumentVerdict) -> ArgumentVerdict:
    """A passed argument undecided against a failed joint probe, where its pass says less."""
    joint = "a probe moving all arguments at once failed at the full resolution, and this one's own probes agree only"
    if verdict.reduced is not None:
        reason = f"{joint} at a reduced resolution of {resolution_text(verdict.reduced.resolution)}"
    elif any(p.within_roundoff for p in verdict.probes if p.verdict is Verdict.PASS):
        reason = f"{joint} within their round-off, the bound of their curvature left out"
    else:
        return verdict
    return ArgumentVerdict(verdict.index, Status.INCOMPLETE, verdict.probes, reason)


@dataclass(frozen=True)
class _Run:
    """The verdicts, whether the joint probe failed at the full resolution, and each checkable
    argument's small blocks (`small_scale_blocks`: every argument that can fail has them)."""

    verdicts: list[ArgumentVerdict]
    joint_failed: bool
    small: dict[int, list[tuple[str, float, Any]]]


def _verdicts(session: CheckContext, problem: GradientProblem, baseline: Baseline, tol: Tolerances) -> _Run:
    """Every argument's verdict: first one joint probe of all of them (three forward calls
    however many they are), then an argument-by-argument check of those it did not clear."""
    checkable = [
        index
        for index in range(len(problem.names))
        if problem.kinds[index] != "integer input"
        and baseline.gradients[index] is not None
        and problem.values[index].size > 0
    ]
    # Blocks whose gradient is small against the rest of their argument's (`_small_blocks`).
    small = {i: small_scale_blocks(baseline.gradients[i], problem.labels[i]) for i in checkable}
    joint: Probe | None = None
    cleared: set[int] = set()
    if checkable:  # two forward calls for all of them where the pair agrees (a third, a backward at kinks)
        masks = {i: [mask for _, _, mask in found] for i, found in small.items()}
        try:
            joint, cleared = check_jointly(problem, baseline, checkable, tol, session.rng("gradient joint"), masks)
        except EvaluationError:
            joint, cleared = None, set()
    joint_failed = joint is not None and joint.verdict is Verdict.FAIL
    verdicts = []
    for index in range(len(problem.names)):
        if joint is not None and index in cleared:
            verdict = ArgumentVerdict(index, Status.PASSED, [joint])
            rng = functools.partial(session.rng, f"gradient {problem.names[index]}")
            verdicts.append(_small_blocks(problem, baseline, tol, index, verdict, rng, small[index]))
        else:
            verdicts.append(_verdict(session, problem, baseline, tol, index, small.get(index, [])))
    if [v.index for v in verdicts] != list(range(len(problem.names))):
        # Never a pass that decided fewer arguments than there are: whatever made the loop
        # above skip one (a defect, or a `range` the layer replaced) makes no verdict.
        raise RuntimeError(f"{len(verdicts)} verdict(s) for {len(problem.names)} argument(s)")
    return _Run(verdicts, joint_failed, small)


def _verdict(
    session: CheckContext,
    problem: GradientProblem,
    baseline: Baseline,
    tol: Tolerances,
    index: int,
    small: list[tuple[str, float, Any]],
) -> ArgumentVerdict:
    if problem.kinds[index] == "integer input":
        return ArgumentVerdict(index, Status.SKIPPED, [], "an integer input is not differentiated")
    if baseline.gradients[index] is None:
        reason = "backward returned no array of numbers of the argument's shape (see backward_is_consistent_in_size)"
        return ArgumentVerdict(index, Status.INCOMPLETE, [], reason)
    if problem.values[index].size == 0:
        return ArgumentVerdict(index, Status.PASSED, [], "empty")
    rng = session.rng(f"gradient {problem.names[index]}")
    verdict = check_argument(problem, baseline, index, tol, rng)
    # Probes of the whole argument that disagree may each have seen a small block's error or
    # not: the small blocks on their own decide whether it is wrong there.
    if verdict.status is not Status.PASSED and not verdict.disagreed:
        return verdict
    return _small_blocks(problem, baseline, tol, index, verdict, lambda: rng, small)


def _small_blocks(
    problem: GradientProblem,
    baseline: Baseline,
    tol: Tolerances,
    index: int,
    verdict: ArgumentVerdict,
    rng: Callable[[], np.random.Generator],
    small: list[tuple[str, float, Any]],
) -> ArgumentVerdict:
    """Blocks (channels, observations, time steps) whose gradient is orders of magnitude below
    the rest (`small`: `small_scale_blocks` of the argument) may be invisible to a probe of the
    whole argument: an error that is all of such a block is a negligible part of the whole.
    Each is probed on its own, at its own scale, unless the probe that passed the argument
    resolved a small error in it too. `rng`: the generator of the argument's probes, asked
    for only where a block is probed (making one costs more than most passing checks' sums)."""
    gradient = baseline.gradients[index]
    passing = next((p for p in reversed(verdict.probes) if p.verdict is Verdict.PASS), None)
    generator = None
    for k, (where, relative, mask) in enumerate(small):
        if passing is not None and _resolves(passing, index, k, gradient, mask):
            continue
        generator = generator or rng()
        block = check_argument(problem, baseline, index, tol, generator, support=mask)
        if block.status is Status.FAILED:
            scale = "zero" if relative == 0 else f"{relative:.1g} times the largest"
            reason = (
                f"wrong in {where}, where the gradient is small ({scale}): checked on their own, "
                "the whole-argument probes cannot see an error there"
            )
            return ArgumentVerdict(index, Status.FAILED, verdict.probes + block.probes, reason)
    return verdict


# A block whose gradient is small is cleared by the probe that passed its argument where a
# relative error of this size in the block alone would have moved that probe's projection by
# twice its tolerance: the block's own share of that projection is large enough.
BLOCK_RESOLUTION = 1e-3


def _resolves(probe: Probe, index: int, k: int, gradient: Any, mask: Any) -> bool:
    """Whether `probe` (which passed argument `index`) would have seen an error of
    BLOCK_RESOLUTION of the block `mask` (its k-th small block) of the argument's gradient:
    the block's share of the probe's own projection, <g, v> over the block, as that probe
    drew v (a share that happens to be small by chance resolves nothing)."""
    if probe.argument < 0:
        shares = probe.block_parts.get(index, ())
        if k >= len(shares):
            return False
        share = abs(shares[k])
    else:
        (projected,) = arrays.fetch(arrays.dot(gradient[mask], probe.direction[mask]))
        share = abs(float(projected))
    return 2 * probe.tolerance <= BLOCK_RESOLUTION * share


def _record(problem: GradientProblem, verdict: ArgumentVerdict, diagnosis: Diagnosis | None) -> ArgumentRecord:
    """One argument's record: its outcome, its probes, and for a failure the worst error."""
    probe = worst_failing(verdict)  # the probe the argument's finding states, so one number
    worst = None if probe is None else numbers_of(probe)
    non_finite = next((p.non_finite for p in reversed(verdict.probes) if p.non_finite is not None), None)
    return ArgumentRecord(
        argument=problem.names[verdict.index],
        kind=problem.kinds[verdict.index],
        status=verdict.status,
        reason=verdict.reason,
        probes=tuple(ProbeRecord.of(p) for p in verdict.probes),
        shape=tuple(int(n) for n in problem.values[verdict.index].shape),
        labels=problem.labels[verdict.index],
        diagnosis=diagnosis,
        worst=worst,
        non_finite=non_finite if verdict.status is Status.INCOMPLETE else None,
        names=(tuple(problem.names), tuple(problem.outputs)),
        reduced=None if verdict.reduced is None else ProbeRecord.of(verdict.reduced),
        resolution=None if verdict.reduced is None else verdict.reduced.resolution,
    )


def _undecided_reason(record: ArgumentRecord) -> str:
    """Why an argument was not decided: where its outputs went NaN or infinite, when that is
    what stopped it, else the probes' reasons."""
    if record.non_finite is None:
        return record.reason
    return wording.non_finite_move_text(record.non_finite, *record.names)


def _agreement(records: list[ArgumentRecord], device: str) -> Agreement:
    """What a pass rests on: the worst relative difference of the probes each argument's pass
    rests on, and how many outputs each left out at kinks (a joint probe decides several
    arguments: it counts once)."""
    deciding = list(dict.fromkeys(p for r in records if r.status == Status.PASSED for p in r.deciding))
    worst = max((p.rel_error or 0.0 for p in deciding), default=0.0)
    masked = tuple(p.outputs_masked_at_kinks for p in deciding if p.outputs_masked_at_kinks)
    return Agreement(worst, masked, device)


# What the diagnosis of a failed gradient (localizing and naming the cause) may spend. A small
# layer (its checks take milliseconds) gets this many times what proving the failure took,
# at least the floor: every claim it can prove. That share shrinks in proportion for layers
# whose largest array has more elements, whose users wait for the factor instead: what is
# left, after the proof, of this many times a passing check of the same layer (a failed check
# costs about three passing ones, however wrong the layer). At most this share of the
# target's timeout (the checks after it still run), and never what would take the target
# past its timeout: a proven failure is reported.
DIAGNOSIS_TIMEOUT_SHARE = 0.25
DIAGNOSIS_TIMEOUT_MARGIN = 0.2  # of the time left: what reporting may still need


def diagnosis_seconds(timeout: float | None, left: float | None = None) -> float | None:
    """The seconds the diagnosis may never pass: a share of the target's `timeout`, and less
    than the `left` seconds of it (None: no timeout, no limit but its calls)."""
    if timeout is None:
        return None
    seconds = DIAGNOSIS_TIMEOUT_SHARE * timeout
    if left is not None:
        seconds = min(seconds, max(0.0, (1 - DIAGNOSIS_TIMEOUT_MARGIN) * left))
    return seconds
