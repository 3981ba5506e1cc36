"""The evidence a claim about a wrong gradient is tested against.

A claim about a wrong gradient g ("off by a factor 2", "the gradient of b", "the wrong sign
where X < 0") is a claim that a corrected gradient (g / 2, the other slot, g negated there)
is right. So each claim is tested the way the gradient itself was: the corrected gradient
must agree with every probe that failed and with a fresh probe drawn to test it. Arguments
of a few hundred elements or fewer (fewer at large layouts: each element costs two forward
calls) are measured element by element instead, exactly.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from layercheck.numerics.arrays import dot, fetch, is_complex, namespace_of, random_like
from layercheck.numerics.blocks import Block
from layercheck.numerics.gradients.budget import WorkBudget, budgeted
from layercheck.numerics.gradients.engine import (
    ArgumentVerdict,
    Baseline,
    EvaluationError,
    GradientProblem,
    Probe,
    Tolerances,
    Verdict,
    check_argument,
    element_probe,
    make_baseline,
    random_direction,
    step_scale,
)

__all__ = ["ELEMENTWISE_LIMIT", "ELEMENTWISE_WORK", "Corrected", "Element", "Evidence", "failing", "worst_failing"]

# On failure, arguments this small are measured element by element (to test a claim and to
# say where it is wrong), while the elements times the size of the outputs they are measured
# on stay under a work bound: each element costs two forward calls. 256 elements at a small
# layout; about 6 at MATLAB's seed layout 24,24,20,128 (a fraction of a second there).
ELEMENTWISE_LIMIT = 256
ELEMENTWISE_WORK = 1e7
_ELEMENT_CALLS = 2  # the fewest calls of the layer an element's probe makes (a central difference)
# A corrected gradient may miss a probe's tolerance by this factor and still be the right one:
# a tolerance is tight enough to make a pass decisive, and its numeric side may be that noisy.
_CLAIM_SLACK = 10.0
# Where the wrong gradient failed a probe, a correction must remove nearly all of its error:
# an error that is not what the claim says (per-entry noise, a missing term) leaves a
# residual of its own size on a random direction, whatever factor is tried.
_CLAIM_RESIDUAL = 0.05
_LINEARITY_SCALE = -2.0  # dL/dY times this must give every gradient times this

# A corrected gradient: from backward's gradients for the loss a probe measured, the gradient
# the claim says is right (None where it cannot say: it needs the unmasked loss).
Corrected = Callable[[list[Any]], Any]
# One element of a small argument and its probes (one, or two for a complex argument).
Element = tuple[tuple[int, ...], list[Probe]]


def failing(verdict: ArgumentVerdict) -> list[Probe]:
    return [p for p in verdict.probes if p.verdict is Verdict.FAIL]


def worst_failing(verdict: ArgumentVerdict) -> Probe | None:
    """The failing probe with the largest error: the one whose numbers a report states."""
    return max(failing(verdict), key=lambda p: p.discrepancy, default=None)


def decided(probes: Sequence[Probe]) -> list[Probe]:
    return [p for p in probes if p.verdict in (Verdict.PASS, Verdict.FAIL)]


def _meets(mask: Any, region: Any) -> bool:
    """Whether two masks of one argument share an element."""
    return bool(namespace_of(mask).any(mask & region))


def admits(probe: Probe, gradient: Any) -> bool:
    """`gradient` would have passed `probe` (whose numeric side is trustworthy) within
    `_CLAIM_SLACK` times its tolerance, and, where the probe failed, with at most
    `_CLAIM_RESIDUAL` of the probe's own error left."""
    if gradient is None or tuple(gradient.shape) != tuple(probe.direction.shape):
        return False
    if not probe.gradients:
        return False
    terms = gradient * probe.direction
    analytic, terms_sq = fetch(dot(gradient, probe.direction), dot(terms, terms))
    if not math.isfinite(analytic):
        return False
    residual = abs(analytic - probe.numeric)
    if residual > _CLAIM_SLACK * probe._tolerance(analytic, math.sqrt(terms_sq)):
        return False
    return probe.verdict is not Verdict.FAIL or residual <= _CLAIM_RESIDUAL * probe.discrepancy


