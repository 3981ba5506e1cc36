"""All checks, registered in report order: one module per family."""

from collections.abc import Mapping
from types import MappingProxyType

from layercheck.checks import (  # noqa: F401  (registration)
    backward,
    construction,
    forward,
    gpu,
    gradients,
    hygiene,
    layouts,
    observations,
    operations,
    state,
    types,
)
from layercheck.checks.registry import REGISTRY, Check, Incomplete, Outcome, Skip, check, failed, passed
from layercheck.reproducers.evidence import ReproKind

__all__ = ["FAMILIES", "REGISTRY", "SCRIPTS", "Check", "Incomplete", "Outcome", "Skip", "check", "failed", "passed"]

# The report order of the families (each family's checks in the order its module declares
# them): said here, since the order the modules are first imported in follows their imports
# of one another, which is no order for a report.
FAMILIES = (
    "backward",
    "construction",
    "forward",
    "types",
    "gpu",
    "gradients",
    "hygiene",
    "layouts",
    "observations",
    "operations",
    "state",
)
_declared = list(REGISTRY.values())
REGISTRY.clear()
REGISTRY.update((c.name, c) for c in sorted(_declared, key=lambda c: FAMILIES.index(c.family)))
del _declared

SCRIPTS: Mapping[str, ReproKind] = MappingProxyType({c.name: c.repro for c in REGISTRY.values() if c.repro is not None})
"""The checks that have a reproducer, in report order, and the evidence each one's script reads
(the checks' own declarations, `check(repro=...)`)."""
