"""layercheck's clocks, bound when layercheck is imported, before any module of the user's.

A layer's module runs in the same process as the checks and may replace `time.monotonic` or
`time.perf_counter` (with a clock that returns NaN, runs backwards or raises). Looked up as
`time.monotonic()` at each call, the replacement would give reports NaN or negative durations
and blind the timeouts; bound here, layercheck keeps the interpreter's own clocks whatever the
`time` module holds later.
"""

from __future__ import annotations

import os
from time import monotonic, perf_counter

__all__ = ["monotonic", "perf_counter", "process_started"]

_IMPORTED = monotonic()  # where the process's start is not known: the first of layercheck's imports


def process_started() -> float:
    """When this process started, on the `monotonic` clock: from the kernel's record where
    there is one (Linux's /proc: the interpreter's start and its imports included, as the
    user waited for them), else when layercheck was first imported."""
    try:
        with open("/proc/self/stat", "rb") as stat_file:
            stat = stat_file.read()
        with open("/proc/uptime", "rb") as uptime_file:
            uptime = float(uptime_file.read().split()[0])
        # After the command's name, which may hold spaces and parentheses: the 22nd field.
        ticks = int(stat[stat.rindex(b")") + 2 :].split()[19])
        age = uptime - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return _IMPORTED
    return min(monotonic() - max(age, 0.0), _IMPORTED)
