"""What a run produces: check results per target, and the report over all targets."""

from __future__ import annotations

import math
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, Protocol

import numpy as np

from layercheck.contract.layout import Layout, parse_layout
from layercheck.environment import Environment
from layercheck.errors import UsageError
from layercheck.findings import problems
from layercheck.findings.comparison import ComparisonReport
from layercheck.findings.gradient import GradientReport, MalformedDetails
from layercheck.findings.observations import ObservationReport
from layercheck.findings.problems import Problem
from layercheck.findings.sizes import SizeReport
from layercheck.findings.syntax import SyntaxReport
from layercheck.numerics.reading import MalformedFinding
from layercheck.runinfo import RunInfo, RunInfoError, read_run, recorded_path
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
from layercheck.status import STATUSES, Cause, Kind, Status, cause_of

__all__ = [
    "repro_command",
    "Blocked",
    "CONTRACT_CHECK",
    "Call",
    "Cause",
    "CheckFailure",
    "CheckResult",
    "Kind",
    "MalformedReport",
    "Origin",
    "Report",
    "SCHEMA_VERSION",
    "STATUSES",
    "SUMMARY_STATUSES",
    "Source",
    "Status",
    "TargetReport",
    "cause_of",
    "count",
    "plain",
]


def repro_command(script: str) -> str:
    """The command that runs a reproducer (`CheckResult.repro`), as every report prints it
    (quoted for a shell)."""
    return f"python {shlex.quote(script)}"


class Call(str, Enum):
    """A method of the user's that a check calls. A check left undecided because a call failed
    names it (`Blocked`); the check that reports such a failure is `Call.check`, or
    `CONTRACT_CHECK` where the call broke the contract rather than raised."""

    INITIALIZE = "initialize"
    PREDICT = "predict"
    FORWARD = "forward"
    BACKWARD = "backward"
    OUTPUT_FORMAT = "output_format"
    RESET_STATE = "reset_state"

    def __str__(self) -> str:
        return self.value

    @property
    def check(self) -> str | None:
        """The stable name of the check that reports this call's failure (a public name, as
        every check's is: tests/test_report_schema.py holds each one registered); None for
        output_format, whose failure each check that needs it reports."""
        return None if self is Call.OUTPUT_FORMAT else f"{self.value}_does_not_error"


# The check that reports a call that broke the contract (a wrong number of outputs, say).
CONTRACT_CHECK = "function_syntaxes_are_correct"


@dataclass(frozen=True)
class Blocked:
    """Why a check could not decide: a call of `call` failed (`broke_contract`: it ran, but
    broke the contract). The JSON's `details.blocked_by` and `details.broke_contract`."""

    call: Call
    broke_contract: bool = False

    @property
    def reported_by(self) -> str | None:
        """The check whose result says what the failed call did (None: no check of its own)."""
        return CONTRACT_CHECK if self.broke_contract else self.call.check


class Origin(Enum):
    """Where data read back as a report comes from: what of it is believed (`from_dict`) and
    what is written for it (`to_dict`). One codec serves them all."""

    # The worker process a target was checked in. The layer ran there and may have forged
    # anything: a status `known` (the baseline's, the parent's to set) and a `source` (the
    # parent knows where the target is defined) are never read; the user's frames and the
    # cause of an error are, as the worker sends them.
    WORKER = "worker"
    # An entry of the result cache: what a worker sent and the parent checked, stored.
    CACHE = "cache"
    # A report file (`--json`, a shard `layercheck merge` reads): statuses `known` and each
    # target's `source` are read; a cause is no part of it.
    FILE = "file"


# The summaries' keys: a check's statuses and `known` (a failure the baseline accepts; an
# additive key of the JSON schema, 0 in a run without --baseline).
SUMMARY_STATUSES = (*STATUSES, Status.KNOWN)

SCHEMA_VERSION = "1.0"

# The typed fields of a CheckResult, under the `details` keys the JSON schema gives them.
_TYPED_DETAILS = ("explanation", "problems", "traceback", "blocked_by", "broke_contract")


