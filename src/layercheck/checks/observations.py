"""Observations do not mix: a batch gives what its observations give one at a time.

Each observation of the layout runs alone, on a layer initialized for one observation, or a
random subset of them (the first and last included) when there are many. Its outputs are
compared with its part of the whole batch's, as the layer computed them at the layout's own
size (a layer that takes batch statistics once the batch is large, or handles a large batch
in chunks, does so there only); backward's, with its part of the batch of the observations
checked. States whose size follows the batch are split along their batch axis; states of
fixed size are shared by every observation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from layercheck.checks.backward import gradient_size_problem
from layercheck.checks.common import (
    named_outputs,
    primary_dtype,
    raised,
    require_backward,
    require_own_forward,
    widened,
)
from layercheck.checks.context import CheckContext
from layercheck.checks.evidence import call_evidence, session_tolerance_words
from layercheck.checks.layouts import require_batch
from layercheck.checks.registry import LAYERS_ONLY, Incomplete, Outcome, Skip, check, failed, passed
from layercheck.checks.subsets import Split, split_by_observation, subset_inputs, subset_layer, take
from layercheck.contract.adapter import Adapter, Outputs
from layercheck.errors import USER_ERRORS
from layercheck.findings.observations import (
    Differences,
    Interaction,
    Misshapen,
    NotSummed,
    ObservationReport,
    Observed,
    not_repeatable,
)
from layercheck.findings.problems import Raised, RaisedWhen
from layercheck.numerics import arrays
from layercheck.numerics.compare import Mismatch, mismatch, scaled_atol
from layercheck.reproducers.evidence import Evidence, LazyEvidence, ReproKind
from layercheck.results import Call, Cause, cause_of
from layercheck.userframes import exception_summary

__all__ = [
    "backward_is_consistent_across_observations",
    "forward_is_consistent_across_observations",
    "predict_is_consistent_across_observations",
]


def _run(layer: Adapter, method: str, xs: Sequence[Any], when: RaisedWhen, observation: int = 0) -> Outputs:
    """`method` (predict or forward) run on `xs`: the whole batch or `observation` alone, as
    `when` says. Raises _Raised when the layer raised."""
    run: Callable[[Sequence[Any]], Outputs] = getattr(layer, method)
    try:
        return run(xs)
    except USER_ERRORS as exc:
        raise _Raised(raised(method, exc, when, observation=observation), cause_of(exc)) from None


class _Raised(Exception):
    """The layer raised on a subset of the observations: a failure of the check, `problem`."""

    def __init__(self, problem: Raised, cause: Cause | None):
        super().__init__(problem.sentence())
        self.problem, self.cause = problem, cause


def _tolerance(session: CheckContext, dtype: Any, values: Iterable[Any]) -> tuple[float, float]:
    """The dtype's rtol, and an atol relative to the largest value compared (sums reorder)."""
    rtol, atol = session.tolerance(dtype)
    return rtol, scaled_atol(rtol, atol, values)


def _gradient_tolerances(
    session: CheckContext, dtype: str, gradients: Sequence[Any]
) -> tuple[list[tuple[float, float]], dict[int, str]]:
    """The (rtol, atol) to compare each gradient with: `dtype`'s, or that of the gradient's own
    precision where it came back coarser than asked (its dtype is a failure of its own,
    backward_is_consistent_in_type; its sums and splits are judged as what it is, not failed
    again for its rounding); and, by position, the coarser precisions, to be said."""
    asked = _tolerance(session, dtype, gradients)
    tolerances, coarse = [], {}
    for j, g in enumerate(gradients):
        own = arrays.coarser_precision(g, dtype)
        tolerances.append(asked if own is None else _tolerance(session, own, gradients))
        if own is not None:
            coarse[j] = str(own)
    return tolerances, coarse


