"""The source files a target's verdict depends on, as its worker saw them (the result cache).

A verdict depends on the layer's module and on every module it imported: at import, and
lazily, inside `predict` or `backward`. The worker records them after the import and again
after the checks (`imported_sources`): each module that appeared in `sys.modules` since the
worker began, with a source file that is neither the standard library's (the Python version
covers it), nor NumPy's, CuPy's or layercheck's own (their versions, and layercheck's source,
are part of the cache key). A third-party package of site-packages the layer imports (SciPy,
say) is recorded too: an upgrade of it can change a verdict as an edit of the user's can.

Each file is recorded with the SHA-256 of its bytes. A module of the user's tree is compiled
from its source by `contract.fresh.SourceOnlyLoader`, which records the digest of the very bytes
it compiled: an edit made while the checks ran is then seen as a change, where hashing the file
afterwards would have stored the old verdict under the new source. The parent stores a verdict
only where every file still has the digest the worker saw (`cache.ResultCache.store`).

The list crosses to the parent inside the worker's report (`SOURCES`), which the parent reads
with `split_sources`, trusting none of it: the layer ran in that process. A worker that lies
can only make its own verdict be checked again, or be served for its own unchanged files.

A batch run also records them in its report (`SourceRecord`, `runinfo.RunInfo.sources`), with
the files of the whole plan, so that `layercheck merge` refuses shards run on different
contents of one file. A lying worker can only make its own shard be refused, or merged with
shards whose files it misstated: what editing the shard's file does.
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
import sys
import sysconfig
import types
from collections.abc import Collection, Iterator, Mapping
from importlib.machinery import ModuleSpec
from typing import Any

from layercheck.contract import fresh
from layercheck.results import MalformedReport
from layercheck.runinfo import recorded_path
from layercheck.safetext import safe_repr, visible

__all__ = [
    "MAX_SOURCES",
    "SOURCES",
    "SourceRecord",
    "digest_file",
    "imported_sources",
    "split_sources",
]

SOURCES = "sources"  # the key of the worker's report that holds them
# A layer importing more files than this (a framework of thousands of modules) is not cached:
# checking every one of them at each lookup would cost more than it saves.
MAX_SOURCES = 5_000
MAX_FILE_BYTES = 256 * 2**20  # a larger file (a big extension module) makes the target uncached
_MAX_PATH = 4_096  # PATH_MAX: a longer text is not a path a worker found
_DIGEST_CHARS = 64  # SHA-256, in hex
_CHUNK = 2**20
# Packages whose version is part of the key: their files need not be hashed one by one.
_VERSIONED = frozenset({"numpy", "cupy", "cupyx", "cupy_backends", "layercheck"})

Sources = tuple[tuple[str, str], ...]  # (path, sha256 hex), sorted by path


def digest_file(path: str) -> str | None:
    """SHA-256 (hex) of the regular file at `path` now; None when it is missing, not a regular
    file (a named pipe is not opened: reading it would wait for a writer) or too large."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None
        digest = hashlib.sha256()
        size = 0
        with open(path, "rb") as file:
            while chunk := file.read(_CHUNK):
                size += len(chunk)
                if size > MAX_FILE_BYTES:  # grown since the stat
                    return None
                digest.update(chunk)
        return digest.hexdigest()
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return None


# -- the worker's side ---------------------------------------------------------------------


def loaded_modules() -> frozenset[str]:
    """The names in `sys.modules` now: what the worker had before the layer's module ran."""
    return frozenset(sys.modules)