@dataclass
class CheckResult:
    """One check's result.

    `details` holds what the check found (shapes, mismatches, records); `explanation` (lines
    that say why, for the reports), `problems` (every problem when the message names one) and
    `traceback` (the user's frames) and `blocked` (the failed call that left it undecided)
    are fields, written into `details` under the keys of the JSON schema by `to_dict` only
    (`blocked_by`, `broke_contract` for `blocked`). `details` given with those keys (a report's
    data read back) is read into the fields. `cause` is not part of the report.

    The gradient check's details are read into `gradient` (typed, strictly), and its
    explanation, and a failure's message, are rendered from them here, wherever the result is
    made: never taken as given. So is the failure of a check that compares an array with what
    it should have stayed (`compared`), of backward_is_consistent_in_size (`sizes`), of a batch
    compared with its observations alone (`observations`), and of a
    check that found one problem with a value a method returned (`problem`: a state, a type).
    """

    name: str
    status: Status
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0
    explanation: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    traceback: str = ""
    blocked: Blocked | None = None
    cause: Cause | None = None
    # The reproducer script of a failed check (`--repro DIR`: "DIR/<target>__<check>.py"), set
    # by the parent once it verified the file; an additive key of the JSON when set.
    repro: str | None = None
    # The gradient check's findings, typed for the reports' pictures: read from `details`
    # once, where the result is made (a check's, a worker's, a file's), never given.
    gradient: GradientReport | None = field(default=None, init=False, repr=False, compare=False)
    # A comparing check's failure (an array that should have stayed as it was), typed the same way.
    compared: ComparisonReport | None = field(default=None, init=False, repr=False, compare=False)
    # backward_is_consistent_in_size's failure (gradients of no numbers or the wrong shape), the same.
    sizes: SizeReport | None = field(default=None, init=False, repr=False, compare=False)
    # A batch's results that differ from its observations' alone, the same.
    observations: ObservationReport | None = field(default=None, init=False, repr=False, compare=False)
    # A failure that is one problem with one value a method returned (a state, a type), the same.
    problem: Problem | None = field(default=None, init=False, repr=False, compare=False)
    # function_syntaxes_are_correct's problems, the same (they give `problems` too).
    syntax: SyntaxReport | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.status = Status(self.status)
        if any(key in self.details for key in _TYPED_DETAILS):
            details = dict(self.details)
            self.explanation = self.explanation or [str(line) for line in details.pop("explanation", None) or ()]
            self.problems = self.problems or [str(p) for p in details.pop("problems", None) or ()]
            self.traceback = self.traceback or str(details.pop("traceback", None) or "")
            self.blocked = self.blocked or _blocked(
                details.pop("blocked_by", None), details.pop("broke_contract", None)
            )
            self.details = details
        # What a layer raised or returned may be megabytes of text: bounded where the result
        # is made, in the worker, before it is sent, copied or rendered.
        self.message = _text(self.message)
        self.traceback = _text(self.traceback, TRACEBACK_LIMIT)
        self.explanation = [_text(line) for line in self.explanation]
        self.problems = [_text(p) for p in self.problems]
        self.details = bounded_data(self.details)
        self.repro = None if self.repro is None else _text(self.repro, NAME_LIMIT)
        self.gradient = GradientReport.of(self.details)
        if self.gradient is not None:
            # The gradient check's explanation, and a failure's message (its findings'
            # sentences), are rendered here from the typed details wherever the result is made
            # (the check's, a worker's, the cache's, a file's): never strings carried beside them.
            self.explanation = [_text(line) for line in self.gradient.explanation]
            if self.gradient.findings:
                if self.status not in (Status.FAILED, Status.KNOWN):
                    raise MalformedDetails(f"findings in a check that did not fail ({self.status.value})")
                # A report of an earlier version lacks what a sentence may need (whether the
                # data were complex): its message, rendered then from the same findings, stays.
                if not self.gradient.legacy:
                    self.message = _text(self.gradient.headline)
            if self.gradient.agreement is not None:
                if self.status is not Status.PASSED:
                    raise MalformedDetails(f"an agreement in a check that did not pass ({self.status.value})")
                self.message = _text(self.gradient.passed)
        self.compared = ComparisonReport.of(self.name, self.details)
        self.sizes = SizeReport.of(self.name, self.details)
        self.observations = ObservationReport.of(self.name, self.details)
        self.problem = problems.read(self.name, self.details)
        self.syntax = SyntaxReport.of(self.name, self.details)
        if self.syntax is not None:
            self.problems = [_text(p) for p in self.syntax.sentences]
        typed: tuple[tuple[_Rendered | None, str], ...] = (
            (self.compared, "a mismatch"),
            (self.sizes, "a size problem"),
            (self.observations, "a difference from the observations alone"),
            (self.problem, "a problem"),
            (self.syntax, "a syntax problem"),
        )
        for found, what in typed:
            if found is None:
                continue
            if self.status not in (Status.FAILED, Status.KNOWN):
                raise MalformedDetails(f"{what} in a check that did not fail ({self.status.value})")
            # A report of an earlier version lacks what the sentence needs: the message it
            # carries, made then from the same data, stays.
            if not found.legacy:
                self.message = _text(found.headline)

    def to_dict(self) -> dict[str, Any]:
        """The check's object of the JSON report: JSON data (`plain`), as every report, a
        worker's message, the cache and a shard hold it."""
        # The typed fields go where today's JSON has them: the traceback first, the
        # explanation and the problems after what the check recorded.
        details: dict[str, Any] = {"traceback": self.traceback} if self.traceback else {}
        if self.blocked is not None:
            details["blocked_by"] = self.blocked.call.value
            if self.blocked.broke_contract:
                details["broke_contract"] = True
        details.update(self.details)
        if self.explanation:
            details["explanation"] = list(self.explanation)
        if self.problems:
            details["problems"] = list(self.problems)
        data = {
            "name": self.name,
            "status": self.status.value,
            "message": self.message,
            "details": details,
            "duration_s": round(self.duration_s, 6),
        }
        if self.repro is not None:
            data["repro"] = self.repro
        return plain(data)  # type: ignore[no-any-return]

    @classmethod
    def from_dict(cls, data: Any, origin: Origin = Origin.FILE) -> CheckResult:
        """The inverse of `to_dict`, for data that may not be layercheck's own (a worker's
        report, which the layer could have forged; a JSON file read back). The status `known`
        is read from a report file only (of a run with --baseline); a worker's never holds it.

        Raises:
            MalformedReport: one line that says what does not fit; never another exception.
        """
        fields = _fields(data, "a check result", _CHECK_KEYS)
        name = _string(fields.get("name"), "a check's name")
        where = f"check {visible(bounded(name, 100))}"
        status = fields.get("status")
        allowed = _FILE_STATUSES if origin is Origin.FILE else _CHECK_STATUSES
        if type(status) is not str or status not in allowed:
            raise MalformedReport(f"{where} has status {_shown(status)}, not one of {', '.join(allowed)}")
        details = fields.get("details") or {}
        if type(details) is not dict:
            raise MalformedReport(f"{where} has details {_shown(details)}, not a mapping")
        _json_like(details, f"the details of {where}")
        blocked_by, broke = details.get("blocked_by"), details.get("broke_contract")
        if blocked_by is not None and (type(blocked_by) is not str or blocked_by not in _CALLS):
            raise MalformedReport(f"{where} is blocked by {_shown(blocked_by)}, not one of {', '.join(_CALLS)}")
        if broke is not None and (broke is not True or blocked_by is None):
            raise MalformedReport(f"{where} has broke_contract {_shown(broke)} (true, with blocked_by, or absent)")
        repro = fields.get("repro")
        try:
            return cls(
                name,
                Status(status),
                _string(fields.get("message", ""), f"the message of {where}"),
                details,
                _duration(fields.get("duration_s", 0.0), where),
                repro=None if repro is None else _string(repro, f"the reproducer of {where}"),
            )
        except MalformedReport:
            raise
        except (MalformedDetails, MalformedFinding) as exc:
            raise MalformedReport(f"{where}: {exc}") from None
        except (TypeError, ValueError, OverflowError, LookupError) as exc:  # a backstop: never another exception
            raise MalformedReport(f"{where} has details that are not a report's ({type(exc).__name__})") from None


