"""How a check ended, or a target that could not be checked: the statuses every report writes.

Apart from `results`, which re-exports it, so that the typed details the results hold
(`gradient_report`) can name a status without importing the results that hold them."""

from __future__ import annotations

from enum import Enum

__all__ = ["STATUSES", "Status"]


class Status(str, Enum):
    """How a check ended, or (ERROR) a target that could not be checked. Valued as the strings
    of the JSON and JUnit reports, so `status == "passed"` holds and `json.dumps` writes the
    value; `str()` and f-strings give the value too, on every Python version."""

    PASSED = "passed"
    FAILED = "failed"
    INCOMPLETE = "incomplete"
    SKIPPED = "skipped"
    ERROR = "error"  # a target's status when it could not be checked (TargetReport.error is set)
    # A failure (a failed check, or a target that could not be checked) that the run's
    # `--baseline` accepts: set by the parent from the baseline file, never by a check, and
    # never read from a worker (`results.Origin.WORKER`), so that no layer can claim it.
    KNOWN = "known"

    def __str__(self) -> str:
        return self.value


# A check's statuses, in the order of the summaries: what a check can end with (a gradient
# check's argument too).
STATUSES = (Status.PASSED, Status.FAILED, Status.INCOMPLETE, Status.SKIPPED)
