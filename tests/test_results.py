"""Statuses, kinds and causes as data (issue 15): the JSON and JUnit reports keep their strings
and keys, reporters read typed fields, and batch runs recognise memory errors and sys.exit from
the exception's type, never from message text."""

from __future__ import annotations

import ast
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from conftest import PACKAGE

import layercheck
from layercheck.contract.layout import Layout
from layercheck.reporters.console import ConsoleReporter, make_console
from layercheck.reporters.json_report import report_json
from layercheck.reporters.junit import report_junit
from layercheck.results import (
    Cause,
    CheckFailure,
    CheckResult,
    Kind,
    MalformedReport,
    Report,
    Status,
    TargetReport,
    cause_of,
)
from layercheck.running.batch import Batch, _process_errors, requests_from_specs, run_batch

GRADIENTS = "gradients_are_numerically_correct"


# -- the targets: one per way a target or a check can end -----------------------------------


class Dense:
    """Correct: every check it reaches passes."""

    learnables = ("W", "b")

    def __init__(self):
        self.W = None
        self.b = None

    def initialize(self, layout):
        n = layout.size[layout.find("C")]
        if self.W is None:
            self.W = np.random.randn(3, n) / np.sqrt(n)
        if self.b is None:
            self.b = 0.1 * np.random.randn(3, 1)

    def predict(self, X):
        return np.tanh(self.W @ X + self.b)

    def backward(self, X, Y, dLdY, memory):
        dLdZ = dLdY * (1 - Y * Y)
        return self.W.T @ dLdZ, dLdZ @ X.T, np.sum(dLdZ, axis=1, keepdims=True)


class HalfGradient(Dense):
    """The gradient of W is off by 1/2: a diagnosed gradient failure."""

    def backward(self, X, Y, dLdY, memory):
        dX, dW, db = super().backward(X, Y, dLdY, memory)
        return dX, 0.5 * dW, db


class ShortBackward:
    """backward takes too few arguments: a contract problem, and backward raises (a traceback)."""

    def predict(self, X):
        return 2 * X

    def backward(self, X, Y):
        return 2 * Y


class Kinked:
    """backward refuses the masked dL/dY the engine sends at kinks: the gradient check is incomplete."""

    def predict(self, X):
        return np.maximum(X, 0)

    def backward(self, X, Y, dLdY, memory):
        if np.any(dLdY == 0):
            raise ValueError("dLdY has zeros")
        return dLdY * (X > 0)


class PredictOnly:
    """No backward: the backward checks are skipped."""

    def predict(self, X):
        return 3 * X


class NoWeights:
    """Cannot be constructed: the target's error."""

    def __init__(self):
        raise RuntimeError("no weights")

    def predict(self, X):
        return X


class Scale:
    """A correct operation: kind "function"."""

    save_inputs_for_backward = True

    def forward(self, X):
        return 2 * X

    def backward(self, dLdY, compute_gradients, X):
        return 2 * dLdY if compute_gradients[0] else None


def _scenario() -> Report:
    kinked = np.random.default_rng(0).standard_normal((4, 3, 5, 6))
    kinked.flat[:40] = 0.0  # on the kink: the engine masks these outputs and calls backward again
    return Report(
        [
            layercheck.check_layer(Dense, "5,4:CB"),
            layercheck.check_layer(HalfGradient, "5,4:CB"),
            layercheck.check_layer(ShortBackward, "5,4:CB"),
            layercheck.check_layer(Kinked, "4,3,5,6:SSCB", inputs=[kinked]),
            layercheck.check_layer(PredictOnly, "5,4:CB"),
            layercheck.check_layer(NoWeights, "5,4:CB"),
            layercheck.check_function(Scale, "5,4:CB"),
        ]
    )