class _Rendered(Protocol):
    """A check's failure typed, whose message is rendered from it (unless `legacy`)."""

    @property
    def legacy(self) -> bool: ...

    @property
    def headline(self) -> str: ...


def _blocked(call: Any, broke_contract: Any) -> Blocked | None:
    """`details.blocked_by` and `details.broke_contract` read back (a report file, a worker's
    report: `from_dict` has checked them) or given by a check, as a `Blocked`."""
    if call is None:
        return None
    return Blocked(Call(call), broke_contract is True)


def _text(value: Any, limit: int = MESSAGE_LIMIT) -> str:
    return encodable(bounded(str(value), limit))


def count(statuses: Iterable[Status]) -> dict[str, int]:
    """How many of each check status, keyed by the status strings (the reports' summaries)."""
    counts = {status.value: 0 for status in SUMMARY_STATUSES}
    for status in statuses:
        counts[Status(status).value] += 1
    return counts


class CheckFailure(AssertionError):
    """Raised by `raise_on_failure` so that pytest shows the failing checks."""


@dataclass(frozen=True)
class Source:
    """Where a target is defined: its file (absolute; relative to the working folder in a
    report read back, as the JSON records it) and the line its definition starts on (None
    where it is not known: a module that could not be imported, a class whose source cannot be
    found). For CI annotations, `layercheck merge`'s too: an additive key of the JSON."""

    path: str
    line: int | None = None


