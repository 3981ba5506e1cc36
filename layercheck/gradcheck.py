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
* Outputs whose d2 is not small against their first difference crossed a non-differentiable
  point (a ReLU kink, an SReLU threshold) within the step. They are masked out of the loss:
  W' = W with those outputs zeroed, one more `backward` with W', and A, C are compared on L'.
  The check then stays exact however densely kinks are placed.
* A probe passes when |A - C| <= tol and E is small enough to have caught a real error; it
  fails when |A - C| > tol, where tol = rtol * max(|A|, |C|) + atol * |v| + E + (round-off of
  the analytic side). A failure must be confirmed by a second probe with another direction
  and step; anything else is retried with a step adapted to what went wrong (smaller for
  kinks and curvature, larger for round-off) and ends as `incomplete` if it cannot decide.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

PASS, FAIL, UNDECIDED = "pass", "fail", "undecided"

# Relative step per precision: central differences at this step have a truncation error far
# below the resolution target while round-off stays well under it (eps / h).
_STEP = {np.dtype(np.float64): 1e-7, np.dtype(np.float32): 3e-3}
# Per precision: the largest numeric error estimate (relative to the probe's scale) for a
# decisive pass; the largest accepted at all; and the largest tolerance relative to the
# projection itself, so that a pass rules out a uniform relative error of that size even when
# the random projection happens to be small.
_RESOLUTION = {np.dtype(np.float64): (1e-6, 1e-4, 5e-7), np.dtype(np.float32): (3e-3, 3e-2, 3e-3)}
_ERROR_FACTOR = 4.0  # E = 4 x the W-weighted RMS of the second differences (+ a round-off floor)
_MAX_PROBES = 6


class EvaluationError(Exception):
    """The layer raised while the engine evaluated it (at a perturbed point, or backward again)."""


@dataclass
class GradientProblem:
    """The arguments of a training-time pass, how to evaluate it and how to differentiate it.

    `evaluate(i, value)` returns every output and updated state with argument i replaced by
    `value`; `gradients(weights)` runs backward with dL/dY = weights and returns the gradient
    of every argument (None where the layer returned none). Both raise EvaluationError when
    the layer raises.
    """

    names: list[str]
    kinds: list[str]
    values: list[np.ndarray]
    evaluate: Callable[[int, np.ndarray], list[np.ndarray]]
    gradients: Callable[[list[np.ndarray]], list[np.ndarray | None]]
    domains: list[tuple[float | None, float | None]]
    labels: list[str | None]


@dataclass
class Probe:
    argument: int
    direction: np.ndarray
    step: float
    numeric: float
    analytic: float
    error_bound: float
    scale: float
    masked: int
    changed: int
    gradients: list
    verdict: str
    reason: str = ""
    rtol: float = 0.0
    fixed_tolerance: float = math.inf  # atol * |v| + error_bound: independent of the analytic side
    eps: float = 0.0

    @property
    def discrepancy(self) -> float:
        return abs(self.analytic - self.numeric)

    @property
    def tolerance(self) -> float:
        return self.tolerance_for(self.gradients[self.argument]) if self.gradients else math.inf

    def tolerance_for(self, gradient: np.ndarray) -> float:
        """What |<gradient, v> - C| may be: rtol, atol, numeric error and analytic round-off."""
        analytic = _real_dot(gradient, self.direction)
        terms = math.sqrt(_sq_norm(gradient * self.direction))
        return self.rtol * max(abs(analytic), abs(self.numeric)) + self.fixed_tolerance + 64 * self.eps * terms

    def agrees(self, gradient: np.ndarray | None) -> bool:
        """Would `gradient` have passed this probe, with a numeric side clearly away from zero?

        Used by the diagnosis to recognise swapped, transposed or conjugated gradients.
        """
        if gradient is None or gradient.shape != self.direction.shape or not math.isfinite(self.numeric):
            return False
        if abs(self.numeric) <= 2 * self.fixed_tolerance:
            return False
        return abs(_real_dot(gradient, self.direction) - self.numeric) <= self.tolerance_for(gradient)

    def relative(self, value: float) -> float:
        if value == 0:
            return 0.0
        return value / self.scale if self.scale > 0 else math.inf


@dataclass
class Tolerances:
    rtol: float
    atol: float
    precision: np.dtype

    @property
    def eps(self) -> float:
        return float(np.finfo(self.precision).eps)

    @property
    def step(self) -> float:
        return _STEP.get(np.dtype(self.precision), 3e-3)

    @property
    def resolution(self) -> tuple[float, float, float]:
        return _RESOLUTION.get(np.dtype(self.precision), _RESOLUTION[np.dtype(np.float32)])


@dataclass
class Baseline:
    """The unperturbed pass: outputs, loss weights and the analytic gradients for them."""

    outputs: list[np.ndarray]
    weights: list[np.ndarray]
    gradients: list[np.ndarray | None]
    kink_floor: list[np.ndarray]  # 64 eps |Y|: second differences below it are round-off
    roundoff_sq: list[float]  # sum((W eps |Y|)^2) per output: the round-off of C when all of Y changes


