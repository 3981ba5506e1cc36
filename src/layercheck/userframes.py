"""The user's frames: where in the user's code an exception was raised or a worker stopped.

One rule for what a user frame is, for live exceptions and for the stacks faulthandler writes
from a worker: a frame of a real file outside layercheck and, where there is one, outside the
standard library and the installed packages (NumPy, CuPy; a compiled one's frames name no file
here), so that a message names the line
of the layer and not the line of NumPy that raised. When only library frames remain (a layer
installed as a package), they are the user's; the standard library's never are.
"""

from __future__ import annotations

import builtins
import linecache
import os
import re
import sys
import sysconfig
import traceback
from collections.abc import Collection
from typing import TypeVar

from layercheck.devices import no_device_hint
from layercheck.portability import hint_for
from layercheck.safetext import TRACEBACK_LIMIT, bounded, exception_text

_E = TypeVar("_E", bound=BaseException)

__all__ = [
    "being_handled",
    "chained",
    "exception_summary",
    "last_user_frame",
    "own_frame",
    "stack_location",
    "user_stack",
    "user_traceback",
    "detached",
    "without_traceback",
]

_PACKAGE_DIR = os.path.dirname(os.path.realpath(__file__)) + os.sep
_LIBRARY_DIRS = tuple(
    os.path.realpath(p) + os.sep
    for p in {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    if p
)
# The standard library alone (its site-packages are the installed packages, below it on most
# systems): its frames are never the user's, even when nothing else is (a pathlib call of
# layercheck's that raised, multiprocessing's frames of a worker stopped in layercheck's work).
_STDLIB_DIR = os.path.realpath(sysconfig.get_paths()["stdlib"]) + os.sep
_SITE_DIRS = tuple(
    os.path.realpath(p) + os.sep for p in {sysconfig.get_paths().get(k) for k in ("purelib", "platlib")} if p
)
# faulthandler writes `  File "/path/x.py", line 12 in predict`, most recent call first.
_FAULTHANDLER_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<name>\S+)\s*$')
_TRACEBACK_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')


def _outside_layercheck(filename: str) -> bool:
    return not (filename.startswith("<") or os.path.realpath(filename).startswith(_PACKAGE_DIR))


def _in_library(filename: str) -> bool:
    """A frame of the standard library or an installed package. Compiled packages name their
    Cython sources relative to the package (`cupy/_core/core.pyx`), which is no file here."""
    return not os.path.isfile(filename) or os.path.realpath(filename).startswith(_LIBRARY_DIRS)


def _in_stdlib(filename: str) -> bool:
    real = os.path.realpath(filename)
    return real.startswith(_STDLIB_DIR) and not real.startswith(_SITE_DIRS)


def _user_frames(frames: list[traceback.FrameSummary]) -> list[traceback.FrameSummary]:
    """The user's frames among `frames`, by the rule of the module docstring."""
    outside = [f for f in frames if _outside_layercheck(f.filename) and not _in_stdlib(f.filename)]
    own = [f for f in outside if not _in_library(f.filename)]
    return own or outside


_GROUP: type[BaseException] | None = getattr(builtins, "BaseExceptionGroup", None)  # Python 3.11+


def chained(exc: BaseException, outside: Collection[int] = ()) -> list[BaseException]:
    """`exc` and every exception it chains (`__cause__`, `__context__`, a group's own), each
    once, short of those in `outside` (by id: the exceptions being handled when the work that
    raised `exc` began, the caller's, which it chains as its context)."""
    found: list[BaseException] = []
    pending, seen = [exc], set(outside)
    while pending:
        one = pending.pop()
        if id(one) not in seen:
            seen.add(id(one))
            found.append(one)
            pending += [e for e in (one.__cause__, one.__context__) if isinstance(e, BaseException)]
            if _GROUP is not None and isinstance(one, _GROUP):
                pending += [e for e in getattr(one, "exceptions", ()) if isinstance(e, BaseException)]
    return found


def being_handled() -> frozenset[int]:
    """The ids of the exception being handled now, if any, and of those it chains: what an
    exception raised from here on chains as its context, which is not its own."""
    handled = sys.exc_info()[1]
    return frozenset() if handled is None else frozenset(id(e) for e in chained(handled))


def without_traceback(exc: BaseException) -> None:
    """`exc` with its traceback let go (its frames, and their locals, freed with it). Through
    BaseException's own method: an exception class may refuse attribute writes (a frozen
    dataclass) or define its own `with_traceback`."""
    try:
        BaseException.with_traceback(exc, None)
    except Exception:  # noqa: BLE001 - an exception that keeps its traceback keeps a cycle, nothing worse
        pass


