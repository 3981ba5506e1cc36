"""No process a layer starts outlives its target, and none of layercheck's outlives the run
(DESIGN.md section 7).

A layer may start processes of its own: plain children, children in a session of their own
(`setsid`, `start_new_session=True`), daemons that fork twice, ignore SIGTERM and SIGHUP and
keep every file descriptor they inherited. Neither their process group nor their session
says where they came from; their ancestry does, as long as no ancestor dies. So, on Linux:

- the forkserver and every worker are *child subreapers*: a process whose parent dies is
  adopted by the nearest of them instead of by init. Whatever a layer starts stays below its
  worker while the worker runs (unless hundreds of adopted processes end there: then below
  the forkserver), and below the forkserver after the worker has ended;
- when a worker ends, however it ends (its result, a crash, its timeout), the parent kills
  everything below the forkserver that is not a running worker (`sweep`), and the
  forkserver, when it exits (the run is over, or the parent was killed), everything below
  itself;
- a worker closes, before any user code runs, the pipe whose end tells the forkserver that
  the parent died and the one that keeps the resource tracker alive: nothing a layer starts
  holds them, so both end as soon as the parent does;
- a worker dies with the forkserver (PR_SET_PDEATHSIG), whatever the layer did to the
  faulthandler watchdog that ends it past its timeout.
- a layer may kill the forkserver itself: the `layercheck` command is a subreaper too
  (`adopt_orphans`), so that what the forkserver would have adopted comes to it, and it kills
  every process below it but its forkserver, its resource tracker and its workers
  (`sweep_adopted`). A process that calls layercheck's API is the user's: it adopts nothing.

Elsewhere there is neither /proc nor prctl: a worker only closes those pipes, and the
processes a layer starts are not followed.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Collection, Iterable
from time import sleep  # bound before a layer could replace time.sleep
from types import FrameType
from typing import Any

from layercheck.sandbox.own import OWN_BUILTINS

# Builtins resolved in the sandbox's own copy (`sandbox.own`): what a layer writes to
# `builtins` never reaches the code that looks for it.
__builtins__ = OWN_BUILTINS  # type: ignore[assignment]  # noqa: A001

__all__ = [
    "adopt_orphans",
    "enter_worker",
    "in_forkserver",
    "prepare_forkserver",
    "process_state",
    "sweep",
    "sweep_adopted",
    "sweep_forkserver",
]

_LINUX = sys.platform.startswith("linux")
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36  # Linux 3.4
# A walk stops what it finds and the next looks for what they forked before they stopped:
# two or three find everything. The bound only guards against a /proc that changes under
# every read.
_ROUNDS = 50
# The kernel's list of a process's children may leave out one that moves while it is read
# (a process that exits hands its children to the subreaper): one read in 60 missed a process
# that forks and exits in a loop, two in a row 3 times in 2,000, three never in 8 s. A sweep
# ends only after this many walks in a row found nothing new.
_QUIET_ROUNDS = 4
# A worker stops adopting orphans once this many of them have ended unreaped in it
# (`_stop_adopting_past_limit`); it looks every _ADOPTION_CHECK_S seconds while they do not
# pile up, down to every _ADOPTION_FASTEST_S while they do.
_ADOPTED_DEAD_LIMIT = 200
_ADOPTION_CHECK_S = 0.2
_ADOPTION_FASTEST_S = 0.005

# The forkserver's pid, set in the forkserver (`prepare_forkserver`) and inherited by the
# workers it forks, which check that it is still their parent.
_forkserver_pid: int | None = None
# The pid of layercheck's own command (`adopt_orphans`), once it is a subreaper.
_adopter_pid: int | None = None
_RUNTIME_GLOBALS = ("_forkserver_pid", "_adopter_pid")  # set in the forkserver only: not watched (sandbox.integrity)


def sweep(parent: int, spare: Collection[int] = (), owner: int | None = None) -> int:
    """Kill every process below `parent` except those in `spare` and what is below them.

    With `owner`, only while `parent` is still a child of `owner`: the pid of a process that
    ended may be given to another, whose children are none of layercheck's business.

    Each process is stopped (SIGSTOP) as soon as it is found, before its children are read,
    and the walk is repeated until `_QUIET_ROUNDS` walks in a row find nothing new; then all
    are killed at once. A process stopped cannot fork; one that forks and exits over and over to change its pid is
    adopted by `parent` at every step, a subreaper, and found there on the next walk.

    Returns:
        How many live processes were killed (0 where there is no /proc).
    """
    if not _LINUX:
        return 0
    children = _children_reader()
    stopped: set[int] = set()
    quiet = 0
    for _ in range(_ROUNDS):
        if owner is not None and _parent(parent) != owner:
            break
        quiet = 0 if _stop_below(parent, children, set(spare), stopped) else quiet + 1
        if quiet == _QUIET_ROUNDS:
            break
    _signal(stopped, signal.SIGKILL)
    return len(stopped)


def sweep_forkserver(spare: Collection[int] = ()) -> int:
    """Kill what the workers that ended left behind: every process below this process's
    forkserver (a subreaper, which adopted them) but the running workers `spare` and theirs.

    Returns:
        How many processes were killed (0 where there is no forkserver running, or no /proc).
    """
    forkserver = _forkserver_module()
    pid = getattr(getattr(forkserver, "_forkserver", None), "_forkserver_pid", None)  # private
    return sweep(pid, spare, owner=os.getpid()) if isinstance(pid, int) else 0


def adopt_orphans() -> None:
    """Make the `layercheck` command's process a subreaper: what a layer leaves behind after
    killing the forkserver (which adopts it otherwise) comes here instead of to init, and is
    killed by `sweep_adopted`.

    For the command only: a user's process that calls layercheck's API must neither adopt
    nor kill its orphans.
    """
    global _adopter_pid
    if _LINUX and _prctl(_PR_SET_CHILD_SUBREAPER, 1):
        _adopter_pid = os.getpid()


def sweep_adopted(spare: Collection[int] = ()) -> int:
    """In the `layercheck` command (`adopt_orphans`), kill every process below it but `spare`
    (its forkserver, its resource tracker, running workers) and what is below them: the
    command starts no other process, so the rest were adopted.

    Returns:
        How many processes were killed (0 anywhere else).
    """
    if _adopter_pid is None or _adopter_pid != os.getpid():
        return 0
    from multiprocessing import resource_tracker

    tracker = getattr(resource_tracker._resource_tracker, "_pid", None)  # private since Python 3.8
    forkserver = getattr(getattr(_forkserver_module(), "_forkserver", None), "_forkserver_pid", None)
    keep = {*spare, *(pid for pid in (tracker, forkserver) if isinstance(pid, int))}
    return sweep(os.getpid(), keep)


def prepare_forkserver() -> None:
    """Make the calling forkserver a subreaper that kills everything below it when it exits.

    Called as the forkserver imports its preloaded modules (`layercheck.forkserver_preload`);
    anywhere else it does nothing: a user's process must never adopt or kill its orphans.
    """
    global _forkserver_pid
    if not _LINUX or not in_forkserver() or not _prctl(_PR_SET_CHILD_SUBREAPER, 1):
        return
    _forkserver_pid = os.getpid()
    # The forkserver reaps every child; those it adopted it warns about on its stderr, the
    # user's terminal, as an event that "shouldn't happen really".
    warnings.filterwarnings("ignore", message="forkserver: waitpid returned unexpected pid")
    atexit.register(_sweep_on_exit, _forkserver_pid)


def enter_worker() -> None:
    """What a worker does first, before any user code: die with the forkserver, adopt what
    its children leave behind, and hold no pipe that keeps the forkserver or the resource
    tracker alive."""
    _close_inherited_pipes()
    if not _LINUX:
        return
    _prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
    if _forkserver_pid is not None and os.getppid() != _forkserver_pid:
        # The forkserver died before the line above: no signal will come.
        os.kill(os.getpid(), signal.SIGKILL)
    if _prctl(_PR_SET_CHILD_SUBREAPER, 1):
        threading.Thread(target=_stop_adopting_past_limit, name="layercheck-adoptions", daemon=True).start()


def _stop_adopting_past_limit() -> None:
    """Stop adopting once `_ADOPTED_DEAD_LIMIT` adopted processes have ended here.

    The worker cannot reap what it adopted: a child it adopted and a child the layer
    started (whose exit status `subprocess` waits for) look alike. A process that forks and
    exits over and over leaves one such zombie at every step, each holding a pid; past the
    limit, orphans go to the forkserver, which reaps them, and are swept as the rest.
    """
    pause, dead = _ADOPTION_FASTEST_S, _dead_children(os.getpid())
    while dead < _ADOPTED_DEAD_LIMIT:
        sleep(pause)
        seen, dead = dead, _dead_children(os.getpid())
        # The next look comes before what one pause adds could carry the count far past the
        # limit: a process that forks and exits in a loop adds hundreds a second, on a loaded
        # machine in bursts; an idle worker is looked at five times a second.
        if 4 * (dead - seen) < _ADOPTED_DEAD_LIMIT - dead:
            pause = min(2 * pause, _ADOPTION_CHECK_S)
        else:
            pause = max(pause / 2, _ADOPTION_FASTEST_S)
    _prctl(_PR_SET_CHILD_SUBREAPER, 0)


def _close_inherited_pipes() -> None:
    """Close the write ends of the forkserver's alive pipe and of the resource tracker's pipe.

    Both read to EOF to learn that the parent is gone: a worker, or a daemon that a layer
    forks and that inherits every descriptor, holding either keeps it running after the parent
    was killed. The worker needs neither; were a layer to use multiprocessing, it would start
    its own forkserver or tracker, below the worker.
    """
    from multiprocessing import resource_tracker

    for holder, name in (
        (getattr(_forkserver_module(), "_forkserver", None), "_forkserver_alive_fd"),
        (resource_tracker._resource_tracker, "_fd"),
    ):
        fd = getattr(holder, name, None)  # private, as they have been since Python 3.8
        if isinstance(fd, int):
            try:
                os.close(fd)
            except OSError:
                pass
            setattr(holder, name, None)


def _forkserver_module() -> Any:
    """multiprocessing.forkserver, or None where there is none (Windows)."""
    try:
        from multiprocessing import forkserver
    except ImportError:
        return None
    return forkserver


def _sweep_on_exit(pid: int) -> None:
    if os.getpid() == pid:  # not in a worker, which inherited the registration
        sweep(pid)


def in_forkserver() -> bool:
    """Whether multiprocessing's forkserver loop is what is running (importing its preloads)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "main" and frame.f_globals.get("__name__") == "multiprocessing.forkserver":
            return True
        frame = frame.f_back
    return False


