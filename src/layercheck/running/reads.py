"""What a target reads while it runs, beside the modules it imports (the result cache, DESIGN.md
section 7): "Whatever a layer reads decides whether a cached verdict still holds".

`Reads.start()` begins recording in a worker, before the layer's module is imported;
`Reads.note_imports()` records where the modules of its import were found, while they are
loaded; `Reads.finish(sources)` ends it after the checks and returns the target's
`sources.Inputs`. In between, everything the layer's side does is seen through three things:

- an audit hook (`sys.addaudithook`). Its "open" event is raised by `open`, `io.open_code` (what
  every import and `spec.loader.exec_module` read a module with), `os.open` and everything built
  on them (`np.load`, `np.fromfile`, `pathlib.Path.read_text`): each file opened for reading is
  recorded, and keyed on its contents. The bytecode the import system reads
  (`__pycache__/*.pyc`) stands for its source, which Python checks it against. Its "import"
  event (an import statement looking for a module not loaded) tells which import path is
  searched (below). What cannot be keyed makes the target uncacheable (`sources.Uncacheable`):
  listing a folder (`os.listdir`, `os.scandir`, `glob`, `os.walk`), starting a process
  (`subprocess`, `os.system`, `os.fork`, `os.exec*`, `os.posix_spawn`), the network
  (`socket.connect`, name lookups, `urllib`), native code reached through `ctypes`, `sqlite3`,
  the Windows registry, extended attributes.
- `os.stat`, `os.lstat`, `os.access` and `os.readlink`, wrapped (and, on Python 3.10, those
  pathlib took for itself): the looks that `os.path.exists`, `isfile`, `getmtime`, `islink`,
  `lexists`, `realpath`, `pathlib.Path.exists`, `resolve` and their kin take. A layer that loads
  weights only if a file is there depends on that file being absent as much as on its contents
  once it is there; one that picks the newer of two checkpoints depends on their times. Each
  look is keyed on what it returned (`sources.Look`): os.stat's metadata (the type, permission
  bits, owner, device, inode, size and modification time; not the access or change time),
  os.lstat's of a link itself, os.readlink's text. A look made through a function that tells
  only what a path is (`os.path.exists`, `isdir`, `islink`, `lexists`, `realpath`, pathlib's
  `exists`, `is_file`, `resolve`, linecache's) is keyed on that alone: `Path(__file__).resolve()`
  looks at every folder above the layer, whose times change with every file made in them.
  `os.open` is wrapped too: its audit event names a file but not the folder a `dir_fd` holds
  open, so a file opened by a relative name in such a folder makes the target uncacheable, as
  a look given one does.
- `os.environ` (and `os.environb`), replaced by a mapping that records each name read (`[]`,
  `get`, `in`, `os.getenv`, `setdefault`, `pop`). Reading them all (iterating, `copy()`,
  `dict(os.environ)`, `len`, `repr`) makes the target uncacheable rather than keyed on the whole
  environment: that holds `PWD`, `SHLVL`, a CI job's run id, which differ at every run, so the
  entry could never be found again, and its digests would be of every secret there.

**Where an import found its module.** The file a module was imported from is a source, keyed on
its contents. Which file an import finds depends on more: the import path, which the key holds
(`cache.cache_key`: the workers' sys.path, the environment's prefix and interpreter, the import
system's finders), and the other files on it: a file made where the import system looks before
the one it found (a `helper.py` beside the layer, whose folder is first on the path while it is
imported; a package `helper/` beside `helper.py`) would be imported instead. So, for each module
loaded since `start` that the import path found (a top-level module, or a module inside
namespace packages), every path at which the import system would have found it first is keyed
on its state (absent, where it found this one): in each entry before the one it was found in,
and in that one, the name with each suffix of a module (`.py`, a `.pyc` without a source, each
extension module's) and the package folder of that name (its `__init__` with each suffix,
where the folder is there); for a namespace package, in every entry. The import paths are
sys.path as it was at `start`, at each import statement, at each module file the import system
read and at each `note_imports` (a layer may put an entry there for one import and take it out
again), at most `MAX_SEARCHES` of them; the standard library's folders are left out (the
Python version covers what they hold). An import statement's search gets these paths'
signatures before it looks, so that one made while the target runs is found changed. A module
the layer's side looked for with an import statement that did not import (an optional
dependency it falls back from) is keyed as absent wherever it was looked for: installing it
checks the layer again.

**Whose read it is.** The worker runs layercheck as well as the layer, and layercheck reads files
too (the layer's source, its own tracebacks' lines): recording those would key every target on
them, or make it uncacheable. Each event is given to whoever called in: the stack is walked
outward from it, over the standard library's frames, the import system's and NumPy's and CuPy's
(which act for their caller), to the first frame of other code. Code in layercheck's package
means layercheck's own read, ignored; anything else (the layer's module, its helpers, a
third-party package it called, a thread it started) means the layer's. Frames are told apart by
their code's file, not by module names a layer's helper could share with the standard library.

**What is keyed.** A file on its state when the run ends (the SHA-256 of its bytes, or absent, or
a folder, with what each look at it returned: `sources.file_state`), provided it is still as it
was when first read (its type, permission bits, owner, inode, size and modification and change
times, both through a link and of the link itself; a folder by its type alone, unless a look at
it returned its metadata): a file the layer, or anyone, wrote while the target ran makes it
uncacheable, as it does a file of /proc, /sys or /dev, a pipe, or one past the size limit. A
file only written is not read: a log the layer appends to leaves it cacheable. A variable on
its value when the worker started, which is the parent's (`isolation._worker_main` copies it):
a variable the layer set before reading it keys on the parent's value, which only checks it
again more often. Files that the key covers by a version are left out (the standard library's,
NumPy's, CuPy's, layercheck's own: `sources.keyed_by_version`).

**Robust.** The hook runs on every audit event of the process: a set lookup rejects all but the
few dozen it watches. That is about half a microsecond an event, most of it Python's call of any
hook; the integrity guard, which watches ten thousand functions after every check, compares
them in one call that raises one event (`integrity._Unchanged._functions_hold`) rather than
reading their audited attributes one by one. For the events it watches, and
in the wrappers, nothing raises into the layer's code: a failure makes the target uncacheable
instead, and what the recording itself does (a path resolved, a frame asked for) is not
recorded (`Reads._guarded`). A layer cannot remove an audit hook. Added before the layer's
module runs, the hook comes before any of the layer's, which cannot hide an event from it; a
hook that cannot be added (one already there, a sitecustomize's, refused it) is found by a
probe event and makes the target uncacheable.

A layer can lie: raise events of its own (`sys.audit("open", ...)`), put its own `os.environ` or
`os.stat` in place of the recorder's (found at the end: uncacheable), or rewrite the recorder
through `gc`. Any lie reaches only its own entry: a worker checks one target, forked from a
forkserver that never ran a layer; what it records is sent with that target's report and stored
under that target's key, which the parent computes; and the parent checks every recorded state
itself, in its own process, at each lookup. A lie can make its own verdict checked again, or
uncached, or served while the things it hid change; never another target's.

**Not seen.** What does not go through Python: a C extension that calls `fopen`, `stat` or
`getenv` itself (HDF5 through h5py, a BLAS reading its variables when it loads), and
`posix.environ`, the copy of the environment the interpreter took at its start. The times of a
file the layer already opened (`os.fstat`): its contents are keyed, not its times. Of imports:
a module that failed to import through `importlib.import_module` (no audit event), or inside a
package that is there (`import pkg.optional`); a file made inside a regular package where it
would be found before one of its modules (`pkg/sub/` beside `pkg/sub.py`); an entry a layer puts
on the import path and takes out again around an `importlib.import_module` of an extension
module (no import statement, no module file read in Python); and what a `.pth` file or
`sitecustomize` runs at the interpreter's start beyond the entries and finders it adds, which
the key holds.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import linecache
import os
import pathlib
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from importlib.machinery import ModuleSpec
from stat import S_IFDIR, S_IFMT, S_ISDIR
from threading import get_ident
from types import FrameType
from typing import Any

from layercheck.contract import fresh
from layercheck.running.sources import (
    MAX_SOURCES,
    MAX_VARIABLES,
    Inputs,
    Look,
    Uncacheable,
    contents_of,
    file_state,
    in_standard_library,
    is_pseudo_file,
    keyed_by_version,
    loaded_modules,
    variable_state,
)

__all__ = ["Reads"]

# What each watched event means. "open" is the one that is keyed; the others cannot be.
_REFUSED = {
    **dict.fromkeys(
        (
            "os.listdir", "os.scandir", "os.walk", "os.fwalk", "glob.glob", "glob.glob/2",
            "pathlib.Path.glob", "pathlib.Path.rglob", "pathlib.Path.walk",
            "os.listdrives", "os.listvolumes", "os.listmounts",
        ),
        Uncacheable.LISTING,
    ),
    **dict.fromkeys(
        (
            "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
            "os.forkpty", "os.startfile", "os.startfile/2", "pty.spawn",
        ),
        Uncacheable.PROCESS,
    ),
    **dict.fromkeys(
        (
            "socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg", "socket.getaddrinfo",
            "socket.gethostbyname", "socket.gethostbyaddr", "socket.getnameinfo", "urllib.Request",
            "http.client.connect", "ftplib.connect", "imaplib.open", "nntplib.connect", "poplib.connect",
            "smtplib.connect", "telnetlib.Telnet.open", "webbrowser.open",
        ),
        Uncacheable.NETWORK,
    ),
    **dict.fromkeys(("ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle"), Uncacheable.NATIVE),
    **dict.fromkeys(("sqlite3.connect",), Uncacheable.DATABASE),
    **dict.fromkeys(
        ("winreg.ConnectRegistry", "winreg.OpenKey", "winreg.EnumKey", "winreg.EnumValue", "winreg.QueryValue",
         "winreg.QueryInfoKey", "winreg.LoadKey"),
        Uncacheable.REGISTRY,
    ),
    **dict.fromkeys(("os.getxattr", "os.listxattr"), Uncacheable.ATTRIBUTES),
}  # fmt: skip
_LISTINGS = frozenset(event for event, reason in _REFUSED.items() if reason is Uncacheable.LISTING)
_PROBE = "layercheck.reads.probe"  # raised once by `start`: the hook is there
_IMPORT = "import"  # an import statement's (or __import__'s) search for a module not yet loaded
_WATCHED = frozenset({"open", _IMPORT, _PROBE, *_REFUSED})
# The import system lists each folder of sys.path it searches (FileFinder's cache of names): what
# an import finds there is a module, recorded as a source, not a listing of the layer's.
_IMPORT_SYSTEM = ("<frozen importlib._bootstrap_external>", f"importlib{os.sep}_bootstrap_external.py")
_ACCESS_MODE = getattr(os, "O_ACCMODE", 3)
# Frames, by the file of their code: whose call a read is.
_OWN, _LIBRARY, _LAYER = "own", "library", "layer"
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # layercheck/
_OWN_ROOTS = tuple({_PACKAGE, os.path.realpath(_PACKAGE)})  # as imported, and through any link
_SUPPORTS = ("supports_dir_fd", "supports_fd", "supports_follow_symlinks", "supports_effective_ids")
_GONE: tuple[Any, ...] = ()  # a signature's part where nothing is
_NOT_YET: Any = object()  # no signature taken before
# Every ending of a module's file the import system looks for in a folder: source, bytecode
# without a source, and each extension module's suffix (`.cpython-311-x86_64-linux-gnu.so`, `.so`).
_SUFFIXES = tuple(importlib.machinery.all_suffixes())
# Distinct import paths (sys.path as the import system searched it) recorded for one target: a
# layer that changes its path more often is not cached (`Uncacheable.TOO_MANY`).
MAX_SEARCHES = 64
# Paths whose signatures an import statement's search took before it looked (in every entry of
# the path, where the module may be): past this many, the target is not cached either.
_MAX_EARLY = 20 * MAX_SOURCES
# The originals, bound before any layer runs: the recorder's own looks must not go through the
# wrappers it installs (nor through a replacement a layer installed).
_stat = os.stat
_lstat = os.lstat
_access = os.access
_readlink = getattr(os, "readlink", None)
_open = os.open


def _kind_only_code() -> tuple[types.CodeType, ...]:
    """The code of the standard library's functions whose look at a path tells only what is
    there (a file, a folder, a link, nothing): `os.path.exists`, `isfile`, `isdir`, `islink`,
    `lexists`, `realpath` and pathlib's `exists`, `is_file`, `is_dir`, `is_symlink`, `resolve`;
    and linecache's (a traceback's or a warning's lines), whose look decides only whether the
    lines it keeps are still the file's, which its contents key. A look made through one of
    them is keyed on what the path is alone, not on its times (a layer that finds its folder
    with `Path(__file__).resolve()` looks at every folder above it)."""
    functions: list[Any] = [
        getattr(os.path, name, None)
        for name in ("exists", "lexists", "isfile", "isdir", "islink", "isjunction", "realpath", "_joinrealpath")
    ]
    functions += [getattr(linecache, name, None) for name in ("checkcache", "updatecache")]
    names = (
        "exists", "is_file", "is_dir", "is_symlink", "is_junction", "is_block_device", "is_char_device",
        "is_fifo", "is_socket", "resolve",
    )  # fmt: skip
    for cls in pathlib.Path.__mro__:
        functions.extend(vars(cls).get(name) for name in names)
    return tuple(
        {code for function in functions if isinstance(code := getattr(function, "__code__", None), types.CodeType)}
    )


_KIND_ONLY_CODE = _kind_only_code()  # kept, so that their ids stay theirs
_KIND_ONLY = frozenset(map(id, _KIND_ONLY_CODE))
# layercheck's code that loads a module for its caller, as the import system would (a helper
# the layer loads by path: `contract.fresh`): passed over, as the import system's frames are.
_LOADING = frozenset(map(id, fresh.LOADING_CODE))


def _signature(path: str) -> tuple[Any, ...] | None:
    """What says a path did not change between two looks: for the file it names (links
    followed) and for the path itself (`os.lstat`), its type, permission bits, owner, device,
    inode, size and modification and change times (the change time cannot be set back: a write
    that keeps the size and puts the modification time back still moves it); `_GONE` where
    nothing is. None where it cannot be looked at."""
    parts = []
    for look in (_stat, _lstat):
        try:
            info = look(path)
        except (FileNotFoundError, NotADirectoryError):
            parts.append(_GONE)
            continue
        except (OSError, ValueError):
            return None
        parts.append(
            (
                S_IFMT(info.st_mode), info.st_mode, info.st_uid, info.st_gid, info.st_dev, info.st_ino,
                info.st_size, info.st_mtime_ns, info.st_ctime_ns,
            )
        )  # fmt: skip
    return tuple(parts)


def _held(first: tuple[Any, ...], now: tuple[Any, ...] | None, metadata: bool) -> bool:
    """Whether a path is as its `first` signature says, `now`. A folder is compared by its type
    alone, unless a look at it returned its metadata (`metadata`: `Look.STAT`, `Look.LSTAT`):
    what is made in it (the layer's own log) changes its times, not what it is."""
    if now is None:
        return False
    if metadata:
        return first == now
    return _loosened(first) == _loosened(now)


def _loosened(signature: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(part[:1] if part and part[0] == S_IFDIR else part for part in signature)


def _is_folder(path: str) -> bool:
    try:
        return S_ISDIR(_stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _where(folder: str, name: str) -> list[str]:
    """Each path at which the import system would find the module `name` (one part of a dotted
    name) in `folder` (an entry of the import path, or a portion of a namespace package): in the
    folder `name`, `__init__` with each suffix (where there is no such folder, the path of the
    folder itself: one made there would be found); `name` with each suffix."""
    base = os.path.join(folder, name)
    first = [os.path.join(base, "__init__" + suffix) for suffix in _SUFFIXES] if _is_folder(base) else [base]
    return [*first, *(base + suffix for suffix in _SUFFIXES)]


def _found_in(file: str, name: str) -> str | None:
    """The folder in which the import system found the module `name` (its last part) whose file
    is `file`; None where `file` is not what a search for `name` finds (a module loaded by
    path under a name of its own: the layer's, a helper's)."""
    folder, base = os.path.split(file)
    stem, dot, suffix = base.partition(".")
    if not dot or "." + suffix not in _SUFFIXES:
        return None
    if stem == "__init__" and os.path.basename(folder) == name:
        return os.path.dirname(folder)
    return folder if stem == name else None


def _module_dict(module: Any) -> dict[str, Any] | None:
    """A module's `__dict__`, read without running any code of the layer's (`sys.modules` is
    the layer's to fill); None for what is not a module."""
    if not isinstance(module, types.ModuleType):
        return None
    try:
        namespace = object.__getattribute__(module, "__dict__")
    except Exception:  # noqa: BLE001 - a module type of the layer's
        return None
    return namespace if type(namespace) is dict else None


def _is_namespace(namespace: dict[str, Any] | None) -> bool:
    """Whether the module of `namespace` is a namespace package (folders without
    `__init__.py`: no file, portions wherever the import path has its folder)."""
    if namespace is None:
        return False
    spec = namespace.get("__spec__")
    return (
        namespace.get("__file__") is None
        and type(spec) is ModuleSpec
        and spec.origin is None
        and spec.submodule_search_locations is not None
    )


class Reads:
    """The recorder of one target's worker (see the module's docstring). Its state lives on the
    instance, never in a dict of the module's, which the integrity guard would see change."""

    def __init__(self) -> None:
        self._files: dict[str, tuple[Any, ...] | None] = {}  # absolute path: its first signature
        self._looks: dict[str, set[Look]] = {}  # absolute path: the looks at it (`sources.Look`)
        self._names: set[str] = set()  # environment variables read
        self._refused: Uncacheable | None = None
        self._closed = False
        self._probed = False
        self._busy: set[int] = set()  # the threads recording now (`_guarded`)
        self._kinds: dict[str, str] = {}  # a code file: whose frames
        self._environment: dict[str, str] = {}  # as the worker started
        # (owner, name, what this put there, what was there): os's names, pathlib's on 3.10
        self._installed: list[tuple[Any, str, Any, Any]] = []
        self._supported: list[tuple[set[Any], Any]] = []  # os.supports_* sets the wrappers joined
        # -- the import system's searches
        self._before: frozenset[str] = frozenset()  # the modules loaded at `start`
        self._searches: dict[tuple[str, ...], None] = {}  # each import path searched, absolute
        self._last: tuple[Any, ...] = ()  # sys.path's entries at the last look, as they were
        self._search: tuple[str, ...] = ()  # and made absolute
        # A module name looked for by an import statement: the import path it was looked for in,
        # and whether the layer's side looked for it (one that failed to import is keyed too).
        self._sought: dict[str, tuple[tuple[str, ...], bool]] = {}
        self._early: dict[str, tuple[Any, ...] | None] = {}  # a path a module may be at: its signature then
        self._noted: set[tuple[str, str | None]] = set()  # (module, its file) whose search is recorded
        self._versioned: dict[str, bool] = {}  # an entry of the import path: the standard library's

    # -- beginning and end ----------------------------------------------------------------

    @classmethod
    def start(cls) -> Reads:
        """Begin recording, in a worker, before any code of the layer's runs. The hook stays
        (an audit hook cannot be removed), idle once `finish` is called."""
        reads = cls()
        environ = os.environ
        if not isinstance(environ, os._Environ):  # not the interpreter's: whose, and what it reads, unknown
            reads._refuse(Uncacheable.REPLACED)
            return reads
        reads._environment = dict(environ)
        reads._before = loaded_modules()
        reads._search_seen()
        keyed_by_version(_PACKAGE)  # what `_kind` asks, known before any layer's code runs
        in_standard_library(_PACKAGE)
        watched, event = _WATCHED, reads._event

        def hook(name: str, args: tuple[Any, ...]) -> None:
            if name in watched:
                event(name, args)

        try:
            sys.addaudithook(hook)
            sys.audit(_PROBE)
        except Exception:  # noqa: BLE001 - a hook already there (the user's sitecustomize) refused
            pass
        if not reads._probed:  # not added: nothing would be seen
            reads._refuse(Uncacheable.UNSEEN)
        looks = {
            "stat": reads._wrap(_stat, "stat", reads._looked_stat),
            "lstat": reads._wrap(_lstat, "lstat", reads._looked_lstat),
            "access": reads._wrap(_access, "access", reads._looked_access),
            "open": reads._wrap(_open, "open", reads._opened),
        }
        if _readlink is not None:
            looks["readlink"] = reads._wrap(_readlink, "readlink", reads._looked_link)
        reads._install(os, "environ", _RecordingEnviron(environ, reads._read_variable, reads._read_environment))
        for name, wrapper in looks.items():
            reads._install(os, name, wrapper)
        environb = getattr(os, "environb", None)
        if environb is not None:
            reads._install(os, "environb", _RecordingEnviron(environb, reads._read_variable, reads._read_environment))
        # Python 3.10's pathlib took os.stat and os.readlink once, for Path.stat, exists,
        # is_file, is_dir, is_symlink, readlink.
        accessor = getattr(sys.modules.get("pathlib"), "_NormalAccessor", None)
        if accessor is not None:
            originals = {"stat": _stat, "lstat": _lstat, "access": _access, "open": _open, "readlink": _readlink}
            for name, wrapper in looks.items():
                if vars(accessor).get(name, wrapper) is originals[name]:
                    reads._install(accessor, name, staticmethod(wrapper))
        return reads

    def _install(self, owner: Any, name: str, value: Any) -> None:
        original = vars(owner)[name]
        self._installed.append((owner, name, value, original))
        setattr(owner, name, value)
        if owner is os and callable(original):
            # `os.stat in os.supports_follow_symlinks` decides what shutil.copystat (copy2) and
            # os.walk do: the recording stat must answer as the real one does.
            for table_name in _SUPPORTS:
                table = getattr(os, table_name, None)
                if isinstance(table, set) and original in table:
                    table.add(value)
                    self._supported.append((table, value))

    def note_imports(self) -> None:
        """Record how the import path found each module imported since `start` (see the
        module's docstring: what would have been found before it is keyed as absent). The
        worker calls it once the layer's module is imported; `finish` calls it again for the
        modules imported later, inside `predict` or `backward`."""
        if not self._closed:
            self._guarded(self._note_imports)

    def finish(self, sources: Mapping[str, str]) -> Inputs:
        """Stop recording, put os's names back, and return the target's inputs: `sources` (the
        modules it imported, `sources.imported_sources`) with every file and variable it read."""
        self._closed = True
        for owner, name, value, original in self._installed:
            if vars(owner).get(name) is not value:  # the layer's own replacement: its reads went by
                self._refuse(Uncacheable.REPLACED)
            setattr(owner, name, original)
        for table, value in self._supported:
            table.discard(value)
        try:
            self._note_imports()
            self._note_failed_imports()
        except Exception:  # noqa: BLE001 - what it was, it was not recorded
            self._refuse(Uncacheable.UNSEEN)
        files = dict(sources)
        for path, first in list(self._files.items()):
            known = sources.get(path)
            state = self._state(path, first, known, frozenset(self._looks.get(path, ())))
            if state is None:
                continue
            if known is not None and contents_of(state) != known:  # a module's text that ran is not the file's now
                self._refuse(Uncacheable.CHANGED)
            files[path] = state
        variables = {name: variable_state(self._environment.get(name)) for name in self._names}
        if len(files) > MAX_SOURCES:  # its modules and its reads, each within the limit, together past it
            self._refuse(Uncacheable.TOO_MANY)
        kept = sorted(files.items())[: MAX_SOURCES + 1]  # one more says there were too many
        return Inputs(tuple(kept), tuple(sorted(variables.items())), self._refused)

    def _state(self, path: str, first: tuple[Any, ...] | None, known: str | None, looks: frozenset[Look]) -> str | None:
        """The state `path` is keyed on (`sources.file_state`, with the looks the layer made at
        it; `known`: its digest as a source, not taken twice where nothing else is asked), or
        None where the key covers it by a version; a file that changed since it was first read
        makes the target uncacheable."""
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError):
            real = path
        if keyed_by_version(real):  # layercheck's own files among them
            return None
        if is_pseudo_file(path) or first is None:
            self._refuse(Uncacheable.UNHASHABLE)
            return ""
        metadata = Look.STAT in looks or Look.LSTAT in looks
        if not _held(first, _signature(path), metadata):
            self._refuse(Uncacheable.CHANGED)
            return ""
        state = known if known and not looks else file_state(path, looks)
        if not state:
            self._refuse(Uncacheable.UNHASHABLE)
        elif not _held(first, _signature(path), metadata):  # written while it was hashed
            self._refuse(Uncacheable.CHANGED)
            return ""
        return state

    def _refuse(self, reason: Uncacheable) -> None:
        if self._refused is None:
            self._refused = reason

    # -- what the layer does --------------------------------------------------------------

    def _event(self, name: str, args: tuple[Any, ...]) -> None:
        """One watched audit event (`hook`)."""
        if name == _PROBE:
            self._probed = True
        elif not self._closed:
            self._guarded(self._on_event, name, args, _frame(2))  # 0: this method, 1: the hook

    def _on_event(self, name: str, args: tuple[Any, ...], caller: FrameType | None) -> None:
        if name == _IMPORT:
            self._sought_module(args, caller)
            return
        importing = caller is not None and caller.f_code.co_filename.endswith(_IMPORT_SYSTEM)
        if importing:  # importlib.import_module raises no "import" event: its reads of the module do
            self._search_seen()
        if name in _LISTINGS and importing:
            return
        if not self._layers(caller):
            return
        if name != "open":
            self._refuse(_REFUSED[name])
            return
        # open(path, mode, flags): a file opened only to be written is not read (one the layer
        # reads and writes changes, and `_state` finds it so).
        path, flags = args[0], args[2]
        if type(path) is int:  # a descriptor: its file was opened, and recorded, before
            return
        if type(flags) is int and flags & _ACCESS_MODE == os.O_WRONLY:
            return
        self._read_file(path, importing)

    def _wrap(self, original: Callable[..., Any], name: str, record: Callable[..., None]) -> Callable[..., Any]:
        """`original` (a function of os that takes a path), telling `record(path, dir_fd,
        keywords, caller)` of each call before it makes it."""
        guarded = self._guarded

        def wrapper(path: Any, *args: Any, dir_fd: int | None = None, **kwargs: Any) -> Any:
            if not self._closed:
                guarded(record, path, dir_fd, kwargs, _frame(1))
            return original(path, *args, dir_fd=dir_fd, **kwargs)

        wrapper.__name__ = wrapper.__qualname__ = name
        wrapper.__doc__ = original.__doc__
        return wrapper

    def _looked_stat(self, path: Any, dir_fd: int | None, kwargs: dict[str, Any], caller: FrameType | None) -> None:
        if kwargs.get("follow_symlinks", True):
            self._looked(path, dir_fd, caller, Look.STAT, None)  # exists, isdir: its contents' state says it
        else:
            self._looked(path, dir_fd, caller, Look.LSTAT, Look.LINK)

    def _looked_lstat(self, path: Any, dir_fd: int | None, kwargs: dict[str, Any], caller: FrameType | None) -> None:
        self._looked(path, dir_fd, caller, Look.LSTAT, Look.LINK)

    def _looked_access(self, path: Any, dir_fd: int | None, kwargs: dict[str, Any], caller: FrameType | None) -> None:
        look = Look.STAT if kwargs.get("follow_symlinks", True) else Look.LSTAT  # its permission bits
        self._looked(path, dir_fd, caller, look, look)

    def _looked_link(self, path: Any, dir_fd: int | None, kwargs: dict[str, Any], caller: FrameType | None) -> None:
        self._looked(path, dir_fd, caller, Look.TARGET, Look.TARGET)

    def _opened(self, path: Any, dir_fd: int | None, kwargs: dict[str, Any], caller: FrameType | None) -> None:
        """os.open: its audit event records the file, but not the folder a `dir_fd` names."""
        if dir_fd is not None and type(path) is not int and self._layers(caller):
            self._in_held_folder(path)

    def _looked(
        self, path: Any, dir_fd: int | None, caller: FrameType | None, look: Look | None, kind_only: Look | None
    ) -> None:
        """The layer's side looked at `path`: with `look`, or with `kind_only` where a function
        that tells only what the path is made the look (`_KIND_ONLY`)."""
        if type(path) is int:  # fstat: of a file opened, and recorded, before
            return
        layers, only_kind = self._whose(caller)
        if not layers or (dir_fd is not None and self._in_held_folder(path)):
            return
        self._read_file(path, look=kind_only if only_kind else look)

    def _in_held_folder(self, path: Any) -> bool:
        """Whether `path`, given with a `dir_fd`, is relative to the folder that descriptor
        holds open: which file that is the worker cannot tell, and the target is uncacheable."""
        if os.path.isabs(os.fsdecode(os.fspath(path))):  # dir_fd is not used
            return False
        self._refuse(Uncacheable.DESCRIPTOR)
        return True

    def _read_file(self, path: Any, importing: bool = False, look: Look | None = None) -> None:
        """Record `path` (its state when first read) and `look`, a look at it that did not
        open it; `importing`: the import system reads it."""
        text = path if type(path) is str else os.fsdecode(os.fspath(path))
        text = os.path.abspath(text)
        if importing and text.endswith(".pyc"):
            # The bytecode the import system keeps of a source (`spec.loader.exec_module` of a
            # helper loaded by path): it is used only while it matches the source's size and
            # time, so the source decides, and is keyed instead; a run that wrote the bytecode
            # would otherwise be uncacheable. A .pyc without a source is keyed itself.
            try:
                text = importlib.util.source_from_cache(text)
            except ValueError:
                pass
        if not self._record(text):
            return
        if look is not None:
            self._looks.setdefault(text, set()).add(look)

    def _record(self, path: str, first: Any = _NOT_YET) -> bool:
        """Record the absolute `path` with its signature now (or `first`, taken before);
        whether it is recorded (False: past the limit, the target made uncacheable)."""
        if path in self._files:
            return True
        if len(self._files) >= MAX_SOURCES:
            self._refuse(Uncacheable.TOO_MANY)
            return False
        self._files[path] = _signature(path) if first is _NOT_YET else first
        return True

    # -- the import system's searches -----------------------------------------------------

    def _search_seen(self) -> None:
        """Keep sys.path as it is now, made absolute, among the import paths searched: an
        entry a layer put there for one import and took out again is still known."""
        path = sys.path
        if type(path) is not list:  # not the import system's to search: what it finds is not known
            self._refuse(Uncacheable.UNSEEN)
            return
        last = self._last
        if len(path) == len(last) and all(entry is was for entry, was in zip(path, last)):
            return
        self._last = tuple(path)
        # The import system searches entries that are text (str subclasses too) and passes over others.
        search = tuple(os.path.abspath(str.__str__(entry)) for entry in self._last if issubclass(type(entry), str))
        if search not in self._searches:
            if len(self._searches) >= MAX_SEARCHES:
                self._refuse(Uncacheable.TOO_MANY)
                return
            self._searches[search] = None
        self._search = search

    def _sought_module(self, args: tuple[Any, ...], caller: FrameType | None) -> None:
        """An import statement (or `__import__`) looks for a module not loaded: before the
        search, the paths at which its top-level package may be found get their signatures,
        so that one made while the target runs is found changed; and a module of the layer's
        side that fails to import (an optional dependency it falls back from) is keyed as
        absent wherever it was looked for."""
        self._search_seen()
        name = args[0] if args else None
        if type(name) is not str:
            return
        top = name.partition(".")[0]
        modules = sys.modules
        if top in self._sought or (type(modules) is dict and top in modules):
            return
        if len(self._sought) >= MAX_SOURCES or len(self._early) >= _MAX_EARLY:
            self._refuse(Uncacheable.TOO_MANY)
            return
        self._sought[top] = (self._search, self._layers(caller))
        early = self._early
        for path in self._search_paths(top, self._search):
            if path not in early:
                early[path] = _signature(path)

    def _search_paths(self, name: str, folders: Iterable[str]) -> Iterator[str]:
        """Each path at which `name` would be found in `folders` (`_where`), but in the standard
        library's (the Python version covers what they hold). An entry that is no folder (a
        zip file, or nothing) stands for itself."""
        for folder in folders:
            versioned = self._versioned.get(folder)
            if versioned is None:
                versioned = self._versioned[folder] = in_standard_library(os.path.realpath(folder))
            if versioned:
                continue
            if _is_folder(folder):
                yield from _where(folder, name)
            else:
                yield folder

    def _note_imports(self) -> None:
        """`note_imports`: for each module loaded since `start` that the import path found
        (not one loaded by path), every path at which it would have been found first, in each
        import path searched, is recorded (where the import system found it, it was absent):
        for a top-level module, in the entries before the one it was found in, and in that one;
        for a namespace package (or a module inside one), in every entry."""
        self._search_seen()
        modules = sys.modules
        if type(modules) is not dict:
            self._refuse(Uncacheable.UNSEEN)
            return
        for name, module in list(modules.items()):
            if type(name) is not str or name in self._before:
                continue
            namespace = _module_dict(module)
            if namespace is None:
                continue
            file = namespace.get("__file__")
            file = os.path.abspath(file) if type(file) is str and file and "\0" not in file else None
            if (name, file) in self._noted:
                continue
            self._noted.add((name, file))
            *parents, last = name.split(".")
            # Inside a regular package the search is of its one folder, which the version of a
            # package of site-packages, or the user's own tree, decides: not recorded (see the
            # module's docstring). Inside namespace packages it is of every entry of the path.
            if not all(
                _is_namespace(_module_dict(modules.get(".".join(parents[: n + 1])))) for n in range(len(parents))
            ):
                continue
            if file is None and not _is_namespace(namespace):
                continue  # built in, frozen: not searched for on the path
            found = None if file is None else _found_in(file, last)
            if file is not None and found is None:
                continue  # loaded by path, under a name of its own
            searched = [[os.path.join(entry, *parents) for entry in search] for search in self._searches]
            if any(found in folders for folders in searched):
                # Found by the path: in a search that held its folder, the entries before it and its own.
                searched = [folders[: folders.index(found) + 1] for folders in searched if found in folders]
            # Else a namespace package (a module anywhere would be found first, a portion anywhere
            # joins it), or a module that a finder after the path found: every entry comes first.
            for folders in searched:
                for path in self._search_paths(last, folders):
                    if path != file:
                        self._record(path, self._early.get(path, _NOT_YET))

    def _note_failed_imports(self) -> None:
        """Each module the layer's side looked for with an import statement that is not loaded
        now (it failed to import: an optional dependency): absent wherever it was looked for."""
        modules = sys.modules
        for name, (search, layers) in self._sought.items():
            if layers and not (type(modules) is dict and name in modules):
                for path in self._search_paths(name, search):
                    self._record(path, self._early.get(path, _NOT_YET))

    # -- environment variables ------------------------------------------------------------

    def _read_variable(self, key: Any, caller: FrameType | None) -> None:
        """`_RecordingEnviron`: `key` looked up."""
        if not self._closed:
            self._guarded(self._on_variable, key, caller)

    def _on_variable(self, key: Any, caller: FrameType | None) -> None:
        if isinstance(key, str):
            name = str.__str__(key)  # a subclass's text, not its __str__
        elif isinstance(key, bytes):  # os.environb's
            name = os.fsdecode(bytes(memoryview(key)))
        else:
            return  # not a name: the lookup raises
        if name in self._names or not self._layers(caller):
            return
        if len(self._names) >= MAX_VARIABLES:
            self._refuse(Uncacheable.TOO_MANY)
            return
        self._names.add(name)

    def _read_environment(self, caller: FrameType | None) -> None:
        """`_RecordingEnviron`: every name seen at once."""
        if not self._closed:
            self._guarded(self._on_environment, caller)

    def _on_environment(self, caller: FrameType | None) -> None:
        if self._layers(caller):
            self._refuse(Uncacheable.ENVIRONMENT)

    def _guarded(self, record: Callable[..., None], *args: Any) -> None:
        """`record(*args)`, never raising into the layer's code: a failure makes the target
        uncacheable instead. What the recording itself does (a path resolved, a frame asked
        for) is not recorded: a call made while this thread records returns at once."""
        thread = get_ident()
        if thread in self._busy:
            return
        self._busy.add(thread)
        try:
            record(*args)
        except Exception:  # noqa: BLE001 - whatever it was, it was not recorded
            self._refuse(Uncacheable.UNSEEN)
        except BaseException:  # a signal handler of the layer's raised here: its exception goes on
            self._refuse(Uncacheable.UNSEEN)
            raise
        finally:
            self._busy.discard(thread)

    # -- whose call -----------------------------------------------------------------------

    def _layers(self, frame: FrameType | None) -> bool:
        """Whether the call that `frame` is in was the layer's: the first frame outward that is
        neither the standard library's, the import system's nor NumPy's or CuPy's decides. Only
        such frames (a thread of the standard library's, started by the layer) is the layer's."""
        return self._whose(frame)[0]

    def _whose(self, frame: FrameType | None) -> tuple[bool, bool]:
        """Whether the call that `frame` is in was the layer's (`_layers`), and whether a
        function that tells only what a path is (`_KIND_ONLY`) is among the frames passed over
        on the way."""
        kinds = self._kinds
        kind_only = False
        while frame is not None:
            code = frame.f_code
            if id(code) in _LOADING:
                frame = frame.f_back
                continue
            filename = code.co_filename
            kind = kinds.get(filename) if type(filename) is str else _LAYER
            if kind is None:
                kind = kinds[filename] = _kind(filename)
            if kind != _LIBRARY:
                return kind == _LAYER, kind_only
            kind_only = kind_only or id(code) in _KIND_ONLY
            frame = frame.f_back
        return True, kind_only


def _kind(filename: str) -> str:
    """Whose frames the code of `filename` makes (see `Reads._layers`)."""
    if filename.startswith("<frozen "):
        return _LIBRARY
    if filename.startswith("<"):  # <string>, <stdin>: compiled from text, by anyone
        return _LAYER
    path = os.path.abspath(filename)
    real = os.path.realpath(path)
    if any(name.startswith(root + os.sep) for root in _OWN_ROOTS for name in (path, real)):
        return _OWN
    return _LIBRARY if keyed_by_version(real) or in_standard_library(real) else _LAYER


def _frame(depth: int) -> FrameType | None:
    """The frame `depth` calls out from the caller's, or None where the stack is not so deep."""
    try:
        return sys._getframe(depth + 1)
    except ValueError:
        return None


class _RecordingEnviron(os._Environ[Any]):  # os.environ's (str) or os.environb's (bytes)
    """`os.environ` (or `os.environb`), sharing its data, that tells `read(name, frame)` of each
    name looked up and `read_all(frame)` of every way to see them all. `get`, `in`, `setdefault`,
    `pop` and `os.getenv` all look up through `__getitem__` (the frames of `collections.abc` and
    `os` between are the standard library's, passed over to find whose call it was)."""

    def __init__(
        self,
        original: Any,
        read: Callable[[Any, FrameType | None], None],
        read_all: Callable[[FrameType | None], None],
    ) -> None:
        super().__init__(
            original._data, original.encodekey, original.decodekey, original.encodevalue, original.decodevalue
        )
        self._read = read
        self._read_all = read_all

    def __getitem__(self, key: Any) -> Any:
        self._read(key, _frame(1))
        return super().__getitem__(key)

    def __iter__(self) -> Iterator[Any]:
        self._read_all(_frame(1))
        return super().__iter__()

    def __len__(self) -> int:
        self._read_all(_frame(1))
        return super().__len__()

    def __repr__(self) -> str:
        self._read_all(_frame(1))
        return super().__repr__()
