"""All checks, registered in report order: one module per family."""

from . import construction, forward, layouts, state, types, backward, operations, gradients, observations, hygiene, gpu  # noqa: F401  (registration)
from .registry import REGISTRY, Check, Incomplete, Outcome, Skip, check, failed, passed

__all__ = ["REGISTRY", "Check", "Incomplete", "Outcome", "Skip", "check", "failed", "passed"]
