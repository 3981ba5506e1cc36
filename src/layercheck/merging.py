"""`layercheck merge A.json B.json ...`: the JSON reports of the shards of one run
(`run --shard K/N --json F`) merged into the report that run unsharded would have given: its
targets in the order of the whole plan, its summary, its exit status.

Each report records its run (`runinfo.RunInfo`) and each target its place in the whole plan
(`position`). Shards that do not fit together are refused with one line (UsageError): other
versions, settings, plans, --strict or --baseline; other contents of one file (each shard
records the digest of every file it checked: `RunInfo.sources`); a shard given twice, one
missing; targets at one position twice, or positions no shard holds. Durations are summed
(the shards' time, not the wall time of the CI matrix).

A shard is a file the user hands over, and what it holds decides the exit status, so nothing
in it that layercheck can check against the rest is taken on trust (`read_shard`):

- each target must be the one the run's plan has at its position (`RunInfo.plan`: a passing
  target copied over a failing one is refused), and one of its shard's share of the plan
  (`runinfo.shard_of`, as `run --shard` deals them);
- a check or error marked `known` needs an entry of the run's --baseline that accepts it
  (`RunInfo.baseline_entries`: only the run's parent marks failures known, from that file);
- every target's status and summary must be what its checks and error make them, and the
  report's summary what its targets' checks add up to.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from layercheck.baseline import TARGET_ERROR, label_key
from layercheck.environment import Environment
from layercheck.errors import UsageError
from layercheck.reporters.files import read_json_file
from layercheck.results import SCHEMA_VERSION, SUMMARY_STATUSES, MalformedReport, Report, Status, TargetReport
from layercheck.runinfo import RunInfo, shard_of
from layercheck.safetext import bounded, safe_repr, visible

__all__ = ["Shard", "exit_status", "merge_shards", "merged_environment", "read_shard"]

_MAX_BYTES = 512 * 1024 * 1024  # a report of many thousand targets is tens of MB


@dataclass(frozen=True)
class Shard:
    """A shard's report, read back, and the file it came from (for messages)."""

    path: str
    report: Report
    run: RunInfo

    @property
    def name(self) -> str:
        """`shard 2/3` (`shard 1/1` for an unsharded run's report)."""
        k, n = self.run.shard or (1, 1)
        return f"shard {k}/{n}"


def read_shard(path: str) -> Shard:
    """A `--json` report of `layercheck run`, read and validated.

    Raises:
        UsageError: one line naming the file and what is wrong with it.
    """
    where = visible(path)
    data = read_json_file(path, where, "a JSON report of layercheck", _MAX_BYTES)
    if type(data) is not dict or "targets" not in data or "version" not in data:
        raise UsageError(f"{where}: not a JSON report of layercheck (no version and targets)")
    if data["version"] != SCHEMA_VERSION:
        shown = visible(bounded(repr(data["version"]), 40))
        raise UsageError(f"{where}: report version {shown}; this layercheck merges version {SCHEMA_VERSION!r}")
    try:
        report = Report.from_dict(data)
    except MalformedReport as exc:
        raise UsageError(f"{where}: not a JSON report of layercheck: {exc}") from None
    if report.run is None:
        raise UsageError(
            f"{where}: the report records no run to merge (written by the Python API, an older layercheck, "
            "or a run interrupted before its targets were planned)"
        )
    _in_the_plan(where, report, report.run)
    _statuses_fit(where, data, report, report.run)
    return Shard(path, report, report.run)


def _in_the_plan(where: str, report: Report, run: RunInfo) -> None:
    """UsageError unless each target is the one the run's plan has at its position, and one
    its shard checks (`runinfo.shard_of`)."""
    k, n = run.shard or (1, 1)
    shards = shard_of(run.plan, n)
    for target in report.targets:
        label = f"target {_label(target.target)}"
        position = target.position
        if position is None or position >= run.planned:
            raise UsageError(
                f"{where}: {label} has no place in the run's plan of {run.planned} targets (position {position})"
            )
        if target.target != run.plan[position]:
            raise UsageError(
                f"{where}: {label} is at position {position}, where the run's plan has {_label(run.plan[position])}"
            )
        if shards[position] != k:
            raise UsageError(
                f"{where}: {label} (position {position}) is not in the share of shard {k}/{n}: "
                f"the plan deals it to shard {shards[position]}/{n}"
            )


def _label(label: str) -> str:
    return visible(bounded(label, 200))


