"""What a target's verdict depends on, as its worker saw it (the result cache, DESIGN.md section 7):
the source files of the modules it imports, the other files it reads and the environment
variables it reads (`Inputs`).

**Sources.** A verdict depends on the layer's module and on every module it imported: at import,
and lazily, inside `predict` or `backward`. The worker records them after the import and again
after the checks (`imported_sources`): each module that appeared in `sys.modules` since the
worker began, with a source file that is neither the standard library's (the Python version
covers it), nor NumPy's, CuPy's or layercheck's own (their versions, and layercheck's source,
are part of the cache key). A third-party package of site-packages the layer imports (SciPy,
say) is recorded too: an upgrade of it can change a verdict as an edit of the user's can.

Each file is recorded with the SHA-256 of its bytes. A module of the user's tree is compiled
from its source by `contract.fresh.SourceOnlyLoader`, which records the digest of the very bytes
it compiled: an edit made while the checks ran is then seen as a change, where hashing the file
afterwards would have stored the old verdict under the new source.

**Reads.** Every other file the layer opens or looks at (a data file beside it, a helper loaded
by path that never enters `sys.modules`), every path at which the import system would have
found a module before the file it imported, and every environment variable the layer reads are
recorded by `running.reads` while the target runs. A file is keyed on its state (`file_state`:
the SHA-256 of its bytes, or that it is absent, or a folder, followed by what each look the
layer made at it without opening it returned: its metadata, a link's own, a link's text,
`Look`); a variable on the SHA-256 of its value, or that it is unset (`variable_state`): a
variable set later is a change as an edited one is. Only digests are kept, never a variable's
value: an entry on disk holds no token the layer read. Whatever the worker cannot key (a folder
listed, a process started, the network, a device, a file that changed while the layer ran, a
file opened by name in a folder held open) makes the target uncacheable (`Uncacheable`).

The parent stores a verdict only where every file and variable is still as the worker saw it
(`cache.ResultCache.store`), and serves it only while they stay so (`cache.ResultCache.lookup`).
All of it crosses to the parent inside the worker's report (`INPUTS`), which the parent reads
with `split_inputs`, trusting none of it: the layer ran in that process. A worker that lies can
only make its own verdict be checked again, or be served for its own unchanged inputs.

A batch run also records the files in its report (`SourceRecord`, `runinfo.RunInfo.sources`),
with the files of the whole plan, whether the cache is on or not, so that `layercheck merge`
refuses shards run on different contents of one file. A lying worker can only make its own
shard be refused, or merged with shards whose files it misstated: what editing the shard's
file does.
"""

from __future__ import annotations

import enum
import errno
import functools
import hashlib
import os
import re
import site
import stat
import sys
import sysconfig
import types
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from typing import Any

from layercheck.contract import fresh
from layercheck.results import MalformedReport
from layercheck.runinfo import recorded_path
from layercheck.safetext import safe_repr, visible

__all__ = [
    "ABSENT",
    "FOLDER",
    "INPUTS",
    "MAX_SOURCES",
    "MAX_VARIABLES",
    "UNSET",
    "Inputs",
    "Look",
    "SourceRecord",
    "Sources",
    "Uncacheable",
    "Variables",
    "contents_of",
    "digest_file",
    "file_state",
    "imported_sources",
    "in_standard_library",
    "is_pseudo_file",
    "keyed_by_version",
    "loaded_modules",
    "looks_of",
    "read_inputs",
    "split_inputs",
    "variable_state",
]

