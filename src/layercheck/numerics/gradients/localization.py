"""Where a wrong gradient is wrong: along every named axis and by region (border of the
spatial plane, sign, value range), each block with a direction of its own. A block is called
right only after two probes passed; a region is said only when every other block of its
partition was proven right. Small arguments are judged from their elements, exactly.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from layercheck.numerics import blocks as partitions
from layercheck.numerics.arrays import fetch, is_complex, namespace_of, to_host
from layercheck.numerics.blocks import Block, Partition, axis_mask
from layercheck.numerics.gradients.claims import factors_to_try, name_factor, ratio_of, sizes, zero_on
from layercheck.numerics.gradients.engine import (
    ArgumentVerdict,
    EvaluationError,
    Probe,
    Verdict,
    check_argument,
    element_probe,
    reduced_resolution_of,
)
from layercheck.numerics.gradients.evidence import Corrected, Element, Evidence, failing, worst_failing
from layercheck.numerics.gradients.findings import (
    BlockError,
    BlockVerdict,
    Cause,
    ElementExample,
    Finding,
    Numbers,
    ProbeKind,
    Region,
    RegionKind,
)
from layercheck.status import Status

__all__ = ["LOCALIZATION_BUDGET", "CONFIRMATION_BUDGET", "Localization", "numbers_of"]

# Probes per argument to say where a large argument's gradient is wrong: a screen of every
# partition (one probe per block), then a second probe per block of the candidate regions.
LOCALIZATION_BUDGET = 48
CONFIRMATION_BUDGET = 24
_CANDIDATES = 3  # screened partitions confirmed, the most specific first
_EXAMPLES = 4  # elements measured one at a time for a large argument
_MAX_VALUE_SHARE = 0.5  # "right" only in the tails of the values says little about where it is wrong
# The most blocks of the partitions besides the labelled axes': the distance from the edge (4),
# the sign (2), the value ranges (8), and each spatial axis (8).
_REGION_BLOCKS = 4 + 2 + 8
_SPATIAL_BLOCKS = 8
_LARGE = 1 << 16  # elements from which a probed argument's screens stop early (`_groups`)
_SPREAD_WRONG = 4  # blocks probed first, spread along a screen, all wrong: the rest not screened
_NARROWING = 4  # the most blocks a probed narrowing cuts a region's wide blocks into, in all
# How far the wrong blocks' errors must stand above what the right blocks' probes resolve, each
# relative to its own block, for a region to be said (`_separated`).
_SEPARATION = 25.0


class _Contradicted(enum.Enum):
    """A narrowing that found an index of a region's wrong blocks right (`_narrowed_once`)."""

    CONTRADICTED = "an index of the wrong blocks found right"


_CONTRADICTED = _Contradicted.CONTRADICTED


@dataclass(frozen=True)
class _Cell:
    block: Block
    verdict: BlockVerdict
    probe: Probe | None  # the failing probe of a wrong cell, else the one it rests on (`_deciding`)
    failing: tuple[Probe, ...] = ()
    probes: int = 0  # decisive probes behind the verdict: 1 for a screen, 2 once confirmed (0: exact)
    # A right cell's: the reduced resolution it was shown right to, where no probe behind it
    # decided it right at the full one (0: one did), as a passed argument's `reduced` says.
    resolution: float = 0.0

    def record(self) -> BlockError:
        p = self.probe
        if p is None or not math.isfinite(p.numeric):
            return BlockError(
                self.block.label, self.verdict, math.nan, math.nan, math.nan, self.probes, self.block.span
            )
        tolerance = p.tolerance if p.gradients else math.nan
        return BlockError(
            self.block.label,
            self.verdict,
            p.discrepancy,
            p.relative(p.discrepancy),
            tolerance,
            self.probes,
            self.block.span,
        )


# The regions a zero gradient is said in: blocks along an axis, a border, a sign. Not a range of
# values (said with the share of the elements it holds), nor elements measured one by one.
_ZERO_KINDS = (RegionKind.BLOCKS, RegionKind.BORDER, RegionKind.SIGN)


@dataclass(frozen=True)
class _Found:
    """A region proven wrong: its description, its elements, and its wrong cells' probes."""

    region: Region
    mask: Any
    bad: tuple[_Cell, ...]
    # Its wrong blocks' errors stand clear of what the right blocks' probes resolve
    # (`_separated`): said on its own; else only with a factor proven in it.
    separated: bool = True
    # The axis of the partition it was found along (None: another partition), the index its
    # labels count from (`Partition.first`), and the blocks of it found right.
    axis: int | None = None
    first: int = 0
    right: tuple[Block, ...] = ()
    # Those of `right` shown right only at a reduced resolution (`_reduced_right`).
    coarse: tuple[Block, ...] = ()
    # A border one deep wrong at every edge, or along edges of two spatial axes (`_wrong_edges`).
    across: bool = False


Blocks = dict[str, tuple[BlockError, ...]]  # each partition's blocks, as measured


def numbers_of(probe: Probe, kind: ProbeKind = ProbeKind.DIRECTION) -> Numbers:
    """A probe's numbers, as every report states them."""
    return Numbers(
        analytic=probe.analytic,
        numeric=probe.numeric,
        abs_error=probe.discrepancy,
        rel_error=probe.relative(probe.discrepancy),
        tolerance=probe.tolerance,
        step=probe.step,
        probe=kind,
    )


def _word(verdict: ArgumentVerdict | None) -> BlockVerdict:
    if verdict is None:
        return BlockVerdict.UNDECIDED
    return {Status.FAILED: BlockVerdict.WRONG, Status.PASSED: BlockVerdict.RIGHT}.get(
        verdict.status, BlockVerdict.UNDECIDED
    )


def _cell(block: Block, verdict: ArgumentVerdict | None) -> _Cell:
    """A block's cell after its probe. Where no probe failed, the probe it rests on is kept for
    its numbers alone: a wrong block's failing probes are tested again (a factor corrected in
    the region must pass them), a right one's only stated; and a localization holds a cell for
    each of up to a hundred blocks (with their directions, the failed check of one channel among
    64 held 55 copies of its input at its peak)."""
    if verdict is None or not verdict.probes:
        return _Cell(block, BlockVerdict.UNDECIDED, None)
    found = failing(verdict)
    resolution = verdict.reduced_resolution
    probe = found[0] if found else _deciding(verdict).numbers_only()
    return _Cell(block, _word(verdict), probe, tuple(found), 1, resolution)


