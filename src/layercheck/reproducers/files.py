"""The parent's side of `--repro DIR` (the worker's writer is `reproducers.evidence.evidence_writer`).

- `check_repro_dir`: DIR validated up front (a folder, or one that can be made; writable), a
  one-line UsageError otherwise. Nothing is created before the run starts.
- `ReproRun`: for one run, a staging folder inside DIR (same file system: a rename moves a
  file) with one folder per target; each target's worker writes `<check>.npz` there
  (`reproducers.evidence.evidence_writer`). When a target's report comes back, `attach` keeps only what it
  expects: for each failed check that has a reproducer script, a regular file (no link) of
  bounded size that reads as an `.npz` of that check's evidence. It then writes the script
  itself (layercheck's own code under a header of values the parent knows: the module's path,
  the class name, the constructor arguments), moves the `.npz` beside it and names the script
  in the check's `repro`. A worker's own claim of a reproducer is never taken. The staging
  folder is removed when the run ends, however it ends.
- Files are written inside DIR only (DESIGN.md section 7): each reaches its name by a rename
  within DIR (the script from a temporary file made there), which replaces a symlink planted
  at that name and never writes through it; no existing path is opened for writing. What a
  rename would replace must be a reproducer of layercheck's (a script with its header, an
  `.npz` of that check's evidence), a symlink or nothing: a file layercheck did not write,
  such as a layer being checked when DIR is the layers' folder, is left as it is, and the
  target's notes say that its reproducer was not written.
- File names: `<target>__<check>.py`, the target made safe (ASCII letters, digits and `_`,
  bounded, never starting with a digit: an importable module name for pytest) and unique in
  the run (a short hash of the label where two would meet, case-insensitively).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from layercheck.contract import conventions as conventions_module
from layercheck.errors import UsageError
from layercheck.reporters.files import staged_file
from layercheck.reproducers.evidence import EVIDENCE_FORMAT, META_KEY, ReproKind
from layercheck.results import CheckResult, Status, TargetReport
from layercheck.safetext import exception_text

__all__ = [
    "ReproDir",
    "ReproRun",
    "check_repro_dir",
    "safe_stems",
    "script_text",
]

_TEMPLATES = {kind: f"{kind.value}_script.py" for kind in ReproKind}

STEM_LIMIT = 60  # characters of a target's part of a file name
_MAX_NPZ = 4 << 30  # bytes: past this an .npz is not evidence layercheck wrote (arrays of a few layouts)
_MAX_META = 1 << 20  # bytes of the JSON metadata inside it
_ARRAY_NAME = re.compile(r"[xwv][0-9]{1,6}\.npy")
_HEADER = re.compile(r"# >>> the target \(written by layercheck\)\n.*?# <<< the target\n", re.S)
_SCRIPT_MARK = b"\n# >>> the target (written by layercheck)\n"  # in every script, near its top
_SCRIPT_PREFIX = 1 << 16  # bytes of a file read to find the mark (a script's header starts within 2 KB)
# A script's import of the harness, replaced by the harness's code: no reproducer imports layercheck.
_HARNESS = re.compile(r"# >>> the harness \(written by layercheck\)\n.*?# <<< the harness\n", re.S)
_HARNESS_START = "# >>> the harness (layercheck writes what follows into every reproducer)\n"
_CONVENTIONS_START = "# >>> the conventions (layercheck writes what follows into every reproducer)\n"


@dataclass(frozen=True)
class ReproDir:
    """DIR as the user gave it (the reports name the scripts below it so) and its absolute path."""

    given: str
    path: str


def check_repro_dir(given: str) -> ReproDir:
    """DIR, refused (UsageError, one line) when it is a file or cannot be written into."""
    if not given:
        raise UsageError("--repro: give a folder")
    path = os.path.abspath(given)
    existing = path
    while not os.path.lexists(existing):  # the nearest folder that exists: DIR is made there
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        what = "is not a folder" if existing == path else f"cannot be made: {existing} is not a folder"
        raise UsageError(f"--repro {given}: {what}")
    try:
        fd, probe = tempfile.mkstemp(dir=existing, prefix=".layercheck-repro-", suffix=".probe")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UsageError(f"--repro {given}: cannot write there: {exc.strerror or exc}") from None
    return ReproDir(given, path)


def safe_stems(labels: Sequence[str]) -> dict[str, str]:
    """Each label's part of its reproducers' file names: safe, bounded, unique in the run."""
    readable = {label: _readable(label) for label in labels}
    counts: dict[str, int] = {}
    for stem in readable.values():
        counts[stem.lower()] = counts.get(stem.lower(), 0) + 1
    stems = {}
    for label, stem in readable.items():
        if counts[stem.lower()] > 1:
            digest = hashlib.sha1(label.encode("utf-8", "surrogatepass")).hexdigest()[:8]
            stem = f"{stem}_{digest}"
        stems[label] = stem
    return stems


def _readable(label: str) -> str:
    """`sample_layers/prelu.py:PReLU` -> `prelu_PReLU`: the file's name and the class's, in
    ASCII letters, digits and single underscores."""
    tail = label.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    tail = re.sub(r"\.py(?=:|$)", "", tail)
    stem = re.sub(r"_+", "_", "".join(c if c.isascii() and c.isalnum() else "_" for c in tail)).strip("_")
    stem = stem[:STEM_LIMIT].rstrip("_")
    if not stem or stem[0].isdigit():
        stem = f"target_{stem}".rstrip("_")
    return stem


def script_text(kind: ReproKind, module: Path, folder: Path, name: str, args: Mapping[str, Any], label: str) -> str:
    """The reproducer of `kind`: layercheck's script under a header naming the target.

    The module's path is written relative to the script's folder where there is one (the two
    can move together), else absolute; every text is written by `ascii()`, a Python literal
    that no label or path can break out of."""
    template = (Path(__file__).with_name(_TEMPLATES[kind])).read_text(encoding="utf-8")
    try:
        path, relative = os.path.relpath(module, folder), True
    except ValueError:  # another drive (Windows): no relative path
        path, relative = str(module), False
    where = (
        "relative to this script's folder: move the two together, or edit it"
        if relative
        else "absolute: there is no path from this script's folder to it"
    )
    header = (
        "# >>> the target (written by layercheck)\n"
        f"# The layer's module, {where}.\n"
        f"MODULE_PATH = {ascii(path)}\n"
        f"MODULE_PATH_IS_RELATIVE = {relative}\n"
        f"TARGET_NAME = {ascii(name)}\n"
        "# The constructor's arguments (JSON), as layercheck gave them.\n"
        f"CONSTRUCTOR_ARGS = {ascii(json.dumps(args, allow_nan=True))}\n"
        f"TARGET_LABEL = {ascii(label)}\n"
        "# <<< the target\n"
    )
    text, replaced = _HEADER.subn(lambda _: header, template, count=1)
    if replaced != 1:
        raise RuntimeError(f"layercheck's {_TEMPLATES[kind]} has no target header")
    return _HARNESS.sub(lambda _: _harness_code(), text, count=1)


def _harness_code() -> str:
    """The code every reproducer shares (`contract.conventions`, then `harness_script`),
    each from its marker on."""
    text = Path(__file__).with_name("harness_script.py").read_text(encoding="utf-8")
    start = text.index(_HARNESS_START)
    conventions = Path(conventions_module.__file__).read_text(encoding="utf-8")
    begin = conventions.index(_CONVENTIONS_START)
    return (
        "# >>> the harness (written by layercheck: the same in every reproducer)\n"
        + conventions[begin + len(_CONVENTIONS_START) :]
        + "\n\n"
        + text[start + len(_HARNESS_START) :]
        + "# <<< the harness\n"
    )


@dataclass(frozen=True)
class _Target:
    """What the parent knows of one target's reproducers."""

    label: str
    module: Path
    name: str
    args: Mapping[str, Any]
    stem: str
    folder: str  # its staging folder


