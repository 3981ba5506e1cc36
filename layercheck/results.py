"""What a run produces: check results per target, and the report over all targets."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

PASSED, FAILED, INCOMPLETE, SKIPPED = "passed", "failed", "incomplete", "skipped"
STATUSES = (PASSED, FAILED, INCOMPLETE, SKIPPED)
ERROR = "error"  # a target's status when it could not be checked (TargetReport.error is set)

SCHEMA_VERSION = "1.0"


@dataclass
class CheckResult:
    name: str
    status: str
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "message": self.message,
            "details": self.details,
            "duration_s": round(self.duration_s, 6),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckResult:
        return cls(
            str(data["name"]),
            str(data["status"]),
            str(data.get("message", "")),
            dict(data.get("details") or {}),
            float(data.get("duration_s", 0.0)),
        )


def count(statuses) -> dict[str, int]:
    counts = dict.fromkeys(STATUSES, 0)
    for status in statuses:
        counts[status] += 1
    return counts


class CheckFailure(AssertionError):
    """Raised by `raise_on_failure` so that pytest shows the failing checks."""


@dataclass
class TargetReport:
    target: str
    kind: str = "layer"
    layouts: list[str] = field(default_factory=list)
    checks: list[CheckResult] = field(default_factory=list)
    error: str | None = None
    traceback: str = ""
    duration_s: float = 0.0

    @property
    def status(self) -> str:
        if self.error is not None:
            return ERROR
        return FAILED if any(c.status == FAILED for c in self.checks) else PASSED

    @property
    def summary(self) -> dict[str, int]:
        return count(c.status for c in self.checks)

    @property
    def ok(self) -> bool:
        return self.status == PASSED

    def result(self, name: str) -> CheckResult:
        for check in self.checks:
            if check.name == name:
                return check
        raise KeyError(f"no check named {name!r} in the report of {self.target}")

    def failures(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status == FAILED]

    def raise_on_failure(self) -> None:
        if self.ok:
            return
        if self.error is not None:
            raise CheckFailure(f"{self.target}: {self.error}")
        lines = [f"{self.target}: {len(self.failures())} check(s) failed"]
        lines += [f"  {c.name}: {c.message}" for c in self.failures()]
        raise CheckFailure("\n".join(lines))

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "kind": self.kind,
            "layouts": list(self.layouts),
            "status": self.status,
            "error": self.error,
            "duration_s": round(self.duration_s, 6),
            "checks": [c.to_dict() for c in self.checks],
            "summary": self.summary,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TargetReport:
        """The inverse of `to_dict` (`status` and `summary` are derived, so they are not read).

        `traceback` is not part of the public schema; it is read when present, which is how
        a worker process sends the user's frames back with its report.
        """
        return cls(
            target=str(data["target"]),
            kind=str(data.get("kind", "layer")),
            layouts=[str(layout) for layout in data.get("layouts", [])],
            checks=[CheckResult.from_dict(c) for c in data.get("checks", [])],
            error=None if data.get("error") is None else str(data["error"]),
            traceback=str(data.get("traceback") or ""),
            duration_s=float(data.get("duration_s", 0.0)),
        )


@dataclass
class Report:
    targets: list[TargetReport] = field(default_factory=list)
    duration_s: float = 0.0

    @property
    def summary(self) -> dict[str, int]:
        totals = dict.fromkeys(STATUSES, 0)
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
        return cls([TargetReport.from_dict(t) for t in data.get("targets", [])], float(data.get("duration_s", 0.0)))


def plain(value: Any) -> Any:
    """JSON-safe data: NumPy scalars and arrays to Python, complex numbers to [re, im] and
    non-finite floats to strings (strict JSON has no NaN)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
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
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
