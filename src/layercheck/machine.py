"""The machine: the memory a run needs for its layouts and the memory available, so that a
layout whose arrays would not fit is refused up front with the estimate."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from layercheck.errors import UsageError

__all__ = ["ARRAYS_HELD", "available_memory", "memory_estimate", "refuse_if_too_large"]


class _Sized(Protocol):
    """What is needed of a layout here: its number of elements and its text."""

    @property
    def numel(self) -> int: ...


# A check holds about this many arrays of an input's size at once (inputs at two precisions,
# outputs, perturbed outputs, their differences, loss weights, directions, gradients).
ARRAYS_HELD = 16


def memory_estimate(layouts: Sequence[_Sized]) -> int:
    """Bytes a run needs for these layouts, in float64 (outputs assumed the size of inputs)."""
    return ARRAYS_HELD * 8 * sum(layout.numel for layout in layouts)


def available_memory() -> int | None:
    """Bytes of memory available now (Linux /proc/meminfo), or None where unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _gib(n: int) -> str:
    """Bytes in GiB, for messages; sizes beyond a float's range (999...9:S) too."""
    if n.bit_length() < 1000:
        return f"{n / 2**30:.1f}"
    return f"10^{len(str(n // 2**30)) - 1}"


def refuse_if_too_large(layouts: Sequence[_Sized]) -> None:
    need, have = memory_estimate(layouts), available_memory()
    if have is not None and need > have:
        sizes = " + ".join(str(layout) for layout in layouts)
        raise UsageError(
            f"layout {sizes} needs about {_gib(need)} GiB to check but {_gib(have)} GiB "
            "is available; use a smaller layout"
        )
