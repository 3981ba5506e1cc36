"""What the pytest plugin (`layercheck.pytest_plugin`) runs: the layercheck side of it, imported
only once `--layercheck` is given (it pulls in NumPy and the checks).

Each check of a target is an item, and a target is checked once for all of its items that
pytest runs (`check`, with those checks only), through `run_batch` as `layercheck run
path.py:Name` checks it: in a worker process, with its timeout and memory cap, its layouts from
the config or the class's `example_layout`. One target at a time rather than one batch for the
session: pytest decides which items run and when (`-k`, `--lf`, `-x` stops at the first failure
with nothing more checked, pytest-xdist hands each of its workers its own items), and the
worker costs a tenth of a second per target, most of it importing the module (measured: a
one-target `run_batch` of sample_layers/prelu.py takes 0.2-0.25 s, 0.12 s of it the checks).
"""

from __future__ import annotations

import dataclasses
import os
import shlex
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from enum import Enum, auto
from pathlib import Path
from typing import Any

from layercheck.checks import REGISTRY
from layercheck.contract.entries import module_files
from layercheck.contract.loading import NO_CONVENTION, Convention
from layercheck.errors import TargetError, UsageError
from layercheck.reporters.console import Verbosity
from layercheck.reporters.text import target_text
from layercheck.results import CheckResult, Status, TargetReport
from layercheck.running.batch import Batch, Found, Request, checks_of_target, discover_files, run_batch
from layercheck.running.cache import cache_folder
from layercheck.safetext import visible
from layercheck.sandbox import INTEGRITY_CHECK, default_memory_cap
from layercheck.settings.config import Config, load_config
from layercheck.settings.options import DEFAULT_TIMEOUT, Settings, settings_from_command_line

__all__ = ["Item", "PluginRun", "Verdict", "label_of", "target_scheduling", "target_scope"]

# How many files are imported at once to find their layers (each in its own worker).
_DISCOVERY_JOBS = max(1, min(4, os.cpu_count() or 1))


class Verdict(Enum):
    """What a target's report makes of one of its pytest items: a check, or the whole target
    (a target that could not be checked)."""

    PASSED = auto()  # the check passed; the whole target: every check passed or was skipped
    SKIPPED = auto()  # the check was skipped (its reason: no GPU, no state to check...)
    INCOMPLETE = auto()  # it could not decide (the whole target: some check could not): skipped
    FAILED = auto()  # it failed or has no result (the target could not be checked); strict: undecided