@dataclass
class _Found:
    """What comparing a batch with its observations found: the observations checked (None:
    the comparison stopped before it knew them) and those that differ, the gradients judged at
    their own coarser precision (by name), the failure typed (none: no failure), what
    recomputes it (`--repro`), and its cause where the layer raised."""

    checked: list[int] | None = None
    differing: list[int] | None = None  # None: not compared (the layer raised first)
    own_precision: dict[str, str] = field(default_factory=dict)
    evidence: LazyEvidence | None = None
    cause: Cause | None = None
    interaction: Interaction = Interaction.UNKNOWN
    # The failure typed: a comparison, or what the layer raised (its message rendered from it).
    typed: ObservationReport | None = None
    raised: Raised | None = None

    @classmethod
    def of_raise(cls, exc: _Raised, checked: list[int] | None = None) -> _Found:
        return cls(checked, cause=exc.cause, raised=exc.problem)

    @property
    def message(self) -> str | None:
        """The failure in words, rendered from it (None: none)."""
        if self.typed is not None:
            return self.typed.headline
        return None if self.raised is None else self.raised.sentence()

    def failing(self, found: Differences | NotSummed | Misshapen, evidence: LazyEvidence | None) -> _Found:
        """This comparison, failed with `found`."""
        self.typed, self.evidence = ObservationReport(found), evidence
        if isinstance(found, Differences):
            self.interaction = found.interaction
        return self

    def details(self) -> dict[str, Any]:
        """The report's details of the check (the keys of the JSON schema)."""
        if self.checked is None:
            return {}
        details: dict[str, Any] = {"observations_checked": self.checked}
        if self.differing is not None:
            details["differing_observations"] = self.differing
        if self.own_precision:  # said, since their tolerance was widened to their own precision's
            details["judged_at_own_precision"] = dict(self.own_precision)
        return details


def _replace_others(
    session: CheckContext, keep: int, values: Sequence[Any], axes: Sequence[int | None]
) -> tuple[list[Any], bool]:
    """`values` (one per argument, cut by observation along `axes`) with every observation
    but position `keep` replaced by other random values: numbers drawn anew; integers and
    booleans (indices, lengths, masks) drawn from the values the argument holds, so that they
    stay valid. And whether every argument cut by observation was drawn anew: a result that
    did not change shows it does not depend on the others' values only then (redrawn from the
    values held, integers may keep what matters, as their largest: a length's maximum)."""
    rng = session.rng("cross-talk")
    replaced, complete = [], True
    for value, axis in zip(values, axes):
        if axis is None or not arrays.is_array(value):
            replaced.append(value)
            continue
        xp = arrays.array_module(value)
        if np.dtype(value.dtype).kind in "fc":
            other = arrays.to_module(arrays.random_host_like(value, rng).astype(value.dtype), xp)
        else:
            host = arrays.to_host(value)
            other = arrays.to_module(rng.choice(np.unique(host), size=host.shape).astype(host.dtype), xp)
            complete = False
        index = [slice(None)] * value.ndim
        index[axis] = slice(keep, keep + 1)
        other[tuple(index)] = value[tuple(index)]
        replaced.append(other)
    return replaced, complete


def _observations_evidence(
    session: CheckContext, method: str, split: Split, indices: list[int], loss: Sequence[Any] = (), **meta: Any
) -> LazyEvidence:
    """For --repro: the arguments of the whole batch, the observations checked and the batch
    axes (for backward: the batch's dL/dY and dL/dS_out, and each gradient's axis and tolerance)."""

    def build() -> Evidence:
        rtol, atol = session.tolerance(split.dtype)
        return call_evidence(
            session,
            ReproKind.OBSERVATIONS,
            f"{method}_is_consistent_across_observations",
            method,
            split.dtype,
            loss=loss,
            observations=list(indices),
            input_axes=split.inputs,
            result_axes=split.results,
            state_axes=list(split.states.values()),
            rtol=rtol,
            atol=atol,
            tolerance_source=session_tolerance_words(session, split.dtype),
            **meta,
        )

    return build


