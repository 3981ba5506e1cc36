"""Whether the layer's own code is running, and since when: the clock a worker shares with
its parent, so that a timeout says whether the layer hung or layercheck's own work (many
calls of the layer, each quick) took the time.

Every call of a user method goes through `run` (`contract.adapter`). In a worker the clock
is a shared double (`multiprocessing.Value`) that holds the monotonic time at which the
outermost call under way started, or 0 between calls; elsewhere there is none and `run`
only calls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from layercheck.clock import monotonic

__all__ = ["Clock", "install", "run"]


class Clock(Protocol):
    """A shared double, as `multiprocessing.Value("d")` makes one."""

    value: float


_clock: Clock | None = None
_depth = 0  # calls of the layer under way (predict from forward, say): the outermost counts


def install(clock: Clock | None) -> None:
    """Use `clock` for this process's calls of the layer from now on."""
    global _clock
    _clock = clock


def run(fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)`, a method of the user's, with the clock set while it runs."""
    global _depth
    clock = _clock
    if clock is None:
        return fn(*args)
    if _depth == 0:
        clock.value = monotonic()
    _depth += 1
    try:
        return fn(*args)
    finally:
        _depth -= 1
        if _depth == 0:
            clock.value = 0.0
