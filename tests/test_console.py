"""The console report (issue 18): compact like pytest, every width, one cause once, a recap,
pictures of where a gradient is wrong, notes of what was not tested, and the help."""

from __future__ import annotations

import io
import os
import re
import subprocess
from pathlib import Path

import conftest
import numpy as np
import pytest
from html_reports import diagnosis
from rich.console import Console

import layercheck
from layercheck.findings.gradient import GradientReport, MalformedDetails
from layercheck.reporters.console import ConsoleReporter, Verbosity
from layercheck.reporters.pictures import pictures_of
from layercheck.results import CheckResult, Report, Status, TargetReport
from layercheck.settings.config import CONFIG_REFERENCE

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_layers"
VERDICTS = REPO / "tests" / "corpus_verdicts"
GRADIENTS = "gradients_are_numerically_correct"
MISSING_DX = "sample_layers/buggy/srelu_missing_dx.py"


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return conftest.run_cli(*args, env={**os.environ, **(env or {})})


def _report(*paths: Path, **options) -> Report:
    layers = [_load(path) for path in paths]
    return Report([layercheck.check_layer(layer, layer.example_layout, **options) for layer in layers])


def _load(path: Path):
    from layercheck.contract.loading import discover, import_module

    return discover(import_module(path))[0][1]


def _render(report: Report, width: int, verbosity: Verbosity = Verbosity.NORMAL, terminal: bool = True) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=terminal, color_system=None, soft_wrap=not terminal)
    reporter = ConsoleReporter(console, verbosity)
    for target in report.targets:
        reporter.target(target)
    reporter.overall(report)
    return out.getvalue()


@pytest.fixture(scope="module")
def failing() -> Report:
    return _report(SAMPLES / "buggy" / "srelu_missing_dx.py", VERDICTS / "channel_scale_bias_one_channel.py")


@pytest.mark.parametrize("width", [60, 80, 160])
def test_every_line_fits_the_terminal_and_names_are_whole(failing, width):
    text = _render(failing, width)
    assert all(len(line) <= width for line in text.splitlines()), text
    words = set(re.findall(r"[a-z_]+", text))
    for check in ("backward_does_not_error", "backward_is_consistent_across_observations", GRADIENTS):
        assert check in words, (check, text)


