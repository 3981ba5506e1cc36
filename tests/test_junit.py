"""`--junit FILE` (DESIGN.md section 6): the mapping of statuses to JUnit elements, and
XML that CI systems can read whatever the messages hold."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from layercheck import CheckResult, Report, TargetReport
from layercheck.reporters.junit import report_junit, write_junit
from layercheck.runinfo import RunInfo, Versions


def sample_report() -> Report:
    checked = TargetReport(
        "layers/a.py:A",
        "layer",
        ["3,2:CB"],
        [
            CheckResult("predict_does_not_error", "passed", duration_s=0.25),
            CheckResult(
                "gradients_are_numerically_correct",
                "failed",
                "dLdX is off by 1/2",
                {"explanation": ["X: factor 0.5"], "traceback": "Traceback ...\x1b[31m"},
            ),
            CheckResult("backward_does_not_error", "skipped", "no backward defined"),
            CheckResult("outputs_are_finite", "incomplete", "every sample hit a kink"),
        ],
        duration_s=1.5,
    )
    broken = TargetReport(
        "layers/b.py", error="timed out after 10 s in predict_does_not_error <&>\x00", traceback="File ..."
    )
    return Report([checked, broken], duration_s=2.0)


def test_statuses_map_to_junit_elements():
    root = ET.fromstring(report_junit(sample_report()))
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == ("5", "1", "1", "2")
    checked, broken = root.findall("testsuite")
    assert checked.get("name") == "layers/a.py:A"
    assert (checked.get("tests"), checked.get("failures"), checked.get("errors"), checked.get("skipped")) == (
        "4",
        "1",
        "0",
        "2",
    )
    cases = {case.get("name"): case for case in checked.findall("testcase")}
    assert all(case.get("classname") == "layers/a.py:A" for case in cases.values())
    assert list(cases["predict_does_not_error"]) == [] and cases["predict_does_not_error"].get("time") == "0.250"
    failure = cases["gradients_are_numerically_correct"].find("failure")
    assert failure.get("message") == "dLdX is off by 1/2" and "X: factor 0.5" in failure.text
    assert cases["backward_does_not_error"].find("skipped").get("message") == "no backward defined"
    assert cases["outputs_are_finite"].find("skipped").get("message") == "incomplete: every sample hit a kink"
    properties = {p.get("name"): p.get("value") for p in checked.find("properties")}
    assert properties == {"kind": "layer", "layouts": "3,2:CB", "status": "failed", "cached": "false"}
    (error_case,) = broken.findall("testcase")
    assert error_case.get("name") == "target"
    error = error_case.find("error")
    assert error.get("message").startswith("timed out after 10 s in predict_does_not_error <&>")
    assert error.text == "File ..."


def test_characters_xml_cannot_hold_are_replaced():
    text = report_junit(sample_report())
    assert "\x00" not in text and "\x1b" not in text
    ET.fromstring(text)  # well-formed


def test_the_same_label_twice_gets_its_layouts_in_the_suite_name():
    one = TargetReport("l.py:L", layouts=["3,2:CB"])
    two = TargetReport("l.py:L", layouts=["5,2:CB"])
    names = [s.get("name") for s in ET.fromstring(report_junit(Report([one, two]))).findall("testsuite")]
    assert names == ["l.py:L [3,2:CB]", "l.py:L [5,2:CB]"]


def test_write_junit_writes_atomically(tmp_path):
    path = tmp_path / "sub" / "report.xml"
    write_junit(sample_report(), path)
    assert ET.parse(path).getroot().tag == "testsuites"
    assert [p.name for p in path.parent.iterdir()] == ["report.xml"]  # no temporary left


def test_reports_round_trip_through_dicts():
    report = sample_report()
    report.targets[1].traceback = "File ..."
    again = Report.from_dict(report.to_dict())
    assert again.to_dict() == report.to_dict()
    data = {**report.targets[1].to_dict(), "traceback": "File ..."}
    assert TargetReport.from_dict(data).traceback == "File ..."


def _undecided() -> TargetReport:
    return TargetReport(
        "layers/k.py:Kink",
        checks=[
            CheckResult("predict_does_not_error", "passed"),
            CheckResult("gradients_are_numerically_correct", "incomplete", "every sample on a kink"),
        ],
    )


def _run(strict: bool) -> RunInfo:
    return RunInfo(None, 1, "settings", Versions("3.11", "2.0", None, "0.1"), strict=strict)


def test_an_incomplete_target_is_skipped_and_fails_only_the_report_of_a_strict_run():
    lenient = ET.fromstring(report_junit(Report([_undecided()], run=_run(strict=False))))
    (suite,) = lenient.findall("testsuite")
    assert {p.get("name"): p.get("value") for p in suite.find("properties")}["status"] == "incomplete"
    assert (suite.get("failures"), suite.get("skipped")) == ("0", "1")
    case = suite.find("testcase[@name='gradients_are_numerically_correct']")
    assert [child.tag for child in case] == ["skipped"]
    assert case.find("skipped").get("message") == "incomplete: every sample on a kink"
    # --strict fails the run on it (exit status 1): CI sees a failure too, of its own type.
    strict = ET.fromstring(report_junit(Report([_undecided()], run=_run(strict=True))))
    (suite,) = strict.findall("testsuite")
    assert (strict.get("failures"), suite.get("failures"), suite.get("skipped")) == ("1", "1", "0")
    case = suite.find("testcase[@name='gradients_are_numerically_correct']")
    assert [child.tag for child in case] == ["failure"]
    failure = case.find("failure")
    assert (failure.get("type"), failure.get("message")) == (
        "incomplete",
        "incomplete (--strict): every sample on a kink",
    )
    assert suite.find("testcase[@name='predict_does_not_error']/failure") is None
