"""The user's modules, always compiled from their current source, with no bytecode written.

Python's own loader trusts a `__pycache__/*.pyc` whose recorded size and modification time
(whole seconds) match the source: a layer edited in the same second, or restored by a checkout
that keeps times, is then run from its old bytecode, and a wrong gradient passes. It also writes
`__pycache__/` beside the user's files. So every module of the user's tree is loaded by
`SourceOnlyLoader`, which compiles the source and never reads nor writes a cache: the module
`loading.import_module` is given, and through `UserSourceFinder` every module it imports
(siblings, packages of the user's, and modules imported later, inside `predict`). Modules of
the standard library, of site-packages and of layercheck itself keep Python's loader and its
bytecode: they are not the user's to edit, and compiling CuPy from source would cost seconds.

Why not the interpreter's switches: `sys.dont_write_bytecode` (PYTHONDONTWRITEBYTECODE) stops
the writing but Python still reads an existing stale `.pyc` (the bug above); `sys.pycache_prefix`
(PYTHONPYCACHEPREFIX) pointed at an empty folder would avoid both, but for every module of the
process (CuPy's hundreds recompiled in each worker, and written there), and both are
process-wide settings that an in-process caller would see changed.

A module the user's code loads by path (`importlib.util.spec_from_file_location(name, path)`,
then `exec_module`) gets Python's `SourceFileLoader` itself, from no finder: `install` also makes
that class compile a file of the user's tree from source (`_compile_user_files`); the rest of
the process's modules keep its bytecode.

The finder is installed by `loading.import_module`, for the rest of the process: `layercheck run`
imports user modules only in worker processes of one target each, whose layer runs after the
import, and may import more then. The Python API (`check_layer(obj)`) receives an object the
caller already imported and installs nothing.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import importlib.util
import os
import site
import sys
import sysconfig
from collections.abc import Callable, Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

from layercheck.contract.entries import EntryKind, inspect_entry

__all__ = [
    "LOADING_CODE",
    "MODULE_PREFIX",
    "SourceOnlyLoader",
    "UserSourceFinder",
    "compiled_digest",
    "install",
    "is_user_file",
]


# The name a user's module imported from its file is given (`loading.import_module`): one of
# its own, which no other file's module takes.
MODULE_PREFIX = "layercheck_user_"


class SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """Python's source loader without its bytecode cache: `get_code` compiles the file as it
    is now, whatever a `__pycache__` holds, and writes nothing. `source_digest`: the SHA-256
    (hex) of the source it compiled, once it has."""

    source_digest: str | None = None

    def get_code(self, fullname: str) -> CodeType:
        return _from_source(self, fullname)

    def get_data(self, path: str) -> bytes:
        """The file's bytes; a named pipe or device is refused before it is opened (reading a
        named pipe waits for a writer: the import would hang until the timeout)."""
        entry = inspect_entry(path)
        if entry.kind is not EntryKind.FILE:
            raise ImportError(f"{os.path.basename(path)} {entry.problem or 'is a folder'}", path=path)
        return super().get_data(path)

    def set_data(self, path: Any, data: Any, *, _mode: int = 0o666) -> None:
        """Never writes (SourceLoader writes the bytecode cache through this)."""


class UserSourceFinder:
    """A meta-path finder in front of `PathFinder`: the modules it finds in the user's tree
    (outside the library folders and layercheck) get `SourceOnlyLoader`; it declines the rest,
    which `PathFinder` then finds as it always does."""

    @classmethod
    def find_spec(
        cls, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        origin = getattr(getattr(target, "__spec__", None), "origin", None)
        if fullname.startswith(MODULE_PREFIX) and isinstance(origin, str) and is_user_file(origin):
            # A user's module imported under layercheck's name for it, found again from the
            # module itself: `importlib.reload` of it (PathFinder knows no such name).
            return importlib.util.spec_from_file_location(fullname, origin, loader=SourceOnlyLoader(fullname, origin))
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or type(spec.loader) is not importlib.machinery.SourceFileLoader:
            return None  # not found, a namespace package, an extension module, another loader
        if spec.origin is None or not is_user_file(spec.origin):
            return None
        spec.loader = SourceOnlyLoader(fullname, spec.origin)
        return spec

    @classmethod
    def invalidate_caches(cls) -> None:
        """PathFinder's caches are PathFinder's own: it is asked for them in its own turn."""


def _from_source(loader: importlib.machinery.SourceFileLoader, fullname: str) -> CodeType:
    """The module's code compiled from its file as it is now; nothing read from or written to
    a bytecode cache. The digest of the bytes compiled is kept on the loader, `source_digest`."""
    path = loader.get_filename(fullname)
    data = loader.get_data(path)
    # The result cache keys a verdict on the bytes that ran, not on the file as it is
    # once the checks are done (it may have been edited meanwhile): `running.sources`.
    # Kept on this loader (one per module), not in a dict of layercheck's, which the
    # integrity guard would see change while the layer's imports run.
    loader.source_digest = hashlib.sha256(data).hexdigest()  # type: ignore[attr-defined]
    return loader.source_to_code(data, path)


def install() -> None:
    """Put `UserSourceFinder` just in front of `PathFinder` (once): the finders before it
    (pytest's assertion rewriting, for one) keep their turn; and `_compile_user_files`."""
    _compile_user_files()
    meta_path = sys.meta_path
    if any(isinstance(finder, UserSourceFinder) or finder is UserSourceFinder for finder in meta_path):
        return
    try:
        index = meta_path.index(importlib.machinery.PathFinder)
    except ValueError:
        index = len(meta_path)
    meta_path.insert(index, UserSourceFinder())


def _compile_user_files() -> None:
    """Make Python's `SourceFileLoader` compile a file of the user's tree from its source (once
    per process): the loader `spec_from_file_location` gives a helper loaded by path would
    otherwise run a stale `.pyc` of it, and write one beside it. Other files keep its bytecode."""
    if importlib.machinery.SourceFileLoader.get_code is not _get_code:
        importlib.machinery.SourceFileLoader.get_code = _get_code  # type: ignore[method-assign, assignment]


# The `get_code` SourceFileLoader inherits (SourceLoader's): the same after the class is changed.
_python_get_code: Callable[[importlib.machinery.SourceFileLoader, str], CodeType | None] = next(
    vars(cls)["get_code"] for cls in importlib.machinery.SourceFileLoader.__mro__[1:] if "get_code" in vars(cls)
)


def _get_code(self: importlib.machinery.SourceFileLoader, fullname: str) -> CodeType | None:
    """`SourceFileLoader.get_code` once `_compile_user_files` ran."""
    if is_user_file(self.get_filename(fullname)):
        return _from_source(self, fullname)
    return _python_get_code(self, fullname)


# The frames of these run for whoever loads the module: what they read, that caller read
# (`running.reads` passes over them to find whose read it was).
LOADING_CODE = (_get_code.__code__, _from_source.__code__)


def compiled_digest(loader: object) -> str | None:
    """The digest of the source a module's loader compiled (`_from_source`), if it did; asked of
    this module's loaders only (no loader class of the layer's is asked anything)."""
    if type(loader) not in (SourceOnlyLoader, importlib.machinery.SourceFileLoader):
        return None
    digest = object.__getattribute__(loader, "__dict__").get("source_digest")
    return digest if type(digest) is str else None


def is_user_file(path: str | os.PathLike[str]) -> bool:
    """A file outside the standard library, site-packages and layercheck's own package."""
    real = os.path.realpath(path)
    return not any(real == root or real.startswith(root + os.sep) for root in _library_roots())


@functools.lru_cache(maxsize=1)
def _library_roots() -> tuple[str, ...]:
    """The folders whose modules are not the user's: the standard library, every site-packages
    (the environment's, the user's, Debian's dist-packages) and layercheck's package."""
    folders = {os.path.dirname(os.__file__), str(Path(__file__).resolve().parents[1])}
    paths = sysconfig.get_paths()
    folders.update(paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths)
    try:
        folders.update(site.getsitepackages())
    except AttributeError:  # an old virtualenv's site module
        pass
    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    if user_site:
        folders.add(user_site)
    folders.update(entry for entry in sys.path if os.path.basename(entry) in ("site-packages", "dist-packages"))
    return tuple(sorted({os.path.realpath(folder) for folder in folders if folder}))