class ReproRun:
    """The staging of one run's reproducers (see the module docstring); a context manager
    that removes the staging folder when the run ends."""

    def __init__(
        self,
        where: ReproDir,
        targets: Sequence[tuple[str, str, str, Mapping[str, Any]]],
        scripts: Mapping[str, ReproKind],
    ):
        """`targets`: (label, module path, class or function name, constructor arguments) per job;
        `scripts`: the checks with a reproducer and the evidence of each (`layercheck.checks.SCRIPTS`)."""
        self.where, self.scripts = where, scripts
        try:
            os.makedirs(where.path, exist_ok=True)
            self.staging = tempfile.mkdtemp(dir=where.path, prefix=".layercheck-repro-")
        except OSError as exc:
            raise UsageError(f"--repro {where.given}: cannot write there: {exc.strerror or exc}") from None
        stems = safe_stems([label for label, *_ in targets])
        self.targets = []
        for index, (label, module, name, args) in enumerate(targets):
            folder = os.path.join(self.staging, str(index))
            os.mkdir(folder)
            self.targets.append(_Target(label, Path(module), name, dict(args), stems[label], folder))

    def __enter__(self) -> ReproRun:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)  # links in it are removed, never followed

    def folder(self, index: int) -> str:
        return self.targets[index].folder

    def attach(self, index: int, report: TargetReport) -> TargetReport:
        """Keep the reproducers of target `index`'s failed checks and name them in `report`."""
        target = self.targets[index]
        for check in report.checks:
            check.repro = None  # the worker's word is never taken
        for check in report.checks:
            kind = self.scripts.get(check.name)
            if check.status is not Status.FAILED or kind is None:
                continue
            evidence = os.path.join(target.folder, f"{check.name}.npz")
            if not _is_evidence(evidence, check.name, kind):
                continue
            try:
                self._keep(target, check, kind, evidence)
            except _NotOurs as exc:
                report.notes.append(
                    f"--repro: the reproducer of {check.name} was not written: {exc.path} is not a file "
                    "layercheck wrote, and is left as it is"
                )
            except OSError as exc:
                report.notes.append(
                    f"--repro: the reproducer of {check.name} could not be written: {exception_text(exc)}"
                )
        return report

    def _keep(self, target: _Target, check: CheckResult, kind: ReproKind, evidence: str) -> None:
        """Move the evidence to `DIR/<stem>__<check>.npz` and write the script beside it, both
        by renames within DIR (see the module docstring), or neither.

        Raises:
            _NotOurs: a file layercheck did not write has one of the two names.
            OSError: a file could not be written.
        """
        base = f"{target.stem}__{check.name}"
        script = os.path.join(self.where.path, base + ".py")
        data = os.path.join(self.where.path, base + ".npz")
        for path, ours in ((script, _is_script), (data, lambda path: _is_evidence(path, check.name, kind))):
            if not _replaceable(path, ours):
                raise _NotOurs(os.path.join(self.where.given, os.path.basename(path)))
        text = script_text(kind, target.module, Path(self.where.path), target.name, target.args, target.label)
        staged = staged_file(self.where.path, base + ".py", text)
        try:
            os.replace(evidence, data)
            try:
                os.replace(staged, script)
            except OSError:
                os.unlink(data)
                raise
        except BaseException:
            try:
                os.unlink(staged)
            except OSError:
                pass
            raise
        check.repro = os.path.join(self.where.given, base + ".py")