def _compare_outputs(session: CheckContext, method: str) -> _Found:
    """What comparing the batch with its observations run one at a time found. Raises
    _Raised when the layer raised."""
    split, indices = split_by_observation(session, method)
    whole = list(range(require_batch(session)))
    evidence = _observations_evidence(session, method, split, indices, batch=len(whole))
    names = [
        name
        for name, _ in named_outputs(
            session.reference, Outputs((None,) * session.reference.num_outputs, (None,) * len(split.states))
        )
    ]
    # The whole batch as the session's own call computed it (no call more): a batch of the
    # observations checked alone would be another size than the layout's, and a layer may
    # compute a large batch otherwise (statistics once it is large, chunks of it).
    batch: Outputs = session.step(method, split.dtype).require()
    _require_batch_sizes(names, batch.all, split.results, len(whole))
    rtol, atol = _tolerance(session, split.dtype, batch.all)
    observed = Observed.PREDICT if method == "predict" else Observed.FORWARD
    differ: dict[int, list[tuple[str, Mismatch]]] = {}
    for i in indices:
        alone = _run(subset_layer(session, split, [i]), method, subset_inputs(session, split, [i]), RaisedWhen.ALONE, i)
        for name, together, single, axis in zip(names, batch.all, alone.all, split.results):
            if axis is None:
                continue
            expected = take(together, [i], axis)
            if not arrays.is_array(single) or single.shape != expected.shape:
                returned, part = arrays.describe(single), arrays.describe(expected)
                return _Found().failing(Misshapen(observed, i, name, returned, part), evidence)
            problem = mismatch(single, expected, rtol, atol)
            if problem is not None:
                differ.setdefault(i, []).append((name, problem.placed(axis, i)))
    if not differ:
        return _Found(indices, [])
    interaction = _output_interaction(session, method, split, whole, min(differ), rtol, atol)
    return _Found(indices, sorted(differ)).failing(Differences(observed, differ, len(indices), interaction), evidence)


def _output_interaction(
    session: CheckContext,
    method: str,
    split: Split,
    whole: list[int],
    k: int,
    rtol: float,
    atol: float,
) -> Interaction:
    """Why observation k's outputs differ alone, on the whole batch run again: not repeatable
    on one layer object, or changed when only the other observations' inputs change?"""
    # A method that draws random numbers gives other results alone as it would again on the
    # batch (each fresh layer starts from the same seeds, so the draws fall on other
    # observations): run twice on one object first, or its draws would read as interaction.
    batch_layer = subset_layer(session, split, whole)
    batch = _run(batch_layer, method, subset_inputs(session, split, whole), RaisedWhen.BATCH)
    repeated = _run(batch_layer, method, subset_inputs(session, split, whole), RaisedWhen.BATCH_AGAIN)
    if _any_differ(batch.all, repeated.all, split.results, rtol, atol):
        return Interaction.RANDOM
    others, complete = _replace_others(session, k, subset_inputs(session, split, whole), split.inputs)
    again = _run(subset_layer(session, split, whole), method, others, RaisedWhen.OTHER_OBSERVATIONS)
    first = [take(y, [k], axis) if axis is not None else None for y, axis in zip(batch.all, split.results)]
    second = [take(y, [k], axis) if axis is not None else None for y, axis in zip(again.all, split.results)]
    if _any_differ(first, second, split.results, rtol, atol):
        return Interaction.MIXES
    return Interaction.PLACE if complete else Interaction.UNKNOWN


def _any_differ(
    first: Sequence[Any],
    second: Sequence[Any],
    axes: Sequence[int | None],
    rtol: float,
    atol: float,
) -> bool:
    """Whether two runs' results that are split by observation (an axis) differ, in shape or
    beyond the tolerance."""
    return any(axis is not None and _differs(b, a, rtol, atol) for a, b, axis in zip(first, second, axes))


def _require_batch_sizes(names: Sequence[str], values: Sequence[Any], axes: Sequence[int | None], n: int) -> None:
    for name, value, axis in zip(names, values, axes):
        if axis is not None and (not arrays.is_array(value) or value.ndim <= axis or value.shape[axis] != n):
            raise Incomplete(
                f"not checked: {name} of a batch of {n} is {arrays.describe(value)}, without {n} observations "
                "along its batch axis (see output_batch_size_matches_input)"
            )


