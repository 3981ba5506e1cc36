"""How a check stops without an outcome: it does not apply (`Skip`) or cannot decide
(`Incomplete`). Apart from the registry, so that the typed view a check has of its target
(`checks.context`), which raises `Incomplete` for a step that failed, needs nothing above it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from layercheck.results import Blocked, Cause

__all__ = ["Incomplete", "Skip"]


class Skip(Exception):
    """The check does not apply (no backward defined, no GPU available)."""


class Incomplete(Exception):
    """The check could not decide (a step it depends on failed, no usable sample).

    `explanation`, `traceback` and `blocked` (the failed call that left it undecided) are those
    of `CheckResult`; `cause` is set when the user's code ran out of memory or called sys.exit
    (`results.cause_of(exc)`).
    """

    def __init__(
        self,
        message: str,
        details: dict[str, Any] | None = None,
        *,
        explanation: Sequence[str] = (),
        traceback: str = "",
        blocked: Blocked | None = None,
        cause: Cause | None = None,
    ):
        super().__init__(message)
        self.details = details or {}
        self.explanation = list(explanation)
        self.traceback = traceback
        self.blocked = blocked
        self.cause = cause