# `run`, `position`, `traceback`, `cached` and `known` are additive (issue 28: merging shards,
# baselines, the result cache), and `source` (issue 36: merge annotates as run does).
REPORT_KEYS = ["version", "targets", "summary", "duration_s", "run"]
TARGET_KEYS = [
    *("target", "kind", "layouts", "status", "error", "duration_s", "checks", "summary", "notes"),
    *("allowed_changes", "position", "traceback", "cached", "source"),
]
CHECK_KEYS = ["name", "status", "message", "details", "duration_s"]
SUMMARY_KEYS = ["passed", "failed", "incomplete", "skipped", "known"]
GRADIENT_DETAILS = ["evaluated", "device", "precision", "fallback", "arguments", "explanation"]
# A pass records what its agreement rests on (an additive key): its message is rendered from it.
GRADIENT_PASSED_DETAILS = ["evaluated", "device", "precision", "fallback", "arguments", "agreement", "explanation"]
GRADIENT_FAILED_DETAILS = ["evaluated", "device", "precision", "fallback", "arguments", "findings", "explanation"]
ARGUMENT_KEYS = ["argument", "kind", "status", "reason", "shape", "labels", "probes"]
FAILED_ARGUMENT_KEYS = ARGUMENT_KEYS + ["diagnosis", "max_abs_error", "max_rel_error", "tolerance"]
PROBE_KEYS = [
    "step",
    "numeric",
    "analytic",
    "abs_error",
    "rel_error",
    "tolerance",
    "error_estimate",
    "outputs_masked_at_kinks",
    "verdict",
    "reason",
]

# target -> (kind, status, {check: (status, details keys in order)}), as the reports had them
# before statuses, kinds and the typed fields became data; a target whose check could not
# decide is `incomplete` (issue 36: it was `passed`).
EXPECTED = {
    "Dense": (
        "layer",
        "passed",
        {GRADIENTS: ("passed", GRADIENT_PASSED_DETAILS), "predict_does_not_error": ("passed", [])},
    ),
    "HalfGradient": ("layer", "failed", {GRADIENTS: ("failed", GRADIENT_FAILED_DETAILS)}),
    "ShortBackward": (
        "layer",
        "failed",
        {
            # Additive keys since (issue 37): the typed problems, from which the message is rendered.
            "function_syntaxes_are_correct": ("failed", ["syntax_problems", "problems"]),
            "backward_does_not_error": ("failed", ["traceback", "call", "raised", "raised_when", "dtype"]),
            "backward_is_consistent_in_size": ("incomplete", ["blocked_by"]),
        },
    ),
    "Kinked": ("layer", "incomplete", {GRADIENTS: ("incomplete", GRADIENT_DETAILS)}),
    "PredictOnly": ("layer", "passed", {"backward_does_not_error": ("skipped", []), GRADIENTS: ("skipped", [])}),
    "NoWeights": ("layer", "error", {}),
    "Scale": (
        "function",
        "passed",
        {GRADIENTS: ("passed", GRADIENT_PASSED_DETAILS), "predict_does_not_error": ("skipped", [])},
    ),
}


def test_the_json_report_keeps_its_strings_and_keys_for_every_way_a_target_ends():
    report = _scenario()
    text = report_json(report)
    assert "Status." not in text and "Kind." not in text and "Verdict." not in text
    data = json.loads(text)
    assert list(data) == REPORT_KEYS and list(data["summary"]) == SUMMARY_KEYS
    for target in data["targets"]:
        kind, status, checks = EXPECTED[target["target"]]
        assert list(target) == TARGET_KEYS and list(target["summary"]) == SUMMARY_KEYS
        assert (target["kind"], target["status"]) == (kind, status), target["target"]
        assert (target["error"] is not None) == (status == "error")
        statuses = {c["name"]: c["status"] for c in target["checks"]}
        assert set(statuses.values()) <= set(SUMMARY_KEYS)
        for check in target["checks"]:
            assert list(check) == CHECK_KEYS
            if check["name"] in checks:
                assert (check["status"], list(check["details"])) == checks[check["name"]], (target["target"], check)
    assert data["targets"][5]["checks"] == [] and "no weights" in data["targets"][5]["error"]


