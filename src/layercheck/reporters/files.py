"""Report files (`--json`, `--junit`), written as pytest writes its `--junitxml`.

- Through a symlink: the file it points to gets the report, the link stays a link.
- To a device or a pipe (`/dev/stdout`, a FIFO): written there, never replaced by a file.
- A regular file (or a new one) is replaced atomically: written next to it, then renamed
  over it, so that an interrupted run never leaves half a report where a whole one was.
  The new file has the mode the old one had, or what the user's umask gives (0644 under
  the usual 022), as `open(path, "w")` would.
- Every error is raised (`OSError`), a full disk included: it surfaces when the data is
  flushed, so every write is flushed and closed before it counts as done.
- `-` (`STDOUT`) is standard output: the report alone is written there (the command prints
  its console report on standard error then), so that `--json - | jq` reads one document.

`check_report_paths` finds what can be known before the run (a folder, no permission, two
reports on one file, a report that would overwrite one of the run's inputs), so that a
report that cannot be written does not cost a whole run, and no run destroys what it reads;
`check_no_input_overwritten` is its check of inputs alone, for the files known only once the
run is over (the modules the layers imported, the data files they read).
Two paths name one file when they reach the same inode (through symlinks, `..`, hard links),
whatever their spelling. Where a path leads is decided once, by `destination`, for the writer
and for every check: `nope/../a.json` leads to `a.json` (as `os.path.realpath` and pytest's
`--junitxml` read it, though the system finds no `nope/` to go up from), so the checks see
the file the writer would replace.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from layercheck.errors import UsageError

__all__ = [
    "STDOUT",
    "Destination",
    "Input",
    "check_no_input_overwritten",
    "check_report_paths",
    "destination",
    "same_file",
    "staged_file",
    "to_stdout",
    "write_report",
]

STDOUT = "-"


def to_stdout(*paths: str | os.PathLike[str] | None) -> bool:
    """Whether one of the report paths is standard output (`-`)."""
    return any(path is not None and os.fspath(path) == STDOUT for path in paths)


def _umask() -> int:
    """The process's umask (reading it means setting it; set back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write_to(fd: int, data: bytes) -> None:
    with os.fdopen(fd, "wb") as f:  # closes fd; the error of a full disk shows on flush
        f.write(data)
        f.flush()


@dataclass(frozen=True)
class Destination:
    """Where a report given a path goes (`destination`)."""

    path: str  # what is opened (a device, a pipe) or replaced (a regular file, or a new one)
    info: os.stat_result | None  # what is there now, through symlinks; None: nothing yet

    @property
    def replaced(self) -> bool:
        """Whether the report replaces a file there (a regular one, or none yet) rather than
        being written into what is there (a device, a pipe)."""
        return self.info is None or stat.S_ISREG(self.info.st_mode)

    @property
    def identity(self) -> tuple[int, int] | None:
        """The (device, inode) of the regular file there, else None."""
        if self.info is None or not stat.S_ISREG(self.info.st_mode):
            return None
        return (self.info.st_dev, self.info.st_ino)


def destination(path: str | os.PathLike[str]) -> Destination:
    """Where a report written to `path` goes: the one answer of `write_report` and of every
    check of `check_report_paths`, so that nothing is checked but what is written.

    A device or a pipe is opened by the name given: `/dev/stdout` resolves to
    `/proc/self/fd/1` and on to a pipe that has no name to open. Anything else is the file at
    `os.path.realpath(path)`: symlinks followed, and `..` taken after the name before it even
    where that name is nothing yet (`nope/../a.json` is `a.json`), which is where the file is
    written.

    Raises:
        OSError: the path cannot be looked at (not a folder on the way, no permission).
        ValueError: a NUL in the name.
    """
    try:
        info: os.stat_result | None = os.stat(path)  # through symlinks
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        return Destination(os.fspath(path), info)
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
    except FileNotFoundError:
        info = None
    return Destination(real, info)


