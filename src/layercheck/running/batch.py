"""Batch runs (`layercheck run`): every target found and checked in its own worker process.

1. discover: each file named, and each `.py` file below a folder named, is imported in a
   worker that lists the layers and operations it defines (a module that hangs, crashes or
   raises at import is that file's error; the parent never imports user code);
2. plan: each target gets its layouts (command line, else config, else `example_layout`),
   constructor arguments and options (command line over config target over config defaults);
   a target without a usable layout is reported with how to give one;
3. shard: keep the targets of shard K of N (round robin over the sorted labels, as the
   reports name them: `runinfo.shard_of`, which `merge` checks each shard's targets by);
4. check: each target in its own worker, `jobs` at a time; the reports come back in target
   order whatever the order in which the workers finish (or, asked, as each finishes).

`-k` leaves out targets and checks while planning (`keywords`); `-x` / `--maxfail` stops the
checking (`stopping`); a target that runs long is said to (`watching`).
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from layercheck.checks import SCRIPTS, Check
from layercheck.clock import perf_counter
from layercheck.contract.entries import EntryKind, inspect_entry, module_files
from layercheck.contract.layout import Layout, parse_layout, parse_layouts
from layercheck.contract.loading import (
    NO_CONVENTION,
    Convention,
    Target,
    discover,
    import_module,
    load_targets,
    missing_target,
    named_target,
    parse_target_spec,
)
from layercheck.devices import gpu_status
from layercheck.environment import Environment, collect
from layercheck.errors import TargetError, UsageError
from layercheck.interrupts import Interrupted
from layercheck.reproducers.evidence import evidence_writer
from layercheck.reproducers.files import ReproDir, ReproRun
from layercheck.results import (
    Cause,
    CheckResult,
    Kind,
    MalformedReport,
    Origin,
    Report,
    Source,
    TargetReport,
    cause_of,
    plain,
)
from layercheck.runinfo import RunInfo, Versions, fingerprint, shard_of
from layercheck.running.cache import ResultCache, cache_key
from layercheck.running.keywords import Keyword
from layercheck.running.reads import Reads
from layercheck.running.runner import look_once_freed, run_target, select_checks, unexpected
from layercheck.running.sources import (
    INPUTS,
    Inputs,
    SourceRecord,
    Uncacheable,
    imported_sources,
    loaded_modules,
    split_inputs,
)
from layercheck.running.stopping import MaxFail
from layercheck.running.watching import StillRunning, watch_of
from layercheck.safetext import bounded, exception_text, safe_repr, visible
from layercheck.sandbox import INTEGRITY_CHECK, Guard, Outcome, run_jobs
from layercheck.settings.config import Config, TargetEntry
from layercheck.settings.options import (
    DEFAULT_TIMEOUT,
    Options,
    Settings,
    merge_settings,
    options_from,
    parse_input_layouts,
)
from layercheck.userframes import exception_summary, stack_location, user_traceback

__all__ = [
    "Batch",
    "CheckJob",
    "DiscoverJob",
    "Discovered",
    "Found",
    "Request",
    "checks_of_target",
    "discover_files",
    "requests_from_config",
    "requests_from_specs",
    "run_batch",
    "shard",
]


@dataclass(frozen=True)
class Request:
    """One TARGET of the command line, or one entry of the config's `targets`."""

    label: str  # the path as shown in reports
    path: Path  # absolute
    name: str | None = None  # the class or function after `path.py:`
    entry: TargetEntry | None = None  # the config entry it comes from


@dataclass(frozen=True)
class Batch:
    """What to check and how: everything `layercheck run` validated up front."""

    requests: tuple[Request, ...]
    config: Config | None = None
    layouts: tuple[Layout, ...] = ()  # --layout: for every target, over the config's
    args: Mapping[str, Any] = field(default_factory=dict)  # --arg: over the config's
    settings: Settings = Settings()  # command-line options: over the config's
    jobs: int = 1
    max_memory: int | None = None  # bytes per worker; None: no cap
    shard: tuple[int, int] | None = None  # (K, N): the K-th of N shards, from 1
    # Files are read as a folder's are: one that defines no layer is passed over, not an error
    # (a pre-commit hook hands over every .py file a commit touches).
    only_layers: bool = False
    repro: ReproDir | None = None  # --repro DIR: reproducers of the failed checks written there
    keyword: Keyword | None = None  # -k: the targets and checks it selects (`keywords`)
    maxfail: MaxFail | None = None  # -x / --maxfail N
    cache: Path | None = None  # the result cache's folder (`running.cache`); None: no cache
    backward: str | None = None  # --backward: the backward of the function pair each target names
    # Of each target, only these of the checks its settings select (the pytest plugin's items
    # that pytest runs); None: all of them.
    only_checks: frozenset[str] | None = None


def requests_from_specs(specs: Sequence[str]) -> list[Request]:
    """Command-line TARGETs: `path.py`, `path.py:Name` or a folder (UsageError if missing)."""
    requests = []
    for spec in specs:
        path, name = parse_target_spec(spec)
        entry = inspect_entry(path)  # opens nothing: a named pipe would block the import
        if entry.kind is EntryKind.MISSING:
            raise UsageError(missing_target(spec))
        if entry.kind is EntryKind.SPECIAL:
            raise UsageError(f"target {spec!r} is {entry.special}, not a .py file or a folder")
        if entry.kind is EntryKind.BROKEN:
            raise UsageError(f"target {spec!r} {entry.problem}")
        if entry.kind is EntryKind.FILE and path.suffix != ".py":
            raise UsageError(f"target {spec!r} is not a .py file or a folder")
        label = spec if name is not None else str(path)
        requests.append(Request(label, path.resolve(), name))
    return requests


def requests_from_config(config: Config) -> list[Request]:
    return [
        Request(_display(entry.path) + (f":{entry.name}" if entry.name else ""), entry.path, entry.name, entry)
        for entry in config.targets
    ]