def test_gradient_records_keep_their_keys():
    data = json.loads(report_json(_scenario()))
    by_target = {t["target"]: {c["name"]: c for c in t["checks"]} for t in data["targets"]}
    passing = by_target["Dense"][GRADIENTS]["details"]["arguments"]
    assert [list(r) for r in passing] == [ARGUMENT_KEYS] * 3
    assert all(
        list(p) == PROBE_KEYS and p["verdict"] in ("pass", "fail", "undecided") for r in passing for p in r["probes"]
    )
    failing = {r["argument"]: r for r in by_target["HalfGradient"][GRADIENTS]["details"]["arguments"]}
    assert list(failing["W"]) == FAILED_ARGUMENT_KEYS and failing["W"]["status"] == "failed"
    assert list(failing["W"]["diagnosis"]) == [
        "finding",
        "regions",
        "examples",
        "blocks",
        "stopped_after_s",
        "stopped_after_calls",
        "calls_on_part",
        "sub_batch",
    ]
    (finding,) = by_target["HalfGradient"][GRADIENTS]["details"]["findings"]
    assert list(finding) == ["cause", "arguments", "detail", "region", "numbers", "complex_values"]
    assert finding["cause"] == "factor" and finding["arguments"] == ["W"]
    assert finding["detail"] == {
        "ratio": finding["detail"]["ratio"],
        "form": "fraction",
        "numerator": 1,
        "denominator": 2,
    }
    undecided = by_target["Kinked"][GRADIENTS]
    (record,) = undecided["details"]["arguments"]
    assert record["status"] == "incomplete" and "ValueError" in record["reason"]
    assert undecided["details"]["explanation"][0] == "differentiated: predict"


def test_a_report_read_back_writes_the_same_json():
    report = _scenario()
    again = Report.from_dict(json.loads(report_json(report)))
    assert report_json(again) == report_json(report)
    check = again.targets[2].result("backward_does_not_error")
    assert check.status is Status.FAILED and "traceback" not in check.details and "TypeError" in check.traceback


def test_a_reports_layouts_are_read_back_as_layouts_and_a_malformed_one_is_refused():
    """A target's layouts are typed (`Layout`) wherever a report is made, a file's too: the
    reports render them, the parent compares a worker's with what it asked for."""
    target = TargetReport("t.py:T", layouts=[layercheck.parse_layout("20,32:TB:int=0..9"), "3,2:CB"])
    again = TargetReport.from_dict(json.loads(json.dumps(target.to_dict())))
    assert again.layouts == [Layout((20, 32), "TB", (0, 9)), Layout((3, 2), "CB")]
    assert again.to_dict()["layouts"] == ["20,32:TB:int=0..9", "3,2:CB"]
    for forged in (["3,2:QQ"], ["3,2"], [7]):
        with pytest.raises(MalformedReport) as raised:
            TargetReport.from_dict({**target.to_dict(), "layouts": forged})
        assert str(raised.value).startswith(("the report's layout ", "an item of the report's layouts"))
        assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"version": "2.0"}, "the report's version is '2.0'; this layercheck reads version '1.0'"),
        ({"version": None}, "the report's version is None; this layercheck reads version '1.0'"),
        ({"verdict": "passed"}, "a report has unknown field(s) 'verdict'"),
    ],
)
def test_a_report_read_back_is_refused_whole_when_it_is_another_versions(change, words):
    """Another version of the schema, or a field this one does not write, is not read in part:
    a report of a newer layercheck would lose what this one cannot read."""
    data = json.loads(report_json(Report([], 0.0)))
    data.update(change)
    with pytest.raises(MalformedReport) as raised:
        Report.from_dict(data)
    assert str(raised.value) == words


def test_junit_writes_the_status_strings():
    root = ET.fromstring(report_junit(_scenario()))
    properties = [{p.get("name"): p.get("value") for p in suite.find("properties")} for suite in root]
    assert [(p["kind"], p["status"]) for p in properties] == [(k, s) for k, s, _ in EXPECTED.values()]
    failure = root.find(".//testcase[@name='backward_does_not_error']/failure")
    assert failure.get("type") == "failed" and "TypeError" in failure.text
    assert root.find(".//testcase[@name='target']/error").get("type") == "error"


