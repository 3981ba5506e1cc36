"""A baseline of accepted failures (`layercheck run --baseline FILE`, `--update-baseline FILE`).

`--update-baseline FILE` records every failure of the run; `--baseline FILE` reports a failure
it records as `known` (a status of its own, never `passed`) and fails the run (exit 1) only on
the others. An entry is keyed on the target and the check, never on line numbers or messages
(DESIGN.md section 9): a failure whose message changes (another element, another error size)
stays known; the same check failing on another target does not.

The file is JSON, sorted, one check a line, so that a review of it reads as a list:

    {
      "version": 1,
      "about": "...",
      "failures": {
        "layers/dense.py:Dense": ["backward_is_repeatable", "gradients_are_numerically_correct"],
        "layers/broken.py": ["target"]
      }
    }

- A target is keyed by its label as the reports name it, relative to the working folder
  (an absolute label below it is made relative, `./a.py` is `a.py`): a baseline recorded in
  one checkout holds in a CI clone elsewhere, run from the same folder of the repository.
- `TARGET_ERROR` ("target", the name JUnit reports give that testcase) stands for the target
  that could not be checked at all (its module fails to import, its worker crashed): any error
  of that target is then known, whatever its reason.
- An entry whose check now passes, or whose target is now checked without an error, is
  stale: the run says so in one line (as eslint reports unused suppressions) and does not fail
  for it; `--update-baseline` drops it. An entry of a target or check the run did not check
  (another shard, `--checks`) is not stale: nothing says it would pass.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from layercheck.errors import UsageError
from layercheck.reporters.files import read_json_file, write_report
from layercheck.reporters.junit import ERROR_CASE
from layercheck.results import Report, Status, TargetReport
from layercheck.runinfo import baseline_digest
from layercheck.safetext import bounded, visible

__all__ = ["TARGET_ERROR", "VERSION", "Baseline", "Entry", "failures_of", "label_key", "write_baseline"]

VERSION = 1
TARGET_ERROR = ERROR_CASE  # the pseudo-check of a target that could not be checked ("target")
_ABOUT = (
    "layercheck baseline: the failures `layercheck run --baseline THIS_FILE` accepts (reported as known), "
    "keyed on target (its label in the reports, relative to the working folder) and check; the check "
    f'"{TARGET_ERROR}" stands for a target that could not be checked. Written by --update-baseline.'
)
_MAX_BYTES = 16 * 1024 * 1024  # a baseline of 100,000 entries is a few MB; past this it is not one


@dataclass(frozen=True, order=True)
class Entry:
    target: str  # `label_key` of the target's label
    check: str  # a check's name, or TARGET_ERROR

    def __str__(self) -> str:
        return f"{self.target} :: {self.check}"


def label_key(label: str) -> str:
    """A target's label as a baseline keys it: relative to the working folder when the label
    is an absolute path below it, normalized (`./a.py` and `a.py` are one target)."""
    path = Path(label)
    if path.is_absolute():
        try:
            path = path.relative_to(Path.cwd())
        except ValueError:  # outside the working folder: only this absolute path names it
            pass
    return os.path.normpath(path).replace(os.sep, "/")


def failures_of(targets: Iterable[TargetReport]) -> list[Entry]:
    """The entries of every failure of `targets` (known ones too), sorted, each once."""
    found = set()
    for target in targets:
        key = label_key(target.target)
        if target.error is not None:
            found.add(Entry(key, TARGET_ERROR))
        for check in target.checks:
            if check.status in (Status.FAILED, Status.KNOWN):
                found.add(Entry(key, check.name))
    return sorted(found)


def write_baseline(path: str | os.PathLike[str], report: Report) -> int:
    """Record the report's failures in `path` (written as report files are: atomically); how
    many entries it holds.

    Raises:
        OSError: the file cannot be written.
    """
    entries = failures_of(report.targets)
    failures: dict[str, list[str]] = {}
    for entry in entries:
        failures.setdefault(entry.target, []).append(entry.check)
    data = {"version": VERSION, "about": _ABOUT, "failures": failures}
    write_report(path, json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    return len(entries)


@dataclass(frozen=True)
class Baseline:
    """The entries of a baseline file, and the file's name for messages."""

    entries: frozenset[Entry]
    source: str

    @property
    def digest(self) -> str:
        """A fingerprint of the entries (`RunInfo.baseline`): shards run against different
        baselines do not merge."""
        return baseline_digest((e.target, e.check) for e in self.entries)

    @classmethod
    def load(cls, path: str, check_names: Iterable[str]) -> Baseline:
        """Read and validate a baseline file.

        Raises:
            UsageError: one line naming the file and what is wrong with it.
        """
        where = f"--baseline {path}"
        missing = f" (record one with --update-baseline {path})"
        data = read_json_file(path, where, "a baseline layercheck wrote", _MAX_BYTES, missing)
        return cls(frozenset(_entries(data, where, frozenset(check_names) | {TARGET_ERROR})), path)

    def apply(self, target: TargetReport) -> TargetReport:
        """Mark the target's failures that the baseline records as known (in place; applied
        twice, the same); the target, for chaining."""
        key = label_key(target.target)
        if target.error is not None and Entry(key, TARGET_ERROR) in self.entries:
            target.error_known = True
        for check in target.checks:
            if check.status == Status.FAILED and Entry(key, check.name) in self.entries:
                check.status = Status.KNOWN
        return target

    def stale(self, report: Report) -> list[Entry]:
        """Entries that no longer fail: the target was checked without an error (a
        TARGET_ERROR entry), or its check passed, and no target of that label failed it."""
        failing = set(failures_of(report.targets))
        passed: set[Entry] = set()
        for target in report.targets:
            key = label_key(target.target)
            if target.error is None:
                passed.add(Entry(key, TARGET_ERROR))
            passed.update(Entry(key, c.name) for c in target.checks if c.status == Status.PASSED)
        return sorted((self.entries & passed) - failing)

    def stale_line(self, report: Report) -> str | None:
        """One line naming the stale entries, or None."""
        stale = self.stale(report)
        if not stale:
            return None
        n = len(stale)
        names = "; ".join(visible(str(entry)) for entry in stale)
        return (
            f"baseline {visible(self.source)}: {n} {'entry no longer fails' if n == 1 else 'entries no longer fail'} "
            f"({names}); --update-baseline {visible(self.source)} drops {'it' if n == 1 else 'them'}"
        )


