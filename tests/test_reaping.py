"""Processes a layer starts, however they leave their parent, end when layercheck sweeps
(layercheck.sandbox.reaping); what is not below the process swept is never touched."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import REPO

from layercheck.sandbox import reaping

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and prctl")

# A stand-in for a worker: it adopts orphans as a worker does, starts a plain child, one in a
# session of its own and a daemon forked twice that ignores SIGTERM, prints their pids, waits.
_WORKER = """
import os, signal, subprocess, sys, time
from layercheck.sandbox import reaping
reaping.enter_worker()
plain = subprocess.Popen(["sleep", "1000"]).pid
session = subprocess.Popen(["sleep", "1000"], start_new_session=True).pid
r, w = os.pipe()
middle = os.fork()
if middle == 0:
    os.setsid()
    if os.fork():
        os._exit(0)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.write(w, b"%d" % os.getpid())
    while True:
        time.sleep(1)
os.waitpid(middle, 0)
daemon = int(os.read(r, 32))
print(plain, session, daemon, flush=True)
time.sleep(1000)
"""


@pytest.fixture
def worker():
    proc = subprocess.Popen([sys.executable, "-c", _WORKER], cwd=REPO, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    plain, session, daemon = map(int, line.split())
    yield proc, {"plain": plain, "session": session, "daemon": daemon}
    reaping.sweep(proc.pid)
    proc.kill()
    proc.wait()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return False
    return text[text.rindex(")") + 2] not in "ZX"


def _wait_dead(pids: list[int], within: float = 5.0) -> list[int]:
    deadline = time.monotonic() + within
    while (alive := [pid for pid in pids if _alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


def test_a_sweep_kills_children_sessions_and_daemons_and_spares_the_parent(worker):
    proc, pids = worker
    assert all(_alive(pid) for pid in pids.values())
    assert reaping.sweep(proc.pid) == 3
    assert _wait_dead(list(pids.values())) == []
    assert proc.poll() is None


def test_a_sweep_spares_what_it_is_told_to(worker):
    proc, pids = worker
    assert reaping.sweep(proc.pid, spare={pids["plain"]}) == 2
    assert _wait_dead([pids["session"], pids["daemon"]]) == []
    assert _alive(pids["plain"])


def test_a_sweep_touches_nothing_when_the_parent_is_not_the_owners_child(worker):
    proc, pids = worker
    # The worker is this process's child; were its pid taken by another process, it would not be.
    assert reaping.sweep(proc.pid, owner=os.getppid()) == 0
    assert all(_alive(pid) for pid in pids.values())
    assert reaping.sweep(proc.pid, owner=os.getpid()) == 3


def test_a_sweep_goes_on_past_reads_that_missed_a_process(worker, monkeypatch):
    # The kernel's list of children may leave out a process while another moves in it: the
    # sweep must not take the first empty read for the end. Here each of the first reads
    # below the worker misses everything; the last misses nothing.
    proc, pids = worker
    misses = reaping._QUIET_ROUNDS - 1

    def missing(pid: int) -> list[int]:
        nonlocal misses
        if pid == proc.pid and misses:
            misses -= 1
            return []
        return reaping._children(pid)

    monkeypatch.setattr(reaping, "_children_reader", lambda: missing)
    assert reaping.sweep(proc.pid) == 3
    assert misses == 0
    assert _wait_dead(list(pids.values())) == []


def test_a_worker_dies_with_its_parent():
    worker = "from layercheck.sandbox import reaping; import time; reaping.enter_worker(); print(flush=True); time.sleep(1000)"
    code = (
        "import subprocess, sys\n"
        f"worker = subprocess.Popen([sys.executable, '-c', {worker!r}], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)\n"
        "worker.stdout.readline()  # it has entered\n"
        "print(worker.pid, flush=True)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    (worker_pid,) = map(int, out.stdout.split())  # its parent has exited: PR_SET_PDEATHSIG
    alive = _wait_dead([worker_pid])
    if alive:
        os.kill(worker_pid, signal.SIGKILL)
    assert alive == []


def test_preparing_the_forkserver_does_nothing_in_any_other_process():
    code = (
        "import ctypes\n"
        "from layercheck.sandbox import reaping\n"
        "reaping.prepare_forkserver()\n"
        "flag = ctypes.c_int(-1)\n"
        "ctypes.CDLL(None).prctl(37, ctypes.byref(flag), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER\n"
        "print(flag.value, reaping._forkserver_pid)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["0", "None"], out.stderr


def test_the_subreaper_flag_is_read_as_the_kernel_sets_it():
    # The lookalike of the test above: in a process that asks for it, the flag reads 1.
    code = (
        "import ctypes\n"
        "from layercheck.sandbox import reaping\n"
        "reaping.enter_worker()\n"
        "flag = ctypes.c_int(-1)\n"
        "ctypes.CDLL(None).prctl(37, ctypes.byref(flag), 0, 0, 0)\n"
        "print(flag.value)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["1"], out.stderr


# A stand-in for the forkserver, which adopts orphans and reaps every child, and below it a
# worker whose child forks and exits over and over.
_FORKSERVER = """
import ctypes, os, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
worker = subprocess.Popen([sys.executable, "-c", sys.argv[1]])
print(worker.pid, flush=True)
while True:
    try:
        os.waitpid(-1, 0)
    except ChildProcessError:
        time.sleep(0.05)
"""
_HOPPING_WORKER = """
import os, time
from layercheck.sandbox import reaping
reaping.enter_worker()
if os.fork() == 0:
    while True:
        if os.fork():
            os._exit(0)
time.sleep(1000)
"""


def test_a_worker_stops_adopting_before_ended_processes_pile_up_and_the_sweep_still_finds_them():
    forkserver = subprocess.Popen(
        [sys.executable, "-c", _FORKSERVER, _HOPPING_WORKER], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    try:
        worker = int(forkserver.stdout.readline())
        # It goes up: the worker stops adopting (else it would keep it below itself for ever) ...
        deadline = time.monotonic() + 30
        while reaping._children(forkserver.pid) == [worker]:
            assert time.monotonic() < deadline, reaping._dead_children(worker)
            time.sleep(0.1)
        # ... having held no more ended processes than the steps of one look past the limit.
        assert reaping._dead_children(worker) <= 2 * reaping._ADOPTED_DEAD_LIMIT
        assert reaping.sweep(forkserver.pid, spare={worker}) >= 1
        # A hop in flight when the sweep looked (forked, its parent not yet gone) comes up
        # after it: under load that is common, and the next sweep finds it. What must hold is
        # that sweeping ends the chain, not that one look saw every process of it.
        while reaping._children(forkserver.pid) != [worker]:
            assert time.monotonic() < deadline + 30, reaping._children(forkserver.pid)
            reaping.sweep(forkserver.pid, spare={worker})
            time.sleep(0.2)
    finally:
        reaping.sweep(forkserver.pid)
        forkserver.kill()
        forkserver.wait()