def _differs(actual: Any, expected: Any, rtol: float, atol: float) -> bool:
    """Whether `actual` is no array of `expected`'s shape, or differs from it beyond the tolerance."""
    if not arrays.is_array(actual) or actual.shape != expected.shape:
        return True
    return mismatch(actual, expected, rtol, atol) is not None


def _training_differs(session: CheckContext, dtype: str) -> bool:
    """forward computes something else than predict (batch statistics, as in batch normalization)."""
    layer = session.reference
    if not layer.has_forward:
        return False
    predicted, trained = session.predict(dtype).require(), session.forward(dtype).require()
    rtol, atol = _tolerance(session, dtype, predicted.values)
    return any(
        not arrays.is_array(f) or f.shape != p.shape or mismatch(f, p, rtol, atol) is not None
        for p, f in zip(predicted.values, trained.values)
    )


def _outcome(session: CheckContext, found: _Found) -> Outcome:
    details = {**found.details(), **widened(session, [primary_dtype(session)])}
    if found.message:
        mode = session.reference.training_mode
        explanation = (
            [
                f"checked with {mode.given}: in training mode a layer may mix observations by design "
                f"(statistics over the batch, a dropout mask drawn for the whole batch); with {mode.inference} "
                "this check judges the inference path"
            ]
            if mode
            else []
        )
        typed = found.typed or found.raised
        assert typed is not None  # every failure of these checks is typed
        details.update(typed.to_details())
        return failed(explanation=explanation, cause=found.cause, evidence=found.evidence, **details)
    assert found.checked is not None  # nothing found, once every observation was compared
    return passed(f"{len(found.checked)} observations checked", **details)


def _training_path(found: _Found, method: str) -> str:
    """Why a forward that differs from predict has its observation checks skipped, in what was
    shown of it (`method`: what was run again)."""
    if found.interaction is Interaction.MIXES:
        shown, allowed = "its observations interact", "training-time batch statistics (as in batch normalization) are"
    elif found.interaction is Interaction.RANDOM:
        shown, allowed = not_repeatable(method), "training-time random draws (as in dropout) are"
    else:
        # Nothing was compared where the layer raised on a part of the batch (`_Found.raised`).
        shown = "an observation's results differ when it runs alone" if found.differing else f"{found.message}"
        allowed = "a training-time path that depends on the batch (as batch normalization's) is"
    return (
        f"forward differs from predict, and {shown}: {allowed} allowed; "
        "predict_is_consistent_across_observations checks predict"
    )


@check(
    "predict_is_consistent_across_observations",
    "predict on a batch equals predict on each of its observations alone (outputs and states)",
    kinds=LAYERS_ONLY,
    repro=ReproKind.OBSERVATIONS,
    calls=(Call.PREDICT,),
)
def predict_is_consistent_across_observations(session: CheckContext) -> Outcome:
    try:
        found = _compare_outputs(session, "predict")
    except _Raised as exc:
        found = _Found.of_raise(exc)
    return _outcome(session, found)


@check(
    "forward_is_consistent_across_observations",
    "forward on a batch equals forward on each of its observations alone, unless forward "
    "legitimately uses batch statistics (it then differs from predict)",
    kinds=LAYERS_ONLY,
    repro=ReproKind.OBSERVATIONS,
    calls=(Call.FORWARD,),
)
def forward_is_consistent_across_observations(session: CheckContext) -> Outcome:
    require_own_forward(session.reference, "predict_is_consistent_across_observations")
    try:
        found = _compare_outputs(session, "forward")
    except _Raised as exc:
        found = _Found.of_raise(exc)
    if found.message and _training_differs(session, primary_dtype(session)):
        raise Skip(_training_path(found, "forward"))
    return _outcome(session, found)


def _split_gradients(session: CheckContext, outputs: Outputs, split: Split) -> tuple[list[Any], list[Any]]:
    """Random dL/dY and dL/dS_out where they can be split by observation, zero where shared."""
    dLdY, dLdS = session.output_gradients(outputs, "observations dLdY")
    return (
        [d if axis is not None else d * 0 for d, axis in zip(dLdY, split.outputs)],
        [d if axis is not None else d * 0 for d, axis in zip(dLdS, split.states.values())],
    )


