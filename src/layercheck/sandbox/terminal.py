"""Workers without a controlling terminal, so that a layer cannot write to it.

A worker's stdout and stderr go to a file (`isolation`), but `/dev/tty` names the controlling
terminal of whoever opens it: a layer that opens it writes past every report, escape sequences
and a forged `PASSED ...` line included, straight onto the user's screen. The forkserver gives
its terminal up before it forks any worker (`TIOCNOTTY`: for a process that does not lead its
session, that drops the terminal for it alone, and for every process it forks from then on),
so `/dev/tty` cannot be opened in a worker (ENXIO). Its process group stays the same: a Ctrl-C
still reaches it and the workers as before (they ignore it: the parent stops them).
"""

from __future__ import annotations

import os

from layercheck.sandbox.own import OWN_BUILTINS

# Builtins resolved in the sandbox's own copy (`sandbox.own`): what a layer writes to
# `builtins` never reaches the code that looks for it.
__builtins__ = OWN_BUILTINS  # type: ignore[assignment]  # noqa: A001

__all__ = ["give_up_terminal"]


def give_up_terminal() -> bool:
    """Stop having a controlling terminal; True when there was one and it is given up.

    Does nothing for a session leader (giving the terminal up there would hang up the whole
    foreground process group) or where there is no terminal (CI), nor off Linux and macOS.
    """
    try:
        import fcntl
        import termios
    except ImportError:  # Windows
        return False
    notty = getattr(termios, "TIOCNOTTY", None)
    if notty is None or os.getsid(0) == os.getpid():
        return False
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:  # no controlling terminal: nothing to give up
        return False
    try:
        fcntl.ioctl(fd, notty)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True
