"""The result cache (DESIGN.md sections 7 and 9): a target whose inputs did not change is not
checked again.

An entry is found by its key, the SHA-256 of (`cache_key`): what is checked and how (the
target, its layouts, arguments and every merged setting, the config file's text), the working
folder (a layer's relative paths, `os.getcwd()` and the last entry of its import path depend
on it), and the environment (the versions of Python, NumPy and layercheck, a digest of
layercheck's own source, so that an edit of a development checkout counts, the variables that
change a BLAS's or CuPy's arithmetic, and, unless the device is `cpu`, CuPy's version and
whether a GPU is usable: that decides which checks run), and what decides which file an import
finds (`_imports`: the workers' import path, `sys.prefix` and the interpreter, the import
system's finders: another PYTHONPATH, or another virtual environment sharing the working
folder's cache, is another key). The entry holds the report and the target's inputs as its
worker recorded them (`running.sources.Inputs`):

- every file the verdict depends on, with its state: the source of the layer's module and of
  each module it imported (`running.sources.imported_sources`), each other file its side of the
  worker opened for reading or looked at (`running.reads`: a data file beside it, a helper
  loaded by path, a file whose absence it tested, the newer of two checkpoints), and each path
  at which the import system would have found a module before the file it imported (a
  `helper.py` made beside the layer would be imported instead). The state is the SHA-256 of the
  file's bytes, or that it is absent, or a folder, followed by what each look that did not open
  it returned (`running.sources.Look`: its type, permission bits, owner, inode, size and
  modification time; what the path itself is, a link or not; a link's text)
  (`running.sources.file_state`);
- every environment variable it read, with the SHA-256 of its value, or that it was unset.

A lookup takes each state again (hashing every file, looking at each again, reading each
variable in this process) and is a hit only when all are unchanged. Hashing, not the files'
sizes and times: an edit within the same second that keeps the size is an edit (the stale-`.pyc`
defect that `contract.fresh` fixes); a file's times are keyed only where the layer looked at them
(`os.path.getmtime`): a checkout's new times on a file it only opens leave its entry served.

Only complete verdicts are stored (`cacheable`). A target that could not be checked is not:
a timeout, running out of memory, a crash, an interruption, a worker that could not start or
whose report was malformed, an internal error, a layer that called sys.exit, all say more about
that run (the machine's load and memory, a signal, a flaky crash) than about the layer's
source, and an import error is cheap to find again. A layer that replaced functions layercheck
relies on (the integrity check) is not stored either: its verdicts were undone, not decided.
Nor is a verdict whose inputs cannot be keyed (`running.sources.Uncacheable`): a layer that
lists a folder, starts a process, uses the network or native code through ctypes, reads the
whole environment, a device, a pipe, a file of /proc, a file past the size limit, one that
changed while it ran (it wrote it, say), or one it opens by name in a folder it holds open
(`dir_fd`). What the worker cannot account for is checked every time, never served stale.

Where: `.layercheck_cache/` of the working folder, or `$LAYERCHECK_CACHE_DIR`, or
`--cache-dir`. Entries go to its `results/` folder, made at the first store. A folder layercheck
makes gets a `.gitignore` of `*` and a `CACHEDIR.TAG` (as pytest's and ruff's do); one that was
there already is the user's, and gets none: `--cache-dir` naming a folder of theirs must not
hide their new files from git or from their backups. There the markers go into `results/`,
which layercheck makes. Each entry is written to a temporary file beside it and renamed into
place, so that processes that store at once (`--jobs`, xdist workers, two CI jobs on one
checkout) never leave half an entry; a reader takes a missing, truncated, foreign, older-format
or oversized entry for a miss, never for a pass. A folder that cannot be written (a read-only
checkout) is said once, and the run goes on uncached.

A cached report keeps the durations of the run that checked it (they say what checking it
costs; the summary's elapsed time is this run's) and says `cached` in every report.

For an entry point (the batch runner, the pytest plugin):

    cache = ResultCache(cache_folder(no_cache, cache_dir))      # once per run
    key = cache_key({...what is checked and how...}, device, config_path)
    report = cache.lookup(key) if key else None                 # a TargetReport, cached=True
    # else check it in a worker that records its inputs (`running.reads.Reads`, with
    # `running.sources.imported_sources`), read them back with `split_inputs`, then:
    cache.store(key, report, inputs)                            # stores complete verdicts only
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
from layercheck.results import MalformedReport, Origin, Status, TargetReport, plain
from layercheck.running.sources import Inputs, digest_file, read_inputs
from layercheck.safetext import exception_text, visible
from layercheck.sandbox import INTEGRITY_CHECK, worker_sys_path
from layercheck.version import __version__

__all__ = ["CACHE_DIR", "CACHE_DIR_ENV", "ResultCache", "cache_folder", "cache_key", "cacheable", "default_cache_dir"]

CACHE_DIR = ".layercheck_cache"
CACHE_DIR_ENV = "LAYERCHECK_CACHE_DIR"
# Of an entry; in the key too, so that another format is a miss, never misread. 2: the files
# and variables a layer reads beside its sources (an entry of 1 knew only the sources). 3: the
# import path in the key, where the import system did not find a module, and what each look at
# a file returned (`sources.Look`).
_FORMAT = 3
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
        and report.status in (Status.PASSED, Status.FAILED, Status.INCOMPLETE)  # a check undecided by its seed
        and not report.cached
        and all(check.name != INTEGRITY_CHECK for check in report.checks)
    )


# -- the key -------------------------------------------------------------------------------


def cache_key(target: Mapping[str, Any], device: str, config: str | os.PathLike[str] | None = None) -> str | None:
    """The key of a target's entry: `target` (JSON-like data of what is checked and how: its
    label, class, layouts, arguments, settings) with the working folder, the environment (see
    the module's docstring; `device`: the merged setting), what decides which file an import
    finds (`_imports`), and the config file's text where one is used. None when the config file
    or the working folder cannot be read now: such a run is not cached."""
    try:
        folder = os.getcwd()  # where the workers run (`isolation._Setting`)
    except OSError:  # removed under the run: its workers could not start there either
        return None
    material: dict[str, Any] = {
        "format": _FORMAT,
        "target": plain(target),
        "folder": folder,
        "environment": _environment(device != "cpu"),
        "imports": _imports(),
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


def _imports() -> dict[str, Any]:
    """What decides which file an import finds, beside the files themselves: the import path of
    the workers (`isolation.worker_sys_path`: PYTHONPATH's entries, the environment's
    site-packages, the working folder), the environment (`sys.prefix`) and its interpreter,
    and the finders the import system asks (an editable install's, which a `.pth` file put
    there, maps names to folders in its module's text)."""
    return {
        "path": worker_sys_path(),
        "prefix": sys.prefix,
        "executable": sys.executable,
        "finders": _finders(),
    }


@functools.lru_cache(maxsize=1)
def _finders() -> list[list[Any]]:
    """Each finder of `sys.meta_path` and hook of `sys.path_hooks`, by its name and the SHA-256
    of its module's file (None where it has none: built in, frozen), once per process: they are
    put there at the interpreter's start, the workers' as this process's."""
    found: list[list[Any]] = []
    for finder in [*sys.meta_path, *sys.path_hooks]:
        module_name = getattr(finder, "__module__", None)
        name = getattr(finder, "__qualname__", None) or type(finder).__qualname__
        module = sys.modules.get(module_name) if type(module_name) is str else None
        path = getattr(module, "__file__", None)
        found.append([f"{module_name}.{name}", digest_file(path) if type(path) is str else None])
    return found


def _gpu() -> dict[str, Any]:
    """CuPy's version and whether a GPU is usable (then its name): what a worker finds decides
    which GPU checks run, or are skipped "no GPU available". `gpu_status` imports CuPy and
    probes the device, once per process; it is asked only where a target's device is not
    `cpu`, and the workers ask it anyway."""
    from layercheck.devices import gpu_status  # noqa: PLC0415 - imports CuPy

    status = gpu_status()
    # The parent runs no layer: these are the packages as installed.
    version = getattr(sys.modules.get("cupy"), "__version__", None)
    pathfinder = getattr(sys.modules.get("cuda.pathfinder"), "__version__", None)
    return {"usable": status.usable, "reason": status.reason, "cupy": str(version), "cuda.pathfinder": str(pathfinder)}


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
        """The report stored under `key`, marked cached, when every file and variable it
        depends on is unchanged; else None (no entry, an unreadable or foreign one, a change)."""
        found = self.lookup_with_inputs(key)
        return None if found is None else found[0]

    def lookup_with_inputs(self, key: str) -> tuple[TargetReport, Inputs] | None:
        """`lookup`, with what the entry recorded the target to read: a run's record of the
        files it checked (`runinfo.RunInfo.sources`) holds a cached target's files too."""
        entry = self._read(self._entry(key))
        if entry is None or entry.get("format") != _FORMAT or entry.get("key") != key:
            return None
        try:
            inputs = read_inputs(entry.get("inputs"))
            report = TargetReport.from_dict(entry.get("report"), Origin.CACHE)
        except MalformedReport:
            return None
        if not inputs.files or not inputs.keyable or not inputs.unchanged():
            return None
        if not cacheable(report):
            return None  # not what `store` writes: another program's, or an older layercheck's
        report.cached = True
        return report, inputs

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

    def store(self, key: str, report: TargetReport, inputs: Inputs) -> bool:
        """Store `report` under `key` with its `inputs` (each file and variable in the state
        the worker saw), when it is `cacheable`, the inputs can be keyed, and every one of
        them is still in that state: a file edited, or a variable set, while the checks ran
        must not have the verdict of its old state stored under its new one. Whether it was
        stored."""
        if self._writable is False or not cacheable(report) or not inputs.files or not inputs.keyable:
            return False
        if not inputs.unchanged():
            return False
        data = {"format": _FORMAT, "key": key, "inputs": inputs.to_data(), "report": report.to_dict(Origin.CACHE)}
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
        """The folders, once per process: the cache's and its `results/`. The markers
        (`.gitignore`, `CACHEDIR.TAG`) go into the cache's folder when layercheck makes it; into
        `results/` when the cache's folder was there already and is not layercheck's (the
        user's own, named by `--cache-dir`), and layercheck makes `results/` in it."""
        if self._writable:
            return
        made = _make_folder(self.folder)
        results = self.folder / _RESULTS
        if _make_folder(results) and not made and not _marked(self.folder):
            _mark(results)
        if made:
            _mark(self.folder)
        self._writable = True

    def _unwritable(self, exc: OSError) -> None:
        """Said once; nothing more is stored this run, and the run goes on."""
        first = self._writable is not False
        self._writable = False
        if first:
            where = visible(os.fspath(self.folder))
            self._warn(f"cannot write the result cache {where} ({exception_text(exc)}); results are not cached")


def _make_folder(folder: Path) -> bool:
    """Make `folder` (and the folders above it); whether this call made it (False: it was
    there).

    Raises:
        OSError: it cannot be made, or a file has its name.
    """
    try:
        folder.mkdir(parents=True)
    except FileExistsError:
        if not folder.is_dir():
            raise
        return False
    return True


def _mark(folder: Path) -> None:
    """Tell git and backup tools to leave `folder` out: a folder layercheck made."""
    for name, text in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
        _write_atomic(folder / name, text)


def _marked(folder: Path) -> bool:
    """Whether `folder` holds layercheck's `CACHEDIR.TAG`: layercheck made it, at an earlier run."""
    tag = folder / "CACHEDIR.TAG"
    try:
        if not stat.S_ISREG(tag.stat().st_mode):
            return False
        with open(tag, "rb") as file:
            return file.read(len(_CACHEDIR_TAG) + 1) == _CACHEDIR_TAG.encode("ascii")
    except OSError:
        return False


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
