"""Interrupts the user asks for (Ctrl-C, `kill`, `docker stop`), told apart from a
KeyboardInterrupt that a layer raises itself.

layercheck contains whatever a layer raises, KeyboardInterrupt and other BaseException
subclasses included: they are the layer's doing, reported as a failed check. An interrupt
the user asks for must instead stop the run. While `handling` is active, SIGINT (and in the
command line SIGTERM) raise `Interrupted`, a KeyboardInterrupt subclass carrying the signal,
and every place that contains a layer's exceptions lets it through (`reraise_if_interrupt`).

Worker processes ignore SIGINT (a terminal sends it to the whole process group; the parent
stops the workers itself), so there a KeyboardInterrupt is always the layer's.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

__all__ = ["Interrupted", "exit_status", "handling", "is_interrupt", "reraise_if_interrupt"]


class Interrupted(KeyboardInterrupt):
    """The user interrupted the run with `signum` (SIGINT for Ctrl-C, SIGTERM for `kill`).

    `report` is set on the way out by a run that can say what it finished (the batch runner).
    """

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.report: Any = None


_received: list[int] = []  # signals received while `handling`, in order


def is_interrupt(exc: BaseException) -> bool:
    """Whether `exc` is the user's interrupt rather than something a layer raised: our own
    `Interrupted`, or a KeyboardInterrupt while a SIGINT has been received (a layer that
    catches ours and raises its own)."""
    return isinstance(exc, Interrupted) or (isinstance(exc, KeyboardInterrupt) and signal.SIGINT in _received)


def reraise_if_interrupt(exc: BaseException) -> None:
    """Raise `exc` again when it is the user's interrupt; call it first in every handler that
    contains a layer's BaseException."""
    if is_interrupt(exc):
        raise exc


def exit_status(signum: int) -> int:
    """The shell's status for a process ended by `signum`: 130 for SIGINT, 143 for SIGTERM."""
    return 128 + int(signum)


@contextmanager
def handling(signals: Sequence[int] = (signal.SIGINT,)) -> Iterator[None]:
    """While inside, each of `signals` raises `Interrupted` once in the main thread (a second
    one while the run winds down is only recorded, so that the reports still get written).

    Nothing is installed outside the main thread (Python delivers signals to it alone), nor
    over a handler someone else installed for SIGINT (a debugger's, a test runner's).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        first = not _received
        _received.append(signum)
        if first:
            raise Interrupted(signum)

    previous: dict[int, Any] = {}
    for signum in signals:
        current = signal.getsignal(signum)
        if signum == signal.SIGINT and current is not signal.default_int_handler:
            continue
        previous[signum] = current
        signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
        _received.clear()
