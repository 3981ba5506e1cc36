"""What a batch run records about itself in its JSON report (`"run"`), so that the reports of
the shards of one run can be merged (`layercheck merge`) into the report that the run
unsharded would have given, and shards of different runs refused.

- `shard`: [K, N] of `--shard K/N`, or null;
- `planned`: how many targets the whole plan holds (every shard's targets, before `--shard`);
  each target's report records its place in that plan (`"position"`);
- `plan`: the label of each target of the whole plan, in its order, as the reports name it:
  what is at each position, and (`shard_of`) which shard checks it, so that `merge` refuses
  a target at a position the plan gives another, or in a shard whose share it is not;
- `settings`: a fingerprint of what decides the verdicts: every planned target's label, kind,
  layouts, constructor arguments and options (dtypes, seed, tolerances, checks, timeout...).
  Absolute paths are left out: shards run in CI clones in different folders still fit;
- `versions`: Python, NumPy, CuPy (null without it) and layercheck;
- `strict`: whether `--strict` made incomplete checks fail the run;
- `baseline`: a fingerprint of the `--baseline` file's entries (`baseline_digest`), or null;
- `baseline_entries`: those entries, keyed as the file keys them (`{target: [check, ...]}`),
  or null: `merge` refuses a failure marked `known` that no entry accepts;
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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from layercheck.version import __version__

__all__ = [
    "RunInfo",
    "RunInfoError",
    "Versions",
    "baseline_digest",
    "fingerprint",
    "read_run",
    "recorded_path",
    "shard_of",
]

# The distributions CuPy comes in (`pip install cupy-cuda12x`); none installed: no CuPy.
_CUPY_DISTRIBUTIONS = ("cupy", "cupy-cuda11x", "cupy-cuda12x", "cupy-cuda13x")
_DIGEST_CHARS = 64  # SHA-256, in hex
_MAX_PATH = 4_096  # PATH_MAX: a longer text is not a path a run recorded
# Files a run records: each target's own, and what they import (a few thousand for a
# framework); past this a record is not one layercheck wrote.
_MAX_SOURCES = 1_000_000
_MAX_TARGETS = 1_000_000  # planned targets, and a baseline's entries
# Characters of a label as a report names it: NAME_LIMIT (500, `safetext`), each at most 6
# once what UTF-8 cannot encode is spelled out (`\udc80`); and of a check's name.
_MAX_NAME = 4_096
# The keys a record has, each added in a later version with what it holds (for the message
# that names a report of an older layercheck).
_KEYS = ("shard", "planned", "settings", "versions", "strict", "baseline")
_ADDED = {
    "sources": "sources (the files it checked, with their digests)",
    "plan": "plan (the label of each target it planned)",
    "baseline_entries": "baseline entries (the failures its --baseline accepts)",
}


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
    plan: tuple[str, ...] = ()  # each planned target's label, by position
    baseline_entries: tuple[tuple[str, str], ...] | None = None  # (target, check), sorted; None: no --baseline

    def to_dict(self) -> dict[str, Any]:
        entries: dict[str, list[str]] | None = None
        if self.baseline_entries is not None:
            entries = {}
            for target, check in self.baseline_entries:
                entries.setdefault(target, []).append(check)
        return {
            "shard": None if self.shard is None else list(self.shard),
            "planned": self.planned,
            "settings": self.settings,
            "versions": self.versions.to_dict(),
            "strict": self.strict,
            "baseline": self.baseline,
            "sources": dict(self.sources),
            "plan": list(self.plan),
            "baseline_entries": entries,
        }


def read_run(data: Any) -> RunInfo:
    """A `"run"` record read back from a report file.

    Raises:
        RunInfoError: what does not fit, in one line.
    """
    keys = {*_KEYS, *_ADDED}
    if type(data) is dict and set(_KEYS) <= set(data) < keys:
        missing = next(key for key in _ADDED if key not in data)
        raise RunInfoError(
            f"its run record holds no {_ADDED[missing]}: a report of an older layercheck; run the shards again "
            "with this one"
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
    plan = data["plan"]
    if type(plan) is not list or len(plan) != planned or not all(_is_name(label) for label in plan):
        raise RunInfoError(f"its run's plan is not the label of each of its {planned} planned targets")
    entries = _baseline_entries(data["baseline_entries"])
    if (entries is None) != (data["baseline"] is None) or (
        entries is not None and baseline_digest(entries) != data["baseline"]
    ):
        raise RunInfoError("its run's baseline entries are not those of its baseline's fingerprint")
    return RunInfo(
        None if shard is None else (shard[0], shard[1]),
        planned,
        settings,
        Versions(**versions),
        data["strict"],
        data["baseline"],
        _sources(data["sources"]),
        tuple(plan),
        entries,
    )


def _is_name(label: Any) -> bool:
    return type(label) is str and 0 < len(label) <= _MAX_NAME


def _baseline_entries(data: Any) -> tuple[tuple[str, str], ...] | None:
    """A run record's `baseline_entries` read back: null, or a mapping of target to the names
    of its checks."""
    if data is None:
        return None
    if type(data) is not dict or len(data) > _MAX_TARGETS:
        raise RunInfoError("its run's baseline entries are not a mapping of target to check names")
    entries: set[tuple[str, str]] = set()
    for target, checks in data.items():
        if not target or type(checks) is not list or not all(_is_name(check) for check in checks):
            raise RunInfoError(f"its run's baseline entries give {target[:200]!r} {str(checks)[:80]}, not check names")
        entries.update((target, check) for check in checks)
    return tuple(sorted(entries))


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


def shard_of(plan: Sequence[str], n: int) -> list[int]:
    """The shard (1 to n) of `--shard K/N` that checks each target of a plan of these labels:
    dealt round robin over the labels sorted (a label twice by its position), so that each
    target is in exactly one shard, whichever shard plans it."""
    shards = [0] * len(plan)
    for rank, position in enumerate(sorted(range(len(plan)), key=lambda i: (plan[i], i))):
        shards[position] = rank % n + 1
    return shards


def baseline_digest(entries: Iterable[tuple[str, str]]) -> str:
    """The fingerprint of a baseline's (target, check) entries (`RunInfo.baseline`): shards
    run against different baselines do not merge."""
    return fingerprint([[target, check] for target, check in sorted(entries)])


def fingerprint(data: Any) -> str:
    """A short digest of JSON-like data (sorted keys): equal data, equal fingerprints."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()[:16]