def _display(path: Path) -> str:
    """A path relative to the working folder when it is below it, else absolute."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


# -- jobs (run in worker processes) -------------------------------------------------------


@dataclass(frozen=True)
class Discovered:
    """What a discovery worker finds: the targets of one file (each a dict of its `name`,
    `kind`, `example` layouts as text or None, and `example_error`), or why there are none
    (`cause`: the import ran out of memory or called sys.exit).

    It crosses to the parent as plain data (`to_dict`), which the parent reads back with
    `from_dict`, trusting none of it: the module was imported in the worker, and may have
    written that data itself.
    """

    found: tuple[dict[str, Any], ...] = ()
    error: str | None = None
    traceback: str = ""
    cause: Cause | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = plain(
            {"found": self.found, "error": self.error, "traceback": self.traceback, "cause": self.cause}
        )
        return data

    @classmethod
    def from_dict(cls, data: Any, name: str | None = None) -> Discovered:
        """`to_dict`'s data read back; `name`: the one target asked for, if one was.

        Raises:
            MalformedReport: what does not fit, in one line.
        """
        if type(data) is not dict or set(data) != set(cls().to_dict()):
            raise MalformedReport(f"it is {_shown(data)}, not what the worker makes")
        error, traceback, cause, found = data["error"], data["traceback"], data["cause"], data["found"]
        if error is not None and type(error) is not str:
            raise MalformedReport(f"its error is {_shown(error)}, not a string")
        if type(traceback) is not str:
            raise MalformedReport(f"its traceback is {_shown(traceback)}, not a string")
        if cause is not None and (type(cause) is not str or cause not in {c.value for c in Cause}):
            raise MalformedReport(f"its cause is {_shown(cause)}")
        if type(found) is not list:
            raise MalformedReport(f"its targets are {_shown(found)}, not a list")
        return cls(
            tuple(_found(target, name) for target in found), error, traceback, None if cause is None else Cause(cause)
        )


_FOUND_KEYS = {"name", "kind", "example", "example_error", "line"}
# A line number past this is not one of a source file layercheck imported.
_MAX_LINE = 10**8


def _found(target: Any, asked: str | None) -> dict[str, Any]:
    """One target of a discovery worker's answer, read back (`Discovered.from_dict`)."""
    if type(target) is not dict or set(target) != _FOUND_KEYS:
        raise MalformedReport(f"a target is {_shown(target)}")
    name, kind, example, problem = (target[key] for key in ("name", "kind", "example", "example_error"))
    if type(name) is not str or not name:
        raise MalformedReport(f"a target's name is {_shown(name)}, not a name")
    if asked is not None and name != asked:
        raise MalformedReport(f"it found {_shown(name)} where {asked!r} was asked for")
    if type(kind) is not str or kind not in {k.value for k in Kind}:
        raise MalformedReport(f"the kind of {_shown(name)} is {_shown(kind)}")
    line = target["line"]
    if line is not None and (type(line) is not int or not 1 <= line <= _MAX_LINE):
        raise MalformedReport(f"the line of {_shown(name)} is {_shown(line)}, not a line number")
    if problem is not None and type(problem) is not str:
        raise MalformedReport(f"the example_layout error of {_shown(name)} is {_shown(problem)}, not a string")
    if example is not None:
        if type(example) is not list or any(type(text) is not str for text in example):
            raise MalformedReport(f"the example_layout of {_shown(name)} is {_shown(example)}, not a list of layouts")
        for text in example:
            try:
                parse_layout(text)
            except UsageError as exc:
                raise MalformedReport(
                    f"the example_layout of {_shown(name)} is not one layercheck wrote: {exc}"
                ) from None
    return {"name": name, "kind": Kind(kind), "example": example, "example_error": problem, "line": line}


def _shown(value: Any) -> str:
    """A value of a worker's answer, for a message: short, one line, whatever its type."""
    return visible(safe_repr(value, 80))


@dataclass(frozen=True)
class DiscoverJob:
    """Import one file and list its targets."""

    path: str
    name: str | None
    whole_module: bool  # a file below a folder: its layers; a module of helpers is no error
    timeout: float
    # Send the files the module imported (`running.sources`), for the run's record of what
    # it checked (`SourceRecord`): every shard discovers, so records, the whole plan's.
    record_sources: bool = False
    convention: Convention = NO_CONVENTION  # how a named target is checked (DESIGN.md section 11)

    def run(self, emit: Callable[[str, Any], None]) -> dict[str, Any]:
        """`Discovered.to_dict()`: plain data, all a worker may send (`isolation`), and with
        `record_sources`, once the targets are found, the files imported as `INPUTS`
        (`split_inputs`; the layer's other reads are not recorded here)."""
        before = loaded_modules() if self.record_sources else None
        emit("step", f"importing {os.path.basename(self.path)}")
        # Whatever the module replaces is put back before layercheck lists its targets; the
        # check job, which imports it again, reports it.
        guard = Guard.start()
        try:
            if self.whole_module:
                path = Path(self.path)
                found = [Target(self.path, path, n, obj) for n, obj in discover(import_module(path))]
            else:
                spec = self.path if self.name is None else f"{self.path}:{self.name}"
                found = load_targets(spec, self.convention)
        except (TargetError, UsageError) as exc:
            return Discovered(error=str(exc), traceback=getattr(exc, "traceback", ""), cause=cause_of(exc)).to_dict()
        except BaseException as exc:  # what import_module lets through: KeyboardInterrupt
            error = f"importing {os.path.basename(self.path)} raised {exception_summary(exc)}"
            return Discovered(error=error, traceback=user_traceback(exc), cause=cause_of(exc)).to_dict()
        finally:
            guard.verify()
        described = []
        for target in found:
            # the layer's code runs
            described.append(
                {**_describe(target.name, target.obj, target.kind), "line": _line_in(target.obj, self.path)}
            )
            guard.verify()
        payload = Discovered(found=tuple(described)).to_dict()
        if before is not None:
            payload[INPUTS] = Inputs(tuple(imported_sources(before)), (), Uncacheable.UNRECORDED).to_data()
        return payload


def _line_in(obj: Any, path: str) -> int | None:
    """The line of `path` that `obj`'s definition starts on (its first decorator's, if any);
    None where it is not known, or `obj` is defined in another file (imported into `path`)."""
    try:
        source = inspect.getsourcefile(obj)
        if source is None or not os.path.samefile(source, path):
            return None
        line = inspect.getsourcelines(obj)[1]
    except BaseException:  # noqa: BLE001 - no source, or a metaclass of the layer's that raises
        return None
    return line if type(line) is int and line >= 1 else None


def _describe(name: str, obj: Any, kind: Kind) -> dict[str, Any]:
    """What the parent needs of a target: its kind and its example layouts (as text)."""
    layouts, problem = None, None
    try:
        example = getattr(obj, "example_layout", None)
        if example is not None:
            layouts = [str(layout) for layout in parse_layouts(example)]
    except UsageError as exc:
        problem = f"example_layout of {name} is invalid: {exc}"
    except BaseException as exc:  # the user's attribute: not a layout, or a property that raises
        problem = f"example_layout of {name} is invalid: {exception_text(exc)}"
    return {"name": name, "kind": Kind(kind), "example": layouts, "example_error": problem}