def _real_dot(a: np.ndarray, b: np.ndarray) -> float:
    """sum(Re(conj(a) * b)): the loss pairing, for real and complex arrays alike."""
    return float(np.vdot(a, b).real)


def _sq_norm(a: np.ndarray) -> float:
    return float(np.vdot(a, a).real)


def make_baseline(problem: GradientProblem, outputs: list[np.ndarray], weights: list[np.ndarray], tol: Tolerances) -> Baseline:
    gradients = problem.gradients(weights)
    roundoff = [tol.eps * np.abs(y) for y in outputs]
    return Baseline(
        outputs, weights, gradients,
        kink_floor=[64 * r for r in roundoff],
        roundoff_sq=[_sq_norm(w * r) for w, r in zip(weights, roundoff)],
    )


def random_direction(value: np.ndarray, rng: np.random.Generator, support: np.ndarray | None = None) -> np.ndarray:
    """Random signs (Rademacher), or random signs on both parts for complex arguments.

    As good as Gaussian directions for a random projection, several times cheaper to draw at
    real sizes, and every element moves by exactly the step.
    """
    signs = rng.integers(0, 2, size=value.shape, dtype=np.int8).astype(np.float64)
    signs *= 2
    signs -= 1
    if np.iscomplexobj(value):
        imag = rng.integers(0, 2, size=value.shape, dtype=np.int8) * 2.0 - 1.0
        v = (signs + 1j * imag) / np.sqrt(2)
    else:
        v = signs
    return v if support is None else v * support


def step_scale(value: np.ndarray) -> float:
    """The argument's typical magnitude: steps are relative to it."""
    rms = math.sqrt(_sq_norm(value) / value.size) if value.size else 0.0
    return rms if rms > 0 and math.isfinite(rms) else 1.0


def keep_inside(value: np.ndarray, direction: np.ndarray, t: float, domain) -> np.ndarray:
    """Zero the direction where a step of size t would leave the argument's domain."""
    low, high = domain
    if low is None and high is None:
        return direction
    reach = t * np.abs(direction)
    inside = np.ones(value.shape, dtype=bool)
    if low is not None:
        inside &= value.real - reach > low
    if high is not None:
        inside &= value.real + reach < high
    return np.where(inside, direction, 0)


def run_probe(
    problem: GradientProblem,
    base: Baseline,
    index: int,
    direction: np.ndarray,
    t: float,
    tol: Tolerances,
) -> Probe:
    """One directional-derivative comparison for argument `index`; see the module docstring."""
    value = problem.values[index]
    plus = problem.evaluate(index, value + t * direction)
    minus = problem.evaluate(index, value - t * direction)
    deltas = [yp - ym for yp, ym in zip(plus, minus)]
    seconds = []
    for y0, yp, ym in zip(base.outputs, plus, minus):
        second = np.add(yp, ym, out=yp)  # yp is not needed any more
        second -= 2 * y0
        seconds.append(second)
    # A kink within the step makes d2 comparable to the first difference; the curvature of a
    # smooth function keeps it about t times smaller. A kink whose two slopes nearly agree
    # hides below the first threshold: where kinks were seen and the error estimate is still
    # too large, look again closer.
    probe = _compare(problem, base, index, direction, t, tol, deltas, seconds, max(1e-3, 30 * tol.step))
    if probe.reason == "curvature" and probe.masked:
        probe = _compare(problem, base, index, direction, t, tol, deltas, seconds, max(1e-6, 0.03 * tol.step))
    return probe


def _compare(problem, base, index, direction, t, tol, deltas, seconds, rho) -> Probe:
    kink_masks, changes = [], []
    changed = masked = 0
    for delta, second, floor in zip(deltas, seconds, base.kink_floor):
        threshold = np.abs(delta)
        threshold *= rho
        threshold += floor
        kinks = np.abs(second) > threshold
        n_kinks = int(np.count_nonzero(kinks))
        n_changed = int(np.count_nonzero(delta))
        changed += n_changed
        masked += n_kinks
        kink_masks.append(kinks if n_kinks else None)
        changes.append(n_changed)
    if changed and masked > 0.5 * changed:
        reason = f"{masked} of {changed} changed outputs crossed a non-differentiable point"
        return _undecided(index, direction, t, reason, masked, changed)
    if masked:
        weights = [w if k is None else np.where(k, 0, w) for w, k in zip(base.weights, kink_masks)]
        gradients = problem.gradients(weights)
    else:
        weights, gradients = base.weights, base.gradients
    numeric = sum(_real_dot(w, d) for w, d in zip(weights, deltas)) / (2 * t)
    second_error = _ERROR_FACTOR * math.sqrt(sum(_sq_norm(w * s) for w, s in zip(weights, seconds))) / (2 * t)
    # Round-off of the changed outputs only (unchanged ones cancel exactly); precomputed for
    # the common case where every output changed and no output was masked.
    roundoff_sq = sum(
        full if n == d.size and w is w0 else _sq_norm(w * y0 * (d != 0)) * tol.eps**2
        for w, w0, y0, d, n, full in zip(weights, base.weights, base.outputs, deltas, changes, base.roundoff_sq)
    )
    roundoff_error = 2 * math.sqrt(roundoff_sq) / (2 * t)
    error_bound = second_error + roundoff_error
    if not (math.isfinite(numeric) and math.isfinite(error_bound)):
        return _undecided(index, direction, t, "a perturbed pass produced NaN or infinite outputs")
    g = gradients[index]
    analytic = _real_dot(g, direction)
    scale = max(math.sqrt(_sq_norm(g * direction)), abs(numeric), abs(analytic))
    probe = Probe(
        index, direction, t, numeric, analytic, error_bound, scale, masked, changed, gradients, PASS,
        rtol=tol.rtol, fixed_tolerance=tol.atol * math.sqrt(_sq_norm(direction)) + error_bound, eps=tol.eps,
    )
    if not math.isfinite(analytic):
        probe.verdict, probe.reason = UNDECIDED, "the analytic gradient has NaN or infinite values"
    elif probe.discrepancy > probe.tolerance:
        probe.verdict = FAIL
    elif scale > 0 and error_bound > tol.resolution[0] * scale:
        probe.verdict = UNDECIDED
        probe.reason = "round-off" if second_error < 20 * roundoff_error else "curvature"
    elif np.any(g) and probe.tolerance > tol.resolution[2] * max(abs(analytic), abs(numeric)):
        probe.verdict, probe.reason = UNDECIDED, "a small projection"
    return probe


