"""`--junit FILE`: JUnit XML for CI systems (GitHub Actions test reporters, GitLab, Jenkins).

One <testsuite> per target, one <testcase> per check (classname: the target, name: the
check). The mapping of layercheck's statuses, chosen so that a CI system agrees with the exit
status (0 unless a check failed or a target could not be checked):

- passed      a bare <testcase>
- failed      <failure message="one-line message" type="failed">details</failure>
- skipped     <skipped message="the reason"/>
- incomplete  <skipped message="incomplete: the reason"/>: JUnit has no "could not decide";
              CI shows it among the skipped tests, with the prefix, and it does not fail
              the build (nor does it fail the exit status). In the report of a run with
              --strict (`RunInfo.strict`), where it fails the exit status, it fails the
              build too: <failure message="incomplete (--strict): the reason"
              type="incomplete">details</failure>
- known       <skipped message="known failure (baseline): the message"/>: a failure that the
              run's --baseline accepts does not fail the build, as it does not fail the exit
              status; CI lists it, with the prefix
- a target served from the result cache: its suite's property `cached` is `true` (`false`
  for one checked in this run); its times are those of the run that checked it
- a target that could not be checked (import error, crash, timeout): its suite gets one more
  <testcase name="target"> holding <error message="the reason" type="error">traceback</error>,
  after the checks it got through, if any; <skipped message="known failure (baseline): the
  reason"/> instead where the baseline accepts it.
- a target that -x / --maxfail left unchecked: that testcase holds <skipped message="not
  checked: the run stopped after 1 failed target (-x)"/>: it is no failure of its layer.

Text from a layer or the file system is written as the console shows it (`safetext.visible`):
XML 1.0 cannot hold most control characters at all, so they, escape sequences and bidi
overrides are spelled out (`\x1b`, `\u202e`); attributes are one line (a newline shows as
`\n`), the text of <failure> and <error> keeps its lines. Every text is bounded: a label at
`NAME_LIMIT`, a message at 500 characters, details at a few KB. A target's layouts are
joined with "; " (a layout holds commas).

Each testsuite's <properties> hold, besides the target's kind, layouts and status (`incomplete`
where no check failed but one could not decide), the run's environment where the report
records one (`environment.python`, `environment.CUPY_TF32`...: `Environment.items`), so that
a CI system shows where a failure was found.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from typing import Any

from layercheck.environment import Environment
from layercheck.reporters.files import write_report
from layercheck.results import Cause, CheckResult, Report, Status, TargetReport, repro_command
from layercheck.safetext import MESSAGE_LIMIT, NAME_LIMIT, TRACEBACK_LIMIT, bounded, safe_str, visible

__all__ = [
    "ERROR_CASE",
    "INCOMPLETE_PREFIX",
    "KNOWN_PREFIX",
    "STRICT_PREFIX",
    "report_junit",
    "suite_names",
    "write_junit",
]

ERROR_CASE = "target"  # name of the testcase that carries a target's error
KNOWN_PREFIX = "known failure (baseline): "
INCOMPLETE_PREFIX = "incomplete: "
STRICT_PREFIX = "incomplete (--strict): "  # an incomplete check that fails a --strict run
_LAYOUTS = "; "  # between a target's layouts: a layout holds commas (24,24,20,128:SSCB)
_DETAILS_LIMIT = 2 * TRACEBACK_LIMIT  # the explanation and the traceback of a failure


def _text(value: Any, limit: int = _DETAILS_LIMIT) -> str:
    """Lines of text (a traceback, a worker's output) that XML can hold, bounded."""
    return bounded(visible(safe_str(value, limit), lines=True), limit)


def _line(value: Any, limit: int = 500) -> str:
    """One line (an attribute: a name, a message), bounded."""
    return bounded(visible(safe_str(value, limit)), limit)


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def _details(check: CheckResult) -> str:
    """The explanation, a line each (a newline in one is spelled out), then the traceback."""
    lines = [_line(line, MESSAGE_LIMIT) for line in check.explanation]
    if check.repro is not None:
        lines.append(_line(f"reproduce: {repro_command(check.repro)}", MESSAGE_LIMIT))
    if check.traceback:
        lines.append(_text(check.traceback))
    return bounded("\n".join(lines), _DETAILS_LIMIT)


def suite_names(report: Report) -> list[str]:
    """Each target's label; the layouts are added where a label is not unique (a config may
    check the same layer at two layouts) so that CI keeps the suites apart."""
    labels = [t.target for t in report.targets]
    return [
        f"{t.target} [{_LAYOUTS.join(map(str, t.layouts))}]" if labels.count(t.target) > 1 else t.target
        for t in report.targets
    ]


def _testsuite(
    target: TargetReport, name: str, environment: Environment | None = None, strict: bool = False
) -> ET.Element:
    summary = target.summary
    # With --strict an incomplete check fails the run: a failure here too.
    undecided = summary[Status.INCOMPLETE]
    failures = summary[Status.FAILED] + (undecided if strict else 0)
    # A target's error is one more testcase: an error, or skipped when the baseline accepts it
    # or -x left the target unchecked (no failure of its layer).
    error_case = target.error is not None
    error_skipped = error_case and (target.error_known or target.cause is Cause.NOT_RUN)
    skipped = summary[Status.SKIPPED] + (0 if strict else undecided) + summary[Status.KNOWN] + int(error_skipped)
    errors = int(error_case and not error_skipped)
    suite = ET.Element(
        "testsuite",
        {
            "name": _line(name, 2 * NAME_LIMIT),
            "tests": str(len(target.checks) + int(error_case)),
            "failures": str(failures),
            "errors": str(errors),
            "skipped": str(skipped),
            "time": _seconds(target.duration_s),
        },
    )
    classname = _line(name, 2 * NAME_LIMIT)
    properties = ET.SubElement(suite, "properties")
    for key, value in (
        ("kind", target.kind.value),
        ("layouts", _LAYOUTS.join(map(str, target.layouts))),
        ("status", target.status.value),
        ("cached", "true" if target.cached else "false"),  # the time is the run's that checked it
    ):
        ET.SubElement(properties, "property", {"name": key, "value": _line(value, 2 * NAME_LIMIT)})
    # Where the run was made (DESIGN.md section 10), in every suite: CI systems show a suite's
    # properties, and a suite is what a merged or single-target view keeps.
    for key, value in environment.items() if environment is not None else ():
        ET.SubElement(properties, "property", {"name": f"environment.{key}", "value": _line(value, 2 * NAME_LIMIT)})
    for check in target.checks:
        case = ET.SubElement(
            suite, "testcase", {"classname": classname, "name": _line(check.name), "time": _seconds(check.duration_s)}
        )
        if check.status == Status.FAILED:
            ET.SubElement(
                case, "failure", {"message": _line(check.message), "type": Status.FAILED.value}
            ).text = _details(check)
        elif check.status == Status.SKIPPED:
            ET.SubElement(case, "skipped", {"message": _line(check.message)})
        elif check.status == Status.INCOMPLETE and strict:
            ET.SubElement(
                case, "failure", {"message": _line(f"{STRICT_PREFIX}{check.message}"), "type": Status.INCOMPLETE.value}
            ).text = _details(check)
        elif check.status == Status.INCOMPLETE:
            ET.SubElement(case, "skipped", {"message": _line(f"{INCOMPLETE_PREFIX}{check.message}")})
        elif check.status == Status.KNOWN:
            ET.SubElement(case, "skipped", {"message": _line(f"{KNOWN_PREFIX}{check.message}")})
    if target.error is not None:
        case = ET.SubElement(suite, "testcase", {"classname": classname, "name": ERROR_CASE, "time": "0.000"})
        if target.error_known:
            ET.SubElement(case, "skipped", {"message": _line(f"{KNOWN_PREFIX}{target.error}")})
            return suite
        if target.cause is Cause.NOT_RUN:
            ET.SubElement(case, "skipped", {"message": _line(target.error)})
            return suite
        ET.SubElement(case, "error", {"message": _line(target.error), "type": Status.ERROR.value}).text = _text(
            target.traceback or target.error
        )
    return suite


def report_junit(report: Report) -> str:
    strict = report.run is not None and report.run.strict
    suites = [
        _testsuite(target, name, report.environment, strict)
        for target, name in zip(report.targets, suite_names(report))
    ]
    root = ET.Element(
        "testsuites",
        {
            "name": "layercheck",
            "tests": str(sum(int(s.get("tests", 0)) for s in suites)),
            "failures": str(sum(int(s.get("failures", 0)) for s in suites)),
            "errors": str(sum(int(s.get("errors", 0)) for s in suites)),
            "skipped": str(sum(int(s.get("skipped", 0)) for s in suites)),
            "time": _seconds(report.duration_s),
        },
    )
    root.extend(suites)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(report: Report, path: str | os.PathLike[str]) -> None:
    """Write as `reporters.files.write_report` does, like the JSON report."""
    write_report(path, report_junit(report))