def imported_sources(before: Collection[str], known: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """Each source file of a module imported since `before` (`loaded_modules`) that the verdict
    may depend on, with its digest (see the module's docstring; `known`: digests already taken,
    by path); a file that cannot be read gets an empty digest, which the parent never finds
    again (the target is then not cached). At most MAX_SOURCES + 1 of them: one more tells the
    parent that there were too many."""
    known = {} if known is None else known
    found: dict[str, str] = {}
    for name, path, compiled in _module_files(before):
        if path in found or not _counts(name, path):
            continue
        found[path] = compiled or known.get(path) or digest_file(path) or ""
        if len(found) > MAX_SOURCES:
            break
    return sorted(found.items())


def _module_files(before: Collection[str]) -> Iterator[tuple[str, str, str | None]]:
    """(module name, the absolute path of its `__file__`, the digest of the source its loader
    compiled, if `contract.fresh` compiled it) of the modules in `sys.modules` not in `before`.

    `sys.modules` is the layer's to fill: a value that is not a module, or one whose `__dict__`
    cannot be read, is passed over (such a layer only makes its own verdict re-checked). Only
    layercheck's own types are asked for more than their `__dict__`: no code of the layer runs."""
    for name, module in list(sys.modules.items()):
        if name in before or not isinstance(module, types.ModuleType):
            continue
        try:
            namespace = object.__getattribute__(module, "__dict__")
            path, spec = namespace.get("__file__"), namespace.get("__spec__")
        except Exception:  # noqa: BLE001 - a module type of the layer's: see above
            continue
        if type(path) is not str or not path or "\0" in path:
            continue
        loader = spec.loader if type(spec) is ModuleSpec else None
        compiled = loader.source_digest if type(loader) is fresh.SourceOnlyLoader else None
        yield name, os.path.abspath(path), compiled


def _counts(name: str, path: str) -> bool:
    """Whether the file of module `name` belongs among a verdict's sources."""
    if fresh.is_user_file(path):
        return True  # the user's tree (even a package named like NumPy, checked out by them)
    if name.partition(".")[0] in _VERSIONED:
        return False
    real = os.path.realpath(path)
    return not any(real == root or real.startswith(root + os.sep) for root in _stdlib_roots())


@functools.lru_cache(maxsize=1)
def _stdlib_roots() -> tuple[str, ...]:
    """The standard library's folders (its extension modules' too): the Python version, in
    the key, says what they hold."""
    paths = sysconfig.get_paths()
    folders = {os.path.dirname(os.__file__), *(paths[key] for key in ("stdlib", "platstdlib") if key in paths)}
    return tuple(sorted({os.path.realpath(folder) for folder in folders if folder}))


# -- the parent's side ---------------------------------------------------------------------


def split_sources(data: Any) -> tuple[Any, Sources | None]:
    """A worker's report without its `SOURCES`, and those read back; None when it sent none
    (it stopped before the checks ended, or the cache is off).

    Raises:
        MalformedReport: the sources are not what `imported_sources` makes, in one line.
    """
    if type(data) is not dict or SOURCES not in data:
        return data, None
    rest = {key: value for key, value in data.items() if key != SOURCES}
    sources = data[SOURCES]
    if type(sources) is not list or len(sources) > MAX_SOURCES + 1:
        raise MalformedReport(f"its sources are {_shown(sources)}, not a list of files")
    read = []
    for item in sources:
        if type(item) is not list or len(item) != 2 or any(type(part) is not str for part in item):
            raise MalformedReport(f"a source is {_shown(item)}, not a path and its digest")
        path, digest = item
        if not os.path.isabs(path) or len(path) > _MAX_PATH or "\0" in path:
            raise MalformedReport(f"a source is {_shown(path)}, not an absolute path")
        if digest and (len(digest) != _DIGEST_CHARS or digest.strip("0123456789abcdef")):
            raise MalformedReport(f"the digest of a source is {_shown(digest)}")
        read.append((path, digest))
    return rest, tuple(sorted(set(read)))


class SourceRecord:
    """The files a batch run checked, each with the digest of its content as the run saw it
    (`runinfo.RunInfo.sources`), by the path a report records (`runinfo.recorded_path`).

    A file seen with two digests in one run (edited while it ran: the parent hashed it before
    the checks, the worker compiled it after) keeps the empty digest, as one that could not be
    read: no shard claims a content for it that another shard could be found to agree with.
    """

    def __init__(self) -> None:
        try:
            self._root: str | None = os.path.realpath(os.getcwd())
        except OSError:  # the working folder was removed: every path is recorded absolute
            self._root = None
        self._digests: dict[str, str] = {}

    def add(self, path: str, digest: str) -> None:
        key = recorded_path(path, self._root)
        if self._digests.setdefault(key, digest) != digest:
            self._digests[key] = ""

    def hash(self, path: str) -> None:
        """Record the file at `path` as it is now (`digest_file`; "" when it cannot be read)."""
        self.add(path, digest_file(path) or "")

    def update(self, sources: Sources) -> None:
        """Record what a worker sent (`split_sources`)."""
        for path, digest in sources:
            self.add(path, digest)

    def recorded(self) -> tuple[tuple[str, str], ...]:
        """(path, digest) of every file recorded, sorted by path."""
        return tuple(sorted(self._digests.items()))


def _shown(value: Any) -> str:
    return visible(safe_repr(value, 80))
