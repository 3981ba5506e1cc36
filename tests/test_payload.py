"""What the parent reads from its workers (issue 27): a worker runs the layer, so the parent
trusts none of what it sends. Reports are read strictly (`from_dict`), against what the parent
asked for (its label, kind, layouts and its own selection of checks); discovery answers
likewise; messages are plain data, unpickled without calling anything. Also: results of
dtypes without a tolerance of their own, and input domains too narrow to check gradients in.
"""

from __future__ import annotations

import io
import math
import pickle
import re

import numpy as np
import pytest
from rich.console import Console

from layercheck.contract.layout import parse_layout
from layercheck.errors import UsageError
from layercheck.reporters.console import ConsoleReporter, Verbosity
from layercheck.results import Cause, CheckResult, Kind, MalformedReport, Origin, Report, Status, TargetReport
from layercheck.running.batch import CheckJob, Discovered, _checked, _expected_checks, _unexpected_checks
from layercheck.sandbox.integrity import INTEGRITY_CHECK
from layercheck.sandbox.isolation import Outcome, _read_message, _Unreadable
from layercheck.settings.options import Options, parse_input_domain

GRADIENTS = "gradients_are_numerically_correct"


def _job(**options) -> CheckJob:
    return CheckJob(
        "layer.py:Triple",
        "/nowhere/layer.py",
        "Triple",
        Kind.LAYER,
        (parse_layout("4,3:CB"),),
        {},
        Options(**options),
        20.0,
    )


def _payload(job: CheckJob, names: list[str], **fields) -> dict:
    checks = [CheckResult(name, Status.PASSED) for name in names]
    report = TargetReport(job.label, job.kind, list(job.layouts), checks, **fields)
    return {**report.to_dict(), "traceback": "", "cause": None}


# -- reading a report: from_dict --------------------------------------------------------------


def test_a_report_written_reads_back_as_it_was():
    check = CheckResult("c", Status.FAILED, "wrong", {"max": 1.5, "at": [1, 2]}, 0.25, explanation=["why"])
    report = TargetReport("t.py:T", Kind.FUNCTION, ["4,3:CB"], [check], notes=["n"], duration_s=1.0)
    again = Report.from_dict(Report([report]).to_dict()).targets[0]
    assert again.to_dict() == report.to_dict()
    assert again.checks[0].explanation == ["why"]


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"foo": 1}, r"a target's report has unknown field\(s\) 'foo'"),
        (12345, r"a target's report is 12345, not a mapping"),
        ({"target": 7}, r"the report's target is 7, not a string"),
        ({"target": "t", "kind": "module"}, r"the report's kind is 'module'"),
        ({"target": "t", "cause": "bored"}, r"the report's cause is 'bored'"),
        ({"target": "t", "duration_s": float("nan")}, r"the report has duration_s nan, not a finite number >= 0"),
        ({"target": "t", "duration_s": -1.0}, r"duration_s -1\.0"),
        ({"target": "t", "duration_s": True}, r"duration_s True"),
        ({"target": "t", "layouts": "4,3:CB"}, r"the report's layouts are '4,3:CB', not a list"),
        ({"target": "t", "checks": [{"name": "c", "status": "error"}]}, r"check c has status 'error'"),
        ({"target": "t", "checks": [{"name": 3, "status": "passed"}]}, r"a check's name is 3, not a string"),
        ({"target": "t", "checks": [{"name": "c", "status": "passed", "duration_s": math.inf}]}, r"inf"),
        (
            {"target": "t", "checks": [{"name": "c", "status": "passed", "details": [1]}]},
            r"details \[1\], not a mapping",
        ),
        ({"target": "t", "checks": [{"name": "c", "status": "passed", "details": {1: 2}}]}, r"the key 1, not a string"),
        (
            {"target": "t", "checks": [{"name": "c", "status": "passed", "details": {"x": {1}}}]},
            r"\{1\}, not JSON data",
        ),
        ({"target": "t", "checks": [{"name": "c", "status": "passed", "extra": 1}]}, r"unknown field\(s\) 'extra'"),
        ({"target": "t", "error": "x" * 100_000}, r"the report's error is 100,000 characters long"),
    ],
)
def test_a_malformed_report_is_refused_in_one_line(data, problem):
    with pytest.raises(MalformedReport, match=problem) as raised:
        TargetReport.from_dict(data, Origin.WORKER)
    assert "\n" not in str(raised.value)