def _statuses_fit(where: str, data: Mapping[str, Any], report: Report, run: RunInfo) -> None:
    """UsageError unless every status and summary the file holds is what the checks and errors
    it holds, and its run's record, make them (`Report.from_dict` derives them and reads only
    `known`): a file whose failures were relabelled is refused, not believed."""
    for written, target in zip(data["targets"], report.targets):
        label = f"target {_label(target.target)}"
        _known_fits(where, label, target, run)
        status = written.get("status")
        if status != target.status.value:
            raise UsageError(
                f"{where}: {label} has the status {_shown(status)}, but its checks and error make it "
                f"{target.status.value}"
            )
        if not _counts_fit(written.get("summary"), target.summary):
            raise UsageError(
                f"{where}: the summary of {label} does not count its checks "
                f"(it says {_said(written.get('summary'))}; they are {_counted(target.summary)})"
            )
    if not _counts_fit(data.get("summary"), report.summary):
        raise UsageError(
            f"{where}: the report's summary does not add up its targets' checks "
            f"(it says {_said(data.get('summary'))}; they are {_counted(report.summary)})"
        )


def _known_fits(where: str, label: str, target: TargetReport, run: RunInfo) -> None:
    """UsageError unless each failure of the target marked known is one that an entry of the
    run's baseline accepts (as `baseline.Baseline.apply` marked them in the run). A failure
    left unmarked is not looked for: it only fails the merge, as it would the run."""
    known = [check.name for check in target.checks if check.status is Status.KNOWN]
    if target.error_known:
        known.insert(0, TARGET_ERROR)
    if not known:
        return
    if run.baseline_entries is None:
        raise UsageError(
            f"{where}: {label}: {_failure(known[0])} is marked known, but the run recorded no --baseline "
            "(only a baseline makes a failure known)"
        )
    key = label_key(target.target)  # as the run looked it up, from the same folder
    entries = frozenset(run.baseline_entries)
    for name in known:
        if (key, name) not in entries:
            hint = (
                " (an absolute label is looked up relative to the working folder where it is below it: "
                "merge from the folder the shards were run in)"
                if os.path.isabs(target.target)
                else ""
            )
            raise UsageError(
                f"{where}: {label}: {_failure(name)} is marked known, but the run's --baseline has no entry "
                f"{visible(bounded(key, 200))} :: {visible(bounded(name, 100))}{hint}"
            )


def _failure(name: str) -> str:
    return "its error" if name == TARGET_ERROR else f"its check {visible(bounded(name, 100))}"


def _counts_fit(written: Any, counts: Mapping[str, int]) -> bool:
    """Whether a summary read back is `counts`: its keys, each a whole number (not `true`)."""
    return (
        type(written) is dict
        and written.keys() == counts.keys()
        and all(type(written[key]) is int and written[key] == n for key, n in counts.items())
    )