def _deciding(verdict: ArgumentVerdict) -> Probe:
    """The probe a verdict that failed no probe rests on: the one that agreed at a reduced
    resolution, or the last that passed; else its last. A GRU's time step, passed at a reduced
    resolution after two probes lost to round-off, was represented by the last of those (NaN,
    resolving nothing), and the time step wrong beside it could not be said alone."""
    if verdict.reduced is not None:
        return verdict.reduced
    return next((p for p in reversed(verdict.probes) if p.verdict is Verdict.PASS), verdict.probes[-1])


def _resolved(probe: Probe) -> float:
    """The relative error a right block's probe rules out: its tolerance against its scale,
    and where it agreed at a reduced resolution only (undecided at the full one), that too."""
    relative = probe.relative(probe.tolerance)
    return max(relative, probe.resolution) if probe.verdict is Verdict.UNDECIDED else relative


def _separated(bad: list[_Cell], right: list[_Cell]) -> bool:
    """Whether every failing probe of the wrong blocks is off by `_SEPARATION` times what the
    right blocks' probes resolve, each relative to its own block (its scale): an error as large
    in a block called right would have failed there. Where a backward is wrong everywhere by
    about what the probes resolve (noise it adds, a bound they barely cross), probes of equal
    errors fail in some blocks and pass in others by chance, and the region they would draw is
    not where the gradient is wrong: then none is said, and the failure stands unlocated."""
    smallest = min((p.relative(p.discrepancy) for c in bad for p in c.failing), default=0.0)
    coarsest = max((_resolved(c.probe) for c in right if c.probe is not None), default=math.inf)
    return smallest >= _SEPARATION * coarsest


def _never(found: list[_Found]) -> bool:
    return False


def _any(found: list[_Found]) -> bool:
    return bool(found)


def _holds_border(found: list[_Found]) -> bool:
    """Whether a border one deep was found wrong at every edge (a blur's, a signal's two ends)
    or along edges of two spatial axes: the spatial blocks would find no row or column that
    holds its error apart from it (a signal's ends are the border in other words). A border
    wrong in its last column alone is that column (the screens find it, and it is said); a
    deeper border may hold the row that is the cause (row 2 of 32 in a border 3 deep)."""
    return any(f.across for f in found)


def _spread_order(n: int) -> list[int]:
    """0 to n - 1, spread: 0, then n/2, then n/4 and 3n/4, then the eighths, ..."""
    order: list[int] = []
    seen: set[int] = set()
    parts = 1
    while len(order) < n:
        for j in range(parts):
            k = j * n // parts
            if k not in seen:
                seen.add(k)
                order.append(k)
        parts *= 2
    return order


def _union(masks: list[Any]) -> Any:
    xp = namespace_of(masks[0])
    union = masks[0]
    for mask in masks[1:]:
        union = xp.logical_or(union, mask)
    return union


def _share(mask: Any) -> float:
    (share,) = fetch(mask.mean())
    return float(share)


def _candidate_share(cells: list[_Cell]) -> float | None:
    """The share of the elements in the wrong blocks, for a partition whose screen found some
    blocks wrong and every other right; None otherwise."""
    if {c.verdict for c in cells} != {BlockVerdict.WRONG, BlockVerdict.RIGHT}:
        return None
    return _share(_union([c.block.mask for c in cells if c.verdict is BlockVerdict.WRONG]))


def _most_specific(found: list[_Found]) -> list[_Found]:
    """The regions proven, the smallest first, without those that hold a smaller one: a border
    3 deep that holds the one column wrong (column 5 of 8) is true of it, and says less; read
    beside it, it would send a user to the border. Regions of the same elements (the border
    of a signal and its first and last positions) are the same claim in other words: kept."""
    kept: list[_Found] = []
    for region in found:
        if not any(
            smaller.region.share < region.region.share and _holds(region.mask, smaller.mask) for smaller in kept
        ):
            kept.append(region)
    return kept


def _holds(mask: Any, smaller: Any) -> bool:
    """Whether `mask` holds every element of `smaller`."""
    (outside,) = fetch(namespace_of(smaller).count_nonzero(smaller & ~mask))
    return int(outside) == 0


def _indices(spans: list[tuple[int, int | None] | None]) -> int:
    """How many indices the closed spans cover (open and missing ones count none)."""
    return sum(span[1] - span[0] + 1 for span in spans if span is not None and span[1] is not None)


def _coarse(cells: list[_Cell], full: float) -> list[_Cell]:
    """The cells found right only at a reduced resolution coarser than the `full` one (the
    relative error the check resolves: a probe that agreed at 9e-7 only, its tolerance above
    its projection's stricter bound, still rules out 1e-6)."""
    return [c for c in cells if c.verdict is BlockVerdict.RIGHT and c.resolution > full]


def _reduced_right(cells: list[_Cell], full: float, named: bool) -> dict[str, Any]:
    """A region's `resolution` and `reduced` fields: the coarsest reduced resolution a block
    found right rests on (`_coarse`), and (`named`: a region of blocks, which names them)
    those blocks, unless they are all the blocks found right."""
    coarse = _coarse(cells, full)
    if not coarse:
        return {}
    found: dict[str, Any] = {"resolution": max(c.resolution for c in coarse)}
    if named and len(coarse) < sum(c.verdict is BlockVerdict.RIGHT for c in cells):
        found["reduced"] = _merged([c.block for c in coarse])
    return found


def _merged(blocks: list[Block]) -> tuple[str, ...]:
    """The blocks' labels, adjacent spans joined: a bisection leaves the indices of a wide block
    in pieces of one or two ("1, 2, 3-4, 5"), which name one range ("1-5"). Blocks without a
    closed span keep their labels."""
    spans = [b.span for b in blocks]
    if not all(span is not None and span[1] is not None for span in spans):
        return tuple(b.label for b in blocks)
    return _runs([(span[0], span[1]) for span in spans if span is not None and span[1] is not None])