INPUTS = "inputs"  # the key of the worker's report that holds them
# A layer reading more files than this (a framework of thousands of modules) is not cached:
# checking every one of them at each lookup would cost more than it saves.
MAX_SOURCES = 5_000
MAX_VARIABLES = 2_000  # of the environment's: a layer that reads more is not cached either
MAX_FILE_BYTES = 256 * 2**20  # a larger file (a big extension module) makes the target uncached
_MAX_PATH = 4_096  # PATH_MAX: a longer text is not a path a worker found (nor a variable's name)
_DIGEST_CHARS = 64  # SHA-256, in hex
_CHUNK = 2**20
# Packages whose version is part of the key: their files need not be hashed one by one. CuPy 14
# imports cuda-pathfinder itself to find the CUDA libraries (it runs `ldconfig -p` to do so):
# its frames are CuPy's, and its version is in the key with CuPy's (`cache._gpu`).
_VERSIONED = frozenset({"numpy", "cupy", "cupyx", "cupy_backends", "cuda.pathfinder", "layercheck"})
# The states of a file that are not a digest of its bytes (`file_state`), and of a variable.
ABSENT = "absent"  # nothing there (a missing file the layer tried, or looked for)
FOLDER = "folder"  # a folder, looked at (`os.path.isdir`) but not listed: listing is uncacheable
UNSET = "unset"
_FILE_WORDS = frozenset({ABSENT, FOLDER})
# What a look (`Look`) says a path is: a regular file, a folder, a symbolic link, anything else
# (a device, a pipe, a socket); `ABSENT` where nothing is.
_KINDS = {stat.S_IFREG: "file", stat.S_IFDIR: "folder", stat.S_IFLNK: "link"}
_OTHER = "other"
# Files of the kernel's, not of a disk: /proc and /sys report a size of 0 and change with every
# read; /dev holds devices. None of them can be keyed on their contents.
_PSEUDO_ROOTS = ("/proc", "/sys", "/dev")

Sources = tuple[tuple[str, str], ...]  # (path, state), sorted by path
Variables = tuple[tuple[str, str], ...]  # (name, state), sorted by name


class Uncacheable(str, enum.Enum):
    """Why a target's verdict is not stored: what the layer did that its inputs cannot account
    for (`running.reads`). The value completes "the layer ..."."""

    LISTING = "lists a folder"  # os.listdir, os.scandir, glob: which files are there is not keyed
    PROCESS = "starts a process"  # what it reads is out of sight
    NETWORK = "uses the network"
    NATIVE = "calls native code through ctypes"  # which may read anything (getenv, fopen)
    DATABASE = "opens a database"  # sqlite3 reads and writes it in C
    REGISTRY = "reads the Windows registry"
    ATTRIBUTES = "reads a file's extended attributes"
    UNHASHABLE = "reads a file that cannot be hashed"  # a device, a pipe, /proc, past the size limit
    CHANGED = "reads a file that changed while it ran"  # it wrote it, or something else did
    ENVIRONMENT = "reads the whole environment"  # iterates or copies os.environ
    # os.open(name, flags, dir_fd=fd), os.stat(name, dir_fd=fd): which file, the worker cannot tell
    DESCRIPTOR = "reads a file by its name in a folder it holds open"
    REPLACED = "replaces os.environ or a function of os the worker records through"  # its reads went unrecorded
    TOO_MANY = "reads more files or variables, or changes its import path more often, than the cache keeps"
    UNSEEN = "reads in a way the worker could not record"  # the hook missing, or a read not understood
    # The worker recorded the modules imported (the run's record, `SourceRecord`) but not the
    # layer's other reads: the cache was off.
    UNRECORDED = "was checked with its reads unrecorded"


_REASONS = frozenset(reason.value for reason in Uncacheable)


class Look(str, enum.Enum):
    """A look at a path that does not open it (`running.reads`: `os.stat`, `os.lstat`,
    `os.access`, `os.readlink` and what is built on them), keyed on what it returned, beside the
    path's contents: a layer may decide on a file's time, or on a link being there, as much as
    on its bytes. A file's state holds each look made at it (`file_state`)."""

    # os.stat, os.path.getmtime, os.access, Path.stat: the file's type and permission bits, its
    # owner, device and inode, its size and modification time (not its access or change time)
    STAT = "stat"
    LSTAT = "lstat"  # os.lstat: the same of the path itself (a link not followed)
    # os.path.islink, os.path.lexists, os.path.realpath: only what the path itself is (a link, a
    # file, a folder, nothing); their looks say no more. (os.path.exists and isdir, which follow
    # links, say what the contents' state says: no look is added for them.)
    LINK = "link"
    TARGET = "target"  # os.readlink: the text of the link (its SHA-256)


