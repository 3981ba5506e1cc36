"""Worker processes: each job runs alone, under a timeout and a memory cap, and every way a
worker can end becomes a reason (DESIGN.md section 7).

A job is a picklable object with `timeout` and `run(emit)`; `run` executes in a fresh worker
and returns plain data, and `emit(kind, data)` sends progress on the way (the check that
starts, each result), so that a worker that hangs or dies still leaves what it found and
where it was.

Workers are forked from a forkserver that has imported layercheck and NumPy but no user
code: a start costs milliseconds, and nothing a user's module does (monkeypatching, global
RNG state, threads) reaches the next target. Where there is no forkserver (Windows) they are
spawned. The worker's stdout and stderr go to a file: the user's prints never interleave
with the report, and faulthandler writes the Python stack there when the worker crashes or,
asked with SIGUSR1 just before it is killed for its timeout, where it hung. Whatever
processes a worker starts end with it, and the forkserver with the parent (`reaping`).
"""

from __future__ import annotations

import ctypes
import faulthandler
import io
import multiprocessing
import os
import pickle
import signal
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from time import sleep  # bound before a layer could replace time.sleep (parent-side bookkeeping)
from typing import IO, Any, Protocol

from layercheck.clock import monotonic
from layercheck.contract import calls
from layercheck.interrupts import Interrupted
from layercheck.machine import available_memory
from layercheck.safetext import TRACEBACK_LIMIT, bounded, exception_text, safe_repr
from layercheck.sandbox import reaping
from layercheck.sandbox.own import OWN_BUILTINS
from layercheck.userframes import user_stack

# Builtins resolved in the sandbox's own copy (`sandbox.own`): what a layer writes to
# `builtins` never reaches the code that looks for it.
__builtins__ = OWN_BUILTINS  # type: ignore[assignment]  # noqa: A001

__all__ = ["Job", "Outcome", "Watch", "default_memory_cap", "run_jobs", "signal_reason", "worker_sys_path"]

_DUMP_SIGNAL = getattr(signal, "SIGUSR1", None)
_DUMP_GRACE_S = 0.5  # time given to faulthandler to write the stack of a hung worker
# A worker ends itself this long after its timeout (faulthandler's watchdog thread, which needs
# no GIL): a hung worker dies even when the parent that should stop it was killed or stalls.
_SELF_TIMEOUT_GRACE_S = 2.0
_EXIT_GRACE_S = 1.0  # time given to a worker to exit after it has sent its result
_OUTPUT_TAIL = 20_000  # characters of a worker's output kept
_MAX_FILE_BYTES = 2**30  # a worker's files, its captured output included: a print loop cannot fill the disk
# The last message a worker sends: its result, or the job's own exception (a defect of layercheck).
_DONE, _RAISED = "done", "raised"
# Starting a worker waits for the forkserver to send its pid, which multiprocessing waits for
# without a limit: a forkserver that a layer stopped (SIGSTOP) would hang the run. Past this
# long it is killed (a start takes milliseconds; the forkserver's first one imports NumPy and
# layercheck, which a busy machine may take seconds for), and a new one is started.
_START_LIMIT_S = 60.0
_START_POLL_S = 0.05
# Said of a target whose worker could not be started, or ended, because the forkserver did.
_FORKSERVER_GONE = "layercheck's forkserver ended (a layer killed it?)"


class Job(Protocol):
    @property
    def timeout(self) -> float: ...

    def run(self, emit: Callable[[str, Any], None]) -> Any: ...


@dataclass
class Outcome:
    """How a job ended: its result, or why there is none."""

    result: Any = None
    events: list[tuple[str, Any]] = field(default_factory=list)  # what it emitted, in order
    failure: str | None = None  # set when the worker ended without a result
    stack: str = ""  # the user's frames where it hung or crashed (faulthandler), if known
    output: str = ""  # the tail of the worker's stdout and stderr
    duration_s: float = 0.0
    interrupted: bool = False  # the user stopped the run (SIGINT, SIGTERM) before the job ended
    stopped_early: bool = False  # `run_jobs`' `stop` ended the run before the job ended (-x)
    timed_out: bool = False
    # At a timeout: how long the call of the layer under way had run (None: none was under
    # way; layercheck's own code was running, between calls), and how long the calls that
    # had ended took in all, and how many they were. `contract.calls`.
    user_call_s: float | None = None
    user_calls_s: float = 0.0
    user_calls: int = 0
    clock_garbled: bool = False  # the layer overwrote that clock: whose time it was is unknown

    @property
    def ok(self) -> bool:
        return self.failure is None