def _undecided(index, direction, t, reason, masked=0, changed=0) -> Probe:
    return Probe(index, direction, t, math.nan, math.nan, math.inf, 0.0, masked, changed, [], UNDECIDED, reason)


@dataclass
class ArgumentVerdict:
    """The outcome for one argument, with every probe that led to it."""

    index: int
    status: str
    probes: list[Probe]
    reason: str = ""


def check_argument(
    problem: GradientProblem,
    base: Baseline,
    index: int,
    tol: Tolerances,
    rng: np.random.Generator,
    max_probes: int = _MAX_PROBES,
) -> ArgumentVerdict:
    """Probe one argument until two probes fail, one passes decisively, or the budget runs out.

    Steps adapt: smaller after kinks or curvature, larger after round-off, and every probe
    draws a new random direction. A failure needs two failing probes.
    """
    value = problem.values[index]
    scale = step_scale(value)
    h = tol.step
    probes: list[Probe] = []
    fails = 0
    for _ in range(max_probes):
        t = h * scale
        direction = keep_inside(value, random_direction(value, rng), t, problem.domains[index])
        if not np.any(direction):
            return ArgumentVerdict(index, "incomplete", probes, "every element sits at the edge of its domain")
        try:
            probe = run_probe(problem, base, index, direction, t, tol)
        except EvaluationError as exc:
            return ArgumentVerdict(index, "incomplete", probes, str(exc))
        probes.append(probe)
        if probe.verdict == PASS:
            if fails:
                return ArgumentVerdict(index, "incomplete", probes, "probes disagree: one failed and another passed")
            return ArgumentVerdict(index, "passed", probes)
        if probe.verdict == FAIL:
            fails += 1
            if fails == 2:
                return ArgumentVerdict(index, "failed", probes)
            h /= 4
        elif probe.reason == "round-off":
            h = min(h * 10, 1e-2)
        elif probe.reason != "a small projection":
            h /= 10
    agreeing = [
        p for p in probes
        if p.verdict == UNDECIDED and math.isfinite(p.error_bound) and p.discrepancy <= p.tolerance
        and p.error_bound <= tol.resolution[1] * p.scale
    ]
    if agreeing and not fails:
        best = min(p.relative(p.error_bound) for p in agreeing)
        return ArgumentVerdict(index, "passed", probes, f"agreement at a reduced resolution of {best:.1g}")
    reasons = sorted({p.reason for p in probes if p.reason})
    return ArgumentVerdict(index, "incomplete", probes, "; ".join(reasons) or "no probe was decisive")


def restricted_probe(
    problem: GradientProblem,
    base: Baseline,
    index: int,
    support: np.ndarray,
    tol: Tolerances,
    rng: np.random.Generator,
) -> Probe:
    """A probe whose direction lives on `support` only (localization)."""
    value = problem.values[index]
    t = tol.step * step_scale(value)
    direction = keep_inside(value, random_direction(value, rng, support), t, problem.domains[index])
    return run_probe(problem, base, index, direction, t, tol)


def element_probe(problem: GradientProblem, base: Baseline, index: int, element: tuple, tol: Tolerances, unit: complex = 1) -> Probe:
    """The numeric partial derivative with respect to one element (a one-hot direction): of its
    real part, or of its imaginary part with `unit=1j`."""
    value = problem.values[index]
    direction = np.zeros(value.shape, dtype=value.dtype)
    direction[element] = unit
    t = tol.step * step_scale(value)
    direction = keep_inside(value, direction, t, problem.domains[index])
    return run_probe(problem, base, index, direction, t, tol)
