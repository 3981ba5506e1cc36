"""The stand-in CuPy's count of bytes crossing between host and "device".

A separate top-level module, so that the `cupy` namespace gains nothing CuPy lacks. The stand-in
(tests/fake_gpu/cupy) calls `record()`; tests read the count:

    import transfer_ledger
    with transfer_ledger.counting() as moved:
        run_the_layer()
    assert moved.downloaded <= 4096, moved.events

Uploads (host -> device): `cupy.asarray`/`array`/`ascontiguousarray`/... of NumPy data, Python
lists or scalars (the nbytes of the array made from the host part), NumPy arrays or lists used as
indices in `x[...]`, NumPy arrays or lists assigned with `x[index_array] = v` (with a basic index
CuPy refuses them), `x.set(a)`, operands of `cupy.hstack`/`vstack`/`einsum`, and file or
host-function loaders (`cupy.load`, `cupy.fromfunction`, ...).
Downloads (device -> host): `x.get()`, `cupy.asnumpy(x)`, `x.item()`, `float/int/bool/complex(x)`,
`x.tolist()`, `x.tobytes()`, `bytes(x)`, printing (`repr`, `str`, `format`), pickling, saving.
Arithmetic, reductions, views, copies and random draws stay on the device and count nothing.

Not thread-safe (the tests do not need it).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

UPLOAD = "upload"
DOWNLOAD = "download"


class Event(NamedTuple):
    """One transfer: `direction` is "upload" or "download"; `what` names the operation
    ("asarray", "index", "setitem", "set", "get", "asnumpy", "item", "float", "repr", ...)."""

    direction: str
    nbytes: int
    what: str


class Count:
    """The transfers recorded while a `counting()` block was open (live inside the block)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    @property
    def uploaded(self) -> int:
        return sum(e.nbytes for e in self.events if e.direction == UPLOAD)

    @property
    def downloaded(self) -> int:
        return sum(e.nbytes for e in self.events if e.direction == DOWNLOAD)

    def __repr__(self) -> str:
        return f"<transfers: {self.uploaded} B up, {self.downloaded} B down, {len(self.events)} events>"


_ledger = Count()  # everything since the last reset()
_open: list[Count] = []  # the counting() blocks now open


def record(direction: str, nbytes: int, what: str) -> None:
    """Note one transfer (called by the stand-in CuPy)."""
    if direction not in (UPLOAD, DOWNLOAD):
        raise ValueError(f"direction must be {UPLOAD!r} or {DOWNLOAD!r}, not {direction!r}")
    event = Event(direction, int(nbytes), what)
    _ledger.events.append(event)
    for count in _open:
        count.events.append(event)


def reset() -> None:
    """Forget every transfer recorded so far (open `counting()` blocks keep theirs)."""
    _ledger.events.clear()


def uploaded() -> int:
    """Bytes uploaded since the last reset()."""
    return _ledger.uploaded


def downloaded() -> int:
    """Bytes downloaded since the last reset()."""
    return _ledger.downloaded


def events() -> list[Event]:
    """The transfers since the last reset(), oldest first (a copy)."""
    return list(_ledger.events)


@contextmanager
def counting() -> Iterator[Count]:
    """Count the transfers made inside the block: yields a `Count` with `.uploaded`,
    `.downloaded` (bytes) and `.events`. Blocks may nest."""
    count = Count()
    _open.append(count)
    try:
        yield count
    finally:
        _open.remove(count)
