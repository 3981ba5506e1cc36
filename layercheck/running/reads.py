"""What a target reads while it runs, beside the modules it imports (the result cache, DESIGN.md
section 7): "Whatever a layer reads decides whether a cached verdict still holds".

`Reads.start()` begins recording in a worker, before the layer's module is imported;
`Reads.finish(sources)` ends it after the checks and returns the target's `sources.Inputs`. In
between, everything the layer's side does is seen through three things:

- an audit hook (`sys.addaudithook`). Its "open" event is raised by `open`, `io.open_code` (what
  every import and `spec.loader.exec_module` read a module with), `os.open` and everything built
  on them (`np.load`, `np.fromfile`, `pathlib.Path.read_text`): each file opened for reading is
  recorded, and keyed on its contents. The bytecode the import system reads
  (`__pycache__/*.pyc`) stands for its source, which Python checks it against. What cannot be
  keyed makes the target uncacheable (`sources.Uncacheable`): listing a folder (`os.listdir`,
  `os.scandir`, `glob`, `os.walk`), starting a process (`subprocess`, `os.system`, `os.fork`,
  `os.exec*`, `os.posix_spawn`), the network (`socket.connect`, name lookups, `urllib`), native
  code reached through `ctypes`, `sqlite3`, the Windows registry, extended attributes.
- `os.stat` and `os.access`, wrapped (and, on Python 3.10, the `os.stat` pathlib took for
  itself): the look that `os.path.exists`, `os.path.isfile`, `pathlib.Path.exists` and their
  kin take. A layer that loads weights only if a file is there depends on that file being
  absent as much as on its contents once it is there.
- `os.environ` (and `os.environb`), replaced by a mapping that records each name read (`[]`,
  `get`, `in`, `os.getenv`, `setdefault`, `pop`). Reading them all (iterating, `copy()`,
  `dict(os.environ)`, `len`, `repr`) makes the target uncacheable rather than keyed on the whole
  environment: that holds `PWD`, `SHLVL`, a CI job's run id, which differ at every run, so the
  entry could never be found again, and its digests would be of every secret there.

**Whose read it is.** The worker runs layercheck as well as the layer, and layercheck reads files
too (the layer's source, its own tracebacks' lines): recording those would key every target on
them, or make it uncacheable. Each event is given to whoever called in: the stack is walked
outward from it, over the standard library's frames, the import system's and NumPy's and CuPy's
(which act for their caller), to the first frame of other code. Code in layercheck's package
means layercheck's own read, ignored; anything else (the layer's module, its helpers, a
third-party package it called, a thread it started) means the layer's. Frames are told apart by
their code's file, not by module names a layer's helper could share with the standard library.

**What is keyed.** A file on its state when the run ends (the SHA-256 of its bytes, or absent, or
a folder: `sources.file_state`), provided it is still as it was when first read (its type, inode,
size and modification and change times): a file the layer, or anyone, wrote while the target ran
makes it uncacheable, as it does a file of /proc, /sys or /dev, a pipe, or one past the size
limit. A file only written is not read: a log the layer appends to leaves it cacheable. A
variable on its value when the worker started, which is the parent's (`isolation._worker_main`
copies it): a variable the layer set before reading it keys on the parent's value, which only
checks it again more often. Files that the key covers by a version are left out (the standard
library's, NumPy's, CuPy's, layercheck's own: `sources.keyed_by_version`).

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

**Not seen.** What does not go through Python: a C extension that calls `fopen` or `getenv` itself
(HDF5 through h5py, a BLAS reading its variables when it loads), and `posix.environ`, the copy of
the environment the interpreter took at its start. A module that failed to import (an optional
dependency) is not recorded either: installing it later does not check the layer again.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from stat import S_IFDIR, S_IFMT
from threading import get_ident
from types import FrameType
from typing import Any

from layercheck.running.sources import (
    MAX_SOURCES,
    MAX_VARIABLES,
    Inputs,
    Uncacheable,
    file_state,
    in_standard_library,
    is_pseudo_file,
    keyed_by_version,
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
_WATCHED = frozenset({"open", _PROBE, *_REFUSED})
# The import system lists each folder of sys.path it searches (FileFinder's cache of names): what
# an import finds there is a module, recorded as a source, not a listing of the layer's.
_IMPORT_SYSTEM = ("<frozen importlib._bootstrap_external>", f"importlib{os.sep}_bootstrap_external.py")
_ACCESS_MODE = getattr(os, "O_ACCMODE", 3)
# Frames, by the file of their code: whose call a read is.
_OWN, _LIBRARY, _LAYER = "own", "library", "layer"
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # layercheck/
_OWN_ROOTS = tuple({_PACKAGE, os.path.realpath(_PACKAGE)})  # as imported, and through any link
_GONE: tuple[Any, ...] = ()  # the signature of a path where nothing is
# The originals, bound before any layer runs: the recorder's own looks must not go through the
# wrappers it installs (nor through a replacement a layer installed).
_stat = os.stat
_access = os.access


def _signature(path: str) -> tuple[Any, ...] | None:
    """What says a file did not change between two looks: its type, and, for a file, its
    inode, size and modification and change times (the change time cannot be set back: a write
    that keeps the size and puts the modification time back still moves it). `_GONE` where
    nothing is; None where it cannot be looked at."""
    try:
        info = _stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return _GONE
    except (OSError, ValueError):
        return None
    kind = S_IFMT(info.st_mode)
    if kind == S_IFDIR:  # a folder: keyed on being one, whatever is added to it
        return (kind,)
    return (kind, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class Reads:
    """The recorder of one target's worker (see the module's docstring). Its state lives on the
    instance, never in a dict of the module's, which the integrity guard would see change."""

    def __init__(self) -> None:
        self._files: dict[str, tuple[Any, ...] | None] = {}  # absolute path: its first signature
        self._names: set[str] = set()  # environment variables read
        self._refused: Uncacheable | None = None
        self._closed = False
        self._probed = False
        self._busy: set[int] = set()  # the threads recording now (`_guarded`)
        self._kinds: dict[str, str] = {}  # a code file: whose frames
        self._environment: dict[str, str] = {}  # as the worker started
        # (owner, name, what this put there, what was there): os's names, pathlib's on 3.10
        self._installed: list[tuple[Any, str, Any, Any]] = []

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
        stat = reads._looking(_stat, "stat")
        reads._install(os, "environ", _RecordingEnviron(environ, reads._read_variable, reads._read_environment))
        reads._install(os, "stat", stat)
        reads._install(os, "access", reads._looking(_access, "access"))
        environb = getattr(os, "environb", None)
        if environb is not None:
            reads._install(os, "environb", _RecordingEnviron(environb, reads._read_variable, reads._read_environment))
        # Python 3.10's pathlib took os.stat once, for Path.stat, exists, is_file, is_dir.
        accessor = getattr(sys.modules.get("pathlib"), "_NormalAccessor", None)
        if accessor is not None and vars(accessor).get("stat") is _stat:
            reads._install(accessor, "stat", staticmethod(stat))
        return reads

    def _install(self, owner: Any, name: str, value: Any) -> None:
        self._installed.append((owner, name, value, vars(owner)[name]))
        setattr(owner, name, value)

    def finish(self, sources: Mapping[str, str]) -> Inputs:
        """Stop recording, put os's names back, and return the target's inputs: `sources` (the
        modules it imported, `sources.imported_sources`) with every file and variable it read."""
        self._closed = True
        for owner, name, value, original in self._installed:
            if vars(owner).get(name) is not value:  # the layer's own replacement: its reads went by
                self._refuse(Uncacheable.REPLACED)
            setattr(owner, name, original)
        files = dict(sources)
        for path, first in list(self._files.items()):
            state = self._state(path, first, sources.get(path))
            if state is None:
                continue
            if files.get(path, state) != state:  # a module's text that ran is not the file's now
                self._refuse(Uncacheable.CHANGED)
            files[path] = state
        variables = {name: variable_state(self._environment.get(name)) for name in self._names}
        if len(files) > MAX_SOURCES:  # its modules and its reads, each within the limit, together past it
            self._refuse(Uncacheable.TOO_MANY)
        kept = sorted(files.items())[: MAX_SOURCES + 1]  # one more says there were too many
        return Inputs(tuple(kept), tuple(sorted(variables.items())), self._refused)

    def _state(self, path: str, first: tuple[Any, ...] | None, known: str | None) -> str | None:
        """The state `path` is keyed on (`sources.file_state`; `known`: its digest as a source,
        not taken twice), or None where the key covers it by a version; a file that changed
        since it was first read makes the target uncacheable."""
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError):
            real = path
        if keyed_by_version(real):  # layercheck's own files among them
            return None
        if is_pseudo_file(path) or first is None:
            self._refuse(Uncacheable.UNHASHABLE)
            return ""
        if _signature(path) != first:
            self._refuse(Uncacheable.CHANGED)
            return ""
        state = known or file_state(path)
        if not state:
            self._refuse(Uncacheable.UNHASHABLE)
        elif _signature(path) != first:  # written while it was hashed
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
        importing = caller is not None and caller.f_code.co_filename.endswith(_IMPORT_SYSTEM)
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

    def _looking(self, original: Callable[..., Any], name: str) -> Callable[..., Any]:
        """`original` (os.stat, os.access), recording the path it looks at for the layer."""
        guarded, looked = self._guarded, self._looked

        def look(path: Any, *args: Any, dir_fd: int | None = None, **kwargs: Any) -> Any:
            if not self._closed and type(path) is not int:  # fstat: of a file opened, and recorded, before
                guarded(looked, path, dir_fd, _frame(1))
            return original(path, *args, dir_fd=dir_fd, **kwargs)

        look.__name__ = look.__qualname__ = name
        look.__doc__ = original.__doc__
        return look

    def _looked(self, path: Any, dir_fd: int | None, caller: FrameType | None) -> None:
        if not self._layers(caller):
            return
        if dir_fd is not None and not os.path.isabs(os.fsdecode(os.fspath(path))):
            self._refuse(Uncacheable.UNHASHABLE)  # relative to a folder it holds open: where?
            return
        self._read_file(path)

    def _read_file(self, path: Any, importing: bool = False) -> None:
        """Record `path` (its state when first read); `importing`: the import system reads it."""
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
        if text in self._files:
            return
        if len(self._files) >= MAX_SOURCES:
            self._refuse(Uncacheable.TOO_MANY)
            return
        self._files[text] = _signature(text)

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
        kinds = self._kinds
        while frame is not None:
            filename = frame.f_code.co_filename
            kind = kinds.get(filename) if type(filename) is str else _LAYER
            if kind is None:
                kind = kinds[filename] = _kind(filename)
            if kind != _LIBRARY:
                return kind == _LAYER
            frame = frame.f_back
        return True


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


class _RecordingEnviron(os._Environ):  # os.environ's (str) or os.environb's (bytes)
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
