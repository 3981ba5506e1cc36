"""What is wrong with a gradient that failed, and where: every claim proven before it is said.

A claim about a wrong gradient g ("off by a factor 2", "the gradient of b", "the wrong sign
where X < 0") is a claim that a corrected gradient (g / 2, the other slot, g negated there)
is right. So each claim is tested the way the gradient itself was: the corrected gradient
must agree with every probe that failed and with a fresh probe drawn to test it. Arguments
of a few hundred elements or fewer (fewer at large layouts: each element costs two forward
calls) are measured element by element instead, exactly.

Claims about the incoming gradient come first: a backward that ignores dL/dY, or is not
linear in it, is found by one more backward with -2 dL/dY. Where a gradient is wrong is said
along every named axis and by region (border of the spatial plane, sign, value range), each
block with a direction of its own; a block is called right only after two probes passed.
When no cause survives its test, the message says where and how much, and names none.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from layercheck.numerics import blocks as partitions
from layercheck.numerics.arrays import fetch, is_complex, namespace_of, to_host
from layercheck.numerics.blocks import Block, Partition
from layercheck.numerics.gradcheck import (
    ArgumentVerdict,
    Baseline,
    EvaluationError,
    GradientProblem,
    Probe,
    Tolerances,
    Verdict,
    check_argument,
    element_probe,
)
from layercheck.results import Status

__all__ = [
    "BlockError",
    "Diagnosis",
    "Diagnostician",
    "ElementExample",
    "SizeContext",
    "TimeBudget",
    "name_factor",
    "size_context",
]

# On failure, arguments this small are measured element by element (to test a claim and to
# say where it is wrong), while the elements times the size of the outputs they are measured
# on stay under a work bound: each element costs two forward calls. 256 elements at a small
# layout; about 6 at MATLAB's seed layout 24,24,20,128 (a fraction of a second there).
ELEMENTWISE_LIMIT = 256
ELEMENTWISE_WORK = 1e7
_FACTOR_SPREAD = 1e-3  # ratios of the failing probes must agree this well to propose a factor
# Probes per argument to say where a large argument's gradient is wrong: a screen of every
# partition (one probe per block), then a second probe per block of the candidate regions.
LOCALIZATION_BUDGET = 48
CONFIRMATION_BUDGET = 24  # probes per argument to say where a large argument's gradient is wrong
_LINEARITY_SCALE = -2.0  # dL/dY times this must give every gradient times this


@dataclass(frozen=True)
class ElementExample:
    """The analytic and numeric gradient at one element, and whether they disagree."""

    index: tuple[int, ...]
    analytic: complex | float
    numeric: complex | float
    abs_error: float
    rel_error: float
    tolerance: float
    wrong: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": list(self.index),
            "analytic": self.analytic,
            "numeric": self.numeric,
            "abs_error": self.abs_error,
            "rel_error": self.rel_error,
            "tolerance": self.tolerance,
            "wrong": self.wrong,
        }


@dataclass(frozen=True)
class BlockError:
    """One block of a partition as a restricted probe measured it."""

    label: str
    verdict: str  # "wrong", "right" or "undecided"
    abs_error: float
    rel_error: float
    tolerance: float
    probes: int  # probes that agree on the verdict: 1 (a screen), 2 (confirmed), 0 (measured element by element)

    def to_dict(self) -> dict[str, Any]:
        return {
            "block": self.label,
            "verdict": self.verdict,
            "abs_error": self.abs_error,
            "rel_error": self.rel_error,
            "tolerance": self.tolerance,
            "probes": self.probes,
        }


@dataclass
class Diagnosis:
    headline: str
    causes: list[str] = field(default_factory=list)
    where: list[str] = field(default_factory=list)
    examples: list[ElementExample] = field(default_factory=list)
    swapped_with: str | None = None
    blocks: dict[str, list[BlockError]] = field(default_factory=dict)
    # The budget in seconds after which localization stopped: the claims above were proven
    # before it; those it had no time to test are not said. None: it ran to the end.
    stopped_after_s: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "headline": self.headline,
            "causes": self.causes,
            "where": self.where,
            "examples": [e.to_dict() for e in self.examples],
            "blocks": {unit: [b.to_dict() for b in found] for unit, found in self.blocks.items()},
            "stopped_after_s": self.stopped_after_s,
        }


class OutOfTime(EvaluationError):
    """The diagnosis spent its time budget. An EvaluationError, so that every claim being
    tested when it comes is left unsaid, as for a layer that raised at a perturbed point."""


@dataclass
class TimeBudget:
    """Seconds the diagnosis of a failed gradient may spend on calls of the layer, counted from
    `start`: localization and naming cost time, not a number of probes, so that a failure once
    proven is reported in a bounded time whatever the layer's size."""

    seconds: float
    deadline: float = math.inf
    spent: bool = False

    def start(self) -> None:
        self.deadline = time.perf_counter() + self.seconds

    def over(self) -> bool:
        """Whether the budget is spent (checked before work that costs more than a call: a
        random direction over a whole argument, a table of every element)."""
        if not self.spent and time.perf_counter() > self.deadline:
            self.spent = True
        return self.spent

    def charge(self) -> None:
        """Before each call of the layer: OutOfTime once the budget is spent."""
        if self.over():
            raise OutOfTime(f"the diagnosis spent its budget of {self.seconds:.3g} s")