def _runs(spans: list[tuple[int, int]]) -> tuple[str, ...]:
    """Closed spans of indices as labels, in order, adjacent ones joined ("1-5", "8")."""
    runs: list[list[int]] = []
    for first, last in sorted(spans):
        if runs and first <= runs[-1][1] + 1:
            runs[-1][1] = max(last, runs[-1][1])
        else:
            runs.append([first, last])
    return tuple(str(first) if first == last else f"{first}-{last}" for first, last in runs)


def _whole_slices(mask: Any, axis: int) -> list[int]:
    """The indices along `axis` of a mask that is whole slices along it (a channel, the
    channels of a small block), each wholly in it; none where it is anything else."""
    others = tuple(k for k in range(mask.ndim) if k != axis)
    whole, touched = (to_host(a) for a in (mask.all(axis=others), mask.any(axis=others)))
    return [int(i) for i in np.flatnonzero(whole)] if np.array_equal(whole, touched) else []


def _wide(span: tuple[int, int | None] | None) -> bool:
    """Whether a block along an axis spans several of its indices."""
    return span is not None and span[1] is not None and span[1] > span[0]


def _within(index: int, span: tuple[int, int | None] | None) -> bool:
    return span is not None and span[0] <= index and (span[1] is None or index <= span[1])


def _named_blocks(value: Any, labels: str | None) -> int:
    """The blocks of the axes' partitions: the labelled axes' (channels, observations, time
    steps), or every axis's of an argument without labels."""
    if labels is None or len(labels) != value.ndim:
        sizes = [value.shape[axis] for axis, _, _ in partitions.unlabelled_axes(value)]
    else:
        sizes = [value.shape[labels.find(label)] for label in "CBT" if labels.find(label) >= 0]
    return sum(min(n, partitions.AXIS_CELLS) for n in sizes if n > 1)