def _training_step(
    session: CheckContext,
    split: Split,
    indices: Sequence[int],
    output_gradients: Callable[[Outputs], tuple[list[Any], list[Any]]],
    when: RaisedWhen,
) -> tuple[tuple[Any, ...], list[Any], list[Any]]:
    """forward then backward on the observations `indices` (`when`: the batch, or one
    observation alone), with the dL/dY and dL/dS_out that `output_gradients(outputs)` gives;
    the gradients, and those dL/dY and dL/dS_out."""
    layer = subset_layer(session, split, indices)
    xs = subset_inputs(session, split, indices)
    observation = indices[0] if when is RaisedWhen.ALONE else 0
    outputs = _run(layer, "forward", xs, when, observation)
    dLdY, dLdS = output_gradients(outputs)
    try:
        # Copies: a backward that writes into dL/dY must not change what its observations
        # are given (backward_does_not_modify_inputs reports the writing).
        grads = layer.backward([x.copy() for x in xs], outputs, [d.copy() for d in dLdY], [d.copy() for d in dLdS])
        return grads.all, dLdY, dLdS
    except USER_ERRORS as exc:
        every = len(indices) == require_batch(session)
        if every and session.backward(split.dtype).ok:
            # The very call that ran as the session's first backward raises now: repeating
            # backward fails, whatever the observations (backward_is_repeatable reports it).
            raise Incomplete(
                f"not checked: backward raised {exception_summary(exc)} on the whole batch, where it ran "
                "the first time: see backward_is_repeatable",
                cause=cause_of(exc),
            ) from None
        raise _Raised(raised("backward", exc, when, observation=observation), cause_of(exc)) from None


def _backward_differences(session: CheckContext, split: Split, indices: list[int]) -> _Found:
    layer = session.reference
    batch, dLdY, dLdS = _training_step(
        session,
        split,
        indices,
        lambda outputs: _split_gradients(session, outputs, split),
        RaisedWhen.BATCH,
    )
    names = layer.gradient_names()
    integer = session.integer_arguments
    for name, g, skip in zip(names, batch, integer):
        if not arrays.is_array(g) and not skip:
            raise Incomplete(
                f"not checked: backward returned {arrays.describe(g)} as the gradient of {name} (see backward_is_consistent_in_size)"
            )
    axes = split.inputs + [None] * len(layer.learnables) + list(split.states.values())
    tolerances, coarse = _gradient_tolerances(session, split.dtype, batch)
    evidence = _observations_evidence(
        session,
        "backward",
        split,
        indices,
        loss=[*dLdY, *dLdS],
        gradient_axes=axes,
        gradient_tolerances=[list(t) for t in tolerances],
    )
    sums: list[Any] = [0.0] * len(names)
    magnitudes: list[Any] = [0.0] * len(names)
    differ: dict[int, list[tuple[str, Mismatch]]] = {}
    for k, i in enumerate(indices):

        def observation_gradients(_: Outputs, k: int = k) -> tuple[list[Any], list[Any]]:
            return (
                [take(d, [k], axis) for d, axis in zip(dLdY, split.outputs)],
                [take(d, [k], axis) for d, axis in zip(dLdS, split.states.values())],
            )

        alone, _, _ = _training_step(session, split, [i], observation_gradients, RaisedWhen.ALONE)
        for j, (name, together, single, axis) in enumerate(zip(names, batch, alone, axes)):
            if integer[j]:
                continue
            expected = together if axis is None else take(together, [k], axis)
            if not arrays.is_array(single) or single.shape != expected.shape:
                returned, part = arrays.describe(single), arrays.describe(expected)
                misshapen = Misshapen(Observed.BACKWARD, i, session.reference.d(name), returned, part)
                return _Found().failing(misshapen, evidence)
            if axis is None:
                sums[j] = sums[j] + single
                magnitudes[j] = magnitudes[j] + abs(single)
                continue
            diff = mismatch(single, expected, *tolerances[j])
            if diff is not None:
                differ.setdefault(i, []).append((session.reference.d(name), diff.placed(axis, i)))
    found = _Found(indices, sorted(differ), {session.reference.d(names[j]): own for j, own in coarse.items()})
    if differ:
        k = indices.index(min(differ))
        interaction = _backward_interaction(session, split, indices, k, batch, dLdY, dLdS, axes, tolerances)
        return found.failing(Differences(Observed.BACKWARD, differ, len(indices), interaction), evidence)
    for name, together, total, magnitude, axis, skip, (rtol, atol) in zip(
        names, batch, sums, magnitudes, axes, integer, tolerances
    ):
        if axis is not None or skip:
            continue
        diff = mismatch(together, total, rtol, scaled_atol(rtol, atol, [magnitude]))
        if diff is not None:
            return found.failing(NotSummed(name, session.reference.d(name), len(indices), diff), evidence)
    return found