def _entries(data: Any, where: str, check_names: frozenset[str]) -> list[Entry]:
    if type(data) is not dict:
        raise UsageError(f"{where}: not a baseline (a JSON object with version, failures)")
    unknown = sorted(set(data) - {"version", "about", "failures"})
    if unknown:
        raise UsageError(f"{where}: unknown key {_shown(unknown[0])} (allowed: version, about, failures)")
    if data.get("version") != VERSION or type(data.get("version")) is not int:
        raise UsageError(
            f"{where}: version {_shown(data.get('version'))}; this layercheck reads baselines of version {VERSION}"
        )
    failures = data.get("failures")
    if type(failures) is not dict:
        raise UsageError(f"{where}: failures: {_shown(failures)} is not a mapping of target to check names")
    entries = []
    for target, checks in failures.items():
        if not target:
            raise UsageError(f"{where}: failures: a target is an empty name")
        if type(checks) is not list or not all(type(check) is str for check in checks):
            raise UsageError(f"{where}: failures: {_shown(target)}: {_shown(checks)} is not a list of check names")
        for check in checks:
            if check not in check_names:
                raise UsageError(
                    f"{where}: failures: {_shown(target)}: {_shown(check)} is not a check "
                    f"(`layercheck list-checks` names them; {TARGET_ERROR!r} is a target that could not be checked)"
                )
            entries.append(Entry(label_key(target), check))
    return entries


def _shown(value: Any) -> str:
    return visible(bounded(repr(value), 100))