@dataclass(frozen=True)
class CheckJob:
    """Import a target's module and run the checks on it."""

    label: str
    path: str
    name: str
    kind: Kind
    layouts: tuple[Layout, ...]
    args: Mapping[str, Any]
    options: Options
    timeout: float
    # --repro: the folder the parent made for this target, where the worker writes each
    # failed check's evidence as `<check>.npz` (`reproducers.files`); None: none asked for.
    repro_folder: str | None = None
    # Send the files its modules imported (`running.sources`): for the run's record of what it
    # checked (`SourceRecord`), the cache on or off.
    record_sources: bool = False
    # Record the layer's other reads too (`running.reads`: the data files it opens, the
    # environment variables it reads), which the result cache keys on: where a cache is used.
    record_reads: bool = False
    convention: Convention = NO_CONVENTION  # how the target is checked (DESIGN.md section 11)

    def run(self, emit: Callable[[str, Any], None]) -> dict[str, Any]:
        started = perf_counter()
        # Before anything of the layer's runs: its import, finding its name, building it, the checks.
        reads = Reads.start() if self.record_reads else None
        before = loaded_modules() if self.record_sources or reads is not None else None
        emit("step", f"importing {os.path.basename(self.path)}")
        if self.options.device != "cpu":
            gpu_status()  # CuPy, if there is one, is then watched from before the module runs
        guard = Guard.start()  # NumPy and layercheck before the user's module runs
        try:
            module = import_module(Path(self.path))
            guard.verify()
            target = named_target(module, Path(self.path), self.name, self.label, self.convention)
            adopted = target.adopted(self.layouts, self.args)
            factory = Target(self.label, Path(self.path), self.name, adopted.obj).factory(self.args)
        except TargetError as exc:
            return _payload(self._report(error=str(exc), traceback=exc.traceback, cause=cause_of(exc)))
        # At import and again after the checks: a module imported at import may leave
        # sys.modules, and one imported inside predict appears only then.
        at_import = [] if before is None else imported_sources(before)
        if reads is not None:
            reads.note_imports()  # where each was found, while the modules at import are loaded
        emit("step", "constructing and initializing the layer")
        done: list[CheckResult] = []
        current = ["setting up the layer"]

        def on_start(check: Check) -> None:
            current[0] = check.name
            emit("start", check.name)

        def on_check(result: CheckResult) -> None:
            done.append(result)
            emit("check", result.to_dict())
            if result.cause is Cause.MEMORY:
                # Stop here: every further check would run into the same wall.
                raise _OutOfMemory(result)

        try:
            report = run_target(
                self.label,
                factory,
                adopted.layouts,
                self.options,
                kind=target.kind,
                on_check=on_check,
                on_start=on_start,
                guard=guard,
                on_evidence=None if self.repro_folder is None else evidence_writer(self.repro_folder, SCRIPTS),
            )
        except _OutOfMemory as exc:
            error = f"ran out of memory in {exc.result.name}: {exc.result.message}"
            report = self._report(checks=done, error=error, cause=Cause.MEMORY)
        except BaseException as exc:  # what run_target lets through: a defect of layercheck, mostly
            failure = unexpected(current[0], exc)
            error = f"{failure.message} in {current[0]}"
            if failure.cause is Cause.INTERNAL:
                error += f"; {failure.explanation[0]}"
            report = self._report(checks=done, error=error, traceback=failure.traceback, cause=failure.cause)
        else:
            look_once_freed(report, guard)
            report.layouts = list(self.layouts)  # a pair's learnables' too, as asked
            payload = _payload(_process_errors(report))
            if before is not None:
                sources = dict(at_import)
                sources.update(imported_sources(before, known=sources))
                inputs = (
                    reads.finish(sources)
                    if reads is not None
                    else Inputs(tuple(sorted(sources.items())), (), Uncacheable.UNRECORDED)
                )
                payload[INPUTS] = inputs.to_data()
            return payload
        report.duration_s = perf_counter() - started
        return _payload(report)

    def _report(self, **fields: Any) -> TargetReport:
        return TargetReport(self.label, self.kind, list(self.layouts), **fields)


class _OutOfMemory(Exception):
    def __init__(self, result: CheckResult):
        super().__init__(result.message)
        self.result = result


def _process_errors(report: TargetReport) -> TargetReport:
    """A target that ran out of memory or called sys.exit could not really be checked: in a
    batch run it is an error (with the checks it got through), like one that crashed. Read
    from the causes set where the exceptions were caught, never from the messages."""
    if report.error is not None:
        if report.cause is Cause.MEMORY:
            report.error = f"ran out of memory: {report.error}"
        return report
    for check in report.checks:
        if check.cause is Cause.EXIT:
            report.error = f"the layer called sys.exit in {check.name}: {check.message}"
            report.cause = Cause.EXIT
            break
    return report


def _payload(report: TargetReport) -> dict[str, Any]:
    return report.to_dict(Origin.WORKER)


# -- the parent ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """A target a discovery worker found."""

    request: Request
    label: str
    path: Path
    name: str
    kind: Kind
    example: tuple[str, ...] | None
    example_error: str | None
    line: int | None = None  # of its definition in `path`
    sources: tuple[tuple[str, str], ...] = ()  # the files its module imported at discovery (`running.sources`)
    discovered_s: float = 0.0  # how long the worker that found it ran (it imported the module)

    @property
    def source(self) -> Source:
        return Source(str(self.path), self.line)


@dataclass
class _Item:
    """A planned target: a job to run, or a report known without running anything."""

    label: str
    job: CheckJob | None = None
    report: TargetReport | None = None
    position: int | None = None  # in the whole plan, before --shard (`TargetReport.position`)
    source: Source | None = None  # where it is defined, for its report
    sources: tuple[tuple[str, str], ...] = ()  # the files its module imported at discovery (`running.sources`)
    discovered_s: float = 0.0  # `Found.discovered_s`: where its "still running" seconds start


Progress = Callable[[str, int, int], None]  # (what, done, total)


