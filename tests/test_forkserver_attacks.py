"""Layers that attack layercheck's forkserver (issue 27): kill it at import, kill it from a
`multiprocessing.util.Finalize` as their worker exits, stop it (SIGSTOP). Every target is
still reported, in the console, the JSON and the JUnit report; the run ends in bounded time;
nothing a layer started outlives it. Linux only: elsewhere there is no forkserver to attack.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from layercheck.sandbox import isolation, reaping
from layercheck.sandbox.isolation import run_jobs

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forkserver, /proc and prctl: Linux")

PIDS = "LAYERCHECK_GATE_PIDS"  # the folder where the layers record the pids they start

_RECORD = """
import os
def _record(pid, what):
    folder = os.environ.get("LAYERCHECK_GATE_PIDS")
    if folder:
        with open(os.path.join(folder, str(pid)), "w") as f:
            f.write(what)
def _daemon(seconds):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            _record(os.getpid(), "daemon forked twice")
            os.execvp("sleep", ["sleep", str(seconds)])
        os._exit(0)
"""

_CLASS = """
class Good:
    example_layout = "4,3:CB"
    def predict(self, X):
        {predict}
        return 3 * X
    def backward(self, X, Z, dLdZ, memory):
        return 3 * dLdZ
"""

GOOD = _CLASS.format(predict="pass")

# p1: a daemon of each kind at import, then (once the daemon has recorded its pid, however
# slow the machine) the forkserver (the worker's parent) killed.
KILLS_AT_IMPORT = (
    _RECORD
    + """
import signal, subprocess, time
child = subprocess.Popen(["sleep", "321"], start_new_session=True)
_record(child.pid, "sleep in a session of its own")
_daemon(322)
def _daemon_recorded():
    folder = os.environ.get("LAYERCHECK_GATE_PIDS")
    if not folder:
        return True
    for name in os.listdir(folder):
        try:
            with open(os.path.join(folder, name)) as f:
                if f.read() == "daemon forked twice":
                    return True
        except OSError:
            pass
    return False
deadline = time.monotonic() + 30
while not _daemon_recorded() and time.monotonic() < deadline:
    time.sleep(0.01)
os.kill(os.getppid(), signal.SIGKILL)
time.sleep(1)
"""
    + GOOD
)

# p3: a daemon in predict, and the forkserver killed as the worker exits, its result sent.
KILLS_IN_FINALIZER = (
    _RECORD
    + """
import signal
import multiprocessing.util
def _kill_forkserver():
    try:
        os.kill(os.getppid(), signal.SIGKILL)
    except OSError:
        pass
_armed = []
def _arm():
    if not _armed:
        _armed.append(True)
        _daemon(341)
        multiprocessing.util.Finalize(None, _kill_forkserver, exitpriority=100)
"""
    + _CLASS.format(predict="_arm()")
)

# p5: the forkserver stopped as the worker exits.
STOPS_IN_FINALIZER = (
    """
import os, signal
import multiprocessing.util
multiprocessing.util.Finalize(None, lambda: os.kill(os.getppid(), signal.SIGSTOP), exitpriority=100)
"""
    + GOOD
)

SLOW_GOOD = "import time\n" + _CLASS.format(predict="time.sleep(0.05)")


def _folder(tmp_path: Path, modules: dict[str, str]) -> Path:
    folder = tmp_path / "layers"
    folder.mkdir()
    for name, text in modules.items():
        (folder / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


def _run(tmp_path: Path, folder: Path, *options: str, limit: float = 120) -> tuple[int, str, float, Path]:
    """`python -m layercheck run FOLDER` with JSON and JUnit reports, in a session of its own;
    (exit status, stdout, seconds it took, folder of the pids its layers recorded). Nothing
    may survive it for more than 5 s."""
    pids = tmp_path / "pids"
    pids.mkdir()
    began = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "layercheck", "run", ".", *options]
        + ["--json", str(tmp_path / "r.json"), "--junit", str(tmp_path / "r.xml")],
        cwd=folder,  # the targets are named as in the folder
        env={**os.environ, PIDS: str(pids)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=limit)
    finally:
        if proc.poll() is None:  # a test that fails must not leave the run behind either
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    took = time.monotonic() - began
    _no_survivors(proc.pid, pids)
    return proc.returncode, out, took, pids


def _survivors(group: int, pids: Path) -> list[str]:
    """Live processes of the run: of its process group, holding its folder of pids in their
    environment, or with their pid recorded there."""
    marker = f"{PIDS}={pids}".encode()
    recorded = {name for name in os.listdir(pids) if name.isdigit()}
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
            fields = text[text.rindex(")") + 2 :].split()
            held = marker in (entry / "environ").read_bytes().split(b"\0")
        except OSError:  # ended meanwhile, or another user's
            continue
        if fields[0] not in ("Z", "X") and (int(fields[2]) == group or entry.name in recorded or held):
            found.append(f"{entry.name} {text[:80]}")
    return found


def _no_survivors(group: int, pids: Path, within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while (alive := _survivors(group, pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for name in alive:  # leave nothing behind, then fail
        try:
            os.kill(int(name.split()[0]), signal.SIGKILL)
        except OSError:
            pass
    assert alive == [], f"processes outlived the run: {alive}"


def _reports(tmp_path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Status by target in the JSON report, and in the JUnit report (`passed` or `error`)."""
    targets = json.loads((tmp_path / "r.json").read_text())["targets"]
    in_json = {t["target"].partition(":")[0]: t["status"] for t in targets}
    in_junit = {}
    for suite in ET.parse(tmp_path / "r.xml").getroot().iter("testsuite"):
        name = suite.get("name", "").partition(":")[0]
        in_junit[name] = "error" if int(suite.get("errors", "0")) else "passed"
    return in_json, in_junit


