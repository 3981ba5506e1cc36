"""The rich console report: a table per target, failure details, the summary line."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from layercheck.results import CheckResult, Report, Status, TargetReport

__all__ = ["ConsoleReporter", "ProgressBar", "make_console", "summary_line"]

_STYLE = {Status.PASSED: "green", Status.FAILED: "bold red", Status.INCOMPLETE: "yellow", Status.SKIPPED: "dim"}


def make_console(stderr: bool = False) -> Console:
    """Colour and box drawing on a terminal; plain, wide text otherwise (CI logs, pipes)."""
    console = Console(stderr=stderr, highlight=False)
    if not console.is_terminal:
        console = Console(stderr=stderr, highlight=False, no_color=True, width=200, emoji=False)
    return console


def summary_line(summary: dict[str, int], seconds: float) -> str:
    return (
        f"Test Summary: {summary[Status.PASSED]} passed, {summary[Status.FAILED]} failed, "
        f"{summary[Status.INCOMPLETE]} incomplete, {summary[Status.SKIPPED]} skipped. Time elapsed: {seconds:.2f} s."
    )


def _detail_lines(check: CheckResult) -> list[str]:
    lines = list(check.explanation)
    if len(check.problems) > 1:
        lines += [f"- {p}" for p in check.problems]
    return lines


class ConsoleReporter:
    def __init__(self, console: Console, quiet: bool = False):
        self.console = console
        self.quiet = quiet

    def target(self, report: TargetReport) -> None:
        c = self.console
        layouts = ", ".join(report.layouts) or "no layout"
        if report.error is not None:
            c.print(
                f"[bold]{escape(report.target)}[/] ({report.kind}, {escape(layouts)}): [bold red]ERROR[/] {escape(report.error)}"
            )
            if report.traceback:
                c.print(escape(report.traceback), style="dim")
            if report.checks and not self.quiet:  # the checks it got through before the error
                c.print(self._table(report))
            c.print(summary_line(report.summary, report.duration_s))
            return
        if not self.quiet:
            c.print(f"[bold]{escape(report.target)}[/] ({report.kind}, {escape(layouts)})")
            c.print(self._table(report))
        troubles = [
            ch
            for ch in report.checks
            if ch.status == Status.FAILED or (ch.status == Status.INCOMPLETE and not self.quiet)
        ]
        if troubles and self.quiet:
            c.print(f"[bold]{escape(report.target)}[/] ({report.kind}, {escape(layouts)})")
        for check in troubles:
            c.print(f"[{_STYLE[check.status]}]{check.status.upper()}[/] [bold]{check.name}[/]: {escape(check.message)}")
            for line in _detail_lines(check):
                c.print(f"    {escape(line)}")
            if check.traceback:
                c.print(escape(check.traceback), style="dim")
        prefix = f"{escape(report.target)}: " if self.quiet and not troubles else ""
        c.print(prefix + summary_line(report.summary, report.duration_s))

    def _table(self, report: TargetReport) -> Table:
        table = Table(box=box.SIMPLE_HEAD if self.console.is_terminal else None, show_edge=False, pad_edge=False)
        table.add_column("Status", no_wrap=True)
        table.add_column("Check", no_wrap=True)
        table.add_column("Time", justify="right", no_wrap=True)
        table.add_column("Message", overflow="fold")
        for check in report.checks:
            table.add_row(
                f"[{_STYLE[check.status]}]{check.status.upper()}[/]",
                check.name,
                f"{check.duration_s:.2f}s",
                escape(check.message),
            )
        return table

    def overall(self, report: Report) -> None:
        if len(report.targets) > 1:
            errors = sum(t.status == Status.ERROR for t in report.targets)
            line = summary_line(report.summary, report.duration_s)
            if errors:
                line += f" {errors} target(s) could not be checked."
            self.console.print(f"[bold]{line}[/]")


class ProgressBar:
    """A transient progress bar while targets are found and checked: on a terminal only, so
    that CI logs and pipes get the reports alone. Reports printed meanwhile go above it."""

    def __init__(self, console: Console):
        self.progress = None
        if console.is_terminal:
            self.progress = Progress(
                TextColumn("{task.description}"),
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

    def __exit__(self, *exc_info) -> None:
        if self.progress is not None:
            self.progress.stop()

    def update(self, what: str, done: int, total: int) -> None:
        if self.progress is None:
            return
        if what not in self.tasks:
            self.tasks[what] = self.progress.add_task(what, total=total)
        self.progress.update(self.tasks[what], completed=done, total=total)