@dataclass
class TargetReport:
    """One target's checks, or its error. `traceback` and `cause` (why it could not be
    checked, where known) are not part of the public schema."""

    # How `str(report)` reads: the console's text for the target (`reporters.text.target_text`).
    # The console renders these types, so it sits above this module and is not imported from
    # here: `layercheck.api`, which makes the reports users hold, installs it (as NumPy's
    # arrayprint installs ndarray's repr). Until then a report reads as its headline.
    text_of: ClassVar[Callable[[TargetReport], str] | None] = None

    target: str
    kind: Kind = Kind.LAYER
    layouts: list[Layout] = field(default_factory=list)  # one per input, as checked
    checks: list[CheckResult] = field(default_factory=list)
    error: str | None = None
    traceback: str = ""
    duration_s: float = 0.0
    cause: Cause | None = None
    notes: list[str] = field(default_factory=list)  # what was not tested, in words
    # What the module or the layer changed in the process that judged it and that no verdict
    # reads (an alias restored, NumPy reloaded: `sandbox.integrity`), in words: said with -v.
    allowed_changes: list[str] = field(default_factory=list)
    # The target's place in the run's whole plan (before --shard), from 0: how `layercheck
    # merge` puts shards back in order. None outside a batch run (the API).
    position: int | None = None
    # The error is a failure the run's --baseline accepts: the target's status is `known`.
    error_known: bool = False
    source: Source | None = None  # set by the parent from discovery, never read from a worker
    cached: bool = False  # the result of an earlier run, from the result cache (`running.cache`)

    def __post_init__(self) -> None:
        self.kind = Kind(self.kind)
        # A name the user typed is never cut (NAME_LIMIT is generous); a class name of a
        # million characters is cut here, once, for every report.
        self.target = _text(self.target, NAME_LIMIT)
        # Typed where given as a user gives a layout (a string, a mapping): a test, a forged report.
        self.layouts = [parse_layout(layout) for layout in self.layouts]
        self.bound()

    def bound(self) -> None:
        """Bound `error`, `traceback` and `notes` (see CheckResult); again after one is set."""
        self.error = None if self.error is None else _text(self.error)
        self.traceback = _text(self.traceback, TRACEBACK_LIMIT)
        self.notes = [_text(note) for note in self.notes]
        self.allowed_changes = [_text(change) for change in self.allowed_changes]

    @property
    def status(self) -> Status:
        """error, failed, incomplete (no check failed, but one could not decide), known
        (every failure accepted by the baseline) or passed.

        An undecided check outranks an accepted failure: the baseline records what was
        decided, and a target is never reported as if every check had been."""
        if self.error is not None:
            return Status.KNOWN if self.error_known else Status.ERROR
        if any(c.status == Status.FAILED for c in self.checks):
            return Status.FAILED
        if any(c.status == Status.INCOMPLETE for c in self.checks):
            return Status.INCOMPLETE
        return Status.KNOWN if any(c.status == Status.KNOWN for c in self.checks) else Status.PASSED

    @property
    def summary(self) -> dict[str, int]:
        return count(c.status for c in self.checks)

    @property
    def ok(self) -> bool:
        """Nothing fails the run without `--strict`: passed, incomplete, or only failures the
        baseline accepts."""
        return self.status in (Status.PASSED, Status.INCOMPLETE, Status.KNOWN)

    def fails(self, strict: bool = False) -> bool:
        """Whether this target fails the run: it is not `ok`, or, `strict` (`--strict`), a
        check of it could not decide."""
        return not self.ok or (strict and self.status is Status.INCOMPLETE)

    def result(self, name: str) -> CheckResult:
        for check in self.checks:
            if check.name == name:
                return check
        raise KeyError(f"no check named {name!r} in the report of {self.target}")

    @property
    def failures(self) -> tuple[CheckResult, ...]:
        """The checks that failed, in order (a property, as `status` and `summary` are)."""
        return tuple(c for c in self.checks if c.status == Status.FAILED)

    def raise_on_failure(self, strict: bool = False) -> None:
        """Raise CheckFailure (an AssertionError) with the `headline` and the console's text
        for this target when it `fails`: a check failed or the target could not be checked,
        or, `strict` (as `layercheck run --strict`), a check could not decide. In pytest the
        traceback ends in the caller's test, not in here."""
        __tracebackhide__ = True  # pytest leaves this frame out of the failure's traceback
        if self.fails(strict):
            raise CheckFailure(f"{self.headline}\n{self}")

    @property
    def headline(self) -> str:
        """What did not pass, in one line: the first line of a failure is all that pytest's
        short summary shows ("X.py:Layer: gradients_are_numerically_correct failed")."""
        target = visible(self.target)  # a label and an error may hold what a terminal would obey
        if self.error is not None:
            first = self.error.split("\n", 1)[0]  # not splitlines: a \r does not end what is shown
            return f"{target} could not be checked: {visible(first)}"
        failed = [visible(check.name) for check in self.checks if check.status is Status.FAILED]
        if failed:
            return f"{target}: {', '.join(failed)} failed"
        undecided = [visible(check.name) for check in self.checks if check.status is Status.INCOMPLETE]
        return f"{target}: {', '.join(undecided)} incomplete" if undecided else f"{target}: {self.status.value}"

    def __str__(self) -> str:
        """The console's text for this target, plain (no colour), lines whole (`text_of`)."""
        render = TargetReport.text_of
        return self.headline if render is None else render(self)

    def __repr__(self) -> str:
        summary = self.summary  # in the console's order: what went wrong first
        order = (Status.FAILED, Status.INCOMPLETE, Status.PASSED, Status.SKIPPED)
        counts = ", ".join(f"{summary[s]} {s}" for s in order if summary[s]) or "no checks"
        return f"<TargetReport {visible(bounded(self.target, 200))} {self.status}: {counts}>"

    def to_dict(self, origin: Origin = Origin.FILE) -> dict[str, Any]:
        """The target's object of the JSON report: JSON data (`plain`). For a worker's report
        (`Origin.WORKER`), with the cause of its error, which is no part of a report file."""
        self.bound()
        data = {
            "target": self.target,
            "kind": self.kind.value,
            "layouts": [str(layout) for layout in self.layouts],
            "status": self.status.value,
            "error": self.error,
            "duration_s": round(self.duration_s, 6),
            "checks": [c.to_dict() for c in self.checks],
            "summary": self.summary,
            "notes": list(self.notes),
            "allowed_changes": list(self.allowed_changes),
            "position": self.position,
            # The user's frames of the error (additive, issue 28): a report file read back
            # (`layercheck merge`) gives the JUnit report the unsharded run gives.
            "traceback": self.traceback,
            "cached": self.cached,
            # Where it is defined (additive): `layercheck merge` annotates a failure on its
            # line as `run` does. Relative to the working folder, as the run's sources are.
            "source": None
            if self.source is None
            else {"path": recorded_path(self.source.path), "line": self.source.line},
        }
        if origin is Origin.WORKER:
            data["cause"] = self.cause
        return plain(data)  # type: ignore[no-any-return]

    @classmethod
    def from_dict(cls, data: Any, origin: Origin = Origin.FILE) -> TargetReport:
        """The inverse of `to_dict`, believing what `origin` decides (`Origin`). `status` and
        `summary` are derived, so they are not read, except that from a report file the
        status `known` of a target with an error is: its error was accepted by the run's
        baseline.

        `traceback` and `cause` are not part of the public schema: a worker process sends the
        user's frames and the cause back with its report.

        Raises:
            MalformedReport: one line that says what does not fit (the data may come from a
                worker the layer ran in, or a file); never another exception.
        """
        fields = _fields(data, "a target's report", _TARGET_KEYS)
        kind = fields.get("kind", Kind.LAYER.value)
        if type(kind) is not str or kind not in {k.value for k in Kind}:
            raise MalformedReport(f"the report's kind is {_shown(kind)}, not one of layer, function")
        cause = fields.get("cause") if origin is Origin.WORKER else None
        if cause is not None and (type(cause) is not str or cause not in {c.value for c in Cause}):
            raise MalformedReport(f"the report's cause is {_shown(cause)}")
        error = fields.get("error")
        position = fields.get("position")
        if position is not None and (type(position) is not int or position < 0):
            raise MalformedReport(f"the report's position is {_shown(position)}, not a whole number >= 0")
        cached = fields.get("cached", False)
        if type(cached) is not bool:
            raise MalformedReport(f"the report's cached is {_shown(cached)}, not true or false")
        where = _source(fields.get("source")) if origin is Origin.FILE else None
        return cls(
            target=_string(fields.get("target"), "the report's target"),
            kind=Kind(kind),
            layouts=_layouts(fields.get("layouts", [])),
            checks=[CheckResult.from_dict(c, origin) for c in _items(fields.get("checks", []), "the report's checks")],
            error=None if error is None else _string(error, "the report's error"),
            traceback=_string(fields.get("traceback") or "", "the report's traceback"),
            duration_s=_duration(fields.get("duration_s", 0.0), "the report"),
            cause=None if cause is None else Cause(cause),
            notes=_strings(fields.get("notes") or [], "the report's notes"),
            allowed_changes=_strings(fields.get("allowed_changes") or [], "the report's allowed changes"),
            position=position,
            error_known=origin is Origin.FILE and error is not None and fields.get("status") == Status.KNOWN.value,
            source=where,
            cached=cached,
        )