def write_report(path: str | os.PathLike[str], text: str) -> None:
    """Write `text` (UTF-8) to `path` by the rules of the module docstring.

    Raises:
        OSError: the file cannot be written (no permission, no space left, a read-only
            file system); nothing at `path` is changed when it was a regular file.
    """
    data = text.encode("utf-8", "backslashreplace")
    if os.fspath(path) == STDOUT:
        sys.stdout.flush()  # whatever Python buffered goes first
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    where = destination(path)
    if not where.replaced:  # a device or a pipe (a folder: the error opening it says so)
        _write_to(os.open(where.path, os.O_WRONLY), data)
        return
    info, real = where.info, where.path
    folder = os.path.dirname(real) or "."
    os.makedirs(folder, exist_ok=True)
    mode = stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~_umask()
    try:
        tmp = _staged(folder, os.path.basename(real), data, mode)
    except PermissionError:
        if info is None:
            raise
        # A writable file in a folder we may not create files in: written in place.
        _write_to(os.open(real, os.O_WRONLY | os.O_TRUNC), data)
        return
    try:
        os.replace(tmp, real)
    except BaseException:
        _remove(tmp)
        raise


def staged_file(folder: str | os.PathLike[str], name: str, text: str) -> str:
    """A new file in `folder` holding `text` (UTF-8), with the mode `open(path, "w")` gives
    under the user's umask; its path, to be renamed over `folder/name` with `os.replace`,
    which replaces whatever has that name (a symlink planted there included) and never
    follows it. Named `.NAME.*.tmp`: hidden, so never a target of a run over the folder.

    Raises:
        OSError: it cannot be written; nothing is left behind then.
    """
    return _staged(folder, name, text.encode("utf-8", "backslashreplace"), 0o666 & ~_umask())


def _staged(folder: str | os.PathLike[str], name: str, data: bytes, mode: int) -> str:
    """A new hidden file `.NAME.*.tmp` in `folder` holding `data`, with `mode`; its path. Nothing
    is left behind when it cannot be written (OSError)."""
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        _write_to(fd, data)  # closes fd, whatever happens
        os.chmod(tmp, mode)  # mkstemp makes 0600
    except BaseException:
        _remove(tmp)
        raise
    return tmp


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _problem(where: Destination) -> str | None:
    """Why the report's `destination` cannot take it, found by trying (permission bits say
    little to root, nothing of a read-only file system); else None. Nothing is truncated: an
    existing file or device is opened to append, a missing one is created in its folder (made
    as the report would make it) and removed again."""
    info, target = where.info, where.path
    if info is not None and stat.S_ISDIR(info.st_mode):
        return "it is a folder"
    try:
        if info is not None:
            if stat.S_ISFIFO(info.st_mode):  # opening a pipe waits for a reader
                return None if os.access(target, os.W_OK) else "permission denied"
            os.close(os.open(target, os.O_WRONLY | os.O_APPEND))
            return None
        folder = os.path.dirname(target) or "."
        os.makedirs(folder, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(target)}.", suffix=".probe")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


@dataclass(frozen=True)
class Input:
    """A file a command reads (a file being checked, the config, a baseline, a shard being
    merged, a module the layers imported), which no output path may name: the output would
    overwrite it."""

    path: str | os.PathLike[str]  # where it is read from
    what: str  # what it is, after its name in a message: "a file being checked"
    shown: str | None = None  # its name in a message (None: `path`), as the user gave it
    # The options that may write it all the same: `--update-baseline` refreshes the file that
    # `--baseline` reads (the baseline is read before the run, and written after it).
    rewritten_by: frozenset[str] = frozenset()


def _identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """The (device, inode) of the regular file a report given `path` would replace
    (`destination`), else None: a path to nothing, a folder, a device or a pipe names no file
    that a report replaces."""
    try:
        return destination(path).identity
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return None