def _counted(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{n} {status}" for status, n in counts.items())


def _said(summary: Any) -> str:
    """A summary read back, as `_counted` shows one, whatever it holds."""
    if type(summary) is not dict or not summary or len(summary) > len(SUMMARY_STATUSES):
        return _shown(summary)
    return ", ".join(f"{safe_repr(n, 40)} {visible(bounded(str(key), 40))}" for key, n in summary.items())


def _shown(value: Any) -> str:
    return visible(safe_repr(value, 200))


def _fits(first: Shard, other: Shard) -> None:
    """UsageError unless `other` comes from the same run as `first` (everything but the shard)."""
    a, b = visible(first.path), visible(other.path)
    mine, theirs = first.run, other.run
    differences = mine.versions.differences(theirs.versions)
    if differences:
        raise UsageError(f"{a} and {b} were run with different versions ({'; '.join(differences)}); run them alike")
    if mine.planned != theirs.planned or mine.settings != theirs.settings or mine.plan != theirs.plan:
        raise UsageError(
            f"{a} and {b} were run with different settings (targets, layouts, arguments or options): "
            "shards of different runs"
        )
    if mine.strict != theirs.strict:
        strict, lax = (a, b) if mine.strict else (b, a)
        raise UsageError(f"{strict} was run with --strict, {lax} without; run every shard alike")
    if mine.baseline != theirs.baseline:
        raise UsageError(f"{a} and {b} were run with different --baseline files; run every shard alike")
    n, m = (mine.shard or (1, 1))[1], (theirs.shard or (1, 1))[1]
    if n != m:
        raise UsageError(f"{a} is {first.name} and {b} is {other.name}: shards of different splits")


def _same_sources(shards: Sequence[Shard]) -> tuple[tuple[str, str], ...]:
    """The files the shards checked, each with its digest (`RunInfo.sources`, every shard's);
    UsageError where two shards recorded different digests for one file: they were run on
    different contents of it (an older checkout, a file edited between the CI jobs)."""
    seen: dict[str, tuple[str, Shard]] = {}
    for shard in shards:
        for path, digest in shard.run.sources:
            first_digest, first = seen.setdefault(path, (digest, shard))
            if digest != first_digest:
                raise UsageError(
                    f"{visible(first.path)} and {visible(shard.path)} were run on different contents of "
                    f"{visible(bounded(path, 300))} (SHA-256 {_digest(first_digest)} and {_digest(digest)}): "
                    "shards of different sources; run every shard on the same files"
                )
    return tuple(sorted((path, digest) for path, (digest, _) in seen.items()))


def _digest(digest: str) -> str:
    return f"{digest[:12]}..." if digest else "none: unreadable, or edited while that shard ran"


def merge_shards(shards: Sequence[Shard]) -> Report:
    """The report of the whole run the shards come from.

    Raises:
        UsageError: the shards do not fit together (one line, naming the files).
    """
    first = shards[0]
    for other in shards[1:]:
        _fits(first, other)
    sources = _same_sources(shards)
    n = (first.run.shard or (1, 1))[1]
    given: dict[int, Shard] = {}
    for shard in shards:
        k = (shard.run.shard or (1, 1))[0]
        if k in given:
            raise UsageError(f"{shard.name} is given twice: {visible(given[k].path)} and {visible(shard.path)}")
        given[k] = shard
    missing = [f"{k}/{n}" for k in range(1, n + 1) if k not in given]
    if missing:
        raise UsageError(
            f"shard {missing[0]} is missing" if len(missing) == 1 else f"shards {', '.join(missing)} are missing"
        )
    placed: dict[int, tuple[Shard, TargetReport]] = {}
    for shard in shards:
        for target in shard.report.targets:
            assert target.position is not None  # read_shard refuses a target without one
            if target.position in placed:
                earlier = placed[target.position][0]
                holders = (
                    f"{visible(shard.path)} holds"
                    if earlier is shard
                    else f"{visible(earlier.path)} and {visible(shard.path)} both hold"
                )
                raise UsageError(
                    f"{holders} the target at position {target.position} ({_label(target.target)})"
                    f"{' twice' if earlier is shard else ''}"
                )
            placed[target.position] = (shard, target)
    absent = [i for i in range(first.run.planned) if i not in placed]
    if absent:
        raise UsageError(
            f"{len(absent)} of the run's {first.run.planned} planned targets are in no shard "
            f"(the first: position {absent[0]}); was a shard cut short?"
        )
    targets = [placed[i][1] for i in range(first.run.planned)]
    run = replace(first.run, shard=None, sources=sources)
    duration = sum(shard.report.duration_s for shard in shards)
    return Report(targets, duration, run=run, environment=merged_environment([s.report.environment for s in shards]))


def merged_environment(environments: Sequence[Environment | None]) -> Environment | None:
    """The environment of shards run on several machines: the seeds and devices of all, and
    each other field's value where the shards agree; where they differ (one shard had a GPU),
    every value, in shard order, joined with " | ", so that none is claimed for all."""
    known = [environment for environment in environments if environment is not None]
    if not known:
        return None
    merged: dict[str, object] = {}
    for f in fields(Environment):
        values = [getattr(environment, f.name) for environment in known]
        if f.name in ("seeds", "devices"):
            merged[f.name] = tuple(dict.fromkeys(v for value in values for v in value))
        elif f.name == "variables":
            names = dict.fromkeys(name for value in values for name in value)
            merged[f.name] = {name: _agreed([value.get(name) for value in values]) for name in names}
        else:
            merged[f.name] = _agreed(values)
    return Environment(**merged)  # type: ignore[arg-type]


def _agreed(values: Sequence[str | None]) -> str | None:
    distinct = list(dict.fromkeys(values))
    if len(distinct) == 1:
        return distinct[0]
    return " | ".join("none" if value is None else value for value in distinct)


def exit_status(report: Report, strict: bool) -> int:
    """1 when a target failed or could not be checked (failures the baseline accepts aside),
    or with `strict` when a check was incomplete; else 0: as `layercheck run` exits."""
    if not report.ok:
        return 1
    return 1 if strict and report.summary[Status.INCOMPLETE.value] else 0
