"""What a CI log says while a target runs long: "still running after 30 s, in CHECK".

Off a terminal nothing shows that a run is alive between two targets' lines, and a target
may run for its whole timeout (120 s by default): after `STILL_RUNNING_S`, and again every
`STILL_RUNNING_S` while it runs, it is said which target is still running and where it is
(the check it is in, from the events its worker sends). Again, not once: a target moves from
check to check, and a log that falls silent for minutes reads as hung. With the default
timeout that is at most 3 lines a target.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from layercheck.errors import UsageError
from layercheck.safetext import bounded, visible
from layercheck.sandbox import Watch

__all__ = ["STILL_RUNNING_ENV", "STILL_RUNNING_S", "StillRunning", "still_running_every_s", "watch_of", "where_now"]

STILL_RUNNING_S = 30.0
# Seconds between the lines, for tests (which cannot wait 30 s); a positive number.
STILL_RUNNING_ENV = "LAYERCHECK_STILL_RUNNING_S"


@dataclass(frozen=True)
class StillRunning:
    """`say(label, seconds, where)` of each target still running every `every_s` seconds;
    `where` is `in CHECK` or `while STEP` (importing the module...), already made visible."""

    say: Callable[[str, float, str], None]
    every_s: float = STILL_RUNNING_S


def still_running_every_s(environ: Mapping[str, str] | None = None) -> float:
    """`STILL_RUNNING_S`, or the seconds `STILL_RUNNING_ENV` gives.

    Raises:
        UsageError: the variable is set to something else than a positive number.
    """
    text = (os.environ if environ is None else environ).get(STILL_RUNNING_ENV)
    if text is None:
        return STILL_RUNNING_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        shown = visible(bounded(text, 100))
        raise UsageError(f"{STILL_RUNNING_ENV}={shown!r}: give a number of seconds > 0")
    return seconds


def where_now(events: Sequence[tuple[str, Any]]) -> str:
    """Where a worker is, from the last check it started or step it took: `in CHECK`, `while
    importing file.py`. The worker ran the layer's code: only text is read, bounded, visible."""
    for kind, data in reversed(events):
        if type(data) is not str:
            continue
        if kind == "start":
            return f"in {visible(bounded(data, 100))}"
        if kind == "step":
            return f"while {visible(bounded(data, 200))}"
    return "while starting"


def watch_of(labels: Sequence[str], still: StillRunning, after: Sequence[float] | None = None) -> Watch:
    """The `run_jobs` watch of jobs whose targets are `labels`, in order; `after`: the seconds
    each target had already run in an earlier worker (the one that found it), which its
    seconds go on from (to a tenth of a second)."""

    def call(index: int, seconds: float, events: Sequence[tuple[str, Any]]) -> None:
        before = 0.0 if after is None else after[index]
        still.say(labels[index], round(before + seconds, 1) if before else seconds, where_now(events))

    return Watch(still.every_s, call)