def test_into_a_pipe_without_columns_lines_stay_whole_unpadded_and_uncoloured(failing, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    text = _render(failing, 60, terminal=False)
    assert all(line == line.rstrip() for line in text.splitlines())
    assert any(len(line) > 60 for line in text.splitlines()), "a long message is one line, not cut"
    assert "\x1b" not in text


@pytest.mark.parametrize("width", [60, 80])
def test_into_a_pipe_lines_wrap_at_columns_unpadded_and_uncoloured(failing, width, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(width))
    text = _render(failing, width, terminal=False)
    lines = text.splitlines()
    assert all(line == line.rstrip() for line in lines), "padding into a pipe"
    assert all(len(line) <= width for line in lines), text
    assert "\x1b" not in text
    words = set(re.findall(r"[a-z_]+", text))
    assert {"backward_does_not_error", "backward_is_consistent_across_observations", GRADIENTS} <= words


def test_one_cause_once_with_the_checks_it_left_undecided(failing):
    text = _render(failing, 160)
    missing = text.split("channel_scale_bias_one_channel")[0]
    assert "INCOMPLETE" not in missing, "the undecided checks are named in the failure's line"
    line = " ".join(missing.split("FAILED backward_does_not_error")[1].split("Traceback")[0].split())
    assert "it left 6 check(s) undecided:" in line
    assert "backward_is_repeatable" in line and GRADIENTS in line
    assert "forward" not in missing.replace("forward_", ""), "a layer without forward is never said to fail it"


def test_checks_left_undecided_without_a_failed_call_are_one_line_per_cause():
    report = _report(SAMPLES / "buggy" / "srelu_missing_dx.py", skip=["backward_does_not_error"])
    text = _render(report, 200)
    target, *checks = text.splitlines()
    # No check failed: the target is incomplete (issue 36), and its undecided checks one line.
    assert target.startswith("INCOMPLETE ") and "6 incomplete" in target, text
    assert "\n".join(checks).count("INCOMPLETE") == 1, text
    assert "not checked: backward failed" in text


def test_a_target_whose_check_could_not_decide_is_labelled_incomplete_and_counted_apart():
    def target(label: str, *statuses: Status) -> TargetReport:
        return TargetReport(label, layouts=["3,4:CB"], checks=[CheckResult(f"c{i}", s) for i, s in enumerate(statuses)])

    report = Report(
        [
            target("passed.py", Status.PASSED),
            target("undecided.py", Status.PASSED, Status.INCOMPLETE),
            target("failed.py", Status.FAILED, Status.INCOMPLETE),
        ]
    )
    lines = _render(report, 200).splitlines()
    heads = [line.split("  ")[0] for line in lines if line.endswith("0.00s")]
    assert heads == [
        "PASSED passed.py (layer, 3,4:CB)",
        "INCOMPLETE undecided.py (layer, 3,4:CB)",
        "FAILED failed.py (layer, 3,4:CB)",
    ]
    assert lines[-1].endswith(" Targets: 1 passed, 1 failed, 1 incomplete, 0 could not be checked.")
    # Quiet prints the failures: an incomplete target is none (the summary counts its check).
    quiet = _render(report, 200, Verbosity.QUIET)
    assert "undecided.py" not in quiet and "FAILED failed.py" in quiet
    assert "2 incomplete" in quiet.splitlines()[-1] and "1 incomplete, 0 could not" in quiet.splitlines()[-1]


def test_passing_targets_are_one_line_and_verbose_shows_every_check():
    report = _report(SAMPLES / "prelu.py")
    normal = _render(report, 100).splitlines()
    assert len(normal) == 2 and normal[0].startswith("PASSED") and normal[1].startswith("Test Summary:")
    verbose = _render(report, 100, Verbosity.VERBOSE)
    assert all(check.name in verbose for check in report.targets[0].checks)
    assert _render(report, 100, Verbosity.QUIET).splitlines() == normal[1:]


def test_the_recap_lists_every_failure_and_counts_the_targets(failing):
    text = _render(failing, 200)
    recap = text.split("short summary")[1].splitlines()
    failed = [line for line in recap if line.startswith("FAILED")]
    assert len(failed) == 2
    assert any("srelu_missing_dx" in line and ":: backward_does_not_error -" in line for line in failed)
    assert "Targets: 0 passed, 2 failed, 0 could not be checked." in recap[-1]


@pytest.mark.parametrize(
    ("module", "drawn"),
    [
        ("channel_scale_bias_one_channel", ["0 1 2 3", "· # · ·"]),
        ("time_step_one_wrong", ["0 1 2 3 4 5", "· · # · · ·"]),
        ("border_pool_divides_by_nine", ["  0 1 2 3 4 5", "0 # # # # # #", "2 # # · · # #"]),
        ("signwhere_leaky_relu_negative", ["# X < 0", "· X > 0"]),
    ],
)
def test_a_localized_failure_is_drawn_from_its_blocks(module, drawn):
    # "#": a wrong block, in whichever shade its relative error along the direction it was
    # probed in reaches (the draw's); the wrong blocks' places are the subject.
    target = _report(VERDICTS / f"{module}.py", checks=[GRADIENTS]).targets[0]
    check = target.result(GRADIENTS)
    assert check.gradient is not None
    rows = [re.sub("[█▓▒░]", "#", row) for picture in pictures_of(check.gradient) for row in picture.lines]
    for row in drawn:
        assert row in rows, (module, rows)
    assert "pictures:" in _render(Report([target]), 100)


@pytest.mark.parametrize(
    "module", ["channel_lookalike_one_observation", "factor_scale_bias_x2", "misplaced_duplicate_gradient"]
)
def test_nothing_is_drawn_where_nothing_was_localized(module):
    target = _report(VERDICTS / f"{module}.py", checks=[GRADIENTS]).targets[0]
    check = target.result(GRADIENTS)
    assert check.gradient is not None
    pictures = pictures_of(check.gradient)
    regions = [r for a in check.details.get("arguments", []) for r in a.get("diagnosis", {}).get("regions", [])]
    assert pictures == [] or regions, (module, pictures)


def test_complex_learnables_tested_with_real_dtypes_get_a_note():
    path = SAMPLES / "buggy" / "complex_scale_no_conj.py"
    real = _report(path, dtypes=["float64", "float32"]).targets[0]  # given: no complex dtype added
    assert real.ok and any("complex" in note and "--dtype complex128" in note for note in real.notes)
    assert "note:" in _render(Report([real]), 100)
    complex_ = _report(path, dtypes=["complex128"]).targets[0]
    assert complex_.notes == [] and not complex_.ok


class CountsClasses:
    """A layer whose constructor stores what the user means as classes in num_outputs."""

    example_layout = "4,3:CB"

    def __init__(self, num_outputs=1):
        self.num_outputs = num_outputs

    def predict(self, X):
        return X


def test_a_constructor_argument_that_sets_a_contract_attribute_is_named():
    report = layercheck.check_layer(CountsClasses, "4,3:CB", args={"num_outputs": 1})
    assert any("num_outputs=1" in note and "number of outputs" in note for note in report.notes), report.notes
    assert layercheck.check_layer(CountsClasses, "4,3:CB").notes == []


def test_a_target_that_names_no_layer_lists_those_the_file_defines():
    proc = run_cli("run", "sample_layers/prelu.py:Nope")
    assert proc.returncode == 1
    assert "defines no 'Nope'; it defines PReLU" in proc.stdout
    assert "could not be checked" in proc.stdout.splitlines()[-1]


def test_layercheck_alone_prints_the_help_and_run_help_has_examples_and_values():
    alone = run_cli()
    assert alone.returncode == 0 and alone.stdout.startswith("Usage:") and "Error" not in alone.stdout + alone.stderr
    help_text = run_cli("run", "--help").stdout
    assert "Examples:" in help_text and ":int=" in help_text
    assert all(dtype in help_text for dtype in ("float64", "float32", "complex128", "complex64"))
    assert "configs/default.yaml" not in help_text


def test_run_help_cites_the_config_reference_by_its_real_name():
    """--config's help once cited "the README's Config section", a section of another name;
    it names the page from the constant, which the README links to."""
    help_text = " ".join(run_cli("run", "--help", env={"COLUMNS": "200"}).stdout.split())
    assert f"every key is described in {CONFIG_REFERENCE}" in help_text
    assert "Config section" not in help_text
    assert f"]({CONFIG_REFERENCE})" in (REPO / "README.md").read_text(encoding="utf-8")
    if (REPO / "docs" / "index.md").exists():  # the docs site is part of this checkout
        assert (REPO / CONFIG_REFERENCE).is_file()


def test_force_color_into_a_pipe_draws_no_progress_bar():
    proc = run_cli("run", "sample_layers/prelu.py", env={"FORCE_COLOR": "1"})
    assert proc.returncode == 0
    assert "\x1b[?25l" not in proc.stdout and "━" not in proc.stdout


def test_list_checks_prints_every_name_whole_at_60_columns():
    proc = run_cli("list-checks", env={"COLUMNS": "60"})
    assert all(len(line) <= 60 for line in proc.stdout.splitlines()), proc.stdout
    names = set(proc.stdout.split())
    for check in layercheck.checks.REGISTRY:
        assert check in names


def _gradient(partition: str, blocks: list[dict], shape: list[int], labels: str) -> GradientReport:
    """The typed report of a gradient check's details, as a worker or a report file sends them."""
    record = {
        "argument": "X",
        "kind": "input",
        "status": "failed",
        "shape": shape,
        "labels": labels,
        "diagnosis": diagnosis(partition, blocks),
    }
    report = GradientReport.of({"arguments": [record]})
    assert report is not None
    return report


def test_a_large_plane_is_sampled_and_a_long_strip_says_what_it_left_out():
    edge = [
        {"block": "0", "verdict": "wrong", "rel_error": 0.5, "span": [0, 0]},
        {"block": "1", "verdict": "wrong", "rel_error": 2e-2, "span": [1, 1]},
        {"block": "2+", "verdict": "right", "rel_error": 1e-9, "span": [2, None]},
    ]
    (plane,) = pictures_of(_gradient("distance from the edge", edge, [48, 40, 3, 4], "SSCB"))
    assert "rows and columns sampled" in plane.title and len(plane.lines) == 1 + 12
    assert plane.lines[1].split()[1:] == ["█"] * 24 and "·" in plane.lines[6] and "▓" in plane.lines[2]
    channels = [{"block": str(k), "verdict": "wrong" if k == 70 else "right", "rel_error": 1.0} for k in range(80)]
    (strip,) = pictures_of(_gradient("channel", channels, [4, 4, 80, 2], "SSCB"))
    assert "16 more not drawn" in strip.title and len(strip.lines[1].split()) == 64


@pytest.mark.parametrize(
    ("block", "said"),
    [
        ({"verdict": "sure"}, "verdict of block '0' is 'sure'"),
        ({"span": [3, 1]}, "span"),
        ({"span": [-1, None]}, "whole number"),
        ({"block": 7}, "not a string"),
    ],
)
def test_gradient_details_that_are_not_the_checks_are_refused_in_one_line(block, said):
    data = {"block": "0", "verdict": "wrong", "rel_error": 0.5, "span": [0, 0], **block}
    with pytest.raises(MalformedDetails, match=said):
        _gradient("channel", [data], [4, 4, 3, 2], "SSCB")


class TwoOfThreeGradients:
    """backward returns 2 of its 3 gradients: a broken contract, which blocks every check that
    needs backward's gradients."""

    learnables = ("w", "b")
    example_layout = "4,3,5,6:SSCB"

    def __init__(self):
        self.w = self.b = None

    def initialize(self, layout):
        if self.w is None:
            self.w, self.b = np.random.rand(1, 1, 5, 1), np.random.rand(1, 1, 5, 1)

    def predict(self, X):
        return self.w * X + self.b

    def backward(self, X, Y, dLdY, memory):
        return self.w * dLdY, (dLdY * X).sum(axis=(0, 1, 3), keepdims=True)


def test_a_broken_contract_is_said_once_with_every_check_it_blocked():
    report = Report([layercheck.check_layer(TwoOfThreeGradients, TwoOfThreeGradients.example_layout)])
    text = _render(report, 200)
    assert "INCOMPLETE" not in text, text
    line = " ".join(text.split("FAILED function_syntaxes_are_correct:")[1].split("short summary")[0].split())
    assert "it left 7 check(s) undecided" in line and "backward_does_not_error" in line
    incomplete = {c.name for c in report.targets[0].checks if c.status == "incomplete"}
    assert all(name in line for name in incomplete) and len(incomplete) == 7


# -- the reporters of a run, behind one interface ------------------------------------------------


class _Recorder:
    """A reporter of its own: what a new kind of report would be."""

    def __init__(self, log: list[str], name: str) -> None:
        self.log, self.name = log, name

    def target(self, report: TargetReport) -> None:
        self.log.append(f"{self.name} target {report.target}")

    def finish(self, report: Report) -> None:
        self.log.append(f"{self.name} finish {len(report.targets)}")


def test_reporters_are_told_of_each_target_then_of_the_report_in_their_order():
    from layercheck.reporters.reporter import Reporters

    log: list[str] = []
    reporters = Reporters((_Recorder(log, "a"), _Recorder(log, "b")))
    targets = [TargetReport("p.py:P", checks=[CheckResult("c", Status.PASSED)]), TargetReport("q.py:Q")]
    for target in targets:
        reporters.target(target)
    reporters.finish(Report(targets))
    assert log == [
        "a target p.py:P",
        "b target p.py:P",
        "a target q.py:Q",
        "b target q.py:Q",
        "a finish 2",
        "b finish 2",
    ]


def test_the_consoles_finish_prints_the_commands_closing_lines_after_the_summary():
    buffer = io.StringIO()
    console = Console(file=buffer, width=100, no_color=True, soft_wrap=True)
    reporter = ConsoleReporter(console, closing=lambda report: [f"closing {len(report.targets)}"])
    reporter.finish(Report([TargetReport("p.py:P", checks=[CheckResult("c", Status.PASSED)])]))
    lines = buffer.getvalue().splitlines()
    assert lines[-2].startswith("Test Summary: 1 passed") and lines[-1] == "closing 1"


def test_report_files_write_nothing_when_the_check_before_writing_refuses(tmp_path):
    from layercheck.errors import UsageError
    from layercheck.reporters.formats import FORMATS, ReportFiles

    def refuse(report: Report) -> None:
        raise UsageError("it would overwrite an input")

    json_path = tmp_path / "r.json"
    files = ReportFiles({FORMATS[0]: str(json_path)}, before_writing=refuse)
    with pytest.raises(UsageError):
        files.finish(Report([]))
    assert not json_path.exists()
    ReportFiles({FORMATS[0]: str(json_path)}).finish(Report([]))
    assert json_path.exists()


def test_a_syntax_error_shows_where_in_the_source_and_says_its_reason_once(tmp_path):
    # Issue 39: the reason was printed twice in the detail block; the block now shows the line
    # and the caret Python shows, not the message again.
    (tmp_path / "syn.py").write_text("class L:\n    def predict(self, X)\n        return X\n", encoding="utf-8")
    proc = conftest.run_cli("run", tmp_path / "syn.py", "--layout", "3,2:CB")
    assert proc.returncode == 1
    detail = proc.stdout.split("short summary")[0]
    assert detail.count("expected ':'") == 1
    lines = [line.strip() for line in detail.splitlines()]
    assert lines[lines.index("def predict(self, X)") + 1] == "^"
