"""The hard cases of a CI gate (issue 19): nothing passes that did not pass, nothing outlives
the run, nothing outgrows its input.

- tests/hostile_gate/ is run as one folder, as CI would: objects whose `__str__`, `__repr__`,
  `__eq__` or `__len__` raise, megabyte messages, BaseException subclasses, array subclasses;
- a run stopped with SIGINT or SIGTERM, or whose parent is killed with SIGKILL;
- report files: symlinks, devices, a full disk, the umask, paths that cannot be written, one
  file for both reports, file names that are not UTF-8;
- the Python API in-process: the working folder, KeyboardInterrupt, BaseException, a defect of
  layercheck itself.

Every CLI run here is started in a session of its own, so that every process it starts
(workers, the forkserver, the resource tracker) is in its process group, and the tests can
tell that none of them outlives it (`_survivors`, read from /proc). Processes a layer starts
in a session of their own leave the group: they are found by the folder their run names in
their environment, and by the pids the hostile layers write there (hostile_gate/README.md).
"""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, SAMPLES, TESTS
from once import once_per_run

import layercheck
from layercheck.errors import UsageError
from layercheck.results import Status
from layercheck.safetext import bounded, exception_text, safe_repr, safe_str

GATE = TESTS / "hostile_gate"
LINUX = sys.platform.startswith("linux")
needs_proc = pytest.mark.skipif(not LINUX, reason="process groups are read from /proc")


# -- helpers ---------------------------------------------------------------------------------


PIDS = "LAYERCHECK_GATE_PIDS"
_pid_folders: dict[int, Path] = {}  # process group of a run: the folder of its pids