def same_file(path: str | os.PathLike[str], inputs: Sequence[Input]) -> Input | None:
    """The input that `path` names (the same regular file, however spelled), or None."""
    identity = _identity(path)
    if identity is None:
        return None
    return next((item for item in inputs if _identity(item.path) == identity), None)


def check_no_input_overwritten(paths: Mapping[str, str | os.PathLike[str] | None], inputs: Sequence[Input]) -> None:
    """Refuse (UsageError) a report path that names one of `inputs` (but by the input's
    `rewritten_by` options): "--json F would overwrite SHOWN, WHAT: give --json another file".

    Args:
        paths: option name (`--json`) to path; None where the report is not asked for.
        inputs: the files the command reads.
    """
    given = {
        option: os.fspath(path) for option, path in paths.items() if path is not None and os.fspath(path) != STDOUT
    }
    identities = {option: _identity(path) for option, path in given.items()}
    if not any(identities.values()):  # no report replaces a file there now: none is an input
        return
    for item in inputs:  # each input looked at once: after a run they may be thousands
        identity = _identity(item.path)
        if identity is None:
            continue
        for option, path in given.items():
            if identities[option] == identity and option not in item.rewritten_by:
                shown = os.fspath(item.path) if item.shown is None else item.shown
                raise UsageError(f"{option} {path} would overwrite {shown}, {item.what}: give {option} another file")


def check_report_paths(paths: Mapping[str, str | os.PathLike[str] | None], inputs: Sequence[Input] = ()) -> None:
    """Refuse (UsageError) report paths that name an input, that cannot be written, and two
    reports on one file, each path taken where `destination` leads it.

    Args:
        paths: option name (`--json`) to path; None where the report is not asked for.
        inputs: the files the command reads: no report may overwrite one (except an input's
            `rewritten_by` options).
    """
    given = {option: os.fspath(path) for option, path in paths.items() if path is not None}
    seen: dict[Any, str] = {}
    for option, path in given.items():
        if not path:
            raise UsageError(f"{option}: give a file name")
        if path == STDOUT:
            if STDOUT in seen:
                raise UsageError(f"{seen[STDOUT]} and {option} both name standard output (-); give one a file")
            seen[STDOUT] = option
            continue
        check_no_input_overwritten({option: path}, inputs)
        try:
            where = destination(path)
        except OSError as exc:
            raise UsageError(f"{option} {path}: cannot write the report: {exc.strerror or exc}") from None
        except ValueError:
            raise UsageError(f"{option} {path!r}: cannot write the report: the name holds a NUL character") from None
        problem = _problem(where)
        if problem is not None:
            raise UsageError(f"{option} {path}: cannot write the report: {problem}")
        real = os.path.realpath(where.path)
        if real == os.devnull:
            continue
        key = where.identity or real  # an existing file by its inode: a hard link is one file
        if key in seen:
            raise UsageError(f"{seen[key]} and {option} name the same file ({path}); give each report its own")
        seen[key] = option


def read_json_file(path: str | os.PathLike[str], where: str, what: str, max_bytes: int, missing: str = "") -> Any:
    """A JSON file layercheck wrote (a report read back, a baseline), read within `max_bytes`.

    Raises:
        UsageError: one line, `where: ...`: no such file (then `missing`, a hint), unreadable,
            over the size, not UTF-8, not JSON (with the line and column), each saying it is
            not `what` ("a JSON report of layercheck").
    """
    try:
        with open(path, "rb") as f:
            raw = f.read(max_bytes + 1)
    except FileNotFoundError:
        raise UsageError(f"{where}: no such file{missing}") from None
    except OSError as exc:
        raise UsageError(f"{where}: cannot read it: {exc.strerror or exc}") from None
    if len(raw) > max_bytes:
        raise UsageError(f"{where}: over {max_bytes // 2**20} MB, not {what}")
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{where}: not {what} (not UTF-8 text)") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{where}: not {what} (not JSON: line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise UsageError(f"{where}: not {what} (nested too deeply)") from None
