"""Numerical gradient checking by directional derivatives.

For a loss L = sum(Re(conj(W) * Y)) over every output and updated state, the analytic side
of one probe is A = <g, v> (one `backward` with dL/dY = W gives g for every argument) and the
numeric side is the central difference C = <W, Y(a + t v) - Y(a - t v)> / 2t along a random
direction v of one argument a. Cost: two forward calls per probe, whatever the array's size.

Why this is exact enough and never cries wolf:

* Differences are taken on the outputs, element by element, before the weighted sum: outputs
  that the perturbation does not touch cancel exactly, so round-off is that of the changed
  elements only, not of the whole loss.
* The second difference d2 = Y(a + t v) - 2 Y(a) + Y(a - t v) is known element by element.
  Its W-weighted norm bounds the error of C from round-off, curvature and kinks that lie
  within the step, and is the error estimate E (empirical, so it adapts to the layer).
* Outputs whose d2 is not small against their first difference are taken for kinks: they
  crossed a non-differentiable point (a ReLU kink, an SReLU threshold) within the step, or
  the layer curves on a finer scale than the step. They are masked out of the loss:
  W' = W with those outputs zeroed, one more `backward` with W', and A, C are compared on L'.
  The check then stays exact however densely kinks are placed.
* A probe passes when |A - C| <= tol and E is small enough to have caught a real error; it
  fails when |A - C| > tol, where tol = rtol * max(|A|, |C|) + atol * |v| + E + (round-off of
  the analytic side). A failure must be confirmed by a second probe with another direction
  and step; anything else is retried with a step adapted to what went wrong (smaller for
  kinks and curvature, larger for round-off) and ends as `incomplete` if it cannot decide.
* Two or more arguments are first probed together (`check_jointly`): two or three forward
  calls clear every argument whose share of the projection would have shown its own error; the
  rest, and all of them when that probe fails, are probed one by one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np

from layercheck.numerics.arrays import (
    Scalars,
    chunks,
    displaced,
    dot,
    dot_and_norms,
    fetch,
    machine_epsilon,
    namespace_of,
    norm_sq,
    precision_of,
    product_norm_sq,
    random_moves,
)
from layercheck.numerics.gradients.findings import NonFiniteMove, NonFiniteOutput, resolution_text
from layercheck.status import Cause, Status, cause_of

__all__ = [
    "ArgumentVerdict",
    "Baseline",
    "EvaluationError",
    "GradientProblem",
    "Probe",
    "Tolerances",
    "Undecided",
    "Verdict",
    "check_argument",
    "check_jointly",
    "element_probe",
    "keep_inside",
    "make_baseline",
    "random_direction",
    "reduced_resolution_of",
    "run_probe",
    "step_scale",
]


class Verdict(str, Enum):
    """A probe's verdict, valued as the `verdict` strings of the JSON records."""

    PASS = "pass"
    FAIL = "fail"
    UNDECIDED = "undecided"

    def __str__(self) -> str:
        return self.value


class Undecided(Enum):
    """Why a probe could not decide. The engine branches on these (the next step size, a
    closer look for kinks); the prose of the records is `describe`'s."""

    KINKS = "kinks"  # most changed outputs bent sharply within the step (a kink, or fine curvature)
    NON_FINITE = "non-finite"  # a perturbed pass produced NaN or infinite outputs
    NON_FINITE_GRADIENT = "non-finite gradient"  # the analytic side is NaN or infinite
    ROUND_OFF = "round-off"  # the error estimate is round-off: a larger step helps
    CURVATURE = "curvature"  # the error estimate is curvature (or a hidden kink): a smaller step helps
    SMALL_PROJECTION = "small projection"  # the projection is too small for the relative resolution

    def describe(self, masked: int = 0, changed: int = 0) -> str:
        """The reason in the words of the records (`masked` of `changed` outputs at kinks)."""
        if self is Undecided.KINKS:
            return f"{masked} of {changed} changed outputs {_BENT}"
        return _UNDECIDED_PROSE[self]


# What the kink test measures, and no more: second differences a large part of the first
# ones. A ReLU's kink shows so, and so does a smooth layer that curves on a scale finer than
# the step (sin(1e6 x)); one probe cannot tell them apart, so the words name both.
_BENT = "bent sharply within the step (a non-differentiable point, or curvature finer than the step)"


_UNDECIDED_PROSE = {
    Undecided.NON_FINITE: "a perturbed pass produced NaN or infinite outputs",
    Undecided.NON_FINITE_GRADIENT: "the analytic gradient has NaN or infinite values",
    Undecided.ROUND_OFF: "round-off",
    Undecided.CURVATURE: "curvature",
    Undecided.SMALL_PROJECTION: "the derivative along the direction tried is too small against its tolerance to decide",
}

# Relative step per precision: central differences at this step have a truncation error far
# below the resolution target while round-off stays well under it (eps / h).
_STEP = {np.dtype(np.float64): 1e-7, np.dtype(np.float32): 3e-3}
# Per precision: the largest numeric error estimate (relative to the probe's scale) for a
# decisive pass; the largest accepted at all; and the largest tolerance relative to the
# projection itself, so that a pass rules out a uniform relative error of that size even when
# the random projection happens to be small.
_RESOLUTION = {np.dtype(np.float64): (1e-6, 1e-4, 5e-7), np.dtype(np.float32): (3e-3, 3e-2, 3e-3)}
# Per precision: the largest tolerance relative to the projection itself that a pass at a
# reduced resolution accepts. Far above it, the probe agrees with any gradient (a projection
# far below its tolerance): no agreement at all.
_REDUCED_PROJECTION = {np.dtype(np.float64): 1e-2, np.dtype(np.float32): 1e-1}
_FLOAT64_EPS = machine_epsilon(np.float64)  # the precision `_within_roundoff` passes in
_ERROR_FACTOR = 4.0  # E = 4 x the W-weighted RMS of the second differences (+ a round-off floor)
_MAX_PROBES = 6
# Relative steps: from this size on, outputs that do not move do not depend on the argument;
# the largest step, for layers whose outputs are nearly constant against their own size.
_LARGE_STEP, _MAX_STEP = 1e-3, 10.0
# A failure at a step this many times below the nominal one (reached after probes the step's
# curvature or kinks left undecided) is tried again along its direction at `_RETRY` times the
# step: the error of a gradient stays, round-off the estimate left out shrinks (`_round_off`).
_SMALL_STEP, _RETRY = 8.0, 16.0
# So is a failure by less than `_SLIGHT` of its probe's scale (round-off shows so, a gross
# error never does) with more than `_KINKED` of its changed outputs taken for kinks: a layer's
# kinks are rarely so many within float64's step unless its inputs sit on them (a third of
# them 0), which the larger step shows too; round-off taken for kinks (a minority of outputs
# that round far above their own ulps, sin(w X + 1e4) in a few channels) vanishes there.
_SLIGHT, _KINKED = 1e-3, 0.01
_KINK_SHARE = 1e-3  # the least share of its first difference a kink's second difference passes
# Base outputs of this many bytes and more are let go while the joint probe's pair runs
# (`Baseline.release_outputs`): a copy of them is worth a call more where kinks or a failure
# need them again.
_RELEASE_BYTES = 32 << 20
_NO_DIRECTION: np.ndarray = np.empty(0)  # of a probe kept for its numbers alone (`numbers_only`)
# The largest share of a probe's changed outputs left out at kinks that a failure may rest on.
_FAIL_MASKED = 0.25


class EvaluationError(Exception):
    """The layer raised while the engine evaluated it (at a perturbed point, or backward again)."""


@dataclass
class GradientProblem:
    """The arguments of a training-time pass, how to evaluate it and how to differentiate it.

    `evaluate_many({i: value, ...})` returns every output and updated state with each
    argument i replaced by its value, as arrays nothing else refers to (the engine computes in
    them); `gradients(weights)` runs backward with dL/dY = weights
    and returns the gradient
    of every argument (None where the layer returned none). Both raise EvaluationError when
    the layer raises.
    """

    names: list[str]
    kinds: list[str]
    values: list[np.ndarray]
    evaluate_many: Callable[[dict[int, np.ndarray]], list[np.ndarray]]
    gradients: Callable[[list[np.ndarray]], list[np.ndarray | None]]
    domains: list[tuple[float | None, float | None]]
    labels: list[str | None]
    remarks: list[str] = field(default_factory=list)  # how the evaluation had to adapt, in words
    # argument -> the precision of a gradient backward returned coarser than the compute
    # precision (filled as backward runs): its round-off is that precision's, not a wrong value.
    coarse: dict[int, np.dtype] = field(default_factory=dict)
    # The names of what `evaluate_many` returns (outputs, then updated states), for the records.
    outputs: list[str] = field(default_factory=list)
    # The format of each of those where known (an output's declared one; None for a state):
    # which of their axes holds the observations.
    output_labels: list[str | None] = field(default_factory=list)
    # The base point's outputs, as the pass computed them or computed again after
    # `release_base` let them go (EvaluationError if the layer raises then); None: they cannot
    # be let go (`Baseline.release_outputs` keeps them).
    base_outputs: Callable[[], list[np.ndarray]] | None = None
    release_base: Callable[[], None] | None = None
    # The work of one call of the layer here, as a share of a call on the whole problem: a
    # sub-batch's calls cost a fraction of the whole batch's, and the diagnosis's budget of
    # calls charges each for that fraction (`budget.budgeted`).
    share: float = 1.0
    # Each argument's `step_scale`, computed once: `values` is never written into, and the
    # copies `dataclasses.replace` makes (`budgeted`) share it and this with it.
    _scales: dict[int, float] = field(default_factory=dict, repr=False, compare=False)

    def roundoff_terms(self, moved: list[int], squares: list[float], eps: float) -> float:
        """The analytic side's round-off scale |g v| over the moved arguments, from each one's
        sum((g_i v_i)^2), in units of `eps`: a coarser gradient weighs by its own epsilon."""
        weights = [machine_epsilon(self.coarse[i]) / eps if i in self.coarse else 1.0 for i in moved]
        return math.sqrt(sum(sq * w * w for sq, w in zip(squares, weights)))

    def evaluate(self, index: int, value: np.ndarray) -> list[np.ndarray]:
        """Every output and updated state with argument `index` replaced by `value`."""
        return self.evaluate_many({index: value})

    def step_scale(self, index: int) -> float:
        """`step_scale` of argument `index`'s value (a pass over it the first time only)."""
        found = self._scales.get(index)
        if found is None:
            found = self._scales[index] = step_scale(self.values[index])
        return found


