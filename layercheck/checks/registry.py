"""The check registry: every check has a stable name, a one-line description and its MATLAB
counterpart. A check is a function of a `Session` that returns an `Outcome` or raises
`Skip`/`Incomplete`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from layercheck.results import FAILED, PASSED


class Skip(Exception):
    """The check does not apply (no backward defined, no GPU available)."""


class Incomplete(Exception):
    """The check could not decide (a step it depends on failed, no usable sample)."""

    def __init__(self, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.details = details or {}


@dataclass(frozen=True)
class Outcome:
    status: str
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def passed(message: str = "", **details: Any) -> Outcome:
    return Outcome(PASSED, message, details)


def failed(message: str, **details: Any) -> Outcome:
    return Outcome(FAILED, message, details)


@dataclass(frozen=True)
class Check:
    name: str
    description: str
    matlab: str
    family: str
    run: Callable[[Any], Outcome]
    kinds: tuple[str, ...] = ("layer", "function")

    def applies_to(self, kind: str) -> str | None:
        """None when the check applies to targets of `kind`, else why it is skipped."""
        if kind in self.kinds:
            return None
        if kind == "function":
            return "layers only (an operation has no predict, initialize, state or output format)"
        return "operations only (a layer's backward has no compute_gradients mask)"


REGISTRY: dict[str, Check] = {}


LAYERS_ONLY = ("layer",)
OPERATIONS_ONLY = ("function",)


def check(
    name: str, description: str, matlab: str = "", family: str = "", kinds: tuple[str, ...] = ("layer", "function")
):
    """Register the decorated function as the check `name` for targets of the given kinds."""

    def register(fn: Callable[[Any], Outcome]) -> Callable[[Any], Outcome]:
        if name in REGISTRY:
            raise ValueError(f"check {name!r} registered twice")
        module_family = family or fn.__module__.rsplit(".", 1)[-1]
        REGISTRY[name] = Check(name, description, matlab, module_family, fn, tuple(kinds))
        return fn

    return register
