"""CI logs (issue 28): lines as targets finish, "still running" lines, GitHub annotations, -k,
-x / --maxfail and -q, through the command line.

Nothing here waits on the clock for an outcome: a layer that must still be running when
something is seen waits for a release file, which the test writes once it has seen it (the
layer goes on by itself after a minute, so that a broken behaviour fails the test instead of
hanging it).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import SAMPLES, run_cli
from isolation_jobs import Sleep, WaitFor

from layercheck.errors import UsageError
from layercheck.reporters.ci import escape_data, escape_property
from layercheck.results import CheckResult, Status, TargetReport
from layercheck.running.keywords import parse_keyword
from layercheck.running.stopping import MaxFail, parse_maxfail
from layercheck.running.watching import STILL_RUNNING_ENV, StillRunning, still_running_every_s, watch_of
from layercheck.sandbox.isolation import Watch, run_jobs

BACKWARD = "backward_does_not_error"

_GATED = '''"""A layer whose backward waits for a release file (at most a minute)."""
import os
import time


class {name}:
    example_layout = "4,3:CB"

    def predict(self, X):
        return 2.0 * X

    def backward(self, X, Y, dLdY, memory):
        deadline = time.monotonic() + 60
        while not os.path.exists({release!r}) and time.monotonic() < deadline:
            time.sleep(0.02)
        {ending}
'''

_BAD = '''"""A layer whose backward raises {message!r}."""


class {name}:
    example_layout = "4,3:CB"

    def predict(self, X):
        return 2.0 * X

    def backward(self, X, Y, dLdY, memory):
        raise ValueError({message!r})
'''

_GOOD = '''"""A correct layer."""


class {name}:
    example_layout = "4,3:CB"

    def predict(self, X):
        return 2.0 * X

    def backward(self, X, Y, dLdY, memory):
        return 2.0 * dLdY
'''


def _gated(folder: Path, file: str, release: Path, fails: bool = False) -> Path:
    ending = 'raise ValueError("released")' if fails else "return 2.0 * dLdY"
    path = folder / file
    path.write_text(_GATED.format(name="Gated", release=str(release), ending=ending))
    return path


def _bad(folder: Path, file: str, message: str = "boom", name: str = "Bad") -> Path:
    path = folder / file
    path.write_text(_BAD.format(name=name, message=message))
    return path


def _good(folder: Path, file: str, name: str = "Good") -> Path:
    path = folder / file
    path.write_text(_GOOD.format(name=name))
    return path


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "GITHUB_WORKSPACE", STILL_RUNNING_ENV)}
    env.update(extra)
    return env


def _run_until(
    *args: str, cwd: Path, env: dict[str, str], seen: Callable[[str], bool], release: Path
) -> tuple[int, list[str], str]:
    """`layercheck ARGS` with stdout read line by line as it comes; `release` is written once a
    line that `seen` accepts has come. Its exit status, stdout's lines, stderr."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "layercheck", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if seen(line):
                release.touch()
        code = proc.wait(timeout=120)
        assert proc.stderr is not None
        return code, lines, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# -- lines as targets finish, and "still running" ---------------------------------------------


def test_off_a_terminal_a_target_line_comes_when_it_finishes_and_the_recap_keeps_target_order(tmp_path):
    release = tmp_path / "release"
    _gated(tmp_path, "a_slow.py", release, fails=True)
    _bad(tmp_path, "b_fast.py")
    code, lines, err = _run_until(
        "run",
        "a_slow.py",
        "b_fast.py",
        "--checks",
        BACKWARD,
        "--jobs",
        "2",
        "--json",
        "out.json",
        cwd=tmp_path,
        env=_env(),
        seen=lambda line: line.startswith("FAILED b_fast.py ("),
        release=release,
    )
    assert code == 1, (lines, err)
    # b_fast.py's line came while a_slow.py was still running: a_slow.py waited for it.
    heads = [line.split(" (")[0] for line in lines if re.match(r"(FAILED|PASSED) \S+ \(", line)]
    assert heads == ["FAILED b_fast.py", "FAILED a_slow.py"]
    recap = [line for line in lines if " :: " in line]
    assert [line.split(" :: ")[0] for line in recap] == ["FAILED a_slow.py", "FAILED b_fast.py"]
    report = json.loads((tmp_path / "out.json").read_text())
    assert [t["target"] for t in report["targets"]] == ["a_slow.py", "b_fast.py"]


