"""Whether the layer's own code is running, and since when: the clock a worker shares with
its parent, so that a timeout says whether the layer hung or layercheck's own work (many
calls of the layer, each quick) took the time.

Every call of a user method goes through `run` (`contract.adapter`). In a worker the clock
is a shared double (`multiprocessing.Value`) that holds the monotonic time at which the
outermost call under way started, or 0 between calls, and two more (`multiprocessing.Array`)
add up the seconds the outermost calls that ended took, and how many they were; elsewhere
there are none and `run` only calls.

After each outermost call `run` also calls the hook `guard` installed (`sandbox.integrity`:
a quick look whether the layer replaced NumPy's functions, before layercheck uses them), and
before it another (the whole look the guard owes, if any: the checks before this one called
no method of the layer, and were not looked after).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from layercheck.clock import monotonic

__all__ = ["CALLS", "SECONDS", "Clock", "Tally", "guard", "install", "run"]


class Tally(Protocol):
    """Two shared doubles, as `multiprocessing.Array("d", 2)` makes them: `SECONDS`, `CALLS`."""

    def __getitem__(self, index: int) -> float: ...

    def __setitem__(self, index: int, value: float) -> None: ...


SECONDS, CALLS = 0, 1  # a tally's slots


class Clock(Protocol):
    """A shared double, as `multiprocessing.Value("d")` makes one."""

    value: float


_clock: Clock | None = None
_spent: Tally | None = None  # the seconds the outermost calls that ended took, and how many
_depth = 0  # calls of the layer under way (predict from forward, say): the outermost counts
_after: Callable[[], None] | None = None  # called after each outermost call
_before: Callable[[], None] | None = None  # called before each outermost call
# The globals this module rebinds while the layer runs: `sandbox.integrity` leaves them out of
# what it watches.
_RUNTIME_GLOBALS = ("_clock", "_spent", "_depth", "_after", "_before")


def install(clock: Clock | None, spent: Tally | None = None) -> None:
    """Use `clock` for this process's calls of the layer from now on, and count each call and
    the seconds it takes in `spent`."""
    global _clock, _spent
    _clock, _spent = clock, spent


def guard(after: Callable[[], None] | None, before: Callable[[], None] | None = None) -> None:
    """Call `after()` when each outermost call of the layer returns or raises, and `before()`
    as each starts (None: none)."""
    global _after, _before
    _after, _before = after, before


def run(fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)`, a method of the user's, with the clock set while it runs and the guard's
    hook called after it."""
    global _depth
    if _depth == 0 and _before is not None:
        # Before the clock starts (the look is layercheck's time, not the layer's), and before
        # the hooks are read (it puts back any the layer replaced).
        _before()
    clock, spent, after = _clock, _spent, _after
    started = monotonic() if _depth == 0 and clock is not None else 0.0
    if clock is not None and started:
        clock.value = started
    _depth += 1
    try:
        return fn(*args)
    finally:
        _depth -= 1
        if _depth == 0:
            try:
                if clock is not None:
                    clock.value = 0.0
                if spent is not None and started:
                    spent[SECONDS] += monotonic() - started
                    spent[CALLS] += 1
            finally:  # a clock the layer replaced with one that raises skips no look
                if after is not None:
                    after()
