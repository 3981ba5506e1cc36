"""All checks, registered in report order: one module per family."""

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

__all__ = ["REGISTRY", "Check", "Incomplete", "Outcome", "Skip", "check", "failed", "passed"]
