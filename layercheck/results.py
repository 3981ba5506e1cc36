"""What a run produces: check results per target, and the report over all targets."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np

from layercheck.safetext import (
    MESSAGE_LIMIT,
    NAME_LIMIT,
    TRACEBACK_LIMIT,
    bounded,
    bounded_data,
    encodable,
    safe_repr,
    safe_str,
    visible,
)

__all__ = [
    "Cause",
    "CheckFailure",
    "CheckResult",
    "Kind",
    "MalformedReport",
    "Report",
    "SCHEMA_VERSION",
    "STATUSES",
    "Status",
    "TargetReport",
    "cause_of",
    "count",
    "plain",
]


class Status(str, Enum):
    """How a check ended, or (ERROR) a target that could not be checked. Valued as the strings
    of the JSON and JUnit reports, so `status == "passed"` holds and `json.dumps` writes the
    value; `str()` and f-strings give the value too, on every Python version."""

    PASSED = "passed"
    FAILED = "failed"
    INCOMPLETE = "incomplete"
    SKIPPED = "skipped"
    ERROR = "error"  # a target's status when it could not be checked (TargetReport.error is set)

    def __str__(self) -> str:
        return self.value


class Kind(str, Enum):
    """What a target is: a layer, or a differentiable operation ("function" in the reports)."""

    LAYER = "layer"
    FUNCTION = "function"

    def __str__(self) -> str:
        return self.value


class Cause(str, Enum):
    """Why a check's result, or a target's error, tells about the process rather than the layer:
    set where the exception is caught, from its type, and read by batch runs (a worker that
    ran out of memory stops; a layer that called sys.exit is that target's error)."""

    MEMORY = "memory"  # MemoryError
    EXIT = "exit"  # SystemExit (sys.exit)
    INTERNAL = "internal"  # a defect of layercheck: the target is an error, never a pass
    INTERRUPTED = "interrupted"  # the user stopped the run before the target was done

    def __str__(self) -> str:
        return self.value


def cause_of(exc: BaseException | None) -> Cause | None:
    """The cause an exception carries: its own type, else that of the exception it was raised
    from or while handling (a TargetError raised for a constructor's MemoryError, say)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, MemoryError):
            return Cause.MEMORY
        if isinstance(exc, SystemExit):
            return Cause.EXIT
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


# A check's statuses, in the order of the summaries.
STATUSES = (Status.PASSED, Status.FAILED, Status.INCOMPLETE, Status.SKIPPED)

SCHEMA_VERSION = "1.0"

# The typed fields of a CheckResult, under the `details` keys the JSON schema gives them.
_TYPED_DETAILS = ("explanation", "problems", "traceback")


@dataclass
class CheckResult:
    """One check's result.

    `details` holds what the check found (shapes, mismatches, records); `explanation` (lines
    that say why, for the reports), `problems` (every problem when the message names one) and
    `traceback` (the user's frames) are fields, written into `details` under those keys by
    `to_dict` only, so that the JSON keeps its schema. `details` given with those keys (a
    report's data read back) is read into the fields. `cause` is not part of the report.
    """

    name: str
    status: Status
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0
    explanation: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    traceback: str = ""
    cause: Cause | None = None

    def __post_init__(self) -> None:
        self.status = Status(self.status)
        if any(key in self.details for key in _TYPED_DETAILS):
            details = dict(self.details)
            self.explanation = self.explanation or [str(line) for line in details.pop("explanation", None) or ()]
            self.problems = self.problems or [str(p) for p in details.pop("problems", None) or ()]
            self.traceback = self.traceback or str(details.pop("traceback", None) or "")
            self.details = details
        # What a layer raised or returned may be megabytes of text: bounded where the result
        # is made, in the worker, before it is sent, copied or rendered.
        self.message = _text(self.message)
        self.traceback = _text(self.traceback, TRACEBACK_LIMIT)
        self.explanation = [_text(line) for line in self.explanation]
        self.problems = [_text(p) for p in self.problems]
        self.details = bounded_data(self.details)

    def to_dict(self) -> dict[str, Any]:
        # The typed fields go where today's JSON has them: the traceback first, the
        # explanation and the problems after what the check recorded.
        details: dict[str, Any] = {"traceback": self.traceback} if self.traceback else {}
        details.update(self.details)
        if self.explanation:
            details["explanation"] = list(self.explanation)
        if self.problems:
            details["problems"] = list(self.problems)
        return {
            "name": self.name,
            "status": self.status.value,
            "message": self.message,
            "details": details,
            "duration_s": round(self.duration_s, 6),
        }

    @classmethod
    def from_dict(cls, data: Any) -> CheckResult:
        """The inverse of `to_dict`, for data that may not be layercheck's own (a worker's
        report, which the layer could have forged; a JSON file read back).

        Raises:
            MalformedReport: one line that says what does not fit; never another exception.
        """
        fields = _fields(data, "a check result", _CHECK_KEYS)
        name = _string(fields.get("name"), "a check's name")
        where = f"check {visible(bounded(name, 100))}"
        status = fields.get("status")
        if type(status) is not str or status not in _CHECK_STATUSES:
            raise MalformedReport(f"{where} has status {_shown(status)}, not one of {', '.join(_CHECK_STATUSES)}")
        details = fields.get("details") or {}
        if type(details) is not dict:
            raise MalformedReport(f"{where} has details {_shown(details)}, not a mapping")
        _json_like(details, f"the details of {where}")
        return cls(
            name,
            Status(status),
            _string(fields.get("message", ""), f"the message of {where}"),
            details,
            _duration(fields.get("duration_s", 0.0), where),
        )


def _text(value: Any, limit: int = MESSAGE_LIMIT) -> str:
    return encodable(bounded(str(value), limit))


def count(statuses: Iterable[Status]) -> dict[str, int]:
    """How many of each check status, keyed by the status strings (the reports' summaries)."""
    counts = {status.value: 0 for status in STATUSES}
    for status in statuses:
        counts[Status(status).value] += 1
    return counts


class CheckFailure(AssertionError):
    """Raised by `raise_on_failure` so that pytest shows the failing checks."""


@dataclass
class TargetReport:
    """One target's checks, or its error. `traceback` and `cause` (why it could not be
    checked, where known) are not part of the public schema."""

    target: str
    kind: Kind = Kind.LAYER
    layouts: list[str] = field(default_factory=list)
    checks: list[CheckResult] = field(default_factory=list)
    error: str | None = None
    traceback: str = ""
    duration_s: float = 0.0
    cause: Cause | None = None
    notes: list[str] = field(default_factory=list)  # what was not tested, in words
    cached: bool = False  # the result of an earlier run, from the result cache (`running.cache`)

    def __post_init__(self) -> None:
        self.kind = Kind(self.kind)
        # A name the user typed is never cut (NAME_LIMIT is generous); a class name of a
        # million characters is cut here, once, for every report.
        self.target = _text(self.target, NAME_LIMIT)
        self.layouts = [_text(layout, NAME_LIMIT) for layout in self.layouts]
        self.bound()

    def bound(self) -> None:
        """Bound `error`, `traceback` and `notes` (see CheckResult); again after one is set."""
        self.error = None if self.error is None else _text(self.error)
        self.traceback = _text(self.traceback, TRACEBACK_LIMIT)
        self.notes = [_text(note) for note in self.notes]

    @property
    def status(self) -> Status:
        if self.error is not None:
            return Status.ERROR
        return Status.FAILED if any(c.status == Status.FAILED for c in self.checks) else Status.PASSED

    @property
    def summary(self) -> dict[str, int]:
        return count(c.status for c in self.checks)

    @property
    def ok(self) -> bool:
        return self.status == Status.PASSED

    def result(self, name: str) -> CheckResult:
        for check in self.checks:
            if check.name == name:
                return check
        raise KeyError(f"no check named {name!r} in the report of {self.target}")

    def failures(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status == Status.FAILED]

    def raise_on_failure(self) -> None:
        if self.ok:
            return
        # pytest prints the message: the layer's text in it is spelled out, a line each
        if self.error is not None:
            raise CheckFailure(f"{visible(self.target)}: {visible(self.error)}")
        lines = [f"{visible(self.target)}: {len(self.failures())} check(s) failed"]
        lines += [f"  {c.name}: {visible(c.message)}" for c in self.failures()]
        raise CheckFailure("\n".join(lines))

    def to_dict(self) -> dict[str, Any]:
        self.bound()
        return {
            "target": self.target,
            "kind": self.kind.value,
            "layouts": list(self.layouts),
            "status": self.status.value,
            "error": self.error,
            "duration_s": round(self.duration_s, 6),
            "checks": [c.to_dict() for c in self.checks],
            "summary": self.summary,
            "notes": list(self.notes),
            "cached": self.cached,
        }

    @classmethod
    def from_dict(cls, data: Any) -> TargetReport:
        """The inverse of `to_dict` (`status` and `summary` are derived, so they are not read).

        `traceback` and `cause` are not part of the public schema; they are read when present,
        which is how a worker process sends the user's frames and the cause back with its report.

        Raises:
            MalformedReport: one line that says what does not fit (the data may come from a
                worker the layer ran in, or a file); never another exception.
        """
        fields = _fields(data, "a target's report", _TARGET_KEYS)
        kind = fields.get("kind", Kind.LAYER.value)
        if type(kind) is not str or kind not in {k.value for k in Kind}:
            raise MalformedReport(f"the report's kind is {_shown(kind)}, not one of layer, function")
        cause = fields.get("cause")
        if cause is not None and (type(cause) is not str or cause not in {c.value for c in Cause}):
            raise MalformedReport(f"the report's cause is {_shown(cause)}")
        error = fields.get("error")
        cached = fields.get("cached", False)
        if type(cached) is not bool:
            raise MalformedReport(f"the report's cached is {_shown(cached)}, not true or false")
        return cls(
            target=_string(fields.get("target"), "the report's target"),
            kind=Kind(kind),
            layouts=_strings(fields.get("layouts", []), "the report's layouts"),
            checks=[CheckResult.from_dict(c) for c in _items(fields.get("checks", []), "the report's checks")],
            error=None if error is None else _string(error, "the report's error"),
            traceback=_string(fields.get("traceback") or "", "the report's traceback"),
            duration_s=_duration(fields.get("duration_s", 0.0), "the report"),
            cause=None if cause is None else Cause(cause),
            notes=_strings(fields.get("notes") or [], "the report's notes"),
            cached=cached,
        )


class MalformedReport(ValueError):
    """Data read as a report that is not one: `str()` says what does not fit, in one line."""


# What `from_dict` reads: the keys `to_dict` writes, and those a worker adds (traceback, cause).
_CHECK_KEYS = frozenset({"name", "status", "message", "details", "duration_s"})
_TARGET_KEYS = frozenset(
    {
        "target",
        "kind",
        "layouts",
        "status",
        "error",
        "duration_s",
        "checks",
        "summary",
        "notes",
        "cached",
        "traceback",
        "cause",
    }
)
_CHECK_STATUSES = tuple(status.value for status in STATUSES)
# Sizes past which data read back is not a report layercheck wrote (a check's details hold
# records of a few levels; a report's lists hold a few dozen checks, a few layouts).
_MAX_ITEMS = 100_000
_MAX_DEPTH = 32
# A string read back is cut by the fields themselves (NAME_LIMIT, MESSAGE_LIMIT...); one past
# this is not text layercheck wrote (it bounds what it sends), and is refused, not copied.
_MAX_TEXT = 10 * TRACEBACK_LIMIT


def _shown(value: Any) -> str:
    """A value of data read back, for a message: short, one line, whatever its type."""
    return visible(safe_repr(value, 80))


def _fields(data: Any, what: str, keys: frozenset[str]) -> dict[str, Any]:
    if type(data) is not dict:
        raise MalformedReport(f"{what} is {_shown(data)}, not a mapping")
    unknown = [key for key in data if key not in keys]
    if unknown:
        raise MalformedReport(f"{what} has unknown field(s) {', '.join(_shown(k) for k in unknown[:5])}")
    return data


def _string(value: Any, what: str) -> str:
    if type(value) is not str:
        raise MalformedReport(f"{what} is {_shown(value)}, not a string")
    if len(value) > _MAX_TEXT:
        raise MalformedReport(f"{what} is {len(value):,} characters long")
    return value


def _items(value: Any, what: str) -> list[Any]:
    if type(value) not in (list, tuple):
        raise MalformedReport(f"{what} are {_shown(value)}, not a list")
    if len(value) > _MAX_ITEMS:
        raise MalformedReport(f"{what} are {len(value):,} items")
    return list(value)


def _strings(value: Any, what: str) -> list[str]:
    return [_string(item, f"an item of {what}") for item in _items(value, what)]


def _duration(value: Any, where: str) -> float:
    """A duration read back: a finite number of seconds, >= 0 (a NaN would print as a time)."""
    if type(value) not in (int, float) or not 0 <= value < math.inf:
        raise MalformedReport(f"{where} has duration_s {_shown(value)}, not a finite number >= 0")
    return float(value)


def _json_like(value: Any, what: str, depth: int = 0) -> None:
    """`value` is what `plain` makes (dicts with string keys, lists, strings, numbers, None):
    nothing whose own methods would run when the report is written."""
    if depth > _MAX_DEPTH:
        raise MalformedReport(f"{what} are nested more than {_MAX_DEPTH} levels deep")
    if value is None or type(value) in (bool, int, float, str):
        return
    if type(value) is dict:
        if len(value) > _MAX_ITEMS:
            raise MalformedReport(f"{what} hold a mapping of {len(value):,} items")
        for key, item in value.items():
            if type(key) is not str:
                raise MalformedReport(f"{what} hold the key {_shown(key)}, not a string")
            _json_like(item, what, depth + 1)
        return
    if type(value) in (list, tuple):
        if len(value) > _MAX_ITEMS:
            raise MalformedReport(f"{what} hold a list of {len(value):,} items")
        for item in value:
            _json_like(item, what, depth + 1)
        return
    raise MalformedReport(f"{what} hold {_shown(value)}, not JSON data")


@dataclass
class Report:
    targets: list[TargetReport] = field(default_factory=list)
    duration_s: float = 0.0

    @property
    def summary(self) -> dict[str, int]:
        totals = {status.value: 0 for status in STATUSES}
        for target in self.targets:
            for key, n in target.summary.items():
                totals[key] += n
        return totals

    @property
    def ok(self) -> bool:
        return all(t.ok for t in self.targets)

    def raise_on_failure(self) -> None:
        problems = []
        for target in self.targets:
            try:
                target.raise_on_failure()
            except CheckFailure as exc:
                problems.append(str(exc))
        if problems:
            raise CheckFailure("\n".join(problems))

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": SCHEMA_VERSION,
            "targets": [t.to_dict() for t in self.targets],
            "summary": self.summary,
            "duration_s": round(self.duration_s, 6),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Report:
        """A report read back from `to_dict` or a `--json` file (to merge CI shards, say)."""
        if type(data) is not dict:
            raise MalformedReport(f"a report is {_shown(data)}, not a mapping")
        targets = [TargetReport.from_dict(t) for t in _items(data.get("targets", []), "the report's targets")]
        return cls(targets, _duration(data.get("duration_s", 0.0), "the report"))


def plain(value: Any) -> Any:
    """JSON-safe data: NumPy scalars and arrays to Python, complex numbers to [re, im] and
    non-finite floats to strings (strict JSON has no NaN)."""
    if isinstance(value, Enum):  # Status, Kind, the gradient engine's verdicts: their value
        return plain(value.value)
    if isinstance(value, Mapping):
        return {str(plain(k)): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        return plain(value.item())
    if isinstance(value, complex):
        return [plain(value.real), plain(value.imag)]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str):
        return encodable(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return safe_str(value)