# The state of a file: its contents' state, then each look's value, in the order of the looks'
# names: "<contents>;link=file;stat=file:644:1000:1000:2049:1234:5:1700000000000000000".
_LOOK_SEPARATOR = ";"
_LOOK_ORDER = tuple(sorted(Look, key=lambda look: look.value))
_NONE = "none"  # os.readlink of a path that is not a link
_KIND_WORD = "(?:file|folder|link|other)"
_METADATA = re.compile(rf"(?:{ABSENT}|{_KIND_WORD}:[0-7]{{1,4}}(?::[0-9]{{1,20}}){{5}}:-?[0-9]{{1,20}})")
_LOOK_VALUES = {
    Look.STAT: _METADATA,
    Look.LSTAT: _METADATA,
    Look.LINK: re.compile(rf"(?:{ABSENT}|{_KIND_WORD})"),
    Look.TARGET: re.compile(rf"(?:{ABSENT}|{_NONE}|[0-9a-f]{{64}})"),
}


@dataclass(frozen=True)
class Inputs:
    """What a target's verdict depends on beyond its key: each file with its state, each
    environment variable with its state, and why it cannot be cached, if it cannot."""

    files: Sources = ()
    variables: Variables = ()
    uncacheable: Uncacheable | None = None

    @property
    def keyable(self) -> bool:
        """Whether a verdict may be stored under these inputs: nothing unaccounted for, every
        file's state known, within the limits."""
        return (
            self.uncacheable is None
            and len(self.files) <= MAX_SOURCES
            and len(self.variables) <= MAX_VARIABLES
            and all(contents_of(state) for _, state in self.files)
        )

    def unchanged(self) -> bool:
        """Whether every file and variable is as recorded, now, in this process: each file's
        contents, and what each look the worker recorded at it returns now."""
        return all(file_state(path, looks_of(state)) == state for path, state in self.files) and all(
            variable_state(os.environ.get(name)) == state for name, state in self.variables
        )

    def to_data(self) -> dict[str, Any]:
        """Plain data, as `read_inputs` reads it back (a worker's report, a cache entry)."""
        return {
            "files": [list(item) for item in self.files],
            "variables": [list(item) for item in self.variables],
            "uncacheable": None if self.uncacheable is None else self.uncacheable.value,
        }


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


def file_state(path: str, looks: Collection[Look] = ()) -> str:
    """What a verdict keys a file on: the state of its contents (the SHA-256 (hex) of its bytes,
    `ABSENT` or `FOLDER`), followed by what each of `looks` returns now (see `Look`); "" for
    what cannot be keyed (a device, a pipe, one that cannot be read or is past the size limit,
    a look that fails), which matches no recorded state. (A file of /proc or /sys reads as a
    file: the worker never records one, `is_pseudo_file`.)"""
    contents = _contents_state(path)
    if not contents:
        return ""
    parts = [contents]
    for look in _LOOK_ORDER:
        if look in looks:
            value = _look(path, look)
            if value is None:
                return ""
            parts.append(f"{look.value}={value}")
    return _LOOK_SEPARATOR.join(parts)


def contents_of(state: str) -> str:
    """The state of a file's contents, from its whole state (`file_state`)."""
    return state.partition(_LOOK_SEPARATOR)[0]


def looks_of(state: str) -> frozenset[Look]:
    """The looks a file's state (`file_state`, read strictly by `read_inputs`) holds."""
    _, _, rest = state.partition(_LOOK_SEPARATOR)
    return frozenset(Look(part.partition("=")[0]) for part in rest.split(_LOOK_SEPARATOR)) if rest else frozenset()


def _contents_state(path: str) -> str:
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT
    except (OSError, ValueError):
        return ""
    if stat.S_ISDIR(info.st_mode):
        return FOLDER
    return digest_file(path) or ""


