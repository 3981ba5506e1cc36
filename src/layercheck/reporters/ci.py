"""What CI logs get besides the console report: a line for a target that runs long, and with
`GITHUB_ACTIONS=true` one GitHub annotation per failure.

Annotations are workflow commands, `::error file=F,line=L,title=T::MESSAGE`, one a line,
written after the summary (all of them in target order, in one place; a run that a signal
stops still gets there). In them, text from a layer or the file system is made visible
(`safetext.visible`: no newline or carriage return is left in it), bounded, and escaped by
GitHub's rules (`%`, CR and LF in the message; also `:` and `,` in a property), so that it
can neither start a line nor end a property early and add another.

The rest of the report quotes a layer's text too (messages, tracebacks), and GitHub's runner
reads a command from any line whose text starts with `::` once its leading spaces are cut (an
indented traceback line), and, in the legacy form `##[error]...`, from anywhere in a line.
So the report is written with command processing stopped (`::stop-commands::TOKEN`, GitHub's
way to log text that may hold commands, with a token no layer can know) and resumed
(`::TOKEN::`) just before layercheck's own annotations. `layercheck run` and `layercheck merge`
(whose shards quote the same text, read back from files) do that through one `GitHubLog`;
a usage error, which may quote a file's or a shard's text, is printed stopped too
(`print_stopped`).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Mapping
from pathlib import Path

from rich.console import Console
from rich.text import Text

from layercheck.reporters.console import print_wrapped
from layercheck.results import Cause, Report, Source, TargetReport
from layercheck.safetext import NAME_LIMIT, bounded, visible

__all__ = [
    "GitHubLog",
    "StoppedCommands",
    "annotation_lines",
    "escape_data",
    "escape_property",
    "in_github_actions",
    "print_annotations",
    "print_stopped",
    "still_running",
]

_MESSAGE_LIMIT = 1_000  # characters of a message in an annotation (GitHub shows a few lines)


def still_running(console: Console) -> Callable[[str, float, str], None]:
    """The `StillRunning.say` of a console: `... LABEL still running after 30 s, in CHECK`.
    The line starts with layercheck's own `...`, never with the label (a file's name)."""

    def say(label: str, seconds: float, where: str) -> None:
        print_wrapped(console, Text(f"... {visible(label)} still running after {seconds:g} s, {where}", style="dim"))

    return say


def in_github_actions(environ: Mapping[str, str] | None = None) -> bool:
    """GitHub sets GITHUB_ACTIONS=true in every step of a workflow."""
    return (os.environ if environ is None else environ).get("GITHUB_ACTIONS") == "true"


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub's runner unescapes it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: also `:` (which would end the properties) and `,`
    (which would start another)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _file(source: Source, environ: Mapping[str, str]) -> str:
    """The path GitHub annotates: relative to the workspace (the checkout) when below it, else
    to the working folder when below that, else absolute."""
    path = Path(source.path)
    for root in (environ.get("GITHUB_WORKSPACE"), os.getcwd()):
        if not root:
            continue
        try:
            return str(path.resolve().relative_to(Path(root).resolve()))
        except (ValueError, OSError):
            continue
    return str(path)


def _command(source: Source | None, title: str, message: str, environ: Mapping[str, str]) -> str:
    properties = []
    if source is not None:
        properties.append(f"file={escape_property(visible(_file(source, environ)))}")
        if source.line is not None:
            properties.append(f"line={source.line}")
    properties.append(f"title={escape_property(visible(bounded(title, 2 * NAME_LIMIT)))}")
    return f"::error {','.join(properties)}::{escape_data(visible(bounded(message, _MESSAGE_LIMIT)))}"


def annotation_lines(report: Report, environ: Mapping[str, str] | None = None) -> list[str]:
    """One `::error` command per failed check and per target that could not be checked, in
    target order; none for a target a signal or -x left unchecked (not its layer's failure)."""
    environ = os.environ if environ is None else environ
    lines = []
    for target in report.targets:
        lines += _of_target(target, environ)
    return lines


def _of_target(target: TargetReport, environ: Mapping[str, str]) -> list[str]:
    if target.cause in (Cause.INTERRUPTED, Cause.NOT_RUN):
        return []
    if target.error is not None:
        return [_command(target.source, target.target, f"could not be checked: {target.error}", environ)]
    return [
        _command(target.source, f"{target.target}: {check.name}", check.message, environ) for check in target.failures
    ]


def _print_command(console: Console, line: str) -> None:
    """A command on a line of its own, whatever the width: a wrapped command is lost."""
    console.print(Text(line), soft_wrap=True, crop=False)


def print_annotations(console: Console, report: Report) -> None:
    for line in annotation_lines(report):
        _print_command(console, line)


class StoppedCommands:
    """GitHub's command processing stopped while the report is written (`stop`), and resumed
    (`resume`, once, however the command ends: call it on the way out too)."""

    def __init__(self, console: Console):
        self.console = console
        self.token: str | None = None

    def stop(self) -> None:
        if self.token is None:
            self.token = secrets.token_hex(16)  # in the parent, which runs no code of a layer
            _print_command(self.console, f"::stop-commands::{self.token}")

    def resume(self) -> None:
        if self.token is not None:
            _print_command(self.console, f"::{self.token}::")
            self.token = None


class GitHubLog:
    """A report's console under GITHUB_ACTIONS=true (elsewhere it does nothing): `start`
    stops GitHub's command processing before the first line that may quote a layer's text,
    `finish` resumes it after the last and prints layercheck's annotations of the report;
    `close` resumes it however the command ends (call it on the way out too)."""

    def __init__(self, console: Console, environ: Mapping[str, str] | None = None):
        self.console = console
        self.active = in_github_actions(environ)
        self._commands = StoppedCommands(console)

    @property
    def stopped(self) -> bool:
        """Whether command processing is stopped now (between `start` and `finish`)."""
        return self._commands.token is not None

    def start(self) -> None:
        if self.active:
            self._commands.stop()

    def target(self, report: TargetReport) -> None:
        """Nothing as targets finish: the annotations come with the whole report."""

    def finish(self, report: Report) -> None:
        if self.active:
            self._commands.resume()
            print_annotations(self.console, report)

    def close(self) -> None:
        self._commands.resume()


def print_stopped(console: Console, line: str) -> None:
    """`line` on a line of its own between a stop and a resume of GitHub's command processing:
    a line that may quote text no one vetted (a shard's, a file name) printed where no report's
    `GitHubLog` has stopped it."""
    commands = StoppedCommands(console)
    commands.stop()
    try:
        _print_command(console, line)
    finally:
        commands.resume()