@dataclass(kw_only=True)
class Probe:
    """One directional derivative compared: the numeric side from the outputs, the analytic
    side from backward's gradients, the error estimate and the verdict (fields by name: a
    probe has too many numbers to pass by position)."""

    argument: int  # -1 for a joint probe of several arguments
    direction: np.ndarray
    step: float
    numeric: float
    analytic: float
    error_bound: float
    scale: float
    masked: int
    changed: int
    gradients: list[Any]  # backward's gradients for the probe's loss (empty: none compared)
    verdict: Verdict
    reason: Undecided | None = None
    rtol: float = 0.0
    fixed_tolerance: float = math.inf  # atol * |v| + error_bound: independent of the analytic side
    eps: float = 0.0
    # |g * v| for the probe's own gradient g: the analytic side's round-off scale, in units of
    # `eps` (a gradient returned coarser weighs by its own epsilon: GradientProblem.coarse)
    terms: float = 0.0
    curvature: bool = False  # the error estimate is mostly curvature (a smaller step reduces it)
    parts: dict[int, float] = field(default_factory=dict)  # each moved argument's share of `analytic`
    # A joint probe's share of `analytic` of each block it was given (`check_jointly`'s
    # `blocks`: the small blocks of an argument, in their order), as `parts` has each argument's.
    block_parts: dict[int, tuple[float, ...]] = field(default_factory=dict)
    roundoff: float = 0.0  # the round-off part of `error_bound`
    # Passed on its round-off alone, the bound of its curvature left out (`_within_roundoff`):
    # no evidence against a joint probe that failed (`_against_the_joint_failure`).
    within_roundoff: bool = False
    # NON_FINITE: where the outputs went NaN or infinite (None: none that was finite at the
    # drawn inputs did; the error estimate itself overflowed)
    non_finite: NonFiniteMove | None = None
    # A failure at a small step: the same direction at a larger one (`_round_off`), which
    # either showed it too or turned it into round-off.
    retry: Probe | None = None
    # Passed on an agreement at a reduced resolution alone (`element_probe`): right to its
    # `resolution`, not to the full one.
    reduced: bool = False

    def numbers_only(self) -> Probe:
        """This probe without its arrays (its direction and the gradients it compared), every
        number kept: what is held of a probe only its numbers are read from again (a block of a
        localization found right). Its gradients stand as placeholders: whether any were
        compared is kept (`tolerance`)."""
        retry = None if self.retry is None else self.retry.numbers_only()
        return dataclasses.replace(self, direction=_NO_DIRECTION, gradients=[None] * len(self.gradients), retry=retry)

    @property
    def discrepancy(self) -> float:
        return abs(self.analytic - self.numeric)

    @property
    def reason_text(self) -> str:
        """Why it could not decide, in words ("" when it decided)."""
        return "" if self.reason is None else self.reason.describe(self.masked, self.changed)

    @property
    def tolerance(self) -> float:
        return self._tolerance(self.analytic, self.terms) if self.gradients else math.inf

    def _tolerance(self, analytic: float, terms: float) -> float:
        """What |analytic - C| may be: rtol, atol, numeric error and the round-off of an analytic
        side <g, v> whose terms g * v have norm `terms`."""
        return self.rtol * max(abs(analytic), abs(self.numeric)) + self.fixed_tolerance + 64 * self.eps * terms

    @property
    def projection(self) -> float:
        """The projection itself, the larger of its two sides."""
        return max(abs(self.analytic), abs(self.numeric))

    @property
    def resolution(self) -> float:
        """The smallest relative error of the gradient this probe rules out: its error estimate
        against its scale, and its tolerance against the projection itself (a uniform
        relative error moves the projection by that share of it)."""
        projection = self.projection
        return max(self.relative(self.error_bound), self.tolerance / projection if projection > 0 else math.inf)

    def relative(self, value: float) -> float:
        if value == 0:
            return 0.0
        return value / self.scale if self.scale > 0 else math.inf


@dataclass
class Tolerances:
    rtol: float
    atol: float
    precision: np.dtype
    measured_roundoff: float = 0.0  # the layer's round-off relative to its outputs, where measured

    @property
    def eps(self) -> float:
        return machine_epsilon(self.precision)

    @property
    def step(self) -> float:
        return _STEP.get(np.dtype(self.precision), 3e-3)

    @property
    def resolution(self) -> tuple[float, float, float]:
        return _RESOLUTION.get(np.dtype(self.precision), _RESOLUTION[np.dtype(np.float32)])


class Baseline:
    """The unperturbed pass: outputs, loss weights and the analytic gradients for them (backward
    run once, right after the pass, while the layer is at the base point).

    The outputs are the problem's own where it keeps them (`again`: its `base_outputs`), read
    from it each time: it may let them go (`release_outputs`) while the joint probe's pair
    runs, where a passing check needs them no more and the pair's second call then holds one
    output-sized array less at its peak; what asks for them later (kinks, a failure's
    diagnosis) has the base point evaluated again, once."""

    def __init__(
        self,
        outputs: list[Any],
        weights: list[Any],
        gradients: list[Any],
        tol: Tolerances,
        again: Callable[[], list[Any]] | None = None,
        release: Callable[[], None] | None = None,
    ):
        # Held here only where the problem does not keep them.
        self._outputs = outputs if again is None else None
        self.weights, self.gradients = weights, gradients
        self.output_sizes = [int(y.size) for y in outputs]
        self._again, self._release = again, release
        self._tol = tol
        self._spread = [_spread(y, tol) for y in outputs]
        # sum((W r)^2) per output, r its round-off: the round-off of C when all of Y changes
        self.roundoff_sq = [
            tol.eps**2 * float(product_norm_sq(w, y)) if a == 0 else _sq_norm(w * _roundoff(y, tol, a))
            for w, y, a in zip(weights, outputs, self._spread)
        ]

    @property
    def outputs(self) -> list[Any]:
        if self._again is not None:
            return self._again()
        assert self._outputs is not None
        return self._outputs

    def release_outputs(self) -> None:
        """Let the outputs go where the problem keeps them (it evaluates them again when next
        asked); else keep them."""
        if self._release is not None:
            self._release()

    def floor_scale(self, j: int) -> tuple[float, float]:
        """What `kink_floor` scales output j by: the machine epsilon, and the spread (0: none)."""
        return self._tol.eps, self._spread[j]

    def kink_floor(self, j: int, sample: Any = None, out: Any = None) -> Any:
        """64 times output j's round-off (of `sample` of it, a slice or flat indices of the flat
        outputs): second differences below it are round-off. Computed when asked for, into
        `out` where given: one output-sized array less to hold."""
        y = self.outputs[j]
        if sample is not None:
            y = y.reshape(-1)[sample]
        floor = _roundoff(y, self._tol, self._spread[j], out)
        floor *= 64
        return floor


def _sq_norm(a: Any) -> float:
    return float(norm_sq(a))


def make_baseline(
    problem: GradientProblem, outputs: list[np.ndarray], weights: list[np.ndarray], tol: Tolerances
) -> Baseline:
    """The base point: backward runs here, for `weights` (EvaluationError if it raises)."""
    return Baseline(outputs, weights, problem.gradients(weights), tol, problem.base_outputs, problem.release_base)


def _spread(y: Any, tol: Tolerances) -> float:
    """The round-off measured on the layer, relative to the outputs' RMS, where it cancels
    large terms inside (0 where it rounds like a few ulps of each element)."""
    if tol.measured_roundoff <= 16 * tol.eps or y.size == 0:
        return 0.0
    return tol.measured_roundoff * math.sqrt(_sq_norm(y) / y.size)