@dataclass(frozen=True)
class PluginRun:
    """The plugin's settings, validated once at `pytest_configure`."""

    settings: Settings = Settings()  # from the ini options (layercheck_timeout)
    config: Config | None = None  # --layercheck-config
    config_path: str | None = None  # as given, for the reproducing command
    strict: bool = False  # layercheck_strict: an incomplete check fails the item
    max_memory: int | None = None
    cache: Path | None = None  # the result cache's folder (`running.cache`); None: none
    discovered: dict[Path, tuple[Found, ...] | TargetReport] = field(default_factory=dict)

    @classmethod
    def load(cls, config_path: str | None, timeout: str | None, strict: bool, no_cache: bool = False) -> PluginRun:
        """Raises UsageError (one line) for a bad config file or ini value."""
        names = tuple(REGISTRY)
        config = load_config(config_path, check_names=names) if config_path else None
        given = {"timeout": timeout.strip() if timeout and timeout.strip() else None}
        settings = settings_from_command_line(given, check_names=names, names={"timeout": "layercheck_timeout"})
        # pytest-xdist runs that many pytest processes, each checking one target at a time.
        workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")
        memory = default_memory_cap(int(workers) if workers.isdigit() else 1)
        # The result cache `layercheck run` keeps (its entries are written atomically, one file
        # each: pytest-xdist's workers share it safely).
        return cls(settings, config, config_path, strict, memory, cache_folder(no_cache, None))

    @property
    def timeout(self) -> float:
        """Seconds per target (and per file imported to find its layers)."""
        for settings in (self.settings, self.config.defaults if self.config else Settings()):
            if settings.timeout is not None:
                return float(settings.timeout)
        return DEFAULT_TIMEOUT

    def config_targets(self) -> list[tuple[Path, tuple[str, ...] | None]]:
        """The config's targets, by file: the names given (None: every layer the file defines)."""
        files: dict[Path, tuple[str, ...] | None] = {}
        for entry in self.config.targets if self.config else ():
            paths = [m.path for m in module_files(entry.path)] if entry.path.is_dir() else [entry.path]
            for path in paths:
                named = files.get(path, ())
                if entry.name is None or named is None:
                    files[path] = None
                elif entry.name not in named:
                    files[path] = (*named, entry.name)
        return list(files.items())

    def discover(self, files: Sequence[Path]) -> None:
        """Find the layers of `files` not yet looked at, each imported in a worker (in parallel)."""
        new = [path for path in dict.fromkeys(files) if path not in self.discovered]
        if not new:
            return
        labelled = [(path, label_of(path)) for path in new]
        found = discover_files(labelled, self.timeout, _DISCOVERY_JOBS, self.max_memory)
        # The config's targets a folder's discovery does not find as they are checked: function
        # pairs, and classes checked by a convention (DESIGN.md section 11), found by name.
        named: dict[Path, list[tuple[str, Convention]]] = {}
        by_path = dict(zip(new, found))
        for entry in self.config.targets if self.config else ():
            known = by_path.get(entry.path)
            if entry.name is None or not isinstance(known, tuple):
                continue
            if entry.convention != NO_CONVENTION or all(target.name != entry.name for target in known):
                named.setdefault(entry.path, []).append((entry.name, entry.convention))
        if named:
            again = [(path, label) for path, label in labelled if path in named]
            results = discover_files(again, self.timeout, _DISCOVERY_JOBS, self.max_memory, named)
            for (path, _), result in zip(again, results):
                found[new.index(path)] = result
        self.discovered.update(zip(new, found))

    def checks_of(self, target: Found) -> tuple[str, ...] | TargetReport:
        """The checks of `target` that are items, in report order, then the integrity item
        (whether the module or layer replaced what layercheck computes with: every run looks,
        and reports it only when it did); or, when it cannot be checked (no layout; settings
        that leave no check), the report that says why."""
        try:
            return (*checks_of_target(self._batch(), target), INTEGRITY_CHECK)
        except (UsageError, TargetError) as exc:
            return TargetReport(target.label, target.kind, error=str(exc), source=target.source)

    def check(self, path: Path, name: str, checks: Collection[str] | None = None) -> TargetReport:
        """Check one target as `layercheck run path.py:name` does, `checks` only (None: all):
        every item's run goes through here (where the result cache may answer instead)."""
        request = Request(label_of(path, name), path.resolve(), name)
        # The integrity look is part of every run; with it alone asked for, the checks run.
        named = None if checks is None else frozenset(checks) - {INTEGRITY_CHECK}
        batch = self._batch(request, named or None)
        try:
            return run_batch(batch).targets[0]
        except UsageError as exc:  # the settings select no check for this kind of target
            return TargetReport(request.label, error=str(exc))

    def _batch(self, request: Request | None = None, checks: frozenset[str] | None = None) -> Batch:
        return Batch(
            requests=() if request is None else (request,),
            config=self.config,
            settings=self.settings,
            max_memory=self.max_memory,
            cache=self.cache,
            only_checks=checks,
        )

    def item(self, report: TargetReport, check: str | None = None, *, carries_tampering: bool = False) -> Item:
        """What `report` makes of the item of `check` (None: the item of the whole target).

        A target's run that ended in an error fails every item, whatever results it sent
        before; a check the report has no result for fails too: nothing unchecked passes.
        `carries_tampering`: the target's integrity item is not among those pytest runs (`-k`,
        `--lf`), so that this item fails too where the module or layer replaced what
        layercheck computes with, which would otherwise go unreported."""
        if check is None:
            if report.fails(self.strict):
                return Item(Verdict.FAILED, None, list(report.checks))
            verdict = Verdict.INCOMPLETE if report.status is Status.INCOMPLETE else Verdict.PASSED
            return Item(verdict, None, list(report.checks))
        result = next((c for c in report.checks if c.name == check), None)
        tampering = next((c for c in report.checks if c.name == INTEGRITY_CHECK and c.status != Status.PASSED), None)
        shown = [c for c in (result, tampering if carries_tampering else None) if c is not None]
        if report.error is not None:
            # The run did not end as a run does (the worker died, timed out, sent what was not
            # its report): the results it sent first are not believed, as `layercheck run`
            # reports the target as not checked.
            return Item(Verdict.FAILED, None, shown)
        if result is None:
            intact = check == INTEGRITY_CHECK  # the look found nothing
            return Item(Verdict.PASSED if intact else Verdict.FAILED, None, shown)
        if carries_tampering and tampering is not None:
            return Item(Verdict.FAILED, tampering, shown)
        status = Status(result.status)
        if status is Status.PASSED:
            return Item(Verdict.PASSED, result, shown)
        if status is Status.SKIPPED:
            return Item(Verdict.SKIPPED, result, shown)
        if status is Status.INCOMPLETE and not self.strict:
            return Item(Verdict.INCOMPLETE, result, shown)
        return Item(Verdict.FAILED, result, shown)

    def command(self, report: TargetReport, item: Item, check: str | None = None) -> str:
        """The command that checks this target (`check` alone, when given) as the item did."""
        words = ["layercheck", "run", report.target]
        for layout in report.layouts:
            words += ["--layout", str(layout)]
        if self.config_path:
            words += ["--config", self.config_path]
        if check is not None and check != INTEGRITY_CHECK:  # not a check that --checks names
            words += ["--checks", check]
        if self.settings.timeout is not None:
            words += ["--timeout", f"{self.settings.timeout:g}"]
        if self.strict and any(c.status == Status.INCOMPLETE for c in item.shown):
            words.append("--strict")
        return shlex.join(words)

    def undecided(self, report: TargetReport, item: Item) -> str:
        """Why an item that could not decide is skipped: its check's message (the whole
        target: which of its checks could not decide)."""
        if item.result is not None:
            return f"incomplete: {visible(item.result.message)}"
        names = [c.name for c in report.checks if c.status == Status.INCOMPLETE]
        return f"incomplete: {visible(report.target)}: could not decide {', '.join(visible(n) for n in names)}"

    def headline(self, report: TargetReport, item: Item, check: str | None = None) -> str:
        """One line of what went wrong, for pytest's short summary: the message of the result
        that decided the item, else the target's error; for the whole target, its first failed
        (or, strict, undecided) check and its message, as the recap says it."""
        if item.result is not None:
            return visible(item.result.message)
        if report.error is not None:
            return visible(report.error)
        if check is not None:
            return "the target's run reported no result for this check"
        failed = report.failures or tuple(c for c in report.checks if c.status == Status.INCOMPLETE)
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        return f"{visible(failed[0].name)} - {visible(failed[0].message)}{more}" if failed else ""

    def failure_text(
        self,
        report: TargetReport,
        item: Item,
        *,
        color: bool,
        width: int | None,
        verbose: bool,
        check: str | None = None,
    ) -> str:
        """The reproducing command, then the console's text for the target: with `check`, for
        the results its item shows (or the target's error, when the check has no result)."""
        verbosity = Verbosity.VERBOSE if verbose else Verbosity.NORMAL
        shown = report
        if check is not None:
            duration = sum(c.duration_s for c in item.shown) if item.shown else report.duration_s
            shown = dataclasses.replace(report, checks=list(item.shown), duration_s=duration)
        lines = [self.command(report, item, check), target_text(shown, color=color, width=width, verbosity=verbosity)]
        if shown.status is Status.INCOMPLETE:  # failed by strictness alone
            incomplete = shown.summary[Status.INCOMPLETE.value]
            lines.append(f"layercheck_strict: {incomplete} incomplete check(s) fail this item")
        elif check is not None and report.error is None and not shown.checks:
            lines.append(self.headline(report, item, check))
        return "\n".join(lines)