def detached(exc: _E, outside: Collection[int] = ()) -> _E:
    """`exc`, and the exceptions it chains, without their tracebacks, kept for their words and
    their cause alone (their frames hold the locals of whoever keeps them: a cycle); those in
    `outside` (a caller's, `being_handled`) left as they are."""
    for one in chained(exc, outside):
        without_traceback(one)
    return exc


def last_user_frame(exc: BaseException) -> traceback.FrameSummary | None:
    """The innermost user frame of `exc`'s traceback, or None."""
    frames = _user_frames(traceback.extract_tb(exc.__traceback__))
    return frames[-1] if frames else None


def own_frame(exc: BaseException) -> traceback.FrameSummary | None:
    """The innermost frame of `exc`'s traceback in the user's own code (outside layercheck, the
    standard library and the installed packages), or None: whether a layer's code was running
    when `exc` was raised, even where layercheck called it implicitly (a `__repr__`, `__eq__`
    or `__len__` of an object the layer returned)."""
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if _outside_layercheck(f.filename) and not _in_library(f.filename)
    ]
    return frames[-1] if frames else None


def exception_summary(exc: BaseException, *, hint: bool = True, at: traceback.FrameSummary | None = None) -> str:
    """`NameError: name 'dLdX' is not defined (srelu.py:57 in backward)`, with what to write
    instead when the exception comes from a non-portable array idiom (unless `hint` is False:
    the caller says it). Bounded, and safe from an exception whose `__str__` raises
    (`safetext.exception_text`). `at`: the user's frame it was raised in, read before its
    traceback was let go; None: read from its traceback."""
    text = exception_text(exc)
    frame = at or last_user_frame(exc)
    if frame is not None:
        text += f" ({os.path.basename(frame.filename)}:{frame.lineno} in {frame.name})"
    instead = (hint_for(exc) or no_device_hint(exc)) if hint else None
    return text if instead is None else f"{text}; {instead}"


def user_traceback(exc: BaseException) -> str:
    """The traceback of `exc` with layercheck's and importlib's own frames removed."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if _outside_layercheck(f.filename)]
    lines = ["Traceback (most recent call last):\n"] if frames else []
    lines += traceback.format_list(frames)
    lines += _where_it_does_not_compile(exc)
    lines.append(exception_text(exc) + "\n")
    return bounded("".join(lines).rstrip(), TRACEBACK_LIMIT)


# The compiler's own errors, whose place in the source (file, line, the line and a caret under
# the offending column) Python prints above the message; a subclass of the user's may hold
# anything in those attributes, and is shown as any other exception.
_COMPILER_ERRORS = (SyntaxError, IndentationError, TabError)


def _where_it_does_not_compile(exc: BaseException) -> list[str]:
    """The file, line, source line and caret of a SyntaxError, as Python prints them."""
    if type(exc) not in _COMPILER_ERRORS:
        return []
    try:
        return traceback.format_exception_only(type(exc), exc)[:-1]
    except Exception:  # noqa: BLE001 - attributes no compiler set: the message alone
        return []


def user_stack(output: str) -> str:
    """The user's frames of the last stack faulthandler wrote, as a Python traceback."""
    blocks = re.split(r"\n(?=(?:Current thread|Thread) 0x)", output)
    for block in reversed(blocks):
        matches = [m for m in map(_FAULTHANDLER_FRAME.match, block.splitlines()) if m]
        frames = [
            traceback.FrameSummary(m["file"], int(m["line"]), m["name"], lookup_line=False) for m in reversed(matches)
        ]
        user = _user_frames(frames)
        if user:
            lines = ["Traceback (most recent call last):"]
            for frame in user:
                lines.append(f'  File "{frame.filename}", line {frame.lineno}, in {frame.name}')
                source = linecache.getline(frame.filename, frame.lineno or 0).strip()
                if source:
                    lines.append(f"    {source}")
            return "\n".join(lines)
    return ""


def stack_location(stack: str) -> str:
    """`loop.py:12 in predict`, the innermost frame of a `user_stack` traceback, or ''."""
    matches = _TRACEBACK_FRAME.findall(stack)
    if not matches:
        return ""
    file, line, name = matches[-1]
    return f"{os.path.basename(file)}:{line} in {name}"