def run_batch(
    batch: Batch,
    on_report: Callable[[TargetReport], None] | None = None,
    on_progress: Progress | None = None,
    as_finished: bool = False,
    still_running: StillRunning | None = None,
) -> Report:
    """Discover, plan, shard and check; `on_report` gets each target's report in order, or,
    `as_finished`, as each target finishes (the reports known without checking, first). The
    report returned holds them in target order either way. `still_running` is told of the
    workers that run long.

    Raises UsageError (before anything is checked) for a folder without any target, or a -k
    that selects none.
    """
    start = perf_counter()
    try:
        found = _discover(batch, on_progress, still_running)
        items = _plan(batch, found)
    except Interrupted as exc:  # while importing: no target is known yet, only the requests
        reports = [_interrupted(request.label, exc) for request in batch.requests]
        for report in reports:
            if on_report is not None:
                on_report(report)
        exc.report = Report(reports, perf_counter() - start, environment=_environment(batch, [], probe_gpu=False))
        raise
    if batch.keyword is not None and not items:
        targets = sum(isinstance(target, Found) for target in found)
        raise UsageError(
            f"-k {visible(bounded(batch.keyword.text, 200))!r} selects none of the {targets} target(s) found"
        )
    for position, item in enumerate(items):
        item.position = position
    run = _run_record(batch, items)
    checked = _planned_sources(batch, items)  # the whole plan's, before --shard
    if batch.shard is not None:
        k, n = batch.shard
        items = [item for item, at in zip(items, shard_of(run.plan, n)) if at == k]
    try:
        reports = _check(batch, items, on_report, on_progress, as_finished, still_running, checked)
    except Interrupted as exc:  # `_check` put what it has (every target, some interrupted)
        exc.report.duration_s = perf_counter() - start
        exc.report.run = dataclasses.replace(run, sources=checked.recorded())
        exc.report.environment = _environment(batch, items, probe_gpu=False)
        raise
    run = dataclasses.replace(run, sources=checked.recorded())
    return Report(reports, perf_counter() - start, run=run, environment=_environment(batch, items))


def _run_record(batch: Batch, items: Sequence[_Item]) -> RunInfo:
    """What the report records to merge shards (`runinfo`): the whole plan's size and labels
    (as the reports name them: `TargetReport` bounds them) and the fingerprint of what decides
    its verdicts, without absolute paths (CI clones differ)."""
    plan = []
    for item in items:
        job = item.job
        if job is None:
            plan.append({"target": item.label, "planned": False})
            continue
        plan.append(
            {
                "target": job.label,
                "name": job.name,
                "kind": job.kind,
                "layouts": [str(layout) for layout in job.layouts],
                "args": job.args,
                "convention": job.convention.to_data(),
                "options": {f.name: getattr(job.options, f.name) for f in fields(job.options)},
                "timeout": job.timeout,
            }
        )
    labels = tuple(TargetReport(item.label).target for item in items)
    return RunInfo(batch.shard, len(items), fingerprint(plain(plan)), Versions.current(), plan=labels)


def _planned_sources(batch: Batch, items: Sequence[_Item]) -> SourceRecord:
    """The record of what the run checks (`runinfo.RunInfo.sources`), as planned: the config
    file, the file of every planned target (one that could not be imported too), and what
    each module imported at discovery. The workers add what they import while checking."""
    record = SourceRecord()
    if batch.config is not None:
        record.hash(batch.config.source)
    hashed: set[str] = set()
    for item in items:
        source = item.source if item.source is not None else item.report.source if item.report else None
        if source is not None and source.path not in hashed:  # a file of many targets, hashed once
            hashed.add(source.path)
            record.hash(source.path)
        record.update(item.sources)
    return record


def _environment(batch: Batch, items: Sequence[_Item], probe_gpu: bool = True) -> Environment:
    """The run's environment, with the seeds and devices of the targets checked (of the
    batch's own settings when none was planned)."""
    probe = gpu_status if probe_gpu else None
    options = [item.job.options for item in items if item.job is not None]
    if not options:
        settings = _settings(batch, None)
        return collect([settings.seed or 0], [settings.device or "auto"], gpu_probe=probe)
    return collect([o.seed for o in options], [o.device for o in options], gpu_probe=probe)


def _interrupted(label: str, exc: Interrupted) -> TargetReport:
    name = signal.Signals(exc.signum).name
    return TargetReport(label, error=f"interrupted ({name}) before it was checked", cause=Cause.INTERRUPTED)


def _settings(batch: Batch, entry: TargetEntry | None) -> Settings:
    """A target's settings: the command line's over its config entry's over the config's
    defaults over the built-in ones, merged once; `options_from` parses nothing again."""
    layers = [batch.settings]
    if entry is not None:
        layers.append(entry.settings)
    if batch.config is not None:
        layers.append(batch.config.defaults)
    return merge_settings(*layers)


def _timeout(settings: Settings) -> float:
    """Seconds per target of merged settings (the built-in defaults give one)."""
    return DEFAULT_TIMEOUT if settings.timeout is None else float(settings.timeout)


def _discover(
    batch: Batch, on_progress: Progress | None, still_running: StillRunning | None = None
) -> list[Found | TargetReport]:
    """Every target of every request, in order; a file that cannot be imported is a report."""
    # (request, file label, the job that imports it, or its report when it cannot be imported)
    units: list[tuple[Request, str, DiscoverJob | TargetReport]] = []
    owner: dict[int, Request] = {}  # a request made for a config's target, by the request of its file
    for request in batch.requests:
        timeout = _timeout(_settings(batch, request.entry))
        if request.path.is_dir():
            for file in module_files(request.path):
                label = str(Path(request.label) / file.path.relative_to(request.path))
                if file.problem is not None:  # reported at once, in one line: importing it would fail
                    error = f"{file.path.name} {file.problem}"
                    units.append((request, label, TargetReport(label, error=error, source=Source(str(file.path)))))
                else:
                    job = DiscoverJob(str(file.path), None, True, timeout, record_sources=True)
                    units.append((request, label, job))
                    units += _named_units(batch, request, file.path, label, timeout, owner)
        else:
            # The config's targets of this file, named (`layercheck run layers.py --config
            # pairs.yaml`): function pairs and classes of a convention are found by name only.
            named = _named_units(batch, request, request.path, request.label, timeout, owner)
            whole = (batch.only_layers or bool(named)) and request.name is None
            convention = _convention(batch, _request_entry(batch, request))
            job = DiscoverJob(str(request.path), request.name, whole, timeout, True, convention)
            units.append((request, request.label, job))
            units += named
    jobs = [work for _, _, work in units if isinstance(work, DiscoverJob)]
    labels = [label for _, label, work in units if isinstance(work, DiscoverJob)]
    outcomes = iter(
        run_jobs(
            jobs,
            workers=batch.jobs,
            max_memory=batch.max_memory,
            on_done=_counter("discovering targets", len(jobs), on_progress),
            watch=None if still_running is None else watch_of(labels, still_running),
        )
    )
    per_request: dict[int, list[Found | TargetReport]] = {id(r): [] for r in batch.requests}
    for request, label, work in units:
        mine = per_request[id(owner.get(id(request), request))]
        if isinstance(work, TargetReport):
            mine.append(work)
        elif id(request) in owner:
            assert request.name is not None
            targets = _targets_of(request, label, work, next(outcomes))
            mine[:] = _with_named(mine, request.path, request.name, work.convention, targets)
        else:
            # A file read whole for the targets its config names is labelled as it was asked.
            as_folder = None if request.path.is_dir() else batch.only_layers and request.name is None
            mine += _targets_of(request, label, work, next(outcomes), as_folder)
    found: list[Found | TargetReport] = []
    for request in batch.requests:
        mine = per_request[id(request)]
        if request.path.is_dir() and not mine and not batch.only_layers:
            raise UsageError(
                f"folder {request.label!r} holds no layer (no .py file below it defines a class with predict); "
                "a function pair (NAME_forward, NAME_backward) is checked where a TARGET or a config entry names it"
            )
        found += mine
    return found