def _layouts(data: Any) -> list[Layout]:
    """A report's `layouts` read back: each parsed, as a user's `--layout` is."""
    layouts = []
    for text in _strings(data, "the report's layouts"):
        try:
            layouts.append(parse_layout(text))
        except UsageError as exc:
            raise MalformedReport(f"the report's layout {_shown(text)}: {visible(bounded(str(exc), 200))}") from None
    return layouts


def _source(data: Any) -> Source | None:
    """A report file's `source` of a target read back (`TargetReport.to_dict`)."""
    if data is None:
        return None
    if type(data) is not dict or set(data) != {"path", "line"}:
        raise MalformedReport(f"the report's source is {_shown(data)}, not a path and a line")
    path, line = _string(data["path"], "the report's source path"), data["line"]
    if not path or "\0" in path:
        raise MalformedReport(f"the report's source path is {_shown(path)}")
    if line is not None and (type(line) is not int or line < 1):
        raise MalformedReport(f"the report's source line is {_shown(line)}, not a line number")
    return Source(path, line)


class MalformedReport(ValueError):
    """Data read as a report that is not one: `str()` says what does not fit, in one line."""


# What `from_dict` reads: the keys `to_dict` writes, and those a worker adds (traceback, cause).
_CHECK_KEYS = frozenset({"name", "status", "message", "details", "duration_s", "repro"})
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
        "allowed_changes",
        "position",
        "cached",
        "traceback",
        "cause",
        "source",
    }
)
_REPORT_KEYS = frozenset({"version", "targets", "summary", "duration_s", "run", "environment"})
_CHECK_STATUSES = tuple(status.value for status in STATUSES)
_CALLS = tuple(call.value for call in Call)
_FILE_STATUSES = tuple(status.value for status in SUMMARY_STATUSES)
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
    run: RunInfo | None = field(default=None, kw_only=True)  # what a batch run records to merge shards (`runinfo`)
    # Where the run was made (`environment.collect`): a top-level "environment" object of
    # the JSON when known (a report put together by hand has none).
    environment: Environment | None = field(default=None, kw_only=True)

    @property
    def summary(self) -> dict[str, int]:
        totals = {status.value: 0 for status in SUMMARY_STATUSES}
        for target in self.targets:
            for key, n in target.summary.items():
                totals[key] += n
        return totals

    @property
    def ok(self) -> bool:
        return all(t.ok for t in self.targets)

    def raise_on_failure(self, strict: bool = False) -> None:
        """Raise CheckFailure with the console's text for every target that `fails` (with
        `strict`, those with an incomplete check too)."""
        __tracebackhide__ = True
        problems = [target for target in self.targets if target.fails(strict)]
        if problems:
            headline = "; ".join(target.headline for target in problems)
            raise CheckFailure("\n".join([headline, *(str(target) for target in problems)]))

    def __repr__(self) -> str:
        statuses = [target.status.value for target in self.targets]
        counts = ", ".join(f"{statuses.count(s)} {s}" for s in dict.fromkeys(statuses)) or "no targets"
        return f"<Report of {len(self.targets)} target(s): {counts}>"

    def to_dict(self) -> dict[str, Any]:
        data = {
            "version": SCHEMA_VERSION,
            "targets": [t.to_dict() for t in self.targets],
            "summary": self.summary,
            "duration_s": round(self.duration_s, 6),
            "run": None if self.run is None else self.run.to_dict(),
        }
        if self.environment is not None:
            data["environment"] = self.environment.to_dict()
        return plain(data)  # type: ignore[no-any-return]

    @classmethod
    def from_dict(cls, data: Any) -> Report:
        """A report read back from `to_dict` or a `--json` file (to merge CI shards, say):
        statuses `known` (a run with --baseline) are read. Strict, as every part of it is: a
        field this version does not write, or another version of the schema, is refused.

        Raises:
            MalformedReport: one line that says what does not fit; never another exception.
        """
        fields = _fields(data, "a report", _REPORT_KEYS)
        version = fields.get("version")
        if version != SCHEMA_VERSION:
            raise MalformedReport(
                f"the report's version is {_shown(version)}; this layercheck reads version {SCHEMA_VERSION!r}"
            )
        targets = [
            TargetReport.from_dict(t, Origin.FILE) for t in _items(data.get("targets", []), "the report's targets")
        ]
        try:
            run = None if data.get("run") is None else read_run(data["run"])
        except RunInfoError as exc:
            raise MalformedReport(str(exc)) from None
        environment = None
        if data.get("environment") is not None:
            try:
                environment = Environment.from_dict(data["environment"])
            except ValueError as exc:
                raise MalformedReport(f"the report's environment {exc}") from None
        return cls(targets, _duration(data.get("duration_s", 0.0), "the report"), run=run, environment=environment)


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
