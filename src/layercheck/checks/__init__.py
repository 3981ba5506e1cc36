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

__all__ = ["REGISTRY", "SCRIPTS", "Check", "Incomplete", "Outcome", "Skip", "check", "failed", "passed"]

SCRIPTS: Mapping[str, ReproKind] = MappingProxyType({c.name: c.repro for c in REGISTRY.values() if c.repro is not None})
"""The checks that have a reproducer, in report order, and the evidence each one's script reads
(the checks' own declarations, `check(repro=...)`)."""