def _roundoff(y: Any, tol: Tolerances, spread: float = 0.0, out: Any = None) -> Any:
    """The outputs' round-off: a few ulps of each element, or `spread` where that is more."""
    ulps = namespace_of(y).abs(y, out=out)
    ulps *= tol.eps
    return ulps if spread == 0 else namespace_of(y).maximum(ulps, spread, out=ulps)


def random_direction(
    value: np.ndarray, rng: np.random.Generator, support: np.ndarray | None = None, scale: float = 1.0
) -> np.ndarray:
    """Random signs with random magnitudes (`random_moves`), on both parts for complex
    arguments.

    As good as Gaussian directions for a random projection, several times cheaper to draw at
    real sizes, and every element moves by a random share of the step, from half to one and
    a half. Random magnitudes, not signs alone: an error of equal and opposite parts (two
    elements' gradients swapped) projects to zero wherever their moves are equal, in one
    draw of two with signs alone, and a passing probe would clear it.

    `scale`: the direction times `scale` (a move t v), the same values in one pass less.
    """
    if np.dtype(value.dtype).kind == "c":
        v = (random_moves(value, rng) + 1j * random_moves(value, rng)) / np.sqrt(2)
        if scale != 1.0:
            v *= scale
    else:
        v = random_moves(value, rng, scale)
    if support is not None:
        v *= support  # the moves are this call's own: no array more of the argument's size
    chosen: np.ndarray = v
    return chosen


def step_scale(value: np.ndarray) -> float:
    """The argument's typical magnitude: steps are relative to it."""
    rms = math.sqrt(_sq_norm(value) / value.size) if value.size else 0.0
    return rms if rms > 0 and math.isfinite(rms) else 1.0


def keep_inside(
    value: np.ndarray, direction: np.ndarray, t: float, domain: tuple[float | None, float | None]
) -> np.ndarray:
    """Zero the direction where a step of size t would leave the argument's domain."""
    low, high = domain
    if low is None and high is None:
        return direction
    xp = namespace_of(value, direction)
    reach = t * xp.abs(direction)
    inside = xp.ones(value.shape, dtype=bool)
    if low is not None:
        inside &= value.real - reach > low
    if high is not None:
        inside &= value.real + reach < high
    kept: np.ndarray = xp.where(inside, direction, 0)
    return kept


def run_probe(
    problem: GradientProblem,
    base: Baseline,
    index: int,
    direction: np.ndarray,
    t: float,
    tol: Tolerances,
    large_step: bool = False,
    relative: float | None = None,
) -> Probe:
    """One directional-derivative comparison for argument `index`; see the module docstring.
    `large_step`: the step is a large part of the values moved (1e-3 or more), so outputs that
    barely move do so because they barely depend on the argument, not because their change was
    rounded away. `relative`: the step relative to the values moved (the nominal step where
    not given)."""
    return _run_moves(problem, base, {index: direction}, t, tol, large_step, relative)


def _run_moves(
    problem: GradientProblem,
    base: Baseline,
    moves: dict[int, Any],
    t: float,
    tol: Tolerances,
    large_step: bool,
    relative: float | None = None,
) -> Probe:
    """The comparison along a direction with a part `moves[i]` for each argument i moved."""
    steps = {i: t * d for i, d in moves.items()}
    plus = problem.evaluate_many(_displaced(problem, steps, 1))
    minus = list(problem.evaluate_many(_displaced(problem, steps, -1, release=True)))
    deltas, seconds, spares = [], [], []
    for y0, yp, ym in zip(base.outputs, plus, minus):
        deltas.append(yp - ym)
        seconds.append(_second(y0, yp, ym))  # yp is not needed any more
        spares.append(ym)  # nor ym: the kink tests compute in it
    del plus, minus
    # A kink within the step makes d2 comparable to the first difference; the curvature of a
    # smooth function keeps it about t times smaller. A kink whose two slopes nearly agree
    # hides below the first threshold: where kinks were seen and the error estimate is still
    # too large, look again closer, but never as close as a smooth layer's own curvature at
    # this step (about the relative step times the first difference): where round-off made the
    # step larger, that closer look would take every output for a kink.
    h = tol.step if relative is None else relative
    resolved = large_step
    probe = _compare(problem, base, moves, t, tol, deltas, seconds, _kink_share(h), resolved, spares)
    if probe.reason is Undecided.CURVATURE and probe.masked:
        probe = _compare(problem, base, moves, t, tol, deltas, seconds, max(1e-6, 10 * h), resolved, spares)
    return probe


def _kink_share(h: float) -> float:
    """The share of its first difference that an output's second difference must pass to be
    taken for a kink at relative step `h`, at the first look (`_run_moves`): it grows with
    large steps, where a smooth layer's own curvature does."""
    return max(_KINK_SHARE, 30 * h)


def _compare(
    problem: GradientProblem,
    base: Baseline,
    moves: dict[int, Any],
    t: float,
    tol: Tolerances,
    deltas: list[Any],
    seconds: list[Any],
    rho: float,
    resolved: bool,
    spares: list[Any] | None = None,
) -> Probe:
    index, direction = next(iter(moves.items())) if len(moves) == 1 else (-1, next(iter(moves.values())))
    # Kinks as the joint probe finds them: outputs that barely move (a stationary point of a
    # smooth layer) are no kinks, and their second differences are bounded in the error
    # (`stationary`) instead of costing another backward to leave them out.
    # Where kinks are dense, outputs that barely move may sit on kinks too: they are left out
    # as kinks, unless their bound is negligible against the projection.
    scratch = [_scratch(delta, None if spares is None else spares[j]) for j, delta in enumerate(deltas)]
    found = [
        _joint_kinks(delta, second, base, j, rho, w, scratch[j])
        for j, (delta, second, w) in enumerate(zip(deltas, seconds, base.weights))
    ]
    stationary = sum(bound for _, _, bound in found)
    if stationary > 0 and stationary > 0.1 * tol.resolution[0] * abs(_kept_dot(base.weights, deltas, found)):
        found = []
        for j, (delta, second) in enumerate(zip(deltas, seconds)):
            mask = _kinks(delta, second, base, j, rho, scratch[j])
            found.append((mask, int(fetch(_count(mask))[0]), 0.0))
        stationary = 0.0
    del scratch
    kink_masks = [k for k, _, _ in found]
    # Scalars come to the host in one transfer per stage: on a GPU each is a synchronization.
    stage = Scalars()
    stage.add("changed", (_count(d) for d in deltas))
    stage.add("at resolution", (_at_resolution(d, base, j) for j, d in enumerate(deltas)))
    counts = stage.fetch()
    n_kinks, changes = [n for _, n, _ in found], [int(n) for n in counts["changed"]]
    changed, masked = sum(changes), sum(n_kinks)
    at_resolution = sum(n * share for n, share in zip(changes, counts["at resolution"]))
    if changed and masked > 0.5 * changed:
        return _undecided(index, direction, t, Undecided.KINKS, masked, changed)
    if not resolved and changed and at_resolution > 0.1 * changed:
        # The outputs moved by a few of their own ulps: the move is at their resolution, and
        # outputs that did not move at all may have had their change rounded away (so they do
        # not cancel exactly, as the error estimate assumes). A larger step resolves it.
        return _undecided(index, direction, t, Undecided.ROUND_OFF, 0, changed)
    if not resolved and changed == 0 and _swallowed(base, moves, t, tol):
        return _undecided(index, direction, t, Undecided.ROUND_OFF, 0, 0)
    if masked:
        weights = [
            w if n == 0 else namespace_of(w, k).where(k, 0, w) for w, k, n in zip(base.weights, kink_masks, n_kinks)
        ]
        gradients = problem.gradients(weights)
    else:
        weights, gradients = base.weights, base.gradients
    # Round-off of the changed outputs only (unchanged ones cancel exactly); precomputed for
    # the common case where every output changed and no output was masked.
    partial_roundoff = [n != d.size or w is not w0 for w, w0, d, n in zip(weights, base.weights, deltas, changes)]
    moved = list(moves)
    batch = _analytic_sides(gradients, moves, moved)
    batch.add("differences", (dot(w, d) for w, d in zip(weights, deltas)))
    batch.add("seconds", (product_norm_sq(w, s) for w, s in zip(weights, seconds)))
    batch.add(
        "changed",
        (product_norm_sq(w, y0, d != 0) for w, y0, d, p in zip(weights, base.outputs, deltas, partial_roundoff) if p),
    )
    batch.add("any gradient", (namespace_of(gradients[i]).any(gradients[i]) for i in moved))
    got = batch.fetch()
    numeric = sum(got["differences"]) / (2 * t)
    second_error = (_ERROR_FACTOR * math.sqrt(sum(got["seconds"])) + stationary) / (2 * t)
    partial = iter(got["changed"])
    roundoff_sq = sum(next(partial) * tol.eps**2 if p else full for p, full in zip(partial_roundoff, base.roundoff_sq))
    parts = dict(zip(moved, got["parts"]))
    analytic, terms_sq, direction_sq = sum(got["parts"]), sum(got["terms"]), sum(got["direction"])
    roundoff_terms = problem.roundoff_terms(moved, got["terms"], tol.eps)
    any_gradient = any(got["any gradient"])
    roundoff_error = 2 * math.sqrt(roundoff_sq) / (2 * t)
    atol = tol.atol * math.sqrt(direction_sq)  # the absolute tolerance along this direction
    error_bound = second_error + roundoff_error
    if not (math.isfinite(numeric) and math.isfinite(error_bound)):
        probe = _undecided(index, direction, t, Undecided.NON_FINITE)
        probe.non_finite = _non_finite_move(base, moves, t, deltas)
        return probe
    terms = math.sqrt(terms_sq)
    scale = max(terms, abs(numeric), abs(analytic))
    probe = Probe(
        argument=index,
        direction=direction,
        step=t,
        numeric=numeric,
        analytic=analytic,
        error_bound=error_bound,
        scale=scale,
        masked=masked,
        changed=changed,
        gradients=gradients,
        verdict=Verdict.PASS,
        rtol=tol.rtol,
        fixed_tolerance=atol + error_bound,
        eps=tol.eps,
        terms=roundoff_terms,
        curvature=second_error >= 20 * roundoff_error,
        parts=parts,
        roundoff=roundoff_error,
    )
    if not math.isfinite(analytic):
        # The outputs and their finite differences are finite, so the derivative is: a NaN or
        # an infinity in the hand-written gradient is wrong, not undecidable.
        probe.verdict, probe.reason = Verdict.FAIL, Undecided.NON_FINITE_GRADIENT
    elif any(partial_roundoff) and probe.tolerance < probe.discrepancy <= probe.tolerance + 2 * math.sqrt(
        sum(base.roundoff_sq)
    ) / (2 * t):
        # Outputs that did not change may have had their change rounded away (a saturated
        # softmax's output near 1 moves by less than half an ulp while the small ones move),
        # which the round-off of the changed outputs alone leaves out: the failure is within
        # the round-off of every output. A larger step resolves it.
        probe.verdict, probe.reason = Verdict.UNDECIDED, Undecided.ROUND_OFF
    elif probe.discrepancy > probe.tolerance and masked > _FAIL_MASKED * changed:
        # A quarter of the outputs taken for kinks within so small a step is round-off the
        # kink test cannot tell from kinks (a layer that rounds to a staircase): the outputs
        # kept carry the same round-off, which their error estimate leaves out. No failure
        # rests on them; a smaller step leaves fewer real kinks within it.
        probe.verdict, probe.reason = Verdict.UNDECIDED, Undecided.KINKS
    elif probe.discrepancy > probe.tolerance:
        probe.verdict = Verdict.FAIL
    elif not any_gradient and second_error < 20 * roundoff_error:
        # An exactly zero gradient, and outputs that move only by round-off: the argument has
        # no first-order effect the precision can show, which is what zero claims.
        probe.verdict = Verdict.PASS
    elif scale > 0 and error_bound > tol.resolution[0] * scale:
        probe.verdict = Verdict.UNDECIDED
        probe.reason = Undecided.ROUND_OFF if second_error < 20 * roundoff_error else Undecided.CURVATURE
    elif any_gradient and probe.tolerance > tol.resolution[2] * probe.projection:
        probe.verdict, probe.reason = Verdict.UNDECIDED, Undecided.SMALL_PROJECTION
    if probe.verdict is Verdict.UNDECIDED and probe.curvature and not masked and tol.eps <= _FLOAT64_EPS:
        return _within_roundoff(probe, tol, roundoff_error + stationary / (2 * t), atol) or probe
    return probe


