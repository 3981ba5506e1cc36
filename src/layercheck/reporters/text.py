"""The console's text for one target, as a string: what `str(report)` and the pytest plugin
show. The console reporter itself writes it, on a console that prints into a string, so that
the text is the one `layercheck run` prints for that target (without the run's recap and
summary line)."""

from __future__ import annotations

import io

from rich.console import Console

from layercheck.reporters.console import ConsoleReporter, Verbosity
from layercheck.reporters.pictures import LEGEND
from layercheck.results import TargetReport

__all__ = ["target_text"]


def target_text(
    report: TargetReport, *, color: bool = False, width: int | None = None, verbosity: Verbosity = Verbosity.NORMAL
) -> str:
    """The console's lines for `report`, ending without a newline.

    Args:
        color: ANSI styles, as on a terminal; without, plain text (NO_COLOR and FORCE_COLOR
            are not read: the caller knows where the text goes).
        width: wrap lines at this width, as on a terminal; None: as into a pipe (each line
            whole, or wrapped at COLUMNS when it is set).
        verbosity: as `layercheck run -q` / `-v`; at QUIET a target that passed has no lines.
    """
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=color,
        color_system="standard" if color else None,
        no_color=not color,
        width=width,  # None: COLUMNS, else 80, as into a pipe
        soft_wrap=width is None,
        highlight=False,
        markup=False,
        emoji=False,
    )
    reporter = ConsoleReporter(console, verbosity)
    reporter.target(report)
    if reporter.drew_pictures:  # the pictures' legend, which the run prints with its recap
        console.print(f"pictures: {LEGEND}", style="dim", soft_wrap=True)
    return buffer.getvalue().rstrip("\n")