def _prctl(option: int, value: int) -> bool:
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return False
    ulong = ctypes.c_ulong
    return bool(prctl(option, ulong(value), ulong(0), ulong(0), ulong(0)) == 0)


def _stop_below(parent: int, children: Callable[[int], list[int]], spare: set[int], stopped: set[int]) -> bool:
    """Stop every process below `parent` but `spare` that is not in `stopped` yet, and add it
    there; whether there was any."""
    new = False
    todo = [pid for pid in children(parent) if pid not in spare]
    while todo:
        pid = todo.pop()
        if pid not in stopped:
            _signal([pid], signal.SIGSTOP)
            stopped.add(pid)
            new = True
        todo += children(pid)
    return new


def _children_reader() -> Callable[[int], list[int]]:
    """A function from a pid to its live children: read from the kernel's list of each
    thread's children where it has one (CONFIG_PROC_CHILDREN; a few microseconds, so that a
    process changing its pid cannot outrun it), else from a scan of every process."""
    if os.path.exists(f"/proc/self/task/{os.getpid()}/children"):
        return _children
    table = _children_table()
    return lambda pid: table.get(pid, [])


def _children(pid: int, live: bool = True) -> list[int]:
    found: list[int] = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:  # ended meanwhile
        return found
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/children", "rb") as f:
                found += (int(child) for child in f.read().split())
        except OSError:
            pass
    return [child for child in found if _alive(child)] if live else found


