"""How a check ended, or a target that could not be checked: the statuses every report writes,
the causes that tell about the process rather than the layer, and what a target is.

Apart from `results`, which re-exports them, so that what the results hold (`findings.gradient`)
and the numerics that compute them can name a status or a cause without importing the results
that hold them."""

from __future__ import annotations

from enum import Enum

__all__ = ["STATUSES", "Cause", "Kind", "Status", "cause_of"]


class Status(str, Enum):
    """How a check ended, or (ERROR) a target that could not be checked. Valued as the strings
    of the JSON and JUnit reports, so `status == "passed"` holds and `json.dumps` writes the
    value; `str()` and f-strings give the value too, on every Python version."""

    PASSED = "passed"
    FAILED = "failed"
    INCOMPLETE = "incomplete"
    SKIPPED = "skipped"
    ERROR = "error"  # a target's status when it could not be checked (TargetReport.error is set)
    # A failure (a failed check, or a target that could not be checked) that the run's
    # `--baseline` accepts: set by the parent from the baseline file, never by a check, and
    # never read from a worker (`results.Origin.WORKER`), so that no layer can claim it.
    KNOWN = "known"

    def __str__(self) -> str:
        return self.value


# A check's statuses, in the order of the summaries: what a check can end with (a gradient
# check's argument too).
STATUSES = (Status.PASSED, Status.FAILED, Status.INCOMPLETE, Status.SKIPPED)


class Cause(str, Enum):
    """Why a check's result, or a target's error, tells about the process rather than the layer:
    set where the exception is caught, from its type, and read by batch runs (a worker that
    ran out of memory stops; a layer that called sys.exit is that target's error)."""

    MEMORY = "memory"  # MemoryError
    EXIT = "exit"  # SystemExit (sys.exit)
    INTERNAL = "internal"  # a defect of layercheck: the target is an error, never a pass
    INTERRUPTED = "interrupted"  # the user stopped the run before the target was done
    NOT_RUN = "not_run"  # -x / --maxfail stopped the run before the target was done

    def __str__(self) -> str:
        return self.value


def cause_of(exc: BaseException | None) -> Cause | None:
    """The cause an exception carries: its own type, else that of the exception it was raised
    from or while handling (a TargetError raised for a constructor's MemoryError, say)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, MemoryError):
            return Cause.MEMORY
        if isinstance(exc, SystemExit):
            return Cause.EXIT
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


class Kind(str, Enum):
    """What a target is: a layer, or a differentiable operation ("function" in the reports)."""

    LAYER = "layer"
    FUNCTION = "function"

    def __str__(self) -> str:
        return self.value