@pytest.mark.parametrize("quiet", [[], ["-q"]])
def test_a_target_still_running_says_which_check_it_is_in_then_again(quiet, tmp_path):
    release = tmp_path / "release"
    _gated(tmp_path, "slow.py", release)
    still, named = "... slow.py still running after ", f", in {BACKWARD}"
    in_check = []

    def twice_in_the_check(line: str) -> bool:
        if line.startswith(still) and line.rstrip("\n").endswith(named):
            in_check.append(line)
        return len(in_check) == 2

    code, lines, err = _run_until(
        "run",
        "slow.py",
        *quiet,
        "--checks",
        BACKWARD,
        cwd=tmp_path,
        env=_env(**{STILL_RUNNING_ENV: "0.2"}),
        seen=twice_in_the_check,  # the check named, then named again
        release=release,
    )
    assert code == 0, (lines, err)
    said = [line for line in lines if line.startswith(still)]
    first = next(n for n, line in enumerate(said) if line.endswith(named))
    assert said[first].endswith(named) and said[first + 1].endswith(named), said
    # Before the check, the lines of a loaded machine (at 0.2 s a quiet one is in the check
    # already): the worker that finds the targets imports the module, then the one that checks
    # them imports it again (slow where importing CuPy to probe the GPU comes first: room 3 of
    # CI) and constructs the layer. Each says where it is, in that order (a worker yet to send
    # a step is starting); the seconds rise across both, the second's going on from the first's
    # (a loaded machine may pass a poll between two lines).
    seconds = [float(line[len(still) :].split(" s, ")[0]) for line in said]
    assert seconds == sorted(set(seconds)), said
    places = ["while starting", "while importing slow.py", "while constructing and initializing the layer", named[2:]]
    assert any(_in_order(said[:cut], places[:2]) and _in_order(said[cut:], places) for cut in range(first + 1)), said
    assert lines[-1].startswith("Test Summary:")


def _in_order(said: list[str], places: list[str]) -> bool:
    """Whether `said` (lines `... s, while STEP` or `, in CHECK`) can be one worker's: each
    where it is among `places`, in their order."""
    where = [line.split(" s, ", 1)[1] for line in said]
    return all(place in places for place in where) and where == sorted(where, key=places.index)


def test_a_module_slow_to_import_says_so(tmp_path):
    release = tmp_path / "release"
    (tmp_path / "slow_import.py").write_text(
        f"import os, time\ndeadline = time.monotonic() + 60\n"
        f"while not os.path.exists({str(release)!r}) and time.monotonic() < deadline:\n    time.sleep(0.02)\n"
        + _GOOD.format(name="Good")
    )
    # At a multiple of 0.2 s: 0.2 s on a quiet machine; a loaded one may pass a poll, or find
    # the worker still starting (it has not yet said that it imports).
    said = re.compile(r"\.\.\. slow_import\.py still running after (\d+\.?\d*) s, while importing slow_import\.py")
    starting = re.compile(r"\.\.\. slow_import\.py still running after (\d+\.?\d*) s, while starting")
    code, lines, err = _run_until(
        "run",
        "slow_import.py",
        cwd=tmp_path,
        env=_env(**{STILL_RUNNING_ENV: "0.2"}),
        seen=lambda line: said.fullmatch(line.rstrip("\n")) is not None,
        release=release,
    )
    assert code == 0, (lines, err)
    first = next(n for n, line in enumerate(lines) if said.fullmatch(line))
    assert all(starting.fullmatch(line) for line in lines[:first]), lines
    seconds = [float((said.fullmatch(line) or starting.fullmatch(line)).group(1)) / 0.2 for line in lines[: first + 1]]
    assert seconds == sorted(set(seconds)) and all(round(s, 6) == int(round(s, 6)) >= 1 for s in seconds), lines


