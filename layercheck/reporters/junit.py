"""`--junit FILE`: JUnit XML for CI systems (GitHub Actions test reporters, GitLab, Jenkins).

One <testsuite> per target, one <testcase> per check (classname: the target, name: the
check). The mapping of layercheck's statuses, chosen so that a CI system agrees with the exit
status (0 unless a check failed or a target could not be checked):

- passed      a bare <testcase>
- failed      <failure message="one-line message" type="failed">details</failure>
- skipped     <skipped message="the reason"/>
- incomplete  <skipped message="incomplete: the reason"/>: JUnit has no "could not decide";
              CI shows it among the skipped tests, with the prefix, and it does not fail
              the build (nor does it fail the exit status)
- a target that could not be checked (import error, crash, timeout): its suite gets one more
  <testcase name="target"> holding <error message="the reason" type="error">traceback</error>,
  after the checks it got through, if any.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from typing import Any

from layercheck.reporters.files import write_report
from layercheck.results import CheckResult, Report, Status, TargetReport
from layercheck.safetext import encodable, safe_str

__all__ = ["ERROR_CASE", "report_junit", "suite_names", "write_junit"]

# Characters XML 1.0 cannot hold at all (ElementTree would write them and break the file).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
ERROR_CASE = "target"  # name of the testcase that carries a target's error


def _text(value: Any) -> str:
    # encodable: a file name's undecodable bytes (surrogates) would stop the UTF-8 writer.
    return _NOT_XML.sub("\ufffd", encodable(safe_str(value, 10**6)))


def _line(value: Any, limit: int = 500) -> str:
    text = " ".join(_text(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def _details(check: CheckResult) -> str:
    lines = [str(line) for line in check.explanation]
    if check.traceback:
        lines.append(check.traceback)
    return _text("\n".join(lines))


def suite_names(report: Report) -> list[str]:
    """Each target's label; the layouts are added where a label is not unique (a config may
    check the same layer at two layouts) so that CI keeps the suites apart."""
    labels = [t.target for t in report.targets]
    return [f"{t.target} [{', '.join(t.layouts)}]" if labels.count(t.target) > 1 else t.target for t in report.targets]


def _testsuite(target: TargetReport, name: str) -> ET.Element:
    summary = target.summary
    failures, skipped = summary[Status.FAILED], summary[Status.SKIPPED] + summary[Status.INCOMPLETE]
    errors = int(target.error is not None)
    suite = ET.Element(
        "testsuite",
        {
            "name": _text(name),
            "tests": str(len(target.checks) + errors),
            "failures": str(failures),
            "errors": str(errors),
            "skipped": str(skipped),
            "time": _seconds(target.duration_s),
        },
    )
    properties = ET.SubElement(suite, "properties")
    for key, value in (
        ("kind", target.kind.value),
        ("layouts", " ".join(target.layouts)),
        ("status", target.status.value),
    ):
        ET.SubElement(properties, "property", {"name": key, "value": _text(value)})
    for check in target.checks:
        case = ET.SubElement(
            suite, "testcase", {"classname": _text(name), "name": check.name, "time": _seconds(check.duration_s)}
        )
        if check.status == Status.FAILED:
            ET.SubElement(
                case, "failure", {"message": _line(check.message), "type": Status.FAILED.value}
            ).text = _details(check)
        elif check.status == Status.SKIPPED:
            ET.SubElement(case, "skipped", {"message": _line(check.message)})
        elif check.status == Status.INCOMPLETE:
            ET.SubElement(case, "skipped", {"message": _line(f"incomplete: {check.message}")})
    if target.error is not None:
        case = ET.SubElement(suite, "testcase", {"classname": _text(name), "name": ERROR_CASE, "time": "0.000"})
        ET.SubElement(case, "error", {"message": _line(target.error), "type": Status.ERROR.value}).text = _text(
            target.traceback or target.error
        )
    return suite


def report_junit(report: Report) -> str:
    suites = [_testsuite(target, name) for target, name in zip(report.targets, suite_names(report))]
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


def write_junit(report: Report, path: str | os.PathLike) -> None:
    """Write as `reporters.files.write_report` does, like the JSON report."""
    write_report(path, report_junit(report))
