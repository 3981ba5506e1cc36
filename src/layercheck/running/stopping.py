"""`-x` / `--maxfail N`: stop the run once N targets have failed.

A target counts when it fails the run: a check failed, or it could not be checked, or (with
--strict) a check was incomplete. Targets the run then leaves unchecked are reported, each
with cause NOT_RUN and the reason ("not checked: the run stopped after 1 failed target
(-x)"): in the JSON as errors (its target statuses are a public contract), in JUnit as
skipped, and not as failures on the console.
"""

from __future__ import annotations

from dataclasses import dataclass

from layercheck.errors import UsageError
from layercheck.results import Cause, Report, TargetReport
from layercheck.safetext import bounded, visible

__all__ = ["MaxFail", "parse_maxfail", "stopped_line"]


@dataclass(frozen=True)
class MaxFail:
    limit: int  # >= 1
    option: str  # as the user asked: "-x" or "--maxfail 3"
    strict: bool = False  # --strict: a target with an incomplete check fails the run

    def fails(self, report: TargetReport) -> bool:
        """Whether `report` counts towards the limit (one the run stopped or a signal
        interrupted is no failure of its layer)."""
        if report.cause in (Cause.NOT_RUN, Cause.INTERRUPTED):
            return False
        return report.fails(self.strict)

    @property
    def stop(self) -> str:
        """`run stopped after 1 failed target (-x)`."""
        targets = "target" if self.limit == 1 else "targets"
        return f"run stopped after {self.limit} failed {targets} ({self.option})"

    @property
    def reason(self) -> str:
        return f"the {self.stop}"


def parse_maxfail(exitfirst: bool, maxfail: str | None, strict: bool = False) -> MaxFail | None:
    """-x and --maxfail as the command line gives them (None: neither).

    Raises:
        UsageError: both, or a --maxfail that is not a whole number >= 1.
    """
    if exitfirst and maxfail is not None:
        raise UsageError("give -x or --maxfail N, not both (-x is --maxfail 1)")
    if exitfirst:
        return MaxFail(1, "-x", strict)
    if maxfail is None:
        return None
    try:
        limit = int(maxfail)
    except ValueError:
        limit = 0
    if limit < 1:
        shown = visible(bounded(maxfail, 100))
        raise UsageError(f"--maxfail {shown!r}: give a whole number of failed targets >= 1")
    return MaxFail(limit, f"--maxfail {limit}", strict)


def stopped_line(report: Report, maxfail: MaxFail | None) -> str | None:
    """`The run stopped after 1 failed target (-x): 2 targets not checked.`; None when
    the stop left no target unchecked."""
    if maxfail is None:
        return None
    not_run = sum(t.cause is Cause.NOT_RUN for t in report.targets)
    if not not_run:
        return None
    targets = "target" if not_run == 1 else "targets"
    return f"The {maxfail.stop}: {not_run} {targets} not checked."