def test_a_fast_run_says_nothing_is_still_running(tmp_path):
    _good(tmp_path, "good.py")
    proc = run_cli("run", "good.py", cwd=tmp_path, env=_env())
    assert proc.returncode == 0 and "still running" not in proc.stdout


def test_on_a_terminal_no_still_running_line_is_printed(tmp_path, monkeypatch):
    from test_terminal import _run_on_a_terminal, _text

    (tmp_path / "sleepy.py").write_text(
        "import time\n\n\nclass Sleepy:\n    example_layout = '4,3:CB'\n\n"
        "    def predict(self, X):\n        time.sleep(0.5)\n        return 2.0 * X\n"
    )
    monkeypatch.setenv(STILL_RUNNING_ENV, "0.05")
    monkeypatch.delenv("CI", raising=False)  # CI makes a terminal a log
    code, screen = _run_on_a_terminal("run", "sleepy.py", "--checks", "predict_does_not_error", cwd=tmp_path)
    assert code == 0, screen
    assert "PASSED sleepy.py" in _text(screen) and "still running" not in screen


def test_on_a_terminal_the_lines_keep_target_order(tmp_path, monkeypatch):
    from test_terminal import _run_on_a_terminal, _text

    monkeypatch.delenv("CI", raising=False)  # CI makes a terminal a log (CI run 17)

    # b_fast.py ends first, however slow the machine: a_slow.py waits until b_fast.py's predict
    # has run (at most a minute), then a second more, for its worker to send its report.
    ran = tmp_path / "b_ran"
    (tmp_path / "a_slow.py").write_text(
        "import os, time\n\n\nclass ASlow:\n    example_layout = '4,3:CB'\n\n"
        "    def predict(self, X):\n        deadline = time.monotonic() + 60\n"
        f"        while not os.path.exists({str(ran)!r}) and time.monotonic() < deadline:\n"
        "            time.sleep(0.02)\n        time.sleep(1.0)\n        return 2.0 * X\n"
    )
    (tmp_path / "b_fast.py").write_text(
        "import pathlib\n\n\nclass BFast:\n    example_layout = '4,3:CB'\n\n"
        f"    def predict(self, X):\n        pathlib.Path({str(ran)!r}).touch()\n        return 2.0 * X\n"
    )
    check = ("--checks", "predict_does_not_error")
    code, screen = _run_on_a_terminal("run", "a_slow.py", "b_fast.py", "--jobs", "2", *check, cwd=tmp_path)
    assert code == 0, screen
    text = _text(screen)
    assert 0 <= text.index("PASSED a_slow.py") < text.index("PASSED b_fast.py")


@pytest.mark.parametrize("value", ["0", "-1", "soon", "nan", "inf"])
def test_a_bad_still_running_interval_is_a_usage_error(value, tmp_path):
    _good(tmp_path, "good.py")
    proc = run_cli("run", "good.py", cwd=tmp_path, env=_env(**{STILL_RUNNING_ENV: value}))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"Error: {STILL_RUNNING_ENV}={value!r}: give a number of seconds > 0"
    assert still_running_every_s({STILL_RUNNING_ENV: "2.5"}) == 2.5
    assert still_running_every_s({}) == 30.0


def test_run_jobs_tells_the_watch_of_a_job_still_running_with_what_it_sent(tmp_path):
    release = tmp_path / "release"
    told: list[tuple[int, float, list]] = []

    def call(index, seconds, events):
        told.append((index, seconds, list(events)))
        if events:
            release.touch()

    outcomes = run_jobs([WaitFor(str(release), 7)], watch=Watch(0.1, call))
    assert outcomes[0].result == 7
    # Each time at a later multiple of 0.1 s (a loaded machine may pass one between polls).
    multiples = [round(seconds / 0.1, 6) for _, seconds, _ in told]
    assert all(n == int(n) >= 1 for n in multiples) and multiples == sorted(set(multiples)), told
    assert told[-1][0] == 0 and told[-1][2] == [("start", "waiting for release")]