def test_details_nested_past_any_report_are_refused():
    details: dict = {}
    for _ in range(100):
        details = {"d": details}
    with pytest.raises(MalformedReport, match="nested more than"):
        CheckResult.from_dict({"name": "c", "status": "passed", "details": details}, Origin.WORKER)


# -- a report against what was asked ----------------------------------------------------------

ASKED = ["a", "b", "c"]


@pytest.mark.parametrize(
    ("names", "complete", "problem"),
    [
        (["a", "b", "c"], True, None),
        ([INTEGRITY_CHECK, "a", "b", "c"], True, None),
        (["a", INTEGRITY_CHECK, "b", "c"], True, None),
        (["a", "b", "c", INTEGRITY_CHECK], True, None),
        (["a", "b"], False, None),  # a worker that stopped (out of memory): the first ones
        ([], False, None),
        (["a", "c"], True, "b is missing"),
        (["a", "c"], False, "b is missing"),  # a gap is never a worker that stopped
        (["a", "b"], True, "c is missing"),
        (["a"], True, "b, c are missing"),
        (["a", "b", "c", "d"], True, "d was not asked for"),
        (["a", "a", "b", "c"], True, "a is there twice"),
        (["b", "a", "c"], True, "a is missing"),
        ([INTEGRITY_CHECK, "a", INTEGRITY_CHECK, "b", "c"], True, f"{INTEGRITY_CHECK} is there twice"),
        (["a", "b\x1b[2J", "c"], True, r"b\x1b[2J was not asked for"),
    ],
)
def test_the_checks_of_a_report_must_be_those_asked_for_in_order(names, complete, problem):
    assert _unexpected_checks(ASKED, names, complete) == problem


def test_the_parent_selects_the_checks_from_its_own_options():
    assert GRADIENTS in _expected_checks(_job())
    assert GRADIENTS not in _expected_checks(_job(skip=(GRADIENTS,)))


def test_a_report_that_fits_is_taken_as_sent():
    job = _job()
    report = _checked(job, Outcome(result=_payload(job, _expected_checks(job))))
    assert report.error is None and report.status is Status.PASSED


def test_a_report_missing_a_check_is_the_targets_error_never_a_pass():
    job = _job()
    names = [name for name in _expected_checks(job) if name != GRADIENTS]
    report = _checked(job, Outcome(result=_payload(job, names)))
    assert report.status is Status.ERROR and report.checks == []
    assert report.error == (
        f"the worker's report does not match what was asked: {GRADIENTS} is missing "
        "(a layer that tampers with layercheck's process?)"
    )


def test_a_report_with_an_error_may_hold_the_first_checks_only():
    job = _job()
    names = _expected_checks(job)
    stopped = _checked(job, Outcome(result=_payload(job, names[:2], error="ran out of memory", cause=Cause.MEMORY)))
    assert stopped.error == "ran out of memory" and [c.name for c in stopped.checks] == names[:2]
    gap = _checked(job, Outcome(result=_payload(job, names[:1] + names[2:3], error="ran out of memory")))
    assert gap.error.startswith(f"the worker's report does not match what was asked: {names[1]} is missing")


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"target": "other.py:Good"}, "it is the report of other.py:Good, not of layer.py:Triple"),
        ({"kind": "function"}, "it is the report of a function, not of a layer"),
        ({"layouts": ["2,2:CB"]}, "it was checked with the layouts 2,2:CB, not 4,3:CB"),
        # Only the parent knows a run was stopped (-x) or interrupted: a worker cannot say so,
        # which would keep its target out of the failures and the recap.
        ({"error": "not checked", "cause": "not_run"}, "it says the target was not run"),
        ({"error": "interrupted", "cause": "interrupted"}, "it says the target was interrupted"),
    ],
)
def test_a_report_of_another_target_is_the_targets_error(change, problem):
    job = _job()
    report = _checked(job, Outcome(result={**_payload(job, _expected_checks(job)), **change}))
    assert report.status is Status.ERROR and problem in report.error
    assert report.target == job.label and report.layouts == [parse_layout("4,3:CB")]


