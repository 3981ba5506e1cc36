"""What a failed check leaves behind to be recomputed, and how a worker writes it.

A check that a computation decided returns, with its failure, a `LazyEvidence`: a callable
that builds the `Evidence` only when a reproducer is asked for (`--repro`), so that a run
without it copies no array. The worker writes it as one `.npz` (`Evidence.write`): the arrays
under their names and the metadata as one JSON text under `meta`, readable with
`numpy.load(allow_pickle=False)` (no pickled object: loading it runs no code).
"""

from __future__ import annotations

import enum
import io
import json
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from layercheck.interrupts import reraise_if_interrupt
from layercheck.numerics.arrays import to_host

__all__ = ["EVIDENCE_FORMAT", "Evidence", "LazyEvidence", "META_KEY", "ReproKind", "evidence_writer"]

# The layout of the `.npz` the reproducer scripts read; a script refuses another.
EVIDENCE_FORMAT = 1
META_KEY = "meta"


class ReproKind(str, enum.Enum):
    """Which reproducer script recomputes the evidence (the parent picks the script by it)."""

    GRADIENT = "gradient"  # a wrong backward, against finite differences
    MUTATION = "mutation"  # a call that modifies its arguments
    REPEAT = "repeat"  # two calls with the same arguments that disagree
    TYPES = "types"  # a result of another dtype or array type
    OBSERVATIONS = "observations"  # an observation that gives alone another result than in the batch
    FINITE = "finite"  # NaN or infinite outputs on inputs in the layer's domain
    PARITY = "parity"  # the GPU's results are not the CPU's
    SIZES = "sizes"  # a result of the wrong shape
    MASKS = "masks"  # an operation's backward that does not respect compute_gradients

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Evidence:
    """The exact data of a failure: `arrays` (host or device arrays, by name) and `meta`
    (JSON data: numbers, names, the settings that decided it)."""

    kind: ReproKind
    check: str
    meta: Mapping[str, Any]
    arrays: Mapping[str, Any]

    def meta_text(self) -> str:
        """The metadata as JSON, with the format, kind and check the parent verifies."""
        data = {"format": EVIDENCE_FORMAT, "kind": self.kind.value, "check": self.check, **self.meta}
        return json.dumps(_json_data(data), allow_nan=True)

    def write(self, path: str) -> None:
        """Write the `.npz` to `path`, a new file (never through a link, never over one).

        Raises:
            OSError: it cannot be written (the parent then names no reproducer).
        """
        buffer = io.BytesIO()
        arrays: dict[str, Any] = {META_KEY: np.array(self.meta_text())}
        arrays.update((name, to_host(value)) for name, value in self.arrays.items())
        np.savez(buffer, **arrays)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags, 0o666)
        with os.fdopen(fd, "wb") as f:  # the error of a full disk shows on flush
            f.write(buffer.getbuffer())
            f.flush()


LazyEvidence = Callable[[], Evidence]


def _json_data(value: Any) -> Any:
    """Plain JSON data of NumPy scalars, tuples and enums (non-finite floats stay floats: the
    scripts read them back with `json.loads`, which takes NaN and Infinity)."""
    if isinstance(value, enum.Enum):
        return _json_data(value.value)
    if isinstance(value, Mapping):
        return {str(k): _json_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_data(v) for v in value]
    if isinstance(value, np.generic):
        return _json_data(value.item())
    if isinstance(value, complex):
        return [value.real, value.imag]
    if isinstance(value, float):
        return value if math.isfinite(value) else float(value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


def evidence_writer(folder: str, scripts: Mapping[str, ReproKind]) -> Callable[[str, LazyEvidence], None]:
    """The worker's `on_evidence`: writes `<folder>/<check>.npz` for the checks with a script
    (`scripts`: `layercheck.checks.SCRIPTS`). Nothing it fails at changes a verdict: the parent
    then finds no file and names no reproducer."""

    def write(check: str, evidence: LazyEvidence) -> None:
        if check not in scripts:
            return
        try:
            built = evidence()
            if built.kind is scripts[check]:
                built.write(os.path.join(folder, f"{check}.npz"))
        except BaseException as exc:  # the layer's code may run (a property of an array it returned)
            reraise_if_interrupt(exc)

    return write