def test_run_jobs_stops_early_the_running_and_the_waiting_jobs(tmp_path):
    done: list[int] = []
    jobs = [Sleep(0, 1), WaitFor(str(tmp_path / "never"), 2), WaitFor(str(tmp_path / "never"), 3)]
    outcomes = run_jobs(jobs, workers=2, on_done=lambda i, o: done.append(i), stop=lambda: 0 in done)
    assert outcomes[0].ok and outcomes[0].result == 1 and not outcomes[0].stopped_early
    for outcome in outcomes[1:]:
        assert outcome.stopped_early and not outcome.ok and outcome.result is None
    assert outcomes[1].failure == "stopped before it finished"  # it was running
    assert outcomes[2].failure == "not started"
    assert sorted(done) == [0, 1, 2]


# -- GitHub annotations -------------------------------------------------------------------


def _class_line(path: Path, name: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if line.startswith(f"class {name}"))


def _commands(lines: list[str]) -> list[str]:
    """The lines GitHub's runner would read as commands where commands are not stopped."""
    return [line for line in lines if line.lstrip().startswith("::") or "##[" in line]


def _after_resume(stdout: str) -> list[str]:
    """The lines after layercheck stopped GitHub's commands and resumed them; those before
    the stop; asserting there is one stop, one resume, in that order."""
    lines = stdout.splitlines()
    stops = [n for n, line in enumerate(lines) if re.fullmatch(r"::stop-commands::[0-9a-f]{32}", line)]
    assert len(stops) == 1, stdout
    token = lines[stops[0]].rsplit("::", 1)[1]
    resumes = [n for n, line in enumerate(lines) if line == f"::{token}::"]
    assert len(resumes) == 1 and resumes[0] > stops[0], stdout
    assert _commands(lines[: stops[0]]) == []
    return lines[resumes[0] + 1 :]