def _within_roundoff(probe: Probe, tol: Tolerances, bound: float, atol: float) -> Probe | None:
    """An undecided probe whose error estimate is mostly curvature, passed on its round-off
    alone where the two sides agree decisively within that (None where they do not).

    The second differences stand for the truncation error of the central difference: about t
    times the layer's curvature, where the truncation itself is t^2 D3 / 6, many times smaller
    on a smooth layer; at float64's step (1e-7 of the values) far below the resolution, unless
    the layer bends within the step (kinks: nothing passes here then). Not at float32's step
    (3e-3), where a steep layer's truncation reaches float32's resolution. Two sides that
    agree within the round-off alone agree within any wider bound; a wrong gradient would have
    to cancel the truncation's share to that tolerance, as it would a kink's to pass the joint
    probe (`check_jointly`): another direction and a smaller step (two forward calls more) are
    not needed to show it. No failure is decided on this bound, no probe with outputs left out
    at kinks is passed on it, and such a pass rules out nothing a failed joint probe showed
    (`Probe.within_roundoff`)."""
    narrow = dataclasses.replace(
        probe,
        verdict=Verdict.PASS,
        reason=None,
        error_bound=bound,
        fixed_tolerance=atol + bound,
        curvature=False,
        within_roundoff=True,
    )
    decisive = narrow.relative(bound) <= tol.resolution[0] and narrow.tolerance <= tol.resolution[2] * narrow.projection
    return narrow if decisive and narrow.discrepancy <= narrow.tolerance else None


def _kept_dot(weights: list[Any], deltas: list[Any], found: list[tuple[Any, int, float]]) -> float:
    """sum(W * delta) over the outputs that are not kinks (the kinks, few, taken out)."""
    dots = []
    for w, d, (mask, n, _) in zip(weights, deltas, found):
        dots.append(dot(w, d))
        if n:
            at = _flat_nonzero(mask)
            dots.append(-dot(w.reshape(-1)[at], d.reshape(-1)[at]))
    return float(sum(fetch(*dots)))


