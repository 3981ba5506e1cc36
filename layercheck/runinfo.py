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
- `baseline`: a fingerprint of the `--baseline` file's entries, or null;
- `sources`: what the run checked, each file with the SHA-256 (hex) of its content, by path
  (`recorded_path`: relative to the working folder where the file is below it, so that CI
  clones in different folders still fit, else absolute): the file of every planned target
  (the whole plan's, not only the shard's: every shard discovers the whole plan, so that merge
  sees one shard run an old file where another ran the new one), the config file, and the
  modules the targets imported (at discovery, for every planned target; while checking, for
  the shard's own). An empty digest: the file could not be read, or was read with two
  contents during the run. `layercheck merge` refuses shards that recorded different digests
  for one file (`running.sources.SourceRecord` makes the record).

The fields are an additive part of the JSON schema of DESIGN.md section 6.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
from dataclasses import dataclass
from typing import Any

import numpy as np

from layercheck.version import __version__

__all__ = ["RunInfo", "RunInfoError", "Versions", "fingerprint", "read_run", "recorded_path"]

# The distributions CuPy comes in (`pip install cupy-cuda12x`); none installed: no CuPy.
_CUPY_DISTRIBUTIONS = ("cupy", "cupy-cuda11x", "cupy-cuda12x", "cupy-cuda13x")
_DIGEST_CHARS = 64  # SHA-256, in hex
_MAX_PATH = 4_096  # PATH_MAX: a longer text is not a path a run recorded
# Files a run records: each target's own, and what they import (a few thousand for a
# framework); past this a record is not one layercheck wrote.
_MAX_SOURCES = 1_000_000


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
    sources: tuple[tuple[str, str], ...] = ()  # (recorded path, SHA-256 hex or ""), sorted by path

    def to_dict(self) -> dict[str, Any]:
        return {
            "shard": None if self.shard is None else list(self.shard),
            "planned": self.planned,
            "settings": self.settings,
            "versions": self.versions.to_dict(),
            "strict": self.strict,
            "baseline": self.baseline,
            "sources": dict(self.sources),
        }


def read_run(data: Any) -> RunInfo:
    """A `"run"` record read back from a report file.

    Raises:
        RunInfoError: what does not fit, in one line.
    """
    keys = {"shard", "planned", "settings", "versions", "strict", "baseline", "sources"}
    if type(data) is dict and set(data) == keys - {"sources"}:
        raise RunInfoError(
            "its run record holds no sources (the files it checked, with their digests): a report of an "
            "older layercheck; run the shards again with this one"
        )
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
        _sources(data["sources"]),
    )


def _sources(data: Any) -> tuple[tuple[str, str], ...]:
    """A run record's `sources` read back: a mapping of paths to SHA-256 digests (or "")."""
    if type(data) is not dict or len(data) > _MAX_SOURCES:
        raise RunInfoError("its run's sources are not a mapping of file to SHA-256, as layercheck writes")
    for path, digest in data.items():
        if not path or len(path) > _MAX_PATH or "\0" in path:
            raise RunInfoError(f"its run's sources name {path[:80]!r}, not a path")
        if type(digest) is not str or (digest and (len(digest) != _DIGEST_CHARS or digest.strip("0123456789abcdef"))):
            raise RunInfoError(f"its run's sources give {path[:200]!r} the digest {str(digest)[:80]!r}, not a SHA-256")
    return tuple(sorted(data.items()))


def recorded_path(path: str, root: str | None = None) -> str:
    """`path` as a report records it: its real path relative to `root` (the working folder's
    real path, by default) with `/` between names where it is below it, so that it reads
    alike in CI clones in different folders; else its real path, absolute."""
    real = os.path.realpath(path)
    if root is None:
        try:
            root = os.path.realpath(os.getcwd())
        except OSError:  # the working folder was removed
            return real
    if real.startswith(root.rstrip(os.sep) + os.sep):
        return os.path.relpath(real, root).replace(os.sep, "/")
    return real


def fingerprint(data: Any) -> str:
    """A short digest of JSON-like data (sorted keys): equal data, equal fingerprints."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()[:16]