def test_statuses_and_kinds_are_their_strings():
    assert Status.PASSED == "passed" and f"{Status.INCOMPLETE}" == "incomplete" and str(Kind.FUNCTION) == "function"
    assert json.dumps({Status.FAILED: [Status.SKIPPED, Kind.LAYER]}) == '{"failed": ["skipped", "layer"]}'
    assert {"passed": 1}[Status.PASSED] == 1
    result = CheckResult("c", "incomplete")
    assert result.status is Status.INCOMPLETE and TargetReport("t", "function").kind is Kind.FUNCTION


def _target(*statuses: Status) -> TargetReport:
    return TargetReport(
        "k.py:Kink", checks=[CheckResult(f"c{i}", status, f"said {i}") for i, status in enumerate(statuses)]
    )


P, F, U, S, K = Status.PASSED, Status.FAILED, Status.INCOMPLETE, Status.SKIPPED, Status.KNOWN  # U: undecided


@pytest.mark.parametrize(
    "checks, status",
    [
        ((P, S), P),
        ((P, U, S), U),
        ((F, U), F),
        ((K, U), U),  # an undecided check outranks a failure the baseline accepts
        ((K, P), K),
    ],
)
def test_a_target_is_incomplete_when_no_check_failed_and_one_could_not_decide(checks, status):
    target = _target(*checks)
    assert target.status is status and target.to_dict()["status"] == status.value
    assert target.ok is (status is not F)  # incomplete fails no run without --strict
    assert target.fails() is (status is F) and target.fails(strict=True) is (status in (F, U))
    assert TargetReport.from_dict(target.to_dict()).status is status


def test_raise_on_failure_raises_for_an_incomplete_target_only_when_strict():
    undecided, passed = _target(P, U), _target(P)
    undecided.raise_on_failure()
    Report([passed, undecided]).raise_on_failure()
    with pytest.raises(CheckFailure) as raised:
        undecided.raise_on_failure(strict=True)
    assert str(raised.value).splitlines()[0] == "k.py:Kink: c1 incomplete"
    with pytest.raises(CheckFailure) as raised:
        Report([passed, undecided]).raise_on_failure(strict=True)
    assert str(raised.value).splitlines()[0] == "k.py:Kink: c1 incomplete"
    passed.raise_on_failure(strict=True)
    with pytest.raises(CheckFailure) as raised:
        _target(F, U).raise_on_failure()
    assert str(raised.value).splitlines()[0] == "k.py:Kink: c0 failed"


def test_reporters_read_the_typed_fields():
    result = CheckResult(
        "c",
        Status.FAILED,
        "wrong",
        {"argument": "X"},
        explanation=["why it is wrong"],
        problems=["one", "two"],
        traceback="Traceback: layer.py:3",
    )
    report = Report([TargetReport("t", checks=[result])])
    assert result.to_dict()["details"] == {
        "traceback": "Traceback: layer.py:3",
        "argument": "X",
        "explanation": ["why it is wrong"],
        "problems": ["one", "two"],
    }
    failure = ET.fromstring(report_junit(report)).find(".//failure")
    assert "why it is wrong" in failure.text and "layer.py:3" in failure.text
    console = make_console()
    with console.capture() as captured:
        ConsoleReporter(console).target(report.targets[0])
    shown = captured.get()
    assert "why it is wrong" in shown and "- two" in shown and "layer.py:3" in shown


def test_details_given_with_the_schema_keys_are_read_into_the_fields():
    result = CheckResult("c", "failed", "m", {"explanation": ["e"], "traceback": "tb", "problems": ["p"], "k": 1})
    assert (result.explanation, result.traceback, result.problems, result.details) == (["e"], "tb", ["p"], {"k": 1})


# -- causes: from the exception's type --------------------------------------------------------


class PoolExhausted(MemoryError):
    pass


def test_causes_come_from_exception_types_and_their_chains():
    assert cause_of(MemoryError()) is Cause.MEMORY and cause_of(PoolExhausted("x")) is Cause.MEMORY
    assert cause_of(SystemExit(3)) is Cause.EXIT
    assert cause_of(RuntimeError("MemoryError SystemExit sys.exit(3)")) is None
    try:
        try:
            raise MemoryError
        except MemoryError:
            raise RuntimeError("wrapped") from None
    except RuntimeError as exc:
        assert cause_of(exc) is Cause.MEMORY