def test_with_github_actions_each_failure_is_an_annotation_on_the_layer_line(tmp_path):
    bad = _bad(tmp_path, "bad.py")
    _good(tmp_path, "good.py")
    proc = run_cli("run", "bad.py", "good.py", "--checks", BACKWARD, cwd=tmp_path, env=_env(GITHUB_ACTIONS="true"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    after = _after_resume(proc.stdout)
    line = _class_line(bad, "Bad")
    assert after == [
        f"::error file=bad.py,line={line},title=bad.py%3A {BACKWARD}::backward raised ValueError: boom "
        f"(bad.py:{line + 7} in backward) with float64 inputs"
    ]


def test_a_failure_served_from_the_result_cache_is_annotated_on_its_line_too(tmp_path):
    bad = _bad(tmp_path, "bad.py")
    runs = [
        run_cli("run", "bad.py", "--checks", BACKWARD, cwd=tmp_path, env=_env(GITHUB_ACTIONS="true")) for _ in range(2)
    ]
    assert "(cached)" not in runs[0].stdout and "(cached)" in runs[1].stdout, runs[1].stdout
    line = _class_line(bad, "Bad")
    for proc in runs:
        assert proc.returncode == 1
        (annotation,) = _after_resume(proc.stdout)
        assert annotation.startswith(f"::error file=bad.py,line={line},title=bad.py%3A {BACKWARD}::"), annotation


@pytest.mark.parametrize("environ", [{}, {"GITHUB_ACTIONS": "false"}, {"GITHUB_ACTIONS": "1"}])
def test_without_github_actions_there_is_no_workflow_command(environ, tmp_path):
    _bad(tmp_path, "bad.py")
    proc = run_cli("run", "bad.py", "--checks", BACKWARD, cwd=tmp_path, env=_env(**environ))
    assert proc.returncode == 1
    assert _commands(proc.stdout.splitlines()) == []


def test_a_layer_cannot_forge_an_annotation(tmp_path):
    forged = "boom\n::error file=forged.py,line=1::forged\n    ::warning::indented %0A\r##[error]legacy"
    _bad(tmp_path, "bad.py", forged)
    proc = run_cli("run", "bad.py", "--checks", BACKWARD, cwd=tmp_path, env=_env(GITHUB_ACTIONS="true", COLUMNS="30"))
    assert proc.returncode == 1
    # The report quotes the message (its traceback too, a line each), with commands stopped.
    assert "::error file=forged.py" in proc.stdout and "    ::warning::indented" in proc.stdout
    after = _after_resume(proc.stdout)
    assert len(after) == 1 and after[0].startswith("::error file=bad.py,line=")
    message = after[0].split("::", 2)[2]
    assert message.startswith(r"backward raised ValueError: boom\n::error file=forged.py,line=1::forged\n")
    assert r"%250A\r##[error]legacy" in message  # % escaped; CR and LF shown, never written


def test_an_annotation_escapes_a_path_holding_a_comma_and_a_colon(tmp_path):
    _bad(tmp_path, "we,ird:name.py")
    proc = run_cli("run", "we,ird:name.py", "--checks", BACKWARD, cwd=tmp_path, env=_env(GITHUB_ACTIONS="true"))
    assert proc.returncode == 1
    [annotation] = _after_resume(proc.stdout)
    assert annotation.startswith(f"::error file=we%2Cird%3Aname.py,line=4,title=we%2Cird%3Aname.py%3A {BACKWARD}::")


def test_an_annotation_path_is_relative_to_the_github_workspace(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    _bad(folder, "bad.py")
    env = _env(GITHUB_ACTIONS="true", GITHUB_WORKSPACE=str(tmp_path))
    proc = run_cli("run", "bad.py", "--checks", BACKWARD, cwd=folder, env=env)
    [annotation] = _after_resume(proc.stdout)
    assert annotation.startswith("::error file=sub/bad.py,line=4,title=bad.py%3A ")


def test_a_module_that_cannot_be_imported_is_annotated_on_its_file_without_a_line(tmp_path):
    (tmp_path / "broken.py").write_text("raise RuntimeError('at import')\n")
    proc = run_cli("run", "broken.py", cwd=tmp_path, env=_env(GITHUB_ACTIONS="true"))
    assert proc.returncode == 1
    [annotation] = _after_resume(proc.stdout)
    assert annotation.startswith("::error file=broken.py,title=broken.py::could not be checked: ")
    assert "RuntimeError: at import" in annotation


def test_a_class_imported_into_the_target_file_gets_no_line_of_another_file(tmp_path):
    _bad(tmp_path, "origin.py", name="Bad")
    (tmp_path / "alias.py").write_text("from origin import Bad\n")
    proc = run_cli("run", "alias.py:Bad", "--checks", BACKWARD, cwd=tmp_path, env=_env(GITHUB_ACTIONS="true"))
    assert proc.returncode == 1
    [annotation] = _after_resume(proc.stdout)
    assert annotation.startswith(f"::error file=alias.py,title=alias.py%3ABad%3A {BACKWARD}::")


def test_workflow_command_escapes_follow_github_rules():
    assert escape_data("a%b\rc\nd:e,f") == "a%25b%0Dc%0Ad:e,f"
    assert escape_property("a%b\rc\nd:e,f") == "a%25b%0Dc%0Ad%3Ae%2Cf"


# -- -k ---------------------------------------------------------------------------------------


def _checked(path: Path) -> dict[str, list[str]]:
    """target -> its checks, from a JSON report, without the integrity check (always run)."""
    report = json.loads(path.read_text())
    return {
        t["target"]: [c["name"] for c in t["checks"] if c["name"] != "module_does_not_replace_numpy_or_layercheck"]
        for t in report["targets"]
    }


def test_k_selects_targets_by_label_and_checks_by_name(tmp_path):
    out = tmp_path / "out.json"
    proc = run_cli("run", SAMPLES, "-k", "PReLU and not gradients", "--json", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    checked = _checked(out)
    assert list(checked) == [f"{SAMPLES}/prelu.py:PReLU"]
    names = checked[f"{SAMPLES}/prelu.py:PReLU"]
    assert "gradients_are_numerically_correct" not in names and "predict_does_not_error" in names


def test_k_with_a_check_name_checks_every_target_with_that_check_alone(tmp_path):
    out = tmp_path / "out.json"
    proc = run_cli("run", SAMPLES / "prelu.py", SAMPLES / "srelu.py", "-k", "outputs_are_finite", "--json", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(_checked(out).values()) == [["outputs_are_finite"], ["outputs_are_finite"]]


def test_k_that_selects_nothing_is_a_usage_error(tmp_path):
    proc = run_cli("run", SAMPLES / "prelu.py", "-k", "nosuchthing")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "Error: -k 'nosuchthing' selects none of the 1 target(s) found"
    assert "Traceback" not in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize(
    ("expression", "column"), [("prelu and", 10), ("(prelu", 7), ("prelu srelu", 7), ("a %", 3), (")", 1)]
)
def test_k_that_is_not_an_expression_is_a_usage_error_saying_where(expression, column):
    proc = run_cli("run", SAMPLES / "prelu.py", "-k", expression)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"Error: -k {expression!r}: at column {column}: ")
    assert len(proc.stderr.strip().splitlines()) == 1 and proc.stdout == ""


def test_k_leaves_a_module_that_cannot_be_imported_in_the_report(tmp_path):
    _good(tmp_path, "good.py")
    (tmp_path / "broken.py").write_text("raise RuntimeError('at import')\n")
    proc = run_cli("run", tmp_path, "-k", "good", "--json", tmp_path / "out.json", cwd=tmp_path)
    assert proc.returncode == 1
    report = json.loads((tmp_path / "out.json").read_text())
    assert [(Path(t["target"]).name, t["status"]) for t in report["targets"]] == [
        ("broken.py", "error"),
        ("good.py:Good", "passed"),
    ]


def test_k_grammar_matches_pytest():
    k = parse_keyword("a or b and not c")  # and binds tighter than or; not tighter than and
    assert k.matches("a", "z") and k.matches("b", "z") and not k.matches("b", "c")
    k = parse_keyword("(a or b) and not c")
    assert not k.matches("a", "c") and k.matches("A.PY", "z")  # case-insensitive
    k = parse_keyword("not not x")
    assert k.matches("x", "") and not k.matches("y", "")
    assert parse_keyword("").matches("anything", "at all")  # empty: everything, as pytest
    assert parse_keyword("notes.py").matches("layers/notes.py", "")  # a word that starts with not
    with pytest.raises(UsageError, match="nested more than 100 levels deep"):
        parse_keyword("not " * 101 + "x")


# -- -x / --maxfail ---------------------------------------------------------------------------


def test_x_stops_after_the_first_failed_target_and_reports_every_target(tmp_path):
    buggy = SAMPLES / "buggy"
    total = len(list(buggy.glob("*.py")))
    out, junit = tmp_path / "out.json", tmp_path / "out.xml"
    proc = run_cli("run", buggy, "-x", "--json", out, "--junit", junit)
    assert proc.returncode == 1
    targets = json.loads(out.read_text())["targets"]
    assert len(targets) == total
    statuses = [t["status"] for t in targets]
    failed = statuses.index("failed")
    assert statuses[:failed] == ["passed"] * failed
    not_checked = targets[failed + 1 :]
    assert not_checked and all(
        t["status"] == "error"
        and t["error"] == "not checked: the run stopped after 1 failed target (-x)"
        and t["checks"] == []
        for t in not_checked
    )
    lines = proc.stdout.splitlines()
    assert lines[-1] == f"The run stopped after 1 failed target (-x): {len(not_checked)} targets not checked."
    assert lines[-2].endswith(f"0 could not be checked, {len(not_checked)} not checked.")
    assert not any(t["target"] in proc.stdout for t in not_checked)  # no line, no recap: not failures
    suites = ET.parse(junit).getroot().findall("testsuite")
    assert len(suites) == total
    for suite in suites[failed + 1 :]:
        assert suite.get("errors") == "0" and suite.get("skipped") == "1"
        assert suite.find("testcase/skipped").get("message").startswith("not checked: the run stopped")
    assert ET.parse(junit).getroot().get("errors") == "0"


def test_maxfail_stops_after_n_failed_targets(tmp_path):
    out = tmp_path / "out.json"
    proc = run_cli("run", SAMPLES / "buggy", "--maxfail", "2", "--json", out)
    assert proc.returncode == 1
    statuses = [t["status"] for t in json.loads(out.read_text())["targets"]]
    assert statuses.count("failed") == 2
    assert proc.stdout.splitlines()[-1].startswith("The run stopped after 2 failed targets (--maxfail 2): ")


def test_x_stops_a_target_that_is_running(tmp_path):
    _gated(tmp_path, "a_slow.py", tmp_path / "never")
    _bad(tmp_path, "b_fast.py")
    out = tmp_path / "out.json"
    proc = run_cli("run", "a_slow.py", "b_fast.py", "-x", "--jobs", "2", "--json", out, cwd=tmp_path, timeout=50)
    assert proc.returncode == 1
    slow, fast = json.loads(out.read_text())["targets"]
    assert fast["status"] == "failed"
    assert slow["error"] == "not checked: the run stopped after 1 failed target (-x)"


def test_x_when_nothing_fails_says_nothing_of_stopping(tmp_path):
    _good(tmp_path, "good.py")
    _good(tmp_path, "other.py")
    proc = run_cli("run", "good.py", "other.py", "-x", cwd=tmp_path)
    assert proc.returncode == 0 and "stopped" not in proc.stdout and "not checked" not in proc.stdout


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["-x", "--maxfail", "2"], "Error: give -x or --maxfail N, not both (-x is --maxfail 1)"),
        (["--maxfail", "0"], "Error: --maxfail '0': give a whole number of failed targets >= 1"),
        (["--maxfail", "two"], "Error: --maxfail 'two': give a whole number of failed targets >= 1"),
    ],
)
def test_bad_maxfail_is_a_usage_error(args, error):
    proc = run_cli("run", SAMPLES / "prelu.py", *args)
    assert proc.returncode == 2 and proc.stderr.strip() == error and proc.stdout == ""


def test_maxfail_counts_targets_that_fail_the_run():
    incomplete = TargetReport("t", checks=[CheckResult("c", Status.INCOMPLETE)])
    assert not MaxFail(1, "-x").fails(incomplete)
    assert MaxFail(1, "-x", strict=True).fails(incomplete)  # --strict: it fails the run
    assert MaxFail(1, "-x").fails(TargetReport("t", error="no"))
    assert not MaxFail(1, "-x").fails(TargetReport("t", checks=[CheckResult("c", Status.PASSED)]))
    assert parse_maxfail(False, None) is None


# -- -q ---------------------------------------------------------------------------------------


def test_quiet_prints_each_failure_once_and_keeps_notes():
    # Real dtypes given: the complex layer passes with a note that they left its arithmetic out.
    proc = run_cli(
        "run", SAMPLES / "buggy" / "srelu_swapped.py", SAMPLES / "complex_scale.py", "-q", "--dtype", "float64,float32"
    )
    assert proc.returncode == 1
    out = proc.stdout
    message = "the gradients of al and tr are returned in each other's place"
    assert out.count(message) == 1  # in the recap; not the target's details again
    assert "FAILED" in out.splitlines()[0] and "srelu_swapped.py" in out.splitlines()[0]
    assert "likely cause" not in out  # the details are -v's and the default's
    # A passing target with a note: its line and the note, which says what was not tested.
    assert re.search(r"^PASSED \S*complex_scale\.py", out, re.M)
    assert "add --dtype complex128" in out


def test_quiet_prints_a_target_that_could_not_be_checked_once_with_its_reason(tmp_path):
    (tmp_path / "broken.py").write_text("raise RuntimeError('at import')\n")
    _good(tmp_path, "good.py")
    proc = run_cli("run", "broken.py", "good.py", "-q", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.count("RuntimeError: at import") == 1
    assert "ERROR  broken.py" in proc.stdout and "good.py" not in proc.stdout


def test_a_targets_seconds_go_on_from_those_of_the_worker_that_found_it():
    said = []
    watch = watch_of(["a.py", "b.py"], StillRunning(lambda *line: said.append(line), 0.2), after=[0.74, 0.0])
    watch.call(0, 0.2, [("start", "gradients_are_numerically_correct")])
    watch.call(1, 0.2, [])
    assert said == [("a.py", 0.9, "in gradients_are_numerically_correct"), ("b.py", 0.2, "while starting")]
