"""Bounded, exception-safe text of what a layer hands back or raises.

Everything layercheck says about a user's object goes through here: a message or a repr
may be megabytes long (it would be copied into every check that quotes it, then wrapped by
the console), and a user's `__str__`, `__repr__` or `__len__` may itself raise. Neither may
turn into a defect of layercheck, let alone a pass: text is cut to a few KB, saying how long
it was, and a method that raises is named in the text instead ("its __str__ raised ...").

Limits are in characters; a cut keeps the head and the tail (where a traceback ends with the
exception) around a marker that says how much was left out.

`visible` is how such text is shown (console, JUnit): what a terminal would interpret rather
than print (control characters, escape sequences, bidi overrides, line separators) becomes an
escape, so that a layer can neither drive the terminal nor start a line of layercheck's own.
"""

from __future__ import annotations

import builtins
import re
import reprlib
from typing import Any

from layercheck.interrupts import reraise_if_interrupt

__all__ = [
    "MESSAGE_LIMIT",
    "NAME_LIMIT",
    "TRACEBACK_LIMIT",
    "bounded",
    "bounded_data",
    "encodable",
    "exception_text",
    "plain_str",
    "safe_repr",
    "safe_str",
    "type_name",
    "visible",
]

MESSAGE_LIMIT = 2_000  # a message, or the text of an exception in one
TRACEBACK_LIMIT = 8_000  # a traceback, or a worker's output shown with an error
# A target's label (path and class), a layout, a note: generous for any name a person types
# (DESIGN section 6: those are never cut); a longer one was generated, and is cut visibly.
NAME_LIMIT = 500


class _Repr(reprlib.Repr):
    """reprlib's short reprs of containers and strings; an object's own `__repr__` whole, so
    that `bounded` can say how long it really was."""

    def repr_instance(self, x: Any, level: int) -> str:
        return builtins.repr(x)


_REPR = _Repr()
_REPR.maxstring = _REPR.maxother = 400
_REPR.maxlevel = 3
EMBEDDED_LIMIT = MESSAGE_LIMIT // 2  # an exception's text inside a message of ours


def bounded(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """`text`, or its head and tail around `[... N of M characters cut ...]` when longer."""
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    marker = f" [... {cut:,} of {len(text):,} characters cut ...] "
    head = max(limit * 3 // 4 - len(marker), 0)
    tail = max(limit - head - len(marker), 0)
    return text[:head] + marker + (text[-tail:] if tail else "")


def encodable(text: str) -> str:
    """`text` with what UTF-8 cannot encode spelled out: a file name's undecodable bytes
    (`\\xff`, from the surrogates Python decodes them to) or a lone surrogate (`\\ud800`), so
    that every report can be written whatever the names and messages hold."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def bounded_data(value: Any, limit: int = MESSAGE_LIMIT) -> Any:
    """`value` with every string in it (in dicts, lists and tuples) bounded and encodable."""
    if isinstance(value, str):
        return encodable(bounded(value, limit))
    if isinstance(value, dict):
        return {k: bounded_data(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [bounded_data(v, limit) for v in value]
    if isinstance(value, tuple):
        return tuple(bounded_data(v, limit) for v in value)
    return value


def plain_str(text: str) -> str:
    """The characters of `text`, a `str` or an instance of a subclass of `str` (a member of an
    `enum.StrEnum`, a `class Name(str)`), as a plain `str`.

    `str.__str__` copies them without calling any method of the subclass, whose `__str__`,
    `__eq__`, `__hash__` or `__iter__` may raise or lie (a name equal to every name)."""
    return str.__str__(text)


def type_name(obj: Any) -> str:
    """The name of `obj`'s type; a metaclass can make even `__name__` raise."""
    try:
        name = type(obj).__name__
        return name if isinstance(name, str) else "object"
    except Exception:
        return "object"


def _call(method: str, fn: Any, obj: Any, limit: int) -> str:
    """`fn(obj)` as bounded text, or what its `method` raised, never raising itself.

    A KeyboardInterrupt or other BaseException from the user's method is the layer's doing
    too: the interrupt a user presses is handled where it is raised (`layercheck.interrupts`).
    """
    try:
        text = fn(obj)
        if not isinstance(text, str):
            raise TypeError(f"{method} returned {type_name(text)}, not str")
        return bounded(text, limit)
    except BaseException as exc:  # noqa: BLE001 - anything the user's method does
        reraise_if_interrupt(exc)
        return f"<{type_name(obj)} whose {method} raised {type_name(exc)}>"


def safe_str(obj: Any, limit: int = MESSAGE_LIMIT) -> str:
    """`str(obj)`, bounded; `<T whose __str__ raised E>` when it raises."""
    return _call("__str__", str, obj, limit)


def safe_repr(obj: Any, limit: int = MESSAGE_LIMIT) -> str:
    """`repr(obj)` with containers and strings shortened (reprlib), bounded; `<T whose
    __repr__ raised E>` when it raises."""
    return _call("__repr__", _REPR.repr, obj, limit)


def exception_text(exc: BaseException, limit: int = EMBEDDED_LIMIT) -> str:
    """`ValueError: the message` (the type alone when the message is empty), bounded;
    `Bad (the exception's __str__ raised RuntimeError)` when its `__str__` raises."""
    name = type_name(exc)
    try:
        text = str(exc)
        if not isinstance(text, str):
            raise TypeError(f"__str__ returned {type_name(text)}, not str")
    except BaseException as inner:  # noqa: BLE001 - the user's __str__
        reraise_if_interrupt(inner)
        return f"{name} (the exception's __str__ raised {type_name(inner)})"
    return bounded(f"{name}: {text}" if text else name, limit)


# What a terminal or a reader would not show as typed: C0 controls (ESC, NUL, CR, ...), DEL,
# C1 controls (U+0080-9F, CSI and OSC among them), the bidi embeddings, overrides, isolates
# and marks (which reorder what follows on screen), the line and paragraph separators (line
# breaks to str.splitlines and some viewers) and the two noncharacters XML cannot hold.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_HIDDEN = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{_BIDI}\ufffe\uffff]")
_HIDDEN_IN_LINES = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029{_BIDI}\ufffe\uffff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, *, lines: bool = False) -> str:
    """`text` as typed, with what would be interpreted rather than shown spelled out as Python
    writes it in a string literal: `\\x1b`, `\\x00`, `\\r`, `\\u202e`; a newline and a tab as
    `\\n` and `\\t`, unless `lines` (a traceback, a worker's output: kept, `\\r\\n` read as
    `\\n`), where the caller indents every line under its own. Undecodable bytes of a file
    name are spelled out too (`encodable`). Letters of any script and emoji stay as they are.

    A backslash the user typed stays one backslash (Windows paths, regexes and the escapes
    in a traceback's source line read as written), so `\\x1b` typed as four characters shows
    as the escape of ESC does; the JSON report holds the exact text. That keeps `visible`
    idempotent: what it returns has nothing left to escape, whoever shows it again.
    """
    text = encodable(text)
    if lines:
        return _HIDDEN_IN_LINES.sub(_escape, text.replace("\r\n", "\n"))
    return _HIDDEN.sub(_escape, text)
