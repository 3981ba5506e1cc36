"""Worker processes (DESIGN.md section 7): every target in its own process, under a timeout
and a memory cap; whatever a target does, it is reported with the reason and the others are
checked. The hostile corpus in tests/hostile/ is run as one folder, as CI would."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import signal
import sys
import time
import xml.etree.ElementTree as ET

import pytest
from conftest import INTERNAL_FRAME, PACKAGE, SAMPLES, TESTS, run_cli
from isolation_jobs import Environment, Hostile, IsAlive, Sleep, StartsAChild, WaitFor
from once import once_per_run, process_data, process_of

from layercheck.interrupts import Interrupted
from layercheck.sandbox.isolation import run_jobs, signal_reason
from layercheck.userframes import exception_summary, user_stack

HOSTILE = TESTS / "hostile"
TIMEOUT = 3  # seconds per target in the corpus run, for the modules that hang
# The modules that end on their own are given a minute (their config entries): the checks of
# a healthy layer take a loaded machine seconds, which a timeout meant to fire soon would cut.
HANGS = {"loop_at_import.py", "loop_in_predict.py", "slow_calls.py", "clock_overwritten_in_predict.py"}
ENDS_WITHIN = 60

# file -> (status in the JSON report, what its error must say)
EXPECTED = {
    "healthy.py": ("passed", None),
    "syntax_error.py": ("error", r"importing syntax_error\.py raised SyntaxError"),
    "import_raises.py": ("error", r"importing import_raises\.py raised RuntimeError: this module refuses"),
    "loop_at_import.py": (
        "error",
        rf"timed out after {TIMEOUT} s while importing loop_at_import\.py \(loop_at_import\.py:\d+ in <module>\)",
    ),
    "loop_in_predict.py": (
        "error",
        rf"timed out after {TIMEOUT} s in \w+ \(loop_in_predict\.py:\d+ in predict\): the layer's call under way "
        r"had run \d",
    ),
    # The timeout finds a call under way (of 0.3 s at most, however short: `2.5e-05 s`), where
    # it is, or, seldom, none: between two calls, in layercheck's own work, where no line of the
    # layer's is named.
    "slow_calls.py": (
        "error",
        rf"timed out after {TIMEOUT} s in \w+(?P<at> \(slow_calls\.py:\d+ in \w+\))?: (layercheck's own work|the "
        r"layer's calls) took the time(, calling the layer many times)? \((.*; )?((?(at)the call under way had run "
        r"(0\.\d+|\d\.?\d*e-\d+) s|no code of the layer was running then))\)$",
    ),
    "clock_overwritten_in_predict.py": (
        "error",
        rf"timed out after {TIMEOUT} s in \w+ \(clock_overwritten_in_predict\.py:\d+ in predict\): the layer "
        r"overwrote the clock layercheck times its calls with, so whose time it was is not known$",
    ),
    "sys_exit_in_predict.py": ("error", r"called sys\.exit in predict_does_not_error: predict raised SystemExit: 3"),
    "os_exit_at_import.py": ("error", r"exited with status 4 .*os\._exit.* while importing os_exit_at_import\.py"),
    "os_exit_in_predict.py": ("error", r"exited with status 3 .*os\._exit.* in \w+"),
    "segfault_in_predict.py": (
        "error",
        r"died with signal SIGSEGV .* in \w+ \(segfault_in_predict\.py:\d+ in predict\)",
    ),
    "huge_allocation.py": ("error", r"ran out of memory in predict_does_not_error: predict raised MemoryError"),
    # The layer's own KeyboardInterrupt is its doing, like any exception: a failed check.
    "keyboard_interrupt_in_predict.py": (
        "failed",
        r"predict raised KeyboardInterrupt \(keyboard_interrupt_in_predict\.py:\d+ in predict\)",
    ),
}


def file_of(label: str) -> str:
    return label.split(":")[0].replace("\\", "/").rsplit("/", 1)[-1]


@pytest.fixture(scope="module")
def hostile_run(request, tmp_path_factory):
    """The hostile folder checked once in the test run (`once_per_run`)."""

    def run() -> dict:
        out = tmp_path_factory.mktemp("hostile")
        json_path, junit_path, config = out / "report.json", out / "report.xml", out / "timeouts.yaml"
        # The folder is the run's target; the config gives the timeouts: TIMEOUT by default (the
        # discovery of every module, which imports it, too), a minute for a module that ends.
        entries = "".join(
            f"  - target: {json.dumps(str(HOSTILE / name))}\n    timeout: {ENDS_WITHIN}\n"
            for name in sorted(set(EXPECTED) - HANGS)
        )
        config.write_text(f"defaults:\n  timeout: {TIMEOUT}\ntargets:\n{entries}")
        start = time.monotonic()
        proc = run_cli(
            "run",
            "tests/hostile",
            "--jobs",
            "2",
            "--config",
            config,
            "--json",
            json_path,
            "--junit",
            junit_path,
            timeout=120,
        )
        elapsed = time.monotonic() - start
        report, junit = json.loads(json_path.read_text()), junit_path.read_text(encoding="utf-8")
        return {"process": process_data(proc), "elapsed": elapsed, "report": report, "junit": junit}

    data = once_per_run(request.config, "hostile-folder", run)
    return process_of(data["process"]), data["elapsed"], data["report"], ET.fromstring(data["junit"])


def test_every_hostile_module_has_an_expectation():
    assert {p.name for p in HOSTILE.glob("*.py")} == set(EXPECTED)


def test_hostile_folder_ends_in_bounded_time_with_exit_1(hostile_run):
    proc, elapsed, report, _ = hostile_run
    assert proc.returncode == 1, proc.stdout + proc.stderr
    # Each module that hangs is stopped at its timeout, by this process (its stack asked for,
    # then killed), before the worker's own watchdog would end it 2 s later ...
    hung = {file_of(t["target"]): t["duration_s"] for t in report["targets"] if "timed out" in (t["error"] or "")}
    assert set(hung) == HANGS and all(TIMEOUT <= seconds < TIMEOUT + 2 for seconds in hung.values()), hung
    # ... so the run ends, in what start-up and the checks of the others take a loaded machine.
    assert elapsed < 120, elapsed
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr == "", "worker output stays out of the report"


def test_every_hostile_module_is_reported_with_its_status_and_reason(hostile_run):
    _, _, report, _ = hostile_run
    by_file = {file_of(t["target"]): t for t in report["targets"]}
    assert set(by_file) == set(EXPECTED)
    for name, (status, reason) in EXPECTED.items():
        target = by_file[name]
        assert target["status"] == status, (name, target["status"], target["error"])
        if reason is None:
            assert target["error"] is None and target["summary"]["failed"] == 0
        elif status == "failed":
            messages = [c["message"] for c in target["checks"] if c["status"] == "failed"]
            assert target["error"] is None and any(re.search(reason, m) for m in messages), (name, messages)
        else:
            assert re.search(reason, target["error"]), (name, target["error"])
    # The report is in target order (sorted files), whatever order the workers ended in.
    assert [t["target"] for t in report["targets"]] == sorted(t["target"] for t in report["targets"])


# Whose time a timeout was (3 s), from the shared clocks: the call under way, the calls that
# ended (their seconds, how many).
WHOSE_TIME = [
    # A call that hung, on a machine so loaded that starting the worker took half the time.
    ((1.4, 0.0, 0), ": the layer's call under way had run 1.4 s"),
    ((2.9, 0.01, 3), ": the layer's call under way had run 2.9 s"),
    # Many quick calls (0.3 s each): the one under way is no hang.
    (
        (0.2, 2.4, 8),
        ": layercheck's own work took the time, calling the layer many times (the call under way had run 0.2 s)",
    ),
    (
        (None, 2.4, 8),
        ": layercheck's own work took the time, calling the layer many times (no code of the layer was running then)",
    ),
    # A few slow calls, the last of which ran less than the first: not many, nor layercheck's.
    (
        (0.8, 1.75, 1),
        ": the layer's calls took the time (1 call that ended took 1.8 s in all; the call under way had run 0.8 s)",
    ),
    # Nor the layer's calls at all: a worker that started slowly, then one quick call.
    (
        (0.1, 0.05, 2),
        ": layercheck's own work took the time (the layer's calls that ended took 0.05 s in all; the call under "
        "way had run 0.1 s)",
    ),
    ((None, 0.0, 0), ": layercheck's own work took the time (no code of the layer was running then)"),
    # One slow call that ended (an import): not many calls.
    ((None, 1.0, 1), ": layercheck's own work took the time (no code of the layer was running then)"),
]


@pytest.mark.parametrize(("clock", "said"), WHOSE_TIME)
def test_a_timeout_says_whose_time_it_was_from_the_calls_that_ended_and_the_one_under_way(clock, said):
    from layercheck.running.batch import _whose_time
    from layercheck.sandbox.isolation import Outcome

    running, ended, calls = clock
    outcome = Outcome(timed_out=True, user_call_s=running, user_calls_s=ended, user_calls=calls)
    assert _whose_time(outcome, 3.0) == said


def test_the_shared_clock_holds_the_call_under_way_and_adds_up_those_that_ended():
    from types import SimpleNamespace

    from layercheck.contract import calls

    clock, spent = SimpleNamespace(value=0.0), [0.0, 0.0]
    seen = []
    # Alone: a guard another test left looking after each call would put its own clock back.
    kept = {name: vars(calls)[name] for name in calls._RUNTIME_GLOBALS}
    calls.install(clock, spent)
    calls.guard(None)
    try:
        calls.run(lambda: seen.append(clock.value) or time.sleep(0.01))
        calls.run(lambda: calls.run(lambda: seen.append(clock.value)))  # the outermost call counts, once
    finally:
        vars(calls).update(kept)
    assert seen[0] > 0 and seen[1] > 0 and clock.value == 0.0
    assert 0.01 <= spent[calls.SECONDS] < 5 and spent[calls.CALLS] == 2


def test_checks_done_before_a_crash_are_kept(hostile_run):
    _, _, report, _ = hostile_run
    by_file = {file_of(t["target"]): t for t in report["targets"]}
    memory = by_file["huge_allocation.py"]
    statuses = {c["name"]: c["status"] for c in memory["checks"]}
    assert statuses["predict_does_not_error"] == "failed"  # where it stopped
    assert list(statuses)[-1] == "predict_does_not_error"  # and no further


def test_junit_has_one_suite_per_target_with_an_error_case_for_each_error(hostile_run):
    _, _, report, root = hostile_run
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [t["target"] for t in report["targets"]]
    for suite, target in zip(suites, report["targets"]):
        cases = suite.findall("testcase")
        errors = [case.find("error") for case in cases if case.find("error") is not None]
        assert int(suite.get("tests")) == len(cases) == len(target["checks"]) + len(errors)
        if target["status"] == "error":
            (error,) = errors
            assert error.get("message") == target["error"]
            assert suite.get("errors") == "1"
        else:
            assert errors == [] and suite.get("errors") == "0"
            assert len(suite.findall("testcase/failure")) == int(suite.get("failures")) == target["summary"]["failed"]
    assert int(root.get("errors")) == sum(t["status"] == "error" for t in report["targets"])


def test_the_console_names_every_target_and_where_it_hung(hostile_run):
    proc, _, _, _ = hostile_run
    for name in EXPECTED:
        assert name in proc.stdout
    # faulthandler's stack of the hung worker, reduced to the user's frames
    assert re.search(r'loop_in_predict\.py", line \d+, in predict', proc.stdout), proc.stdout
    assert not INTERNAL_FRAME.search(proc.stdout), "layercheck's own frames are left out"


# -- run_jobs ------------------------------------------------------------------------------


def test_outcomes_come_back_in_job_order_whatever_order_the_workers_end_in(tmp_path):
    ended = []

    def on_done(index: int, outcome) -> None:
        ended.append(index)
        (tmp_path / f"ended-{index}").touch()

    # Job 2 waits until job 1 has ended, job 0 until job 2 has (each at most a minute), however
    # slow the machine is to start them.
    jobs = [WaitFor(str(tmp_path / "ended-2"), 0), Sleep(0.0, 1), WaitFor(str(tmp_path / "ended-1"), 2)]
    outcomes = run_jobs(jobs, workers=3, on_done=on_done)
    assert [o.result for o in outcomes] == [0, 1, 2]
    assert ended == [1, 2, 0]
    assert all(o.ok and o.failure is None for o in outcomes)


def test_a_signal_during_the_hand_on_of_a_finished_job_loses_no_outcome():
    """The user's signal may come while `on_done` renders a finished target (CI run 15): that
    target is handed on again, whole, and the others are handed on as interrupted."""
    calls: list[tuple[int, bool]] = []

    def on_done(index: int, outcome) -> None:
        calls.append((index, outcome.interrupted))
        if len(calls) == 1:  # the signal, in the middle of the first hand-on
            raise Interrupted(signal.SIGTERM)

    with pytest.raises(Interrupted):
        run_jobs([Sleep(0.0, 0), Sleep(30, 1)], workers=2, on_done=on_done)
    assert calls == [(0, False), (0, False), (1, True)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="processes are followed through /proc")
def test_a_process_a_job_leaves_running_ends_with_its_job_not_with_the_run(tmp_path):
    started, here = tmp_path / "started", tmp_path / "here"
    here.write_text(str(os.getpid()))  # the lookalike: a process that runs on
    outcomes = run_jobs([StartsAChild(str(started)), IsAlive(str(started)), IsAlive(str(here))], workers=1)
    assert [outcome.result for outcome in outcomes[1:]] == [False, True]


def test_a_hung_worker_is_stopped_with_the_stack_where_it_hung():
    start = time.monotonic()
    (outcome,) = run_jobs([Hostile("hang", timeout=1)])
    assert time.monotonic() - start < 10
    assert outcome.failure == "timed out after 1 s"
    assert outcome.events == [("start", "hang")]
    assert re.search(r'isolation_jobs\.py", line \d+, in run', outcome.stack), outcome.output


def test_a_crash_an_exit_and_a_defect_of_the_job_each_have_a_reason():
    segfault, exit_, defect = run_jobs([Hostile("segfault"), Hostile("os_exit"), Hostile("raise")], workers=3)
    assert "signal SIGSEGV" in segfault.failure and "isolation_jobs.py" in segfault.stack
    assert exit_.failure.startswith("the worker process exited with status 3") and "os._exit" in exit_.failure
    assert defect.failure.startswith(
        "layercheck internal error in the worker: RuntimeError: a defect of the job itself"
    )
    assert "Traceback" in defect.stack


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the memory cap is Linux only")
def test_the_memory_cap_turns_a_big_allocation_into_a_memory_error():
    (capped,) = run_jobs([Hostile("allocate")], max_memory=2**30)
    assert str(capped.result).startswith("MemoryError"), capped.result


def test_worker_output_is_captured_not_printed(capfd):
    (outcome,) = run_jobs([Hostile("print")])
    out, err = capfd.readouterr()
    assert outcome.result == "quiet"
    assert "chatter" not in out + err
    assert "chatter on stdout" in outcome.output and "chatter on fd 2" in outcome.output


def test_workers_see_the_current_folder_and_environment(tmp_path, monkeypatch):
    run_jobs([Sleep(0, 0)])  # a forkserver started before the changes below
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LAYERCHECK_TEST_PROBE", "seen")
    (outcome,) = run_jobs([Environment("LAYERCHECK_TEST_PROBE")])
    assert outcome.result == (str(tmp_path), "seen")


def test_signal_reasons_name_the_signal():
    assert "SIGSEGV" in signal_reason(11)
    assert "ran out of memory" in signal_reason(9)  # layercheck itself says "timed out"


def test_a_users_file_in_a_folder_named_layercheck_is_the_users(tmp_path):
    """A checkout is often named `layercheck` (`git clone`, GitHub Actions' workspace); only the
    package's own folder is layercheck's."""
    folder = tmp_path / "layercheck" / "layercheck_extra"
    folder.mkdir(parents=True)
    (folder / "bad.py").write_text("def predict(X):\n    raise ValueError('boom')\n")
    namespace: dict = {}
    exec(compile((folder / "bad.py").read_text(), str(folder / "bad.py"), "exec"), namespace)
    with pytest.raises(ValueError) as info:
        namespace["predict"](None)
    assert exception_summary(info.value) == "ValueError: boom (bad.py:2 in predict)"
    dump = (
        "Current thread 0x00007f (most recent call first):\n"
        f'  File "{folder}/bad.py", line 2 in predict\n'
        f'  File "{PACKAGE}/running/runner.py", line 5 in run_check\n'
    )
    assert user_stack(dump).splitlines()[1:] == [
        f'  File "{folder}/bad.py", line 2, in predict',
        "    raise ValueError('boom')",
    ]


def test_user_stack_keeps_the_users_frames_most_recent_last():
    dump = (
        "Fatal Python error: Segmentation fault\n\n"
        "Current thread 0x00007f (most recent call first):\n"
        f'  File "{PACKAGE}/contract.py", line 10 in predict\n'
        '  File "/home/me/layers/bad.py", line 7 in helper\n'
        '  File "/home/me/layers/bad.py", line 3 in predict\n'
        f'  File "{PACKAGE}/runner.py", line 5 in run_check\n'
    )
    stack = user_stack(dump)
    assert stack.splitlines() == [
        "Traceback (most recent call last):",
        '  File "/home/me/layers/bad.py", line 3, in predict',
        '  File "/home/me/layers/bad.py", line 7, in helper',
    ]
    assert user_stack("no stack here") == ""


# -- batch runs: order, shards -------------------------------------------------------------

SLOW_FIRST = """
import time

class {name}:
    example_layout = "3,2:CB"
    calls = 0

    def predict(self, X):
        type(self).calls += 1
        if type(self).calls == 1:
            time.sleep({delay})
        return 2 * X
"""


def three_layers(folder, first_delay):
    folder.mkdir()
    for name, delay in (("a_slow", first_delay), ("b_fast", 0), ("c_fast", 0)):
        (folder / f"{name}.py").write_text(SLOW_FIRST.format(name=name.title().replace("_", ""), delay=delay))
    return folder


def test_parallel_report_is_in_target_order(tmp_path):
    # The report keeps target order; off a terminal each target's line comes as it finishes
    # (tests/test_ci_logs.py), on a terminal in target order too.
    out = tmp_path / "r.json"
    proc = run_cli("run", three_layers(tmp_path / "layers", 1.5), "--jobs", "3", "--json", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    labels = [t["target"] for t in json.loads(out.read_text())["targets"]]
    assert [file_of(label) for label in labels] == ["a_slow.py", "b_fast.py", "c_fast.py"]
    assert all(proc.stdout.count(f"{name}.py:") == 1 for name in ("a_slow", "b_fast", "c_fast"))


def test_shards_split_the_targets_without_overlap(tmp_path):
    folder = three_layers(tmp_path / "layers", 0)
    seen = []
    for k in (1, 2):
        out = tmp_path / f"shard{k}.json"
        proc = run_cli("run", folder, "--shard", f"{k}/2", "--json", out, "--quiet")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        seen.append([file_of(t["target"]) for t in json.loads(out.read_text())["targets"]])
    assert seen == [["a_slow.py", "c_fast.py"], ["b_fast.py"]]  # round robin over sorted labels
    proc = run_cli("run", folder, "--shard", "5/5", "--quiet")
    assert proc.returncode == 0 and "No targets in shard 5/5" in proc.stdout


@pytest.mark.parametrize("shard", ["0/2", "3/2", "1", "a/b", "1/0"])
def test_bad_shard_exits_2_with_one_line(shard):
    proc = run_cli("run", "sample_layers/prelu.py", "--shard", shard)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "--shard" in proc.stderr and proc.stdout == ""


def test_a_temporary_folder_too_long_for_the_forkserver_socket_still_runs(tmp_path):
    """The forkserver's socket lives below TMPDIR, and an AF_UNIX address holds about 100 bytes:
    a TMPDIR of a CI runner's depth once gave a traceback of multiprocessing's. (A process of
    its own: multiprocessing makes its folder once a process.)"""
    deep = tmp_path / ("t" * 60) / ("u" * 60)
    deep.mkdir(parents=True)
    proc = run_cli("run", SAMPLES / "prelu.py", "--no-cache", "-q", env={**os.environ, "TMPDIR": str(deep)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert list(deep.iterdir()) == []  # its own scratch folder is removed; the socket's never was there


_POOL_IN_PREDICT = """
from concurrent.futures import ProcessPoolExecutor

import numpy as np


def _half(a):
    return a / 2


class Pooled:
    example_layout = "4,3:CB"

    def predict(self, X):
        with ProcessPoolExecutor(2) as pool:
            halves = list(pool.map(_half, [X, X]))
        return halves[0] + halves[1]
"""


@pytest.mark.skipif(
    multiprocessing.get_all_start_methods()[0] != "fork", reason="the platform's default start method does not fork"
)
def test_a_process_pool_in_predict_forks_as_under_plain_python(tmp_path):
    """A hunt for false alarms: a worker started by the forkserver took "forkserver" as its
    default start method, and a pool in predict could not import the layer's module in its
    processes (BrokenProcessPool). The layer's code gets the platform's default."""
    (tmp_path / "pooled.py").write_text(_POOL_IN_PREDICT)
    proc = run_cli("run", tmp_path / "pooled.py", "--checks", "predict_does_not_error", "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
