"""What is wrong with a gradient that failed, and where: every claim proven before it is said.

The diagnosis of each failed argument tries the causes of `claims` in order, then says
where the gradient is wrong (`localization`); a cause or a region is a `Finding`. Equal
findings about several arguments are grouped into one (`group`), so that a report says each
claim once.
"""

from __future__ import annotations

import dataclasses
import enum
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from layercheck.numerics.arrays import fetch, namespace_of, to_host
from layercheck.numerics.blocks import AXIS_WORDS, axis_mask
from layercheck.numerics.gradients import claims
from layercheck.numerics.gradients.budget import Limit, WorkBudget
from layercheck.numerics.gradients.engine import (
    ArgumentVerdict,
    Baseline,
    EvaluationError,
    GradientProblem,
    Tolerances,
    Verdict,
    check_argument,
    reduced_resolution_of,
)
from layercheck.numerics.gradients.evidence import Evidence, worst_failing
from layercheck.numerics.gradients.findings import (
    BlockError,
    Cause,
    Diagnosis,
    ElementExample,
    Factor,
    Finding,
    Region,
    RegionKind,
    SubBatchSize,
)
from layercheck.numerics.gradients.localization import Localization, numbers_of
from layercheck.numerics.gradients.sub_batch import SubBatch, last_at_batch_end, whole_batch_mask
from layercheck.status import Status

__all__ = ["Diagnostician", "group"]


class _Elsewhere(enum.Enum):
    """Why `_localized_on` found nothing to say on a sub-batch that a window of the batch past
    it may still show (`Diagnostician._wrong_window`)."""

    RIGHT_THERE = "the argument's gradient is right on the sub-batch"
    # Wrong in observations of the sub-batch that the whole batch has right: a loop that stops
    # one short of the batch skips observation 7 of 8, and 127 of 128.
    OBSERVATIONS_NOT_HELD = "wrong in observations of the sub-batch that are right in the batch"


@dataclasses.dataclass(frozen=True)
class _Local:
    """An argument localized on a sub-batch: what `Localization.run` found there, and the masks
    (of the sub-batch's argument) of its region and of each wrong block of it."""

    finding: Finding
    examples: tuple[ElementExample, ...]
    blocks: dict[str, tuple[BlockError, ...]]
    mask: Any
    block_masks: tuple[Any, ...]


def _at_batch_end(region: Region | None, sub: SubBatch, index: int) -> Region | None:
    """A region of the first observations of the batch along their batch axis that holds the
    last of them, named with the batch's last in its place (`last_at_batch_end`); None for any
    other."""
    if region is None or sub.first or sub.axes[index] is None or sub.batch <= sub.observations:
        return None
    last = str(sub.observations - 1)
    if region.kind is not RegionKind.BLOCKS or region.unit != AXIS_WORDS["B"] or last not in region.wrong:
        return None
    return dataclasses.replace(region, wrong=tuple(str(sub.batch - 1) if w == last else w for w in region.wrong))


class _SubBatches:
    """The sub-batches of one diagnosis, each made when a claim or a localization first asks
    for it (the first observations, or a window of the batch from a given observation), and
    the claims' evidence on the first (`Evidence.screen`). Apart from the `Diagnostician`: the
    evidence refers to this, and nothing here to the diagnostician or its evidence (no cycle
    keeps their arrays past the check)."""

    def __init__(
        self,
        make: Callable[[int], SubBatch | None] | None,
        budget: WorkBudget,
        whole: list[Any],
        tol: Tolerances,
        rng: Callable[[str], np.random.Generator],
    ):
        self._make, self._budget, self._whole, self._tol, self._rng = make, budget, whole, tol, rng
        self._made: dict[int, SubBatch | None] = {}
        self._screen: list[Evidence | None] = []  # made once

    def get(self, start: int = 0) -> SubBatch | None:
        if self._make is not None and start not in self._made:
            self._made[start] = None
            # Its base point, a forward and a backward on the sub-batch, is charged as two calls
            # on the whole batch: its share of one is known once it is made.
            try:
                self._budget.charge()
                self._budget.charge()
            except EvaluationError:
                return None
            sub = self._make(start)
            # A backward that returns no gradient, or NaN, on a few observations only (where it
            # returns numbers on the whole batch) is no place to localize its other bugs.
            if sub is not None and _like_the_whole(sub.base.gradients, self._whole):
                self._made[start] = sub
        return self._made.get(start)

    def screen(self) -> Evidence | None:
        if not self._screen:
            sub, rng = self.get(), self._rng
            self._screen.append(
                None
                if sub is None
                else Evidence(
                    sub.problem, sub.base, [], self._tol, lambda purpose: rng(f"sub-batch {purpose}"), self._budget
                )
            )
        return self._screen[0]


