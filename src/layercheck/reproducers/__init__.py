"""Reproducers (`layercheck run --repro DIR`): for a failed check that a computation decided,
a script of plain Python and NumPy and the data it recomputes the failure from.

- `evidence`: what a check leaves behind when it fails (typed, in the worker), written there
  as an `.npz` into a folder the parent gave the worker: arrays never travel through the
  result pipe.
- `gradient`: the evidence of `gradients_are_numerically_correct`.
- `gradient_script`: the reproducer's code (no import of layercheck), which the parent copies
  under a header naming the target.
- `files`: the parent's side: DIR validated up front, a staging folder per target, safe and
  unique file names, the `.npz` a worker left verified before it is kept and named in the
  reports.
"""

from __future__ import annotations

from layercheck.reproducers.evidence import EVIDENCE_FORMAT, Evidence, LazyEvidence, ReproKind
from layercheck.results import repro_command  # where the reports, below this package, find it

__all__ = ["EVIDENCE_FORMAT", "Evidence", "LazyEvidence", "ReproKind", "repro_command"]