def test_a_layer_that_kills_the_forkserver_at_import_is_an_error_and_its_daemons_end(tmp_path):
    folder = _folder(tmp_path, {"kills.py": KILLS_AT_IMPORT, "good.py": GOOD})
    # One worker at a time: in parallel, the other target's worker would die with the
    # forkserver too, and (checked again once) might again, on a slow machine.
    status, out, took, pids = _run(tmp_path, folder, "--jobs", "1", "--timeout", "60")
    assert status == 1, out
    assert len(list(pids.iterdir())) >= 2, out  # its processes did start
    assert "forkserver, which a layer killed" in out, out
    assert "exited with status 255" not in out, out  # multiprocessing's stand-in, not the truth
    assert "PASSED good.py:Good" in out and "Targets: 1 passed, 0 failed, 1 could not be checked." in out, out
    assert _reports(tmp_path) == ({"kills.py": "error", "good.py": "passed"},) * 2


@pytest.mark.parametrize("attempt", [1, 2])  # whether the forkserver dies before the next start is a race
def test_a_layer_that_kills_the_forkserver_as_its_worker_exits_leaves_every_target_checked(tmp_path, attempt):
    modules = {"a_kills.py": KILLS_IN_FINALIZER, **{f"{c}_ok.py": SLOW_GOOD for c in "bcde"}}
    status, out, took, pids = _run(tmp_path, _folder(tmp_path, modules), "--jobs", "2", "--timeout", "60")
    assert list(pids.iterdir()), out  # the daemon did start
    # Its own result was sent before it killed the forkserver: that is its verdict. The
    # targets whose workers died with the forkserver are checked again.
    assert status == 0 and "Targets: 5 passed, 0 failed, 0 could not be checked." in out, out
    assert _reports(tmp_path) == ({name: "passed" for name in modules},) * 2


def test_a_layer_that_stops_the_forkserver_does_not_hang_the_run(tmp_path):
    modules = {"a_stops.py": STOPS_IN_FINALIZER, "b_ok.py": GOOD, "c_ok.py": GOOD}
    # No target hangs: a run the stopped forkserver held would pass 60 s (`_START_LIMIT_S`).
    status, out, took, _ = _run(tmp_path, _folder(tmp_path, modules), "--jobs", "1", "--timeout", "60", limit=90)
    assert status == 0 and "Targets: 3 passed, 0 failed, 0 could not be checked." in out, out
    assert took < 60, out
    assert _reports(tmp_path) == ({name: "passed" for name in modules},) * 2


def test_a_layer_that_stops_its_own_worker_is_ended_by_the_timeout(tmp_path):
    stops = "import os, signal\n" + _CLASS.format(predict="os.kill(os.getpid(), signal.SIGSTOP)")
    modules = {"stops_itself.py": stops, "good.py": GOOD}
    folder = _folder(tmp_path, modules)
    # 3 s for the layer that stops itself, a minute for good.py (a loaded machine may take
    # seconds for its checks): the config's entry for it.
    config = tmp_path / "timeouts.yaml"
    config.write_text(
        f"defaults:\n  timeout: 3\ntargets:\n  - target: {json.dumps(str(folder / 'good.py'))}\n    timeout: 60\n"
    )
    status, out, took, _ = _run(tmp_path, folder, "--jobs", "2", "--config", str(config), limit=90)
    assert status == 1 and "stops_itself.py:Good - timed out after 3 s" in out, out
    assert _reports(tmp_path) == ({"stops_itself.py": "error", "good.py": "passed"},) * 2


def test_a_dead_forkserver_is_replaced_before_the_next_worker_starts():
    from isolation_jobs import Sleep

    first = run_jobs([Sleep(0, 1)])
    assert first[0].result == 1
    dead = isolation._current_forkserver()
    assert dead is not None
    os.kill(dead, signal.SIGKILL)
    while reaping.process_state(dead) not in ("Z", None):
        time.sleep(0.01)
    outcomes = run_jobs([Sleep(0, 2), Sleep(0, 3)], workers=2)
    assert [o.result for o in outcomes] == [2, 3], [o.failure for o in outcomes]
    assert isolation._current_forkserver() not in (None, dead)


def test_a_stopped_forkserver_is_resumed_before_the_next_worker_starts():
    from isolation_jobs import Sleep

    run_jobs([Sleep(0, 1)])
    server = isolation._current_forkserver()
    assert server is not None
    os.kill(server, signal.SIGSTOP)
    try:
        outcomes = run_jobs([Sleep(0, 2)])
    finally:
        os.kill(server, signal.SIGCONT)
    assert outcomes[0].result == 2, outcomes[0].failure
    assert isolation._current_forkserver() == server  # resumed, not replaced


def test_a_worker_that_cannot_be_started_is_an_outcome_that_says_why(monkeypatch):
    from isolation_jobs import Sleep

    def refuse(*args):
        raise EOFError("unexpected EOF")

    monkeypatch.setattr(isolation._Running, "start", classmethod(lambda cls, *args: refuse()))
    monkeypatch.setattr(isolation, "_forkserver_alive", lambda pid=None: False)
    monkeypatch.setattr(isolation, "_replace_forkserver_if_gone", lambda context, scratch: None)
    [outcome] = run_jobs([Sleep(0, 1)])
    assert outcome.failure == "could not start a worker: layercheck's forkserver ended (a layer killed it?)"


def test_a_process_that_did_not_adopt_orphans_sweeps_none():
    """The API's caller (here pytest) is a user's process: its children are its own."""
    child = subprocess.Popen(["sleep", "30"])
    try:
        assert reaping.sweep_adopted() == 0
        assert child.poll() is None
    finally:
        child.kill()
        child.wait()