def _look(path: str, look: Look) -> str | None:
    """What `look` at `path` returns now, as a file's state holds it; None where it fails
    otherwise than by there being nothing there."""
    try:
        if look is Look.TARGET:
            return hashlib.sha256(os.fsencode(os.readlink(path))).hexdigest()
        info = os.lstat(path) if look in (Look.LSTAT, Look.LINK) else os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT
    except OSError as exc:
        if look is Look.TARGET and exc.errno == errno.EINVAL:  # there, and not a link
            return _NONE
        return None
    except ValueError:  # a NUL in the path
        return None
    kind = _KINDS.get(stat.S_IFMT(info.st_mode), _OTHER)
    if look is Look.LINK:
        return kind
    return ":".join(
        (
            kind,
            f"{stat.S_IMODE(info.st_mode):o}",
            *(str(value) for value in (info.st_uid, info.st_gid, info.st_dev, info.st_ino, info.st_size)),
            str(info.st_mtime_ns),
        )
    )


def variable_state(value: str | None) -> str:
    """What a verdict keys an environment variable on: the SHA-256 (hex) of its value, or
    `UNSET`. A digest, so that no entry on disk holds a token a layer read."""
    if value is None:
        return UNSET
    return hashlib.sha256(value.encode("utf-8", "surrogateescape")).hexdigest()


def is_pseudo_file(path: str) -> bool:
    """Whether `path` is below /proc, /sys or /dev (symbolic links followed)."""
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return True
    return any(real == root or real.startswith(root + "/") for root in _PSEUDO_ROOTS)


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
        compiled = fresh.compiled_digest(loader)
        yield name, os.path.abspath(path), compiled


def _counts(name: str, path: str) -> bool:
    """Whether the file of module `name` belongs among a verdict's sources."""
    if fresh.is_user_file(path):
        return True  # the user's tree (even a package named like NumPy, checked out by them)
    if _versioned(name):
        return False
    return not in_standard_library(os.path.realpath(path))


def _versioned(name: str) -> bool:
    """Whether module `name` is one of `_VERSIONED`'s packages or below one."""
    return any(name == package or name.startswith(package + ".") for package in _VERSIONED)


def in_standard_library(real: str) -> bool:
    """Whether the real path `real` is a file of the standard library: below its folders, and
    not below a site-packages there (an interpreter without a virtual environment keeps its
    third-party packages inside the standard library's folder)."""
    return _below(real, _stdlib_roots()) and not _below(real, _site_roots())


def keyed_by_version(real: str) -> bool:
    """Whether the file at the real path `real` is one that the cache key covers by a version
    rather than by its digest: the standard library's (the Python version), or a file of an
    imported package whose version is in the key (NumPy, CuPy, layercheck's source digest)."""
    if in_standard_library(real):
        return True
    return _below(real, tuple(folder for folder in map(_package_folder, sorted(_VERSIONED)) if folder))


def _below(real: str, roots: tuple[str, ...]) -> bool:
    return any(real == root or real.startswith(root + os.sep) for root in roots)


def _package_folder(name: str) -> str | None:
    """The real folder of the imported package `name` (None: not imported, or not a package
    of files). Read from `sys.modules` without running any code of the layer's."""
    module = sys.modules.get(name)
    if not isinstance(module, types.ModuleType):
        return None
    path = object.__getattribute__(module, "__dict__").get("__file__")
    return _real_folder(path) if type(path) is str and path else None


@functools.lru_cache(maxsize=16)
def _real_folder(path: str) -> str:
    return os.path.realpath(os.path.dirname(path))


@functools.lru_cache(maxsize=1)
def _stdlib_roots() -> tuple[str, ...]:
    """The standard library's folders (its extension modules' too): the Python version, in
    the key, says what they hold."""
    paths = sysconfig.get_paths()
    folders = {os.path.dirname(os.__file__), *(paths[key] for key in ("stdlib", "platstdlib") if key in paths)}
    return tuple(sorted({os.path.realpath(folder) for folder in folders if folder}))


@functools.lru_cache(maxsize=1)
def _site_roots() -> tuple[str, ...]:
    """Every folder third-party packages are installed in."""
    paths = sysconfig.get_paths()
    folders = {paths[key] for key in ("purelib", "platlib") if key in paths}
    try:
        folders.update(site.getsitepackages())
    except AttributeError:  # an old virtualenv's site module
        pass
    if site.ENABLE_USER_SITE:
        folders.add(site.getusersitepackages())
    folders.update(entry for entry in sys.path if os.path.basename(entry) in ("site-packages", "dist-packages"))
    return tuple(sorted({os.path.realpath(folder) for folder in folders if folder}))


