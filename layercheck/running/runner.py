"""Run the selected checks on one target and collect a TargetReport."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from layercheck.checks import REGISTRY, Check, Incomplete, Skip
from layercheck.contract.layout import Layout
from layercheck.errors import TargetError, UsageError
from layercheck.results import STATUSES, Cause, CheckResult, Kind, Status, TargetReport, cause_of
from layercheck.running.session import Session
from layercheck.settings.options import Options

__all__ = ["run_check", "run_target", "select_checks"]


def select_checks(options: Options) -> list[Check]:
    """The registered checks named by `options.checks` (all when None) less `options.skip`."""
    unknown = [n for n in (options.checks or ()) + tuple(options.skip) if n not in REGISTRY]
    if unknown:
        raise UsageError(f"unknown check(s) {', '.join(unknown)}; `layercheck list-checks` lists them")
    wanted = options.checks or tuple(REGISTRY)
    return [REGISTRY[n] for n in REGISTRY if n in wanted and n not in options.skip]


def run_check(check: Check, session: Session) -> CheckResult:
    start = time.perf_counter()
    try:
        not_applicable = check.applies_to(session.reference.kind)
        if not_applicable:
            raise Skip(not_applicable)
        outcome = check.run(session)
        result = CheckResult(
            check.name,
            outcome.status,
            outcome.message,
            dict(outcome.details),
            explanation=list(outcome.explanation),
            problems=list(outcome.problems),
            traceback=outcome.traceback,
            cause=outcome.cause,
        )
    except Skip as exc:
        result = CheckResult(check.name, Status.SKIPPED, str(exc))
    except Incomplete as exc:
        result = CheckResult(
            check.name,
            Status.INCOMPLETE,
            str(exc),
            dict(exc.details),
            explanation=exc.explanation,
            traceback=exc.traceback,
            cause=exc.cause or cause_of(exc),
        )
    except TargetError as exc:
        result = CheckResult(
            check.name, Status.INCOMPLETE, f"not checked: {exc}", traceback=exc.traceback, cause=cause_of(exc)
        )
    except SystemExit as exc:
        result = CheckResult(
            check.name,
            Status.FAILED,
            f"the layer called sys.exit({exc.code!r}) during the check",
            cause=Cause.EXIT,
        )
    except Exception as exc:  # a defect of layercheck: never blame the layer for it
        result = CheckResult(
            check.name,
            Status.INCOMPLETE,
            f"layercheck internal error: {type(exc).__name__}: {exc}",
            traceback=traceback.format_exc(),
            cause=cause_of(exc),
        )
    result.duration_s = time.perf_counter() - start
    assert result.status in STATUSES
    return result


def run_target(
    label: str,
    factory: Callable[[], Any],
    layouts: Sequence[Layout],
    options: Options,
    kind: Kind = Kind.LAYER,
    on_check: Callable[[CheckResult], None] | None = None,
    on_start: Callable[[Check], None] | None = None,
) -> TargetReport:
    """Check one layer; construction errors become the report's `error`.

    `on_start(check)` and `on_check(result)` are called around each check (a worker process
    reports with them where it is, so that a hang or a crash can be placed).
    """
    start = time.perf_counter()
    report = TargetReport(label, kind, [str(layout) for layout in layouts])
    checks = select_checks(options)
    try:
        session = Session(factory, layouts, options)
    except TargetError as exc:
        report.error, report.traceback, report.cause = str(exc), exc.traceback, cause_of(exc)
    else:
        for check in checks:
            if on_start is not None:
                on_start(check)
            result = run_check(check, session)
            report.checks.append(result)
            if on_check is not None:
                on_check(result)
        report.notes = session.notes()
    report.duration_s = time.perf_counter() - start
    return report
