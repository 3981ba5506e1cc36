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

The finder is installed by `loading.import_module`, for the rest of the process: `layercheck run`
imports user modules only in worker processes of one target each, whose layer runs after the
import, and may import more then. The Python API (`check_layer(obj)`) receives an object the
caller already imported and installs nothing.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import os
import site
import sys
import sysconfig
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

from layercheck.contract.entries import EntryKind, inspect_entry

__all__ = ["SourceOnlyLoader", "UserSourceFinder", "install", "is_user_file"]


class SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """Python's source loader without its bytecode cache: `get_code` compiles the file as it
    is now, whatever a `__pycache__` holds, and writes nothing. `source_digest`: the SHA-256
    (hex) of the source it compiled, once it has."""

    source_digest: str | None = None

    def get_code(self, fullname: str) -> CodeType:
        path = self.get_filename(fullname)
        data = self.get_data(path)
        # The result cache keys a verdict on the bytes that ran, not on the file as it is
        # once the checks are done (it may have been edited meanwhile): `running.sources`.
        # Kept on this loader (one per module), not in a dict of layercheck's, which the
        # integrity guard would see change while the layer's imports run.
        self.source_digest = hashlib.sha256(data).hexdigest()
        return self.source_to_code(data, path)

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


def install() -> None:
    """Put `UserSourceFinder` just in front of `PathFinder` (once): the finders before it
    (pytest's assertion rewriting, for one) keep their turn."""
    meta_path = sys.meta_path
    if any(isinstance(finder, UserSourceFinder) or finder is UserSourceFinder for finder in meta_path):
        return
    try:
        index = meta_path.index(importlib.machinery.PathFinder)
    except ValueError:
        index = len(meta_path)
    meta_path.insert(index, UserSourceFinder())


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