def _budgeted(problem: GradientProblem, budget: TimeBudget) -> GradientProblem:
    """`problem` whose every call of the layer is charged to `budget` first."""

    def evaluate_many(moves: dict[int, np.ndarray]) -> list[np.ndarray]:
        budget.charge()
        return problem.evaluate_many(moves)

    def gradients(weights: list[np.ndarray]) -> list[np.ndarray | None]:
        budget.charge()
        return problem.gradients(weights)

    return dataclasses.replace(problem, evaluate_many=evaluate_many, gradients=gradients)


@dataclass(frozen=True)
class SizeContext:
    """Sizes that make a constant factor recognisable (batch size, elements per channel...)."""

    named: tuple[tuple[str, int], ...]


def size_context(problem: GradientProblem) -> SizeContext:
    named: list[tuple[str, int]] = []
    for value, labels in zip(problem.values, problem.labels):
        if not labels or len(labels) != value.ndim:
            continue
        for label, word in (("B", "batch size"), ("C", "number of channels"), ("T", "sequence length")):
            axis = labels.find(label)
            if axis >= 0 and value.shape[axis] > 1:
                named.append((word, value.shape[axis]))
        c = labels.find("C")
        if c >= 0 and value.size // value.shape[c] > 1:
            named.append(("number of elements per channel", value.size // value.shape[c]))
        spatial = math.prod(value.shape[i] for i, ch in enumerate(labels) if ch == "S")
        if spatial > 1:
            named.append(("number of spatial positions", spatial))
            spatial_axes = [i for i, ch in enumerate(labels) if ch == "S"]
            for k, axis in enumerate(spatial_axes, 1):
                if value.shape[axis] > 1 and len(spatial_axes) > 1:
                    named.append((f"size of spatial axis {k}", value.shape[axis]))
        named.append(("number of elements", value.size))
        break
    return SizeContext(tuple(dict.fromkeys(named)))


def name_factor(ratio: float, context: SizeContext) -> str:
    """`2`, `1/128 (1/batch size)`, or the ratio itself."""
    # A size of the problem explains a factor better than a small integer does, except 2,
    # which a forgotten derivative of a square explains as well.
    candidates: list[tuple[float, str]] = [(-1.0, "-1")]
    for word, n in context.named:
        if n > 2:
            candidates += [(float(n), f"{n} (the {word})"), (1.0 / n, f"1/{n} (1/{word})")]
    for n in (2, 3, 4, 8):
        candidates += [(float(n), str(n)), (1.0 / n, f"1/{n}"), (-float(n), f"-{n}"), (-1.0 / n, f"-1/{n}")]
    for value, text in candidates:
        if abs(ratio - value) <= 1e-4 * abs(value):
            return text
    if abs(ratio - 1) < 1e-2:
        return f"1 {'+' if ratio > 1 else '-'} {abs(ratio - 1):.3g} (a relative error of {abs(ratio - 1):.2g})"
    frac = Fraction(ratio).limit_denominator(64)
    if frac.denominator > 1 and abs(float(frac) - ratio) <= 1e-6 * abs(ratio):
        return f"{frac.numerator}/{frac.denominator}"
    return f"{ratio:.6g}"


def _factor_hint(factor: str, ratio: float, complex_values: bool) -> str:
    if "1/batch size" in factor:
        return ": a mean over the observations instead of a sum?"
    if "(the batch size)" in factor:
        return ": a sum over the observations where a mean belongs?"
    if complex_values and abs(ratio - 0.5) <= 1e-4 * 0.5:
        return f": the Wirtinger derivative dL/dconj(z) = (dL/da + i*dL/db)/2? {_CONVENTION}"
    if complex_values and abs(ratio - 2) <= 1e-4 * 2:
        return f": twice the gradient, as if dL/dY were taken as a Wirtinger derivative and doubled? {_CONVENTION}"
    return ""


_CONVENTION = "layercheck's convention is dL/da + i*dL/db"


def _failing(verdict: ArgumentVerdict) -> list[Probe]:
    return [p for p in verdict.probes if p.verdict is Verdict.FAIL]


def _ratio(probes: list[Probe], minimum: int = 2) -> float | None:
    """A ratio analytic/numeric shared by the probes (`minimum` at least), within their noise."""
    ratios, noise = [], 0.0
    for p in probes:
        if not (math.isfinite(p.analytic) and abs(p.numeric) > 10 * p.fixed_tolerance):
            return None
        ratios.append(p.analytic / p.numeric)
        noise += p.fixed_tolerance / abs(p.numeric)
    if len(ratios) < minimum:
        return None
    typical = max(abs(r) for r in ratios)
    if max(ratios) - min(ratios) <= (_FACTOR_SPREAD + noise) * typical:
        return float(np.mean(ratios))
    return None


# A corrected gradient may miss a probe's tolerance by this factor and still be the right one:
# a tolerance is tight enough to make a pass decisive, and its numeric side may be that noisy.
_CLAIM_SLACK = 10.0
# Where the wrong gradient failed a probe, a correction must remove nearly all of its error:
# an error that is not what the claim says (per-entry noise, a missing term) leaves a
# residual of its own size on a random direction, whatever factor is tried.
_CLAIM_RESIDUAL = 0.05


def _admits(probe: Probe, gradient: Any) -> bool:
    """`gradient` would have passed `probe` (whose numeric side is trustworthy) within
    `_CLAIM_SLACK` times its tolerance, and, where the probe failed, with at most
    `_CLAIM_RESIDUAL` of the probe's own error left."""
    if gradient is None or tuple(gradient.shape) != tuple(probe.direction.shape):
        return False
    if not probe.gradients:
        return False
    xp = namespace_of(gradient, probe.direction)
    terms = gradient * probe.direction
    analytic, terms_sq = fetch(xp.vdot(gradient, probe.direction).real, xp.vdot(terms, terms).real)
    if not math.isfinite(analytic):
        return False
    residual = abs(analytic - probe.numeric)
    if residual > _CLAIM_SLACK * probe._tolerance(analytic, math.sqrt(terms_sq)):
        return False
    return probe.verdict is not Verdict.FAIL or residual <= _CLAIM_RESIDUAL * probe.discrepancy


def _candidate_share(cells: list[_Cell]) -> float | None:
    """The share of the elements in the wrong blocks, for a partition whose screen found some
    blocks wrong and every other right; None otherwise."""
    words = {c.verdict for c in cells}
    if words != {"wrong", "right"}:
        return None
    wrong = [c.block.mask for c in cells if c.verdict == "wrong"]
    xp = namespace_of(wrong[0])
    union = wrong[0]
    for mask in wrong[1:]:
        union = xp.logical_or(union, mask)
    (share,) = fetch(union.mean())
    return float(share)


def _word(verdict: ArgumentVerdict | None) -> str:
    if verdict is None:
        return "undecided"
    return {Status.FAILED: "wrong", Status.PASSED: "right"}.get(verdict.status, "undecided")


def _cell(block: Block, verdict: ArgumentVerdict | None, word: str, probes: int) -> _Cell:
    if verdict is None or not verdict.probes:
        return _Cell(block, "undecided", None)
    failing = _failing(verdict)
    return _Cell(block, word, failing[0] if failing else verdict.probes[-1], tuple(failing), probes)


@dataclass
class _Cell:
    block: Block
    verdict: str  # "wrong", "right", "undecided"
    probe: Probe | None  # the failing probe of a wrong cell, else the last probe
    failing: tuple[Probe, ...] = ()
    probes: int = 0  # decisive probes behind the verdict: 1 for a screen, 2 once confirmed (0: exact)

    def record(self) -> BlockError:
        p = self.probe
        if p is None or not math.isfinite(p.numeric):
            return BlockError(self.block.label, self.verdict, math.nan, math.nan, math.nan, self.probes)
        return BlockError(
            self.block.label,
            self.verdict,
            p.discrepancy,
            p.relative(p.discrepancy),
            p.tolerance if p.gradients else math.nan,
            self.probes,
        )


class Diagnostician:
    """Diagnoses the failed arguments of one gradient problem; what several arguments share
    (the backward with a scaled dL/dY) is run once."""

    def __init__(
        self,
        problem: GradientProblem,
        base: Baseline,
        verdicts: list[ArgumentVerdict],
        tol: Tolerances,
        rng: Callable[[str], np.random.Generator],
        budget: TimeBudget | None = None,
    ):
        self.budget = TimeBudget(math.inf) if budget is None else budget
        self.budget.start()
        self.problem = _budgeted(problem, self.budget)
        self.base = base
        self.verdicts = verdicts
        self.tol = tol
        self.rng = rng
        self.context = size_context(problem)
        self._scaled: list[Any] | None | bool = False  # False: not run yet; None: backward raised
        self._fresh: dict[tuple[int, str], Probe | None] = {}
        self._elements: dict[int, list[tuple[tuple[int, ...], list[Probe]]] | None] = {}
        self._spent: dict[int, int] = {}  # localization probes spent per argument

    # -- evidence ----------------------------------------------------------------------------

    def _fresh_probe(self, index: int, support: Block | None = None) -> Probe | None:
        """A decided probe of a new random direction (on `support` when given), drawn to test
        a claim: the gradient check's own loop, so that the step adapts as it does there."""
        key = (index, "" if support is None else support.label)
        if key not in self._fresh and self.budget.over():
            return None
        if key not in self._fresh:
            rng = self.rng(f"claim {self.problem.names[index]} {key[1]}")
            mask = None if support is None else support.mask
            try:
                verdict = check_argument(self.problem, self.base, index, self.tol, rng, max_probes=4, support=mask)
            except EvaluationError:
                verdict = None
            decided = (
                [] if verdict is None else [p for p in verdict.probes if p.verdict in (Verdict.PASS, Verdict.FAIL)]
            )
            self._fresh[key] = decided[-1] if decided else None
        return self._fresh[key]

    def elements(self, index: int) -> list[tuple[tuple[int, ...], list[Probe]]] | None:
        """Every element's probes (one, or two for a complex argument) for a small argument."""
        if index not in self._elements and self.budget.over():
            return None
        if index not in self._elements:
            value = self.problem.values[index]
            table = None
            outputs = sum(int(y.size) for y in self.base.outputs)
            if value.size <= ELEMENTWISE_LIMIT and value.size * outputs <= ELEMENTWISE_WORK:
                units = (1, 1j) if is_complex(value) else (1,)
                try:
                    table = [
                        (
                            tuple(int(i) for i in element),
                            [element_probe(self.problem, self.base, index, element, self.tol, u) for u in units],
                        )
                        for element in np.ndindex(tuple(value.shape))
                    ]
                except EvaluationError:
                    table = None
            self._elements[index] = table
        return self._elements[index]

    def holds(
        self, index: int, corrected: Callable[[list[Any]], Any], supports: tuple[Block | None, ...] = (None,)
    ) -> bool:
        """Is `corrected(gradients)` the right gradient of argument `index`, where `gradients`
        are backward's gradients for the loss a probe measured? Element by element for a small
        argument; else it must pass every failing probe and a fresh probe on each of `supports`
        (None: the whole argument). `corrected` returns None where it cannot say (it needs the
        unmasked loss): that probe is left out, and a fresh one must still pass."""
        table = self.elements(index)
        if table is not None:
            decided = [p for _, probes in table for p in probes if p.verdict in (Verdict.PASS, Verdict.FAIL)]
            informative = [p for p in decided if abs(p.numeric) > 2 * p.fixed_tolerance]
            return bool(informative) and all(_admits(p, corrected(p.gradients)) for p in decided)
        for probe in _failing(self.verdicts[index]):
            candidate = corrected(probe.gradients)
            if candidate is not None and not _admits(probe, candidate):
                return False
        for support in supports:
            fresh = self._fresh_probe(index, support)
            if fresh is None or abs(fresh.numeric) <= 2 * fresh.fixed_tolerance:
                return False
            if not _admits(fresh, corrected(fresh.gradients)):
                return False
        return True

    def _unmasked(self, candidate: Any) -> Callable[[list[Any]], Any]:
        """A corrected gradient that holds for the loss with every output weighted."""
        return lambda gradients: candidate if gradients is self.base.gradients else None

    # -- claims --------------------------------------------------------------------------------

    def diagnose(self, index: int) -> Diagnosis:
        diagnosis = self._diagnose(index)
        if self.budget.spent:
            diagnosis.stopped_after_s = self.budget.seconds
        return diagnosis

    def _diagnose(self, index: int) -> Diagnosis:
        name = self.problem.names[index]
        gradient = self.base.gradients[index]
        assert gradient is not None
        xp = namespace_of(gradient)
        finite = xp.isfinite(gradient)
        if not bool(finite.all()):
            return self._non_finite(index, finite)
        if not bool(xp.any(gradient)):
            return Diagnosis(f"the gradient of {name} is zero everywhere", ["zero or missing gradient"])
        for claim in (
            self._linearity,
            self._misplaced,
            self._conjugation,
            self._transposed,
            self._factor,
            self._wrong_axes,
        ):
            diagnosis = claim(index, gradient)
            if diagnosis is not None:
                return diagnosis
        return self._where(index, gradient)

    def _non_finite(self, index: int, finite: Any) -> Diagnosis:
        name = self.problem.names[index]
        bad = to_host(namespace_of(finite).argwhere(~finite))
        shown = ", ".join(str(tuple(int(i) for i in row)) for row in bad[:5]) + (" ..." if len(bad) > 5 else "")
        n = int(finite.size)
        text = (
            f"the gradient of {name} has NaN or infinite values at {len(bad)} of {n} elements ({shown}), "
            "where the outputs and their finite differences are finite"
        )
        return Diagnosis(
            text, ["NaN or infinite gradient"], [f"NaN or infinite at {len(bad)} of {n} elements: {shown}"]
        )

    def _scaled_gradients(self) -> list[Any] | None:
        """backward's gradients for -2 dL/dY (None when it raised): a sign catches what only
        looks linear under positive scaling (|dL/dY|)."""
        if self._scaled is False:
            try:
                self._scaled = self.problem.gradients([_LINEARITY_SCALE * w for w in self.base.weights])
            except EvaluationError:
                self._scaled = None
        return self._scaled  # type: ignore[return-value]

    def _linearity(self, index: int, gradient: Any) -> Diagnosis | None:
        """backward must be linear in dL/dY: -2 dL/dY, -2 times every gradient."""
        scaled = self._scaled_gradients()
        if scaled is None or scaled[index] is None:
            return None
        other = scaled[index]
        xp = namespace_of(gradient, other)
        size_sq, off_linear, off_same = fetch(
            xp.vdot(gradient, gradient).real, _sq(other - _LINEARITY_SCALE * gradient), _sq(other - gradient)
        )
        size = math.sqrt(size_sq)
        slack = math.sqrt(self.tol.eps) * size
        name = self.problem.names[index]
        if math.sqrt(off_linear) <= slack:
            return None
        if math.sqrt(off_same) <= slack:
            return Diagnosis(
                f"backward ignores dL/dY: the gradient of {name} does not change when dL/dY is multiplied by "
                f"{_LINEARITY_SCALE:g}",
                ["backward ignores dL/dY"],
            )
        relative = math.sqrt(off_linear) / (abs(_LINEARITY_SCALE) * size)
        if relative > 0.01:
            return Diagnosis(
                f"the gradient of {name} is not linear in dL/dY: multiplying dL/dY by {_LINEARITY_SCALE:g} "
                f"does not multiply it by {_LINEARITY_SCALE:g} (it is off by a relative {relative:.3g})",
                ["backward not linear in dL/dY"],
            )
        return None

    def _misplaced(self, index: int, gradient: Any) -> Diagnosis | None:
        """Another argument's gradient returned in this argument's place (verified both ways)."""
        name = self.problem.names[index]
        for other, verdict in enumerate(self.verdicts):
            if other == index or self.problem.values[other].shape != self.problem.values[index].shape:
                continue
            # What backward returned for this argument must be the other's gradient; a swap
            # also needs what it returned for the other to be this argument's.
            if self.base.gradients[other] is None or not self.holds(other, _slot(index)):
                continue
            if verdict.status is Status.FAILED and self.holds(index, _slot(other)):
                return Diagnosis(
                    f"the gradients of {name} and {self.problem.names[other]} are returned in each other's place",
                    [f"gradient order: {name} and {self.problem.names[other]} swapped"],
                    swapped_with=self.problem.names[other],
                )
            return Diagnosis(
                f"the gradient returned for {name} is the gradient of {self.problem.names[other]}",
                [f"gradient of {self.problem.names[other]} in the place of {name}"],
            )
        return None

    def _conjugation(self, index: int, gradient: Any) -> Diagnosis | None:
        """How a complex gradient misses a conjugate, if it does. A conjugate missing inside
        backward (f'(X)*dLdY where conj(f'(X))*dLdY is due) shows as a backward that is right
        when given conj(dLdY) and conjugated afterwards."""
        complex_values = any(is_complex(v) for v in self.problem.values) or is_complex(gradient)
        if not complex_values:
            return None
        name = self.problem.names[index]
        xp = namespace_of(gradient)
        if self.holds(index, lambda grads: xp.conj(grads[index])):
            why = f"the conjugate of the correct one (conj missing: dL/da - i*dL/db is JAX's convention, {_CONVENTION})"
        elif self.holds(index, lambda grads: 2 * xp.conj(grads[index])):
            why = "half the conjugate of the correct one: the Wirtinger derivative dL/dz instead of dL/da + i*dL/db (conj missing)"
        else:
            try:
                flipped = self.problem.gradients([xp.conj(w) for w in self.base.weights])[index]
            except EvaluationError:
                return None
            if flipped is None or not self.holds(index, self._unmasked(xp.conj(flipped))):
                return None
            why = "missing a conjugate (conj missing): a derivative multiplies dL/dY where its conjugate belongs"
        return Diagnosis(f"the gradient of {name} is {why}", ["conj missing"])

    def _transposed(self, index: int, gradient: Any) -> Diagnosis | None:
        if gradient.ndim < 2 or gradient.ndim > 4:
            return None
        for perm in itertools.permutations(range(gradient.ndim)):
            if perm == tuple(range(gradient.ndim)):
                continue
            if gradient.transpose(perm).shape == gradient.shape and self.holds(index, _permuted(index, perm)):
                what = "transposed" if gradient.ndim == 2 else f"has its axes permuted (transpose {perm} fits)"
                return Diagnosis(f"the gradient of {self.problem.names[index]} is {what}", [what])
        return None

    def _proposed_ratio(self, index: int) -> float | None:
        table = self.elements(index)
        if table is None:
            return _ratio(_failing(self.verdicts[index]))
        gradient = self.base.gradients[index]
        assert gradient is not None  # a failed argument has a gradient
        ratios = []
        for element, probes in table:
            p = probes[0]
            if p.verdict in (Verdict.PASS, Verdict.FAIL) and abs(p.numeric) > 10 * p.fixed_tolerance:
                (analytic,) = fetch(gradient.real[element])
                ratios.append(float(analytic) / p.numeric)
        if not ratios:
            return None
        return float(np.median(ratios))

    def _factor(self, index: int, gradient: Any) -> Diagnosis | None:
        ratio = self._proposed_ratio(index)
        if ratio is None or not math.isfinite(ratio) or ratio == 0:
            return None
        if not self.holds(index, lambda grads: grads[index] / ratio):
            return None
        name = self.problem.names[index]
        if abs(ratio + 1) <= 1e-4:
            return Diagnosis(f"the gradient of {name} has the wrong sign", ["wrong sign"])
        factor = name_factor(ratio, self.context)
        cause = f"off by a constant factor {factor}"
        complex_values = any(is_complex(v) for v in self.problem.values) or is_complex(gradient)
        hint = _factor_hint(factor, ratio, complex_values)
        return Diagnosis(f"the gradient of {name} is {cause}{hint}", [cause])

    def _wrong_axes(self, index: int, gradient: Any) -> Diagnosis | None:
        """A broadcast argument (a bias of shape 1x1xCx1) whose gradient sums a full-size
        contribution over the wrong axes: proven when the sum over the right axes is right
        and the sum over the others is exactly what backward returned."""
        value = self.problem.values[index]
        kept = [k for k, n in enumerate(value.shape) if n > 1]
        if not kept or len(kept) == value.ndim:
            return None
        for what, full in self._contributions(value):
            axes_right = tuple(k for k in range(value.ndim) if k not in kept)
            if any(full.shape[k] != value.shape[k] for k in kept):
                continue
            corrected = full.sum(axis=axes_right, keepdims=True)
            if not self.holds(index, self._unmasked(corrected)):
                continue
            for chosen in itertools.permutations(range(value.ndim), len(kept)):
                if list(chosen) == kept or list(chosen) != sorted(chosen):
                    continue
                if [full.shape[k] for k in chosen] != [value.shape[k] for k in kept]:
                    continue
                summed = full.sum(axis=tuple(k for k in range(value.ndim) if k not in chosen)).reshape(value.shape)
                xp = namespace_of(summed, gradient)
                (off, size) = fetch(_sq(summed - gradient), xp.vdot(summed, summed).real)
                if math.sqrt(off) <= 1e3 * self.tol.eps * math.sqrt(size):
                    labels = self.problem.labels[index] or ""

                    def axes(ks, labels=labels):
                        return ", ".join(f"{k} ({labels[k]})" if k < len(labels) else str(k) for k in ks)

                    text = (
                        f"the gradient of {self.problem.names[index]} is summed over the wrong axis: it equals {what} "
                        f"summed over every axis but {axes(chosen)}, where every axis but {axes(kept)} is right"
                    )
                    return Diagnosis(text, ["summed over the wrong axis"])
        return None

    def _contributions(self, value: Any) -> list[tuple[str, Any]]:
        """Full-size tensors whose sum over the broadcast axes is a broadcast argument's
        gradient in the common layers: dL/dY (a bias), dL/dY * X (a scale)."""
        found = []
        for k, w in enumerate(self.base.weights):
            if w.ndim != value.ndim:
                continue
            label = "dL/dY" if len(self.base.weights) == 1 else f"dL/dY{k + 1}"
            found.append((label, w))
            for name, x in zip(self.problem.names, self.problem.values):
                if x.shape == w.shape:
                    found.append((f"{label} * {name}", w * x))
        return found

    # -- where ---------------------------------------------------------------------------------

    def _judge(self, index: int, partition: Partition, seed: str) -> list[_Cell]:
        """Each block of a partition probed once (a screen): "wrong" or "right" on one probe.
        Blocks left unmeasured when the budget runs out are undecided. Small arguments are
        judged from their elements instead, exactly."""
        table = self.elements(index)
        if table is not None:
            return [self._judge_exactly(block, table) for block in partition.blocks]
        rng = self.rng(f"localize {self.problem.names[index]} {seed}")
        return [
            _cell(block, v, _word(v), 1)
            for block, v in zip(partition.blocks, (self._probe_block(index, b, rng) for b in partition.blocks))
        ]

    def _confirm(self, index: int, partition: Partition, cells: list[_Cell]) -> list[_Cell]:
        """Each screened block probed once more with a direction of its own: a block is called
        wrong or right only when both probes say so."""
        if self.elements(index) is not None:
            return cells
        rng = self.rng(f"confirm {self.problem.names[index]} {partition.unit}")
        confirmed = []
        for cell in cells:
            again = self._probe_block(index, cell.block, rng, budget=LOCALIZATION_BUDGET + CONFIRMATION_BUDGET)
            word = cell.verdict if _word(again) == cell.verdict else "undecided"
            failing = cell.failing + (tuple(_failing(again)) if again else ())
            confirmed.append(_Cell(cell.block, word, failing[0] if failing else cell.probe, failing, cell.probes + 1))
        return confirmed

    def _probe_block(
        self, index: int, block: Block, rng: np.random.Generator, budget: int = LOCALIZATION_BUDGET
    ) -> ArgumentVerdict | None:
        """One decisive probe of a block (up to three tries with adapted steps), within budget."""
        spent = self._spent.get(index, 0)
        if spent >= budget or self.budget.over():
            return None
        try:
            verdict = check_argument(
                self.problem, self.base, index, self.tol, rng, max_probes=3, support=block.mask, fails_needed=1
            )
        except EvaluationError:
            verdict = None
        self._spent[index] = spent + (len(verdict.probes) if verdict else 1)
        return verdict

    @staticmethod
    def _judge_exactly(block: Block, table) -> _Cell:
        """A block of a small argument from its elements, each measured on its own."""
        inside = to_host(block.mask)
        probes = [p for element, found in table if inside[element] for p in found]
        failing = tuple(p for p in probes if p.verdict is Verdict.FAIL)
        if failing:
            return _Cell(block, "wrong", max(failing, key=lambda p: p.discrepancy), failing)
        if probes and all(p.verdict is Verdict.PASS for p in probes):
            return _Cell(block, "right", probes[-1])
        return _Cell(block, "undecided", probes[-1] if probes else None)

    def _partitions(self, index: int) -> list[Partition]:
        value = self.problem.values[index]
        name = self.problem.names[index]
        labels = self.problem.labels[index]
        # In the order they are paid for from the budget: the named axes, then regions.
        found = []
        named = labels is not None and len(labels) == value.ndim
        if labels is not None and named:
            for label in "CBT":
                axis = labels.find(label)
                if axis >= 0 and value.shape[axis] > 1:
                    found.append(partitions.along_axis(value, axis, partitions.AXIS_WORDS[label]))
        for extra in (partitions.distance_to_edge(value, labels), partitions.by_sign(value, name)):
            if extra is not None:
                found.append(extra)
        values = partitions.by_value(value, name)
        if len(values) > 1:
            found.append(Partition("value range", tuple(block for _, block in values)))
        if labels is not None and named:
            for axis, word in partitions.spatial_words(labels):
                if value.shape[axis] > 1:
                    found.append(partitions.along_axis(value, axis, word, max_cells=8))
        return found

    def _where(self, index: int, gradient: Any) -> Diagnosis:
        name = self.problem.names[index]
        table = self.elements(index)
        regions: list[tuple[float, str, Block, list[_Cell]]] = []
        measured: dict[str, list[BlockError]] = {}
        screened = []
        for partition in self._partitions(index):
            cells = self._judge(index, partition, partition.unit)
            measured[partition.unit] = [c.record() for c in cells]
            share = _candidate_share(cells)
            if share is not None:
                screened.append((share, partition, cells))
        # The most specific candidates first: each confirmed block by block, or dropped.
        for _, partition, cells in sorted(screened, key=lambda c: c[0])[:3]:
            cells = self._confirm(index, partition, cells)
            measured[partition.unit] = [c.record() for c in cells]
            region = self._region_of(index, partition, cells)
            if region is not None:
                regions.append(region)
        regions.sort(key=lambda r: r[0])
        where = [text for _, text, _, _ in regions]
        causes: list[str] = []
        if table is not None:
            found = self._where_elements(index, gradient, table)
            found.blocks = measured
            if regions:
                found.where = where + found.where
                factor = self._region_factor(index, gradient, regions[0][2], regions[0][3])
                found.headline = f"the gradient of {name} " + (factor or f"is {where[0]}")
                found.causes = [factor] if factor else []
            return found
        if regions:
            share, text, block, bad = regions[0]
            factor = self._region_factor(index, gradient, block, bad)
            headline = f"the gradient of {name} is {text}"
            if factor is not None:
                headline = f"the gradient of {name} {factor}"
                causes.append(factor)
        else:
            # The worst failing probe, as the argument's record reports it (checks.gradients
            # `_record`), in the same digits: one number for one claim.
            worst = max(_failing(self.verdicts[index]), key=lambda p: p.discrepancy)
            error = worst.relative(worst.discrepancy)
            headline = f"the gradient of {name} is wrong (relative error {error:.3g} along a random direction)"
            if is_complex(self.problem.values[index]) or any(is_complex(y) for y in self.base.outputs):
                # Not a plain missing conjugate (a claim tested above), but the usual suspect.
                causes = ["complex values: check each conj against the convention dL/da + i*dL/db"]
                headline += "; " + causes[0]
        suspect = regions[0][2].mask if regions else None
        examples = self._examples(index, gradient, suspect)
        return Diagnosis(headline, causes, where, examples, blocks=measured)

    def _region_of(self, index: int, partition: Partition, cells: list[_Cell]):
        if partition.unit == "value range":
            return self._value_region(
                index, partitions.by_value(self.problem.values[index], self.problem.names[index]), cells
            )
        return self._region(index, partition, cells)

    def _region(
        self, index: int, partition: Partition, cells: list[_Cell]
    ) -> tuple[float, str, Block, list[_Cell]] | None:
        """ "wrong only in channels 2, 5" when those were wrong and every other was right twice."""
        bad = [c for c in cells if c.verdict == "wrong"]
        if not bad or len(bad) == len(cells) or any(c.verdict == "undecided" for c in cells):
            return None
        name = self.problem.names[index]
        xp = namespace_of(bad[0].block.mask)
        mask = bad[0].block.mask
        for c in bad[1:]:
            mask = xp.logical_or(mask, c.block.mask)
        share = float(fetch(mask.mean())[0])
        right = [c for c in cells if c.verdict == "right"]
        depth = len(bad)
        if partition.unit == "distance from the edge" and [c.block.label for c in bad] == [
            str(d) for d in range(depth)
        ]:
            labels = self.problem.labels[index] or ""
            shape = tuple(self.problem.values[index].shape)
            region = partitions.describe_border(shape, labels, depth)
            if depth == 1:
                strips = partitions.edges(self.problem.values[index], labels)
                edges = Partition("edge", tuple(strips))
                judged = self._confirm(index, edges, self._judge(index, edges, "edges"))
                wrong = [c.block.label for c in judged if c.verdict == "wrong"]
                if wrong and len(wrong) < len(judged):
                    region += f": wrong in {', '.join(wrong)}"
            text = f"wrong only at the border of the spatial plane ({region}); right in its interior"
        elif partition.unit == "sign":
            text = f"wrong only where {bad[0].block.label}; right where {right[0].block.label}"
        else:
            listed = ", ".join(c.block.label for c in bad)
            many = len(bad) > 1 or "-" in bad[0].block.label
            text = (
                f"wrong only in {partition.units if many else partition.unit} {listed} of {name} "
                f"(right in the {len(right)} other{'s' if len(right) > 1 else ''} checked)"
            )
        return share, text, Block(text, mask), bad

    def _value_region(self, index, value_cells, cells) -> tuple[float, str, Block, list[_Cell]] | None:
        if any(c.verdict == "undecided" for c in cells):
            return None
        bad = [k for k, c in enumerate(cells) if c.verdict == "wrong"]
        if not bad or len(bad) == len(cells):
            return None
        name = self.problem.names[index]
        lo, hi = value_cells[bad[0]][0][0], value_cells[bad[-1]][0][1]
        xp = namespace_of(cells[0].block.mask)
        mask = cells[bad[0]].block.mask
        for k in bad[1:]:
            mask = xp.logical_or(mask, cells[k].block.mask)
        share = float(fetch(mask.mean())[0])
        if share > 0.5:
            return None  # "right" only in the tails says little about where it is wrong
        if bad == list(range(bad[0], bad[-1] + 1)):
            if bad[-1] == len(cells) - 1:
                span = f"where {name} >= {lo:.4g}"
            elif bad[0] == 0:
                span = f"where {name} <= {hi:.4g}"
            else:
                span = f"where {name} is in [{lo:.4g}, {hi:.4g}]"
        else:
            span = f"for some ranges of {name} between {lo:.4g} and {hi:.4g}"
        text = f"wrong only {span} (about {100 * share:.2g}% of the elements), right elsewhere"
        return share, text, Block(span, mask), [cells[k] for k in bad]

    def _region_factor(self, index: int, gradient: Any, region: Block, bad: list[_Cell]) -> str | None:
        """ "has the wrong sign where X < 0" when the gradient negated there is right everywhere."""
        # One element measured exactly proposes a ratio as well as two random directions do;
        # either way the corrected gradient must hold before anything is said.
        exact = self.elements(index) is not None
        ratio = _ratio([p for c in bad for p in c.failing], minimum=1 if exact else 2)
        if ratio is None or ratio == 0:
            return None
        xp = namespace_of(gradient)

        def corrected(grads):
            return xp.where(region.mask, grads[index] / ratio, grads[index])

        if not self.holds(index, corrected, (None, region)):
            return None
        text = region.label.split(";")[0].replace("wrong only ", "", 1)
        if abs(ratio + 1) <= 1e-4:
            return f"has the wrong sign {text}" + self._rest(region.label)
        return f"is off by a factor {name_factor(ratio, self.context)} {text}" + self._rest(region.label)

    @staticmethod
    def _rest(label: str) -> str:
        _, sep, rest = label.partition(";")
        return f";{rest}" if sep else ""

    def _where_elements(self, index: int, gradient: Any, table) -> Diagnosis:
        name = self.problem.names[index]
        examples = [e for e in (self._example(gradient, element, probes) for element, probes in table) if e]
        examples.sort(key=lambda e: (not e.wrong, -e.abs_error))
        wrong = [e for e in examples if e.wrong]
        where = []
        if wrong and len(wrong) < len(examples):
            listed = ", ".join(str(e.index) for e in wrong[:8]) + (" ..." if len(wrong) > 8 else "")
            text = f"wrong at {len(wrong)} of {len(examples)} elements of {name}: {listed}"
            where.append(text)
        if where:
            headline = f"the gradient of {name} is {where[0]}"
        elif wrong:
            worst = wrong[0]
            headline = (
                f"the gradient of {name} is wrong at every element measured "
                f"(largest error {worst.abs_error:.3g} at {name}{worst.index}, relative {worst.rel_error:.3g})"
            )
        else:
            first = _failing(self.verdicts[index])[0]
            headline = f"the gradient of {name} is wrong (relative error {first.relative(first.discrepancy):.2g} along a random direction)"
        return Diagnosis(headline, [], where, examples[:5])

    def _example(self, gradient: Any, element: tuple[int, ...], probes: list[Probe]) -> ElementExample | None:
        if any(p.verdict not in (Verdict.PASS, Verdict.FAIL) for p in probes):
            return None
        value = to_host(gradient[element]).item()
        analytic: complex | float = complex(value) if is_complex(gradient) else float(value.real)
        numeric: complex | float = (
            probes[0].numeric if len(probes) == 1 else complex(probes[0].numeric, probes[1].numeric)
        )
        worst = max(probes, key=lambda p: (p.verdict is Verdict.FAIL, p.tolerance))
        abs_error = abs(analytic - numeric)
        return ElementExample(
            index=element,
            analytic=analytic,
            numeric=numeric,
            abs_error=abs_error,
            rel_error=abs_error / abs(numeric) if numeric else math.inf,
            tolerance=worst.tolerance,
            wrong=any(p.verdict is Verdict.FAIL for p in probes),
        )

    def _examples(self, index: int, gradient: Any, suspect: Any) -> list[ElementExample]:
        """A few elements (in the region found, if any) measured one at a time."""
        if self.budget.over():
            return []
        value = self.problem.values[index]
        xp = namespace_of(value)
        mask = xp.ones(value.shape, dtype=bool) if suspect is None else suspect
        candidates = xp.argwhere(mask)
        rng = self.rng(f"examples {self.problem.names[index]}")
        chosen = rng.choice(len(candidates), size=min(4, len(candidates)), replace=False)
        picks = [tuple(int(i) for i in el) for el in to_host(candidates[xp.asarray(chosen)]).tolist()]
        units = (1, 1j) if is_complex(value) else (1,)
        found = []
        for element in picks:
            try:
                probes = [element_probe(self.problem, self.base, index, element, self.tol, u) for u in units]
            except EvaluationError:
                break
            example = self._example(gradient, element, probes)
            if example is not None:
                found.append(example)
        return sorted(found, key=lambda e: (not e.wrong, -e.abs_error))


def _slot(k: int) -> Callable[[list[Any]], Any]:
    """The gradient backward returned in argument k's place."""
    return lambda grads: grads[k]


def _permuted(k: int, perm: tuple[int, ...]) -> Callable[[list[Any]], Any]:
    """Argument k's gradient with its axes permuted."""
    return lambda grads: grads[k].transpose(perm)


def _sq(a: Any) -> Any:
    return namespace_of(a).vdot(a, a).real
