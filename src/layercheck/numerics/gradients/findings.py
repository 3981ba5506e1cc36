"""What the diagnosis of a failed gradient found, as data: the argument, the kind of cause,
the region, and the numbers. Nothing here is prose: `findings.gradient_wording` renders findings for
every report, and the JSON report carries them as they are (`to_dict`), so no reader ever
parses a sentence back.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from layercheck.numerics import reading
from layercheck.numerics.reading import MalformedFinding

__all__ = [
    "AcrossObservations",
    "AxesMistake",
    "BlockError",
    "BlockVerdict",
    "Cause",
    "Conjugation",
    "Diagnosis",
    "ElementExample",
    "Factor",
    "FactorForm",
    "Finding",
    "Flip",
    "Identity",
    "MalformedFinding",
    "Misplaced",
    "NamedSize",
    "NonFinite",
    "NonFiniteMove",
    "NonFiniteOutput",
    "Nonlinearity",
    "Numbers",
    "Permutation",
    "ProbeKind",
    "Region",
    "RegionKind",
    "Size",
    "SubBatchSize",
    "Worst",
    "resolution_text",
]


class Cause(enum.Enum):
    """The kind of a finding about a wrong gradient: a cause proven, or only where and how much."""

    NON_FINITE = "non_finite"  # NaN or infinite where the outputs and their differences are finite
    ZERO = "zero"  # zero everywhere (a missing gradient), or in its region where it is wrong
    IGNORES_DLDY = "ignores_dldy"  # backward returns the same for -2 dL/dY
    NOT_LINEAR_IN_DLDY = "not_linear_in_dldy"
    SWAPPED = "swapped"  # two arguments' gradients in each other's place
    MISPLACED = "misplaced"  # another argument's gradient in this one's place
    CONJUGATE = "conjugate"  # a conjugate missing, in one of the forms of `Conjugation`
    TRANSPOSED = "transposed"  # axes permuted
    FLIPPED = "flipped"  # reversed along some axes
    IDENTITY = "identity"  # off by dL/dY itself: an identity path left out, or added
    WRONG_SIGN = "wrong_sign"
    FACTOR = "factor"  # off by a constant factor
    WRONG_AXES = "wrong_axes"  # a broadcast argument's gradient summed over the wrong axes
    # right through each observation's own outputs, wrong through the other observations'
    ACROSS_OBSERVATIONS = "across_observations"
    LOCALIZED = "localized"  # wrong in a region and right elsewhere; no cause proven
    UNEXPLAINED = "unexplained"  # wrong; neither a cause nor a region proven


class ProbeKind(enum.Enum):
    """What measured a number: a random direction over the whole argument, over a block of
    it, or one element on its own."""

    DIRECTION = "random_direction"
    BLOCK = "block"
    ELEMENT = "element"


@dataclass(frozen=True)
class Numbers:
    """The analytic and numeric directional derivative that disagree, their difference, the
    tolerance it broke and how it was measured: the one set of numbers behind a claim."""

    analytic: complex | float
    numeric: complex | float
    abs_error: float
    rel_error: float
    tolerance: float
    step: float
    probe: ProbeKind
    index: tuple[int, ...] | None = None  # the element, for an ELEMENT probe

    def to_dict(self) -> dict[str, Any]:
        return {
            "analytic": self.analytic,
            "numeric": self.numeric,
            "abs_error": self.abs_error,
            "rel_error": self.rel_error,
            "tolerance": self.tolerance,
            "step": self.step,
            "probe": self.probe.value,
            "index": None if self.index is None else list(self.index),
        }

    @classmethod
    def from_dict(cls, data: Any) -> Numbers:
        data = reading.mapping(data, "a finding's numbers")
        index = data.get("index")
        return cls(
            reading.number(data.get("analytic"), "analytic"),
            reading.number(data.get("numeric"), "numeric"),
            reading.real(data.get("abs_error"), "abs_error"),
            reading.real(data.get("rel_error"), "rel_error"),
            reading.real(data.get("tolerance"), "tolerance"),
            reading.real(data.get("step"), "step"),
            reading.member(ProbeKind, data.get("probe"), "a probe kind"),
            None if index is None else reading.indices(index, "the index of a finding's numbers"),
        )


@dataclass(frozen=True)
class Worst:
    """An argument's worst failing probe, as its record keeps it: the numbers its claim states."""

    abs_error: float
    rel_error: float
    tolerance: float