class Evidence:
    """The probes of one failed gradient problem, and more drawn on demand to test a claim;
    every call of the layer is charged to the diagnosis's budget."""

    def __init__(
        self,
        problem: GradientProblem,
        base: Baseline,
        verdicts: list[ArgumentVerdict],
        tol: Tolerances,
        rng: Callable[[str], np.random.Generator],
        budget: WorkBudget,
        small_blocks: Mapping[int, Sequence[tuple[str, float, Any]]] | None = None,
        screen: Callable[[], Evidence | None] | None = None,
    ):
        self.budget = budget
        # The evidence of the first observations of a large batch (`sub_batch`): a claim shown
        # on several of them (a dependence across observations left out) is shown there, at a
        # fraction of the cost, and proven on the whole batch by its two ends.
        self._screen = screen
        # Each argument's blocks whose gradient is small against the rest (`small_scale_blocks`):
        # no probe of the whole argument sees them, so a claim about all of it is tested in
        # each of them on its own.
        self.small_blocks = small_blocks or {}
        self.problem = budgeted(problem, budget)
        self.base = base
        self.verdicts = verdicts
        self.tol = tol
        self.rng = rng
        self._fresh: dict[tuple[int, str], Probe | None] = {}
        self._elements: dict[int, list[Element] | None] = {}  # made (None: the layer raised)
        self._refused: dict[int, int] = {}  # not made: for as many calls or more

    def name(self, index: int) -> str:
        return self.problem.names[index]

    def screen(self) -> Evidence | None:
        """The first observations' evidence (made on first use), or None where the batch is
        too small to have any (`sub_batch.observations_for`) or the layer cannot run on them."""
        return None if self._screen is None else self._screen()

    def complex_values(self, index: int) -> bool:
        gradient = self.base.gradients[index]
        return any(is_complex(v) for v in self.problem.values) or (gradient is not None and is_complex(gradient))

    def fresh_probe(self, index: int, support: Block | None = None) -> Probe | None:
        """A decided probe of a new random direction (on `support` when given), drawn to test
        a claim: the gradient check's own loop, so that the step adapts as it does there. It
        stops at the first decided probe, failing or not: a claim is tested on one probe, and a
        second failure of backward's own gradient would only confirm what the check found."""
        key = (index, "" if support is None else support.label)
        if key not in self._fresh and self.budget.over():
            return None
        if key not in self._fresh:
            rng = self.rng(f"claim {self.problem.names[index]} {key[1]}")
            mask = None if support is None else support.mask
            try:
                verdict = check_argument(
                    self.problem, self.base, index, self.tol, rng, max_probes=4, support=mask, fails_needed=1
                )
                found = decided(verdict.probes)
            except EvaluationError:
                found = []
            self._fresh[key] = found[-1] if found else None
        return self._fresh[key]

    def elements(self, index: int, cheaper_than: int | None = None) -> list[Element] | None:
        """Every element's probes for a small argument; None for a large one (or when what is
        left of the budget cannot pay for them, or the layer raised). Measured where the
        elements times the size of the outputs stay under ELEMENTWISE_WORK, or, with
        `cheaper_than`, where their calls are fewer than that: a localization's probes of
        blocks would make more (a beta of 20 channels at 24,24,20,48:SSCB: 40 calls, where its
        screens and their confirmations took 88)."""
        if index in self._elements:
            return self._elements[index]
        if self._refused.get(index, -1) >= (cheaper_than or 0) or self.budget.over():
            return None
        value = self.problem.values[index]
        outputs = sum(int(y.size) for y in self.base.outputs)
        units = (1, 1j) if is_complex(value) else (1,)
        calls = _ELEMENT_CALLS * int(value.size) * len(units)
        # A table cut short by the budget is worth nothing, and would leave nothing for
        # the probes that decide without it (two 16x16 weights swapped: the second table
        # spent the rest, and the swap was said of one of them only). It may take half of
        # what is left, no more: the rest proves what it shows (a sub-batch's table of 256
        # elements took 512 of 600 calls, and nothing was left to carry its channel over
        # to the whole batch: nothing was said).
        affordable = self.budget.affords(2 * calls, self.problem.share)
        if value.size > ELEMENTWISE_LIMIT or not affordable:
            self._refused[index] = sys.maxsize  # never made
            return None
        if value.size * outputs > ELEMENTWISE_WORK and (cheaper_than is None or calls >= cheaper_than):
            self._refused[index] = cheaper_than or 0  # made, if at all, for fewer calls than more probes
            return None
        table: list[Element] | None
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
        return table

    def measured(self, index: int) -> bool:
        """Whether a claim already had every element of the argument measured (`elements` made
        its table): a localization reads the table, and calls the layer no more."""
        return self._elements.get(index) is not None

    def holds(
        self, index: int, corrected: Corrected, supports: tuple[Block | None, ...] = (None,), region: Any = None
    ) -> bool:
        """Is `corrected(gradients)` the right gradient of argument `index`? Element by element
        for a small argument; else it must pass every failing probe and a fresh probe on each
        of `supports` (None: the whole argument). Where `corrected` cannot say for a probe,
        that probe is left out, and a fresh one must still pass. `region`: the mask of the
        elements `corrected` changes, where it corrects part of the argument (None: all), and
        says it right elsewhere."""
        table = self.elements(index)
        if table is not None:
            found = decided([p for _, probes in table for p in probes])
            informative = [p for p in found if abs(p.numeric) > 2 * p.fixed_tolerance]
            return bool(informative) and all(admits(p, corrected(p.gradients)) for p in found)
        for probe in failing(self.verdicts[index]):
            candidate = corrected(probe.gradients)
            if candidate is not None and not admits(probe, candidate):
                return False
        for support in supports:
            fresh = self.fresh_probe(index, support)
            if fresh is None or abs(fresh.numeric) <= 2 * fresh.fixed_tolerance:
                return False
            if not admits(fresh, corrected(fresh.gradients)):
                return False
        if None in supports:
            # A claim about the whole argument ("off by a factor 2") must hold where its
            # gradient is too small for a probe of the whole to see: a channel right there
            # would be made wrong by the correction. Each such block is probed on its own.
            # A block the correction leaves as backward returned it (outside its `region`) must
            # not be found wrong ("right in the others" would be false there), but may stay
            # undecided: a channel no probe can tell from round-off (a saturated gate, 1e-20 of
            # the rest) is as undecided without the factor as with it, and the factor said in
            # the region is no less proven for it (`wrong_outside`).
            for where, _, mask in self.small_blocks.get(index, ()):
                if region is not None and not _meets(mask, region):
                    continue
                fresh = self._small_block_probe(index, where, mask)
                if fresh is None or not admits(fresh, corrected(fresh.gradients)):
                    return False
            if region is not None and self.wrong_outside(index, region):
                return False
        return True

    def wrong_outside(self, index: int, region: Any) -> bool:
        """Whether a block of argument `index` whose gradient is small, outside `region` (a mask
        of it), is found wrong on its own: a probe of the whole cannot see such a block, and a
        region said wrong is said to be all that is ("right in the others"). A block no probe
        decides is not found wrong."""
        return any(
            fresh is not None and fresh.verdict is Verdict.FAIL for _, fresh in self._outside_probes(index, region)
        )

    def found_wrong_outside(self, index: int, region: Any) -> list[Any]:
        """The masks of the small blocks of argument `index` outside `region` that their own
        probes found wrong (`wrong_outside`, each of them)."""
        return [
            mask
            for mask, fresh in self._outside_probes(index, region)
            if fresh is not None and fresh.verdict is Verdict.FAIL
        ]

    def undecided_outside(self, index: int, region: Any) -> list[Any]:
        """The masks of the elements of argument `index` outside `region` (a mask of it) in
        its blocks whose gradient is small that no probe of their own decided right: a block
        outside whose probe (the one `wrong_outside` drew) decided nothing, and the part outside
        of a block that meets the region (probed, if at all, with the region in it)."""
        meeting = [mask & ~region for _, _, mask in self.small_blocks.get(index, ()) if _meets(mask, region)]
        return meeting + [
            mask
            for mask, fresh in self._outside_probes(index, region)
            if fresh is None or fresh.verdict is not Verdict.PASS
        ]

    def _outside_probes(self, index: int, region: Any) -> Iterator[tuple[Any, Probe | None]]:
        """Each small block of argument `index` that does not meet `region`, with its own
        probe (drawn when first asked for: a caller that stops early draws no more)."""
        for where, _, mask in self.small_blocks.get(index, ()):
            if not _meets(mask, region):
                yield mask, self._small_block_probe(index, where, mask)

    def _small_block_probe(self, index: int, where: str, mask: Any) -> Probe | None:
        """The fresh probe of one small block (`small_blocks`), one per block: every caller
        asks under the same label, so that it is drawn once."""
        return self.fresh_probe(index, Block(f"small block: {where}", mask))

    def with_loss(
        self, index: int, weights: list[Any], support: Any, purpose: str, fails_needed: int = 2
    ) -> ArgumentVerdict | None:
        """The argument `index` checked on `support` (a mask of it) for the loss weighted by
        `weights` instead of the check's: backward once more, then the gradient check's own
        loop (`fails_needed` failing probes fail it). None when the budget is spent or the
        layer raised."""
        verdicts = self.with_loss_on(index, weights, [(support, purpose)], fails_needed)
        return None if verdicts is None else verdicts[0]

    def with_loss_on(
        self, index: int, weights: list[Any], supports: Sequence[tuple[Any, str]], fails_needed: int = 2
    ) -> list[ArgumentVerdict] | None:
        """`with_loss` on each of `supports` (a mask, and what its directions are drawn for),
        with one backward for all of them."""
        if self.budget.over():
            return None
        try:
            base = make_baseline(self.problem, self.base.outputs, weights, self.tol)
            if base.gradients[index] is None:
                return None
            return [
                check_argument(
                    self.problem,
                    base,
                    index,
                    self.tol,
                    self.rng(f"claim {self.problem.names[index]} {purpose}"),
                    max_probes=4,
                    support=support,
                    fails_needed=fails_needed,
                )
                for support, purpose in supports
            ]
        except EvaluationError:
            return None

    def moved_alone(self, index: int, support: Any, purpose: str) -> list[Any] | None:
        """The outputs with argument `index` moved by the gradient check's step on `support`
        alone (one call of the layer); None when the budget is spent or the layer raised."""
        if self.budget.over():
            return None
        value = self.problem.values[index]
        t = self.tol.step * step_scale(value[support])
        move = random_direction(value, self.rng(f"claim {self.problem.names[index]} {purpose}"), support)
        move *= t
        try:
            return self.problem.evaluate(index, value + move)
        except EvaluationError:
            return None

    def unmasked(self, candidate: Any) -> Corrected:
        """A corrected gradient that holds for the loss with every output weighted."""
        return lambda gradients: candidate if gradients is self.base.gradients else None

    def scaled_gradients(self) -> tuple[float, list[Any] | None]:
        """backward's gradients for `scale` dL/dY, with the scale (None when it raised): a
        negative scale catches what only looks linear under positive scaling (|dL/dY|)."""
        return _LINEARITY_SCALE, self._scaled

    @functools.cached_property
    def _scaled(self) -> list[Any] | None:
        return self._backward_for([_LINEARITY_SCALE * w for w in self.base.weights])

    def redrawn_gradients(self) -> list[Any] | None:
        """backward's gradients for a dL/dY drawn anew, of the check's own dL/dY's shapes and
        kinds (None when it raised): a backward that ignores dL/dY gives its gradients again;
        one that gives them again for a multiple of dL/dY only is invariant to its scale (it
        normalizes dL/dY), which is not ignoring it."""
        if self.budget.over():
            return None
        rng = self.rng("claim redrawn dL/dY")
        return self._backward_for([random_like(w, rng) for w in self.base.weights])

    def repeated_gradients(self) -> list[Any] | None:
        """backward's gradients for the check's own dL/dY, called again (None when it raised):
        what the base gradients are when backward is a function of what it is given. A
        backward that reads what a later call left (a module global, an array the engine has
        since written into) gives others, and is not linear or not in dL/dY's terms alone."""
        return self._repeated

    @functools.cached_property
    def _repeated(self) -> list[Any] | None:
        return self._backward_for(list(self.base.weights))

    def _backward_for(self, weights: list[Any]) -> list[Any] | None:
        """backward's gradients for the loss weighted by `weights` (None when it raised)."""
        try:
            return self.problem.gradients(weights)
        except EvaluationError:
            return None