def test_a_malformed_report_is_the_targets_error_never_a_crash_of_the_parent():
    job = _job()
    for forged in ({"foo": 1}, 12345, None, [1, 2]):
        report = _checked(job, Outcome(result=forged, duration_s=0.5))
        assert report.status is Status.ERROR and report.error.startswith("the worker's report is malformed: ")
        assert report.duration_s == 0.5


def test_a_dead_workers_check_events_are_kept_only_where_they_fit():
    job = _job()
    names = _expected_checks(job)
    first = CheckResult(names[0], Status.FAILED, "wrong").to_dict()
    forged_pass = CheckResult(GRADIENTS, Status.PASSED).to_dict()
    events = [("start", names[0]), ("check", first), ("check", "junk"), ("check", forged_pass), ("step", 5)]
    report = _checked(job, Outcome(events=events, failure="the worker process died with signal SIGSEGV"))
    assert [c.name for c in report.checks] == [names[0]]
    assert report.error.startswith(f"the worker process died with signal SIGSEGV in {names[0]}; 2 check result(s)")
    assert "(the first: a check result is 'junk', not a mapping)" in report.error
    clean = _checked(job, Outcome(events=events[:2], failure="the worker process died with signal SIGSEGV"))
    assert "dropped" not in clean.error and [c.name for c in clean.checks] == [names[0]]


# -- discovery ----------------------------------------------------------------------------------


def test_a_discovery_answer_reads_back_as_it_was_sent():
    found = {"name": "T", "kind": Kind.FUNCTION, "example": ["4,3:CB"], "example_error": None, "line": 7}
    again = Discovered.from_dict(Discovered(found=(found,)).to_dict(), "T")
    assert again.found == (
        {"name": "T", "kind": Kind.FUNCTION, "example": ["4,3:CB"], "example_error": None, "line": 7},
    )
    failed = Discovered.from_dict(Discovered(error="no", cause=Cause.EXIT).to_dict())
    assert (failed.error, failed.cause) == ("no", Cause.EXIT)


def _answer(**target) -> dict:
    found = {"name": "T", "kind": "layer", "example": None, "example_error": None, "line": None, **target}
    return {"found": [found], "error": None, "traceback": "", "cause": None}


@pytest.mark.parametrize(
    ("answer", "asked", "problem"),
    [
        ("junk", None, "it is 'junk', not what the worker makes"),
        ({"found": []}, None, "not what the worker makes"),
        ({**_answer(), "cause": "bored"}, None, "its cause is 'bored'"),
        ({**_answer(), "found": "T"}, None, "its targets are 'T', not a list"),
        (_answer(name=""), None, "a target's name is '', not a name"),
        (_answer(name=3), None, "a target's name is 3"),
        (_answer(), "Other", "it found 'T' where 'Other' was asked for"),
        (_answer(kind="module"), None, "the kind of 'T' is 'module'"),
        (_answer(example="4,3:CB"), None, "is '4,3:CB', not a list of layouts"),
        (_answer(example=["4,3:QQ"]), None, "the example_layout of 'T' is not one layercheck wrote"),
        (_answer(example_error=1), None, "the example_layout error of 'T' is 1, not a string"),
        (_answer(line="3"), None, "the line of 'T' is '3', not a line number"),
        (_answer(line=0), None, "the line of 'T' is 0, not a line number"),
        (_answer(line=True), None, "the line of 'T' is True, not a line number"),
        (_answer(line=10**9), None, "the line of 'T' is 1000000000, not a line number"),
    ],
)
def test_a_malformed_discovery_answer_is_refused_in_one_line(answer, asked, problem):
    with pytest.raises(MalformedReport, match=re.escape(problem)):
        Discovered.from_dict(answer, asked)


