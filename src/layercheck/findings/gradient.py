"""The gradient check's findings as the reports draw them: typed, and decoded once.

The gradient check records each argument's outcome, and for a failed one the blocks of every
partition its diagnosis probed (`details.arguments[i].diagnosis.blocks`: channels, time steps,
distances from the edge of the spatial plane, sign, value range), each with its verdict,
relative error and, for positions, the span of indices it covers. `GradientReport.of` reads
those details into the types below, strictly, wherever a `CheckResult` is made: from the
check itself, a worker's report, the cache or a report file. The console's and the HTML
report's pictures are drawn from these types (`reporters.pictures`), never from the strings
the details hold.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from layercheck.findings import gradient_wording
from layercheck.numerics import reading
from layercheck.numerics.blocks import EDGE_DISTANCE, PLANE_AXES  # the partitions a picture treats apart
from layercheck.numerics.gradients.findings import Diagnosis, Finding, MalformedFinding, Worst
from layercheck.status import STATUSES, Status

__all__ = [
    "EDGE_DISTANCE",
    "PLANE_AXES",
    "GradientArgument",
    "BlockResult",
    "BlockVerdict",
    "Agreement",
    "GradientReport",
    "MalformedDetails",
    "Partition",
]


class MalformedDetails(ValueError):
    """Details that are not what the gradient check records: `str()` says what, in one line
    (read back from a file or a worker, `results.MalformedReport`)."""


class BlockVerdict(str, Enum):
    """A block's verdict, as the diagnosis records it."""

    WRONG = "wrong"
    RIGHT = "right"
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class BlockResult:
    """One block of a partition: its label ("3", "X < 0", "3+"), verdict, relative error (None
    where the diagnosis measured no number) and, for a block of positions, the first and the
    last index it covers (last None: every one from the first on)."""

    label: str
    verdict: BlockVerdict
    rel_error: float | None
    span: tuple[int, int | None] | None = None


@dataclass(frozen=True)
class Partition:
    """The blocks of one partition an argument's diagnosis probed, in order; `said`: a region
    the diagnosis proved is stated in these blocks (a picture of it shows what was said)."""

    name: str
    blocks: tuple[BlockResult, ...]
    said: bool

    @property
    def localizes(self) -> bool:
        """Blocks proven wrong in some places and right in others."""
        verdicts = {block.verdict for block in self.blocks}
        return BlockVerdict.WRONG in verdicts and BlockVerdict.RIGHT in verdicts


@dataclass(frozen=True)
class GradientArgument:
    """One argument of the gradient check: its name, kind ("input", "learnable", "state"),
    status, shape and labels (an input's layout format, or the first input's for a learnable
    that broadcasts against it; else None), why it ended so (`reason`, the engine's words), its
    worst failing probe, and the diagnosis of a failed one, whose partitions the pictures draw."""

    argument: str
    kind: str
    status: Status
    shape: tuple[int, ...] = ()
    labels: str | None = None
    reason: str = ""
    worst: Worst | None = None
    diagnosis: Diagnosis | None = None
    # Passed at a reduced resolution only: the relative resolution reached.
    resolution: float | None = None

    @property
    def partitions(self) -> tuple[Partition, ...]:
        """The partitions its diagnosis probed, each block as a picture shades it; `said` where
        one of its regions is stated in that partition's blocks."""
        if self.diagnosis is None:
            return ()
        said = {region.unit for region in self.diagnosis.regions}
        return tuple(
            Partition(
                name,
                tuple(BlockResult(b.label, BlockVerdict(b.verdict.value), _finite(b.rel_error), b.span) for b in found),
                name in said,
            )
            for name, found in self.diagnosis.blocks.items()
        )

    @property
    def plane(self) -> tuple[int, int] | None:
        """The sizes of its first two spatial dimensions, where its labels name two, each with
        an interior (the distance from the edge is drawn only for those)."""
        if self.labels is None or len(self.labels) != len(self.shape):
            return None
        spatial = [n for n, label in zip(self.shape, self.labels) if label == "S"]
        if len(spatial) < 2 or min(spatial[:2]) < 3 or max(spatial[:2]) > _LARGEST_PLANE:
            return None
        return spatial[0], spatial[1]


# A plane larger than this along a side is no argument layercheck checked: drawn as a strip.
_LARGEST_PLANE = 1 << 31


@dataclass(frozen=True)
class Agreement:
    """What a passed gradient check's agreement rests on: the worst relative difference of the
    probes each pass rests on (a joint probe once), and how many outputs each of them left
    out at kinks (those that left some out), on the `device` the check ran on."""

    worst: float
    masked: tuple[int, ...] = ()
    device: str = "cpu"

    def to_dict(self) -> dict[str, Any]:
        return {"worst_rel_error": self.worst, "outputs_masked_at_kinks": list(self.masked)}

    @classmethod
    def from_dict(cls, data: Any, device: str) -> Agreement:
        fields = reading.exactly(data, "the agreement", {"worst_rel_error", "outputs_masked_at_kinks"})
        worst = reading.real(fields["worst_rel_error"], "the worst relative difference")
        masked = reading.indices(fields["outputs_masked_at_kinks"], "the outputs masked at kinks")
        if not 0 <= worst < math.inf or 0 in masked or device not in ("cpu", "gpu"):
            raise MalformedFinding(f"an agreement of {worst!r} on {device!r}, {masked} left out")
        return cls(worst, masked, device)