@dataclass(frozen=True)
class Watch:
    """`call(index, seconds, events)` for each job still running after `every_s` seconds, and
    again every `every_s` seconds while it runs: `seconds` is that multiple of `every_s` (it
    has run at least so long), `events` what it has emitted so far."""

    every_s: float
    call: Callable[[int, float, Sequence[tuple[str, Any]]], None]


def default_memory_cap(workers: int) -> int | None:
    """Each of `workers` parallel workers may allocate its share of the memory available now
    (at least 1 GiB)."""
    available = available_memory()
    return None if available is None else max(available // max(workers, 1), 2**30)


def run_jobs(
    jobs: Sequence[Job],
    workers: int = 1,
    max_memory: int | None = None,
    on_done: Callable[[int, Outcome], None] | None = None,
    stop: Callable[[], bool] | None = None,
    watch: Watch | None = None,
) -> list[Outcome]:
    """Run every job in its own worker process, at most `workers` at a time.

    Returns the outcomes in the order of `jobs`; `on_done(index, outcome)` is called as each
    one ends (in completion order). Never raises for what a job does.

    `stop()` is asked after outcomes are handed on: once true, no job is started, the workers
    still running are stopped (one that had sent its result keeps it), and each job that did
    not end gets an outcome that says `stopped_early`. `watch` is told of jobs that run long.

    Raises:
        Interrupted: the user's SIGINT or SIGTERM (`layercheck.interrupts.handling`): every
            worker and the forkserver are stopped first, and `on_done` has been called for
            every job, those that did not end with an outcome that says `interrupted`.
    """
    context = _context()
    outcomes: list[Outcome | None] = [None] * len(jobs)
    pending = list(range(len(jobs)))[::-1]
    running: list[_Running] = []
    retried: set[int] = set()  # jobs whose worker died with the forkserver once: started again
    handed: set[int] = set()  # jobs whose outcome `on_done` has returned from

    def hand_on(index: int, outcome: Outcome) -> None:
        outcomes[index] = outcome
        if on_done is not None:
            on_done(index, outcome)
        handed.add(index)

    def stopping() -> bool:
        return stop is not None and stop()

    setting = _Setting(os.getcwd(), dict(os.environ), max_memory, worker_sys_path())
    with tempfile.TemporaryDirectory(prefix="layercheck-") as scratch:
        _start_forkserver(context, scratch)
        try:
            while pending or running:
                if stopping():
                    _stop_early(running, pending, hand_on)
                    running, pending = [], []
                    break
                while pending and len(running) < max(workers, 1) and not stopping():
                    index = pending.pop()
                    new = _start_worker(context, index, jobs[index], setting, Path(scratch))
                    if isinstance(new, _Running):
                        running.append(new)
                        continue
                    hand_on(index, new)  # none could be started: why, in one line
                if stopping():
                    continue
                _wait_any(running, watch)
                _resume_forkserver()  # stopped by a layer, it would not report how workers end
                # Every worker is polled (and its deadline enforced) before any outcome is
                # handed on: what `on_done` does (rendering a report) never delays a timeout.
                ended = []
                for worker in list(running):
                    outcome = worker.poll()
                    if outcome is not None:
                        running.remove(worker)
                        if worker.lost_forkserver and worker.index not in retried:
                            # Killed with the forkserver, most likely by another target's
                            # layer: checked again in a new worker. Its own layer would kill
                            # that forkserver too, and be told so.
                            retried.add(worker.index)
                            pending.append(worker.index)
                            continue
                        outcomes[worker.index] = outcome
                        ended.append((worker.index, outcome))
                if ended:  # what they left behind ends with them
                    spare = [worker.process.pid for worker in running]
                    reaping.sweep_forkserver(spare=spare)
                    reaping.sweep_adopted(spare=spare)  # orphans of a forkserver a layer killed
                for index, outcome in ended:
                    hand_on(index, outcome)
                if watch is not None:  # after the deadlines, as handing on: it prints
                    _tell_watch(running, watch)
        except Interrupted as exc:
            # The signal may have come while an ended job was being handed on (or before it
            # was): it is handed on now, whole, so that no finished target goes missing.
            for index, outcome in enumerate(outcomes):
                if outcome is not None and index not in handed:
                    hand_on(index, outcome)
            # A worker that had sent its result before the signal came has finished: its
            # target is reported as checked, not as interrupted.
            _hand_on_reported(running, hand_on)
            _stop(running)
            started = {worker.index: worker for worker in running}
            running = []
            _stop_forkserver()
            name = signal.Signals(exc.signum).name
            for index in range(len(jobs)):
                if outcomes[index] is None:
                    stopped = started.get(index)
                    outcome = Outcome(
                        events=stopped.events if stopped is not None else [],
                        failure=f"interrupted ({name})",
                        duration_s=monotonic() - stopped.started if stopped is not None else 0.0,
                        interrupted=True,
                    )
                    hand_on(index, outcome)
            raise
        finally:
            _stop(running)  # whatever else ends the run early: leave no worker behind
            _resume_forkserver()
            reaping.sweep_forkserver()
            reaping.sweep_adopted()
    return outcomes  # type: ignore[return-value]


def _hand_on_reported(running: list[_Running], hand_on: Callable[[int, Outcome], None]) -> None:
    """Hand on the outcome of each worker that had sent its result (it has finished, whatever
    stops the run now), and take it out of `running`."""
    for worker in list(running):
        outcome = worker.reported()
        if outcome is not None:
            running.remove(worker)
            hand_on(worker.index, outcome)


def _stop_early(running: list[_Running], pending: list[int], hand_on: Callable[[int, Outcome], None]) -> None:
    """`run_jobs`' `stop` came true: a worker that had sent its result has finished (its
    outcome is handed on as it is); the others are stopped, and they and the jobs never
    started are handed on as `stopped_early`."""
    _hand_on_reported(running, hand_on)
    _stop(running)
    for worker in running:
        hand_on(
            worker.index,
            Outcome(
                events=worker.events,
                failure="stopped before it finished",
                duration_s=monotonic() - worker.started,
                stopped_early=True,
            ),
        )
    for index in sorted(pending):
        hand_on(index, Outcome(failure="not started", stopped_early=True))


def _tell_watch(running: list[_Running], watch: Watch) -> None:
    """Tell `watch` of each worker that has run past its next multiple of `watch.every_s`
    (not of one past its deadline: it is being stopped, and will say so)."""
    now = monotonic()
    for worker in running:
        told = worker.watched
        while worker.started + (worker.watched + 1) * watch.every_s <= now:
            worker.watched += 1
        if worker.watched > told and worker.kill_at is None:
            watch.call(worker.index, worker.watched * watch.every_s, list(worker.events))


def _start_worker(context: Any, index: int, job: Job, setting: _Setting, scratch: Path) -> _Running | Outcome:
    """A worker running `job`, or, when none could be started, the outcome that says why.

    A layer may kill or stop the forkserver (from its module, or from a `multiprocessing.util.Finalize`
    that runs as its worker exits): the start then fails, or would wait forever. A dead or
    hung forkserver is replaced by a new one and the start tried once more; every other
    target is still checked.
    """
    failure = ""
    for _ in range(2):
        _replace_forkserver_if_gone(context, str(scratch))
        begun = monotonic()
        try:
            return _Running.start(context, index, job, setting, scratch)
        except (OSError, EOFError) as exc:
            gone = context.get_start_method() == "forkserver" and not _forkserver_alive()
            failure = _FORKSERVER_GONE if gone else exception_text(exc)
        duration_s = monotonic() - begun
    return Outcome(failure=f"could not start a worker: {failure}", duration_s=duration_s)


def _current_forkserver() -> int | None:
    """The pid of this process's forkserver, where one was started (multiprocessing's private
    state, the same since Python 3.4)."""
    try:
        from multiprocessing import forkserver
    except ImportError:  # Windows: workers are spawned
        return None
    pid = getattr(forkserver._forkserver, "_forkserver_pid", None)
    return pid if isinstance(pid, int) else None


def _forkserver_alive(pid: int | None = None) -> bool:
    """Whether the forkserver `pid` (by default the current one) still runs. It is this
    process's child, reaped only by `_replace_forkserver_if_gone`: until then its pid is not
    given to another process, and a dead one is a zombie."""
    pid = _current_forkserver() if pid is None else pid
    if pid is None or not sys.platform.startswith("linux"):
        return True  # nothing to tell: where there is no /proc, a start that fails says so
    return reaping.process_state(pid) not in (None, "Z", "X")


def _resume_forkserver() -> None:
    """Let a forkserver that a layer stopped (SIGSTOP) go on: a stopped one neither forks
    workers nor reports how they ended. Those it forked run on meanwhile."""
    pid = _current_forkserver()
    if pid is not None and reaping.process_state(pid) == "T":
        try:
            os.kill(pid, signal.SIGCONT)
        except OSError:
            pass


def _replace_forkserver_if_gone(context: Any, scratch: str) -> None:
    """Reap a forkserver that died and start another, from the folder that holds no module
    (`_start_forkserver`); multiprocessing would start it from the user's folder."""
    pid = _current_forkserver()
    if pid is None or _forkserver_alive(pid):
        return
    _stop_forkserver()
    _start_forkserver(context, scratch)


def _start_watched(process: Any) -> None:
    """`process.start()`, with the forkserver watched meanwhile: resumed if a layer stopped
    it, killed past `_START_LIMIT_S` (the start then fails with EOFError, as it does when a
    layer killed the forkserver)."""
    pid = _current_forkserver()
    if pid is None or not sys.platform.startswith("linux"):
        process.start()
        return
    done = threading.Event()

    def watch() -> None:
        limit = monotonic() + _START_LIMIT_S
        while not done.wait(_START_POLL_S):
            if reaping.process_state(pid) == "T":
                _resume_forkserver()
            elif monotonic() >= limit:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
                return

    watcher = threading.Thread(target=watch, name="layercheck-start-watch", daemon=True)
    watcher.start()
    try:
        process.start()
    finally:
        done.set()
        watcher.join()


def _stop(running: list[_Running]) -> None:
    """Kill every worker first, then reap them: a second each would add up."""
    for worker in running:
        worker.signal(signal.SIGKILL if hasattr(signal, "SIGKILL") else signal.SIGTERM)
    for worker in running:
        worker.kill()


def _stop_forkserver() -> None:
    """Stop the forkserver now rather than when this process exits (it would on its own then,
    but an interrupted run should leave nothing behind by the time it reports)."""
    from multiprocessing import forkserver

    server = forkserver._forkserver
    stop = getattr(server, "_stop", None)  # private; present since Python 3.8
    if stop is None:
        return
    pid = _current_forkserver()
    if pid is not None and reaping.process_state(pid) == "T":
        os.kill(pid, signal.SIGKILL)  # stopped by a layer, it would never see the pipe close
    try:
        stop()
    except (OSError, ValueError, ChildProcessError):
        # Half stopped: forget it all the same, so that the next start makes a new one.
        for name in ("_forkserver_pid", "_forkserver_alive_fd", "_forkserver_address"):
            setattr(server, name, None)


# -- the parent's side -------------------------------------------------------------------


@dataclass(frozen=True)
class _Setting:
    cwd: str
    env: dict[str, str]
    max_memory: int | None
    sys_path: list[str]


def worker_sys_path(path: Sequence[str] | None = None, cwd: str | None = None) -> list[str]:
    """The import path of a worker: this process's, with the working folder that Python put
    first (`python -m` and `-c` do; `''` or its absolute path) moved to the end.

    A user's working folder may hold `yaml.py`, `numpy.py` or a `layercheck/` of their own:
    first on the path they would replace the installed packages in every lazy import. Last,
    a module of the user's there (a helper their layer imports) is still found. An entry the
    user put there on purpose, through PYTHONPATH, keeps its place.
    """
    path = list(sys.path if path is None else path)
    cwd = os.getcwd() if cwd is None else cwd
    chosen = {os.path.realpath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    if path and path[0] in ("", cwd) and os.path.realpath(path[0] or cwd) not in chosen:
        path = path[1:]
    path = [p for p in path if p != ""]
    return path if cwd in path else [*path, cwd]


def _context() -> Any:  # a multiprocessing context (its classes are private to multiprocessing)
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        # The forkserver imports layercheck once; every worker is forked with it loaded. The
        # CLI too: multiprocessing re-runs the parent's main script in each worker, and for
        # the `layercheck` console script that is cheap only when its imports are loaded.
        # The last one makes it a subreaper that leaves no process behind (`reaping`).
        context.set_forkserver_preload(["layercheck.cli", "layercheck.forkserver_preload"])
        return context
    return multiprocessing.get_context("spawn")


def _start_forkserver(context: Any, folder: str) -> None:
    """Start the forkserver (if it is the start method) with `folder`, which holds no module,
    as its working folder.

    multiprocessing starts it as `python -c ...`, which puts `''`, the working folder, first on
    its sys.path (and on Python 3.10 and 3.11 keeps it there while it imports layercheck): from
    the user's folder, a `layercheck/` or `yaml.py` there would be imported instead of the
    installed package, and a stray `layercheck.py` executed. The forkserver keeps this folder;
    each worker goes to the user's working folder (`_worker_main`).
    """
    if context.get_start_method() != "forkserver":
        return
    from multiprocessing import forkserver

    _short_socket_folder()
    here = os.getcwd()
    os.chdir(folder)
    try:
        forkserver.ensure_running()
    finally:
        os.chdir(here)


# The forkserver listens on a socket in a folder made below TMPDIR (`pymp-` and 8 random
# characters, tempfile's), named `listener-` and 8 more; an AF_UNIX address holds at most 107
# bytes (103 on macOS): a long TMPDIR (a CI runner's or a test runner's folder, macOS's
# /var/folders/...) fails with "AF_UNIX path too long". Where it would, multiprocessing's
# folder is made in a short system folder instead.
_SOCKET_ADDRESS_MAX = 103
_RANDOM_CHARACTERS = 8  # of a name tempfile makes
_SOCKET_BELOW_TMPDIR = len("/pymp-") + _RANDOM_CHARACTERS + len("/listener-") + _RANDOM_CHARACTERS
_SHORT_FOLDERS = ("/tmp", "/var/tmp", "/usr/tmp")


def _short_socket_folder() -> None:
    """Make multiprocessing's folder (`multiprocessing.util.get_temp_dir`, made once a process)
    in the first of `_SHORT_FOLDERS` that is writable when TMPDIR is too long for the socket."""
    from multiprocessing import process, util

    config = getattr(process.current_process(), "_config", {})
    if config.get("tempdir") is not None:  # made already: the forkserver's socket is there
        return
    if len(os.fsencode(tempfile.gettempdir())) + _SOCKET_BELOW_TMPDIR <= _SOCKET_ADDRESS_MAX:
        return
    for folder in _SHORT_FOLDERS:
        if os.path.isdir(folder) and os.access(folder, os.W_OK | os.X_OK):
            before, tempfile.tempdir = tempfile.tempdir, folder
            try:
                util.get_temp_dir()
            finally:
                tempfile.tempdir = before
            return


class _Running:
    """One worker process and what it has sent so far."""

    def __init__(
        self,
        index: int,
        job: Job,
        process: Any,
        conn: Connection,
        output_path: Path,
        clock: Any = None,
        spent: Any = None,
    ) -> None:
        self.index, self.job, self.process, self.conn, self.output_path = index, job, process, conn, output_path
        self.forkserver = _current_forkserver()  # the worker dies with it (`reaping.enter_worker`)
        self.lost_forkserver = False
        self.clock = clock  # the shared start of the layer's call under way (0: none): contract.calls
        self.spent = spent  # the shared seconds its calls that ended took in all, and how many
        self.started = monotonic()
        self.deadline = self.started + job.timeout
        self.kill_at: float | None = None  # set once the stack dump of a hung worker is asked
        self.events: list[tuple[str, Any]] = []
        self.result: Any = None
        self.failed: str | None = None
        self.failed_traceback = ""
        self.finished = False
        self.eof = False
        self.user_call_s: float | None = None  # read when the deadline passes
        self.user_calls_s = 0.0
        self.user_calls = 0
        self.clock_garbled = False  # the shared clock held no time a call could have started at
        self.timed_out = False
        self.watched = 0  # how many multiples of `Watch.every_s` it has been told of

    @classmethod
    def start(cls, context: Any, index: int, job: Job, setting: _Setting, scratch: Path) -> _Running:
        output_path = scratch / f"worker-{index}.out"
        parent_conn, child_conn = context.Pipe(duplex=False)
        clock = context.Value("d", 0.0, lock=False)  # contract.calls: when the layer's call under way began
        spent = context.Array("d", 2, lock=False)  # and how long its calls that ended took, how many
        process = context.Process(
            target=_worker_main,
            args=(child_conn, job, setting, str(output_path), clock, spent),
            name=f"layercheck-worker-{index}",
        )
        try:
            _start_watched(process)
        except BaseException:
            parent_conn.close()
            raise
        finally:
            child_conn.close()  # the parent keeps no write end, so it sees EOF when the worker dies
        return cls(index, job, process, parent_conn, output_path, clock, spent)

    def wake_at(self) -> float:
        return self.kill_at if self.kill_at is not None else self.deadline

    def poll(self) -> Outcome | None:
        """The outcome once the worker has ended (or been ended), else None."""
        self._drain()
        if not (self.finished or self.eof or not self.process.is_alive()):
            return self._check_deadline()
        self.process.join(_EXIT_GRACE_S)
        self._drain()  # what it sent just before it died
        if self.finished:
            self.kill()  # it has reported; whatever it still does on its way out is moot
            return self._outcome(self.failed)
        if self.kill_at is not None or monotonic() >= self.deadline:
            # Past its deadline: it died of the stack-dump signal, or ended itself (the
            # worker's own watchdog, when this process was too slow to stop it).
            self.kill()
            return self._outcome(self._timed_out())
        return self._outcome(self._death_reason())

    def reported(self) -> Outcome | None:
        """The outcome if the worker has sent its result (whatever it does now), else None;
        never waits."""
        self._drain()
        if not self.finished or self.failed is not None:
            return None
        self.kill()
        return self._outcome(None)

    def _check_deadline(self) -> Outcome | None:
        now = monotonic()
        if now >= self.deadline and self.kill_at is None:
            self._read_clock(now)
            self._ask_for_stack()
            self.kill_at = now + _DUMP_GRACE_S
        elif self.kill_at is not None and now >= self.kill_at:
            self.kill()
            return self._outcome(self._timed_out())
        return None

    def _timed_out(self) -> str:
        self.timed_out = True
        if self.kill_at is None:  # ended itself (its own watchdog) before this process asked
            self._read_clock(monotonic())
        return f"timed out after {self.job.timeout:g} s"

    def _read_clock(self, now: float) -> None:
        started = float(self.clock.value) if self.clock is not None else 0.0
        spent, count = (float(v) for v in self.spent[:]) if self.spent is not None else (0.0, 0.0)
        # The worker writes this clock, and so can the layer in it: a start that is neither 0
        # (no call under way) nor a moment of this worker's life (NaN, infinite, in the future),
        # or calls that took longer in all than the worker has lived, say nothing about whose
        # time it was.
        self.user_call_s = now - started if self.started <= started <= now else None
        spent_ok = 0 <= spent <= now - self.started and 0 <= count < 2**53 and count == int(count)
        self.user_calls_s = spent if spent_ok else 0.0
        self.user_calls = int(count) if spent_ok else 0
        self.clock_garbled = (started != 0 and self.user_call_s is None) or not spent_ok

    def _drain(self) -> None:
        while not self.eof and not self.finished:
            try:
                if not self.conn.poll():
                    return
                message = self.conn.recv_bytes()
            except (EOFError, OSError):
                self.eof = True
                return
            except Exception:  # a message cut short by the worker's death
                self.eof = True
                return
            try:
                kind, data = _read_message(message)
            except _Unreadable as exc:
                # Written by the layer (layercheck's own messages always read): no result.
                self.failed, self.finished = f"the worker sent a message layercheck does not read ({exc})", True
                return
            if kind == _DONE:
                self.result, self.finished = data, True
            elif kind == _RAISED:  # the job raised: a defect of layercheck, not of the layer
                failed, failed_traceback = data if _is_pair_of_text(data) else (safe_repr(data), "")
                self.failed, self.failed_traceback = bounded(failed), bounded(failed_traceback, TRACEBACK_LIMIT)
                self.finished = True
            else:
                self.events.append((kind, data))

    def _ask_for_stack(self) -> None:
        if _DUMP_SIGNAL is not None:
            try:
                os.kill(self.process.pid, _DUMP_SIGNAL)
            except (OSError, TypeError):
                pass

    def _death_reason(self) -> str:
        if self._lost_forkserver():
            # Its exit status is lost with the forkserver (multiprocessing says 255).
            self.lost_forkserver = True
            return "the worker process ended with layercheck's forkserver, which a layer killed (or stopped for good)"
        code = self.process.exitcode
        if code is None:
            self.kill()
            return "the worker process stopped responding"
        if code < 0:
            return signal_reason(-code)
        return f"the worker process exited with status {code} before reporting (os._exit, or exit from native code)"

    def _lost_forkserver(self) -> bool:
        """Whether the forkserver this worker came from has ended (so has the worker then)."""
        if self.forkserver is None:
            return False
        if self.forkserver != _current_forkserver():
            return True  # replaced: it had died
        # multiprocessing says 255 when the forkserver closed the pipe it reports exits on; the
        # forkserver may not be a zombie yet then: it is given a moment.
        deadline = monotonic() + (_EXIT_GRACE_S if self.process.exitcode in (255, None) else 0.0)
        while _forkserver_alive(self.forkserver):
            if monotonic() >= deadline:
                return False
            sleep(0.01)
        return True

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
            # A forkserver that a layer stopped would never report the exit: multiprocessing
            # would wait for it in join, and again, without a limit, as this process exits.
            _resume_forkserver()
            self.process.join(_EXIT_GRACE_S)

    def signal(self, signum: int) -> None:
        try:
            if self.process.pid is not None and self.process.exitcode is None:
                os.kill(self.process.pid, signum)
        except (OSError, ValueError):
            pass

    def _outcome(self, failure: str | None) -> Outcome:
        self.conn.close()
        output = _read_tail(self.output_path)
        stack = ""
        if failure is not None:
            stack = self.failed_traceback or user_stack(_read_tail(_stack_path(self.output_path)))
        return Outcome(
            result=self.result if failure is None else None,
            events=self.events,
            failure=failure,
            stack=stack,
            output=output,
            duration_s=monotonic() - self.started,
            timed_out=self.timed_out,
            user_call_s=self.user_call_s if self.timed_out else None,
            user_calls_s=self.user_calls_s if self.timed_out else 0.0,
            user_calls=self.user_calls if self.timed_out else 0,
            clock_garbled=self.clock_garbled,
        )


class _Unreadable(Exception):
    """A worker's message that is not plain data, or not a (kind, data) pair."""


class _PlainData(pickle.Unpickler):
    """Reads what a worker sends, which holds only plain data (dicts, lists, tuples, strings,
    numbers, None: jobs return and emit nothing else). Unpickling a class or a function calls
    it, in this process, and the layer in the worker can write the bytes: any name is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise _Unreadable(f"it names {module}.{name}; a worker sends only plain data")


def _read_message(raw: bytes) -> tuple[str, Any]:
    try:
        # `load` read from the class, which the bytecode names: no `.load` of an unnamed object
        # that could be NumPy's (`sandbox.lookups`), so a layer's own `np.load` wrapper is its own.
        message = _PlainData.load(_PlainData(io.BytesIO(raw)))
    except _Unreadable:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the bytes make the unpickler raise
        raise _Unreadable(exception_text(exc)) from None
    if type(message) is not tuple or len(message) != 2 or type(message[0]) is not str:
        raise _Unreadable(f"{safe_repr(message, 80)} is not a (kind, data) pair")
    return message[0], message[1]


def _is_pair_of_text(data: Any) -> bool:
    return type(data) is tuple and len(data) == 2 and all(type(item) is str for item in data)


def _wait_any(running: list[_Running], watch: Watch | None = None) -> None:
    """Sleep until a worker sends something, ends, or reaches a deadline (or the next time
    `watch` is to be told of it)."""
    if not running:
        return
    wake = [w.wake_at() for w in running]
    if watch is not None:
        wake += [w.started + (w.watched + 1) * watch.every_s for w in running]
    timeout = max(0.0, min(wake) - monotonic())
    handles = [w.conn for w in running if not w.eof] + [w.process.sentinel for w in running]
    wait(handles, timeout=timeout)


def signal_reason(signum: int) -> str:
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    if name == "SIGKILL":
        # layercheck kills only workers past their timeout, and says so; this is the kernel.
        return "the worker process was killed (SIGKILL), most likely by the kernel because it ran out of memory"
    description = signal.strsignal(signum) if hasattr(signal, "strsignal") else None
    return f"the worker process died with signal {name}" + (f" ({description})" if description else "")


def _stack_path(output_path: Path | str) -> Path:
    """faulthandler writes to a file of its own, so that a full output file cannot stop it."""
    return Path(f"{output_path}.stack")


def _read_tail(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - _OUTPUT_TAIL))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


# -- the worker's side -------------------------------------------------------------------


def _worker_main(
    conn: Connection, job: Job, setting: _Setting, output_path: str, clock: Any = None, spent: Any = None
) -> None:
    reaping.enter_worker()  # nothing the layer starts may outlive its target (`reaping`)
    # A terminal's Ctrl-C reaches the whole process group; the parent stops the workers
    # itself, so that here a KeyboardInterrupt is always the layer's own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stacks = _capture_output(output_path)
    faulthandler.dump_traceback_later(job.timeout + _SELF_TIMEOUT_GRACE_S, exit=True, file=stacks)
    _cap_memory(setting.max_memory)
    _reuse_freed_memory()
    sys.path[:] = setting.sys_path  # before anything else is imported: see worker_sys_path
    # A process started by the forkserver takes its start method as its own default; the
    # layer's code gets the platform's, as under plain `python` (a process pool in predict,
    # with a function of the layer's module, forked where the platform forks).
    multiprocessing.set_start_method(None, force=True)
    try:
        os.chdir(setting.cwd)
    except OSError:
        pass
    os.environ.clear()
    os.environ.update(setting.env)

    calls.install(clock, spent)

    def emit(kind: str, data: Any = None) -> None:
        conn.send((kind, data))

    try:
        result = job.run(emit)
    except BaseException as exc:  # noqa: BLE001 - jobs report the user's errors themselves
        message = f"layercheck internal error in the worker: {exception_text(exc)}"
        emit(_RAISED, (message, bounded(traceback.format_exc(), TRACEBACK_LIMIT)))
    else:
        emit(_DONE, result)
    conn.close()


def _capture_output(path: str) -> IO[str]:
    """The worker's fds 1 and 2 (so C-level output too) go to a file, and faulthandler's stacks
    to another; no file the worker writes may grow past _MAX_FILE_BYTES (a write beyond fails
    with OSError instead of raising SIGXFSZ)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)  # a TextIOWrapper's; not every stream's
        if reconfigure is not None:
            try:
                reconfigure(line_buffering=True)
            except ValueError:
                pass
    stacks = open(_stack_path(path), "w", encoding="utf-8")  # open for the worker's lifetime
    faulthandler.enable(file=stacks, all_threads=True)
    if _DUMP_SIGNAL is not None:
        faulthandler.register(_DUMP_SIGNAL, file=stacks, all_threads=True)
    try:
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        limit = _MAX_FILE_BYTES if hard == resource.RLIM_INFINITY else min(_MAX_FILE_BYTES, hard)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    except (ImportError, AttributeError, ValueError, OSError):  # Windows; a lower limit set already
        pass
    return stacks


def _cap_memory(limit: int | None) -> None:
    """Cap the worker's memory so that a runaway allocation is a MemoryError, not swapping.

    Linux only: RLIMIT_DATA counts what the worker allocates (heap and private mappings) but
    not address space merely reserved, which CUDA reserves by the terabyte (RLIMIT_AS would
    break it); macOS enforces neither. The cap is `limit` beyond what the fresh worker already
    holds (NumPy's thread buffers grow with the number of cores), so it means the same on
    every machine.
    """
    if limit is None or not sys.platform.startswith("linux"):
        return
    import resource

    try:
        _, hard = resource.getrlimit(resource.RLIMIT_DATA)
        soft = _held() + limit
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))
    except (ValueError, OSError):
        pass


def _reuse_freed_memory() -> None:
    """Keep arrays of up to 32 MB in the heap, and the heap from shrinking, so that memory
    freed is used again instead of returned and faulted in afresh (glibc).

    A check allocates and frees dozens of arrays of its outputs' size; with glibc's defaults
    each comes back from the kernel as fresh pages, zeroed on first touch: a quarter of the
    time of a gradient check at 12 MB arrays. The worker lives for one target, so nothing is
    lost by keeping what it freed; its peak is unchanged. Elsewhere, nothing to do."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return
    m_trim_threshold, m_mmap_threshold = -1, -3
    mallopt(m_mmap_threshold, 32 * 2**20)  # glibc's largest
    mallopt(m_trim_threshold, 2**30)


def _held() -> int:
    """Bytes of data the process holds now, as RLIMIT_DATA counts them (0 where unknown)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0
