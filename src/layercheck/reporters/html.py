"""`--html FILE`: the report as one self-contained HTML page (DESIGN.md section 10).

Every target and check, failures first (targets that failed or could not be checked, then
those with a check left undecided, then the rest; within a target: failed, incomplete, passed,
skipped, each group in the order the checks ran), filterable by status and searchable by name
(`html_assets.SCRIPT`); each failure with its message, its explanation and problems, pictures
of where a gradient is wrong as inline SVG (`reporters.svg`), the user's frames and the
check's details; the run's environment in the header.

Self-contained: the style sheet and the script are inline, and the page's Content-Security-
Policy allows them by their hashes and nothing else (no script, style, font or image is fetched
from anywhere, and a `<script>` that escaping had missed would not run either). Without the
script the page shows everything.

Text from a layer or the file system (names, messages, tracebacks, details) is shown as the
console shows it (`safetext.visible`: control characters, escape sequences and bidi overrides
spelled out) and then escaped with `html.escape(..., quote=True)`, in element text and
attributes alike; it is bounded as every report bounds it (`results`), the details of a check
at `_DETAILS_LIMIT`. Plain string building: a template engine would be a runtime dependency
for a page of a few fixed parts, and autoescaping would not spell out what `visible` does.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from html import escape

from layercheck.reporters.console import summary_line
from layercheck.reporters.files import write_report
from layercheck.reporters.html_assets import SCRIPT, STYLE
from layercheck.reporters.pictures import figures_of
from layercheck.reporters.svg import figure_html, legend_html
from layercheck.results import CheckResult, Report, Status, TargetReport, plain, repro_command
from layercheck.safetext import TRACEBACK_LIMIT, bounded, visible

__all__ = ["report_html", "write_html"]

_LAYOUTS = "; "  # between a target's layouts: a layout holds commas
_DETAILS_LIMIT = 4 * TRACEBACK_LIMIT  # a check's details as JSON
# The order of the filters, and of the checks under a target.
_FILTERS = (Status.FAILED, Status.ERROR, Status.INCOMPLETE, Status.PASSED, Status.SKIPPED)
_CHECK_ORDER = {Status.FAILED: 0, Status.INCOMPLETE: 1, Status.PASSED: 2, Status.SKIPPED: 3}


def _t(text: object, *, lines: bool = False) -> str:
    """Text for the page: what a terminal would interpret spelled out, then HTML-escaped."""
    return escape(visible(str(text), lines=lines), quote=True)


def _hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii") + "'"


def _policy() -> str:
    return (
        f"default-src 'none'; style-src {_hash(STYLE)}; script-src {_hash(SCRIPT)}; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )


def _rank(target: TargetReport) -> int:
    """Failures first: failed or not checked, then a check undecided, then the rest."""
    if target.status in (Status.ERROR, Status.FAILED):
        return 0
    return 1 if target.status is Status.INCOMPLETE else 2


def _seconds(value: float) -> str:
    return f"{value:.2f} s"


def _counts(target: TargetReport) -> str:
    order = (Status.FAILED, Status.INCOMPLETE, Status.PASSED, Status.SKIPPED)
    return ", ".join(f"{target.summary[s]} {s.value}" for s in order if target.summary[s]) or "no checks"


def _badge(status: Status) -> str:
    return f'<span class="badge st-{status.value}">{status.value.upper()}</span>'


def _pre(text: str, label: str) -> str:
    return (
        f'<details class="trace" open><summary>{label}</summary>'
        f'<pre tabindex="0">{_t(text.rstrip(), lines=True)}</pre></details>'
    )


def _failure(check: CheckResult, target: TargetReport) -> str:
    """What a failed check says beyond its message: explanation, problems, pictures, frames."""
    parts = []
    if check.explanation:
        parts.append('<ul class="explanation">' + "".join(f"<li>{_t(x)}</li>" for x in check.explanation) + "</ul>")
    if len(check.problems) > 1:
        parts.append('<ul class="problems">' + "".join(f"<li>{_t(p)}</li>" for p in check.problems) + "</ul>")
    if check.gradient is not None:
        figures = figures_of(check.gradient)
        if figures:
            parts.append("".join(figure_html(figure) for figure in figures) + legend_html())
    if check.repro is not None:  # --repro: the script that recomputes this failure
        parts.append(f'<p class="repro">Reproduce: <code>{_t(repro_command(check.repro))}</code></p>')
    if check.traceback:
        parts.append(_pre(check.traceback, "Traceback (your code's frames)"))
    return "".join(parts)


def _details(check: CheckResult) -> str:
    if not check.details:
        return ""
    text = bounded(json.dumps(plain(check.details), indent=1, ensure_ascii=False), _DETAILS_LIMIT)
    return (
        f'<details class="json"><summary>Details (JSON)</summary><pre tabindex="0">{_t(text, lines=True)}</pre>'
        "</details>"
    )


def _check(check: CheckResult, target: TargetReport) -> str:
    body = f'<p class="message">{_t(check.message)}</p>' if check.message else ""
    if check.status == Status.FAILED:
        body += _failure(check, target)
    if check.status in (Status.FAILED, Status.INCOMPLETE):
        body += _details(check)
    return (
        f'<li class="check st-{check.status.value}" data-status="{check.status.value}" data-name="{_t(check.name)}">'
        f'{_badge(check.status)}<span class="name">{_t(check.name)}</span> '
        f'<span class="time">{_seconds(check.duration_s)}</span>{body}</li>'
    )


def _target(target: TargetReport, index: int) -> str:
    status = target.status
    layouts = _LAYOUTS.join(map(str, target.layouts)) or "no layout"
    # A cached verdict keeps the time its checks took when they ran, said so beside it.
    took = _seconds(target.duration_s) + (" (cached)" if target.cached else "")
    meta = f"{target.kind.value} · {layouts} · {_counts(target)} · {took}"
    inner = []
    if target.notes:
        inner.append('<ul class="notes">' + "".join(f"<li>note: {_t(n)}</li>" for n in target.notes) + "</ul>")
    if target.error is not None:
        inner.append(f'<p class="reason">could not be checked: {_t(target.error)}</p>')
        if target.traceback:
            inner.append(_pre(target.traceback, "Traceback"))
    checks = sorted(target.checks, key=lambda c: _CHECK_ORDER[c.status])  # stable: run order within
    problems = [c for c in checks if c.status in (Status.FAILED, Status.INCOMPLETE)]
    others = [c for c in checks if c.status not in (Status.FAILED, Status.INCOMPLETE)]
    if problems:
        inner.append('<ol class="checks">' + "".join(_check(c, target) for c in problems) + "</ol>")
    if others:  # under the problems, folded where there are some: a phone shows those first
        counts = ", ".join(
            f"{n} {s.value}" for s in (Status.PASSED, Status.SKIPPED) if (n := sum(c.status == s for c in others))
        )
        inner.append(
            f'<details class="others"{"" if problems else " open"}><summary>{counts}</summary>'
            '<ol class="checks">' + "".join(_check(c, target) for c in others) + "</ol></details>"
        )
    opened = " open" if _rank(target) < 2 else ""
    return (
        f'<section class="target st-{status.value}" id="target-{index}" data-status="{status.value}" '
        f'data-name="{_t(target.target)}"><details{opened}><summary>{_badge(status)}'
        f'<span class="name">{_t(target.target)}</span> <span class="meta">{_t(meta)}</span></summary>'
        f"<div>{''.join(inner)}</div></details></section>"
    )


def _environment(report: Report) -> str:
    if report.environment is None:
        return '<section class="env"><p>Environment: not recorded in this report.</p></section>'
    rows = "".join(f"<div><dt>{_t(name)}</dt><dd>{_t(value)}</dd></div>" for name, value in report.environment.items())
    return f'<section class="env" aria-label="environment"><h2>Environment</h2><dl>{rows}</dl></section>'


def _targets_line(report: Report) -> str:
    errors = sum(t.status == Status.ERROR for t in report.targets)
    failed = sum(t.status == Status.FAILED for t in report.targets)
    incomplete = sum(t.status == Status.INCOMPLETE for t in report.targets)
    passed = len(report.targets) - errors - failed - incomplete
    undecided = f"{incomplete} incomplete, " if incomplete else ""  # as the console's line says it
    return f"Targets: {passed} passed, {failed} failed, {undecided}{errors} could not be checked."


def _controls(report: Report) -> str:
    counts = dict(report.summary)
    counts[Status.ERROR.value] = sum(t.status == Status.ERROR for t in report.targets)
    boxes = "".join(
        f'<label><input type="checkbox" name="status" value="{s.value}" checked> {s.value} ({counts[s.value]})</label>'
        for s in _FILTERS
    )
    return (
        '<form id="controls" role="search" hidden><fieldset><legend>Show</legend>'
        f'{boxes}</fieldset><div class="search"><label for="search">Search names</label>'
        '<input type="search" id="search" autocomplete="off" placeholder="target or check name">'
        '<button type="button" id="only-failures">Failures only</button>'
        '<button type="button" id="show-all">Show all</button>'
        '<p id="shown" role="status" aria-live="polite"></p></div></form>'
    )


def report_html(report: Report) -> str:
    ordered = sorted(enumerate(report.targets), key=lambda pair: _rank(pair[1]))  # stable
    summary = summary_line(report.summary, report.duration_s)
    targets = "".join(_target(target, index) for index, target in ordered)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_policy()}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        '<link rel="icon" href="data:,">'
        f"<title>layercheck: {_t(summary)}</title><style>{STYLE}</style></head><body>"
        f'<header><h1>layercheck report</h1><p class="summary">{_t(summary)}</p>'
        f"<p>{_t(_targets_line(report))}</p>{_environment(report)}</header>"
        f"{_controls(report)}"
        f'<main aria-label="targets">{targets or "<p>No targets.</p>"}</main>'
        f"<script>{SCRIPT}</script></body></html>\n"
    )


def write_html(report: Report, path: str | os.PathLike[str]) -> None:
    """Write as `reporters.files.write_report` does, like the JSON and JUnit reports."""
    write_report(path, report_html(report))
