"""Input layouts: sizes with a dimension label per axis, as in `24,24,20,128:SSCB`."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping

from .errors import UsageError

LABELS = "SCBTU"
_UNIQUE_LABELS = "CBT"
_NAMES = {"S": "spatial", "C": "channel", "B": "batch", "T": "time", "U": "unspecified"}


@dataclass(frozen=True)
class Layout:
    """The size and format of one layer input (MATLAB's networkDataLayout)."""

    size: tuple[int, ...]
    format: str

    def __post_init__(self):
        _validate(self.size, self.format)

    @property
    def ndim(self) -> int:
        return len(self.size)

    @property
    def numel(self) -> int:
        return math.prod(self.size)

    def find(self, label: str) -> int | None:
        """Index of the first axis labelled `label`, or None (MATLAB's finddim)."""
        index = self.format.find(label)
        return None if index < 0 else index

    def find_all(self, label: str) -> tuple[int, ...]:
        return tuple(i for i, c in enumerate(self.format) if c == label)

    def with_size(self, axis: int, n: int) -> "Layout":
        size = list(self.size)
        size[axis] = n
        return Layout(tuple(size), self.format)

    def __str__(self) -> str:
        return ",".join(map(str, self.size)) + ":" + self.format


def _validate(size: tuple[int, ...], fmt: str) -> None:
    if not fmt:
        raise UsageError("a layout needs a format such as SSCB")
    bad = sorted({c for c in fmt if c not in LABELS})
    if bad:
        raise UsageError(
            f"format {fmt!r} has unknown label(s) {', '.join(bad)}; "
            "use S (spatial), C (channel), B (batch), T (time), U (unspecified)"
        )
    for label in _UNIQUE_LABELS:
        if fmt.count(label) > 1:
            raise UsageError(f"format {fmt!r} has {fmt.count(label)} {label} ({_NAMES[label]}) axes; at most one is allowed")
    if len(size) != len(fmt):
        raise UsageError(
            f"layout has {len(size)} size(s) but format {fmt!r} has {len(fmt)} label(s); "
            "give one size per label"
        )
    for n in size:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise UsageError(f"layout sizes must be positive integers, got {n!r}")


_SIZE_RE = re.compile(r"^\s*\d+\s*$")


def parse_layout(spec: Any) -> Layout:
    """Parse `"24,24,20,128:SSCB"`, `{"size": [...], "format": "SSCB"}` or a Layout."""
    if isinstance(spec, Layout):
        return spec
    if isinstance(spec, Mapping):
        return _from_mapping(spec)
    if not isinstance(spec, str):
        raise UsageError(f"a layout is a string SIZES:FORMAT such as 24,24,20,128:SSCB, got {spec!r}")
    text = spec.strip()
    if text.count(":") != 1:
        raise UsageError(f"layout {spec!r} is not SIZES:FORMAT (e.g. 24,24,20,128:SSCB)")
    sizes_text, fmt = text.split(":")
    parts = sizes_text.split(",")
    if not all(_SIZE_RE.match(p) for p in parts):
        raise UsageError(f"layout {spec!r}: sizes must be comma-separated positive integers")
    return Layout(tuple(int(p) for p in parts), fmt.strip().upper())


def _from_mapping(spec: Mapping) -> Layout:
    unknown = set(spec) - {"size", "format"}
    if unknown or "size" not in spec or "format" not in spec:
        raise UsageError(f"a layout mapping has exactly the keys 'size' and 'format', got {sorted(map(str, spec))}")
    size, fmt = spec["size"], spec["format"]
    if not isinstance(size, (list, tuple)):
        raise UsageError(f"layout 'size' must be a list of positive integers, got {size!r}")
    if not isinstance(fmt, str):
        raise UsageError(f"layout 'format' must be a string such as SSCB, got {fmt!r}")
    return Layout(tuple(size), fmt.strip().upper())