def _backward_interaction(
    session: CheckContext,
    split: Split,
    indices: Sequence[int],
    k: int,
    batch: Sequence[Any],
    dLdY: Sequence[Any],
    dLdS: Sequence[Any],
    axes: Sequence[int | None],
    tolerances: Sequence[tuple[float, float]],
) -> Interaction:
    """Why observation k's input gradients differ alone: forward then backward not repeatable
    on one layer object (random draws: nothing follows), or do they change when only the
    other observations' inputs and dL/dY change?"""

    def step(layer: Adapter, xs: Sequence[Any], dLdY: Sequence[Any], dLdS: Sequence[Any]) -> tuple[Any, ...]:
        outputs = layer.forward([x.copy() for x in xs])
        return layer.backward([x.copy() for x in xs], outputs, [d.copy() for d in dLdY], [d.copy() for d in dLdS]).all

    def differ(first: Sequence[Any], second: Sequence[Any], observation: int | None) -> bool:
        for g1, g2, axis, (rtol, atol) in zip(first, second, axes, tolerances):
            if axis is None or not (arrays.is_array(g1) and arrays.is_array(g2)) or g1.shape != g2.shape:
                continue
            if observation is not None:
                g1, g2 = take(g1, [observation], axis), take(g2, [observation], axis)
            if _differs(g2, g1, rtol, atol):
                return True
        return False

    xs = subset_inputs(session, split, indices)
    layer = subset_layer(session, split, indices)
    try:
        if differ(step(layer, xs, dLdY, dLdS), step(layer, xs, dLdY, dLdS), None):
            return Interaction.RANDOM
        others, complete = _replace_others(session, k, list(xs), split.inputs)
        new_dLdY, _ = _replace_others(session, k, list(dLdY), split.outputs)
        new_dLdS, _ = _replace_others(session, k, list(dLdS), list(split.states.values()))
        again = step(subset_layer(session, split, indices), others, new_dLdY, new_dLdS)
    except USER_ERRORS:
        return Interaction.UNKNOWN
    if differ(batch, again, k):
        return Interaction.MIXES
    return Interaction.PLACE if complete else Interaction.UNKNOWN


@check(
    "backward_is_consistent_across_observations",
    "the input gradients of a batch equal those of its observations alone, and learnable gradients "
    "equal their sum over the observations",
    kinds=LAYERS_ONLY,
    repro=ReproKind.OBSERVATIONS,
    calls=(Call.FORWARD, Call.BACKWARD),
)
def backward_is_consistent_across_observations(session: CheckContext) -> Outcome:
    require_backward(session.reference)
    split, indices = split_by_observation(session, "forward")
    session.backward(split.dtype).require()
    problem = gradient_size_problem(session)
    if problem is not None:  # gradients of the wrong shape or no numbers cannot be split by observation
        raise Incomplete(f"not checked: {problem.headline} (see backward_is_consistent_in_size)")
    try:
        found = _backward_differences(session, split, indices)
    except _Raised as exc:
        found = _Found.of_raise(exc, indices)
    if found.message and _training_differs(session, split.dtype):
        raise Skip(_training_path(found, "forward then backward"))
    return _outcome(session, found)
