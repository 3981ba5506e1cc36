"""The command line, end to end: `python -m layercheck ...` in a subprocess (DESIGN.md section 1)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import CLI_LAYERS, CORPUS, INTERNAL_FRAME, REPO, SAMPLES, declared, layer_files, run_cli

from layercheck.checks import REGISTRY
from layercheck.cli import cli
from layercheck.sandbox.isolation import worker_sys_path

SRELU = "sample_layers/srelu.py"
PRELU = "sample_layers/prelu.py"
MISSING_DX = "sample_layers/buggy/srelu_missing_dx.py"
BOX_DRAWING = re.compile("[\u2500-\u257f]")


def assert_one_line_usage_error(proc, *needles):
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {proc.stderr!r}"
    assert lines[0].startswith("Error:")
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.stdout == "", "nothing is written before the usage is validated"
    for needle in needles:
        assert needle in lines[0]


# -- exit status and console output --------------------------------------------------------


def test_good_layer_exits_0_with_one_line_and_the_summary():
    proc = run_cli("run", SRELU, "--layout", "8,8,4,2:SSCB")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"PASSED {SRELU} ") and "18 passed" in lines[0], proc.stdout
    assert lines[1].startswith("Test Summary:") and "0 failed" in lines[1]
    assert not BOX_DRAWING.search(proc.stdout), "box drawing characters on a pipe"
    assert "\x1b[" not in proc.stdout, "colour codes on a pipe"


def test_verbose_shows_every_check_unpadded():
    proc = run_cli("run", SRELU, "--layout", "8,8,4,2:SSCB", "-v")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in REGISTRY:
        assert name in proc.stdout, f"-v lacks {name}"
    assert all(line == line.rstrip() for line in proc.stdout.splitlines()), "padding on a pipe"
    assert "\x1b[" not in proc.stdout


def test_buggy_port_exits_1_and_names_the_failing_check():
    proc = run_cli("run", MISSING_DX)
    assert proc.returncode == 1
    assert re.search(r"FAILED\s+backward_does_not_error", proc.stdout)
    assert "dLdX" in proc.stdout
    assert "Traceback" not in proc.stderr


MALFORMED = ["24,24:SSCB", "a,b:SS", "24,24,20,128:SSXB", "0,3:CB", "2,2:CC", "24,24,20,128", ":SSCB"]


@pytest.mark.parametrize("layout", MALFORMED)
def test_malformed_layout_exits_2_with_one_line(layout):
    proc = run_cli("run", SRELU, "--layout", layout)
    assert_one_line_usage_error(proc)


def test_missing_file_exits_2_with_one_line():
    proc = run_cli("run", "sample_layers/does_not_exist.py")
    assert_one_line_usage_error(proc, "does_not_exist.py", "no such file or folder")


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("sample_layers/prelu.py::PReLU", "a pytest node id; layercheck names a layer sample_layers/prelu.py:PReLU"),
        ("sample_layers/prelu.py::PReLU::predict_does_not_error", "sample_layers/prelu.py:PReLU"),
        ("sample_layers/prelu.py:", "no name after ':'"),
    ],
)
def test_a_target_spelled_as_pytest_or_without_its_name_is_not_said_missing(spec, said):
    """A hunt: the file is there, and "no such file or folder" was false of it."""
    proc = run_cli("run", spec)
    assert_one_line_usage_error(proc, said)
    assert "no such file" not in proc.stderr


@pytest.mark.parametrize("option", ["--checks", "--skip"])
def test_unknown_check_exits_2_with_one_line(option):
    proc = run_cli("run", SRELU, option, "predict_does_not_error,no_such_check")
    assert_one_line_usage_error(proc, "no_such_check")


def test_unknown_dtype_exits_2_with_one_line():
    proc = run_cli("run", SRELU, "--dtype", "float16")
    assert_one_line_usage_error(proc, "float16")


@pytest.mark.parametrize("pair", ["novalue", "1x=3", "=3", "two words=1"])
def test_malformed_arg_exits_2_with_one_line(pair):
    proc = run_cli("run", str(CLI_LAYERS / "record_args.py"), "--arg", pair)
    assert_one_line_usage_error(proc)


def test_args_reach_the_constructor_as_yaml_scalars(tmp_path):
    record = tmp_path / "kwargs.jsonl"
    env = {**os.environ, "LAYERCHECK_TEST_RECORD": str(record)}
    proc = run_cli(
        "run",
        CLI_LAYERS / "record_args.py",
        "--quiet",
        "--arg",
        "name=foo",
        "--arg",
        "rate=1e-3",
        "--arg",
        "count=3",
        "--arg",
        "flag=true",
        "--arg",
        "scale=0.5",
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    constructions = [json.loads(line) for line in record.read_text().splitlines()]
    assert constructions, "the layer was never constructed"
    expected = {"name": "foo", "rate": 1e-3, "count": 3, "flag": True, "scale": 0.5}
    for kwargs in constructions:
        assert kwargs == expected
        assert type(kwargs["count"]) is int and type(kwargs["rate"]) is float


def test_class_name_form_selects_a_target():
    proc = run_cli("run", f"{SRELU}:SReLU", "--quiet")
    assert proc.returncode == 0, proc.stdout
    proc = run_cli("run", "tests/corpus/plain_function.py:square", "--quiet")
    assert proc.returncode == 0, proc.stdout


def test_unknown_class_name_is_a_target_error():
    proc = run_cli("run", f"{SRELU}:NoSuchLayer")
    assert proc.returncode == 1
    assert "NoSuchLayer" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_checks_and_skip_select_what_runs(tmp_path):
    out = tmp_path / "report.json"
    proc = run_cli("run", SRELU, "--checks", "predict_does_not_error,outputs_are_finite", "--json", out)
    assert proc.returncode == 0
    (target,) = json.loads(out.read_text())["targets"]
    assert [c["name"] for c in target["checks"]] == ["predict_does_not_error", "outputs_are_finite"]
    proc = run_cli("run", SRELU, "--skip", "gradients_are_numerically_correct", "--json", out)
    assert proc.returncode == 0
    (target,) = json.loads(out.read_text())["targets"]
    names = [c["name"] for c in target["checks"]]
    assert "gradients_are_numerically_correct" not in names
    assert len(names) == len(REGISTRY) - 1


# -- JSON report -----------------------------------------------------------------------------

TARGET_KEYS = {"target", "kind", "layouts", "status", "error", "duration_s", "checks", "summary"}
CHECK_KEYS = {"name", "status", "message", "details", "duration_s"}
SUMMARY_KEYS = {"passed", "failed", "incomplete", "skipped", "known"}  # known: issue 28, additive


def test_json_report_follows_the_public_schema(tmp_path):
    out = tmp_path / "sub" / "report.json"
    proc = run_cli("run", SRELU, MISSING_DX, CLI_LAYERS / "import_raises.py", "--quiet", "--json", out)
    assert proc.returncode == 1
    report = json.loads(out.read_text())
    assert {"version", "targets", "summary"} <= set(report)
    assert isinstance(report["version"], str) and report["version"]
    assert set(report["summary"]) == SUMMARY_KEYS
    good, buggy, broken = report["targets"]
    for target in report["targets"]:
        assert TARGET_KEYS <= set(target)
        assert target["kind"] in ("layer", "function")
        assert isinstance(target["layouts"], list) and all(isinstance(layout, str) for layout in target["layouts"])
        assert isinstance(target["duration_s"], (int, float)) and target["duration_s"] >= 0
        assert set(target["summary"]) == SUMMARY_KEYS
        assert sum(target["summary"].values()) == len(target["checks"])
        for check in target["checks"]:
            assert CHECK_KEYS <= set(check)
            assert check["status"] in SUMMARY_KEYS
            assert isinstance(check["message"], str) and isinstance(check["details"], dict)
    assert (good["status"], good["error"], good["layouts"]) == ("passed", None, ["8,8,4,2:SSCB"])
    assert good["target"].endswith("srelu.py") and good["kind"] == "layer"
    assert buggy["status"] == "failed"
    assert {c["name"]: c["status"] for c in buggy["checks"]}["backward_does_not_error"] == "failed"
    assert broken["status"] == "error" and "weights file is missing" in broken["error"] and broken["checks"] == []
    for key in SUMMARY_KEYS:
        assert report["summary"][key] == sum(t["summary"][key] for t in report["targets"])


def test_json_report_of_a_gradient_failure_is_valid_json(tmp_path):
    out = tmp_path / "report.json"
    proc = run_cli("run", "sample_layers/buggy/srelu_swapped.py", "--json", out)
    assert proc.returncode == 1
    text = out.read_text()
    assert "NaN" not in text and "Infinity" not in text  # strict JSON
    (target,) = json.loads(text)["targets"]
    (gradient,) = [c for c in target["checks"] if c["name"] == "gradients_are_numerically_correct"]
    assert gradient["status"] == "failed"
    assert [r["argument"] for r in gradient["details"]["arguments"]] == ["X", "tl", "al", "tr", "ar"]


# -- targets that cannot be loaded ----------------------------------------------------------


def test_module_raising_at_import_is_that_targets_error_with_the_users_frames():
    proc = run_cli("run", CLI_LAYERS / "import_raises.py", SRELU)
    assert proc.returncode == 1
    out = proc.stdout
    assert "ERROR" in out and "weights file is missing" in out
    assert re.search(r'import_raises\.py", line \d+, in _load_weights', out), out
    assert not INTERNAL_FRAME.search(out), out
    assert "Traceback" not in proc.stderr
    # The other target is still checked.
    assert re.search(r"Test Summary: [1-9]\d* passed, 0 failed", out), out


def test_constructor_raising_is_that_targets_error_with_the_users_frames():
    proc = run_cli("run", CLI_LAYERS / "ctor_raises.py", PRELU)
    assert proc.returncode == 1
    out = proc.stdout
    assert "constructing CtorRaises" in out and "is not an identifier" in out
    assert re.search(r'ctor_raises\.py", line \d+, in __init__', out)
    assert re.search(r'ctor_raises\.py", line \d+, in _check_name', out)
    assert not INTERNAL_FRAME.search(out), out
    assert "0 failed" in out.splitlines()[-1]


def test_target_without_a_layout_says_how_to_give_one():
    proc = run_cli("run", CLI_LAYERS / "no_layout.py")
    assert proc.returncode == 1
    assert "--layout" in proc.stdout and "example_layout" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    proc = run_cli("run", CLI_LAYERS / "no_layout.py", "--layout", "3,2:CB")
    assert proc.returncode == 0, proc.stdout


def test_layout_too_large_is_refused_up_front_with_the_estimate():
    proc = run_cli("run", SRELU, "--layout", "100000,100000,1000,1000:SSCB")
    assert_one_line_usage_error(proc)
    assert re.search(r"\d\s*(?:[KMGTPE]i?B|bytes)", proc.stderr), proc.stderr


# -- list-checks, --quiet, folders ----------------------------------------------------------


def test_list_checks_lists_every_registered_check():
    proc = run_cli("list-checks")
    assert proc.returncode == 0
    for check in REGISTRY.values():
        assert check.name in proc.stdout
        if check.matlab:
            assert check.matlab in proc.stdout
    # the one verdict outside the registry, which reports name: listed last, marked as always run
    assert proc.stdout.splitlines()[-2] == "module_does_not_replace_numpy_or_layercheck"
    assert "cannot be selected or skipped" in proc.stdout.splitlines()[-1]


def test_quiet_prints_only_the_summary_for_a_good_layer():
    proc = run_cli("run", SRELU, "--quiet")
    assert proc.returncode == 0
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Test Summary:"), proc.stdout


def test_quiet_prints_only_failures_and_summaries():
    proc = run_cli("run", MISSING_DX, SRELU, "--quiet")
    assert proc.returncode == 1
    out = proc.stdout
    # The failure's line of the recap, once: the target's details are not printed (issue 28).
    assert len(re.findall(r"FAILED \S+ :: backward_does_not_error - ", out)) == 1
    assert "Traceback" not in out
    assert out.count("Test Summary:") == 1
    for word in ("PASSED", "SKIPPED", "INCOMPLETE", SRELU):
        assert word not in out
    for passing in ("predict_does_not_error", "function_syntaxes_are_correct", "outputs_are_finite"):
        assert passing not in out


def test_folder_form_checks_every_layer_module_and_reports_plain_function_modules_too(tmp_path):
    out = tmp_path / "corpus.json"
    proc = run_cli("run", "tests/corpus", "--quiet", "--json", out)
    assert proc.returncode == 1, "the corpus holds broken layers"
    targets = json.loads(out.read_text())["targets"]
    reported = {t["target"].split(":")[0].replace("\\", "/").rsplit("/", 1)[-1] for t in targets}
    assert {p.name for p in layer_files(CORPUS)} - reported == set()
    by_file = {t["target"].split(":")[0].replace("\\", "/").rsplit("/", 1)[-1]: t for t in targets}
    class_modules = [p for p in layer_files(CORPUS) if "\nclass " in p.read_text()]
    for path in class_modules:
        assert path.name in by_file, f"{path.name} is not reported"
        d = declared(path)
        target = by_file[path.name]
        statuses = {c["name"]: c["status"] for c in target["checks"]}
        if d.correct:
            assert target["status"] == "passed", (path.name, statuses)
        elif d.left_incomplete:
            assert target["status"] == "incomplete", (path.name, statuses)
            assert all(statuses[name] == "incomplete" for name in d.left_incomplete), (path.name, statuses)
        else:
            assert statuses[d.must_fail[0]] == "failed", (path.name, statuses)
            # --quiet still names every target with a failure, and the failing check.
            assert re.search(rf"{re.escape(path.name)}:\w+ \(layer", proc.stdout), path.name
    assert proc.stdout.rstrip().splitlines()[-1].startswith("Test Summary:")


# -- in process, through click's runner ------------------------------------------------------


def test_cli_runner_list_checks_and_usage_error():
    runner = CliRunner()
    result = runner.invoke(cli, ["list-checks"])
    assert result.exit_code == 0
    assert all(name in result.output for name in REGISTRY)
    result = runner.invoke(cli, ["run", SRELU, "--layout", "2,2:CC"])
    assert result.exit_code == 2
    assert result.stderr.startswith("Error:")


def test_cli_runner_runs_a_target():
    result = CliRunner().invoke(cli, ["run", str(SAMPLES / "prelu.py"), "--quiet", "--layout", "4,3,5,6:SSCB"])
    assert result.exit_code == 0, result.output
    assert "Test Summary:" in result.output


# -- known defects (see the report of the test-suite author) ----------------------------------


@pytest.mark.parametrize("args", [["--seed", "abc"], ["--no-such-option"]], ids=["bad-seed", "unknown-option"])
def test_click_usage_errors_are_one_line(args):
    proc = run_cli("run", SRELU, *args)
    assert_one_line_usage_error(proc)


def test_absurd_layout_size_exits_2_with_one_line():
    proc = run_cli("run", SRELU, "--layout", "1" * 5000 + ":S")
    assert_one_line_usage_error(proc)


def test_layer_calling_sys_exit_is_reported_and_the_run_goes_on():
    proc = run_cli("run", CLI_LAYERS / "sys_exit.py", PRELU)
    assert proc.returncode == 1
    assert "sys_exit.py" in proc.stdout
    assert re.search(r"SystemExit|sys\.exit", proc.stdout)
    assert "prelu.py" in proc.stdout


def test_too_large_example_layout_is_that_targets_error():
    proc = run_cli("run", CLI_LAYERS / "huge_example_layout.py", PRELU)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout + proc.stderr
    assert re.search(r"\d\s*(?:[KMGTPE]i?B|bytes)", proc.stdout)
    assert "prelu.py" in proc.stdout


# -- the user's working folder -----------------------------------------------------------------

# Modules that layercheck, its workers or the forkserver import, shadowed the way users' folders
# do (the folder above a checkout, configs kept in ./layercheck/): each says so and stops.
SHADOWS = (
    "layercheck.py",
    "layercheck/__init__.py",
    "yaml.py",
    "numpy.py",
    "click.py",
    "rich.py",
    "multiprocessing.py",
)


def _installed_command() -> list[str]:
    """The `layercheck` command as pip installs it (its own folder first on the path, not the
    working folder, unlike `python -m layercheck`)."""
    script = Path(sysconfig.get_path("scripts")) / "layercheck"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; del sys.path[0]; from layercheck.cli import main; sys.exit(main())"]


# For `python -m layercheck`, Python itself finds a `layercheck` of the working folder first.
FOUND_BY_PYTHON_M = ("layercheck.py", "layercheck/__init__.py")


@pytest.mark.parametrize("how", ["installed", "python -m"])
def test_a_working_folder_that_shadows_installed_modules_changes_nothing(tmp_path, how):
    for name in SHADOWS:
        if how == "python -m" and name in FOUND_BY_PYTHON_M:
            continue
        shadow = tmp_path / name
        shadow.parent.mkdir(exist_ok=True)
        shadow.write_text(f"print('SHADOW {name} imported')\nraise SystemExit(3)\n")
    report = tmp_path / "report.json"
    command = _installed_command() if how == "installed" else [sys.executable, "-m", "layercheck"]
    proc = subprocess.run(
        [*command, "run", str(REPO / SRELU), str(REPO / PRELU), "--jobs", "2", "--json", str(report)],
        cwd=tmp_path,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "SHADOW" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == ""
    assert [t["status"] for t in json.loads(report.read_text())["targets"]] == ["passed", "passed"]


def test_a_helper_module_in_the_working_folder_is_still_importable_by_a_layer(tmp_path):
    """The working folder is last on the workers' path: it shadows nothing, and a module of the
    user's there (a package of their project) is still found."""
    (tmp_path / "project_helpers.py").write_text("def double(X):\n    return 2 * X\n")
    layers = tmp_path / "layers"
    layers.mkdir()
    (layers / "doubler.py").write_text(
        "from project_helpers import double\n\n\n"
        "class Doubler:\n    example_layout = '4,3,5,2:SSCB'\n\n    def predict(self, X):\n        return double(X)\n"
    )
    proc = subprocess.run(
        [*_installed_command(), "run", "layers/doubler.py"],
        cwd=tmp_path,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASSED layers/doubler.py" in proc.stdout, proc.stdout


def test_worker_sys_path_moves_the_working_folder_python_put_first_to_the_end(monkeypatch):
    monkeypatch.delenv("PYTHONPATH", raising=False)
    assert worker_sys_path(["", "/lib/python", "/site"], cwd="/home/me") == ["/lib/python", "/site", "/home/me"]
    assert worker_sys_path(["/home/me", "/lib/python"], cwd="/home/me") == ["/lib/python", "/home/me"]
    # A console script's first entry is its own folder: kept.
    assert worker_sys_path(["/venv/bin", "/lib/python"], cwd="/home/me") == ["/venv/bin", "/lib/python", "/home/me"]
    # Put there on purpose, through PYTHONPATH: kept first.
    monkeypatch.setenv("PYTHONPATH", "/home/me")
    assert worker_sys_path(["/home/me", "/lib/python"], cwd="/home/me") == ["/home/me", "/lib/python"]


_UNDECIDABLE = '''
import numpy as np


class WrongShapeGradient:
    """backward returns dL/dw of the wrong shape: the gradient check cannot decide for w."""

    learnables = ("w",)
    example_layout = "4,4,2,3:SSCB"

    def __init__(self):
        self.w = np.array([0.5, 1.5]).reshape(1, 1, 2, 1)

    def predict(self, X):
        return self.w * X

    def backward(self, X, Y, dLdY, memory):
        return dLdY * self.w, (dLdY * X).sum()  # BUG: a scalar where w is 1x1x2x1
'''


def test_strict_makes_an_incomplete_check_fail_the_run(tmp_path):
    layer = tmp_path / "undecidable.py"
    layer.write_text(_UNDECIDABLE)
    args = ("run", layer, "--checks", "gradients_are_numerically_correct", "--dtype", "float64")
    lenient = run_cli(*args, "--json", tmp_path / "lenient.json")
    assert lenient.returncode == 0 and "1 incomplete" in lenient.stdout, lenient.stdout
    assert "--strict" not in lenient.stdout
    # The target is incomplete, not passed (issue 36), on the console and in the JSON.
    assert lenient.stdout.startswith(f"INCOMPLETE {layer} (layer, 4,4,2,3:SSCB)  1 incomplete in "), lenient.stdout
    (target,) = json.loads((tmp_path / "lenient.json").read_text())["targets"]
    assert target["status"] == "incomplete"
    strict = run_cli(*args, "--strict")
    assert strict.returncode == 1, strict.stdout
    assert "--strict: 1 incomplete check fails the run" in strict.stdout, strict.stdout
    # Nothing incomplete: --strict changes nothing.
    passing = run_cli("run", SAMPLES / "prelu.py", "--checks", "gradients_are_numerically_correct", "--strict")
    assert passing.returncode == 0 and "--strict" not in passing.stdout, passing.stdout


def test_a_reader_that_leaves_early_neither_fails_the_run_nor_loses_its_reports(tmp_path):
    """A hunt: `layercheck run ... -v | head -1` exited 1, silently, and wrote no report (a
    write to the closed pipe raised). The process is the subject: its stdout is a pipe closed
    after the first line."""
    report = tmp_path / "report.json"
    command = [sys.executable, "-m", "layercheck", "run", str(SAMPLES / "prelu.py"), "--json", str(report), "-v"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.readline()
        proc.stdout.close()  # the reader leaves, as `head -1` does
        stderr = proc.stderr.read().decode()
        code = proc.wait(timeout=600)
    assert code == 0, stderr
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
    assert json.loads(report.read_text())["targets"][0]["status"] == "passed"


def test_a_layer_named_several_ways_is_checked_and_counted_once(tmp_path):
    """A hunt: `run d d/a.py ./d/a.py:Name` checked one layer three times and said 3 failed."""
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.py").write_text((SAMPLES / "buggy" / "srelu_swapped.py").read_text())
    report = tmp_path / "r.json"
    proc = run_cli("run", "d", "d/a.py", "./d/a.py:SReLUSwapped", "-q", "--json", report, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout
    (target,) = json.loads(report.read_text())["targets"]
    assert target["target"] == "d/a.py:SReLUSwapped"


_WITH_ITS_BASES = """import abc
from typing import Protocol

import numpy as np


class Base(abc.ABC):
    @abc.abstractmethod
    def predict(self, X): ...


class Predicts(Protocol):
    def predict(self, X): ...


class Doubles(Base):
    example_layout = "4,3:CB"

    def predict(self, X):
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        return 2 * dLdY
"""


def test_an_abstract_base_and_a_protocol_are_not_taken_for_layers(tmp_path):
    """A hunt for false alarms: a library's abstract `Base` declaring `predict`, and a
    `typing.Protocol`, were collected as layers and reported "no layout"."""
    (tmp_path / "layers.py").write_text(_WITH_ITS_BASES)
    report = tmp_path / "r.json"
    proc = run_cli("run", tmp_path, "-q", "--json", report, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert [t["target"].rsplit(":", 1)[-1] for t in json.loads(report.read_text())["targets"]] == ["Doubles"]