def _at_resolution(delta: Any, base: Baseline, j: int) -> Any:
    """The share of the changed outputs that moved by a few ulps only, from a sample of them."""
    xp = namespace_of(delta)
    sample = slice(None, None, max(1, delta.size // 65536))
    d = delta.reshape(-1)[sample]
    moved = d != 0
    return xp.count_nonzero(moved & (xp.abs(d) <= base.kink_floor(j, sample))) / xp.maximum(xp.count_nonzero(moved), 1)


def _swallowed(base: Baseline, moves: dict[int, Any], t: float, tol: Tolerances) -> bool:
    """No output moved: could the analytic change 2t<g, v> hide in the outputs' rounding (at
    most an ulp each, weighted by the loss)? If not, no output depends on the move."""
    if any(base.gradients[i] is None for i in moves):
        return False
    analytic = sum(fetch(*(dot(base.gradients[i], d) for i, d in moves.items())))
    hidden = fetch(*(namespace_of(w, y).abs(w * y).sum() for w, y in zip(base.weights, base.outputs)))
    return bool(abs(2 * t * analytic) <= 4 * tol.eps * sum(hidden))


_STATIONARY = 1e-3  # first differences below this share of their RMS: outputs that barely move


def _kinks(delta: Any, second: Any, base: Baseline, j: int, rho: float, scratch: tuple[Any, Any] | None = None) -> Any:
    """Outputs whose second difference is not small against their first: a non-differentiable
    point within the step (|second| > floor + rho |delta|, the floor output j's round-off).
    `scratch`: two arrays of the outputs' shape and real dtype to compute in, whose values
    are not needed any more (else two are made)."""
    y = base.outputs[j]
    if namespace_of(delta, second) is np and _in_chunks(y, delta, second):
        return _host_kinks(y, delta, second, base.floor_scale(j), rho)
    low, high = _scratch(delta) if scratch is None else scratch
    return _kink_test(y, delta, second, base.floor_scale(j), rho, low, high)


def _kink_test(
    y: Any, delta: Any, second: Any, floor: tuple[float, float], rho: float, low: Any, high: Any, out: Any = None
) -> Any:
    """|second| > 64 round-off(y) + rho |delta| (the round-off a few ulps of each element, or
    the spread: `floor`, `Baseline.floor_scale`), computed in `low` and `high`, arrays of the
    operands' shape and real dtype whose values are overwritten; into `out` where given."""
    xp = namespace_of(delta, second)
    eps, spread = floor
    xp.abs(y, out=low)
    low *= eps
    if spread:
        xp.maximum(low, spread, out=low)
    low *= 64
    xp.abs(delta, out=high)
    high *= rho
    low += high
    xp.abs(second, out=high)
    return xp.greater(high, low, out=out)


def _in_chunks(*arrays: Any) -> bool:
    """Whether the kink test can run over these host arrays in chunks: large, of one shape and
    one real dtype, each C-contiguous (a flat view of each, no copy)."""
    first = arrays[0]
    return (
        first.size > _CHUNKED_FROM
        and np.dtype(first.dtype).kind == "f"
        and all(type(a) is np.ndarray and a.flags.c_contiguous for a in arrays)
        and all(a.shape == first.shape and a.dtype == first.dtype for a in arrays)
    )


_CHUNKED_FROM = 1 << 16  # elements: below, the passes over whole arrays cost as little


def _host_kinks(y: Any, delta: Any, second: Any, floor: tuple[float, float], rho: float) -> Any:
    """`_kinks` on the host in chunks: the same operations, element by element, on slices
    whose temporaries stay in the cache (several times faster at real sizes than passes over
    whole arrays, and no output-sized array made but the mask). `floor`: `floor_scale`.

    Kinks are few: each chunk is first screened by |second| > rho |delta|, which every kink
    passes (the floor added to rho |delta| is not negative, and a rounded sum of it is no
    smaller), in half the operations of the test; the test itself then runs on the outputs
    screened in, the same operations on each, so the mask is the one the test gives alone."""
    kinks = np.empty(delta.shape, dtype=bool)
    flat_y, flat_delta, flat_second, flat_kinks = (a.reshape(-1) for a in (y, delta, second, kinks))
    parts = list(chunks(delta.size))
    low = np.empty(parts[0].stop, delta.dtype)  # the first chunk is the widest
    high = np.empty_like(low)
    for part in parts:
        n = part.stop - part.start
        screened = np.greater(
            np.abs(flat_second[part], out=high[:n]),
            np.multiply(np.abs(flat_delta[part], out=low[:n]), rho, out=low[:n]),
            out=flat_kinks[part],
        )
        count = int(np.count_nonzero(screened))
        if count > n // _SCREEN_SHARE:
            _kink_test(flat_y[part], flat_delta[part], flat_second[part], floor, rho, low[:n], high[:n], screened)
        elif count:
            at = np.flatnonzero(screened)
            scratch = np.empty(count, delta.dtype), np.empty(count, delta.dtype)
            values = (flat_y[part][at], flat_delta[part][at], flat_second[part][at])
            screened[at] = _kink_test(*values, floor, rho, *scratch)
    return kinks


_SCREEN_SHARE = 16  # past one output in this many screened in, the test runs on the whole chunk


def _scratch(like: Any, spare: Any = None) -> tuple[Any, Any]:
    """Two arrays to compute kink masks in: `spare` (an array whose values are not needed any
    more, of `like`'s shape and real dtype) and a new one, or two new ones."""
    xp = namespace_of(like)
    real = np.dtype(like.dtype).kind == "f"
    dtype = like.dtype if real else precision_of(like.dtype)
    fits = spare is not None and spare.shape == like.shape and spare.dtype == dtype
    fits = fits and getattr(spare.flags, "writeable", True)
    return (spare if fits else xp.empty(like.shape, dtype)), xp.empty(like.shape, dtype)


def _joint_kinks(
    delta: Any, difference: Any, base: Baseline, j: int, rho: float, w: Any, scratch: tuple[Any, Any] | None = None
) -> tuple[Any, int, float]:
    """The kinks of a joint probe, how many, and what the outputs that barely move may add to
    its error.

    Moving several arguments at once makes an output whose first difference nearly vanishes
    carry the products of the moves in its higher differences (a slope times a threshold):
    taken for kinks, they would cost a backward to leave out. Such outputs (first difference
    below a thousandth of the typical one, higher difference below rho times that) are kept,
    and the error bound takes what they could contribute at most: a kink within the step
    moves the central difference by exactly the second difference / 2t, so |w| |difference|
    summed (to be divided by 2t). Kinks are few: only the outputs flagged are looked at again."""
    xp = namespace_of(delta, difference, w)
    kinks = _kinks(delta, difference, base, j, rho, scratch)
    (flagged,) = fetch(_count(kinks))
    if not flagged:
        return kinks, 0, 0.0
    at = _flat_nonzero(kinks)
    typical = _STATIONARY * xp.sqrt(norm_sq(delta) / delta.size)
    size = xp.abs(difference.reshape(-1)[at])
    moving = size > rho * xp.maximum(xp.abs(delta.reshape(-1)[at]), typical) + base.kink_floor(j, at)
    _put_flat(kinks, at, moving)
    count, bound = fetch(_count(moving), dot(xp.abs(w.reshape(-1)[at]), xp.where(moving, 0, size)))
    return kinks, int(count), float(bound)


def _flat_nonzero(mask: Any) -> Any:
    """The flat indices of a mask's true elements: of a large array, twenty times faster than
    `nonzero`'s index per axis (kinks are few, the mask is of every output)."""
    return namespace_of(mask).flatnonzero(mask)


def _put_flat(mask: Any, at: Any, values: Any) -> None:
    """mask[at] = values at flat indices (a mask takes its layout from the outputs it was
    computed from, which a layer may return in Fortran order: no flat view of it then)."""
    if mask.flags.c_contiguous:
        mask.reshape(-1)[at] = values
    else:
        mask[namespace_of(mask).unravel_index(at, mask.shape)] = values


def _non_finite_move(base: Baseline, moves: dict[int, Any], t: float, deltas: list[Any]) -> NonFiniteMove | None:
    """Where the outputs went NaN or infinite at x + t v or x - t v (their difference is then
    not finite) although they were finite at the drawn inputs x. Only on the way to an
    undecided probe: its cost does not matter."""
    outputs = []
    for j, (y0, delta) in enumerate(zip(base.outputs, deltas)):
        xp = namespace_of(delta)
        went = xp.logical_and(xp.logical_not(xp.isfinite(delta)), xp.isfinite(y0)).reshape(-1)
        count, first = fetch(_count(went), xp.argmax(went))
        if count:
            at = tuple(int(i) for i in np.unravel_index(int(first), tuple(delta.shape)))
            outputs.append(NonFiniteOutput(j, int(count), int(delta.size), at))
    if not outputs:
        return None
    element, imaginary = None, False
    if len(moves) == 1:
        (direction,) = moves.values()
        xp = namespace_of(direction)
        flat = direction.reshape(-1)
        count, where = fetch(_count(flat), xp.argmax(xp.abs(flat)))
        if count == 1:  # an element probe: a one-hot direction (1, or 1j for the imaginary part)
            element = tuple(int(i) for i in np.unravel_index(int(where), tuple(direction.shape)))
            (real,) = fetch(xp.real(flat[int(where)]) != 0)
            imaginary = not real
    return NonFiniteMove(tuple(moves), t, element, imaginary, tuple(outputs))


def _count(mask: Any) -> Any:
    return namespace_of(mask).count_nonzero(mask)


def _undecided(index: int, direction: Any, t: float, reason: Undecided, masked: int = 0, changed: int = 0) -> Probe:
    return Probe(
        argument=index,
        direction=direction,
        step=t,
        numeric=math.nan,
        analytic=math.nan,
        error_bound=math.inf,
        scale=0.0,
        masked=masked,
        changed=changed,
        gradients=[],
        verdict=Verdict.UNDECIDED,
        reason=reason,
    )


@dataclass
class ArgumentVerdict:
    """The outcome for one argument, with every probe that led to it; `reason` is the prose
    of the records (nothing branches on it)."""

    index: int
    status: Status
    probes: list[Probe]
    reason: str = ""
    cause: Cause | None = None  # the layer ran out of memory or called sys.exit
    # Undecided because one probe failed and another passed: an error in a part of the
    # argument too small for every whole-argument projection to show (a small block).
    disagreed: bool = False
    # Passed at a reduced resolution: the agreeing probe of the finest `resolution`, coarser
    # than the full one (`_agrees_at_reduced_resolution`).
    reduced: Probe | None = None

    @property
    def reduced_resolution(self) -> float:
        """The reduced resolution a pass rests on (0: decided at the full one, or no pass)."""
        return self.reduced.resolution if self.status is Status.PASSED and self.reduced is not None else 0.0


def reduced_resolution_of(probes: Sequence[Probe]) -> float:
    """The coarsest resolution of the probes passed on an agreement at a reduced resolution
    alone (`element_probe`; 0: none was)."""
    return max((p.resolution for p in probes if p.reduced), default=0.0)


def check_jointly(
    problem: GradientProblem,
    base: Baseline,
    indices: list[int],
    tol: Tolerances,
    rng: np.random.Generator,
    blocks: Mapping[int, Sequence[Any]] | None = None,
) -> tuple[Probe | None, set[int]]:
    """One probe that moves every argument in `indices` at once, each by a step of its own
    size, and the arguments its pass clears (the probe with verdict FAIL and nothing cleared
    where it fails with an error estimate at the full resolution; None where it decides nothing).

    The error of the central difference is estimated from the third difference of the outputs
    at -t, 0, t and 2t, not from their second differences: moving several arguments together
    makes those carry their products (a slope times a threshold), which central differences
    take exactly, and so does the third difference. Three forward calls, however many
    arguments, and backward only if kinks within the step must be left out of the loss; two
    where the pair at -t and t has no kink and agrees within a tolerance that leaves the
    truncation error out (the third call would only widen it: a pass the floor's cost). An
    argument is cleared when its share of the projection is large enough that a relative
    error above the resolution in it alone would have failed the probe (the rule a
    single-argument pass obeys). Too many kinks, a failure or anything undecided clear
    nothing: `check_argument` decides then, and says which argument is wrong. `blocks`: masks
    of parts of arguments (their small blocks) whose own shares of the projection the probe
    records (`Probe.block_parts`), for the caller to judge what it resolved in them.
    """
    replay = _replica(rng)  # the directions are drawn again after backward: memory

    t = tol.step
    rho = max(1e-3, 30 * tol.step)

    def draw(rng: np.random.Generator) -> dict[int, Any]:
        """Each argument's move t * v, its step relative to its own size."""
        moves = {}
        for i in indices:
            value, step = problem.values[i], t * problem.step_scale(i)
            # Drawn scaled (a pass less): a step of 1 in the move is t * scale in the direction.
            moves[i] = keep_inside(value, random_direction(value, rng, scale=step), 1.0, problem.domains[i])
        return moves

    moves = draw(rng)
    moved = list(indices)
    # The analytic side with backward at the base point: taken while the directions are at
    # hand (they are drawn again only if kinks ask for another backward).
    sides = _analytic_sides(base.gradients, moves, moved)
    block_parts = _block_parts(base.gradients, moves, blocks or {}, t)
    # The pass decides from the differences alone: large base outputs are let go while the
    # pair runs (the peak of the check is the pair's second call), evaluated again only where
    # kinks, small blocks or a failure ask for them: a call more there, for a copy less here.
    if sum(int(y.nbytes) for y in base.outputs) >= _RELEASE_BYTES:
        base.release_outputs()
    pair = _joint_pair(problem, moves)
    changed = sum(int(n) for n in fetch(*(_count(d) for d in pair.deltas)))
    if changed == 0:
        return None, set()
    # The passing path at its floor: where the central difference alone agrees, within a
    # tolerance that leaves out its truncation error and any kink (a third evaluation or a
    # kink mask could only widen it), nothing more is computed. A kink within the step moves
    # the central difference by a second difference of the layer's own, which a wrong
    # gradient's error would have to cancel to the tolerance to pass: the kinks are looked
    # for only where the pair disagrees, to leave them out before deciding. (A one-sided
    # difference from the base point's outputs would save an evaluation, but moving several
    # arguments at once makes their products, x times a weight, a truncation error of order
    # t that only the central difference cancels.)
    dots = [dot(w, d) for w, d in zip(base.weights, pair.deltas)]
    early = _joint_probe(problem, base, tol, moved, t, sides, dots, None, base.gradients, 0, changed, 0.0, block_parts)
    if early is not None and early[0].verdict is Verdict.PASS:
        return early
    second = _pair_kinks(pair, base, rho)
    kinks, n_kinks, stationary = second.kinks, second.counts, second.stationary
    masked = sum(n_kinks)
    if masked > 0.5 * changed:
        return None, set()
    if not masked and stationary:
        # What the outputs that barely move may add, now bounded: the same decision, its
        # tolerance that much wider (with no kink, the third evaluation would only add its
        # truncation error).
        early = _joint_probe(
            problem, base, tol, moved, t, sides, dots, None, base.gradients, 0, changed, stationary, block_parts
        )
        if early is not None and early[0].verdict is Verdict.PASS:
            return early
    if second.second_squares is not None:
        # No kink: a failure beyond the second differences' bound (a probe of one argument's,
        # wider than the third difference's wherever the layer is smooth) is one at any bound
        # the third call could give. The failing path is spared that call; a pass still needs
        # it, its bound being the tighter one.
        failed = _joint_probe(
            problem,
            base,
            tol,
            moved,
            t,
            sides,
            dots,
            None,
            base.gradients,
            0,
            changed,
            stationary,
            block_parts,
            second_squares=second.second_squares,
        )
        if failed is not None:
            return failed
    # The pair let go of the moves once both points were made (memory): drawn again.
    thirds = _joint_far(problem, base, draw(_replica(replay)), pair, kinks, n_kinks, rho)
    deltas = pair.deltas
    del pair
    masked = sum(n_kinks)
    if masked > 0.5 * changed:
        return None, set()
    # The kinks are left out of the loss by zeroing its weights there, in place (the weights
    # backward is given are copies), and put back after backward: memory.
    kept = [w[k] if n else None for w, k, n in zip(base.weights, kinks, n_kinks)]
    try:
        for w, k, n in zip(base.weights, kinks, n_kinks):
            if n:
                w[k] = 0
        narrow_dots = [dot(w, d) for w, d in zip(base.weights, deltas)]
        del deltas  # before backward runs again: memory
        gradients = problem.gradients(base.weights) if masked else base.gradients
    finally:
        for w, k, v in zip(base.weights, kinks, kept):
            if v is not None:
                w[k] = v
    del kinks, kept
    if any(gradients[i] is None for i in moved):
        return None, set()
    if masked:
        moves = draw(replay)
        sides = _analytic_sides(gradients, moves, moved)
        block_parts = _block_parts(gradients, moves, blocks or {}, t)
        del moves
    found = _joint_probe(
        problem,
        base,
        tol,
        moved,
        t,
        sides,
        narrow_dots,
        thirds,
        gradients,
        masked,
        changed,
        stationary,
        block_parts,
    )
    return found or (None, set())


def _replica(rng: np.random.Generator) -> np.random.Generator:
    """A generator that draws what `rng` draws next (a fourth of `copy.deepcopy`'s cost)."""
    bits = type(rng.bit_generator)()
    bits.state = rng.bit_generator.state
    return np.random.Generator(bits)


def _joint_probe(
    problem: GradientProblem,
    base: Baseline,
    tol: Tolerances,
    moved: list[int],
    t: float,
    sides: Scalars,
    difference_dots: list[Any],
    thirds: _Thirds | None,
    gradients: list[Any],
    masked: int,
    changed: int,
    stationary: float,
    block_parts: Mapping[int, tuple[float, ...]],
    second_squares: Sequence[Any] | None = None,
) -> tuple[Probe, set[int]] | None:
    """The joint probe decided from its analytic sides and weighted differences (`thirds`
    None: the central difference alone, its truncation error left out), and the arguments it
    clears; None where it decides nothing. `second_squares` (with `thirds` None): each
    output's sum((W d2)^2), whose bound of the error decides a failure alone (None else)."""
    sides.add("differences", difference_dots)
    if thirds is not None:
        sides.add("thirds", thirds.dots)
        sides.add("third squares", thirds.squares)
    elif second_squares is not None:
        sides.add("second squares", second_squares)
    got = sides.fetch()
    # The central difference's truncation error is t^2 D3 / 6, weighted: sum(W T) / 6t.
    # Twice that is the bound, with what the outputs that barely move could add.
    numeric = sum(got["differences"]) / (2 * t)
    truncation = (0.0 if thirds is None else abs(sum(got["thirds"])) / (3 * t)) + stationary / (2 * t)
    if thirds is not None:
        # And the layer's own round-off, as the four points show it: sum(W T) is one draw of
        # it, and may come out small by chance (a layer that cancels large terms inside would
        # then fail on its own noise). Noise of variance s^2 per output and point gives T a
        # variance of 20 s^2, and the central difference an error of sqrt(2 sum(W^2 s^2)) / 2t:
        # bounded at _ERROR_FACTOR times that, from sum((W T)^2) / 20, over every output.
        truncation += _ERROR_FACTOR * math.sqrt(sum(got["third squares"]) / 10) / (2 * t)
    elif second_squares is not None:
        # A probe of one argument's bound: curvature and the layer's own round-off as the
        # second differences show them (noise of variance s^2 per output and point gives d2
        # a variance of 6 s^2, against the 20 s^2 / 10 the third difference's bound takes:
        # this bound is the wider on noise too).
        truncation += _ERROR_FACTOR * math.sqrt(sum(got["second squares"])) / (2 * t)
    parts = {i: part / t for i, part in zip(moved, got["parts"])}  # the moves were t v
    analytic = sum(parts.values())
    terms = math.sqrt(sum(got["terms"])) / t
    roundoff_terms = problem.roundoff_terms(moved, got["terms"], tol.eps) / t
    direction_norm = math.sqrt(sum(got["direction"])) / t
    roundoff = 2 * math.sqrt(sum(base.roundoff_sq)) / (2 * t)
    error_bound = roundoff + truncation
    if not all(math.isfinite(x) for x in (numeric, analytic, error_bound)):
        return None
    probe = Probe(
        argument=-1,
        direction=namespace_of(base.weights[0]).zeros(0),  # no one direction: several arguments moved
        step=t,
        numeric=numeric,
        analytic=analytic,
        error_bound=error_bound,
        scale=max(terms, abs(numeric), abs(analytic)),
        masked=masked,
        changed=changed,
        gradients=gradients,
        verdict=Verdict.PASS,
        rtol=tol.rtol,
        fixed_tolerance=tol.atol * direction_norm + error_bound,
        eps=tol.eps,
        terms=roundoff_terms,
        parts=parts,
        block_parts=dict(block_parts),
        roundoff=roundoff,
    )
    if error_bound > tol.resolution[0] * probe.scale:
        return None
    if probe.discrepancy > probe.tolerance:
        # A failure whose numeric side is known to the full resolution: some argument is wrong
        # (which, the arguments' own probes say), and the outputs followed the moves smoothly
        # (at three points or four), as a layer that rounds to a coarser precision inside, or
        # whose outputs differ from call to call, does not.
        probe.verdict = Verdict.FAIL
        return probe, set()
    if second_squares is not None:
        return None  # a pass within the wider bound: the third difference's decides
    cleared = {i for i, part in parts.items() if probe.tolerance <= tol.resolution[2] * abs(part)}
    return probe, cleared


@dataclass
class _Pair:
    """The evaluations of a joint probe at +t and -t, reduced: each output's first difference
    yp - ym, and ym (yp is ym + delta: one output-sized array less held). `_pair_kinks` turns
    each ym into y0 + 2 d2 + delta, for the third difference, once it has read the kinks."""

    deltas: list[Any]
    minus: list[Any]


def _joint_pair(problem: GradientProblem, moves: dict[int, Any]) -> _Pair:
    """The pair of evaluations at +t and -t. Both points are made first and `moves` emptied
    (the -t point written into them): the moves are not held while the layer runs."""
    points = [_displaced(problem, moves, 1), _displaced(problem, moves, -1, release=True)]
    plus = list[Any](problem.evaluate_many(points.pop(0)))
    minus = list[Any](problem.evaluate_many(points.pop(0)))
    deltas = []
    for j in range(len(plus)):
        # The outputs are the engine's own (`evaluate_many`): yp - ym is written into yp, which
        # is ym + delta (no array more, and none more held).
        deltas.append(namespace_of(plus[j]).subtract(plus[j], minus[j], out=plus[j]))
        plus[j] = None
    return _Pair(deltas, minus)


@dataclass
class _PairKinks:
    """What the pair's second differences show: each output's kinks and how many, what the
    outputs that barely move may add to the error, and sum((W d2)^2) of each output (None
    where kinks were found: their second differences are no bound of the error then)."""

    kinks: list[Any]
    counts: list[int]
    stationary: float
    second_squares: list[Any] | None


def _pair_kinks(pair: _Pair, base: Baseline, rho: float) -> _PairKinks:
    """The kinks of the pair's outputs, from their second differences d2 = yp + ym - 2 y0 =
    delta + 2 (ym - y0); each `pair.minus[j]` becomes y0 + 2 d2 + delta (the third
    difference's rest)."""
    found = _PairKinks([], [], 0.0, [])
    for j, (y0, delta, w) in enumerate(zip(base.outputs, pair.deltas, base.weights)):
        xp = namespace_of(y0, delta)
        second = xp.subtract(pair.minus[j], y0, out=pair.minus[j])
        second *= 2
        second += delta
        kink, count, bound = _joint_kinks(delta, second, base, j, rho, w)
        found.kinks.append(kink)
        found.counts.append(count)
        found.stationary += bound
        if count or found.second_squares is None:
            found.second_squares = None
        else:
            found.second_squares.append(product_norm_sq(w, second))
        second *= 2
        second += delta
        second += y0
        del kink
    return found


def _joint_far(
    problem: GradientProblem,
    base: Baseline,
    moves: dict[int, Any],
    pair: _Pair,
    kinks: list[Any],
    n_kinks: list[int],
    rho: float,
) -> _Thirds:
    """The third evaluation of a joint probe, at +2t (`moves` doubled in place), reduced to the
    weighted third difference T = y(2t) - 3 y(t) + 3 y0 - y(-t) = t^3 D3 (left on the device);
    the kinks it shows within (t, 2t) are added to the pair's (`kinks`, `n_kinks`, in place)."""
    for move in moves.values():
        move *= 2
    far = problem.evaluate_many(_displaced(problem, moves, 1, release=True))
    thirds = _Thirds([], [])
    rest = pair.minus
    y2 = third = kink = None
    for j, (y2, w) in enumerate(zip(far, base.weights)):
        third = namespace_of(y2).subtract(y2, rest[j], out=y2)
        spare, rest[j] = rest[j], None
        # A kink within (t, 2t) does not touch the central difference: the outputs that
        # barely move are kept in the third difference, and add nothing more to the bound.
        kink, count, _ = _joint_kinks(pair.deltas[j], third, base, j, rho, w, _scratch(third, spare))
        del spare
        if count:
            kinks[j] |= kink
            n_kinks[j] = int(fetch(_count(kinks[j]))[0])
        weights = namespace_of(w, third).where(kinks[j], 0, w) if n_kinks[j] else w
        thirds.dots.append(dot(weights, third))
        thirds.squares.append(product_norm_sq(weights, third))
        del weights
    del far, y2, third, kink
    return thirds


@dataclass
class _Thirds:
    """A joint probe's weighted third differences, per output: sum(W T), left on the device,
    and sum((W T)^2)."""

    dots: list[Any]
    squares: list[Any]


def _block_parts(
    gradients: list[Any], moves: dict[int, Any], blocks: Mapping[int, Sequence[Any]], t: float
) -> dict[int, tuple[float, ...]]:
    """Each block's share of the analytic side, <g, v> over the block (the moves were t v)."""
    found = {}
    for i, masks in blocks.items():
        g = gradients[i]
        if i in moves and g is not None and masks:
            shares = fetch(*(dot(g[mask], moves[i][mask]) for mask in masks))
            found[i] = tuple(float(share) / t for share in shares)
    return found


def _analytic_sides(gradients: list[Any], moves: dict[int, Any], moved: list[int]) -> Scalars:
    """For each moved argument <g, v> ("parts"), |g * v|^2 ("terms") and |v|^2 ("direction"),
    left on the device until fetched."""
    found = [dot_and_norms(gradients[i], moves[i]) for i in moved]  # one pass over each
    sides = Scalars()
    sides.add("parts", (parts for parts, _, _ in found))
    sides.add("terms", (terms for _, terms, _ in found))
    sides.add("direction", (direction for _, _, direction in found))
    return sides


def _displaced(problem: GradientProblem, moves: dict[int, Any], sign: int, release: bool = False) -> dict[int, Any]:
    """{i: values[i] + sign * moves[i]}; with `release`, each move is taken out of `moves` as
    soon as it is used (memory: the last evaluation needs them no more)."""
    points = {}
    for i in list(moves):
        move = moves.pop(i) if release else moves[i]
        # A released move is the engine's alone: the point is written into it.
        points[i] = displaced(problem.values[i], move, sign, into_move=release)
    return points


def _second(y0: Any, yp: Any, ym: Any) -> Any:
    """yp + ym - 2 y0, written into yp (not needed any more)."""
    second = namespace_of(y0, yp, ym).add(yp, ym, out=yp)
    second -= y0
    second -= y0
    return second


def check_argument(
    problem: GradientProblem,
    base: Baseline,
    index: int,
    tol: Tolerances,
    rng: np.random.Generator,
    max_probes: int = _MAX_PROBES,
    support: Any = None,
    passes_needed: int = 1,
    fails_needed: int = 2,
) -> ArgumentVerdict:
    """Probe one argument (or the part of it where the mask `support` is true) until two probes
    fail, one passes decisively, or the budget runs out.

    Steps adapt: smaller after kinks or curvature, larger after round-off, and every probe
    draws a new random direction. A failure needs `fails_needed` failing probes (two: one is
    never enough to fail a layer), a pass `passes_needed` decisive passes. The step is relative to
    the values probed, so a block of small values is moved by a step of its own size. A failure
    at a step far below the nominal one counts only where a larger step shows it too
    (`_round_off`).
    """
    value = problem.values[index]
    scale = problem.step_scale(index) if support is None else step_scale(value[support])
    h = tol.step
    probes: list[Probe] = []
    fails = passes = 0
    # Set where a retry showed outputs taken for kinks to be round-off (`_kinks_vanished`):
    # then no probe with as many outputs left out at kinks passes, or speaks for a reduced
    # resolution.
    rounding = False
    for _ in range(max_probes):
        t = h * scale
        direction = keep_inside(value, random_direction(value, rng, support), t, problem.domains[index])
        if not bool(namespace_of(direction).any(direction)):
            return ArgumentVerdict(index, Status.INCOMPLETE, probes, "every element sits at the edge of its domain")
        try:
            probe = run_probe(problem, base, index, direction, t, tol, large_step=h >= _LARGE_STEP, relative=h)
        except EvaluationError as exc:
            return ArgumentVerdict(index, Status.INCOMPLETE, probes, str(exc), cause_of(exc))
        vanished = False
        if _doubtful(probe, tol, h):
            probe = _round_off(problem, base, index, probe, tol, h)
            vanished = _kinks_vanished(probe, h)
            rounding = rounding or vanished
        elif rounding and probe.verdict is Verdict.PASS and probe.masked > _KINKED * probe.changed:
            # As many outputs taken for kinks as in a failure shown to rest on round-off: the
            # outputs kept beside them carry as much outside the estimate, and a pass on them
            # would clear an error the failure did not rule out.
            probe = dataclasses.replace(probe, verdict=Verdict.UNDECIDED, reason=Undecided.KINKS)
        probes.append(probe)
        if vanished:
            # Round-off taken for kinks, or bends at the scale of the step (a ripple): a larger
            # step averages the second away, a smaller one makes the first worse. Another
            # direction at this step: a real error fails its retry too.
            continue
        if probe.verdict is Verdict.PASS:
            if fails:
                reason = "probes disagree: one failed and another passed"
                return ArgumentVerdict(index, Status.INCOMPLETE, probes, reason, disagreed=True)
            passes += 1
            if passes >= passes_needed:
                return ArgumentVerdict(index, Status.PASSED, probes)
            continue
        if probe.verdict is Verdict.FAIL:
            fails += 1
            if fails == fails_needed:
                return ArgumentVerdict(index, Status.FAILED, probes)
            h /= 4
        elif probe.reason is Undecided.ROUND_OFF:
            # Round-off error falls as 1/step: jump to the step that brings it well under the
            # resolution, that of the projection too (outputs nearly constant against their
            # size need large steps).
            finest = min(tol.resolution[0], tol.resolution[2])
            wanted = 4 * probe.error_bound / (finest * probe.scale) if probe.scale > 0 else 100.0
            h = min(h * min(max(wanted, 10.0), 1e4), _MAX_STEP)
        elif probe.reason is Undecided.SMALL_PROJECTION and not probe.curvature and probe.roundoff > 0:
            # The projection is small against an error that is round-off: a larger step
            # shrinks that error (another direction would not, on a block of a few elements).
            h = min(h * 10, _MAX_STEP)
        elif probe.reason is not Undecided.SMALL_PROJECTION or probe.curvature:
            h /= 10
    agreeing = [
        p
        for p in probes
        if p.verdict is Verdict.UNDECIDED
        and _agrees_at_reduced_resolution(p, tol)
        and not (rounding and p.masked > _KINKED * p.changed)
    ]
    if agreeing and not fails and passes_needed == 1:
        best = min(agreeing, key=lambda p: p.resolution)
        reason = f"agreement at a reduced resolution of {resolution_text(best.resolution)}"
        return ArgumentVerdict(index, Status.PASSED, probes, reason, reduced=best)
    return ArgumentVerdict(index, Status.INCOMPLETE, probes, _reasons(probes) or "no probe was decisive")


def _doubtful(probe: Probe, tol: Tolerances, h: float) -> bool:
    """Whether a failure may rest on round-off its estimate leaves out, and is tried again at
    a larger step (`_round_off`): at a step far below the nominal one, or by a slight share
    of its scale (a gross error is no round-off) with many outputs taken for kinks
    (`_KINKED`: round-off may have been taken for them, and the outputs kept beside them
    carry as much outside the estimate)."""
    if probe.verdict is not Verdict.FAIL:
        return False
    if h * _SMALL_STEP < tol.step:
        return True
    slight = probe.relative(probe.discrepancy) < _SLIGHT
    return slight and _kinks_comparable(h) and probe.masked > _KINKED * probe.changed


def _kinks_comparable(h: float) -> bool:
    """Whether a probe at relative step `h` and its retry at `_RETRY` times it take outputs
    for kinks by the same share of their first differences (`_kink_share`), so that kinks
    that vanish at the retry were no kinks: float64's steps, not float32's (3e-3, whose retry
    takes only second differences above 1.4 times the first for kinks: none, on a ReLU)."""
    return _kink_share(h * _RETRY) == _kink_share(h)


def _kinks_vanished(probe: Probe, h: float) -> bool:
    """Whether half or more of the outputs `probe` took for kinks do not bend at its retry
    (`_round_off`), at a step where that shows them round-off (`_kinks_comparable`), and the
    retry did not fail: a layer that bends at the scale of the step (a ripple, a zigzag of
    period 1e-7) has its bends averaged away at sixteen times it, and the central difference
    there, which no second difference bounds, fails the right gradient."""
    retry = probe.retry
    return (
        retry is not None
        and retry.verdict is not Verdict.FAIL
        and _kinks_comparable(h)
        and 2 * retry.masked < probe.masked
    )


def _round_off(problem: GradientProblem, base: Baseline, index: int, failed: Probe, tol: Tolerances, h: float) -> Probe:
    """A failure tried again along its direction at `_RETRY` times its step (`h`, relative),
    undecided where that shows it rested on round-off the estimate leaves out:

    - its outputs taken for kinks do not bend there, half of them or more, and the retry does
      not fail (`_kinks_vanished`): round-off taken for kinks (a minority of outputs that
      round far above their ulps: sin(w X + 1e4) in a few channels), beside which the test
      kept the outputs whose second differences happened to be small, their first
      differences' round-off outside the estimate. Or bends at the scale of the step (a
      ripple of period 3e-8), which sixteen times it averages away (and would fail the right
      gradient, where no second difference bounds that): undecided at kinks, and another
      direction is drawn at the same step (`check_argument`);
    - else its discrepancy falls below a quarter there: a gradient's error along a direction
      is the same at any step, while round-off that the estimate leaves out (a layer that
      amplifies its own, softmax(1000 X)) grows as the step shrinks. A failure there too does
      not make it stand (round-off the estimate leaves out fails both steps; the loop goes on
      at larger steps, where a real error fails again), nor do more outputs left out at kinks
      there unless its discrepancy fell by less than the step grew.

    Kept where the larger step cannot be taken (the domain's edge, the layer raised)."""
    value, t = problem.values[index], failed.step * _RETRY
    if not bool(
        namespace_of(value).all(keep_inside(value, failed.direction, t, problem.domains[index]) == failed.direction)
    ):
        return failed
    try:
        larger = run_probe(problem, base, index, failed.direction, t, tol, h * _RETRY >= _LARGE_STEP, h * _RETRY)
    except EvaluationError:
        return failed
    larger.gradients = []  # kept for its numbers alone (the calls it cost are counted from it)
    retried = dataclasses.replace(failed, retry=larger)
    if _kinks_vanished(retried, h):
        return dataclasses.replace(retried, verdict=Verdict.UNDECIDED, reason=Undecided.KINKS)
    finite = math.isfinite(larger.discrepancy)
    shrank = finite and larger.discrepancy < failed.discrepancy / 4
    stands = larger.masked > failed.masked and not (finite and larger.discrepancy < failed.discrepancy / _RETRY)
    if stands or not shrank:
        return retried
    return dataclasses.replace(retried, verdict=Verdict.UNDECIDED, reason=Undecided.ROUND_OFF)


def _reasons(probes: Sequence[Probe]) -> str:
    """Why the probes could not decide, each reason once: the probes at kinks in one phrase
    with the count of each ("6 of 10 and 10 of 10 changed outputs bent sharply within the
    step ..."), not the phrase again for every step size."""
    kinks = list(dict.fromkeys(f"{p.masked} of {p.changed}" for p in probes if p.reason is Undecided.KINKS))
    reasons = sorted({p.reason_text for p in probes if p.reason is not None and p.reason is not Undecided.KINKS})
    if kinks:
        counts = kinks[0] if len(kinks) == 1 else ", ".join(kinks[:-1]) + " and " + kinks[-1]
        reasons.insert(0, f"{counts} changed outputs {_BENT}")
    return "; ".join(reasons)


def element_probe(
    problem: GradientProblem, base: Baseline, index: int, element: tuple[int, ...], tol: Tolerances, unit: complex = 1
) -> Probe:
    """The numeric partial derivative with respect to one element (a one-hot direction): of its
    real part, or of its imaginary part with `unit=1j`. The step adapts as in
    `check_argument` until a probe decides (four at most); the last probe is returned."""
    value = problem.values[index]
    direction = namespace_of(value).zeros(value.shape, dtype=value.dtype)
    direction[element] = unit
    (magnitude,) = fetch(namespace_of(value).abs(value[element]))
    h = tol.step
    scale = step_scale(value)
    agreeing: list[Probe] = []
    for _ in range(4):
        t = h * scale
        moved = keep_inside(value, direction, t, problem.domains[index])
        large = t >= _LARGE_STEP * max(magnitude, scale)
        probe = run_probe(problem, base, index, moved, t, tol, large_step=large, relative=h)
        if probe.verdict is not Verdict.UNDECIDED:
            return probe
        if _agrees_at_reduced_resolution(probe, tol):
            agreeing.append(probe)
        if probe.reason is Undecided.ROUND_OFF:
            h = min(h * 100, _MAX_STEP)
        else:
            h /= 10
    if agreeing:
        # The element agrees within an error estimate above the full resolution but within
        # the reduced one: right, as check_argument would say of a whole argument.
        best = min(agreeing, key=lambda p: p.relative(p.error_bound))
        return dataclasses.replace(best, verdict=Verdict.PASS, reduced=True)
    return probe


def _agrees_at_reduced_resolution(probe: Probe, tol: Tolerances) -> bool:
    """Agreement within the reduced resolution against the probe's scale, whose tolerance
    rules out a relative error of the projection itself (`_REDUCED_PROJECTION`: a projection
    far below its tolerance agrees with any gradient, a gradient twice too large among them)."""
    return (
        math.isfinite(probe.error_bound)
        and probe.discrepancy <= probe.tolerance
        and probe.error_bound <= tol.resolution[1] * probe.scale
        and probe.tolerance <= _REDUCED_PROJECTION.get(np.dtype(tol.precision), 1e-1) * probe.projection
    )