class Size(enum.Enum):
    """A size of the problem that explains a constant factor."""

    BATCH = "batch size"
    CHANNELS = "number of channels"
    SEQUENCE = "sequence length"
    PER_CHANNEL = "number of elements per channel"
    SPATIAL = "number of spatial positions"
    SPATIAL_AXIS = "size of a spatial axis"
    ELEMENTS = "number of elements"


@dataclass(frozen=True)
class NamedSize:
    size: Size
    n: int
    axis: int | None = None  # which spatial axis (1-based), for SPATIAL_AXIS

    def to_dict(self) -> dict[str, Any]:
        return {"size": self.size.value, "n": self.n, "axis": self.axis}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NamedSize:
        axis = data.get("axis")
        return cls(
            reading.member(Size, data.get("size"), "a size"),
            reading.whole(data.get("n"), "a size's n"),
            None if axis is None else reading.whole(axis, "a size's axis"),
        )


class FactorForm(enum.Enum):
    """How a factor is best named."""

    SIZE = "size"  # n, a size of the problem
    INVERSE_SIZE = "inverse_size"  # 1/n
    FRACTION = "fraction"  # p/q with a small q (integers are q = 1)
    NEAR_ONE = "near_one"  # 1 +- a small relative error
    DECIMAL = "decimal"