class _NotOurs(Exception):
    """A reproducer's name is held by a file layercheck did not write (`path`, as DIR was given)."""

    def __init__(self, path: str):
        super().__init__(path)
        self.path = path


def _replaceable(path: str, ours: Callable[[str], bool]) -> bool:
    """Whether a rename onto `path` destroys nothing of the user's: nothing is there, or a
    symlink (the link is replaced, what it points to is not touched), or a regular file that
    `ours` recognizes as layercheck's; not a file of the user's, a folder or a pipe."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return True
    if stat.S_ISLNK(info.st_mode):
        return True
    return stat.S_ISREG(info.st_mode) and ours(path)


def _is_script(path: str) -> bool:
    """A reproducer script layercheck wrote: its header's mark near the top, which a user's
    later edits of the script keep."""
    # Not through a link, and without waiting on a pipe put there since it was looked at.
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        with os.fdopen(os.open(path, flags), "rb") as f:
            return _SCRIPT_MARK in f.read(_SCRIPT_PREFIX)
    except OSError:
        return False


def _is_evidence(path: str, check: str, kind: ReproKind) -> bool:
    """A regular file (not a link) of bounded size holding the arrays and the metadata of
    `check`'s evidence, as `Evidence.write` writes it; read without running any of it."""
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_NPZ:
            return False
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            names = {m.filename for m in members}
            meta = f"{META_KEY}.npy"
            if meta not in names or any(n != meta and not _ARRAY_NAME.fullmatch(n) for n in names):
                return False
            if archive.getinfo(meta).file_size > _MAX_META:
                return False
        with np.load(path, allow_pickle=False) as loaded:
            data = json.loads(str(loaded[META_KEY]))
    except Exception:  # noqa: BLE001 - not an archive, not JSON, unreadable: not evidence
        return False
    return (
        type(data) is dict
        and data.get("format") == EVIDENCE_FORMAT
        and data.get("kind") == kind.value
        and data.get("check") == check
    )
