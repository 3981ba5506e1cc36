"""What every reader of a run's report implements: the console, GitHub's annotations and the
report files (`--json`, `--junit`, `--html`) alike.

`layercheck run` and `layercheck merge` build one list of them (`Reporters`) and tell it of
each target as it is decided, then of the whole report; a new kind of report is a class with
these two methods, added to that list. The Python API and the pytest plugin show a target with
the console's own reporter (`reporters.text`). Reproducers are not a reporter: they are
written from the arrays a worker kept, which no report holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from layercheck.results import Report, TargetReport

__all__ = ["Reporter", "Reporters"]


class Reporter(Protocol):
    def target(self, report: TargetReport) -> None:
        """A target was decided: as targets finish (a CI log shows each at once)."""

    def finish(self, report: Report) -> None:
        """The run is over: the whole report, its targets in the order of the plan."""


@dataclass(frozen=True)
class Reporters:
    """Reporters told in their order: the console first, the files last (one that cannot be
    written is said after everything else was)."""

    members: Sequence[Reporter]

    def target(self, report: TargetReport) -> None:
        for reporter in self.members:
            reporter.target(report)

    def finish(self, report: Report) -> None:
        for reporter in self.members:
            reporter.finish(report)
