"""The pytest plugin (`pytest --layercheck`) and the Python API inside a user's tests.

Each plugin test runs pytest inline (`pytester.runpytest_inprocess`): the plugin checks each
target in a worker process of its own, which is what these tests look at, and a pytest process
per run would add its start (a second or more) and nothing a test reads. The layers here note
in a file (the environment's LAYER_LOG) each time one is constructed, with the pid of the
worker: which targets were checked, and by how many workers, is read from there.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import INTERNAL_FRAME, PACKAGE, REPO

from layercheck import UsageError, check_layer
from layercheck.checks import REGISTRY
from layercheck.contract.adapter import Kind
from layercheck.results import CheckResult, Status, TargetReport
from layercheck.running.in_pytest import target_scope
from layercheck.sandbox import INTEGRITY_CHECK

pytest_plugins = ["pytester"]

HOSTILE_GATE = REPO / "tests" / "hostile_gate"

_LAYER = """
import os

class {name}:
    example_layout = "3,4:CB"

    def __init__(self):
        with open(os.environ["LAYER_LOG"], "a") as log:
            log.write(f"{{os.getpid()}} {name}\\n")

    def predict(self, X):
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        return {sign}2 * dLdY
"""


def _layer(name: str, correct: bool = True) -> str:
    """A layer that doubles its input; a wrong one returns its gradient with the wrong sign."""
    return _LAYER.format(name=name, sign="" if correct else "-")


@pytest.fixture(scope="module", autouse=True)
def _loaded(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Everything a check loads, loaded before the first inline run: pytester forgets the
    modules a run imports, and the next run would import second copies (multiprocessing's
    classes then no longer pickle as themselves)."""
    from layercheck.cli import invoke

    folder = tmp_path_factory.mktemp("loaded")
    (folder / "good.py").write_text(_layer("Loaded"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LAYER_LOG", str(folder / "log"))
        with pytest.raises(SystemExit) as ended:
            invoke(["run", str(folder / "good.py"), "--quiet"])
    assert ended.value.code == 0


@pytest.fixture
def log(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = pytester.path / "constructed.log"
    monkeypatch.setenv("LAYER_LOG", str(path))
    return path


def _checked(log: Path) -> dict[str, set[str]]:
    """Each layer constructed, with the pids of the workers that constructed it."""
    checked: dict[str, set[str]] = {}
    for line in log.read_text().splitlines() if log.exists() else []:
        pid, name = line.split()
        checked.setdefault(name, set()).add(pid)
    return checked


@pytest.fixture
def project(pytester: pytest.Pytester, log: Path) -> pytest.Pytester:
    """layers/: two files of layers (one of them failing), a module that cannot be imported,
    a helper module without layers, and an ordinary test module that defines a layer."""
    pytester.makepyfile(
        **{
            "layers/good.py": _layer("Good"),
            "layers/mixed.py": _layer("Fine") + _layer("WrongSign", correct=False),
            "layers/broken.py": "raise ImportError('no module named torch, say')\n",
            "layers/helpers.py": "def double(x):\n    return 2 * x\n",
            "layers/test_ordinary.py": _layer("ToyInATest") + "\ndef test_ordinary():\n    assert True\n",
        }
    )
    return pytester


# The items of each of these layers: every check that applies to a layer, in report order,
# then whether the module or layer replaced what layercheck computes with.
LAYER_CHECKS = [name for name, check in REGISTRY.items() if check.applies_to(Kind.LAYER) is None] + [INTEGRITY_CHECK]
GRADIENTS = "gradients_are_numerically_correct"


def _targets(result: pytest.RunResult) -> dict[str, list[str]]:
    """`--collect-only -q`'s node ids, by target: `path::Name` -> its checks (in order);
    `path::import` and a target item alone -> []."""
    targets: dict[str, list[str]] = {}
    for line in result.outlines:
        parts = line.split("::")
        if len(parts) == 3:
            targets.setdefault("::".join(parts[:2]), []).append(parts[2])
        elif len(parts) == 2:
            targets.setdefault(line, [])
    return targets


def test_every_check_of_every_layer_is_an_item_and_a_module_that_cannot_be_imported_is_one_failing_item(
    project, log, monkeypatch
):
    monkeypatch.setenv("COLUMNS", "200")  # pytest's short summary, uncut
    collected = project.runpytest_inprocess("--layercheck", "layers", "--collect-only", "-q")
    assert _targets(collected) == {
        "layers/broken.py::import": [],
        "layers/good.py::Good": LAYER_CHECKS,
        "layers/mixed.py::Fine": LAYER_CHECKS,
        "layers/mixed.py::WrongSign": LAYER_CHECKS,
        "layers/test_ordinary.py::test_ordinary": [],  # pytest's own test; its layer is not collected
    }
    assert not log.exists()  # collecting imports the modules, in workers, and constructs nothing

    result = project.runpytest_inprocess("--layercheck", "layers", "-rf")
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == 2
    assert outcomes["passed"] + outcomes["skipped"] == 3 * len(LAYER_CHECKS) - 1 + 1  # + test_ordinary
    result.stdout.fnmatch_lines(
        [
            "FAILED layers/broken.py::import - importing broken.py raised ImportError: no module named torch, say "
            "(broken.py:1 in <module>)",
            f"FAILED layers/mixed.py::WrongSign::{GRADIENTS} - the gradient of X has the wrong sign",
        ],
        consecutive=False,
    )
    assert set(_checked(log)) == {"Good", "Fine", "WrongSign"}


def test_a_skipped_check_is_a_skipped_item_with_layercheck_reason_at_the_targets_definition(project, log):
    result = project.runpytest_inprocess("--layercheck", "layers/good.py", "-rs")
    result.stdout.fnmatch_lines(
        ["SKIPPED [[]6[]] layers/good.py:3: no forward defined (predict is used at training time)"]
    )


def test_a_failure_shows_the_command_that_reproduces_its_check_and_the_consoles_text_without_layercheck_frames(
    project, log
):
    result = project.runpytest_inprocess("--layercheck", "layers/mixed.py")
    assert result.parseoutcomes()["failed"] == 1
    command = f"layercheck run layers/mixed.py:WrongSign --layout 3,4:CB --checks {GRADIENTS}"
    result.stdout.fnmatch_lines(
        [
            f"*_ layercheck layers/mixed.py::WrongSign::{GRADIENTS} _*",
            command,
            "FAILED layers/mixed.py:WrongSign (layer, 3,4:CB)  1 failed in *s",
            f"    FAILED {GRADIENTS}: the gradient of X has the wrong sign",
        ]
    )
    assert not [line for line in result.outlines if INTERNAL_FRAME.search(line) or str(PACKAGE) in line]
    # The header is the command: it checks the target's check as the item did.
    cli = Path(sys.executable).with_name("layercheck")
    rerun = subprocess.run(
        command.replace("layercheck", str(cli), 1).split(), cwd=project.path, capture_output=True, text=True
    )
    assert rerun.returncode == 1
    assert f"FAILED {GRADIENTS}: the gradient of X has the wrong sign" in rerun.stdout
    assert "1 failed in" in rerun.stdout  # that check alone


def test_minus_k_and_minus_m_select_targets_and_only_those_are_checked(project, log):
    result = project.runpytest_inprocess("--layercheck", "layers", "-k", "Fine or Good")
    outcomes = result.parseoutcomes()
    assert "failed" not in outcomes and outcomes["passed"] + outcomes["skipped"] == 2 * len(LAYER_CHECKS)
    assert set(_checked(log)) == {"Fine", "Good"}

    result = project.runpytest_inprocess("--layercheck", "layers", "-m", "not layercheck")
    result.assert_outcomes(passed=1, deselected=3 * len(LAYER_CHECKS) + 1)  # test_ordinary alone
    result = project.runpytest_inprocess("--layercheck", "layers", "-m", "layercheck")
    assert result.parseoutcomes()["failed"] == 2 and result.parseoutcomes()["deselected"] == 1


def test_minus_k_reaches_checks_and_the_target_is_checked_for_the_selected_checks_only(project, log):
    whole = project.runpytest_inprocess("--layercheck", "layers/mixed.py", "-p", "no:cacheprovider")
    constructed_for_all = len(log.read_text().splitlines())
    log.unlink()
    result = project.runpytest_inprocess(
        "--layercheck", "layers/mixed.py", "-k", "gradients", "-p", "no:cacheprovider", "--layercheck-no-cache"
    )
    result.assert_outcomes(passed=1, failed=1, deselected=2 * len(LAYER_CHECKS) - 2)
    assert set(_checked(log)) == {"Fine", "WrongSign"}
    # The checks that -k leaves out are not run: the layers are constructed fewer times.
    assert len(log.read_text().splitlines()) < constructed_for_all, whole.stdout.str()


def test_minus_x_checks_no_target_after_the_first_failure(pytester, log):
    pytester.makepyfile(**{"layers/two.py": _layer("FirstWrong", correct=False) + _layer("SecondWrong", correct=False)})
    result = pytester.runpytest_inprocess("--layercheck", "layers", "-x")
    assert result.parseoutcomes()["failed"] == 1
    assert set(_checked(log)) == {"FirstWrong"}


def test_last_failed_checks_again_only_the_checks_that_failed(project, log):
    assert project.runpytest_inprocess("--layercheck", "layers").parseoutcomes()["failed"] == 2
    log.unlink()
    result = project.runpytest_inprocess("--layercheck", "layers", "--lf", "--layercheck-no-cache", "-v")
    result.assert_outcomes(failed=2)  # the files without a failure are not even collected
    result.stdout.fnmatch_lines([f"layers/mixed.py::WrongSign::{GRADIENTS} FAILED*"], consecutive=False)
    assert set(_checked(log)) == {"WrongSign"}


def test_a_target_that_cannot_be_checked_at_all_is_one_failing_item(pytester, log):
    pytester.makepyfile(**{"layers/nolayout.py": _layer("Good").replace('    example_layout = "3,4:CB"\n', "")})
    collected = pytester.runpytest_inprocess("--layercheck", "layers", "--collect-only", "-q")
    assert _targets(collected) == {"layers/nolayout.py::Good": []}
    result = pytester.runpytest_inprocess("--layercheck", "layers", "-rf")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAILED layers/nolayout.py::Good - no layout for layers/nolayout.py:Good: *"])


def test_a_second_run_is_served_from_the_cache_and_an_edit_of_an_imported_helper_checks_again(pytester, log):
    """The result cache of `layercheck run`: nothing changed, nothing is checked again (the
    failure too is served, and says so); an edit of a helper module the layer imports from the
    user's tree checks that layer again, and only it."""
    helper = "def scale():\n    return {}\n"
    uses_helper = "from helper import scale\n" + _layer("UsesHelper").replace("2 * ", "scale() * ")
    pytester.makepyfile(
        **{
            "layers/helper.py": helper.format(2),
            "layers/uses_helper.py": uses_helper,
            "layers/other.py": _layer("Other") + _layer("OtherWrong", correct=False),
        }
    )
    first = pytester.runpytest_inprocess("--layercheck", "layers").parseoutcomes()
    assert first["failed"] == 1
    log.unlink()
    again = pytester.runpytest_inprocess("--layercheck", "layers")
    assert again.parseoutcomes() == first
    assert _checked(log) == {}, "nothing changed: every target is served from the cache"
    assert "(cached)" in again.stdout.str()
    (pytester.path / "layers" / "helper.py").write_text(helper.format(3))  # same size: a stat cannot tell
    assert pytester.runpytest_inprocess("--layercheck", "layers").parseoutcomes() == first
    assert set(_checked(log)) == {"UsesHelper"}
    log.unlink()
    assert pytester.runpytest_inprocess("--layercheck", "layers", "--layercheck-no-cache").parseoutcomes() == first
    assert set(_checked(log)) == {"UsesHelper", "Other", "OtherWrong"}


def test_xdist_workers_check_every_target_exactly_once(pytester, log):
    names = [f"Layer{i}" for i in range(6)]
    pytester.makepyfile(**{f"layers/l{i}.py": _layer(name, correct=i != 3) for i, name in enumerate(names)})
    result = pytester.runpytest_inprocess("--layercheck", "layers", "-n", "2")
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == 1 and outcomes["passed"] + outcomes["skipped"] == 6 * len(LAYER_CHECKS) - 1
    checked = _checked(log)
    assert set(checked) == set(names)
    # one worker process per target: each was checked once, not once per xdist worker
    assert all(len(pids) == 1 for pids in checked.values()), checked


def test_under_xdist_load_the_checks_of_a_target_are_one_scope_and_other_tests_their_own():
    assert target_scope(f"layers/a.py::PReLU::{GRADIENTS}") == "layers/a.py::PReLU"
    assert target_scope("tests/test_a.py::TestX::test_one") == "tests/test_a.py::TestX::test_one"
    assert target_scope(f"layers/a.py::PReLU::{INTEGRITY_CHECK}") == "layers/a.py::PReLU"
    assert target_scope(f"tests/test_a.py::{GRADIENTS}") == f"tests/test_a.py::{GRADIENTS}"  # a function's


def test_junitxml_has_a_testcase_per_check_with_the_failure_text(project, log):
    project.runpytest_inprocess("--layercheck", "layers/mixed.py", "--junitxml=out.xml")
    cases = {
        (case.get("classname"), case.get("name")): case for case in ET.parse(project.path / "out.xml").iter("testcase")
    }
    assert set(cases) == {
        (f"layers.mixed.{target}", check) for target in ("Fine", "WrongSign") for check in LAYER_CHECKS
    }
    failed = [key for key, case in cases.items() if case.find("failure") is not None]
    assert failed == [("layers.mixed.WrongSign", GRADIENTS)]
    text = cases[failed[0]].find("failure").text
    assert f"layercheck run layers/mixed.py:WrongSign --layout 3,4:CB --checks {GRADIENTS}" in text
    assert f"FAILED {GRADIENTS}: the gradient of X has the wrong sign" in text
    assert "\x1b[" not in text


def test_nothing_is_collected_without_the_option_and_the_ini_option_turns_it_on(project, log):
    result = project.runpytest_inprocess("layers")
    result.assert_outcomes(passed=1)  # test_ordinary alone
    project.makeini("[pytest]\nlayercheck = true\n")
    result = project.runpytest_inprocess("layers/good.py")
    outcomes = result.parseoutcomes()
    assert "failed" not in outcomes and outcomes["passed"] + outcomes["skipped"] == len(LAYER_CHECKS)
    assert set(_checked(log)) == {"Good"}


def test_a_config_gives_the_targets_and_their_layouts(pytester, log):
    pytester.makepyfile(
        **{
            "layers/good.py": _layer("Good"),
            "elsewhere/other.py": _layer("Other") + _layer("NotListed"),
        }
    )
    config = pytester.path / "layercheck.yaml"
    config.write_text(
        "defaults:\n  dtypes: [float64]\ntargets:\n  - target: elsewhere/other.py:Other\n    layout: 5,2:CB\n"
    )
    collected = pytester.runpytest_inprocess("--layercheck-config", "layercheck.yaml", "layers", "--collect-only", "-q")
    assert _targets(collected) == {"elsewhere/other.py::Other": LAYER_CHECKS}
    result = pytester.runpytest_inprocess("--layercheck-config", "layercheck.yaml", "layers", "-v")
    assert "failed" not in result.parseoutcomes()
    assert set(_checked(log)) == {"Other"}
    # Failing, it says so with the config's layout, and the config in the command.
    (pytester.path / "elsewhere/other.py").write_text(_layer("Other", correct=False))
    result = pytester.runpytest_inprocess("--layercheck-config", "layercheck.yaml")
    assert result.parseoutcomes()["failed"] == 1
    result.stdout.fnmatch_lines(
        [f"layercheck run elsewhere/other.py:Other --layout 5,2:CB --config layercheck.yaml --checks {GRADIENTS}"]
    )
    # A target the config names that the file does not define: one failing item, the run's word.
    config.write_text("targets:\n  - target: elsewhere/other.py:Missing\n    layout: 5,2:CB\n")
    result = pytester.runpytest_inprocess("--layercheck-config", "layercheck.yaml", "-rf")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAILED elsewhere/other.py::Missing - *Missing*"])


def test_a_bad_config_or_ini_value_is_one_line_of_usage_error(pytester):
    result = pytester.runpytest_inprocess("--layercheck-config", "missing.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [line for line in result.errlines if line] == ["ERROR: layercheck: config 'missing.yaml': no such file"]
    pytester.makeini("[pytest]\nlayercheck = true\nlayercheck_timeout = soon\n")
    result = pytester.runpytest_inprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.errlines if line]
    assert len(errors) == 1 and errors[0].startswith("ERROR: layercheck: layercheck_timeout"), errors


def test_the_plugin_imports_neither_numpy_nor_rich():
    code = "import sys, layercheck.pytest_plugin; print(sorted({'numpy', 'rich'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_each_checks_item_reads_its_result_and_one_without_a_result_fails():
    from layercheck.running.in_pytest import PluginRun, Verdict

    undecided = CheckResult(GRADIENTS, Status.INCOMPLETE, "every sample on a kink")
    skipped = CheckResult("predict_is_consistent_on_gpu", Status.SKIPPED, "no GPU")
    passed = CheckResult("predict_does_not_error", Status.PASSED)
    report = TargetReport("k.py:Kink", layouts=["3,4:CB"], checks=[passed, skipped, undecided])
    run, strict = PluginRun(), PluginRun(strict=True)
    assert run.item(report, passed.name).verdict is Verdict.PASSED
    assert run.item(report, skipped.name).verdict is Verdict.SKIPPED
    item = run.item(report, GRADIENTS)
    assert (item.verdict, item.result, item.shown) == (Verdict.INCOMPLETE, undecided, [undecided])
    assert run.undecided(report, item) == "incomplete: every sample on a kink"
    assert strict.item(report, GRADIENTS).verdict is Verdict.FAILED
    assert strict.item(report, passed.name).verdict is Verdict.PASSED
    strict_item = strict.item(report, GRADIENTS)
    text = strict.failure_text(report, strict_item, color=False, width=None, verbose=False, check=GRADIENTS)
    lines = text.splitlines()
    assert lines[0] == f"layercheck run k.py:Kink --layout 3,4:CB --checks {GRADIENTS} --strict"
    assert lines[1].startswith("INCOMPLETE k.py:Kink (layer, 3,4:CB)  1 incomplete in ")  # its check alone
    assert lines[-1] == "layercheck_strict: 1 incomplete check(s) fail this item"
    # A check the report has no result for (the target could not be checked that far) fails.
    missing = run.item(report, "backward_does_not_error")
    assert (missing.verdict, missing.result) == (Verdict.FAILED, None)
    assert (
        run.headline(report, missing, "backward_does_not_error") == "the target's run reported no result for this check"
    )
    broken = TargetReport("k.py:Kink", checks=[passed], error="the worker was killed (out of memory)")
    assert run.item(broken, GRADIENTS).verdict is Verdict.FAILED
    assert run.headline(broken, run.item(broken, GRADIENTS), GRADIENTS) == "the worker was killed (out of memory)"
    assert run.item(broken, passed.name).verdict is Verdict.FAILED  # sent before the error: not believed
    # The integrity item passes where the look found nothing, and fails where it could not look.
    assert run.item(report, INTEGRITY_CHECK).verdict is Verdict.PASSED
    assert run.item(broken, INTEGRITY_CHECK).verdict is Verdict.FAILED


def test_a_replacement_fails_the_integrity_item_and_every_item_when_that_one_does_not_run():
    from layercheck.running.in_pytest import PluginRun, Verdict

    passed = CheckResult(GRADIENTS, Status.PASSED)
    tampered = CheckResult(INTEGRITY_CHECK, Status.FAILED, "the layer replaced numpy.isfinite during predict")
    report = TargetReport("t.py:T", layouts=["3,2:CB"], checks=[passed, tampered])
    run = PluginRun()
    assert run.item(report, INTEGRITY_CHECK).verdict is Verdict.FAILED
    assert run.item(report, GRADIENTS).verdict is Verdict.PASSED  # its verdict, with the originals put back
    carried = run.item(report, GRADIENTS, carries_tampering=True)
    assert (carried.verdict, carried.result, carried.shown) == (Verdict.FAILED, tampered, [passed, tampered])
    assert run.headline(report, carried, GRADIENTS) == tampered.message
    text = run.failure_text(report, carried, color=False, width=None, verbose=False, check=GRADIENTS)
    assert text.splitlines()[0] == f"layercheck run t.py:T --layout 3,2:CB --checks {GRADIENTS}"
    assert f"FAILED {INTEGRITY_CHECK}: {tampered.message}" in text


def test_a_run_that_ended_in_an_error_fails_every_item_whatever_results_it_sent_first():
    from layercheck.running.in_pytest import PluginRun, Verdict

    sent = CheckResult(GRADIENTS, Status.PASSED)  # sent before the worker died: not believed
    report = TargetReport("q.py:Quit", checks=[sent], error="the worker process exited with status 0 before reporting")
    run = PluginRun()
    for check in (GRADIENTS, INTEGRITY_CHECK, "predict_does_not_error"):
        item = run.item(report, check)
        assert item.verdict is Verdict.FAILED, check
        assert run.headline(report, item, check) == report.error


def test_a_worker_that_forges_a_pass_of_the_one_check_asked_for_and_exits_fails_it(pytester, monkeypatch):
    """The hostile gate's module that sends a pass of the gradient check down its worker's pipe,
    then exits: with -k asking for that check alone, the forged pass comes in its turn."""
    monkeypatch.setenv("COLUMNS", "300")
    pytester.makepyfile(**{"layers/forges.py": (HOSTILE_GATE / "payload_events_then_exit.py").read_text()})
    args = ("--layercheck", "layers", "-rf", "-p", "no:cacheprovider", "--layercheck-no-cache")
    result = pytester.runpytest_inprocess(*args, "-k", "gradients_are")
    result.assert_outcomes(failed=1, deselected=len(LAYER_CHECKS) - 1)
    result.stdout.fnmatch_lines(
        [f"FAILED layers/forges.py::PayloadEventsThenExit::{GRADIENTS} - *exited with status 3*"]
    )


_IMPORTED_WHERE = """
import os, sys

with open(os.environ["LAYER_LOG"], "a") as log:
    log.write(f"{os.getpid()} {'in-pytest' if '_pytest' in sys.modules else 'in-a-worker'}\\n")
"""


def test_a_layer_file_named_on_the_command_line_is_never_imported_in_pytests_process(pytester, log):
    pytester.makepyfile(**{"named.py": _IMPORTED_WHERE + _layer("Named")})
    result = pytester.runpytest_inprocess("--layercheck", "named.py", "-p", "no:cacheprovider")
    assert "failed" not in result.parseoutcomes() and result.parseoutcomes()["passed"] > 1
    places = {line.split()[1] for line in log.read_text().splitlines() if line.split()[1].startswith("in-")}
    assert places == {"in-a-worker"}


def test_an_incomplete_target_skips_its_whole_item_unless_strict():
    from layercheck.running.in_pytest import PluginRun, Verdict

    undecided = CheckResult(GRADIENTS, Status.INCOMPLETE, "every sample on a kink")
    report = TargetReport(
        "k.py:Kink", layouts=["3,4:CB"], checks=[CheckResult("predict_does_not_error", "passed"), undecided]
    )
    item = PluginRun().item(report)
    assert item.verdict is Verdict.INCOMPLETE
    assert PluginRun().undecided(report, item) == f"incomplete: k.py:Kink: could not decide {GRADIENTS}"
    strict = PluginRun(strict=True)
    assert strict.item(report).verdict is Verdict.FAILED
    text = strict.failure_text(report, strict.item(report), color=False, width=None, verbose=False)
    assert text.splitlines()[0] == "layercheck run k.py:Kink --layout 3,4:CB --strict"
    assert text.splitlines()[-1] == "layercheck_strict: 1 incomplete check(s) fail this item"
    passed = TargetReport("k.py:Kink", checks=[CheckResult("predict_does_not_error", "passed")])
    assert PluginRun(strict=True).item(passed).verdict is Verdict.PASSED


_TAMPERS = """
import numpy as np


class Tampers:
    example_layout = "3,2:CB"

    def predict(self, X):
        np.isfinite = lambda *args, **kwargs: True
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        return 2 * dLdY
"""


def test_a_layer_that_replaces_numpy_fails_in_pytest_whichever_of_its_items_run(pytester, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")  # pytest's short summary, uncut
    pytester.makepyfile(**{"layers/tampers.py": _TAMPERS})
    whole = pytester.runpytest_inprocess("--layercheck", "layers", "-rf", "-p", "no:cacheprovider")
    assert whole.parseoutcomes()["failed"] == 1
    whole.stdout.fnmatch_lines([f"FAILED layers/tampers.py::Tampers::{INTEGRITY_CHECK} - *numpy.isfinite*"])
    # -k leaves the integrity item out: the items that run fail with it.
    some = pytester.runpytest_inprocess(
        "--layercheck", "layers", "-k", "gradients", "-rf", "-p", "no:cacheprovider", "--layercheck-no-cache"
    )
    some.assert_outcomes(failed=1, deselected=len(LAYER_CHECKS) - 1)
    some.stdout.fnmatch_lines([f"FAILED layers/tampers.py::Tampers::{GRADIENTS} - *numpy.isfinite*"])


_UNDECIDED = """
import numpy as np


class Undecided:
    learnables = ("w",)
    example_layout = "4,4,2,3:SSCB"

    def __init__(self):
        self.w = np.array([0.5, 1.5]).reshape(1, 1, 2, 1)

    def predict(self, X):
        return self.w * X

    def backward(self, X, Y, dLdY, memory):
        return dLdY * self.w, (dLdY * X).sum()  # a scalar where w is 1x1x2x1: no verdict for w
"""


def test_an_item_whose_check_could_not_decide_is_skipped_and_fails_only_when_strict(pytester):
    pytester.makepyfile(**{"layers/undecided.py": _UNDECIDED})
    # The gradient check alone, which cannot decide for w (backward_is_consistent_in_size fails).
    pytester.makefile(".yaml", gradients="defaults: {checks: [gradients_are_numerically_correct], dtypes: [float64]}")
    args = ("--layercheck-config", "gradients.yaml", "layers", "-rs", "-p", "no:cacheprovider")
    lenient = pytester.runpytest_inprocess(*args, "--junitxml", "junit.xml")
    lenient.assert_outcomes(skipped=1, passed=1)  # the gradient check; nothing replaced
    lenient.stdout.fnmatch_lines(["SKIPPED [[]1[]] layers/undecided.py:4: incomplete: could not decide for w *"])
    (skipped,) = ET.parse(pytester.path / "junit.xml").getroot().iter("skipped")
    reason = skipped.get("message")
    assert reason.startswith("incomplete: ") and reason in lenient.stdout.str()
    pytester.makeini("[pytest]\nlayercheck_strict = true\n")
    strict = pytester.runpytest_inprocess(*args)
    strict.assert_outcomes(failed=1, passed=1)
    strict.stdout.fnmatch_lines(
        [
            "layercheck run layers/undecided.py:Undecided --layout 4,4,2,3:SSCB --config gradients.yaml "
            f"--checks {GRADIENTS} --strict",
            "INCOMPLETE layers/undecided.py:Undecided (layer, 4,4,2,3:SSCB)  1 incomplete in *",  # cached, too
            "layercheck_strict: 1 incomplete check(s) fail this item",
        ],
        consecutive=False,
    )


# -- the API inside a user's tests ---------------------------------------------------------


class Doubling:
    example_layout = "3,4:CB"

    def predict(self, X):
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        return -2 * dLdY  # the wrong sign


def test_check_layer_takes_the_example_layout_when_none_is_given():
    report = check_layer(Doubling)
    assert [str(layout) for layout in report.layouts] == ["3,4:CB"]
    assert report.result("gradients_are_numerically_correct").status == Status.FAILED


def test_check_layer_without_any_layout_says_how_to_give_one():
    class NoLayout:
        def predict(self, X):
            return X

    with pytest.raises(UsageError) as info:
        check_layer(NoLayout)
    assert str(info.value) == (
        "no layout for NoLayout: pass the layout (SIZES:FORMAT, a list with one per input) or set the class "
        "attribute example_layout"
    )
    NoLayout.example_layout = "3,4:XY"  # type: ignore[attr-defined]
    with pytest.raises(UsageError, match=r"^example_layout of NoLayout is invalid: format 'XY' has unknown label"):
        check_layer(NoLayout)


def test_str_of_a_report_is_the_consoles_text_and_repr_is_short():
    report = check_layer(Doubling, dtypes=["float64"])
    lines = str(report).splitlines()
    assert lines[0].startswith("FAILED Doubling (layer, 3,4:CB)  1 failed, ")
    assert lines[1] == "    FAILED gradients_are_numerically_correct: the gradient of X has the wrong sign"
    summary = report.summary
    assert repr(report) == (
        f"<TargetReport Doubling failed: 1 failed, {summary['passed']} passed, {summary['skipped']} skipped>"
    )
    assert "\x1b" not in str(report)


_USER_TEST = """
import layercheck

class Doubling:
    example_layout = "3,4:CB"

    def predict(self, X):
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        return -2 * dLdY

def test_my_layer():
    report = layercheck.check_layer(Doubling)
    report.raise_on_failure()

def test_my_layout():
    layercheck.check_layer(Doubling, "3,4:CQ")
"""


def test_a_users_test_fails_with_layercheck_text_and_without_layercheck_frames(pytester):
    pytester.makepyfile(test_user=_USER_TEST)
    result = pytester.runpytest()
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*_ test_my_layer _*",
            "*def test_my_layer():*",
            ">       report.raise_on_failure()",
            "E       layercheck.results.CheckFailure: Doubling: gradients_are_numerically_correct failed",
            "E       FAILED Doubling (layer, 3,4:CB)  1 failed, *",
            "E           FAILED gradients_are_numerically_correct: the gradient of X has the wrong sign",
            "test_user.py:14: CheckFailure",
            "*_ test_my_layout _*",
            "*def test_my_layout():*",
            '>       layercheck.check_layer(Doubling, "3,4:CQ")',
            "E       layercheck.errors.UsageError: format 'CQ' has unknown label(s) 'Q'; use S (spatial), *",
            "",
            "test_user.py:17: UsageError",
        ]
    )
    frames = [line for line in result.outlines if INTERNAL_FRAME.search(line) or f"{os.sep}layercheck{os.sep}" in line]
    assert frames == []
