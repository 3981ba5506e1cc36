"""layercheck's clocks, bound when layercheck is imported, before any module of the user's.

A layer's module runs in the same process as the checks and may replace `time.monotonic` or
`time.perf_counter` (with a clock that returns NaN, runs backwards or raises). Looked up as
`time.monotonic()` at each call, the replacement would give reports NaN or negative durations
and blind the timeouts; bound here, layercheck keeps the interpreter's own clocks whatever the
`time` module holds later.
"""

from __future__ import annotations

from time import monotonic, perf_counter

__all__ = ["monotonic", "perf_counter"]
