"""What a path names on the file system, before anything opens it.

A target is a folder or a `.py` file, but a path can name anything: a named pipe (opening it
for reading waits for a writer, so an import would block until the timeout), a socket, a
device, a folder whose name ends in `.py`, a symlink to nothing, a symlink loop, a file that
cannot be read. `inspect_entry` tells them apart with `os.stat` alone, so that each is
refused at once, in one line, and `module_files` walks a folder without opening any of them.
"""

from __future__ import annotations

import enum
import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Entry", "EntryKind", "ModuleFile", "inspect_entry", "module_files"]


class EntryKind(enum.Enum):
    FILE = "file"  # a regular file that can be read
    FOLDER = "folder"
    MISSING = "missing"  # nothing there, not even a symlink
    BROKEN = "broken"  # meant as a file or folder, but cannot be one: a dangling symlink, a loop, no permission
    SPECIAL = "special"  # a named pipe, socket or device: never a module


@dataclass(frozen=True)
class Entry:
    kind: EntryKind
    problem: str = ""  # for every kind but FILE and FOLDER: what it is, as a predicate ("is a symlink loop")
    special: str = ""  # for SPECIAL: the kind of file ("a named pipe (FIFO)")


# The file types that are no module, and what to call them.
_SPECIAL = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def inspect_entry(path: str | os.PathLike[str]) -> Entry:
    """What `path` is, from `os.stat` (following symlinks) and `os.lstat`; opens nothing."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return _unreachable(path, exc)
    if stat.S_ISDIR(mode):
        return Entry(EntryKind.FOLDER)
    for test, name in _SPECIAL:
        if test(mode):
            return Entry(EntryKind.SPECIAL, f"is {name}, not a file", name)
    if not stat.S_ISREG(mode):
        return Entry(EntryKind.SPECIAL, "is not a regular file", "a special file")
    if not os.access(path, os.R_OK):
        return Entry(EntryKind.BROKEN, "cannot be read (permission denied)")
    return Entry(EntryKind.FILE)


def _unreachable(path: str | os.PathLike[str], exc: OSError) -> Entry:
    """Why `os.stat` failed: a loop, a symlink to nothing, nothing at all, or the system's reason."""
    if exc.errno == errno.ELOOP:
        return Entry(EntryKind.BROKEN, "is a symlink loop")
    if os.path.islink(path):
        if exc.errno == errno.ENOENT:
            return Entry(EntryKind.BROKEN, f"is a symlink to {os.readlink(path)!r}, which does not exist")
        return Entry(EntryKind.BROKEN, f"is a symlink that cannot be followed ({os.strerror(exc.errno or 0)})")
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return Entry(EntryKind.MISSING, "does not exist")
    return Entry(EntryKind.BROKEN, f"cannot be read ({os.strerror(exc.errno or 0).lower()})")


@dataclass(frozen=True)
class ModuleFile:
    """A `.py` file found below a folder, or (with `problem`) one that looks like a module but
    cannot be read: the run reports it at once, rather than silently losing a layer."""

    path: Path
    problem: str | None = None


def module_files(folder: Path) -> list[ModuleFile]:
    """The `.py` files below a folder, sorted; hidden and dunder files and folders left out.

    Symlinks to folders are not followed (no loop, no file listed twice through two paths);
    named pipes, sockets and devices are skipped, as pytest skips them; a symlink to the same
    file as another is listed once; a `.py` name that is a dangling symlink, a symlink loop or
    a file without read permission is listed with its problem.
    """
    found: list[ModuleFile] = []

    def unreadable(exc: OSError) -> None:  # a folder below that cannot be listed hides its layers
        found.append(ModuleFile(Path(exc.filename), f"cannot be read ({os.strerror(exc.errno or 0).lower()})"))

    for root, folders, names in os.walk(folder, onerror=unreadable):
        folders[:] = [name for name in folders if not name.startswith((".", "__"))]
        for name in names:
            if name.endswith(".py") and not name.startswith((".", "__")):
                path = Path(root, name)
                entry = inspect_entry(path)
                if entry.kind is EntryKind.FILE:
                    found.append(ModuleFile(path))
                elif entry.kind is EntryKind.BROKEN:
                    found.append(ModuleFile(path, entry.problem))
    return _once_each(sorted(found, key=lambda module: module.path))


def _once_each(files: list[ModuleFile]) -> list[ModuleFile]:
    """One of the files that are one file on disk (a symlink beside its target): the one that
    is no symlink, else the first."""
    chosen: dict[str, Path] = {}
    for module in files:
        if module.problem is None:
            real = os.path.realpath(module.path)
            best = chosen.get(real)
            if best is None or (os.path.islink(best) and not os.path.islink(module.path)):
                chosen[real] = module.path
    kept = set(chosen.values())
    return [module for module in files if module.problem is not None or module.path in kept]
