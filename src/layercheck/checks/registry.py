"""The check registry: every check has a stable name, a one-line description and its MATLAB
counterpart. A check is a function of a `CheckContext` (checks/context.py) that returns an
`Outcome` or raises `Skip`/`Incomplete`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from layercheck.checks.context import CheckContext
from layercheck.checks.stops import Incomplete, Skip
from layercheck.reproducers.evidence import LazyEvidence, ReproKind
from layercheck.results import Call, Cause, Kind, Status

__all__ = [
    "Check",
    "CheckFunction",
    "Incomplete",
    "LAYERS_ONLY",
    "OPERATIONS_ONLY",
    "Outcome",
    "REGISTRY",
    "Skip",
    "check",
    "failed",
    "passed",
]


@dataclass(frozen=True)
class Outcome:
    """What a check returns: a status, a pass's message, what it found (`details`) and the
    typed fields of `CheckResult` (see there). A failure carries no message: its details hold
    it typed, and `CheckResult` renders its message from them."""

    status: Status
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    explanation: tuple[str, ...] = ()
    traceback: str = ""
    cause: Cause | None = None
    # What recomputes a failure that a computation decided (`--repro`), built only when asked.
    evidence: LazyEvidence | None = None


def passed(message: str = "", *, explanation: Sequence[str] = (), **details: Any) -> Outcome:
    return Outcome(Status.PASSED, message, details, explanation=tuple(explanation))


def failed(
    *,
    explanation: Sequence[str] = (),
    traceback: str = "",
    cause: Cause | None = None,
    evidence: LazyEvidence | None = None,
    **details: Any,
) -> Outcome:
    """A failure: `details` hold what was found, typed (a finding, a problem, a mismatch), from
    which its message is rendered where the result is made (`CheckResult`), never written here."""
    return Outcome(Status.FAILED, "", details, tuple(explanation), traceback, cause, evidence)


CheckFunction = Callable[[CheckContext], Outcome]
"""A check: reads the target under test through its `CheckContext`, returns an `Outcome`
(or raises `Skip`/`Incomplete`)."""


@dataclass(frozen=True)
class Check:
    name: str
    description: str
    matlab: str
    family: str
    run: CheckFunction
    # The user's methods whose calls the check judges, itself or through the session's shared
    # steps (every check also constructs and initializes the layers it calls): `predict` is an
    # operation's forward, `forward` a layer's predict where it defines no forward. A check
    # left undecided by a failed call names one of these (`Blocked`).
    calls: tuple[Call, ...]
    kinds: tuple[Kind, ...] = (Kind.LAYER, Kind.FUNCTION)
    # The reproducer `--repro` writes for a failure: the script that reads this kind of
    # evidence. None: the check has none (its traceback, or the signature, is the reproduction).
    repro: ReproKind | None = None

    def applies_to(self, kind: Kind) -> str | None:
        """None when the check applies to targets of `kind`, else why it is skipped."""
        if kind in self.kinds:
            return None
        if kind == Kind.FUNCTION:
            return "layers only (an operation has no predict, initialize, state or output format)"
        return "operations only (a layer's backward has no compute_gradients mask)"


REGISTRY: dict[str, Check] = {}


LAYERS_ONLY = (Kind.LAYER,)
OPERATIONS_ONLY = (Kind.FUNCTION,)


def check(
    name: str,
    description: str,
    matlab: str = "",
    family: str = "",
    kinds: tuple[Kind, ...] = (Kind.LAYER, Kind.FUNCTION),
    repro: ReproKind | None = None,
    *,
    calls: Sequence[Call],
) -> Callable[[CheckFunction], CheckFunction]:
    """Register the decorated function as the check `name` for targets of the given kinds,
    judging the calls of the user's methods `calls` (`Check.calls`), with the reproducer a
    failure of it gets (`repro`): the one declaration of a check, from which every table of
    checks is made (`layercheck.checks.SCRIPTS`, `layercheck list-checks`...)."""

    def register(fn: CheckFunction) -> CheckFunction:
        if name in REGISTRY:
            raise ValueError(f"check {name!r} registered twice")
        if not calls or len(set(calls)) != len(calls):
            raise ValueError(f"check {name!r} declares the calls {list(calls)}: each call it judges, once")
        module_family = family or fn.__module__.rsplit(".", 1)[-1]
        REGISTRY[name] = Check(name, description, matlab, module_family, fn, tuple(calls), tuple(kinds), repro)
        return fn

    return register