# -- messages: plain data only ------------------------------------------------------------------


class _Calls:
    def __reduce__(self):
        return (print, ("called",))


def test_a_message_is_read_as_plain_data_and_calls_nothing(capsys):
    plain = ("done", {"a": [1, 2.5, float("nan"), None, True, ("x", b"y")]})
    assert _read_message(pickle.dumps(plain))[0] == "done"
    with pytest.raises(_Unreadable, match=r"it names builtins\.print; a worker sends only plain data"):
        _read_message(pickle.dumps(("done", _Calls())))
    with pytest.raises(_Unreadable, match="layercheck.status.Status"):
        _read_message(pickle.dumps(("done", Status.PASSED)))
    with pytest.raises(_Unreadable, match="is not a \\(kind, data\\) pair"):
        _read_message(pickle.dumps(["done", 1]))
    with pytest.raises(_Unreadable):
        _read_message(b"\x80\x05junk")
    assert capsys.readouterr().out == ""


# -- the console: check names as text of the layer's ----------------------------------------


def test_a_check_name_never_reaches_the_console_raw():
    name = "gradients\x1b[2J\nPASSED x"
    report = TargetReport("t.py:T", checks=[CheckResult(name, Status.FAILED, "m"), CheckResult(name, Status.PASSED)])
    for verbosity in Verbosity:
        out = io.StringIO()
        reporter = ConsoleReporter(Console(file=out, width=100, color_system=None), verbosity)
        reporter.target(report)
        reporter.overall(Report([report]))
        assert "\x1b" not in out.getvalue() and "\nPASSED x" not in out.getvalue()


# -- dtypes without a tolerance of their own ----------------------------------------------------


def test_a_dtype_without_a_tolerance_takes_that_of_the_nearest_precision():
    options = Options()
    assert options.tolerance(np.float16) == (16 * float(np.finfo(np.float16).eps), options.tolerance("float32")[1])
    assert options.tolerance(np.longdouble) == options.tolerance("float64")
    assert options.tolerance(np.clongdouble) == options.tolerance("complex128")
    assert options.tolerance(np.int32) == options.tolerance("float32")
    loose = Options(tolerances={"float32": {"rtol": 0.1, "atol": 0.5}})
    assert loose.tolerance(np.float16) == (0.1, 0.5)  # never tighter than the tested dtype's


# -- input domains too narrow to check gradients in ---------------------------------------------


@pytest.mark.parametrize(
    ("domain", "problem"),
    [
        ((0.0, 5e-324), r"x: is too narrow to check gradients in: 4\.94e-324 wide, below 1e-34 "),
        ((0.0, 1e-300), r"x: is too narrow to check gradients in: 1e-300 wide, below 1e-34 "),
        ([(0.0, 1e-300), None], r"x\[0\]: is too narrow to check gradients in: 1e-300 wide"),
        ((1.0, 1.000001), r"1e-06 wide at values of size 1, below 1e-05 of their size .* at least 1e-05\)"),
        ((-1e6, -1e6 + 1), r"1 wide at values of size 1e\+06, below 1e-05 of their size"),
    ],
)
def test_a_domain_too_narrow_to_check_gradients_in_is_refused_saying_why(domain, problem):
    with pytest.raises(UsageError, match=problem):
        parse_input_domain(domain, "x")


@pytest.mark.parametrize(
    "domain", [(0.0, 1e-3), (1.0, 1.001), (-1e-6, 1e-6), (0.0, 1e-33), (1e6, 1e6 + 20), (-1e308, 1e308), (0.0, None)]
)
def test_narrow_domains_the_gradient_check_works_in_are_accepted(domain):
    assert parse_input_domain(domain, "x") == domain
