"""What a batch run records about itself in its JSON report (`"run"`), so that the reports of
the shards of one run can be merged (`layercheck merge`) into the report that the run
unsharded would have given, and shards of different runs refused.

- `shard`: [K, N] of `--shard K/N`, or null;
- `planned`: how many targets the whole plan holds (every shard's targets, before `--shard`);
  each target's report records its place in that plan (`"position"`);
- `settings`: a fingerprint of what decides the verdicts: every planned target's label, kind,
  layouts, constructor arguments and options (dtypes, seed, tolerances, checks, timeout...).
  Absolute paths are left out: shards run in CI clones in different folders still fit;
- `versions`: Python, NumPy, CuPy (null without it) and layercheck;
- `strict`: whether `--strict` made incomplete checks fail the run;
- `baseline`: a fingerprint of the `--baseline` file's entries, or null.

The fields are an additive part of the JSON schema of DESIGN.md section 6.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import platform
from dataclasses import dataclass
from typing import Any

import numpy as np

from layercheck.version import __version__

__all__ = ["RunInfo", "RunInfoError", "Versions", "fingerprint", "read_run"]

# The distributions CuPy comes in (`pip install cupy-cuda12x`); none installed: no CuPy.
_CUPY_DISTRIBUTIONS = ("cupy", "cupy-cuda11x", "cupy-cuda12x", "cupy-cuda13x")


class RunInfoError(ValueError):
    """A `"run"` record that is not one layercheck wrote: `str()` says what, in one line."""


@dataclass(frozen=True)
class Versions:
    python: str
    numpy: str
    cupy: str | None
    layercheck: str

    @classmethod
    def current(cls) -> Versions:
        """This process's versions. CuPy's is read from its installed distribution, not by
        importing it (an import costs seconds and may touch a GPU driver)."""
        cupy = None
        for name in _CUPY_DISTRIBUTIONS:
            try:
                cupy = importlib.metadata.version(name)
                break
            except importlib.metadata.PackageNotFoundError:
                continue
        return cls(platform.python_version(), str(np.__version__), cupy, __version__)

    def to_dict(self) -> dict[str, str | None]:
        return {"python": self.python, "numpy": self.numpy, "cupy": self.cupy, "layercheck": self.layercheck}

    def differences(self, other: Versions) -> list[str]:
        """`numpy 2.1.0 and 1.26.4`, for each version that differs."""
        mine, theirs = self.to_dict(), other.to_dict()
        return [
            f"{name} {mine[name] or 'none'} and {theirs[name] or 'none'}" for name in mine if mine[name] != theirs[name]
        ]


@dataclass(frozen=True)
class RunInfo:
    shard: tuple[int, int] | None
    planned: int
    settings: str
    versions: Versions
    strict: bool = False
    baseline: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "shard": None if self.shard is None else list(self.shard),
            "planned": self.planned,
            "settings": self.settings,
            "versions": self.versions.to_dict(),
            "strict": self.strict,
            "baseline": self.baseline,
        }


def read_run(data: Any) -> RunInfo:
    """A `"run"` record read back from a report file.

    Raises:
        RunInfoError: what does not fit, in one line.
    """
    keys = {"shard", "planned", "settings", "versions", "strict", "baseline"}
    if type(data) is not dict or set(data) != keys:
        raise RunInfoError(f"its run record is not one layercheck writes (it needs the keys {', '.join(sorted(keys))})")
    shard, planned, settings, versions = data["shard"], data["planned"], data["settings"], data["versions"]
    if shard is not None and not (
        type(shard) is list and len(shard) == 2 and all(type(n) is int for n in shard) and 1 <= shard[0] <= shard[1]
    ):
        raise RunInfoError("its run's shard is not [K, N] with 1 <= K <= N")
    if type(planned) is not int or planned < 0:
        raise RunInfoError("its run's planned is not a whole number >= 0")
    if type(settings) is not str or type(data["strict"]) is not bool:
        raise RunInfoError("its run's settings or strict are not what layercheck writes")
    if data["baseline"] is not None and type(data["baseline"]) is not str:
        raise RunInfoError("its run's baseline is not a fingerprint")
    names = ("python", "numpy", "cupy", "layercheck")
    if (
        type(versions) is not dict
        or set(versions) != set(names)
        or any(versions[n] is not None and type(versions[n]) is not str for n in names)
    ):
        raise RunInfoError("its run's versions are not what layercheck writes")
    return RunInfo(
        None if shard is None else (shard[0], shard[1]),
        planned,
        settings,
        Versions(**versions),
        data["strict"],
        data["baseline"],
    )


def fingerprint(data: Any) -> str:
    """A short digest of JSON-like data (sorted keys): equal data, equal fingerprints."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()[:16]
