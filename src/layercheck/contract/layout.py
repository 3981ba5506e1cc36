"""Input layouts: sizes with a dimension label per axis, as in `24,24,20,128:SSCB`."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from layercheck.errors import UsageError
from layercheck.safetext import plain_str, safe_repr

__all__ = ["LABELS", "Layout", "parse_layout", "parse_layouts", "validate_format"]

LABELS = "SCBTU"
_UNIQUE_LABELS = "CBT"
_NAMES = {"S": "spatial", "C": "channel", "B": "batch", "T": "time", "U": "unspecified"}


@dataclass(frozen=True)
class Layout:
    """The size and format of one layer input (MATLAB's networkDataLayout); `integer` is the
    inclusive range (low, high) of an input of integers (token ids, class indices)."""

    size: tuple[int, ...]
    format: str
    integer: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.format, str):  # a str subclass (a StrEnum member) by its plain value
            object.__setattr__(self, "format", plain_str(self.format))
        _validate(self.size, self.format)
        if self.integer is not None:
            _validate_range(self.integer)

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

    def with_batch_size(self, n: int) -> Layout:
        """The same layout with `n` observations (unchanged when there is no B axis)."""
        axis = self.find("B")
        if axis is None:
            return self
        return Layout(self.size[:axis] + (n,) + self.size[axis + 1 :], self.format, self.integer)

    def __str__(self) -> str:
        text = ",".join(map(str, self.size)) + ":" + self.format
        return text if self.integer is None else text + f":int={self.integer[0]}..{self.integer[1]}"


def _validate_range(integer: Any) -> None:
    if (
        not isinstance(integer, tuple)
        or len(integer) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in integer)
        or integer[0] > integer[1]
        or not -(2**63) <= integer[0] <= integer[1] < 2**63  # drawn as int64
    ):
        raise UsageError(
            f"an integer input's range is (low, high) with int64 integers low <= high, got {safe_repr(integer, 100)}"
        )


def validate_format(fmt: str) -> None:
    """Known labels, and at most one C, B and T axis."""
    if not fmt:
        raise UsageError("a layout needs a format such as SSCB")
    bad = sorted({c for c in fmt if c not in LABELS})
    if bad:
        raise UsageError(
            f"format {safe_repr(fmt, 100)} has unknown label(s) {', '.join(safe_repr(b, 20) for b in bad)}; "
            "use S (spatial), C (channel), B (batch), T (time), U (unspecified)"
        )
    for label in _UNIQUE_LABELS:
        if fmt.count(label) > 1:
            raise UsageError(
                f"format {safe_repr(fmt, 100)} has {fmt.count(label)} {label} ({_NAMES[label]}) axes; at most one is allowed"
            )


# NumPy 1.x arrays have at most 32 dimensions (NumPy 2: 64); more cannot be checked anywhere.
MAX_DIMS = 32


def _validate(size: tuple[int, ...], fmt: str) -> None:
    if len(fmt) > MAX_DIMS or len(size) > MAX_DIMS:
        raise UsageError(f"layout has {max(len(fmt), len(size))} dimensions; NumPy arrays have from 1 to {MAX_DIMS}")
    validate_format(fmt)
    if len(size) != len(fmt):
        raise UsageError(
            f"layout has {len(size)} size(s) but format {safe_repr(fmt, 100)} has {len(fmt)} label(s); give one size per label"
        )
    for n in size:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise UsageError(f"layout sizes must be positive integers, got {safe_repr(n, 100)}")


_SIZE_RE = re.compile(r"^\s*\d+\s*$")


def parse_layout(spec: Any) -> Layout:
    """Parse `"24,24,20,128:SSCB"`, `{"size": [...], "format": "SSCB"}` or a Layout.

    An input of integers in [low, high] is `"20,32:TB:int=0..999"` or has the key
    `integer: [0, 999]`."""
    if isinstance(spec, Layout):
        return spec
    if isinstance(spec, Mapping):
        return _from_mapping(spec)
    if not isinstance(spec, str):
        raise UsageError(f"a layout is a string SIZES:FORMAT such as 24,24,20,128:SSCB, got {safe_repr(spec, 100)}")
    # A layer's example_layout may be of a str subclass (a StrEnum member): its plain value,
    # read without calling the subclass's methods (`strip`, `split` and `in` may be its own).
    spec = plain_str(spec)
    text = spec.strip()
    if text.count(":") not in (1, 2):
        raise UsageError(
            f"layout {safe_repr(spec, 100)} is not SIZES:FORMAT (e.g. 24,24,20,128:SSCB, or 20,32:TB:int=0..999)"
        )
    sizes_text, fmt, *integer = text.split(":")
    parts = sizes_text.split(",")
    if not all(_SIZE_RE.match(p) for p in parts):
        raise UsageError(f"layout {safe_repr(spec, 100)}: sizes must be comma-separated positive integers")
    return Layout(_sizes(parts, spec), _format(fmt), _integer_range(integer[0], spec) if integer else None)


_RANGE_RE = re.compile(r"^\s*int\s*=\s*(-?\d{1,18})\s*\.\.\s*(-?\d{1,18})\s*$")


def _integer_range(text: str, spec: str) -> tuple[int, int]:
    match = _RANGE_RE.match(text)
    if not match:
        raise UsageError(
            f"layout {safe_repr(spec, 100)}: the part after the format must be int=LOW..HIGH (e.g. int=0..999)"
        )
    low, high = int(match.group(1)), int(match.group(2))
    if low > high:
        raise UsageError(f"layout {safe_repr(spec, 100)}: the integer range {low}..{high} is empty")
    return low, high


def parse_layouts(spec: Any) -> list[Layout]:
    """One layout per input: a single layout (string, mapping or Layout) or a list of them."""
    if isinstance(spec, (list, tuple)) and not (spec and isinstance(spec[0], int)):
        return [parse_layout(item) for item in spec]
    return [parse_layout(spec)]


def _sizes(parts: Sequence[str], spec: Any) -> tuple[int, ...]:
    try:
        return tuple(int(p) for p in parts)
    except ValueError:  # more digits than Python converts
        raise UsageError(f"layout {safe_repr(spec, 100)}: a size is too large") from None


def _format(text: str) -> str:
    """Upper-case labels; only the ASCII labels themselves ('ß'.upper() is 'SS')."""
    text = text.strip()
    return "".join(c.upper() if c in LABELS.lower() else c for c in text)


def _from_mapping(spec: Mapping[str, Any]) -> Layout:
    unknown = set(spec) - {"size", "format", "integer"}
    if unknown or "size" not in spec or "format" not in spec:
        raise UsageError(
            f"a layout mapping has the keys 'size' and 'format' (and 'integer': [low, high]), got {sorted(map(str, spec))}"
        )
    size, fmt = spec["size"], spec["format"]
    if not isinstance(size, (list, tuple)):
        raise UsageError(f"layout 'size' must be a list of positive integers, got {safe_repr(size, 100)}")
    if not isinstance(fmt, str):
        raise UsageError(f"layout 'format' must be a string such as SSCB, got {safe_repr(fmt, 100)}")
    fmt = plain_str(fmt)  # as a layout's text (`parse_layout`)
    integer = spec.get("integer")
    if integer is not None:
        if not isinstance(integer, (list, tuple)):
            raise UsageError(f"layout 'integer' must be [low, high], got {safe_repr(integer, 100)}")
        integer = tuple(integer)
    return Layout(tuple(size), _format(fmt), integer)