def test_batch_errors_come_from_the_causes_not_the_messages():
    words = CheckResult("predict_does_not_error", "failed", "predict raised RuntimeError: MemoryError, SystemExit")
    assert _process_errors(TargetReport("t", checks=[words])).error is None
    exits = CheckResult("predict_does_not_error", "failed", "predict stopped", cause=Cause.EXIT)
    assert _process_errors(TargetReport("t", checks=[exits])).error == (
        "the layer called sys.exit in predict_does_not_error: predict stopped"
    )
    assert _process_errors(TargetReport("t", error="x", cause=Cause.MEMORY)).error == "ran out of memory: x"


WORKER_LAYERS = {
    "pool.py": """
class PoolExhausted(MemoryError):
    pass


class Pool:
    example_layout = "3,2:CB"

    def predict(self, X):
        raise PoolExhausted("the pool is empty")
""",
    "words.py": """
class Words:
    example_layout = "3,2:CB"

    def predict(self, X):
        raise RuntimeError("MemoryError and SystemExit and sys.exit( are only words here")
""",
    "exits.py": """
import sys


class Exits:
    example_layout = "3,2:CB"

    def predict(self, X):
        sys.exit("bye")
""",
    "import_pool.py": """
class PoolExhausted(MemoryError):
    pass


raise PoolExhausted("no memory at import")
""",
}


def test_memory_errors_and_sys_exit_in_workers_are_reported_from_the_cause(tmp_path):
    for name, source in WORKER_LAYERS.items():
        (tmp_path / name).write_text(source)
    specs = [str(tmp_path / name) for name in WORKER_LAYERS]
    report = run_batch(Batch(tuple(requests_from_specs(specs)), jobs=2))
    by_file = {Path(t.target.split(":")[0]).name: t for t in report.targets}
    # A MemoryError subclass whose name does not say MemoryError: the type says it.
    pool = by_file["pool.py"]
    assert pool.status == "error" and pool.cause is Cause.MEMORY
    assert pool.error.startswith("ran out of memory in predict_does_not_error: predict raised PoolExhausted")
    # Words in a message are only words.
    words = by_file["words.py"]
    assert words.status == "failed" and words.error is None and words.cause is None
    exits = by_file["exits.py"]
    assert exits.status == "error" and exits.cause is Cause.EXIT
    assert exits.error.startswith("the layer called sys.exit in predict_does_not_error: predict raised SystemExit")
    at_import = by_file["import_pool.py"]
    assert at_import.cause is Cause.MEMORY
    assert at_import.error.startswith("ran out of memory: importing import_pool.py raised PoolExhausted")


# -- no status literal, no cut message --------------------------------------------------------

STATUS_WORDS = {s.value for s in Status}


def _status_literals(path: Path) -> list[tuple[int, str]]:
    """String constants equal to a status, where they are not a key (a dict key, a subscript, the
    key of `.get`), a name in `__all__`, or an XML element's tag (JUnit's own vocabulary)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    allowed: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            allowed |= {id(k) for k in node.keys if k is not None}
        elif isinstance(node, ast.Subscript):
            allowed.add(id(node.slice))
        elif isinstance(node, ast.Call) and node.args:
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in ("get", "SubElement", "Element"):
                allowed.add(id(node.args[1] if name == "SubElement" and len(node.args) > 1 else node.args[0]))
        elif isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            allowed |= {id(n) for n in ast.walk(node.value)}
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in STATUS_WORDS and id(node) not in allowed
    ]


def test_no_module_cuts_finished_text_or_spells_a_status():
    package = PACKAGE
    cuts, literals = [], []
    for path in sorted(package.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if 'split(": ", 1)' in text or "split(': ', 1)" in text:
            cuts.append(str(path.relative_to(PACKAGE.parent)))
        if path.name not in ("results.py", "status.py"):
            literals += [(str(path.relative_to(PACKAGE.parent)), *found) for found in _status_literals(path)]
    assert cuts == []
    assert literals == []


def test_the_status_grep_sees_a_status_literal(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('if result.status == "passed":\n    x = {"error": 1}["error"]\nf(status="skipped")\n')
    assert _status_literals(probe) == [(1, "passed"), (3, "skipped")]
