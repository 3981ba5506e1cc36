"""The console report, modelled on pytest's terminal reporter: one line per target that
passed; for a target that failed, what failed or could not be decided, each cause once (with
the checks it left undecided named in that one line) and pictures of where a gradient is
wrong; a recap of every failure at the end, then the summary line.

Widths: messages wrap between words under their own indent at the terminal's width, and a
wrapped line goes on `HANG` columns further in. Into a pipe or a file nothing is padded and no
control codes are written; lines wrap at COLUMNS when it is set, else stay whole (as pytest's
do). rich reads NO_COLOR, FORCE_COLOR and COLUMNS, and the progress bar shows only on an
interactive terminal outside CI.

Text from a layer or the file system (names, labels, messages, tracebacks, a worker's output)
is shown as typed and never read as rich markup or emoji codes, with what a terminal would
interpret made visible (`safetext.visible`). Only layercheck's own lines start at the columns
of its status words (a target at 0, a check at 4): a message is one line (a newline in it
shows as `\n`), a traceback's lines are indented under the check, and a line that wraps goes
on further in, so that no layer can print a line that reads as `PASSED ...` or
`Test Summary: ...`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from layercheck.reporters.pictures import LEGEND, pictures_of
from layercheck.results import CONTRACT_CHECK, Blocked, Cause, CheckResult, Report, Status, TargetReport, repro_command
from layercheck.safetext import visible

__all__ = ["ConsoleReporter", "ProgressBar", "Verbosity", "make_console", "print_wrapped", "summary_line"]

_STYLE = {
    Status.PASSED: "green",
    Status.FAILED: "bold red",
    Status.INCOMPLETE: "yellow",
    Status.SKIPPED: "dim",
    Status.ERROR: "bold red",
    Status.KNOWN: "magenta",  # a failure the baseline accepts: not red (it fails nothing), not green
}
_INDENT = 4
HANG = 2  # how much further in a wrapped line goes on
_LAYOUTS = "; "  # between the layouts of a target: a layout holds commas (24,24,20,128:SSCB)


class Verbosity(IntEnum):
    QUIET = -1  # the line of each failing target (and its notes), the recap, the summary
    NORMAL = 0  # a line per passing target, the causes of a failing one
    VERBOSE = 1  # every check of every target


def make_console(stderr: bool = False) -> Console:
    """A console that pads and wraps on a terminal; into a pipe it neither pads nor wraps by
    itself (`print_wrapped` wraps there at COLUMNS)."""
    probe = Console(stderr=stderr)
    # No markup and no emoji codes in a string printed: what layercheck prints holds names
    # and messages of the user's (`file.py:B:` is not the emoji B).
    return Console(stderr=stderr, highlight=False, markup=False, emoji=False, soft_wrap=not probe.is_terminal)


def _wraps(console: Console) -> bool:
    return not console.soft_wrap or os.environ.get("COLUMNS", "").strip().isdigit()


def print_wrapped(console: Console, body: Text, indent: int = 0) -> None:
    """`body` under `indent` spaces, each of its lines; a line too long for the width (the
    terminal's, else COLUMNS when it is set) wraps between words and goes on `HANG` columns
    further in. Into a pipe without COLUMNS lines are written whole, as pytest writes them,
    for logs and grep. Nothing is padded, no line ends in spaces."""
    width = max(console.width - indent - HANG, 20)
    for line in body.split("\n", allow_blank=True):
        pieces = list(line.wrap(console, width, overflow="fold", no_wrap=False)) if _wraps(console) else []
        pieces = pieces or [line]  # a blank line stays a line
        for n, piece in enumerate(pieces):
            piece.rstrip()
            margin = indent + (HANG if n else 0)
            console.print(Text(" " * margin) + piece if margin else piece, soft_wrap=True)


def shows_progress(console: Console) -> bool:
    """A progress bar only where a person watches: FORCE_COLOR makes CI logs a 'terminal' to
    rich, but their stream is no TTY, and CI says so."""
    stream = sys.stderr if console.stderr else sys.stdout
    return console.is_terminal and stream.isatty() and not os.environ.get("CI")


def summary_line(summary: dict[str, int], seconds: float) -> str:
    # Known failures (--baseline) are named only where there are some: a run without a
    # baseline keeps the line MATLAB's checkLayer prints.
    known = summary.get(Status.KNOWN, 0)
    return (
        f"Test Summary: {summary[Status.PASSED]} passed, {summary[Status.FAILED]} failed, "
        + (f"{known} known (baseline), " if known else "")
        + f"{summary[Status.INCOMPLETE]} incomplete, {summary[Status.SKIPPED]} skipped. Time elapsed: {seconds:.2f} s."
    )


def _counts(summary: dict[str, int]) -> str:
    order = (Status.FAILED, Status.KNOWN, Status.INCOMPLETE, Status.PASSED, Status.SKIPPED)
    return ", ".join(f"{summary[s]} {s.value}" for s in order if summary[s]) or "no checks"


@dataclass
class _Shown:
    """A line (and its details) under a target: a check, or checks one cause left undecided;
    `blocked` are the checks a failed call kept from deciding, named in the line of the check
    that reports that call."""

    status: Status
    checks: list[CheckResult]
    blocked: list[CheckResult] = field(default_factory=list)


def _causes(report: TargetReport, verbosity: Verbosity) -> list[_Shown]:
    """The checks to show under a target, each cause once: failures one by one, each with the
    checks its failed call blocked (`CheckResult.blocked` names the call, and the check that
    reports it); other checks left undecided grouped by that call, else by their message."""
    by_name = {c.name: c for c in report.checks}
    shown: list[_Shown] = []
    owners: dict[str, _Shown] = {}
    groups: dict[Blocked | str, _Shown] = {}
    for check in report.checks:
        if check.status == Status.FAILED:
            owners[check.name] = _Shown(Status.FAILED, [check])
            shown.append(owners[check.name])
    for check in report.checks:
        owner = None if check.blocked is None else _owner(check.blocked, by_name)
        if check.status == Status.INCOMPLETE and owner in owners:
            owners[owner].blocked.append(check)
        elif check.status == Status.KNOWN and verbosity >= Verbosity.NORMAL:
            shown.append(_Shown(Status.KNOWN, [check]))
        elif check.status == Status.INCOMPLETE and verbosity >= Verbosity.NORMAL:
            key = check.message if check.blocked is None else Blocked(check.blocked.call)
            if key not in groups:
                groups[key] = _Shown(Status.INCOMPLETE, [])
                shown.append(groups[key])
            groups[key].checks.append(check)
        elif verbosity >= Verbosity.VERBOSE and check.status not in (Status.INCOMPLETE, Status.FAILED):
            shown.append(_Shown(check.status, [check]))
    order = {c.name: i for i, c in enumerate(report.checks)}
    return sorted(shown, key=lambda item: order[item.checks[0].name])


def _owner(blocked: Blocked, by_name: Mapping[str, CheckResult]) -> str | None:
    """The check that reports a failed call: the contract's check for a call that broke the
    contract (said so by the blocked check, or by the check that reports the call), else the
    call's own check (None: the call has none)."""
    reporter = None if blocked.call.check is None else by_name.get(blocked.call.check)
    if reporter is not None and reporter.blocked is not None and reporter.blocked.broke_contract:
        return CONTRACT_CHECK
    return blocked.reported_by


def _names(report: TargetReport) -> set[str]:
    return {check.name for check in report.checks}


def _beyond(traceback: str, reason: str) -> str:
    """What `traceback` adds to the `reason` printed above it: without its last line where it
    has no frames (a SyntaxError's place in the source, or the exception alone) and the
    reason ends with that line. A traceback of frames is kept whole, as Python prints it."""
    lines = traceback.rstrip().splitlines()
    if lines and lines[0].startswith("Traceback (most recent call last)"):
        return traceback
    if lines and lines[-1].strip() and reason.rstrip().endswith(lines[-1].strip()):
        lines = lines[:-1]
    return "\n".join(lines) if any(line.strip() for line in lines) else ""


def _status(status: Status) -> tuple[str, str]:
    return status.upper(), _STYLE[status]


class ConsoleReporter:
    """The console's report (a `reporters.reporter.Reporter`): each target's lines as it is
    decided; at the end the recap, the summary line and what the command adds (`closing`: the
    lines it computes from the report, such as why the run stopped)."""

    def __init__(
        self,
        console: Console,
        verbosity: Verbosity = Verbosity.NORMAL,
        closing: Callable[[Report], Sequence[str]] | None = None,
    ):
        self.console = console
        self.verbosity = verbosity
        self._closing = closing
        self._drew_pictures = False

    @property
    def drew_pictures(self) -> bool:
        """Whether a picture of where a gradient is wrong was printed (its legend is due)."""
        return self._drew_pictures

    def _line(self, body: Text, indent: int = 0, style: str | None = None) -> None:
        if style:
            body.stylize(style)
        print_wrapped(self.console, body, indent)

    def _block(self, text: str, indent: int) -> None:
        """A traceback or a worker's output: its own lines, each under `indent` (deeper than
        any status word), dimmed."""
        self._line(Text(visible(text.rstrip(), lines=True)), indent, style="dim")

    @staticmethod
    def _head(report: TargetReport) -> Text:
        layouts = _LAYOUTS.join(map(str, report.layouts)) or "no layout"
        return Text.assemble(visible(report.target), (f" ({report.kind}, {visible(layouts)})", "dim"))

    def target(self, report: TargetReport) -> None:
        """One target, as soon as it is done. Quiet, a target's line alone (and its notes,
        which say what was not tested, even when it passed): the recap has each failure's."""
        if report.cause is Cause.NOT_RUN:
            return  # -x stopped the run before it: the line of `stopping.stopped_line` counts it
        quiet = self.verbosity <= Verbosity.QUIET
        if report.error is not None:
            known = " (a known failure: baseline)" if report.error_known else ""
            self._line(
                Text.assemble(_status(report.status), "  ", self._head(report), f": could not be checked{known}")
            )
            if quiet:
                return
            # "reason:" first: at a check's column only layercheck's words begin a line
            self._line(Text.assemble(("reason", _STYLE[Status.ERROR]), ": ", visible(report.error)), _INDENT)
            # A known error (--baseline) in one line; its traceback only with -v, and not the
            # exception's own line again where the reason ends with it (a SyntaxError's).
            traceback = _beyond(report.traceback, report.error)
            if traceback and (not report.error_known or self.verbosity >= Verbosity.VERBOSE):
                self._block(traceback, 2 * _INDENT)
            return
        status = report.status
        # Quiet prints failures: an incomplete target is none (the summary line counts its
        # checks; with --strict, the line after it says that they fail the run).
        if status in (Status.PASSED, Status.INCOMPLETE, Status.KNOWN) and quiet and not report.notes:
            return
        counts = _counts(report.summary)
        # A cached verdict keeps the time its check took when it ran: said so beside it.
        took = f"{counts} in {report.duration_s:.2f}s" + (" (cached)" if report.cached else "")
        self._line(Text.assemble(_status(status), " ", self._head(report), f"  {took}"))
        for note in report.notes:
            self._line(Text.assemble(("note", "yellow"), ": ", visible(note)), _INDENT)
        if self.verbosity >= Verbosity.VERBOSE:  # what the layer changed that no verdict reads
            for change in report.allowed_changes:
                self._line(Text.assemble(("note", "dim"), ": ", visible(change)), _INDENT)
        if quiet:  # the recap says each failure; where to reproduce it is said here alone
            for check in report.failures:
                if check.repro is not None:
                    self._repro(check)
            return
        for shown in _causes(report, self.verbosity):
            self._check(report, shown)

    def _check(self, report: TargetReport, shown: _Shown) -> None:
        status, checks = shown.status, shown.checks
        first = checks[0]
        names = ", ".join(visible(c.name) for c in checks)
        label = Text.assemble(_status(status), " ", (names, "bold"))
        if status in (Status.PASSED, Status.SKIPPED, Status.KNOWN):
            message = f": {visible(first.message)}" if first.message else ""
            self._line(Text.assemble(label, " ", (f"{first.duration_s:.2f}s", "dim"), message), _INDENT)
            return
        if status == Status.INCOMPLETE and len(checks) > 1 and first.blocked is not None:
            call = first.blocked.call
            see = f" (see {call.check})" if call.check is not None and call.check in _names(report) else ""
            self._line(Text.assemble(label, ": ", visible(f"not checked: {call} failed{see}")), _INDENT)
            return
        blocked = ""
        if shown.blocked:
            names_blocked = ", ".join(visible(c.name) for c in shown.blocked)
            blocked = f"; it left {len(shown.blocked)} check(s) undecided: {names_blocked}"
        self._line(Text.assemble(label, ": ", visible(first.message) + blocked), _INDENT)
        if status != Status.FAILED:
            return
        for line in first.explanation:
            self._line(Text(visible(line)), 2 * _INDENT)
        if len(first.problems) > 1:
            for problem in first.problems:
                self._line(Text(f"- {visible(problem)}"), 2 * _INDENT)
        if first.gradient is not None:
            for picture in pictures_of(first.gradient):
                self._line(Text(visible(picture.title)), 2 * _INDENT)
                for row in picture.lines:
                    self._line(Text(visible(row)), 3 * _INDENT, style="red")
                self._drew_pictures = True
        for check in checks:
            if check.repro is not None:
                self._repro(check)
        if first.traceback:
            self._block(first.traceback, 2 * _INDENT)

    def _repro(self, check: CheckResult) -> None:
        """--repro: the script that recomputes this failure, under the check."""
        assert check.repro is not None
        self._line(Text(visible(f"reproduce: {repro_command(check.repro)}")), 2 * _INDENT)

    def finish(self, report: Report) -> None:
        """The recap and the summary line (`overall`), then the command's closing lines."""
        self.overall(report)
        for line in self._closing(report) if self._closing is not None else ():
            self.console.print(line)

    def overall(self, report: Report) -> None:
        """The recap of every failed or errored target and check, then the summary line."""
        recap = self._recap(report.targets)
        if recap:
            self.console.rule("short summary", style="dim", characters="=" if self.console.soft_wrap else "─")
            for failure in recap:
                self._line(failure)
            if self._drew_pictures:
                self._line(Text(f"pictures: {LEGEND}"), style="dim")
        targets = len(report.targets)
        line = summary_line(report.summary, report.duration_s)
        if targets > 1 or any(t.error is not None for t in report.targets):
            not_run = sum(t.cause is Cause.NOT_RUN for t in report.targets)
            errors = sum(t.status == Status.ERROR for t in report.targets) - not_run
            failed = sum(t.status == Status.FAILED for t in report.targets)
            known = sum(t.status == Status.KNOWN for t in report.targets)
            incomplete = sum(t.status == Status.INCOMPLETE for t in report.targets)
            passed = targets - errors - failed - incomplete - known - not_run
            line += f" Targets: {passed} passed, {failed} failed, "
            # Named only where there are some, as known failures are: most runs decide every check.
            line += f"{incomplete} incomplete, " if incomplete else ""
            line += f"{known} with known failures only, " if known else ""
            line += f"{errors} could not be checked"
            line += f", {not_run} not checked." if not_run else "."
        self._line(Text(line, style="bold"))

    @staticmethod
    def _recap(targets: Sequence[TargetReport]) -> list[Text]:
        """One line per failure: the whole message on it, a newline in it shown as `\\n`."""
        lines = []
        for target in targets:
            if target.cause is Cause.NOT_RUN:  # not a failure: -x stopped the run before it
                continue
            if target.error is not None:
                if not target.error_known:  # a failure the baseline accepts is no failure to recap
                    lines.append(
                        Text.assemble(_status(Status.ERROR), " ", visible(target.target), " - ", visible(target.error))
                    )
                continue
            for check in target.failures:
                # Spaces around "::": a narrow terminal breaks there, not inside a check's name.
                lines.append(
                    Text.assemble(
                        _status(Status.FAILED),
                        f" {visible(target.target)} :: {visible(check.name)} - {visible(check.message)}",
                    )
                )
        return lines


class ProgressBar:
    """A transient progress bar while targets are found and checked: on an interactive
    terminal only, so that CI logs and pipes get the reports alone. Reports printed meanwhile
    go above it."""

    def __init__(self, console: Console):
        self.progress = None
        if shows_progress(console):
            self.progress = Progress(
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
        self.tasks: dict[str, Any] = {}

    def __enter__(self) -> ProgressBar:
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.progress is not None:
            self.progress.stop()

    def update(self, what: str, done: int, total: int) -> None:
        if self.progress is None:
            return
        if what not in self.tasks:
            self.tasks[what] = self.progress.add_task(what, total=total)
        self.progress.update(self.tasks[what], completed=done, total=total)