def discover_files(
    files: Sequence[tuple[Path, str]],
    timeout: float,
    jobs: int = 1,
    max_memory: int | None = None,
    named: Mapping[Path, Sequence[tuple[str, Convention]]] | None = None,
) -> list[tuple[Found, ...] | TargetReport]:
    """The layers and operations each file defines, found as `run_batch` finds
    those of a folder's files (each imported in a worker), or the file's error report; in the
    order of `files`, each an absolute path and its label for reports. For a caller that lists
    targets before checking them one by one (the pytest plugin).

    `named`: targets of a file found by name, as `path.py:NAME` finds them, where a folder's
    discovery does not (a function pair, DESIGN.md section 11) or finds them otherwise (a
    class checked by a convention): `_with_named`."""
    named = named or {}
    work = [DiscoverJob(str(path), None, True, timeout) for path, _ in files]
    extra = [
        (index, DiscoverJob(str(path), name, False, timeout, convention=convention))
        for index, (path, _) in enumerate(files)
        for name, convention in named.get(path, ())
    ]
    outcomes = run_jobs([*work, *(job for _, job in extra)], workers=jobs, max_memory=max_memory)
    found: list[tuple[Found, ...] | TargetReport] = []
    for (path, label), job, outcome in zip(files, work, outcomes):
        targets = _targets_of(Request(label, path), label, job, outcome)
        if targets and isinstance(targets[0], TargetReport):
            found.append(targets[0])
        else:
            found.append(tuple(target for target in targets if isinstance(target, Found)))
    for (index, job), outcome in zip(extra, outcomes[len(work) :]):
        path, label = files[index]
        assert job.name is not None
        known = found[index]
        if isinstance(known, TargetReport):
            continue  # the file's import failed: its one report says so
        mine = _targets_of(Request(f"{label}:{job.name}", path, job.name), label, job, outcome)
        merged = _with_named(list(known), path, job.name, job.convention, mine)
        found[index] = tuple(t for t in merged if isinstance(t, Found))
    return found


def _with_named(
    known: list[Found | TargetReport],
    path: Path,
    name: str,
    convention: Convention,
    targets: list[Found | TargetReport],
) -> list[Found | TargetReport]:
    """`known` (a file's or a folder's discovery) with `targets`, the target `name` of `path`
    found by name: in place of the one of that name where the discovery did not find it as it
    is checked (a class its config entry checks by a convention), or added where it did not
    find it at all (a function pair); one the discovery found as it is stays as found."""
    key = (path.resolve(), name)

    def same(target: Found | TargetReport) -> bool:
        return isinstance(target, Found) and (target.path.resolve(), target.name) == key

    if convention == NO_CONVENTION and any(same(target) for target in known):
        return known
    return [target for target in known if not same(target)] + targets


def checks_of_target(batch: Batch, target: Found) -> tuple[str, ...]:
    """The checks `run_batch` reports on `target`, in report order: those its settings select
    (its config entry's over the config's defaults) that apply to its kind.

    Raises:
        UsageError: its settings leave no check, or ask for a device there is none of.
        TargetError: it has no layout to be checked at.
    """
    entry = _entry(batch, target)
    options = options_from(_settings(batch, entry))
    _layouts(batch, entry, target)
    return tuple(check.name for check in select_checks(options) if check.applies_to(target.kind) is None)


def _entry(batch: Batch, target: Found) -> TargetEntry | None:
    """The config entry of a target: the one it was asked by, else the most specific naming it."""
    if target.request.entry is None and batch.config is not None:
        return batch.config.entry_for(target.path, target.name)
    return target.request.entry


def _targets_of(
    request: Request, label: str, job: DiscoverJob, outcome: Outcome, as_folder: bool | None = None
) -> list[Found | TargetReport]:
    """The targets one discovery worker found, or the file's error report; labelled as a
    folder's file's (`path.py:Name`, one target too) where `as_folder` (None: where the job
    read the file as a folder's)."""
    source = Source(job.path)
    if not outcome.ok:
        where = _where(outcome)
        return [
            TargetReport(
                label,
                error=f"{outcome.failure}{where}",
                traceback=outcome.stack or outcome.output[-2000:],
                duration_s=outcome.duration_s,
                source=source,
            )
        ]
    try:
        answer, inputs = split_inputs(outcome.result) if job.record_sources else (outcome.result, None)
        imported = None if inputs is None else inputs.files
        result = Discovered.from_dict(answer, job.name)
    except MalformedReport as exc:
        error = f"the discovery worker's answer is malformed: {exc}{_TAMPERED}"
        return [TargetReport(label, error=error, duration_s=outcome.duration_s, source=source)]
    if result.error is not None:
        error = f"ran out of memory: {result.error}" if result.cause is Cause.MEMORY else result.error
        return [
            TargetReport(
                label,
                error=error,
                traceback=result.traceback,
                duration_s=outcome.duration_s,
                cause=result.cause,
                source=source,
            )
        ]
    targets = result.found
    as_folder = job.whole_module if as_folder is None else as_folder
    own_label = request.name is not None or (len(targets) == 1 and not as_folder)
    return [
        Found(
            request,
            label if own_label else f"{label}:{t['name']}",
            Path(job.path),
            t["name"],
            t["kind"],
            None if t["example"] is None else tuple(t["example"]),
            t["example_error"],
            t["line"],
            imported or (),
            outcome.duration_s,
        )
        for t in targets
    ]