@dataclass(frozen=True)
class Factor:
    """analytic / numeric, and how to name it."""

    ratio: float
    form: FactorForm
    numerator: int = 0
    denominator: int = 1
    size: NamedSize | None = None
    # The other sizes of the problem equal to `size` (two spatial axes of 24, a batch of 16 and
    # 16 channels): which of them the bug divides by, the factor cannot tell, so each is named.
    also: tuple[NamedSize, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {"ratio": self.ratio, "form": self.form.value}
        if self.form is FactorForm.FRACTION:
            found |= {"numerator": self.numerator, "denominator": self.denominator}
        if self.size is not None:
            found |= self.size.to_dict()
        if self.also:
            found["also"] = [named.to_dict() for named in self.also]
        return found

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Factor:
        """The inverse of `to_dict`: a fraction's numerator and denominator are written, a
        size's are its n (n/1, or 1/n for its inverse)."""
        form = reading.member(FactorForm, data.get("form"), "a factor's form")
        size = NamedSize.from_dict(data) if "size" in data else None
        if form in (FactorForm.SIZE, FactorForm.INVERSE_SIZE) and size is None:
            raise reading.MalformedFinding(f"a factor of form {form.value} names no size")
        if form is FactorForm.FRACTION:
            numerator = reading.integer(data.get("numerator"), "a factor's numerator")
            denominator = reading.integer(data.get("denominator"), "a factor's denominator")
        elif size is not None and form in (FactorForm.SIZE, FactorForm.INVERSE_SIZE):
            numerator, denominator = (size.n, 1) if form is FactorForm.SIZE else (1, size.n)
        else:
            numerator, denominator = 0, 1
        return cls(
            reading.real(data.get("ratio"), "a factor's ratio"),
            form,
            numerator,
            denominator,
            size,
            tuple(
                NamedSize.from_dict(reading.mapping(named, "a size"))
                for named in reading.items(data.get("also", []), "also")
            ),
        )


def resolution_text(resolution: float) -> str:
    """A reduced resolution in two digits, rounded up: what was ruled out is never said finer
    than it was (5.64e-6 is "5.7e-06", and 1.02e-6 never reads as the full "1e-06")."""
    shown = float(f"{resolution:.2g}")
    if shown < resolution:
        shown += 10.0 ** (math.floor(math.log10(resolution)) - 1)
    return f"{shown:.2g}"


def _resolution(value: Any, where: str) -> float:
    """A region's `resolution` read back: a relative error ruled out, finite and not negative."""
    resolution = reading.real(value, f"the resolution of {where}")
    if not 0 <= resolution < math.inf:
        raise MalformedFinding(f"the resolution of {where} is {resolution!r}, not a relative error")
    return resolution


class RegionKind(enum.Enum):
    BLOCKS = "blocks"  # indices along a named axis: channels 2, 5
    BORDER = "border"  # the border of the spatial plane, `depth` deep
    SIGN = "sign"  # where the argument is below (or above) zero
    VALUE_RANGE = "value_range"  # where the argument's value is in [low, high]
    ELEMENTS = "elements"  # elements measured one by one


@dataclass(frozen=True)
class Region:
    """Where a gradient was proven wrong, every other block of its partition proven right."""

    kind: RegionKind
    argument: str
    unit: str  # one block's name ("channel", "element"), from the partition
    units: str  # its plural
    wrong: tuple[str, ...]  # the wrong blocks' labels ("2", "0-3", "row 0"; an element's index)
    right: int  # blocks (or elements) proven right
    share: float  # of the argument's elements inside the region
    depth: int = 0  # BORDER: how deep
    border: str = ""  # BORDER: the rows and columns it spans, as blocks.describe_border names them
    wrong_edges: tuple[str, ...] = ()  # BORDER one deep: the edges wrong, where others are right
    spatial_axes: int = 2  # BORDER: how many spatial axes it runs along (1: a signal's two ends)
    below: bool = True  # SIGN: wrong where the argument is below zero (else above)
    low: float = -math.inf  # VALUE_RANGE: the bounds (infinite: open on that side)
    high: float = math.inf
    contiguous: bool = True  # VALUE_RANGE: one range, or several between low and high
    # BLOCKS along an axis: indices outside, in none of `right`, whose gradient is below a
    # thousandth of the largest index's (a saturated channel) and that no probe decided:
    # neither right nor wrong
    undecided: tuple[str, ...] = ()
    # Blocks found right by a probe that agreed only at a reduced resolution (a steep layer's
    # curvature bounds its finite difference above the full one): the coarsest relative error
    # they rule out (0: every block right at the full resolution), and, BLOCKS, their labels
    # (none: every block said right).
    resolution: float = 0.0
    reduced: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        found = dataclasses.asdict(self)
        found["kind"] = self.kind.value
        found["wrong"] = list(self.wrong)
        found["wrong_edges"] = list(self.wrong_edges)
        found["undecided"] = list(self.undecided)
        found["reduced"] = list(self.reduced)
        for bound in ("low", "high"):
            if not math.isfinite(found[bound]):
                found[bound] = None
        return found

    @classmethod
    def from_dict(cls, data: Any) -> Region:
        data = reading.mapping(data, "a region")
        where = "a region"
        low, high = data.get("low"), data.get("high")
        kind = reading.member(RegionKind, data.get("kind"), "a region's kind")
        # Every region but the elements measured (where none may be wrong: "wrong at every
        # element measured" has the numbers say where) holds a block found wrong.
        if kind is not RegionKind.ELEMENTS and not reading.items(data.get("wrong"), where):
            raise reading.MalformedFinding(f"a region of kind {kind.value} holds no block found wrong")
        return cls(
            kind,
            reading.text(data.get("argument"), f"the argument of {where}"),
            reading.text(data.get("unit"), f"the unit of {where}"),
            reading.text(data.get("units"), f"the units of {where}"),
            tuple(reading.text(label, f"a label of {where}") for label in reading.items(data.get("wrong"), where)),
            reading.whole(data.get("right"), f"the blocks right of {where}"),
            reading.real(data.get("share"), f"the share of {where}"),
            reading.whole(data.get("depth", 0), f"the depth of {where}"),
            reading.text(data.get("border", ""), f"the border of {where}"),
            tuple(
                reading.text(edge, f"an edge of {where}") for edge in reading.items(data.get("wrong_edges", []), where)
            ),
            reading.whole(data.get("spatial_axes", 2), f"the spatial axes of {where}"),
            reading.flag(data.get("below", True), f"below of {where}"),
            -math.inf if low is None else reading.real(low, f"the low bound of {where}"),
            math.inf if high is None else reading.real(high, f"the high bound of {where}"),
            reading.flag(data.get("contiguous", True), f"contiguous of {where}"),
            tuple(
                reading.text(label, f"an undecided label of {where}")
                for label in reading.items(data.get("undecided", []), where)
            ),
            _resolution(data.get("resolution", 0.0), where),
            tuple(
                reading.text(label, f"a label of {where} right at a reduced resolution")
                for label in reading.items(data.get("reduced", []), where)
            ),
        )


@dataclass(frozen=True)
class Misplaced:
    other: str  # the argument whose gradient was returned


class Conjugation(enum.Enum):
    CONJUGATE = "conjugate"  # conj(g) is right
    HALF_CONJUGATE = "half_conjugate"  # 2 conj(g) is right: the Wirtinger dL/dz
    INSIDE = "inside"  # right for conj(dL/dY), conjugated: a derivative where its conjugate belongs


@dataclass(frozen=True)
class Permutation:
    axes: tuple[int, ...]


@dataclass(frozen=True)
class Flip:
    """The axes along which backward's gradient is the right one reversed, and the argument's
    format, to name them ("" when it has none)."""

    axes: tuple[int, ...]
    labels: str


@dataclass(frozen=True)
class Identity:
    """The gradient is off by the loss weights of one output, dL/dY itself: `left_out` (it
    lacks them: the identity path of Y = X + f(X)), else it has them once too often; `output`
    names them ("dL/dY", or "dL/dY2" where the layer has several outputs)."""

    output: str
    left_out: bool


@dataclass(frozen=True)
class AxesMistake:
    contribution: str  # what was summed: "dL/dY", "dL/dY * X"
    summed_over_all_but: tuple[int, ...]  # the axes backward kept
    should_keep: tuple[int, ...]  # the axes the argument has
    labels: str  # the argument's format, to name the axes ("" when it has none)


@dataclass(frozen=True)
class AcrossObservations:
    """Each of `observations` moved alone changes the other observations' outputs, and for a
    loss on those alone backward gives nothing: `analytic` and `numeric` are the directional
    derivative of that loss for the first of them (backward's, and the finite difference's),
    `relative` the error of the first against the second. `within`: the observations were
    moved among the batch's first `within` (a large batch's sub-batch), then the batch's first
    and last among the whole batch, for the loss on the others' outputs, the numbers the
    first's there (None: every observation moved among the whole batch). `others`: how many
    observations' outputs that loss of the first's was on (None: all but the first's and the
    last's, or every observation moved among the whole batch)."""

    observations: tuple[int, ...]
    batch: int
    analytic: float
    numeric: float
    relative: float
    within: int | None = None
    others: int | None = None


@dataclass(frozen=True)
class Nonlinearity:
    scale: float  # dL/dY was multiplied by this
    relative: float  # how far the gradient is from `scale` times itself


@dataclass(frozen=True)
class NonFinite:
    count: int
    total: int
    elements: tuple[tuple[int, ...], ...]  # the first few


@dataclass(frozen=True)
class NonFiniteOutput:
    """One output (or updated state, by its index in the pass's outputs) that was finite at
    the drawn inputs and NaN or infinite after a move: how many of its elements, of how many,
    and the first of them."""

    output: int
    count: int
    total: int
    first: tuple[int, ...]


@dataclass(frozen=True)
class NonFiniteMove:
    """Why a probe could not decide for lack of finite outputs: the arguments it moved (by
    index), the step, the one element moved (an element probe; None: a random direction, each
    element moved by about the step), whether that element's imaginary part was moved, and the
    outputs that went NaN or infinite although they were finite at the drawn inputs."""

    arguments: tuple[int, ...]
    step: float
    element: tuple[int, ...] | None
    imaginary: bool
    outputs: tuple[NonFiniteOutput, ...]

    def to_dict(self, argument_names: Sequence[str], output_names: Sequence[str]) -> dict[str, Any]:
        """The JSON record, with the arguments and outputs by name."""
        return {
            "arguments": [argument_names[i] for i in self.arguments],
            "step": self.step,
            "element": None if self.element is None else list(self.element),
            "imaginary": self.imaginary,
            "outputs": [
                {"output": _name(output_names, o.output), "count": o.count, "total": o.total, "first": list(o.first)}
                for o in self.outputs
            ],
        }


def _name(names: Sequence[str], index: int) -> str:
    return names[index] if 0 <= index < len(names) else f"output {index + 1}"


Detail = (
    Factor
    | Misplaced
    | Conjugation
    | Permutation
    | Flip
    | Identity
    | AxesMistake
    | AcrossObservations
    | Nonlinearity
    | NonFinite
    | None
)


@dataclass(frozen=True)
class Finding:
    """One claim: the arguments it is about, its cause and detail, where it holds (None:
    everywhere) and the numbers that show the gradient wrong. Equal findings about different
    arguments are one finding about several (`arguments`)."""

    cause: Cause
    arguments: tuple[str, ...]
    detail: Detail = None
    region: Region | None = None
    numbers: Numbers | None = None  # UNEXPLAINED and LOCALIZED only: the claim is a number
    complex_values: bool = False  # a complex problem: the conjugate is the usual suspect

    def same_claim(self, other: Finding) -> bool:
        """Whether `other` says of its arguments what this says of its own."""
        return (
            self.cause is other.cause
            and self.detail == other.detail
            and self.numbers is None
            and other.numbers is None
            and self.region is None
            and other.region is None
            and self.complex_values == other.complex_values
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "cause": self.cause.value,
            "arguments": list(self.arguments),
            "detail": _detail(self.detail),
            "region": None if self.region is None else self.region.to_dict(),
            "numbers": None if self.numbers is None else self.numbers.to_dict(),
            "complex_values": self.complex_values,
        }

    @classmethod
    def from_dict(cls, data: Any) -> Finding:
        """The inverse of `to_dict` (after `results.plain`: complex numbers as [re, im],
        non-finite ones as strings), for data that may not be layercheck's own (a worker's
        report, a report file): every field checked.

        Raises:
            MalformedFinding: what does not fit, in one line.
        """
        data = reading.mapping(data, "a finding")
        try:
            cause = Cause(data.get("cause"))
        except ValueError:
            raise reading.MalformedFinding(f"a finding has cause {reading.shown(data.get('cause'))}") from None
        where = f"a finding of cause {cause.value}"
        arguments = tuple(
            reading.text(a, f"an argument of {where}") for a in reading.items(data.get("arguments"), where)
        )
        if not arguments:
            raise reading.MalformedFinding(f"{where} names no argument")
        detail = data.get("detail")
        region, numbers = data.get("region"), data.get("numbers")
        return cls(
            cause,
            arguments,
            None if detail is None else _read_detail(cause, reading.mapping(detail, f"the detail of {where}")),
            None if region is None else Region.from_dict(region),
            None if numbers is None else Numbers.from_dict(numbers),
            reading.flag(data.get("complex_values", False), f"complex_values of {where}"),
        )


class BlockVerdict(enum.Enum):
    WRONG = "wrong"
    RIGHT = "right"
    UNDECIDED = "undecided"


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

    @classmethod
    def from_dict(cls, data: Any) -> ElementExample:
        data = reading.mapping(data, "an element measured")
        where = "an element measured"
        return cls(
            reading.indices(data.get("index"), f"the index of {where}"),
            reading.number(data.get("analytic"), f"the analytic side of {where}"),
            reading.number(data.get("numeric"), f"the numeric side of {where}"),
            reading.real(data.get("abs_error"), f"the abs_error of {where}"),
            reading.real(data.get("rel_error"), f"the rel_error of {where}"),
            reading.real(data.get("tolerance"), f"the tolerance of {where}"),
            reading.flag(data.get("wrong"), f"wrong of {where}"),
        )


@dataclass(frozen=True)
class BlockError:
    """One block of a partition as the probes of it measured it."""

    label: str
    verdict: BlockVerdict
    abs_error: float
    rel_error: float
    tolerance: float
    probes: int  # probes that agree on the verdict: 1 (a screen), 2 (confirmed), 0 (measured element by element)
    span: tuple[int, int | None] | None = None  # `blocks.Block.span`

    def to_dict(self) -> dict[str, Any]:
        return {
            "block": self.label,
            "verdict": self.verdict.value,
            "abs_error": self.abs_error,
            "rel_error": self.rel_error,
            "tolerance": self.tolerance,
            "probes": self.probes,
            "span": None if self.span is None else list(self.span),
        }

    @classmethod
    def from_dict(cls, data: Any) -> BlockError:
        data = reading.mapping(data, "a block")
        where = f"block {reading.text(data.get('block'), 'a block label')[:40]!r}"
        span = data.get("span")
        if span is not None:
            items = reading.items(span, f"the span of {where}")
            if len(items) != 2:
                raise reading.MalformedFinding(f"{where} has span {reading.shown(span)}, not [first, last]")
            first, last = reading.whole(items[0], where), None if items[1] is None else reading.whole(items[1], where)
            if last is not None and last < first:
                raise reading.MalformedFinding(
                    f"{where} has span {reading.shown(span)}, its last index before its first"
                )
            span = (first, last)
        return cls(
            data["block"],
            reading.member(BlockVerdict, data.get("verdict"), f"the verdict of {where}"),
            reading.real(data.get("abs_error"), f"the abs_error of {where}"),
            reading.real(data.get("rel_error"), f"the rel_error of {where}"),
            reading.real(data.get("tolerance"), f"the tolerance of {where}"),
            reading.whole(data.get("probes"), f"the probes of {where}"),
            span,
        )


@dataclass(frozen=True)
class Diagnosis:
    """Everything the diagnosis of one failed argument found: its claim, every region proven
    (the claim's first), elements measured one by one, the blocks of each partition probed,
    and the budget after which it stopped, if it did (what it had no budget to test is not
    said): its calls of the layer, or the seconds of its share of the timeout."""

    finding: Finding
    regions: tuple[Region, ...] = ()
    examples: tuple[ElementExample, ...] = ()
    blocks: Mapping[str, tuple[BlockError, ...]] = field(default_factory=dict)
    stopped_after_s: float | None = None
    stopped_after_calls: int | None = None
    # Of the calls made before it stopped after its calls, those on part of the batch (a
    # sub-batch's), each charged its share of a call on the whole batch; 0 where none were.
    calls_on_part: int = 0
    # Localized on the first observations of the batch (`sub_batch.SubBatch`): its blocks and
    # examples were measured there, its finding then proven on the whole batch. None: on the
    # whole batch.
    sub_batch: SubBatchSize | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "finding": self.finding.to_dict(),
            "regions": [r.to_dict() for r in self.regions],
            "examples": [e.to_dict() for e in self.examples],
            "blocks": {unit: [b.to_dict() for b in found] for unit, found in self.blocks.items()},
            "stopped_after_s": self.stopped_after_s,
            "stopped_after_calls": self.stopped_after_calls,
            "calls_on_part": self.calls_on_part,
            "sub_batch": None if self.sub_batch is None else self.sub_batch.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Any) -> Diagnosis:
        """The inverse of `to_dict`, strictly (see `Finding.from_dict`)."""
        data = reading.mapping(data, "a diagnosis")
        blocks = reading.mapping(data.get("blocks", {}), "the blocks of a diagnosis")
        seconds, calls, sub_batch = data.get("stopped_after_s"), data.get("stopped_after_calls"), data.get("sub_batch")
        if sub_batch is not None:
            sub_batch = reading.mapping(sub_batch, "the sub-batch of a diagnosis")
            where = "the sub-batch of a diagnosis"
            sub_batch = SubBatchSize(
                reading.whole(sub_batch.get("observations"), where),
                reading.whole(sub_batch.get("batch"), where),
                reading.whole(sub_batch.get("first", 0), where),
            )
        return cls(
            Finding.from_dict(data.get("finding")),
            tuple(Region.from_dict(region) for region in reading.items(data.get("regions", []), "regions")),
            tuple(ElementExample.from_dict(e) for e in reading.items(data.get("examples", []), "examples")),
            {
                reading.text(unit, "a partition's name"): tuple(
                    BlockError.from_dict(b) for b in reading.items(found, "blocks")
                )
                for unit, found in blocks.items()
            },
            None if seconds is None else reading.real(seconds, "stopped_after_s"),
            None if calls is None else reading.whole(calls, "stopped_after_calls"),
            reading.whole(data.get("calls_on_part", 0), "calls_on_part"),
            sub_batch,
        )