# -- the parent's side ---------------------------------------------------------------------


def split_inputs(data: Any) -> tuple[Any, Inputs | None]:
    """A worker's report without its `INPUTS`, and those read back; None when it sent none
    (it stopped before the checks ended, or the cache is off).

    Raises:
        MalformedReport: the inputs are not what a worker records, in one line.
    """
    if type(data) is not dict or INPUTS not in data:
        return data, None
    rest = {key: value for key, value in data.items() if key != INPUTS}
    return rest, read_inputs(data[INPUTS])


def read_inputs(data: Any) -> Inputs:
    """`Inputs.to_data` read back, strictly (a worker's report, a cache entry: the layer ran in
    the process that wrote either).

    Raises:
        MalformedReport: in one line.
    """
    if type(data) is not dict or set(data) != {"files", "variables", "uncacheable"}:
        raise MalformedReport(f"its inputs are {_shown(data)}, not the files and variables it read")
    files = _pairs(data["files"], "file", MAX_SOURCES + 1, _file_problem)
    variables = _pairs(data["variables"], "variable", MAX_VARIABLES + 1, _variable_problem)
    reason = data["uncacheable"]
    if reason is not None and (type(reason) is not str or reason not in _REASONS):
        raise MalformedReport(f"it says it is not cacheable because it {_shown(reason)}")
    return Inputs(files, variables, None if reason is None else Uncacheable(reason))


def _pairs(value: Any, what: str, limit: int, problem: Any) -> tuple[tuple[str, str], ...]:
    if type(value) is not list or len(value) > limit:
        raise MalformedReport(f"its {what}s are {_shown(value)}, not a list of at most {limit}")
    read = []
    for item in value:
        if type(item) is not list or len(item) != 2 or any(type(part) is not str for part in item):
            raise MalformedReport(f"a {what} is {_shown(item)}, not a name and its state")
        wrong = problem(*item)
        if wrong:
            raise MalformedReport(f"a {what} is {_shown(item)}: {wrong}")
        read.append((item[0], item[1]))
    return tuple(sorted(set(read)))


def _file_problem(path: str, state: str) -> str | None:
    if not os.path.isabs(path) or len(path) > _MAX_PATH or "\0" in path:
        return "not an absolute path"
    contents, _, rest = state.partition(_LOOK_SEPARATOR)
    if contents and contents not in _FILE_WORDS and not _is_digest(contents):
        return "its state is neither a digest nor absent nor folder"
    if not rest:
        return None
    if not contents:
        return "a file that cannot be keyed has no looks"
    names = []
    for part in rest.split(_LOOK_SEPARATOR):
        name, equals, value = part.partition("=")
        look = next((look for look in Look if look.value == name), None)
        if not equals or look is None or not _LOOK_VALUES[look].fullmatch(value):
            return f"{_shown(part)} is not a look and what it returned"
        names.append(name)
    if names != sorted(set(names)):
        return "its looks are not each once, in order"
    return None


def _variable_problem(name: str, state: str) -> str | None:
    if not name or len(name) > _MAX_PATH or "\0" in name:
        return "not the name of an environment variable"
    if state != UNSET and not _is_digest(state):
        return "its state is neither a digest nor unset"
    return None


def _is_digest(text: str) -> bool:
    return len(text) == _DIGEST_CHARS and not text.strip("0123456789abcdef")


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

    def update(self, files: Sources) -> None:
        """Record the files a worker sent (`Inputs.files`): those with content, or none that
        could be read; a file the layer found absent, or a folder, has no content to record."""
        for path, state in files:
            contents = contents_of(state)
            if contents == "" or _is_digest(contents):
                self.add(path, contents)

    def recorded(self) -> tuple[tuple[str, str], ...]:
        """(path, digest) of every file recorded, sorted by path."""
        return tuple(sorted(self._digests.items()))


def _shown(value: Any) -> str:
    return visible(safe_repr(value, 80))