class Diagnostician:
    """Diagnoses the failed arguments of one gradient problem within a budget of calls of the
    layer; what several arguments share (the backward with a scaled dL/dY) is run once."""

    def __init__(
        self,
        problem: GradientProblem,
        base: Baseline,
        verdicts: list[ArgumentVerdict],
        tol: Tolerances,
        rng: Callable[[str], np.random.Generator],
        budget: WorkBudget | None = None,
        sub_batch: Callable[[int], SubBatch | None] | None = None,
        *,
        small_blocks: Mapping[int, Sequence[tuple[str, float, Any]]],
    ):
        self.budget = WorkBudget(sys.maxsize) if budget is None else budget
        self.budget.start()
        # Each failed argument's blocks whose gradient is small (`small_scale_blocks`, as the
        # check found them), held by the evidence: a claim about a whole argument is tested in
        # them, and a sub-batch's finding is proven in them on the whole batch.
        self._sub_batches = _SubBatches(sub_batch, self.budget, base.gradients, tol, rng)
        screen = self._sub_batches.screen
        self.evidence = Evidence(problem, base, verdicts, tol, rng, self.budget, small_blocks, screen)
        self._past: dict[tuple[int, int], bool] = {}  # (argument, sub-batch) -> wrong past it
        self._locals: dict[tuple[int, int], _Local | _Elsewhere | None] = {}  # (argument, sub-batch)

    def diagnose(self, index: int) -> Diagnosis:
        evidence = self.evidence
        gradient = evidence.base.gradients[index]
        assert gradient is not None  # a failed argument has a gradient
        finding: Finding | None
        xp = namespace_of(gradient)
        finite = xp.isfinite(gradient)
        if not bool(finite.all()):
            return self._diagnosis(claims.non_finite(evidence, index, finite))
        if not bool(xp.any(gradient)):
            return self._diagnosis(claims.zero(evidence, index))
        for claim in claims.CLAIMS:
            finding = claim(evidence, index, gradient)
            if finding is not None:
                return self._diagnosis(finding)
        # Where a claim had every element measured on the whole batch, a localization there
        # reads them: the sub-batch would measure them again (a beta of 20 channels at
        # 24,24,20,16:SSCB: 40 calls of the whole batch, then 45 of a quarter of it).
        on_sub_batch = None if evidence.measured(index) else self._on_sub_batch(index)
        if on_sub_batch is not None:
            return on_sub_batch
        finding, regions, examples, blocks = Localization(evidence, index).run(gradient)
        return self._diagnosis(finding, regions, examples, blocks)

    def sub_batch(self, start: int = 0) -> SubBatch | None:
        """The sub-batch of the observations from `start` (made once, and kept)."""
        return self._sub_batches.get(start)

    def _on_sub_batch(self, index: int) -> Diagnosis | None:
        """The argument localized on the sub-batch and its finding proven on the whole
        batch; None where there is no sub-batch, the argument is right there and in no window
        past it (`_wrong_window`), or what was found does not hold on the whole batch."""
        sub = self.sub_batch()
        if sub is None:
            return None
        found = self._localized_on(index, sub)
        if not isinstance(found, _Elsewhere):
            return found
        # Right on the first observations, or wrong in some of them that the whole batch has
        # right, and wrong past them: localized on a window of the observations a bisection
        # found wrong, where localizing the whole batch took hundreds of its calls.
        start = self._wrong_window(index, sub)
        window = None if start is None else self.sub_batch(start)
        if window is not None:
            in_window = self._localized_on(index, window, narrower_only=True)
            if in_window is not None and not isinstance(in_window, _Elsewhere):
                return in_window
        if found is _Elsewhere.OBSERVATIONS_NOT_HELD:
            # Wrong in the sub-batch's last observation, which the whole batch has right, and
            # in no window past it that holds: perhaps in the batch's last, as the first 8 run
            # alone have their own (a loop over observations 1 to B - 2 leaves out both ends).
            at_end = self._localized_on(index, sub, at_end=True)
            return None if isinstance(at_end, _Elsewhere) else at_end
        return None

    def _local(self, index: int, sub: SubBatch) -> _Local | _Elsewhere | None:
        """The argument localized on `sub` (once per sub-batch: `_on_sub_batch` may read it
        again); `_Elsewhere.RIGHT_THERE` where it is right there, None where nothing decided."""
        key = (index, sub.first)
        if key not in self._locals:
            self._locals[key] = self._localize(index, sub)
        return self._locals[key]

    def _localize(self, index: int, sub: SubBatch) -> _Local | _Elsewhere | None:
        whole, name = self.evidence, self.evidence.name(index)
        tol, rng = whole.tol, whole.rng
        where = f"sub-batch from {sub.first}" if sub.first else "sub-batch"
        local = Evidence(sub.problem, sub.base, [], tol, lambda purpose: rng(f"{where} {purpose}"), self.budget)
        try:  # proven wrong on the sub-batch first, as on the whole batch: two failing probes
            verdict = check_argument(local.problem, sub.base, index, tol, rng(f"{where} {name}"))
        except EvaluationError:
            return None
        if verdict.status is Status.PASSED:
            return _Elsewhere.RIGHT_THERE
        if verdict.status is not Status.FAILED:
            return None
        local.verdicts = [
            verdict if i == index else ArgumentVerdict(i, Status.PASSED, []) for i in range(len(sub.problem.names))
        ]
        axis = sub.axes[index]
        localization = Localization(local, index, None if axis is None or not sub.first else (axis, sub.first))
        finding, _, examples, blocks = localization.run(sub.base.gradients[index])
        return _Local(finding, examples, blocks, localization.finding_mask, tuple(localization.finding_blocks))

    def _localized_on(
        self, index: int, sub: SubBatch, narrower_only: bool = False, at_end: bool = False
    ) -> Diagnosis | _Elsewhere | None:
        """The argument localized on `sub` and its finding proven on the whole batch; None
        where what was found there does not hold on the whole batch (or, `narrower_only`, is
        nothing narrower than the argument); `_Elsewhere` where a window of the batch past the
        sub-batch may show what it did not. `at_end`: a region of the first observations that
        holds their last is carried over with that one standing for the batch's last
        (`_at_batch_end`); said without the blocks and elements measured there, which name it
        by its place in the sub-batch."""
        found = self._local(index, sub)
        if not isinstance(found, _Local):
            return found
        whole, name = self.evidence, self.evidence.name(index)
        finding, examples, blocks = found.finding, found.examples, found.blocks
        size: SubBatchSize | None = SubBatchSize(sub.observations, sub.batch, sub.first)
        if at_end:
            carried = _at_batch_end(finding.region, sub, index)
            if carried is None:
                return None
            finding, examples, blocks, size = dataclasses.replace(finding, region=carried), (), {}, None
        if narrower_only and finding.region is not None and finding.region.kind is RegionKind.ELEMENTS:
            return None  # elements of a window, measured one by one: the whole batch says where
        if finding.region is None:
            # Nothing narrower than the argument on the sub-batch. Where the batch's last
            # observations are right, the error is a run of observations from the first: the
            # sub-batch's alone (observations 0-7), or one that outlasts it (0-15): the whole
            # batch says which. Where they are wrong too, nothing narrower is said.
            if narrower_only or not self._wrong_at_end(index, sub):
                return None
            probe = worst_failing(whole.verdicts[index])
            assert probe is not None  # a failed argument failed a probe
            unexplained = Finding(
                Cause.UNEXPLAINED, (name,), numbers=numbers_of(probe), complex_values=finding.complex_values
            )
            return self._diagnosis(unexplained, (), examples, blocks, size)
        if found.mask is None:
            return None
        value, axis = whole.problem.values[index], sub.axes[index]

        def carried_over(mask: Any) -> Any:
            assert finding.region is not None
            if at_end:
                assert axis is not None  # `_at_batch_end` carries over a region along the batch axis alone
                return last_at_batch_end(mask, axis, value, sub.observations)
            return whole_batch_mask(finding.region, mask, axis, value, sub.observations, sub.first)

        mask = carried_over(found.mask)
        each = [carried_over(m) for m in found.block_masks]
        if finding.region.kind not in (RegionKind.BLOCKS, RegionKind.BORDER):
            each = []  # a sign or a range of values: one region, proven whole
        held = None if mask is None or any(m is None for m in each) else self._holds(index, finding, mask, each)
        if mask is None or held is None:
            along_batch = finding.region.unit == AXIS_WORDS["B"]
            return _Elsewhere.OBSERVATIONS_NOT_HELD if along_batch and not narrower_only else None
        (share,) = fetch(mask.mean())
        region = dataclasses.replace(finding.region, share=float(share))
        if held:
            # The rest of the whole batch shown right only to a reduced resolution: every block
            # said right, to the coarser of it and the sub-batch's.
            region = dataclasses.replace(region, resolution=max(held, region.resolution), reduced=())
        if axis is not None and region.unit == AXIS_WORDS["B"]:
            # The observations outside were proven right on the whole batch (`_holds`): counted
            # there, not among the sub-batch's few ("right in the 127 others checked").
            others = tuple(k for k in range(mask.ndim) if k != axis)
            (wrong,) = fetch(namespace_of(mask).count_nonzero(mask.any(axis=others)))
            region = dataclasses.replace(region, right=sub.batch - int(wrong))
        finding = dataclasses.replace(finding, region=region)
        if finding.cause is Cause.ZERO and not claims.zero_on(whole.base.gradients[index], mask):
            # Zero on the first observations: wrong on the whole batch's region, not zero there.
            finding = dataclasses.replace(finding, cause=Cause.LOCALIZED)
        if isinstance(finding.detail, Factor):  # named among the whole batch's sizes (1/batch size)
            problem = whole.problem
            named = claims.name_factor(finding.detail.ratio, claims.sizes(problem.values, problem.labels))
            finding = dataclasses.replace(finding, detail=named)
        return self._diagnosis(finding, (region,), examples, blocks, size)

    def _holds(self, index: int, finding: Finding, mask: Any, blocks: list[Any]) -> float | None:
        """A finding of the sub-batch, on the whole batch's `mask` (and the masks of its wrong
        `blocks`): where a factor is claimed, the gradient corrected there passes; else each
        wrong block fails a probe of its own, and one passes everywhere else. And each block
        outside whose gradient is small (a probe of the whole cannot see it) passes alone:
        "right in the others" is said of the whole batch's too. None where it does not hold;
        else the coarsest reduced resolution the rest passed at, coarser than the full one
        (0: none was)."""
        whole = self.evidence
        xp = namespace_of(mask)
        rng = whole.rng(f"sub-batch region {whole.name(index)}")
        right: list[Any] = []  # the parts of the rest each passed alone
        if finding.cause in (Cause.FACTOR, Cause.WRONG_SIGN):
            ratio = finding.detail.ratio if isinstance(finding.detail, Factor) else -1.0

            def corrected(grads: list[Any]) -> Any:
                return xp.where(mask, grads[index] / ratio, grads[index])

            if not whole.holds(index, corrected):
                return None
        elif not all(self._probe(index, rng, block) is Status.FAILED for block in blocks or [mask]):
            return None
        else:
            right.append(~mask)
        outside = [block & ~mask for _, _, block in self.evidence.small_blocks[index]]
        right += [block for block in outside if bool(xp.any(block))]
        full, resolution = whole.tol.resolution[0], 0.0
        for support in right:
            verdict = self._verdict(index, rng, support)
            if verdict is None or verdict.status is not Status.PASSED:
                return None
            if verdict.reduced_resolution > full:
                resolution = max(resolution, verdict.reduced_resolution)
        # A small argument's elements, each measured on the whole batch for the factor's test
        # (which reads the decided ones alone): each outside the region must be right there,
        # where an element no probe decided is not (a learnable noisy past the sub-batch).
        table = whole.elements(index) if finding.cause in (Cause.FACTOR, Cause.WRONG_SIGN) else None
        if table is not None:
            inside = to_host(mask)
            for element, probes in table:
                if inside[element]:
                    continue
                if any(p.verdict is not Verdict.PASS for p in probes):
                    return None
                coarse = reduced_resolution_of(probes)
                if coarse > full:
                    resolution = max(resolution, coarse)
        return resolution

    def _probe(self, index: int, rng: np.random.Generator, support: Any) -> Status:
        """The verdict of one probe of the whole batch's argument on `support` (decided on its
        first failure: the region is proven wrong by one, as a screened block is)."""
        verdict = self._verdict(index, rng, support)
        return Status.INCOMPLETE if verdict is None else verdict.status

    def _verdict(self, index: int, rng: np.random.Generator, support: Any) -> ArgumentVerdict | None:
        """`_probe`'s verdict (None where the layer raised)."""
        whole = self.evidence
        try:
            return check_argument(
                whole.problem, whole.base, index, whole.tol, rng, max_probes=3, support=support, fails_needed=1
            )
        except EvaluationError:
            return None

    def _wrong_window(self, index: int, sub: SubBatch) -> int | None:
        """The first observation of a window of the sub-batch's size past the first
        observations where the argument's gradient is wrong, found by halving the rest of the
        batch with probes of the whole batch (a few, where localizing it took hundreds); None
        where no half fails."""
        axis = sub.axes[index]
        if axis is None or not self._wrong_past(index, sub):
            return None
        value = self.evidence.problem.values[index]
        rng = self.evidence.rng(f"sub-batch window {self.evidence.name(index)}")
        low, high = sub.first + sub.observations, sub.batch
        while high - low > sub.observations:
            middle = (low + high) // 2
            left = axis_mask(tuple(value.shape), axis, low, middle, namespace_of(value))
            if self._probe(index, rng, left) is Status.FAILED:
                high = middle
                continue
            right = axis_mask(tuple(value.shape), axis, middle, high, namespace_of(value))
            if self._probe(index, rng, right) is not Status.FAILED:
                return None
            low = middle
        return min(low, sub.batch - sub.observations)

    def _wrong_past(self, index: int, sub: SubBatch) -> bool:
        """Whether the argument's gradient is wrong in the whole batch's observations past the
        sub-batch (True for an argument without a batch axis: its sub-batch is the whole);
        probed once per argument."""
        axis = sub.axes[index]
        if axis is None:
            return True
        if (index, sub.first) not in self._past:
            value = self.evidence.problem.values[index]
            past = axis_mask(tuple(value.shape), axis, sub.first + sub.observations, None, namespace_of(value))
            what = "past" if not sub.first else f"past {sub.first + sub.observations}"
            rng = self.evidence.rng(f"sub-batch {what} {self.evidence.name(index)}")
            self._past[index, sub.first] = self._probe(index, rng, past) is Status.FAILED
        return self._past[index, sub.first]

    def _wrong_at_end(self, index: int, sub: SubBatch) -> bool:
        """Whether the argument's gradient is wrong in the whole batch's last observations, as
        many as the sub-batch holds: one probe, where they lie past it (wrong there, it is
        wrong past it); else whether it is wrong past it (`_wrong_past`)."""
        axis = sub.axes[index]
        start = sub.batch - sub.observations
        if axis is None or start < sub.first + sub.observations:
            return self._wrong_past(index, sub)
        value = self.evidence.problem.values[index]
        end = axis_mask(tuple(value.shape), axis, start, None, namespace_of(value))
        rng = self.evidence.rng(f"sub-batch end {self.evidence.name(index)}")
        return self._probe(index, rng, end) is Status.FAILED

    def _diagnosis(
        self,
        finding: Finding,
        regions: tuple[Region, ...] = (),
        examples: tuple[ElementExample, ...] = (),
        blocks: Mapping[str, tuple[BlockError, ...]] | None = None,
        sub_batch: SubBatchSize | None = None,
    ) -> Diagnosis:
        """The diagnosis, with the budget after which it stopped, where it did."""
        stopped = self.budget.stopped
        return Diagnosis(
            finding,
            regions,
            examples,
            {} if blocks is None else blocks,
            stopped_after_s=self.budget.seconds if stopped is Limit.TIMEOUT else None,
            stopped_after_calls=self.budget.stopped_at if stopped is Limit.CALLS else None,
            calls_on_part=self.budget.on_part if stopped is Limit.CALLS else 0,
            sub_batch=sub_batch,
        )


def _like_the_whole(part: Sequence[Any], whole: Sequence[Any]) -> bool:
    """The sub-batch's gradients are numbers where the whole batch's are."""
    for g, w in zip(part, whole):
        if (g is None) != (w is None):
            return False
        if g is not None and bool(namespace_of(g).isfinite(g).all()) != bool(namespace_of(w).isfinite(w).all()):
            return False
    return True


def group(findings: Sequence[Finding]) -> list[Finding]:
    """Each claim once: a swap found from both of its arguments is one finding, a claim about
    backward as a whole is one for every argument, and the same claim about several arguments
    is one finding naming them all (in the order first found)."""
    grouped: list[Finding] = []
    for finding in findings:
        for k, seen in enumerate(grouped):
            if finding.cause is seen.cause and set(finding.arguments) == set(seen.arguments):
                same = finding.detail == seen.detail  # a swap, seen from its other argument
            else:
                same = finding.same_claim(seen)
            if same:
                merged = seen.arguments + tuple(a for a in finding.arguments if a not in seen.arguments)
                grouped[k] = dataclasses.replace(seen, arguments=merged)
                break
        else:
            grouped.append(finding)
    return grouped
