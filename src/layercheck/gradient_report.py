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

from layercheck import gradient_wording
from layercheck.numerics.gradients.findings import Finding, MalformedFinding
from layercheck.status import STATUSES, Status

__all__ = [
    "EDGE_DISTANCE",
    "PLANE_AXES",
    "ArgumentBlocks",
    "BlockResult",
    "BlockVerdict",
    "GradientReport",
    "MalformedDetails",
    "Partition",
]

# The names of the partitions a picture treats apart (the keys of `diagnosis.blocks`, written by
# `numerics.blocks`): the distance from the edge of the spatial plane, drawn as a map of the
# plane, and its rows and columns, which that map shows better.
EDGE_DISTANCE = "distance from the edge"
PLANE_AXES = ("row", "column")


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
class ArgumentBlocks:
    """One argument of the gradient check: its name, kind ("input", "learnable", "state"),
    status, shape and labels (an input's layout format, or the first input's for a learnable
    that broadcasts against it; else None), and the partitions of its diagnosis."""

    argument: str
    kind: str
    status: Status
    shape: tuple[int, ...] = ()
    labels: str | None = None
    partitions: tuple[Partition, ...] = ()

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
class GradientReport:
    """What the reports say and draw of a gradient check: each argument's blocks, and the
    findings of a failed one (`details.findings`, each claim once), from which its message is
    rendered (`headline`)."""

    arguments: tuple[ArgumentBlocks, ...]
    findings: tuple[Finding, ...] = ()

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
        try:
            findings = tuple(Finding.from_dict(found) for found in _list(details.get("findings", []), "findings"))
        except MalformedFinding as exc:
            raise MalformedDetails(str(exc)) from None
        return cls(tuple(_argument(record) for record in _list(records, "arguments")), findings)

    @property
    def headline(self) -> str:
        """The message of a failed check: every finding once, as a sentence ("" for none)."""
        return "; ".join(gradient_wording.headline(finding) for finding in self.findings)


def _argument(record: Any) -> ArgumentBlocks:
    record = _mapping(record, "an argument of the gradient check")
    name = _text(record.get("argument"), "an argument's name")
    where = f"argument {name[:80]!r}"
    shape = tuple(_whole(n, f"the shape of {where}") for n in _list(record.get("shape", []), f"the shape of {where}"))
    labels = record.get("labels")
    if labels is not None:
        labels = _text(labels, f"the labels of {where}")
    diagnosis = record.get("diagnosis")
    partitions: tuple[Partition, ...] = ()
    if diagnosis is not None:
        diagnosis = _mapping(diagnosis, f"the diagnosis of {where}")
        said = {
            _text(_mapping(region, f"a region of {where}").get("unit"), f"the unit of a region of {where}")
            for region in _list(diagnosis.get("regions", []), f"the regions of {where}")
        }
        blocks = _mapping(diagnosis.get("blocks", {}), f"the blocks of {where}")
        partitions = tuple(
            Partition(name, tuple(_block(b, where) for b in _list(found, f"the blocks of {where}")), name in said)
            for name, found in blocks.items()
        )
    return ArgumentBlocks(
        name,
        _text(record.get("kind"), f"the kind of {where}"),
        _status(record.get("status"), where),
        shape,
        labels,
        partitions,
    )


def _block(data: Any, where: str) -> BlockResult:
    data = _mapping(data, f"a block of {where}")
    verdict = data.get("verdict")
    if type(verdict) is not str or verdict not in {v.value for v in BlockVerdict}:
        raise MalformedDetails(f"a block of {where} has verdict {str(verdict)[:40]!r}")
    error = data.get("rel_error")
    # non-finite numbers are written as strings ("nan"): no number to shade by
    number = _finite(error)
    span = data.get("span")
    if span is not None:
        items = _list(span, f"the span of a block of {where}")
        if len(items) != 2 or items[1] is not None and _whole(items[1], where) < _whole(items[0], where):
            raise MalformedDetails(f"a block of {where} has span {str(span)[:40]}")
        span = (_whole(items[0], where), None if items[1] is None else _whole(items[1], where))
    return BlockResult(_text(data.get("block"), f"a block's label of {where}"), BlockVerdict(verdict), number, span)


def _status(value: Any, where: str) -> Status:
    if type(value) is not str or value not in _ARGUMENT_STATUSES:
        raise MalformedDetails(f"{where} has status {str(value)[:40]!r}")
    return Status(value)


# What an argument of the gradient check can end with.
_ARGUMENT_STATUSES = {s.value for s in STATUSES}


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise MalformedDetails(f"{what} is not a mapping")
    return value


def _list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, (list, tuple)):
        raise MalformedDetails(f"{what} are not a list")
    return list(value)


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise MalformedDetails(f"{what} is not a string")
    return value


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


def _whole(value: Any, what: str) -> int:
    # Sizes and indices of arrays: below 2**63, as NumPy's are.
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << 63:
        raise MalformedDetails(f"{what} holds {str(value)[:40]!r}, not a whole number >= 0")
    return value
