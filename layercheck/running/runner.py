"""Run the selected checks on one target and collect a TargetReport."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from layercheck.checks import REGISTRY, Check, Incomplete, Skip
from layercheck.contract.layout import Layout
from layercheck.errors import TargetError, UsageError
from layercheck.results import FAILED, INCOMPLETE, PASSED, SKIPPED, CheckResult, TargetReport
from layercheck.running.session import Options, Session


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
        result = CheckResult(check.name, outcome.status, outcome.message, dict(outcome.details))
    except Skip as exc:
        result = CheckResult(check.name, SKIPPED, str(exc))
    except Incomplete as exc:
        result = CheckResult(check.name, INCOMPLETE, str(exc), dict(exc.details))
    except TargetError as exc:
        result = CheckResult(check.name, INCOMPLETE, f"not checked: {exc}", {"traceback": exc.traceback})
    except SystemExit as exc:
        result = CheckResult(check.name, FAILED, f"the layer called sys.exit({exc.code!r}) during the check")
    except Exception as exc:  # a defect of layercheck: never blame the layer for it
        result = CheckResult(
            check.name,
            INCOMPLETE,
            f"layercheck internal error: {type(exc).__name__}: {exc}",
            {"traceback": traceback.format_exc()},
        )
    result.duration_s = time.perf_counter() - start
    assert result.status in (PASSED, FAILED, INCOMPLETE, SKIPPED)
    return result


def run_target(
    label: str,
    factory: Callable[[], Any],
    layouts: Sequence[Layout],
    options: Options,
    kind: str = "layer",
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
        report.error, report.traceback = str(exc), exc.traceback
    else:
        for check in checks:
            if on_start is not None:
                on_start(check)
            result = run_check(check, session)
            report.checks.append(result)
            if on_check is not None:
                on_check(result)
    report.duration_s = time.perf_counter() - start
    return report