def _start(*args: object, cwd: Path = REPO, env: dict | None = None) -> subprocess.Popen:
    """`python -m layercheck ARGS` in a new session (its pid is its process group), with
    SIGINT at its default (a background shell would hand it down ignored), and a folder of
    its own for the pids its layers record (`PIDS`)."""
    folder = Path(tempfile.mkdtemp(prefix="layercheck-gate-pids-"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "layercheck", *map(str, args)],
        cwd=cwd,
        env={**(os.environ if env is None else env), PIDS: str(folder)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    _pid_folders[proc.pid] = folder
    return proc


def _survivors(group: int) -> list[str]:
    """The live processes of the run whose process group is `group` (zombies are dead: their
    parent reaps): those of the group, and those that left it but hold the run's folder of
    pids in their environment or wrote their pid there."""
    folder = _pid_folders.get(group)
    marker = f"{PIDS}={folder}".encode() if folder is not None else None
    recorded = {name for name in os.listdir(folder) if name.isdigit()} if folder is not None else set()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses
        fields = text[text.rindex(")") + 2 :].split()
        if fields[0] != "Z" and (int(fields[2]) == group or entry.name in recorded or _holds(entry, marker)):
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                cmdline = "?"
            found.append(f"{entry.name} {cmdline[:120]}")
    return found


def _holds(process: Path, marker: bytes | None) -> bool:
    """Whether the environment `process` started with holds `marker` (a forked process shows
    the environment of the last program executed)."""
    try:
        return marker is not None and marker in (process / "environ").read_bytes().split(b"\0")
    except OSError:  # ended meanwhile, or another user's
        return False


def _no_survivors(group: int, within: float = 5.0) -> None:
    alive = _survivors_after(group, within)
    assert alive == [], f"processes outlived the run: {alive}"


def _survivors_after(group: int, within: float) -> list[str]:
    """The run's live processes (`_survivors`) once none is left, or `within` seconds passed."""
    deadline = time.monotonic() + within
    while (alive := _survivors(group)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


def _recorded(group: int) -> dict[str, str]:
    """What the layers of the run wrote in its folder of pids: name, what it is."""
    folder = _pid_folders[group]
    return {path.name: path.read_text() for path in folder.iterdir()}


@pytest.fixture(autouse=True, scope="module")
def _remove_pid_folders():
    yield
    for folder in _pid_folders.values():
        shutil.rmtree(folder, ignore_errors=True)
    _pid_folders.clear()


def _finish(proc: subprocess.Popen, timeout: float = 120) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:  # a test that fails must not leave the run behind either
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    return proc.returncode, out, err


def _expected(path: Path) -> tuple[str, str | None]:
    """(status, regex) from the first line of a module's docstring: Passed, Failed: or Error:."""
    doc = (ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "").splitlines()[0]
    if doc == "Passed":
        return "passed", None
    status, _, regex = doc.partition(": ")
    return status.lower(), regex


def _file_of(label: str) -> str:
    return label.split(":")[0].replace("\\", "/").rsplit("/", 1)[-1]


def _assert_every_target_in_both_reports(report: dict, root: ET.Element, files: set[str]) -> None:
    assert {_file_of(t["target"]) for t in report["targets"]} == files
    assert [s.get("name") for s in root.findall("testsuite")] == [t["target"] for t in report["targets"]]


# -- the corpus, as one folder ---------------------------------------------------------------


@pytest.fixture(scope="module")
def gate_run(request, tmp_path_factory):
    """The corpus checked as one folder, once in the test run (`once_per_run`): its exit status,
    output, both reports, and what its processes left (on Linux: the pids the layers recorded,
    and those still alive once the run ended)."""

    def run() -> dict:
        out = tmp_path_factory.mktemp("gate")
        json_path, junit_path = out / "report.json", out / "report.xml"
        proc = _start("run", GATE, "--jobs", "2", "--timeout", "60", "--json", json_path, "--junit", junit_path)
        # The folder's 90 targets take 29 s on two idle cores, 89 s where the real CuPy is
        # installed (Python 3.13), and past 120 s beside the suite's own workers on a slower
        # machine (CI's room 3): a hung run is still stopped, well before CI's limit.
        code, stdout, stderr = _finish(proc, timeout=480)
        left = {"recorded": _recorded(proc.pid), "alive": _survivors_after(proc.pid, 5.0)} if LINUX else None
        report, junit = json.loads(json_path.read_text()), junit_path.read_text(encoding="utf-8")
        return {"code": code, "stdout": stdout, "stderr": stderr, "report": report, "junit": junit, "left": left}

    data = once_per_run(request.config, "hostile-gate", run)
    root = ET.fromstring(data["junit"])
    return data["code"], data["stdout"], data["stderr"], data["report"], root, data["left"]


def test_the_gate_corpus_fails_with_every_target_in_both_reports_and_nothing_left(gate_run):
    code, stdout, stderr, report, root, left = gate_run
    assert code == 1, stdout + stderr
    assert "Traceback" not in stderr, stderr
    _assert_every_target_in_both_reports(report, root, {p.name for p in GATE.glob("*.py")})
    if LINUX:
        # Plain, in a session of its own, by setsid; daemons forked twice: in predict, at
        # import in discovery and in the check. Each started, none is left.
        assert len(left["recorded"]) >= 5, left["recorded"]
        assert left["alive"] == [], f"processes outlived the run: {left['alive']}"


@pytest.mark.parametrize("module", sorted(p.name for p in GATE.glob("*.py")))
def test_each_gate_module_is_reported_as_its_docstring_says(gate_run, module):
    _, _, _, report, _, _ = gate_run
    (target,) = [t for t in report["targets"] if _file_of(t["target"]) == module]
    statuses, regex = _expected(GATE / module)
    # `Error|Passed:` where the room decides (a fake `cupy` is a module entry put back where the
    # real one was imported first, said among the allowed changes; else a module that is not
    # CuPy): the same regex holds for both
    assert target["status"] in statuses.split("|"), (target["status"], target["error"], target["checks"])
    status = target["status"]
    if status == "passed" and regex:
        assert any(re.search(regex, change) for change in target["allowed_changes"]), target["allowed_changes"]
    if status == "failed":
        messages = [c["message"] for c in target["checks"] if c["status"] == "failed"]
        assert any(re.search(regex, m) for m in messages), messages
    elif status == "error":
        assert re.search(regex, target["error"]), target["error"]
    for check in target["checks"]:
        assert "internal error" not in check["message"], check
        assert len(check["message"]) <= 2_000 and len(json.dumps(check["details"])) <= 20_000, check["name"]


def test_the_gate_reports_stay_small_however_large_the_messages(gate_run):
    _, stdout, _, report, root, _ = gate_run
    # 4 MB of message and a 50 MB repr: each said once, cut to a few KB. Bounded per target: the
    # reports hold every check of every target, however small, and the corpus grows.
    assert len(stdout) < 200_000
    assert max(len(json.dumps(target)) for target in report["targets"]) < 50_000
    assert max(len(ET.tostring(suite)) for suite in root.findall("testsuite")) < 50_000


def test_the_gate_reports_only_finite_durations_whatever_the_layers_did_to_the_clocks(gate_run):
    # odd_nan_clocks.py and odd_raising_clocks.py replace time.monotonic and time.perf_counter
    _, stdout, _, report, root, _ = gate_run
    durations = [report["duration_s"]] + [t["duration_s"] for t in report["targets"]]
    durations += [c["duration_s"] for t in report["targets"] for c in t["checks"]]
    durations += [float(e.get("time")) for e in root.iter() if e.get("time") is not None]
    assert all(np.isfinite(d) and d >= 0 for d in durations), sorted(durations)[:3] + sorted(durations)[-3:]
    shown = re.findall(r"\bin (-?[\d.]+|-?nan|-?inf)s\b", stdout)  # `PASSED x.py ... in 0.03s`
    assert shown and all(np.isfinite(float(d)) and float(d) >= 0 for d in shown), shown


# What must never reach a terminal raw (tab and newline are layercheck's own layout).
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def test_the_gate_console_has_only_its_own_lines_at_column_0_and_nothing_raw(gate_run):
    _, stdout, stderr, report, _, _ = gate_run
    assert not _HIDDEN.search((stdout + stderr).replace("\n", "")), "a control character reached the console"
    heads = [line.split()[0] for line in stdout.splitlines() if line and not line.startswith(" ")]
    targets = [t["status"] for t in report["targets"]]
    failures = sum(c["status"] == "failed" for t in report["targets"] if t["status"] == "failed" for c in t["checks"])
    # a line per target that passed, failed (and each of its failures in the recap) or could
    # not be checked (and once more in the recap), the recap's rule and one summary
    assert heads.count("PASSED") == targets.count("passed")
    assert heads.count("FAILED") == targets.count("failed") + failures
    assert heads.count("ERROR") == 2 * targets.count("error")
    assert heads.count("Test") == 1 and len(heads) == len(targets) + failures + targets.count("error") + 2, heads
    assert not {"👍", "❌", "🅱"} & set(stdout)


# -- signals -----------------------------------------------------------------------------------


def _hang_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "layers"
    folder.mkdir()
    (folder / "a_healthy.py").write_text((SAMPLES / "prelu.py").read_text())
    (folder / "b_hang.py").write_text(
        "import pathlib\n\n\nclass Hang:\n    example_layout = '3,2:CB'\n\n    def predict(self, X):\n"
        "        pathlib.Path(__file__).with_suffix('.hanging').touch()\n        while True:\n            pass\n"
    )
    (folder / "c_hang_too.py").write_text((folder / "b_hang.py").read_text().replace("Hang", "HangToo"))
    return folder


def _wait_until_only_the_hung_run(folder: Path, group: int, within: float = 60) -> None:
    """Until both hanging layers are in predict and the healthy one's worker has ended (its
    report is in): a signal sent then finds exactly that, however slow the machine."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        hanging = len(list(folder.glob("*.hanging"))) == 2
        if hanging and len([p for p in _survivors(group) if "forkserver" in p]) == 3:  # it and 2 workers
            return
        time.sleep(0.1)
    raise AssertionError(f"the hung layers did not start, or the healthy one did not end: {_survivors(group)}")


def _wait_for_marks(folder: Path, pattern: str, count: int, group: int, within: float = 60) -> None:
    """Until `count` files matching `pattern` are in `folder`: each a layer's mark that it got
    where it hangs (`*.hanging`: in predict; `*.importing`: at import), however slow the machine."""
    deadline = time.monotonic() + within
    while len(list(folder.glob(pattern))) < count:
        assert time.monotonic() < deadline, f"the layers did not get where they hang: {_survivors(group)}"
        time.sleep(0.05)


@needs_proc
@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_every_worker_reports_what_finished_and_exits_128_plus_it(tmp_path, signum, status):
    folder = _hang_folder(tmp_path)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    json_path, junit_path = tmp_path / "r.json", tmp_path / "r.xml"
    env = {**os.environ, "TMPDIR": str(scratch)}
    proc = _start("run", folder, "--jobs", "3", "--timeout", "300", "--json", json_path, "--junit", junit_path, env=env)
    _wait_until_only_the_hung_run(folder, proc.pid)
    sent = time.monotonic()
    # Ctrl-C in a terminal reaches the whole group; `kill` and `docker stop` the main process.
    if signum == signal.SIGINT:
        os.killpg(proc.pid, signum)
    else:
        os.kill(proc.pid, signum)
    code, stdout, stderr = _finish(proc, timeout=60)
    assert code == status, stdout + stderr
    assert time.monotonic() - sent < 20  # generous: "a second or two" on a quiet machine
    assert "interrupted" in stderr and "Traceback" not in stderr, stderr
    _no_survivors(proc.pid)
    assert list(scratch.iterdir()) == [], "the scratch folder is removed"
    report = json.loads(json_path.read_text())
    _assert_every_target_in_both_reports(
        report, ET.parse(junit_path).getroot(), {"a_healthy.py", "b_hang.py", "c_hang_too.py"}
    )
    by_file = {_file_of(t["target"]): t for t in report["targets"]}
    assert by_file["a_healthy.py"]["status"] == "passed"
    for name in ("b_hang.py", "c_hang_too.py"):
        assert by_file[name]["status"] == "error"
        assert by_file[name]["error"].startswith(f"interrupted ({signal.Signals(signum).name})")


@needs_proc
def test_a_hung_worker_ends_itself_when_the_parent_is_killed(tmp_path):
    folder = _hang_folder(tmp_path)
    # A timeout that no hung layer reaches before the parent is killed (however slow the
    # machine is to get them into predict), and whose watchdog would end them within the wait.
    proc = _start("run", folder, "--jobs", "3", "--timeout", "10")
    _wait_for_marks(folder, "*.hanging", 2, proc.pid)  # both hung layers in predict
    os.kill(proc.pid, signal.SIGKILL)
    _finish(proc, timeout=30)
    # The forkserver, which sees the parent die, ends them; else their own watchdog would,
    # 10 s of timeout plus 2 s of grace from their start.
    _no_survivors(proc.pid, within=30)


def _hang_with_processes(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A folder of the gate's layers that start processes, and the environment that makes two
    of them hang after replacing (or cancelling) layercheck's faulthandler watchdog."""
    folder = tmp_path / "layers"
    folder.mkdir()
    for name in ("children_left_running.py", "daemon_forked_twice.py", "daemon_at_import.py"):
        shutil.copy(GATE / name, folder / name)
    return folder, {**os.environ, "LAYERCHECK_GATE_HANG": "1"}


@needs_proc
def test_a_timeout_kills_the_processes_of_the_hung_layer_too(tmp_path):
    folder, env = _hang_with_processes(tmp_path)
    json_path, config = tmp_path / "r.json", tmp_path / "timeouts.yaml"
    # 3 s for the layers that hang, a minute for daemon_at_import.py, which passes (a loaded
    # machine may take seconds for its checks, beside a hung layer's busy loop).
    passes = json.dumps(str(folder / "daemon_at_import.py"))
    config.write_text(f"defaults:\n  timeout: 3\ntargets:\n  - target: {passes}\n    timeout: 60\n")
    proc = _start("run", folder, "--jobs", "2", "--config", config, "--json", json_path, env=env)
    code, stdout, stderr = _finish(proc, timeout=120)
    assert code == 1 and "Traceback" not in stderr and "unexpected pid" not in stderr, stdout + stderr
    by_file = {_file_of(t["target"]): t for t in json.loads(json_path.read_text())["targets"]}
    for name in ("children_left_running.py", "daemon_forked_twice.py"):
        assert by_file[name]["status"] == "error" and "timed out after 3 s" in by_file[name]["error"]
    assert by_file["daemon_at_import.py"]["status"] == "passed"
    assert {"ready-children", "ready-daemon"} <= set(_recorded(proc.pid))
    _no_survivors(proc.pid)


@needs_proc
def test_nothing_outlives_layercheck_killed_while_layers_hang_with_processes(tmp_path):
    folder, env = _hang_with_processes(tmp_path)
    proc = _start("run", folder, "--jobs", "2", "--timeout", "300", env=env)
    deadline = time.monotonic() + 60
    while not {"ready-children", "ready-daemon"} <= set(_recorded(proc.pid)):
        assert time.monotonic() < deadline and proc.poll() is None, _recorded(proc.pid)
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGKILL)
    _finish(proc, timeout=30)
    # Neither watchdog of the workers is left: the forkserver, which sees the parent die,
    # ends them and everything they started, and the resource tracker ends with it.
    _no_survivors(proc.pid, within=10)


@needs_proc
def test_a_ctrl_c_while_modules_are_imported_reports_every_target_as_interrupted(tmp_path):
    folder = _hang_folder(tmp_path)
    (folder / "d_hang_at_import.py").write_text(
        "import pathlib\n\npathlib.Path(__file__).with_suffix('.importing').touch()\nwhile True:\n    pass\n"
    )
    json_path = tmp_path / "r.json"
    proc = _start("run", folder, "--jobs", "2", "--timeout", "300", "--json", json_path)
    _wait_for_marks(folder, "*.importing", 1, proc.pid)  # discovery: the hang at import holds it there
    os.killpg(proc.pid, signal.SIGINT)
    code, stdout, stderr = _finish(proc, timeout=60)
    assert code == 130 and "Traceback" not in stderr and "interrupted" in stderr, stdout + stderr
    _no_survivors(proc.pid)
    (target,) = json.loads(json_path.read_text())["targets"]  # the folder, not yet split in targets
    assert target["status"] == "error" and target["error"].startswith("interrupted (SIGINT)")


# -- report files --------------------------------------------------------------------------------


def _run(*args: object, cwd: Path = REPO) -> tuple[int, str, str]:
    proc = _start("run", *args, cwd=cwd)
    code, out, err = _finish(proc)
    if LINUX:
        _no_survivors(proc.pid)
    return code, out, err


def test_a_report_is_written_through_a_symlink_which_stays(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    code, _, err = _run(SAMPLES / "prelu.py", "--quiet", "--json", link)
    assert code == 0, err
    assert link.is_symlink() and json.loads(real.read_text())["summary"]["failed"] == 0


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_is_reported_and_the_other_report_still_written(tmp_path):
    junit = tmp_path / "r.xml"
    code, _, err = _run(SAMPLES / "prelu.py", "--quiet", "--json", "/dev/full", "--junit", junit)
    assert code == 2 and "No space left on device" in err, err
    assert ET.parse(junit).getroot().tag == "testsuites"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode), "the device is written to, never replaced"


def test_a_failed_run_keeps_status_1_when_a_report_cannot_be_written(tmp_path):
    layer = TESTS / "hostile_gate" / "matrix_output.py"
    code, _, err = _run(layer, "--quiet", "--json", "/dev/full")
    assert code == 1 and "No space left on device" in err


def test_a_device_report_is_written_to_the_device(tmp_path):
    code, out, err = _run(SAMPLES / "prelu.py", "--quiet", "--json", "/dev/stdout")
    assert code == 0, err
    assert '"version": "1.0"' in out


@pytest.mark.skipif(not hasattr(os, "umask"), reason="POSIX modes")
def test_reports_honour_the_umask(tmp_path):
    env = {**os.environ}
    proc = subprocess.run(
        [sys.executable, "-c", "import os, sys, runpy; os.umask(0o022); sys.argv = ['layercheck'] + sys.argv[1:]; "
         "runpy.run_module('layercheck', run_name='__main__')",
         "run", str(SAMPLES / "prelu.py"), "--quiet", "--json", str(tmp_path / "r.json"), "--junit", str(tmp_path / "r.xml")],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    for name in ("r.json", "r.xml"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o644


@pytest.mark.parametrize(
    "make_path, needle",
    [
        (lambda tmp: tmp / "a_file" / "r.json", "Not a directory"),
        (lambda tmp: tmp, "directory"),
    ],
    ids=["below-a-file", "a-folder"],
)
def test_an_unwritable_report_path_is_refused_before_anything_runs(tmp_path, make_path, needle):
    (tmp_path / "a_file").write_text("")
    code, out, err = _run(SAMPLES / "prelu.py", "--json", make_path(tmp_path))
    assert code == 2 and out == "" and err.count("\n") == 1 and needle in err, err


def test_json_and_junit_on_one_file_are_refused(tmp_path):
    code, out, err = _run(SAMPLES / "prelu.py", "--json", tmp_path / "r", "--junit", tmp_path / "." / "r")
    assert code == 2 and out == "" and "the same file" in err, err
    assert not (tmp_path / "r").exists()


@pytest.mark.skipif(not LINUX, reason="file names of arbitrary bytes")
def test_a_file_name_that_is_not_utf8_reaches_every_report(tmp_path):
    folder = tmp_path / "layers"
    folder.mkdir()
    name = os.fsdecode(b"l\xff.py")
    (folder / name).write_text((SAMPLES / "prelu.py").read_text())
    json_path, junit_path = tmp_path / "r.json", tmp_path / "r.xml"
    code, out, err = _run(folder, "--json", json_path, "--junit", junit_path)
    assert code == 0 and "Traceback" not in err, out + err
    (target,) = json.loads(json_path.read_text())["targets"]
    assert "l\\xff.py" in target["target"] and target["status"] == "passed"
    assert [s.get("name") for s in ET.parse(junit_path).getroot()] == [target["target"]]


# -- the API, in-process -------------------------------------------------------------------------


class _Chdir:
    def predict(self, X):
        os.chdir(os.sep)
        return 2 * X


class _RaisesKeyboardInterrupt:
    def predict(self, X):
        raise KeyboardInterrupt


class _Escape(BaseException):
    pass


class _RaisesBaseException:
    def predict(self, X):
        raise _Escape("out")


class _BaseExceptionInInit:
    def __init__(self):
        raise _Escape("in __init__")

    def predict(self, X):
        return X


class _ReprRaises:
    def __repr__(self):
        raise RuntimeError("repr")


class _ReturnsReprRaises:
    def predict(self, X):
        return _ReprRaises()


class _StrRaisesError(Exception):
    def __str__(self):
        raise RuntimeError("str")


class _RaisesStrRaises:
    def predict(self, X):
        raise _StrRaisesError()


def test_the_api_restores_the_callers_working_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    report = layercheck.check_layer(_Chdir, "3,2:CB")
    assert os.getcwd() == str(tmp_path) and report.ok


@pytest.mark.parametrize(
    "layer, status, needle",
    [
        (_RaisesKeyboardInterrupt, "failed", "predict raised KeyboardInterrupt"),
        (_RaisesBaseException, "failed", "predict raised _Escape: out"),
        (_BaseExceptionInInit, "error", "constructing _BaseExceptionInInit raised _Escape: in __init__"),
        (_ReturnsReprRaises, "failed", "whose __repr__ raised RuntimeError"),
        (_RaisesStrRaises, "failed", "the exception's __str__ raised RuntimeError"),
    ],
)
def test_the_api_contains_what_a_layer_raises_and_never_passes_it(layer, status, needle):
    report = layercheck.check_layer(layer, "3,2:CB")
    assert report.status == status
    text = (report.error or "") + " ".join(c.message for c in report.checks)
    assert needle in text, text
    assert not [c for c in report.checks if "internal error" in c.message]
    with pytest.raises(AssertionError):
        report.raise_on_failure()


def test_a_ctrl_c_of_the_user_still_interrupts_the_api():
    code = (
        "import os, signal, threading, time, layercheck\n"
        "class Slow:\n"
        "    def predict(self, X):\n"
        "        time.sleep(0.05)\n"
        "        return X\n"
        "threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
        "try:\n"
        "    layercheck.check_layer(Slow, '3,2:CB')\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdout.strip() == "interrupted", proc.stdout + proc.stderr


def test_a_defect_of_layercheck_makes_the_target_an_error_asking_for_a_report(monkeypatch):
    import layercheck.checks.forward as forward

    # Raised from C (divmod called with the check's arguments), with no frame outside
    # layercheck: a defect of layercheck's own.
    monkeypatch.setattr(forward, "_nonfinite", functools.partial(divmod, 1, 0))
    report = layercheck.check_layer(lambda X: 2 * X, "3,2:CB")
    assert report.status == Status.ERROR
    assert "layercheck internal error: TypeError" in report.error and "please report" in report.error
    finite = report.result("outputs_are_finite")
    assert finite.status == Status.FAILED  # never incomplete, never passed
    with pytest.raises(AssertionError):
        report.raise_on_failure()


@pytest.mark.parametrize(
    "options",
    [
        {"seed": -1},
        {"input_domains": (float("-inf"), 1.0)},
        {"checks": ["outputs_are_finite"], "skip": ["outputs_are_finite"]},
    ],
)
def test_the_api_refuses_what_the_command_line_refuses(options):
    with pytest.raises(UsageError):
        layercheck.check_layer(lambda X: X, "3,2:CB", **options)


# -- bounded, exception-safe text ------------------------------------------------------------------


def test_bounded_text_says_how_long_it_was():
    text = bounded("x" * 100_000, 1_000)
    assert len(text) <= 1_000 and "99,000 of 100,000 characters cut" in text
    assert bounded("short") == "short"


def test_safe_text_survives_every_method_that_raises():
    class Hostile(Exception):
        def __str__(self):
            raise SystemExit(1)

        def __repr__(self):
            raise KeyboardInterrupt

    assert exception_text(Hostile()) == "Hostile (the exception's __str__ raised SystemExit)"
    assert safe_repr(Hostile()) == "<Hostile whose __repr__ raised KeyboardInterrupt>"
    assert safe_str(Hostile()) == "<Hostile whose __str__ raised SystemExit>"
    assert len(safe_repr(list(range(10**6)))) < 100
    assert len(safe_repr(np.zeros(10**6))) < 1_000


@pytest.mark.parametrize("module", ["tamper_write_count_hook.py", "tamper_write_count_replaced.py"])
def test_a_layer_that_blinds_the_write_count_still_fails_its_wrong_gradient(gate_run, module):
    # The look that finds the count blinded compares every function, and puts them back.
    _, _, _, report, _, _ = gate_run
    (target,) = [t for t in report["targets"] if _file_of(t["target"]) == module]
    gradients = [c for c in target["checks"] if c["name"] == "gradients_are_numerically_correct"]
    assert [c["status"] for c in gradients] == ["failed"]
    assert "off by a constant factor 3/2" in gradients[0]["message"]