def _once(found: list[Found | TargetReport]) -> list[Found | TargetReport]:
    """Each target once, however many requests named it (`run d d/a.py ./d/a.py:A` names one
    layer three ways: it is checked once, under its first label, and counted once)."""
    seen: set[tuple[Path, str] | str] = set()
    kept: list[Found | TargetReport] = []
    for target in found:
        key = (target.path.resolve(), target.name) if isinstance(target, Found) else target.target
        if key not in seen:
            seen.add(key)
            kept.append(target)
    return kept


def _plan(batch: Batch, found: list[Found | TargetReport]) -> list[_Item]:
    items = []
    for target in _once(found):
        if isinstance(target, TargetReport):
            items.append(_Item(target.target, report=target))
            continue
        entry = _entry(batch, target)
        settings = _settings(batch, entry)
        options = options_from(settings)
        selected = select_checks(options)  # UsageError when the command line and config leave none
        if batch.only_checks is not None:
            options = dataclasses.replace(
                options, checks=tuple(c.name for c in selected if c.name in batch.only_checks)
            )
            if not options.checks:
                continue
        if batch.keyword is not None:
            narrowed = batch.keyword.narrow(target.label, options)
            if narrowed is None:  # -k selects none of its checks: left out, as --checks leaves checks out
                continue
            options = narrowed
        try:
            layouts = _layouts(batch, entry, target)
        except TargetError as exc:
            report = TargetReport(target.label, target.kind, error=str(exc), source=target.source)
            items.append(_Item(target.label, report=report))
            continue
        job = CheckJob(
            target.label,
            str(target.path),
            target.name,
            target.kind,
            layouts,
            {**(entry.args if entry else {}), **batch.args},
            options,
            _timeout(settings),
            record_sources=True,  # for the run's record of what it checked (`SourceRecord`), the cache on or off
            convention=_convention(batch, entry),
        )
        items.append(
            _Item(target.label, job=job, source=target.source, sources=target.sources, discovered_s=target.discovered_s)
        )
    return items


def _named_units(
    batch: Batch, request: Request, path: Path, label: str, timeout: float, owner: dict[int, Request]
) -> list[tuple[Request, str, DiscoverJob | TargetReport]]:
    """The discovery of each target of `path` (a file the command line names, or one of its
    folder's) that the config names: its function pairs and classes of a convention are found
    by name only. Each is `request`'s (`owner`)."""
    if batch.config is None or request.name is not None or request.entry is not None:
        return []
    path = path.resolve()
    units: list[tuple[Request, str, DiscoverJob | TargetReport]] = []
    for entry in batch.config.targets:
        if entry.name is None or entry.path != path:
            continue
        named = f"{label}:{entry.name}"
        job = DiscoverJob(str(path), entry.name, False, timeout, True, _convention(batch, entry))
        by_name = Request(named, path, entry.name, entry)
        owner[id(by_name)] = request
        units.append((by_name, named, job))
    return units


def _request_entry(batch: Batch, request: Request) -> TargetEntry | None:
    """The config entry of a request that names one target: the one it was asked by, else the
    config's most specific entry naming it (the pytest plugin asks by name)."""
    if request.entry is None and batch.config is not None and request.name is not None:
        return batch.config.entry_for(request.path, request.name)
    return request.entry


def _convention(batch: Batch, entry: TargetEntry | None) -> Convention:
    """How a target is checked: its config entry's convention, with the command line's --backward."""
    convention = NO_CONVENTION if entry is None else entry.convention
    return convention if batch.backward is None else dataclasses.replace(convention, backward=batch.backward)


def _layouts(batch: Batch, entry: TargetEntry | None, target: Found) -> tuple[Layout, ...]:
    """The command line's layouts, else the config entry's, else the class's example_layout."""
    if batch.layouts:
        return batch.layouts
    if entry is not None and entry.layouts:
        return entry.layouts
    if target.example_error:
        raise TargetError(target.example_error)
    if target.example is None:
        raise TargetError(
            f"no layout for {target.label}: pass --layout SIZES:FORMAT (once per input), give it a "
            "layout in the config file, or set the class attribute example_layout"
        )
    try:
        return parse_input_layouts(list(target.example))
    except UsageError as exc:
        raise TargetError(f"example_layout of {target.name}: {exc}") from None


def shard(items: Sequence[Any], k: int, n: int, key: Callable[[Any], str]) -> list[Any]:
    """The items of shard k of n (k from 1): round robin over the items sorted by `key`, so
    that every item is in exactly one shard; kept in their original order (`shard_of`)."""
    return [item for item, at in zip(items, shard_of([key(item) for item in items], n)) if at == k]


def _check(
    batch: Batch,
    items: list[_Item],
    on_report: Callable[[TargetReport], None] | None,
    on_progress: Progress | None,
    as_finished: bool = False,
    still_running: StillRunning | None = None,
    checked: SourceRecord | None = None,
) -> list[TargetReport]:
    """Check the items' jobs; `checked` records the files each worker's module imported."""
    # With --repro every target is checked: a verdict from the cache has no reproducer.
    cache = None if batch.cache is None or batch.repro is not None else ResultCache(batch.cache)
    try:
        keys = {} if cache is None else _from_cache(batch, items, cache, checked)
    except Interrupted as exc:  # while looking up: every target not found yet is interrupted
        exc.report = Report([item.report or _interrupted(item.label, exc) for item in items])
        for report in exc.report.targets:
            if on_report is not None:
                on_report(report)
        raise

    def keep(item: int, job: CheckJob, report: TargetReport, inputs: Inputs) -> None:
        if checked is not None:
            checked.update(inputs.files)
        key = keys.get(item)
        if cache is not None and key is not None:
            _store(cache, key, job, report, inputs)

    runs = [i for i, item in enumerate(items) if item.job is not None]
    jobs = [job for item in items if (job := item.job) is not None]
    how = (keep, on_report, on_progress, as_finished, still_running)
    if batch.repro is None:
        return _check_jobs(batch, items, runs, jobs, None, *how)
    with ReproRun(batch.repro, [(j.label, j.path, j.name, j.args) for j in jobs], SCRIPTS) as repro:
        jobs = [dataclasses.replace(job, repro_folder=repro.folder(i)) for i, job in enumerate(jobs)]
        return _check_jobs(batch, items, runs, jobs, repro, *how)