def process_state(pid: int) -> str | None:
    """The state letter of process `pid` in /proc (`R`, `S`, `T` for stopped, `Z` for a zombie...),
    or None where it is gone or there is no /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return _state(f.read()).decode("ascii", errors="replace")
    except (OSError, ValueError):
        return None


def _dead_children(pid: int) -> int:
    return sum(not _alive(child) for child in _children(pid, live=False))


def _parent(pid: int) -> int | None:
    """The parent of `pid`, read from its own entry (a list of children may miss one), or
    None where it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read()
    except OSError:
        return None
    return _live_parent(text)


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie is dead already: its children were adopted, and signals
    do nothing to it)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read()
    except OSError:
        return False
    return _state(text) not in (b"Z", b"X")


def _state(stat: bytes) -> bytes:
    # pid (comm) state ppid ...: comm may hold spaces and parentheses
    return stat[stat.rindex(b")") + 2 :][:1]


def _live_parent(stat: bytes) -> int | None:
    """The parent pid in a /proc/PID/stat text, or None for a zombie (or a text cut short)."""
    fields = stat[stat.rindex(b")") + 2 :].split(None, 2)
    return int(fields[1]) if len(fields) >= 2 and fields[0] not in (b"Z", b"X") else None


def _children_table() -> dict[int, list[int]]:
    """The live processes by parent pid, from a scan of /proc."""
    table: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                text = f.read()
        except OSError:  # ended meanwhile
            continue
        parent = _live_parent(text)
        if parent is not None:
            table.setdefault(parent, []).append(int(name))
    return table


def _signal(pids: Iterable[int], signum: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except OSError:  # ended meanwhile, or not ours to signal
            pass
