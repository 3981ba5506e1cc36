"""The result cache (DESIGN.md section 9): a target whose inputs did not change is not checked again.

An entry is found by its key, the SHA-256 of (`cache_key`): what is checked and how (the
target, its layouts, arguments and every merged setting, the config file's text), and the
environment (the versions of Python, NumPy and layercheck, a digest of layercheck's own
source, so that an edit of a development checkout counts, and, unless the device is `cpu`,
CuPy's version and whether a GPU is usable: that decides which checks run). The entry holds
the report and its sources, each file the verdict depends on with its SHA-256
(`running.sources`): a lookup hashes every one of them again and is a hit only when all are
unchanged. Hashing, not the files' sizes and times: an edit within the same second that keeps
the size is an edit (the stale-`.pyc` defect that `contract.fresh` fixes).

Only complete verdicts are stored (`cacheable`). A target that could not be checked is not:
a timeout, running out of memory, a crash, an interruption, a worker that could not start or
whose report was malformed, an internal error, a layer that called sys.exit, all say more about
that run (the machine's load and memory, a signal, a flaky crash) than about the layer's
source, and an import error is cheap to find again. A layer that replaced functions layercheck
relies on (the integrity check) is not stored either: its verdicts were undone, not decided.

Where: `.layercheck_cache/` of the working folder, or `$LAYERCHECK_CACHE_DIR`, or
`--cache-dir`. The folder is made at the first store, with a `.gitignore` of `*` and a
`CACHEDIR.TAG` (as pytest's and ruff's are). Each entry is written to a temporary file beside
it and renamed into place, so that processes that store at once (`--jobs`, xdist workers, two CI
jobs on one checkout) never leave half an entry; a reader takes a missing, truncated, foreign
or oversized entry for a miss, never for a pass. A folder that cannot be written (a read-only
checkout) is said once, and the run goes on uncached.

A cached report keeps the durations of the run that checked it (they say what checking it
costs; the summary's elapsed time is this run's) and says `cached` in every report.

For an entry point (the batch runner, the pytest plugin):

    cache = ResultCache(cache_folder(no_cache, cache_dir))      # once per run
    key = cache_key({...what is checked and how...}, device, config_path)
    report = cache.lookup(key) if key else None                 # a TargetReport, cached=True
    # else check it in a worker that records its sources (`running.sources.imported_sources`),
    # read them back with `split_sources`, then:
    cache.store(key, report, sources)                           # stores complete verdicts only
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import stat
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from layercheck.errors import UsageError
from layercheck.results import MalformedReport, Status, TargetReport, plain
from layercheck.running.integrity import INTEGRITY_CHECK
from layercheck.running.sources import MAX_SOURCES, Sources, digest_file
from layercheck.safetext import exception_text, visible
from layercheck.version import __version__

__all__ = ["CACHE_DIR", "CACHE_DIR_ENV", "ResultCache", "cache_folder", "cache_key", "cacheable", "default_cache_dir"]

CACHE_DIR = ".layercheck_cache"
CACHE_DIR_ENV = "LAYERCHECK_CACHE_DIR"
_FORMAT = 1  # of an entry; in the key too, so that another format is a miss, never misread
MAX_ENTRY_BYTES = 32 * 2**20  # reports are bounded (messages, tracebacks, details): far below
_RESULTS = "results"
_GITIGNORE = "# Created by layercheck: the result cache, never committed.\n*\n"
# https://bford.info/cachedir/: backup tools skip a folder that holds this file.
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by layercheck.\n"
    "# For information about cache directory tags, see https://bford.info/cachedir/\n"
)
# Environment variables that change what a layer computes (TF32 matmuls on the GPU, the
# number of BLAS threads: the order of a sum), so that a verdict near its tolerance may flip.
_NUMERIC_ENV = (
    "CUPY_TF32",
    "CUPY_ACCELERATORS",
    "CUBLAS_WORKSPACE_CONFIG",
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NPY_DISABLE_CPU_FEATURES",
)


def default_cache_dir() -> Path:
    """`$LAYERCHECK_CACHE_DIR` when it is set, else `.layercheck_cache` of the working folder."""
    return Path(os.environ.get(CACHE_DIR_ENV) or CACHE_DIR)


def cache_folder(no_cache: bool = False, cache_dir: str | None = None) -> Path | None:
    """The folder `--no-cache` and `--cache-dir DIR` give (None: no cache; `--no-cache` wins).

    Raises:
        UsageError: an empty DIR (it would put the entries among the user's files).
    """
    if no_cache:
        return None
    if cache_dir is None:
        return default_cache_dir()
    if not cache_dir.strip():
        raise UsageError("--cache-dir: give a folder (it is made at the first run that stores a result)")
    return Path(cache_dir)


def cacheable(report: TargetReport) -> bool:
    """Whether `report` is a complete verdict that the same sources would give again (see the
    module's docstring for what is not)."""
    return (
        report.error is None
        and report.cause is None
        and report.status in (Status.PASSED, Status.FAILED)
        and not report.cached
        and all(check.name != INTEGRITY_CHECK for check in report.checks)
    )


# -- the key -------------------------------------------------------------------------------


def cache_key(target: Mapping[str, Any], device: str, config: str | os.PathLike[str] | None = None) -> str | None:
    """The key of a target's entry: `target` (JSON-like data of what is checked and how: its
    label, class, layouts, arguments, settings) with the environment (see the module's
    docstring; `device`: the merged setting), and the config file's text where one is used.
    None when the config file cannot be read now: such a run is not cached."""
    material: dict[str, Any] = {
        "format": _FORMAT,
        "target": plain(target),
        "environment": _environment(device != "cpu"),
        "config": None,
    }
    if config is not None:
        digest = digest_file(os.fspath(config))
        if digest is None:
            return None
        material["config"] = digest
    text = json.dumps(material, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode("ascii")).hexdigest()  # json.dumps escapes the rest


@functools.lru_cache(maxsize=2)
def _environment(gpu: bool) -> dict[str, Any]:
    """What a verdict depends on besides the target: once per process."""
    environment: dict[str, Any] = {
        "python": sys.version,
        "implementation": sys.implementation.cache_tag,
        "machine": platform.machine(),
        "numpy": np.__version__,
        "layercheck": __version__,
        "layercheck_source": _layercheck_digest(),
        "variables": {name: os.environ.get(name) for name in _NUMERIC_ENV},
    }
    if gpu:
        environment["gpu"] = _gpu()
    return environment


def _gpu() -> dict[str, Any]:
    """CuPy's version and whether a GPU is usable (then its name): what a worker finds decides
    which GPU checks run, or are skipped "no GPU available". `gpu_status` imports CuPy and
    probes the device, once per process; it is asked only where a target's device is not
    `cpu`, and the workers ask it anyway."""
    from layercheck.numerics.devices import gpu_status  # noqa: PLC0415 - imports CuPy

    status = gpu_status()
    version = getattr(sys.modules.get("cupy"), "__version__", None)  # the parent runs no layer
    return {"usable": status.usable, "reason": status.reason, "cupy": str(version)}


@functools.lru_cache(maxsize=1)
def _layercheck_digest() -> str:
    """A digest of layercheck's package: a development checkout whose source changed checks
    again, with the same version number."""
    return _tree_digest(Path(__file__).resolve().parents[1])


def _tree_digest(package: Path) -> str:
    """SHA-256 over the files below `package` (names and contents), bytecode left out."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        if "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo") or not path.is_file():
            continue
        digest.update(path.relative_to(package).as_posix().encode("utf-8", "surrogateescape") + b"\0")
        digest.update((digest_file(str(path)) or "unreadable").encode() + b"\0")
    return digest.hexdigest()


# -- the store -----------------------------------------------------------------------------


def _warn_on_stderr(message: str) -> None:
    print(f"layercheck: warning: {message}", file=sys.stderr, flush=True)


class ResultCache:
    """The entries under one folder. `lookup` and `store` never raise for what is on disk."""

    def __init__(self, folder: str | os.PathLike[str], warn: Callable[[str], None] = _warn_on_stderr):
        self.folder = Path(folder)
        self._warn = warn
        self._writable: bool | None = None  # None: not tried yet
        self.stored = 0  # entries written by this process (a test reads it)

    def _entry(self, key: str) -> Path:
        return self.folder / _RESULTS / f"{key}.json"

    def lookup(self, key: str) -> TargetReport | None:
        """The report stored under `key`, marked cached, when every source it depends on is
        unchanged; else None (no entry, an unreadable or foreign one, a changed source)."""
        entry = self._read(self._entry(key))
        if entry is None or entry.get("format") != _FORMAT or entry.get("key") != key:
            return None
        sources = _sources(entry.get("sources"))
        if sources is None or any(digest_file(path) != digest for path, digest in sources):
            return None
        try:
            report = TargetReport.from_dict(entry.get("report"))
        except MalformedReport:
            return None
        if not cacheable(report):
            return None  # not what `store` writes: another program's, or an older layercheck's
        report.cached = True
        return report

    @staticmethod
    def _read(path: Path) -> dict[str, Any] | None:
        try:
            info = path.stat()
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES:
                return None
            with open(path, "rb") as file:
                text = file.read(MAX_ENTRY_BYTES + 1)
            data = json.loads(text)
        except (OSError, ValueError, RecursionError):  # ValueError: not JSON, not UTF-8
            return None
        return data if type(data) is dict else None

    def store(self, key: str, report: TargetReport, sources: Sources) -> bool:
        """Store `report` under `key` with its `sources` (each file with the digest the worker
        saw), when it is `cacheable` and every source still has that digest: a file edited
        while the checks ran must not have the verdict of its old text stored under its new
        one. Whether it was stored."""
        if self._writable is False or not cacheable(report) or not sources or len(sources) > MAX_SOURCES:
            return False
        if any(not digest or digest_file(path) != digest for path, digest in sources):
            return False
        data = {
            "format": _FORMAT,
            "key": key,
            "sources": [list(source) for source in sources],
            "report": plain(report.to_dict()),
        }
        try:
            text = json.dumps(data, allow_nan=False, separators=(",", ":"))
        except ValueError:  # a non-finite number `plain` let through: not worth a crash
            return False
        if len(text) > MAX_ENTRY_BYTES:
            return False
        try:
            self._prepare()
            _write_atomic(self._entry(key), text)
        except OSError as exc:
            self._unwritable(exc)
            return False
        self.stored += 1
        return True

    def _prepare(self) -> None:
        """The folder, with its `.gitignore` and `CACHEDIR.TAG`, once per process."""
        if self._writable:
            return
        (self.folder / _RESULTS).mkdir(parents=True, exist_ok=True)
        for name, text in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
            if not (self.folder / name).exists():
                _write_atomic(self.folder / name, text)
        self._writable = True

    def _unwritable(self, exc: OSError) -> None:
        """Said once; nothing more is stored this run, and the run goes on."""
        first = self._writable is not False
        self._writable = False
        if first:
            where = visible(os.fspath(self.folder))
            self._warn(f"cannot write the result cache {where} ({exception_text(exc)}); results are not cached")


def _sources(value: Any) -> Sources | None:
    """An entry's sources read back, or None where they are not what `store` writes."""
    if type(value) is not list or not value or len(value) > MAX_SOURCES:
        return None
    sources = []
    for item in value:
        if type(item) is not list or len(item) != 2 or any(type(part) is not str or not part for part in item):
            return None
        sources.append((item[0], item[1]))
    return tuple(sources)


def _write_atomic(path: Path, text: str) -> None:
    """`text` to `path` whole or not at all: written to a temporary file in the same folder,
    then renamed over it (atomic on POSIX and Windows). The temporary file goes on failure."""
    fd, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(temporary, 0o644 & ~_umask())  # mkstemp makes 0600: others may share a CI cache
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


@functools.lru_cache(maxsize=1)
def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