@dataclass(frozen=True)
class Item:
    """What a target's report makes of one of its items: its verdict, the result that decided
    it (None: the whole target's, or no result), and the results its failure shows."""

    verdict: Verdict
    result: CheckResult | None
    shown: list[CheckResult]


def label_of(path: Path, name: str | None = None) -> str:
    """`path.py:Name` as the command line takes it: relative to the working folder when below it."""
    try:
        shown = str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        shown = str(path.resolve())
    return shown if name is None else f"{shown}:{name}"


def target_scheduling(config: Any, log: Any) -> Any:
    """pytest-xdist's `loadscope` scheduling, with a scope per target for layercheck's items
    (`path.py::Name::check`) and a scope per test for any other test (as `load` sends them)."""
    from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped,unused-ignore]

    class TargetScheduling(LoadScopeScheduling):  # type: ignore[misc,unused-ignore]
        def _split_scope(self, nodeid: str) -> str:
            return target_scope(nodeid)

    return TargetScheduling(config, log)


def target_scope(nodeid: str) -> str:
    """The scope of an item for `target_scheduling`: its target's node id for a check's item
    (`path.py::Name::check`), else the item's own."""
    head, _, last = nodeid.rpartition("::")
    return head if (last in REGISTRY or last == INTEGRITY_CHECK) and "::" in head else nodeid