def _screens(value: Any, labels: str | None) -> int:
    """Probes for the screens, a function of the argument's shape and labels alone: each block
    of every partition once (`Localization._partitions`), however many channels come first,
    a quarter more for the probes a screen repeats (a step adapted, a larger step against
    round-off), and at least LOCALIZATION_BUDGET."""
    named = _named_blocks(value, labels)
    spatial = len(partitions.spatial_words(labels)) if labels is not None and len(labels) == value.ndim else 0
    blocks = named + _REGION_BLOCKS + _SPATIAL_BLOCKS * spatial
    return max(LOCALIZATION_BUDGET, 2 * named, blocks + -(-blocks // 4))


class Localization:
    """Where one failed argument's gradient is wrong, and by what factor there."""

    def __init__(self, evidence: Evidence, index: int, origin: tuple[int, int] | None = None):
        """`origin`: (axis, first) where the argument is a sub-batch cut from a larger batch
        along `axis` from index `first`: its blocks and elements are named by their indices in
        the batch."""
        self.evidence = evidence
        self.index = index
        self.name = evidence.name(index)
        self.value = evidence.problem.values[index]
        self.labels = evidence.problem.labels[index]
        # Probes for the screens: each block of every partition once, however many blocks the
        # labelled axes have: a channel, an observation, a time step or a column is found at any
        # size (20 channels and 8 observations once left a column's blocks unscreened, and a
        # last column wrong read as the whole border).
        self._screens = _screens(self.value, self.labels)
        # A small argument's elements are measured one by one wherever that takes fewer calls
        # than the screens and their confirmations (two calls a probe): exactly, and for less.
        self.table = evidence.elements(index, cheaper_than=4 * self._screens)
        self.origin = origin
        self._spent = 0  # localization probes spent
        # Probes cost two calls on the whole argument each: a large one's screens are spared
        # what cannot change what is said (`_groups`, `_judge`).
        self._large = self.table is None and int(self.value.size) >= _LARGE
        self._ranges: list[tuple[tuple[float, float], Block]] = []  # the value ranges, once cut
        # The elements of the region the finding states, once `run` found one (None: none, or
        # a region of elements measured one by one, which has no mask), and of each of its
        # blocks found wrong.
        self.finding_mask: Any = None
        self.finding_blocks: list[Any] = []

    def run(
        self, gradient: Any
    ) -> tuple[Finding, tuple[Region, ...], tuple[ElementExample, ...], dict[str, tuple[BlockError, ...]]]:
        """The argument's finding, every region proven (the finding's first), elements
        measured one by one, and each partition's blocks as measured."""
        found, measured = self._regions()
        # A region is said with "right in the others": never where a block outside it, too
        # small for the probes that found it, is wrong on its own.
        found = [f for f in found if not self.evidence.wrong_outside(self.index, f.mask)]
        found = [self._undecided_taken_out(f) for f in found]
        factor, found = self._factor(gradient, found)
        # A region of one sign said without a factor proven in it (which holds for all of it)
        # is said only where the error fills it.
        found = [
            f
            for k, f in enumerate(found)
            if f.region.kind is not RegionKind.SIGN or (k == 0 and factor is not None) or self._fills(f)
        ]
        regions = tuple(f.region for f in found)
        self.finding_mask = found[0].mask if found else None
        self.finding_blocks = [cell.block.mask for cell in found[0].bad] if found else []
        probe = worst_failing(self.evidence.verdicts[self.index])
        assert probe is not None  # a failed argument failed a probe
        worst = numbers_of(probe)
        complex_values = is_complex(self.value) or any(is_complex(y) for y in self.evidence.base.outputs)
        if self.table is not None:
            examples = self._measured_examples(gradient)
            wrong = [e for e in examples if e.wrong]
            if wrong and len(wrong) < len(examples):
                regions += (self._elements_region(examples),)
            if found:
                finding = factor or self._localized(gradient, found[0])
            elif regions:
                finding = Finding(Cause.LOCALIZED, (self.name,), region=regions[0])
            elif wrong:
                worst_element = wrong[0]
                every = Region(RegionKind.ELEMENTS, self.name, "element", "elements", (), 0, 1.0)
                finding = Finding(
                    Cause.UNEXPLAINED, (self.name,), region=every, numbers=_element_numbers(worst_element)
                )
            else:
                finding = Finding(Cause.UNEXPLAINED, (self.name,), numbers=worst)
            return finding, regions, tuple(examples[:5]), measured
        if found:
            finding = factor or self._localized(gradient, found[0])
        else:
            finding = Finding(Cause.UNEXPLAINED, (self.name,), numbers=worst, complex_values=complex_values)
        sampled = tuple(self._sampled_examples(gradient, found[0].mask if found else None))
        return finding, regions, sampled, measured

    # -- regions -------------------------------------------------------------------------------

    def _regions(self) -> tuple[list[_Found], Blocks]:
        measured: Blocks = {}
        found: list[_Found] = []
        for group, enough in self._groups():
            screened = []
            for partition in group:
                if self.evidence.budget.over():
                    break  # the partitions left are not built: a large argument's cost as much as a call
                cells = self._judge(partition, partition.unit, screen=True)
                measured[partition.unit] = tuple(c.record() for c in cells)
                share = _candidate_share(cells)
                if share is not None:
                    screened.append((share, partition, cells))
                del cells  # let go where no candidate, before the next partition's probes are drawn
            # The most specific candidates first: each confirmed block by block, or dropped.
            for _, partition, cells in sorted(screened, key=lambda c: c[0])[:_CANDIDATES]:
                cells = self._confirm(partition, cells)
                partition, cells = self._undecided_cut(partition, cells)
                region = self._region_of(partition, cells)
                if region is not None:
                    partition, cells, region = self._small_set_apart(partition, cells, region)
                    partition, cells, narrowed = self._narrowed(partition, cells, region)
                    if narrowed is not None:
                        found.append(narrowed)
                measured[partition.unit] = tuple(c.record() for c in cells)
            if enough(found):
                break
        found.sort(key=lambda f: f.region.share)
        return _most_specific(found), measured

    def _groups(self) -> list[tuple[Iterator[Partition], Callable[[list[_Found]], bool]]]:
        """The partitions in groups, each with what found after it leaves the others unscreened.

        On a large argument each probe costs two calls on the whole of it (a channel among
        256 at 32,32,256,8:SSCB took 115 probes, 38 of them on the partitions beyond the named
        axes): a region along a named axis is said without screening the rest, and a border
        wrong along edges that cross (`_holds_border`) without the sign, the value ranges and
        the spatial blocks. Another region of the distance from the edge (one edge, a border 3
        deep, a ring, the interior) does not stop them: a row or a column found there is
        narrower. On a smaller argument every partition is screened and the most specific
        region said: a few wrong elements may all fall in one channel by chance (softplus
        wrong where X > 2.5 at 4,3,5,6:SSCB: "channel 1", where the value range says why)."""
        if not self._large:
            return [(self._partitions(), _never)]
        return [(self._named(), _any), (self._edge(), _holds_border), (self._beyond_edge(), _never)]

    def _edge(self) -> Iterator[Partition]:
        """The distance from the edge, where the spatial plane has an interior (built when
        judged, as every partition)."""
        found = partitions.distance_to_edge(self.value, self.labels)
        if found is not None:
            yield found

    def _partitions(self) -> Iterator[Partition]:
        """In the order they are paid for from the budget: the named axes, then regions; each
        built only when the one before was judged."""
        yield from self._named()
        yield from self._edge()
        yield from self._beyond_edge()

    def _named(self) -> Iterator[Partition]:
        """The partitions along the named axes: channels, observations, time steps; or along
        each axis of an argument without labels."""
        value, labels = self.value, self.labels
        if labels is not None and len(labels) == value.ndim:
            for label in "CBT":
                axis = labels.find(label)
                if axis >= 0 and value.shape[axis] > 1:
                    first = self.origin[1] if self.origin is not None and self.origin[0] == axis else 0
                    yield partitions.along_axis(value, axis, partitions.AXIS_WORDS[label], first=first)
        else:
            # An argument without labels (a dense weight matrix, a depthwise kernel) is cut
            # along each of its axes: a slice wrong in it is found as a channel is.
            for axis, unit, plural in partitions.unlabelled_axes(value):
                along = partitions.along_axis(value, axis, unit)
                yield Partition(unit, along.blocks, plural, axis)

    def _beyond_edge(self) -> Iterator[Partition]:
        """The regions after the distance from the edge: sign, value range, then blocks along
        each spatial axis."""
        value, labels = self.value, self.labels
        sign = partitions.by_sign(value, self.name)
        if sign is not None:
            yield sign
        self._ranges = partitions.by_value(value, self.name)
        if len(self._ranges) > 1:
            yield Partition("value range", tuple(block for _, block in self._ranges))
        if labels is not None and len(labels) == value.ndim:
            for axis, word in partitions.spatial_words(labels):
                if value.shape[axis] > 1:
                    yield partitions.along_axis(value, axis, word, max_cells=8)

    def _judge(self, partition: Partition, seed: str, screen: bool = False) -> list[_Cell]:
        """Each block of a partition probed once (a screen): wrong or right on one probe.
        Blocks left unmeasured when the budget runs out are undecided. Small arguments are
        judged from their elements instead, exactly."""
        if self.table is not None:
            return [self._judge_exactly(block, self.table) for block in partition.blocks]
        rng = self.evidence.rng(f"localize {self.name} {seed}")
        if not (screen and self._large):
            return [_cell(block, self._probe_block(block, rng)) for block in partition.blocks]
        # A large argument's screen probes its blocks spread along the partition (the first,
        # the middle, the quarters, ...), and stops where the first `_SPREAD_WRONG` are all
        # wrong: no block of it is likely right, where a block right is what makes it a
        # candidate; the rest are left undecided. A border wrong at 128,128,16,16:SSCB was
        # wrong in all 32 blocks of the channels and the observations.
        blocks = partition.blocks
        cells: dict[int, _Cell] = {}
        for k in _spread_order(len(blocks)):
            cells[k] = _cell(blocks[k], self._probe_block(blocks[k], rng))
            if len(cells) == _SPREAD_WRONG < len(blocks) and all(
                c.verdict is BlockVerdict.WRONG for c in cells.values()
            ):
                break
        return [cells.get(k) or _cell(block, None) for k, block in enumerate(blocks)]

    def _confirm(self, partition: Partition, cells: list[_Cell]) -> list[_Cell]:
        """Each screened block probed once more with a direction of its own: a block is called
        wrong or right only when both probes say so."""
        if self.table is not None:
            return cells
        rng = self.evidence.rng(f"confirm {self.name} {partition.unit}")
        # Every block of the partition gets its second probe (and a retry each): a region is
        # said only where no block is left undecided, and 40 time steps in 16 blocks outran a
        # fixed share (a GRU wrong in time step 0 was left unlocated at 6,3,40:CBT).
        budget = max(self._screens + CONFIRMATION_BUDGET, self._spent + 2 * len(cells))
        confirmed = []
        for cell in cells:
            again = self._probe_block(cell.block, rng, budget=budget)
            word = cell.verdict if _word(again) is cell.verdict else BlockVerdict.UNDECIDED
            bad = cell.failing + (tuple(failing(again)) if again else ())
            # Right at the full resolution where either probe decided so (one decisive pass
            # is what `check_argument` asks of a whole argument).
            resolution = min(cell.resolution, again.reduced_resolution) if again and word is BlockVerdict.RIGHT else 0.0
            confirmed.append(_Cell(cell.block, word, bad[0] if bad else cell.probe, bad, cell.probes + 1, resolution))
        return confirmed

    def _probe_block(self, block: Block, rng: np.random.Generator, budget: int | None = None) -> ArgumentVerdict | None:
        """One decisive probe of a block (up to three tries with adapted steps), within budget
        (by default the screens')."""
        if self._spent >= (self._screens if budget is None else budget) or self.evidence.budget.over():
            return None
        e = self.evidence
        try:
            verdict = check_argument(
                e.problem, e.base, self.index, e.tol, rng, max_probes=3, support=block.mask, fails_needed=1
            )
        except EvaluationError:
            verdict = None
        self._spent += sum(1 + (p.retry is not None) for p in verdict.probes) if verdict else 1
        return verdict

    @staticmethod
    def _judge_exactly(block: Block, table: list[Element]) -> _Cell:
        """A block of a small argument from its elements, each measured on its own."""
        inside = to_host(block.mask)
        probes = [p for element, found in table if inside[element] for p in found]
        bad = tuple(p for p in probes if p.verdict is Verdict.FAIL)
        if bad:
            return _Cell(block, BlockVerdict.WRONG, max(bad, key=lambda p: p.discrepancy), bad)
        if probes and all(p.verdict is Verdict.PASS for p in probes):
            return _Cell(block, BlockVerdict.RIGHT, probes[-1], resolution=reduced_resolution_of(probes))
        return _Cell(block, BlockVerdict.UNDECIDED, probes[-1] if probes else None)

    def _region_of(self, partition: Partition, cells: list[_Cell]) -> _Found | None:
        if any(c.verdict is BlockVerdict.UNDECIDED for c in cells):
            return None
        bad = [c for c in cells if c.verdict is BlockVerdict.WRONG]
        if not bad or len(bad) == len(cells):
            return None
        separated = self.table is not None or _separated(bad, [c for c in cells if c.verdict is BlockVerdict.RIGHT])
        mask = _union([c.block.mask for c in bad])
        share = _share(mask)
        right = len(cells) - len(bad)
        spans = [c.block.span for c in cells if c.verdict is BlockVerdict.RIGHT]
        if partition.axis is not None and all(span is not None and span[1] is not None for span in spans):
            # Along an axis the others are counted in its indices (time steps), not in blocks
            # of them: each is in a block a probe found right.
            right = _indices(spans)
        if partition.unit == "value range":
            return self._value_region(cells, mask, share, separated)
        depth = len(bad)
        kind = RegionKind.BLOCKS
        extra: dict[str, Any] = {}
        across = False
        if partition.unit == "distance from the edge" and [c.block.label for c in bad] == [
            str(d) for d in range(depth)
        ]:
            kind = RegionKind.BORDER
            shape = tuple(self.value.shape)
            layout = self.labels or ""
            extra = {
                "depth": depth,
                "border": partitions.describe_border(shape, layout, depth),
                "spatial_axes": len(partitions.spatial_words(layout)),
            }
            if depth == 1:
                extra["wrong_edges"], across = self._wrong_edges()
        elif partition.unit == "sign":
            kind = RegionKind.SIGN
            extra = {"below": cells[0].verdict is BlockVerdict.WRONG}  # by_sign: below zero, then above
        labels = _merged([c.block for c in bad]) if kind is RegionKind.BLOCKS else tuple(c.block.label for c in bad)
        full = self.evidence.tol.resolution[0]
        extra.update(_reduced_right(cells, full, named=kind is RegionKind.BLOCKS))
        region = Region(kind, self.name, partition.unit, partition.units, labels, right, share, **extra)
        good = tuple(c.block for c in cells if c.verdict is BlockVerdict.RIGHT)
        coarse = tuple(c.block for c in _coarse(cells, full))
        return _Found(region, mask, tuple(bad), separated, partition.axis, partition.first, good, coarse, across)

    def _narrowed(
        self, partition: Partition, cells: list[_Cell], region: _Found
    ) -> tuple[Partition, list[_Cell], _Found | None]:
        """A region along an axis whose wrong blocks span several indices (time steps 2-4 of
        40, channels 0-31 of 512), narrowed to the indices wrong in them (time step 2, channel
        5) by bisection: the blocks cut into smaller ones, each screened and confirmed, the
        blocks found right kept as they were judged, until each is one index. The narrowest
        region proven: the region as it was where no narrower one is; None where the cut found
        an index of its wrong blocks right and what is left is no region that may be said."""
        while True:
            narrower = self._narrowed_once(partition, cells, region)
            if narrower is _CONTRADICTED:
                return partition, cells, None
            if not isinstance(narrower, tuple):
                return partition, cells, region
            partition, cells, region = narrower

    def _narrowed_once(
        self, partition: Partition, cells: list[_Cell], region: _Found
    ) -> tuple[Partition, list[_Cell], _Found] | _Contradicted | None:
        """One step of `_narrowed`: None where the wrong blocks are single indices, or the
        narrower region is not proven; `_CONTRADICTED` where it is not one that may be said
        and an index of the wrong blocks was found right."""
        spans = [(c.block, c.block.span) for c in region.bad]
        wide = tuple(block for block, span in spans if _wide(span))
        if partition.axis is None or not wide or self.evidence.budget.over():
            return None
        # Probed, a wide block is cut in `_NARROWING` (each part screened and confirmed: 16
        # probes for a channel among 16, where one block per index took 32); measured element
        # by element, in one block per index at once.
        cells_at_most = _NARROWING if self.table is None else partitions.AXIS_CELLS
        finer = partitions.refined(self.value, partition, wide, max_cells=cells_at_most)
        narrowed = self._cut(cells, finer, "narrowed")
        better = self._region_of(finer, narrowed)
        # Every block proven wrong must hold an index proven wrong: a narrower region that
        # left one out would call right what was proven wrong.
        wrong = [c.block.span[0] for c in narrowed if c.verdict is BlockVerdict.WRONG and c.block.span is not None]
        if better is None or not all(any(_within(i, b.span) for i in wrong) for b in wide):
            return None
        if region.separated and not better.separated:
            # A region that may be said, kept so, where the cut found every part of its wrong
            # blocks wrong too. Where it found one right, the region said would call it wrong
            # ("channels 2-4", channel 4 right: a review), and what is left of it is no region
            # that may be said: none is.
            right = [c.block.span for c in narrowed if c.verdict is BlockVerdict.RIGHT and c.block.span is not None]
            inside = any(_within(span[0], b.span) for span in right for b in wide)
            return _CONTRADICTED if inside else None
        if _indices([span for _, span in spans]) > partitions.AXIS_CELLS and better.region.share >= region.region.share:
            # Wide blocks wrong in every part: the same elements in more words (channels 0-31,
            # not 0, 1, ... 31), and nothing narrower to find in them.
            return None
        return finer, narrowed, better

    def _cut(self, cells: list[_Cell], finer: Partition, why: str) -> list[_Cell]:
        """The cells of `finer`, a partition with some blocks of the one `cells` judged cut into
        parts (`partitions.refined`, `set_apart`): each part screened and confirmed, the blocks
        kept whole (the same objects) as they were judged."""
        kept = {id(c.block): c for c in cells}  # blocks hold arrays: known by identity
        new = Partition(
            finer.unit, tuple(b for b in finer.blocks if id(b) not in kept), finer.plural, finer.axis, finer.first
        )
        self._screens = max(self._screens, self._spent) + 2 * len(new.blocks)  # a screen and a confirmation each
        judged = {id(c.block): c for c in self._confirm(new, self._judge(new, f"{finer.unit} {why}"))}
        return [kept.get(id(b)) or judged[id(b)] for b in finer.blocks]

    def _undecided_cut(self, partition: Partition, cells: list[_Cell]) -> tuple[Partition, list[_Cell]]:
        """A partition along an axis with blocks wrong and right, and a few of several indices
        undecided, those cut (`_NARROWING` parts each, as a narrowing) until none of several
        indices is left undecided: each part is judged at its own scale. Channels 3-4 of 20,
        channel 3's gradient 1e-8 of channel 4's and wrong past the sub-batch, were undecided
        together (a probe at channel 4's scale cannot see channel 3), and with them the wrong
        channels went unsaid at 24,24,20,128:SSCB; channel 3 alone is wrong, channel 4 right.
        A part of one index left undecided leaves the partition no region, as before."""
        while partition.axis is not None and self.table is None and not self.evidence.budget.over():
            undecided = [c for c in cells if c.verdict is BlockVerdict.UNDECIDED]
            verdicts = {c.verdict for c in cells}
            wide = tuple(c.block for c in undecided if _wide(c.block.span))
            if not wide or len(wide) < len(undecided) or len(wide) > _NARROWING:
                break
            if BlockVerdict.WRONG not in verdicts or BlockVerdict.RIGHT not in verdicts:
                break  # nothing the cut could find makes a region of it
            partition = partitions.refined(self.value, partition, wide, max_cells=_NARROWING)
            cells = self._cut(cells, partition, "undecided")
        return partition, cells

    def _small_set_apart(
        self, partition: Partition, cells: list[_Cell], found: _Found
    ) -> tuple[Partition, list[_Cell], _Found]:
        """A region along an axis where indices of it outside the region whose gradient is
        small (a saturated channel) were found wrong by probes of their own: those set apart,
        each a block of its own judged at its own scale, and the region found again. A block
        that holds such an index beside others was found right by probes at the others'
        scale, which cannot see it: channel 3 of 20, its gradient 1e-8 of the rest and wrong
        past the sub-batch, in a block with channel 4, left "channel 1" alone, which the
        probe of channel 3 contradicted, and nothing was said at 24,24,20,128:SSCB. The
        region as it was where the set-apart indices make none, or one still contradicted."""
        axis = partition.axis
        if axis is None or self.table is not None or not self.evidence.wrong_outside(self.index, found.mask):
            return partition, cells, found
        indices = [
            i + partition.first
            for mask in self.evidence.found_wrong_outside(self.index, found.mask)
            for i in _whole_slices(mask, axis)
        ]
        finer = partitions.set_apart(self.value, partition, indices)
        if len(finer.blocks) == len(partition.blocks) or self.evidence.budget.over():
            return partition, cells, found
        apart = self._cut(cells, finer, "set apart")
        again = self._region_of(finer, apart)
        if again is None or self.evidence.wrong_outside(self.index, again.mask):
            return partition, cells, found
        return finer, apart, again

    def _wrong_edges(self) -> tuple[tuple[str, ...], bool]:
        """The edges (first and last row, column) of a gradient wrong at the border: those
        wrong, where some are right. Edges cross at the corners: an edge is said wrong only
        where it is wrong without them too (a last column wrong makes the first and last rows
        wrong at their last cell, and they are not said). And whether the edges found wrong are
        every edge (a signal's two ends), or lie along two spatial axes (a row and a column):
        then no row or column holds the error apart from the border (`_holds_border`)."""
        labels = self.labels or ""
        strips = Partition("edge", tuple(partitions.edges(self.value, labels)))
        inner = Partition("edge", tuple(partitions.edges(self.value, labels, corners=False)))
        # Probes of their own: the screens may be spent (a screen and a confirmation each).
        self._screens = max(self._screens, self._spent) + 2 * (len(strips.blocks) + len(inner.blocks))
        judged = self._confirm(strips, self._judge(strips, "edges"))
        if any(c.verdict is BlockVerdict.UNDECIDED for c in judged):
            return (), False
        wrong = [c.block.label for c in judged if c.verdict is BlockVerdict.WRONG]
        if len(partitions.spatial_words(labels)) > 1:
            inside = self._confirm(inner, self._judge(inner, "edges without corners"))
            verdicts = {c.block.label: c.verdict for c in inside}
            if any(verdicts[label] is BlockVerdict.UNDECIDED for label in wrong):
                return (), False
            wrong = [label for label in wrong if verdicts[label] is BlockVerdict.WRONG]
        across = bool(wrong) and (len(wrong) == len(judged) or len({label.rpartition(" ")[0] for label in wrong}) > 1)
        return (tuple(wrong) if wrong and len(wrong) < len(judged) else ()), across

    def _value_region(self, cells: list[_Cell], mask: Any, share: float, separated: bool) -> _Found | None:
        ranges = [span for span, _ in self._ranges]  # the value-range partition's own cuts
        bad = [k for k, c in enumerate(cells) if c.verdict is BlockVerdict.WRONG]
        if share > _MAX_VALUE_SHARE:
            return None
        if self.table is not None and not self._mostly_wrong(mask):
            # Each element measured: the ranges hold the wrong elements, but as a minority
            # of their own (the last observation's five among fourteen), so the values are not
            # where the gradient is wrong; another partition says where.
            return None
        low, high = ranges[bad[0]][0], ranges[bad[-1]][1]
        contiguous = bad == list(range(bad[0], bad[-1] + 1))
        if contiguous and bad[-1] == len(cells) - 1:
            high = math.inf
        elif contiguous and bad[0] == 0:
            low = -math.inf
        region = Region(
            RegionKind.VALUE_RANGE,
            self.name,
            "value range",
            "value ranges",
            tuple(cells[k].block.label for k in bad),
            len(cells) - len(bad),
            share,
            low=low,
            high=high,
            contiguous=contiguous,
            **_reduced_right(cells, self.evidence.tol.resolution[0], named=False),
        )
        return _Found(region, mask, tuple(cells[k] for k in bad), separated)

    def _undecided_taken_out(self, found: _Found) -> _Found:
        """The region with the indices of its axis that no probe decided taken out of those it
        says right, and named undecided: those of a small block outside it (a saturated
        channel, its gradient below what a probe of the whole resolves) that no probe of the
        block decided, in a block found right that holds more than them (whose probe, at the
        scale of the rest, could not see them). A block found right that is all small was
        probed at its own scale: decided."""
        if found.axis is None or found.region.kind is not RegionKind.BLOCKS:
            return found
        masks = self.evidence.undecided_outside(self.index, found.mask)
        if not masks:
            return found
        small = _union(masks)
        unseen = [b.mask & small for b in found.right if not _holds(small, b.mask)]
        if not unseen:
            return found
        others = tuple(k for k in range(found.mask.ndim) if k != found.axis)
        whole = to_host(_union(unseen).all(axis=others))
        indices = [int(i) + found.first for i in np.flatnonzero(whole)]
        if not indices:
            return found
        region = dataclasses.replace(
            found.region, right=found.region.right - len(indices), undecided=_runs([(i, i) for i in indices])
        )
        if region.reduced:
            # Named right only at a reduced resolution: not those now said undecided.
            kept = []
            for block in found.coarse:
                first, last = block.span if block.span is not None else (0, None)
                if last is not None:
                    kept += [(i, i) for i in range(first, last + 1) if i not in indices]
            region = dataclasses.replace(region, reduced=_runs(kept), resolution=region.resolution if kept else 0.0)
        return dataclasses.replace(found, region=region)

    def _fills(self, found: _Found) -> bool:
        """Whether the error fills a region of one sign, not a few of its elements: cut in two
        halves along each axis (the first indices, the last), each half fails a probe of its
        own (each element measured on its own: most are wrong). One channel wrong, whose
        values are all below zero, is wrong "where X < 0" in the letter only, and sends a user
        to a branch on the sign that is right (a gate wrong in one channel of 300, its other
        channels undecided, read "wrong where t < 0"); it is in one half of the channels. A
        range of values is said of where the errors lie, the share it holds with it: its bins
        are coarse (a backward wrong past 2.5 is found in a bin from 2.03 on)."""
        if self.table is not None:
            return self._mostly_wrong(found.mask)
        mask = found.mask
        xp = namespace_of(mask)
        halves = []
        for axis, size in enumerate(mask.shape):
            if size > 1:
                first = axis_mask(tuple(mask.shape), axis, 0, size // 2, xp)
                halves += [mask & first, mask & ~first]
        halves = [half for half in halves if bool(xp.any(half))]
        self._screens = max(self._screens, self._spent) + 2 * len(halves)  # a probe and a retry each
        rng = self.evidence.rng(f"fills {self.name} {found.region.unit}")
        for k, half in enumerate(halves):
            if _word(self._probe_block(Block(f"half {k}", half), rng)) is not BlockVerdict.WRONG:
                return False
        return True

    def _localized(self, gradient: Any, found: _Found) -> Finding:
        """The region found, with no factor proven in it: said zero there where backward
        returned exact zeros in all of it (its blocks proven wrong, so the right gradient is
        not zero there), else wrong there."""
        if found.region.kind in _ZERO_KINDS and zero_on(gradient, found.mask):
            return Finding(Cause.ZERO, (self.name,), region=found.region)
        return Finding(Cause.LOCALIZED, (self.name,), region=found.region)

    def _mostly_wrong(self, mask: Any) -> bool:
        """Whether most of the elements `mask` holds are wrong, each measured on its own."""
        assert self.table is not None
        inside = to_host(mask)
        verdicts = [any(p.verdict is Verdict.FAIL for p in probes) for element, probes in self.table if inside[element]]
        return 2 * sum(verdicts) > len(verdicts)

    def _factor(self, gradient: Any, found: list[_Found]) -> tuple[Finding | None, list[_Found]]:
        """The factor proven in the first region (or, where that region is not `separated`
        and none is proven there, in the first that is), and the regions that may be said:
        that one first, then the separated others. A region that stands out of the probes'
        resolution by little is said only with a factor proven there: the gradient corrected
        in it passes everywhere, which noise spread over the whole argument never does."""
        tried = found[:1]
        if found and not found[0].separated:
            tried += [f for f in found[1:] if f.separated][:1]
        for region in tried:
            factor = self._region_factor(gradient, region)
            if factor is not None:
                return factor, [region] + [f for f in found if f is not region and f.separated]
        return None, [f for f in found if f.separated]

    def _region_factor(self, gradient: Any, found: _Found) -> Finding | None:
        """Off by a factor (or of the wrong sign) in the region, when the gradient corrected
        there is right everywhere."""
        # One element measured exactly proposes a ratio as well as two random directions do;
        # either way the corrected gradient must hold before anything is said.
        probes = [p for c in found.bad for p in c.failing]
        context = sizes(self.evidence.problem.values, self.evidence.problem.labels)
        ratio = ratio_of(probes, minimum=1 if self.table is not None else 2)
        if ratio is not None:
            candidates = factors_to_try(ratio, context) if ratio != 0 else []
        else:
            # One probe that measures a ratio proposes only the exact factors near it (a sign,
            # 2, 1/B): a block whose gradient is small leaves its second probe in the noise.
            one = ratio_of(probes, minimum=1)
            candidates = [] if one is None or one == 0 else [r for r in factors_to_try(one, context) if r != one]
        xp = namespace_of(gradient)
        index = self.index

        def corrected(by: float) -> Corrected:
            return lambda grads: xp.where(found.mask, grads[index] / by, grads[index])

        support = Block(f"{found.region.unit}: {', '.join(found.region.wrong)}", found.mask)
        # The exact factors near the measured ratio first (`factors_to_try`): a block's ratio
        # carries its probes' error.
        proven = next(
            (r for r in candidates if self.evidence.holds(index, corrected(r), (None, support), found.mask)), None
        )
        if proven is None:
            return None
        if abs(proven + 1) <= 1e-4:
            return Finding(Cause.WRONG_SIGN, (self.name,), region=found.region)
        return Finding(Cause.FACTOR, (self.name,), name_factor(proven, context), region=found.region)

    # -- elements ------------------------------------------------------------------------------

    def _elements_region(self, examples: list[ElementExample]) -> Region:
        wrong = tuple(str(e.index) for e in examples if e.wrong)
        share = len(wrong) / max(1, int(self.value.size))
        right = len(examples) - len(wrong)
        assert self.table is not None
        # The elements measured right by a probe that agreed at a reduced resolution only.
        full = self.evidence.tol.resolution[0]  # as `_reduced_right` counts blocks
        coarse = []
        for element, probes in self.table:
            resolution = reduced_resolution_of(probes)
            if resolution > full and all(p.verdict is Verdict.PASS for p in probes):
                coarse.append((self._placed_index(element), resolution))
        extra: dict[str, Any] = {}
        if coarse:
            extra["resolution"] = max(resolution for _, resolution in coarse)
            if len(coarse) < right:
                extra["reduced"] = tuple(str(index) for index, _ in coarse)
        return Region(RegionKind.ELEMENTS, self.name, "element", "elements", wrong, right, share, **extra)

    def _measured_examples(self, gradient: Any) -> list[ElementExample]:
        """Every element of a small argument, the wrong first, the worst first among them."""
        assert self.table is not None
        examples = [e for e in (_example(gradient, element, probes) for element, probes in self.table) if e]
        examples.sort(key=lambda e: (not e.wrong, -e.abs_error))
        return [self._placed(e) for e in examples]

    def _placed(self, example: ElementExample) -> ElementExample:
        """An element measured on a sub-batch, named by its index in the batch (`origin`)."""
        if self.origin is None:
            return example
        return dataclasses.replace(example, index=self._placed_index(example.index))

    def _placed_index(self, index: tuple[int, ...]) -> tuple[int, ...]:
        """An element's index on a sub-batch as the batch's (`origin`)."""
        if self.origin is None:
            return index
        axis, first = self.origin
        return tuple(i + first if k == axis else i for k, i in enumerate(index))

    def _sampled_examples(self, gradient: Any, suspect: Any) -> list[ElementExample]:
        """A few elements (in the region found, if any) measured one at a time."""
        e = self.evidence
        if e.budget.over():
            return []
        xp = namespace_of(self.value)
        mask = xp.ones(self.value.shape, dtype=bool) if suspect is None else suspect
        candidates = xp.argwhere(mask)
        rng = e.rng(f"examples {self.name}")
        chosen = rng.choice(len(candidates), size=min(_EXAMPLES, len(candidates)), replace=False)
        picks = [tuple(int(i) for i in el) for el in to_host(candidates[xp.asarray(chosen)]).tolist()]
        units = (1, 1j) if is_complex(self.value) else (1,)
        found = []
        for element in picks:
            try:
                probes = [element_probe(e.problem, e.base, self.index, element, e.tol, u) for u in units]
            except EvaluationError:
                break
            example = _example(gradient, element, probes)
            if example is not None:
                found.append(self._placed(example))
        return sorted(found, key=lambda x: (not x.wrong, -x.abs_error))


def _example(gradient: Any, element: tuple[int, ...], probes: list[Probe]) -> ElementExample | None:
    if any(p.verdict not in (Verdict.PASS, Verdict.FAIL) for p in probes):
        return None
    value = to_host(gradient[element]).item()
    analytic: complex | float = complex(value) if is_complex(gradient) else float(value.real)
    numeric: complex | float = probes[0].numeric if len(probes) == 1 else complex(probes[0].numeric, probes[1].numeric)
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


def _element_numbers(example: ElementExample) -> Numbers:
    return Numbers(
        analytic=example.analytic,
        numeric=example.numeric,
        abs_error=example.abs_error,
        rel_error=example.rel_error,
        tolerance=example.tolerance,
        step=math.nan,
        probe=ProbeKind.ELEMENT,
        index=example.index,
    )