def _check_jobs(
    batch: Batch,
    items: list[_Item],
    runs: list[int],
    jobs: list[CheckJob],
    repro: ReproRun | None,
    keep: Callable[[int, CheckJob, TargetReport, Inputs], None],
    on_report: Callable[[TargetReport], None] | None,
    on_progress: Progress | None,
    as_finished: bool,
    still_running: StillRunning | None,
) -> list[TargetReport]:
    reports: list[TargetReport | None] = [item.report for item in items]
    for report, item in zip(reports, items):  # known without checking (cached): placed too
        if report is not None:
            report.position = item.position
            if item.source is not None:  # a file that could not be imported has its own
                report.source = item.source
    next_out = 0
    handed: set[int] = set()  # as_finished: the reports on_report has returned from
    failed = sum(batch.maxfail.fails(report) for report in reports if report is not None) if batch.maxfail else 0

    def flush() -> None:  # hand on the reports that are ready, in target order
        nonlocal next_out
        while next_out < len(reports) and (ready := reports[next_out]) is not None:
            if on_report is not None:
                on_report(ready)
            next_out += 1

    def hand(index: int) -> None:  # as_finished: once each, a report cut short again whole
        report = reports[index]
        if index not in handed and on_report is not None and report is not None:
            on_report(report)
        handed.add(index)

    count = _counter("checking targets", len(runs), on_progress)

    def done(index: int, outcome: Outcome) -> None:
        nonlocal failed
        report, inputs = _checked_with_inputs(jobs[index], outcome, batch.maxfail)
        for check in report.checks:  # a worker's claim of a reproducer is never taken
            check.repro = None
        if inputs is not None:  # the verdict as the worker made it, before this run's marks
            keep(runs[index], jobs[index], report, inputs)
        if repro is not None:
            report = repro.attach(index, report)
        report.source = items[runs[index]].source
        report.position = items[runs[index]].position
        reports[runs[index]] = report
        if batch.maxfail is not None and batch.maxfail.fails(report):
            failed += 1
        count(index, outcome)
        if as_finished:
            hand(runs[index])
        else:
            flush()

    def hand_all() -> None:
        if not as_finished:
            flush()
            return
        for index, report in enumerate(reports):
            if report is not None:
                hand(index)

    def stop() -> bool:
        return batch.maxfail is not None and failed >= batch.maxfail.limit

    hand_all()
    labels = [job.label for job in jobs]
    # A target's "still running" seconds go on from those of the worker that found it (which
    # imported its module and said so): never fewer than the line before about the same label.
    after = [items[run].discovered_s for run in runs]
    try:
        run_jobs(
            jobs,
            workers=batch.jobs,
            max_memory=batch.max_memory,
            on_done=done,
            stop=stop,
            watch=None if still_running is None else watch_of(labels, still_running, after),
        )
    except Interrupted as exc:
        # run_jobs handed on an interrupted outcome for every job it did not finish.
        hand_all()
        exc.report = Report([report for report in reports if report is not None])
        raise
    hand_all()
    return reports  # type: ignore[return-value]


def _from_cache(
    batch: Batch, items: list[_Item], cache: ResultCache, checked: SourceRecord | None = None
) -> dict[int, str]:
    """Serve each target whose entry is found (`ResultCache.lookup`) from the cache: its item
    gets the report and loses its job, and `checked` the files it read when it was checked.
    The others' keys, by item, to store what they find; their jobs now record what they read."""
    keys = {}
    for index, item in enumerate(items):
        job = item.job
        if job is None:
            continue
        key = _cache_key(batch, job)
        if key is None:
            continue
        found = cache.lookup_with_inputs(key)
        # An entry is data on disk: it must fit what is asked as a worker's report must.
        if found is not None and _unexpected_report(job, found[0], cached=True) is None:
            item.job, item.report = None, found[0]
            if checked is not None:
                checked.update(found[1].files)
            continue
        keys[index] = key
        item.job = dataclasses.replace(job, record_sources=True, record_reads=True)
    return keys


def _cache_key(batch: Batch, job: CheckJob) -> str | None:
    """What a target's verdict depends on, besides what it reads (`running.cache.cache_key`)."""
    target = {
        "target": job.label,
        "path": job.path,
        "name": job.name,
        "kind": job.kind,
        "layouts": [str(layout) for layout in job.layouts],
        "args": dict(job.args),
        "convention": job.convention.to_data(),
        "options": dataclasses.asdict(job.options),
        "timeout": job.timeout,
    }
    return cache_key(target, job.options.device, None if batch.config is None else batch.config.source)


def _store(cache: ResultCache, key: str, job: CheckJob, report: TargetReport, inputs: Inputs) -> None:
    """Store a freshly checked target's report, when its worker recorded the layer's own
    module among its files (every worker that imported it does: one that did not is not
    believed)."""
    module = os.path.realpath(job.path)
    if any(os.path.realpath(path) == module for path, _ in inputs.files):
        cache.store(key, report, inputs)


def _checked_with_inputs(
    job: CheckJob, outcome: Outcome, maxfail: MaxFail | None = None
) -> tuple[TargetReport, Inputs | None]:
    """`_checked`, and the inputs the worker sent with its report (`running.sources`)."""
    if not (job.record_sources and outcome.ok):
        return _checked(job, outcome, maxfail), None
    try:
        result, inputs = split_inputs(outcome.result)
    except MalformedReport as exc:
        return _report_of(job, error=f"{_MALFORMED} {exc}{_TAMPERED}", duration_s=outcome.duration_s), None
    return _checked(job, dataclasses.replace(outcome, result=result), maxfail), inputs


def _checked(job: CheckJob, outcome: Outcome, maxfail: MaxFail | None = None) -> TargetReport:
    """A target's report from its worker's outcome, trusting nothing the worker sent: the layer
    ran in that process and may have forged or changed it (`_unexpected_report`)."""
    if outcome.stopped_early:  # by -x / --maxfail: what it got through is dropped, unfinished
        reason = maxfail.reason if maxfail is not None else "the run stopped early"
        return _report_of(job, error=f"not checked: {reason}", duration_s=outcome.duration_s, cause=Cause.NOT_RUN)
    if outcome.ok:
        try:
            report = TargetReport.from_dict(outcome.result, Origin.WORKER)
        except MalformedReport as exc:
            error = f"{_MALFORMED} {exc}{_TAMPERED}"
        else:
            problem = _unexpected_report(job, report)
            if problem is None:
                return report
            error = f"{_UNEXPECTED} {problem}{_TAMPERED}"
        return _report_of(job, error=error, duration_s=outcome.duration_s)
    checks, dropped = _checks_sent(job, outcome.events)
    error = f"{outcome.failure}{_where(outcome)}{_whose_time(outcome, job.timeout)}"
    if dropped:
        error += (
            f"; {len(dropped)} check result(s) it sent were dropped, not matching what was asked "
            f"(the first: {dropped[0]}){_TAMPERED}"
        )
    return _report_of(
        job,
        checks,
        error=error,
        traceback=outcome.stack or outcome.output[-2000:],
        duration_s=outcome.duration_s,
        cause=Cause.INTERRUPTED if outcome.interrupted else None,
    )