@dataclass(frozen=True)
class GradientReport:
    """What the reports say and draw of a gradient check: the pass it differentiated
    (`evaluated`) and what it fell back to (`fallback`, the engine's words), each argument, and
    the findings of a failed one (`details.findings`, each claim once). Its message
    (`headline`) and explanation are rendered from these (`findings.gradient_wording`)."""

    arguments: tuple[GradientArgument, ...]
    findings: tuple[Finding, ...] = ()
    evaluated: str = "forward"
    fallback: str | None = None
    # A passed check's: what its agreement rests on (None for another status, or a report of
    # an earlier version, whose pass message, made then from the same probes, stays).
    agreement: Agreement | None = None
    # Findings written by an earlier version, without `complex_values`: the sentence cannot be
    # rendered as it was, and the message carried beside them is kept (`CheckResult`).
    legacy: bool = False

    @classmethod
    def of(cls, details: Mapping[str, Any]) -> GradientReport | None:
        """The report of a gradient check's details; None for the details of another check
        (no `arguments`).

        Raises:
            MalformedDetails: what does not fit, in one line.
        """
        records = details.get("arguments")
        if records is None:
            return None
        fallback = details.get("fallback")
        try:
            written = reading.items(details.get("findings", []), "findings")
            findings = tuple(Finding.from_dict(found) for found in written)
            arguments = tuple(_argument(record) for record in reading.items(records, "arguments"))
            evaluated = reading.text(details.get("evaluated", "forward"), "the pass differentiated")
            fallback = None if fallback is None else reading.text(fallback, "the fallback")
            agreed = details.get("agreement")
            device = reading.text(details.get("device", "cpu"), "the device")
            agreement = None if agreed is None else Agreement.from_dict(agreed, device)
        except MalformedFinding as exc:
            raise MalformedDetails(str(exc)) from None
        legacy = any("complex_values" not in found for found in written)
        return cls(arguments, findings, evaluated, fallback, agreement, legacy)

    @property
    def passed(self) -> str:
        """The message of a passed check: how many gradients agree, how closely, and what the
        agreement rests on where it is less than the whole ("" without an agreement)."""
        if self.agreement is None:
            return ""
        checked = [(a.argument, a.resolution) for a in self.arguments if a.status is Status.PASSED]
        agreement = self.agreement
        on_gpu = agreement.device == "gpu"
        return gradient_wording.passed(
            self.evaluated, checked, agreement.worst, agreement.masked, on_gpu, self.fallback
        )

    @property
    def headline(self) -> str:
        """The message of a failed check: every finding once, as a sentence ("" for none)."""
        return "; ".join(gradient_wording.headline(finding) for finding in self.findings)

    @property
    def explanation(self) -> list[str]:
        """The lines under the message: what was differentiated, and each argument that did
        not pass, with its numbers and its diagnosis."""
        lines = [gradient_wording.differentiated(self.evaluated, self.fallback)]
        for a in self.arguments:
            if a.status not in (Status.PASSED, Status.SKIPPED):
                lines += gradient_wording.argument_lines(a.argument, a.kind, a.status, a.worst, a.reason, a.diagnosis)
        return lines


def _argument(record: Any) -> GradientArgument:
    record = reading.mapping(record, "an argument of the gradient check")
    name = reading.text(record.get("argument"), "an argument's name")
    where = f"argument {name[:80]!r}"
    shape = tuple(
        reading.whole(n, f"the shape of {where}")
        for n in reading.items(record.get("shape", []), f"the shape of {where}")
    )
    labels = record.get("labels")
    if labels is not None:
        labels = reading.text(labels, f"the labels of {where}")
    diagnosis = record.get("diagnosis")
    if diagnosis is not None:
        diagnosis = Diagnosis.from_dict(diagnosis)
    worst = None
    if "max_abs_error" in record:
        worst = Worst(*(reading.real(record.get(key), f"{key} of {where}") for key in _WORST))
    resolution = record.get("resolution")
    if resolution is not None:
        resolution = reading.real(resolution, f"the resolution of {where}")
    return GradientArgument(
        name,
        reading.text(record.get("kind"), f"the kind of {where}"),
        _status(record.get("status"), where),
        shape,
        labels,
        reading.text(record.get("reason", ""), f"the reason of {where}"),
        worst,
        diagnosis,
        resolution,
    )


_WORST = ("max_abs_error", "max_rel_error", "tolerance")


def _status(value: Any, where: str) -> Status:
    if type(value) is not str or value not in _ARGUMENT_STATUSES:
        raise MalformedDetails(f"{where} has status {str(value)[:40]!r}")
    return Status(value)


# What an argument of the gradient check can end with.
_ARGUMENT_STATUSES = {s.value for s in STATUSES}


def _finite(value: Any) -> float | None:
    """A number read as a float where it is one and finite (an int of JSON too large for a
    float is none); None otherwise. NumPy's float64 is a float; a bool is no number."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None