@dataclass(frozen=True)
class SubBatchSize:
    """The `observations` of a batch of `batch` from its `first`: where a diagnosis was
    localized."""

    observations: int
    batch: int
    first: int = 0

    @property
    def words(self) -> str:
        last = self.first + self.observations - 1
        if last == self.first:
            return f"observation {self.first} of {self.batch}"
        return f"observations {self.first}-{last} of {self.batch}"

    def to_dict(self) -> dict[str, int]:
        """The JSON record (`first` where the sub-batch does not start the batch)."""
        found = {"observations": self.observations, "batch": self.batch}
        return found | {"first": self.first} if self.first else found


def _detail(detail: Detail) -> dict[str, Any] | None:
    if detail is None:
        return None
    if isinstance(detail, Factor):
        return detail.to_dict()
    if isinstance(detail, Conjugation):
        return {"form": detail.value}
    found = dataclasses.asdict(detail)
    return {k: list(v) if isinstance(v, tuple) else v for k, v in found.items()}


def _read_detail(cause: Cause, data: Mapping[str, Any]) -> Detail:
    """The detail a finding of `cause` carries (`_detail` written back)."""
    where = f"the detail of a finding of cause {cause.value}"
    if cause is Cause.FACTOR:
        return Factor.from_dict(data)
    if cause is Cause.MISPLACED:
        return Misplaced(reading.text(data.get("other"), where))
    if cause is Cause.CONJUGATE:
        return reading.member(Conjugation, data.get("form"), where)
    if cause is Cause.TRANSPOSED:
        return Permutation(reading.indices(data.get("axes"), where))
    if cause is Cause.FLIPPED:
        return Flip(reading.indices(data.get("axes"), where), reading.text(data.get("labels"), where))
    if cause is Cause.IDENTITY:
        return Identity(reading.text(data.get("output"), where), reading.flag(data.get("left_out"), where))
    if cause is Cause.WRONG_AXES:
        return AxesMistake(
            reading.text(data.get("contribution"), where),
            reading.indices(data.get("summed_over_all_but"), where),
            reading.indices(data.get("should_keep"), where),
            reading.text(data.get("labels"), where),
        )
    if cause is Cause.ACROSS_OBSERVATIONS:
        if not reading.items(data.get("observations"), where):
            raise reading.MalformedFinding(f"{where} shows no observation")
        return AcrossObservations(
            reading.indices(data.get("observations"), where),
            reading.whole(data.get("batch"), where),
            reading.real(data.get("analytic"), where),
            reading.real(data.get("numeric"), where),
            reading.real(data.get("relative"), where),
            None if data.get("within") is None else reading.whole(data.get("within"), where),
            None if data.get("others") is None else reading.whole(data.get("others"), where),
        )
    if cause in (Cause.IGNORES_DLDY, Cause.NOT_LINEAR_IN_DLDY):
        return Nonlinearity(reading.real(data.get("scale"), where), reading.real(data.get("relative"), where))
    if cause is Cause.NON_FINITE:
        elements = tuple(reading.indices(element, where) for element in reading.items(data.get("elements"), where))
        return NonFinite(reading.whole(data.get("count"), where), reading.whole(data.get("total"), where), elements)
    raise reading.MalformedFinding(f"a finding of cause {cause.value} carries a detail")