_MALFORMED = "the worker's report is malformed:"
_UNEXPECTED = "the worker's report does not match what was asked:"
_TAMPERED = " (a layer that tampers with layercheck's process?)"


def _report_of(job: CheckJob, checks: Sequence[CheckResult] = (), **fields: Any) -> TargetReport:
    return TargetReport(job.label, job.kind, list(job.layouts), list(checks), **fields)


def _expected_checks(job: CheckJob) -> list[str]:
    """The checks the parent's own options select, in order (the worker's copy of the options
    is the layer's to change)."""
    return [check.name for check in select_checks(job.options)]


def _unexpected_report(job: CheckJob, report: TargetReport, cached: bool = False) -> str | None:
    """What in a worker's report does not fit what the parent asked for, in words; None if it fits.

    A complete report holds each selected check once, in order, and the integrity check at
    most once, anywhere (before the check it was found in, or after the last); a report with
    an error (the worker stopped: out of memory, a defect) holds the first of them.
    """
    expected = _report_of(job)  # the target, kind and layouts, cut as reports cut them
    if report.cause in (Cause.INTERRUPTED, Cause.NOT_RUN):  # the parent's to say, never a worker's
        return f"it says the target was {report.cause.value.replace('_', ' ')}"
    if report.cached is not cached:
        return "it says it came from the result cache" if report.cached else "it is not from the result cache"
    if report.target != expected.target:
        return f"it is the report of {visible(bounded(report.target, 100))}, not of {visible(expected.target)}"
    if report.kind is not expected.kind:
        return f"it is the report of a {report.kind}, not of a {expected.kind}"
    if report.layouts != expected.layouts:
        shown = visible(bounded(", ".join(map(str, report.layouts)), 100))
        return f"it was checked with the layouts {shown}, not {', '.join(map(str, expected.layouts))}"
    return _unexpected_checks(_expected_checks(job), [c.name for c in report.checks], complete=report.error is None)


def _unexpected_checks(expected: Sequence[str], names: Sequence[str], complete: bool) -> str | None:
    """The first way `names` (a report's checks, in order) is not `expected` (all of them when
    `complete`, else the first of them) with the integrity check once anywhere; None if it fits."""
    integrity = 0
    position = 0
    for name in names:
        if name == INTEGRITY_CHECK:
            integrity += 1
            if integrity > 1:
                return f"{INTEGRITY_CHECK} is there twice"
            continue
        if position < len(expected) and name == expected[position]:
            position += 1
            continue
        shown = visible(bounded(name, 100))
        if name in expected[:position]:
            return f"{shown} is there twice"
        if name not in expected:
            return f"{shown} was not asked for"
        return f"{visible(expected[position])} is missing"  # a later check came first
    if complete and position < len(expected):
        return f"{', '.join(expected[position:])} {'is' if len(expected) - position == 1 else 'are'} missing"
    return None


def _checks_sent(job: CheckJob, events: Sequence[tuple[str, Any]]) -> tuple[list[CheckResult], list[str]]:
    """The check results a worker that died had sent, in order, each read and checked against
    what was asked as `_unexpected_report` checks a report; and why each of the others was dropped."""
    expected = _expected_checks(job)
    checks: list[CheckResult] = []
    dropped: list[str] = []
    for kind, data in events:
        if kind != "check":
            continue
        try:
            check = CheckResult.from_dict(data, Origin.WORKER)
        except MalformedReport as exc:
            dropped.append(str(exc))
            continue
        problem = _unexpected_checks(expected, [c.name for c in checks] + [check.name], complete=False)
        if problem is not None:
            dropped.append(problem)
            continue
        checks.append(check)
    return checks, dropped


def _where(outcome: Outcome) -> str:
    """` in predict_does_not_error (loop.py:9 in predict)`: where a worker was when it ended."""
    where = ""
    for kind, data in reversed(outcome.events):
        if type(data) is not str:  # not layercheck's: the layer wrote to the pipe
            continue
        if kind == "start":
            where = f" in {data}"
            break
        if kind == "step":
            where = f" while {data}"
            break
    frame = stack_location(outcome.stack)
    return where + (f" ({frame})" if frame else "")


# At a timeout, the layer's call under way hung when it had run at least this share of the
# timeout, and longer than its calls that had ended took in all: a loaded machine may have
# spent the rest starting the worker, whose time is no call's. Where at least
# `_MANY_CALLS` calls that had ended took this share, many quick calls took the time.
_HUNG_SHARE = 0.25
_MANY_CALLS = 3


def _whose_time(outcome: Outcome, timeout: float) -> str:
    """Whose time a timeout was: the layer's call under way (it hung), the layer's many quick
    calls that layercheck's own work made, a few slow calls of the layer, or layercheck's own
    work; a frame of the layer in `_where` must not be taken to blame it for the others."""
    if not outcome.timed_out:
        return ""
    if outcome.clock_garbled:
        return ": the layer overwrote the clock layercheck times its calls with, so whose time it was is not known"
    running, ended, calls = outcome.user_call_s, outcome.user_calls_s, outcome.user_calls
    share = _HUNG_SHARE * timeout
    if running is not None and running >= share and running >= ended:
        return f": the layer's call under way had run {running:.3g} s"
    under_way = (
        "no code of the layer was running then" if running is None else f"the call under way had run {running:.2g} s"
    )
    if calls >= _MANY_CALLS and ended >= share:
        return f": layercheck's own work took the time, calling the layer many times ({under_way})"
    if ended + (running or 0.0) >= 2 * share:
        took = f"{calls} call{'s' if calls != 1 else ''} that ended took {ended:.2g} s in all"
        return f": the layer's calls took the time ({took}; {under_way})"
    if running is None:
        return f": layercheck's own work took the time ({under_way})"
    return (
        f": layercheck's own work took the time (the layer's calls that ended took {ended:.2g} s in all; {under_way})"
    )


def _counter(what: str, total: int, on_progress: Progress | None) -> Callable[[int, Outcome], None]:
    # Indices, not a count: a job handed on again after a signal cut its first hand-on
    # short (`run_jobs`) is counted once.
    done: set[int] = set()
    if on_progress is not None:
        on_progress(what, 0, total)

    def tick(index: int, outcome: Outcome) -> None:
        done.add(index)
        if on_progress is not None:
            on_progress(what, len(done), total)

    return tick
