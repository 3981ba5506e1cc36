"""Verdicts no layer can fake, and no layer failed for what touches no verdict (DESIGN.md
section 7): layercheck's own references, recorded before the user's code runs, judged by
effect after it ran.

A layer's module runs in the process that judges it. It can rebind `numpy.isfinite` to a
function that always agrees, `numpy.random.default_rng` to a generator of zeros, the `run` of a
check in the registry, or the code of a function layercheck calls (`__code__` is writable).
`Snapshot.take()` records, by identity, every name of the watched modules (NumPy's, CuPy's once
loaded, layercheck's, `builtins`, `math`, `cmath`, `operator`, `time`, and those a worker's
results pass through on their way to the parent: `multiprocessing.connection`,
`multiprocessing.reduction`, `pickle`, `_pickle`, `copyreg`, `struct`, `io`), the attributes of
their mutable classes, the objects layercheck keeps in module-level dicts (the registry's checks),
the members of layercheck's enums (`Status.FAILED._value_`) and their lookup tables, and the
code, defaults and closures of every Python function among them.

Real libraries change some of these for reasons of their own: they restore an alias NumPy
removed (`np.int = int`), reload NumPy to switch its promotion rules (a new module in
`sys.modules['numpy']`), call `time.tzset()` (new `time.tzname`). Each change is therefore
judged by what it does to the code that computes verdicts (`Snapshot.settle`):

- tampering: a name of layercheck's own (its modules, classes, registry, enums) or of NumPy's
  and CuPy's internal modules replaced, removed or added; a name of a public namespace
  (`numpy`, `numpy.random`, `math`, `time`, `builtins` ...) replaced or removed where code
  layercheck runs looks it up (`sandbox.lookups`: `np.isfinite`, `np.bool`, which NumPy's own
  dtype code reads); a function's code changed; one of layercheck's own modules replaced in
  `sys.modules`; a global added to a module that hides a builtin its functions load. It is put
  back at once, and reported.
- allowed: the rest. A name no code looks up is left as the layer set it (its own code may
  need it); a global that hides a builtin with the builtin itself (`np.int = int`) changes
  nothing; a module replaced in `sys.modules` changes none of the module objects layercheck
  imported, and the original is put back there, so that later imports (NumPy's lazy ones
  included) find it. These are reported as a note in `-v`, never as a failure.

A layer can also change a verdict without changing any of these: a trace function
(`sys.settrace`, `frame.f_trace`) may rewrite the local variables of layercheck's frames. Each
`Guard` records the interpreter's hooks when it starts (trace and profile functions, threading's,
the tools of `sys.monitoring`): one set since is tampering, taken off, and the trace functions on
the frames under way removed. A hook there before (a debugger's, coverage's) is recorded and
stays allowed. A recursion limit lowered by the layer is raised back silently (it cannot make a
wrong layer pass; layercheck's own code would run out of stack).

Settings touch no name at all and are not looked at: `np.seterr`, `np.set_printoptions`, the
promotion state, warnings filters, codecs, the locale, the global RNGs' states.

`Guard` is what the runner holds: it looks at everything after the module is imported, after
the layer is set up and after each check that called a method of the layer; after one that
called none, before the layer's next call (`Guard.owe`: the checks judged from results shared
with others call none, and the look after each cost more than they do) or after the last check
(a few milliseconds each time: sixteen thousand names compared by identity in C loops,
`_Unchanged`; in a worker, whose forkserver counts the writes of functions' code and defaults
with an audit hook, the functions are compared only after such a write), and at NumPy's
public namespaces after every call of the layer (`contract.calls`; tens of microseconds) and
every check (`Guard.glance`). Judging a change costs a tenth of a second the first time
(`sandbox.lookups` reads the bytecode), and happens only when something changed. Tampering is
put back before layercheck computes anything more, so the checks after it decide with the
originals (`running.runner`); a check during which tampering was found only at its end (not
right after a call of the layer) is not decided, and the checks a look owed found it after
run again, each looked after. Looking at everything after every call would cost more than the
checks of a small layer: a change deeper than NumPy's public names (a function's code, the
registry) that a layer makes and undoes within one check (or within the checks of one owed
look) is not seen.

NumPy modules first imported after the snapshot have no original to compare with: those that
layercheck's own code imports on first use (`numpy.ma`, through `np.median`) are imported before
it (`_NUMPY_LAZY`).

The limit: the layer runs in the process that judges it, with the whole of its power. The
guard defends against replacement, not against a deliberate attack on layercheck's own
objects. A guard's snapshot swapped for one taken after a change is found (the guard holds it
a second time, in a closure, and reports `Guard._snapshot` replaced), and the snapshot holds
tuples only, read by code that is itself watched; but a layer that finds and rewrites both
through the garbage collector, or that writes a forged report straight down the worker's pipe
(its `Connection` found through `gc`) and exits, is beyond what an in-process record can stop.
A trace function can likewise rewrite layercheck's variables in the few lines it runs before
its hooks are looked at after the call (in `contract.calls.run`): the look after the check, in
the runner's frame, still finds the hook, and the check's verdict is not taken.
"""

from __future__ import annotations

import builtins
import dataclasses
import enum
import functools
import gc
import importlib
import itertools
import operator
import re
import sys
import threading
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from layercheck import devices
from layercheck.contract import calls
from layercheck.sandbox.lookups import Lookups, Reader
from layercheck.sandbox.own import OWN_BUILTINS, changed_entries

# Builtins resolved in the sandbox's own copy (`sandbox.own`): what a layer writes to
# `builtins` never reaches the code that looks for it.
__builtins__ = OWN_BUILTINS  # type: ignore[assignment]  # noqa: A001

__all__ = [
    "Allowed",
    "Change",
    "ChangeKind",
    "Finding",
    "Guard",
    "INTEGRITY_ABOUT",
    "INTEGRITY_CHECK",
    "Reliance",
    "RENDERING",
    "Snapshot",
    "computes_verdicts",
    "describe",
    "prime",
]

INTEGRITY_CHECK = "module_does_not_replace_numpy_or_layercheck"
"""The name of the failed result a replacement makes (not in the registry: it cannot be
selected or skipped, it is the condition of every other verdict)."""
INTEGRITY_ABOUT = (
    "the module and the layer leave what layercheck computes its verdicts with as it was: the functions of NumPy, "
    "CuPy, builtins, math, cmath, operator and time that code layercheck runs looks up, layercheck's own code and "
    "objects, the worker's channel to its parent, and the interpreter's trace and profile hooks; a replacement is "
    "put back at once, and the other checks still decide. Changes that no verdict reads (an alias restored, NumPy "
    "reloaded, time.tzset()) are allowed"
)
"""What the check verifies, as `list-checks` says it."""

# Modules watched whole (and their submodules, by prefix); the standard ones every verdict's
# arithmetic goes through, and the clocks its timeouts and durations read (layercheck binds
# its own, `layercheck.clock`, but a layer that stops the clocks is tampering with its host all
# the same, and is told so rather than passed).
# A worker's results reach its parent through `multiprocessing.connection` (Connection.send,
# which pickles with `multiprocessing.reduction.ForkingPickler`, writes through `io` and frames
# with `struct`): a layer that rebinds `Connection.send` there could drop the failed checks
# from what the parent hears, so those modules and their Python classes are watched too.
_PACKAGES = ("numpy", "cupy", "cupyx", "layercheck")
_CHANNEL = ("multiprocessing.connection", "multiprocessing.reduction", "pickle", "_pickle", "copyreg", "struct", "io")
# The standard library the verdicts and the worker's report are made with: a layer that
# rebinds `enum.Enum.value` could report a failed check as passed. (Not the modules real
# libraries configure and no verdict reads: warnings, logging, os, traceback, signal...)
_VERDICT_STANDARD = (
    "enum", "dataclasses", "copy", "functools", "json", "json.encoder", "json.decoder", "inspect", "re",
    "fractions", "numbers", "zlib", "contextlib", "_collections_abc", "collections.abc", "itertools", "types",
)  # fmt: skip
# What decides which names code looks up (`sandbox.lookups` reads bytecode with them): watched
# whole, and their tables compared by value before any judgement (`_Machinery`).
_MACHINERY = ("dis", "opcode", "gc")
_STANDARD = ("builtins", "math", "cmath", "operator", "time", *_CHANNEL, *_VERDICT_STANDARD, *_MACHINERY)
# The classes on that path (Connection, ForkingPickler); `pickle`'s Python classes are not on it
# (it pickles with `_pickle`'s).
_CHANNEL_CLASSES = ("multiprocessing.connection", "multiprocessing.reduction")
# Names of builtins that change without anyone meaning harm (the interactive `_`).
_VOLATILE_BUILTINS = frozenset({"_"})
# A module declares the globals it rebinds itself while it runs (`calls._depth`) here.
_RUNTIME_GLOBALS = "_RUNTIME_GLOBALS"
# What a module or class holds that no code calls or computes with: left out (a third of the
# names of layercheck's dataclasses).
_DESCRIPTIVE = frozenset(
    {
        "__doc__", "__module__", "__qualname__", "__annotations__", "__dict__", "__weakref__",
        "__firstlineno__", "__static_attributes__", "__match_args__", "__orig_bases__", "__parameters__",
        "__file__", "__cached__", "__loader__", "__spec__", "__package__", "__path__", "__name__",
    }
)  # fmt: skip
# NumPy 2 imports these on first use (`np.random`; `np.median` imports `numpy.ma`): a layer's
# module would be the first, and could change them before they were ever recorded. Imported
# here, in the forkserver (a few milliseconds, once). A NumPy module first imported after the
# snapshot is not watched (there is no original to compare it with): every one that
# layercheck's own code paths import is in this list.
_NUMPY_PUBLIC_LAZY = ("numpy.random", "numpy.linalg", "numpy.fft")
_NUMPY_LAZY = (*_NUMPY_PUBLIC_LAZY, "numpy.ma")


def _import_lazy_numpy() -> None:
    for name in _NUMPY_LAZY:
        importlib.import_module(name)


def _fill_numpy_caches() -> None:
    """NumPy's C code looks some of its Python functions up on first use and keeps them: the
    reductions an array's methods forward to (`numpy._core._methods._sum`, `_any`, `_amax`...),
    the functions that print arrays. A layer's module would otherwise be the first to use them:
    it could swap one in, use it once, so that NumPy keeps it, and put the original back, where
    no record of names can see the difference. Used here, before any code of the layer's
    runs, they are NumPy's own for the rest of the process."""
    import numpy as np  # noqa: PLC0415 - imported above by _import_lazy_numpy; bound here only

    a = np.arange(6.0).reshape(2, 3)
    for reduce in (a.sum, a.prod, a.mean, a.std, a.var, a.max, a.min, a.any, a.all):
        reduce()
        reduce(axis=0)
    a.clip(0.0, 1.0)
    a.argmax()
    a.argmin()
    for shown in (a, a[0, 0], np.float32(1.0), np.array(["x"]), np.zeros((), dtype=[("f", "f8")])):
        repr(shown)
        str(shown)


_import_lazy_numpy()
_fill_numpy_caches()
# Looked at after every call of the layer (tens of microseconds): the names a layer would
# replace first, so that a replacement undone by a later call within the same check is seen
# too. Everything is looked at after each check that calls the layer (`Guard`).
_HOT = frozenset({"numpy", *_NUMPY_PUBLIC_LAZY, "cupy", "cupy.random", "cupy.linalg", "cupy.fft"})
# The namespaces judged by the names code looks up (`Reliance.LOOKED_UP`): NumPy's and CuPy's
# public ones, whose names real libraries rebind (`np.long = int`), and the standard modules
# whose values a layer may change through their own API (`time.tzset()`). NumPy's internal
# modules are watched whole: its C code looks names up there (`numpy._core._methods._sum`).
_LOOKED_UP = frozenset({*_HOT, "cupyx", "builtins", "math", "cmath", "operator", "time", *_VERDICT_STANDARD})
# Looked at after every call of the layer too: the standard modules whose functions the
# numerics call between two calls of the layer (a replacement made in one call and undone
# before the check ends, by a finalizer, is then seen).
_HOT_STANDARD = frozenset({"builtins", "math", "cmath", "operator", "time"})
# NumPy's tables of its types by name (`np.dtype("float64")` reads `sctypeDict`): their entries
# are watched. Not NumPy's other tables: some hold settings that its own API changes in place
# (NumPy 1's `_format_options`, which `np.set_printoptions` updates), or what a reload registers
# again (`getlimits._KNOWN_TYPES`).
_NUMPY_TABLES = frozenset({"sctypeDict", "allTypes", "sctypes", "typeDict"})
# Of those, the ones code hands around as values: the array modules (layercheck's `xp`). A
# name read from an object the bytecode does not name may be read from these, not from the
# standard modules (`sandbox.lookups`).
_AS_VALUE = frozenset({*_HOT, "cupyx"})
_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: C types whose attributes cannot be set
_MISSING = object()
_BUILTIN_NAMES = frozenset(vars(builtins))
# What the guard itself looks with, bound before any code of a layer's runs (`gc` is watched
# too: a replacement is found, but must not be what finds the rest).
_get_referents = gc.get_referents

# Writes of a function's code, defaults or keyword defaults, counted where
# `count_function_writes` installed its audit hook (the forkserver, for every worker): CPython
# raises `object.__setattr__` (or `__delattr__`) for each, on every version layercheck runs on,
# and an audit hook cannot be removed. While the count has not moved since a look found the
# functions as recorded, none of them can differ, and the next look need not compare them:
# most of a look's time in a worker, where the objects it touches are not in the cache. The
# count only goes up (`itertools.count` has no setter): a layer can move it, never hide a write.
_FUNCTION_WRITES = itertools.count()
_NO_HOOK = -1
# Whether this process's hook is installed (a forked worker's too): a name, not the contents
# of a list, so that a layer that sets it without the hook changes a watched name, and is seen.
# Rebound once, before a guard starts: in the forkserver before the record every worker is
# judged under is taken, or by the first `Guard.start` of a process (the API's first check),
# which then sees the record it kept differ, and takes it again.
_HOOKED = False
_SET_BEFORE_THE_RECORD = ("_HOOKED",)


def _count_writes(
    event: str,
    args: tuple[Any, ...],
    _tick: Callable[[], int] = _FUNCTION_WRITES.__next__,
    _type: type[type] = type,
    _function: type = types.FunctionType,
) -> None:
    if (event == "object.__setattr__" or event == "object.__delattr__") and _type(args[0]) is _function:
        _tick()


def count_function_writes() -> None:
    """Count the writes of every function's code, defaults and keyword defaults from now on
    (an audit hook: installed by the forkserver, whose workers inherit it, and by the first
    guard of any other process, the API's; once a process)."""
    global _HOOKED
    if not _HOOKED:
        sys.addaudithook(_count_writes)
        _HOOKED = True


def _function_writes() -> int:
    """The writes counted so far; `_NO_HOOK` where they are not counted."""
    if not _HOOKED:
        return _NO_HOOK
    return int(repr(_FUNCTION_WRITES)[len("count(") : -1])


_get_objects = gc.get_objects


class ChangeKind(str, enum.Enum):
    REPLACED = "replaced"
    REMOVED = "removed"
    ADDED = "added"  # to a class, an instance or a table of layercheck's
    SHADOWED = "shadowed"  # a module global added that hides the builtin of the same name
    SET = "set"  # a hook of the interpreter's: a trace or profile function, a monitoring tool


class Reliance(enum.Enum):
    """How much of a namespace a verdict may read."""

    # Every name: layercheck's own modules, classes and tables; NumPy's and CuPy's internal
    # modules (their C code looks names up there too, which no bytecode shows); the worker's
    # channel to its parent.
    WHOLE = "whole"
    # The names that code layercheck runs looks up (`sandbox.lookups`): the public namespaces
    # real libraries rebind names of (`np.long = int`), and the standard modules whose data a
    # layer may change through their own API (`time.tzset()` rebinds `time.tzname`).
    LOOKED_UP = "looked up"
    # A class of NumPy's, CuPy's or the standard library's: the names read as attributes of the
    # class, a subclass or any instance by code layercheck runs (an attribute added to a class
    # changes every instance that reads it: `np.poly1d._repr_latex_` is read by none). Special
    # names (`__eq__`, `__array_ufunc__`) are read by the interpreter itself: they always count.
    ATTRIBUTES = "attributes"


class Allowed(str, enum.Enum):
    """Why a change touches no verdict: it is left as the layer made it (a module entry is
    put back), and reported as a note, never as a failure."""

    UNREAD = "no code layercheck runs looks it up"
    # Rebound to a value that does what the old one did (an equal number, text or table; a
    # function of the same code and globals): `time.tzset()` under an unchanged TZ, a module
    # reloaded in place. Accepted, and not said: nothing changed but objects' identity.
    EQUAL = "an equal value"
    BUILTIN = "it is the builtin of that name itself"
    # A module layercheck imported was replaced in (or removed from) sys.modules: NumPy reloaded
    # to switch its promotion rules. layercheck computes with the module objects it imported,
    # and the original is put back in sys.modules, so that a later import finds it too.
    MODULE_ENTRY = "layercheck keeps the module it imported, and it is put back in sys.modules"
    # `builtins.print` wrapped (distributed training's "print on the main process only", a
    # flush=True): what it returns no code computes with, and the code layercheck runs for a
    # verdict never calls it (NumPy's `isclose` would, under np.seterr(all="print") alone).
    OUTPUT = "it prints: no code layercheck runs computes with what it returns"
    # `json.encoder.c_make_encoder = None`, a known recipe: json's own Python code, watched as
    # the rest of the module is, does what the C accelerator did.
    PYTHON_TWIN = "a C accelerator turned off: the module's Python code, watched, does the same"
    # `re._MAXCACHE = 1024`, `io.DEFAULT_BUFFER_SIZE = 65536`: how much is kept or read at a
    # time, never what is computed.
    SIZE = "a cache's or a buffer's size: what is computed is the same"
    # `json.JSONEncoder.default` taught NumPy's types (a common recipe): json calls it for an
    # object it cannot encode itself, and layercheck hands json plain data only
    # (`reproducers.evidence._json_data`) or its own `default=`.
    FALLBACK = "json calls it only for what it cannot encode, and layercheck encodes plain data only"


# Names of watched namespaces whose replacement by a value the predicate accepts changes no
# value a verdict is computed with, and why: a printer wrapped (`Allowed.OUTPUT`), json's
# fallback for what it cannot encode (`Allowed.FALLBACK`), a C
# accelerator turned off (set to None) for its module's Python code (`Allowed.PYTHON_TWIN`), a
# cache's or a buffer's size set to a positive int (`Allowed.SIZE`).
_HARMLESS: dict[tuple[str, str], tuple[Allowed, Callable[[Any], bool]]] = {
    ("builtins", "print"): (Allowed.OUTPUT, lambda value: True),
    ("json.encoder.JSONEncoder", "default"): (Allowed.FALLBACK, lambda value: True),
    **{
        accelerator: (Allowed.PYTHON_TWIN, lambda value: value is None)
        for accelerator in (
            ("json.encoder", "c_make_encoder"),
            ("json.encoder", "c_encode_basestring"),
            ("json.encoder", "c_encode_basestring_ascii"),
            ("json.decoder", "c_scanstring"),
        )
    },
    **{
        size: (Allowed.SIZE, lambda value: type(value) is int and value > 0)
        for size in (("re", "_MAXCACHE"), ("re", "_MAXCACHE2"), ("io", "DEFAULT_BUFFER_SIZE"))
    },
}


@dataclass(frozen=True)
class Change:
    """One difference from the snapshot: `what` is a dotted path (`numpy.allclose`,
    `layercheck.checks.registry.REGISTRY['outputs_are_finite'].run`, `sys.modules['numpy']`).

    `allowed` says why the change touches no verdict (None: it is tampering); `reader` names a
    function that looks the replaced name up, where that is what makes it tampering."""

    kind: ChangeKind
    what: str
    allowed: Allowed | None = None
    reader: str | None = None

    @property
    def tampering(self) -> bool:
        return self.allowed is None


def describe(changes: tuple[Change, ...], limit: int = 3) -> str:
    """`replaced numpy.isclose and numpy.isfinite, removed numpy.isnan`: the first `limit`
    changes by kind, then how many more."""
    shown, rest = changes[:limit], len(changes) - limit
    parts = []
    for kind in ChangeKind:
        names = [c.what for c in shown if c.kind is kind]
        if names:
            joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
            if kind is ChangeKind.SHADOWED:
                parts.append(f"added {joined}, hiding the builtin{'s' if len(names) > 1 else ''} of that name")
            else:
                parts.append(f"{kind.value} {joined}")
    text = ", ".join(parts)
    return f"{text} and made {rest} more change(s)" if rest > 0 else text


# What a namespace lets a layer add: "free" (a module: names of its own, unless one hides a
# builtin that the module's functions look up) or "none" (a class, an instance, a table).
_FREE, _NONE = "free", "none"
_Judge = Callable[["_Namespace", ChangeKind, Any], tuple[Change, Any]]  # (the change, the name)


@dataclass(frozen=True)
class _Namespace:
    """The names of one namespace, by identity. `owner` is what to set them on when restored
    (a module or class: setattr; a dict: item; an instance: its `__dict__`); `module`, the
    module whose namespace it is (None for the others)."""

    label: str
    owner: Any
    live: Mapping[str, Any]
    names: tuple[Any, ...]
    values: tuple[Any, ...]
    additions: str  # _FREE or _NONE
    skipped: frozenset[str] = frozenset()  # names not recorded on purpose: a module's runtime globals
    reliance: Reliance = Reliance.WHOLE
    module: types.ModuleType | None = None
    cls: type | None = None  # the class whose namespace it is (Reliance.ATTRIBUTES)

    @functools.cached_property
    def names_set(self) -> frozenset[Any]:
        return frozenset(self.names)

    @functools.cached_property
    def recorded(self) -> dict[Any, Any]:
        return dict(zip(self.names, self.values))

    def changes(self, judge: _Judge) -> Iterator[tuple[Change, Any]]:
        """Each change of a name, as `judge` judges it, with the name."""
        live = self.live
        # Fast path (C loops): as many names as recorded, each the same object, so no name was
        # added either. A module that gained names (allowed) takes the slow path, which says
        # whether any of them matters.
        expected = len(self.names) + sum(name in live for name in self.skipped)
        if len(live) != expected or not all(map(operator.is_, map(live.get, self.names), self.values)):
            yield from self._compare(judge)

    def _compare(self, judge: _Judge) -> Iterator[tuple[Change, Any]]:
        live = self.live
        for name, value in zip(self.names, self.values):
            now = live.get(name, _MISSING)
            if now is _MISSING and name not in live:  # this module's own `_MISSING` is there
                yield judge(self, ChangeKind.REMOVED, name)
            elif now is not value:
                yield judge(self, ChangeKind.REPLACED, name)
        for name in list(live.keys()):
            if name in self.names_set or name in self.skipped:
                continue
            if self.additions == _NONE:
                yield judge(self, ChangeKind.ADDED, name)
            elif name in _BUILTIN_NAMES:
                yield judge(self, ChangeKind.SHADOWED, name)

    def path(self, name: Any) -> str:
        return f"{self.label}.{name}" if isinstance(name, str) and name.isidentifier() else f"{self.label}[{name!r}]"

    def restore(self, names: Iterable[Any]) -> None:
        """Put `names` back as recorded: removed where they were not there."""
        recorded = dict(zip(self.names, self.values))
        for name in names:
            value = recorded.get(name, _MISSING)
            if value is _MISSING:
                if name in self.live:
                    self._delete(name)
            elif self.live.get(name, _MISSING) is not value:
                self._set(name, value)

    def again(self) -> _Namespace:
        """The same namespace recorded as it is now (what a layer changed and no verdict reads
        is accepted: the fast paths hold again)."""
        items = [(k, v) for k, v in list(self.live.items()) if k not in self.skipped]
        return dataclasses.replace(self, names=tuple(k for k, _ in items), values=tuple(v for _, v in items))

    def _set(self, name: Any, value: Any) -> None:
        if isinstance(self.owner, (type, types.ModuleType)):
            setattr(self.owner, name, value)
        else:
            self.live[name] = value  # type: ignore[index]

    def _delete(self, name: Any) -> None:
        if isinstance(self.owner, (type, types.ModuleType)):
            delattr(self.owner, name)
        else:
            del self.live[name]  # type: ignore[attr-defined]


@dataclass(frozen=True)
class _Function:
    """What makes a Python function do what it does, besides its globals (its module's
    namespace, watched there): its code, defaults and the contents of its closure."""

    label: str
    fn: types.FunctionType
    code: types.CodeType
    defaults: tuple[Any, ...] | None
    kwdefaults: tuple[tuple[str, Any], ...] | None
    cells: tuple[tuple[Any, Any], ...]  # (cell, contents)

    @classmethod
    def of(cls, label: str, fn: types.FunctionType) -> _Function:
        kw = fn.__kwdefaults__
        cells = []
        for cell in fn.__closure__ or ():
            try:
                cells.append((cell, cell.cell_contents))
            except ValueError:  # an empty cell (a name not yet bound)
                continue
        return cls(label, fn, fn.__code__, fn.__defaults__, None if kw is None else tuple(kw.items()), tuple(cells))

    def changed(self) -> bool:
        fn = self.fn
        if fn.__code__ is not self.code or fn.__defaults__ is not self.defaults:
            return True
        kw = fn.__kwdefaults__
        if (kw is None) != (self.kwdefaults is None):
            return True
        if kw is not None and self.kwdefaults is not None and not _same_items(kw, self.kwdefaults):
            return True
        return any(_contents(cell) is not value for cell, value in self.cells)

    def restore(self) -> None:
        fn = self.fn
        fn.__code__, fn.__defaults__ = self.code, self.defaults
        fn.__kwdefaults__ = None if self.kwdefaults is None else dict(self.kwdefaults)
        for cell, value in self.cells:
            cell.cell_contents = value


# Values compared by value, never by code of the layer's: exact builtin types only.
_PLAIN = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis))
_EQUIVALENCE_BUDGET = 10_000  # objects looked at, at most, to tell one value equivalent to another


def _equivalent(old: Any, new: Any, mutable: bool = True) -> bool:
    """Whether `new` does for any code that reads it what `old` did (`Allowed.EQUAL`): equal
    plain data (numbers, text, and tuples, lists, sets and dicts of them: the mutable ones only
    where `mutable`), or a function of equal code, the same globals, equivalent defaults and
    the same closure's contents. Only exact builtin types are compared by value, so no code of
    the layer's runs; past a budget of objects the answer is no."""
    budget = [_EQUIVALENCE_BUDGET]

    def same(a: Any, b: Any) -> bool:
        budget[0] -= 1
        if budget[0] < 0 or type(a) is not type(b):
            return False
        if a is b:
            return True
        kind = type(a)
        if kind in _PLAIN:
            return bool(a == b) or (kind is float and a != a and b != b)  # NaN is NaN
        if kind in (list, set, dict) and not mutable:
            return False
        if kind in (tuple, list):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        if kind in (frozenset, set):
            return len(a) == len(b) and all(type(x) in _PLAIN for x in a) and a == b
        if kind is dict:
            return (
                len(a) == len(b)
                and all(type(k) in _PLAIN for k in a)
                and all(k in b and same(v, b[k]) for k, v in a.items())
            )
        if kind is types.FunctionType:
            return (
                a.__globals__ is b.__globals__
                and getattr(a, "__builtins__", None) is getattr(b, "__builtins__", None)  # taken when made
                and _same_code(a.__code__, b.__code__)
                and same(a.__defaults__, b.__defaults__)
                and same(a.__kwdefaults__, b.__kwdefaults__)
                and _same_cells(a.__closure__, b.__closure__)
                and not vars(a)
                and not vars(b)
            )
        return False

    return old is not _MISSING and same(old, new)


def _same_code(a: Any, b: Any) -> bool:
    """Equal code objects, compared only where their constants are plain (a code object's `==`
    compares its constants with theirs)."""
    return (
        type(a) is types.CodeType
        and type(b) is types.CodeType
        and _plain_constants(a)
        and _plain_constants(b)
        and a == b
    )


def _plain_constants(code: types.CodeType) -> bool:
    pending: list[Any] = list(code.co_consts)
    while pending:
        constant = pending.pop()
        kind = type(constant)
        if kind is types.CodeType:
            pending.extend(constant.co_consts)
        elif kind in (tuple, frozenset):
            pending.extend(constant)
        elif kind not in _PLAIN:
            return False
    return True


def _same_cells(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(_contents(x) is _contents(y) for x, y in zip(a, b))


def _said(reader: Reader | None) -> str | None:
    return None if reader is None else str(reader)


def _same_items(live: Mapping[str, Any], recorded: tuple[tuple[str, Any], ...]) -> bool:
    return len(live) == len(recorded) and all(live.get(k, _MISSING) is v for k, v in recorded)


def _contents(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:
        return _MISSING


@dataclass(frozen=True)
class _Difference:
    """A change, and how to put it back."""

    change: Change
    undo: Callable[[], None]
    namespace: _Namespace | None = None  # where it was found, when in a namespace


@dataclass(frozen=True)
class Snapshot:
    """NumPy's and layercheck's functions as they were when `take()` ran (see the module)."""

    namespaces: tuple[_Namespace, ...]
    functions: tuple[_Function, ...]
    modules: tuple[tuple[str, types.ModuleType], ...]  # the watched entries of sys.modules
    unchanged: _Unchanged
    hot: _Unchanged  # NumPy's public namespaces only: looked at after every call of the layer
    lookups: Lookups = dataclasses.field(compare=False, repr=False)  # who looks a name up

    @classmethod
    def take(cls) -> Snapshot:
        """NumPy's, CuPy's (if imported) and layercheck's functions as they are now (tens of
        milliseconds)."""
        return _Builder().build()

    def changes(self) -> tuple[Change, ...]:
        """What differs from the snapshot, each judged, in a stable order (empty when nothing)."""
        if self.unchanged.holds():
            return ()
        return tuple(d.change for d in self._differences())

    def settle(self) -> tuple[tuple[Change, ...], Snapshot]:
        """What differs from the snapshot, each judged (`changes`); tampering put back, and a
        module entry put back in sys.modules; what else no verdict reads accepted as the layer
        left it. Returns the changes and the snapshot to judge from next: this one, or one that
        records what was accepted."""
        if self.unchanged.holds():
            return (), self
        differences = self._differences()
        accepted: set[int] = set()
        for difference in differences:
            change = difference.change
            if change.tampering or change.allowed is Allowed.MODULE_ENTRY:
                difference.undo()
            elif difference.namespace is not None:
                accepted.add(id(difference.namespace))
        changes = tuple(d.change for d in differences)
        return changes, (self._accepting(accepted) if accepted else self)

    def restore(self) -> None:
        """Put back everything that differs from the snapshot, allowed or not (tests; a guard
        puts back tampering alone: `settle`)."""
        for difference in self._differences():
            difference.undo()

    def _differences(self) -> list[_Difference]:
        found: list[_Difference] = []
        for name, module in self.modules:
            if sys.modules.get(name) is not module:
                own = name.partition(".")[0] == "layercheck"  # its own modules: imported lazily by name
                change = Change(ChangeKind.REPLACED, f"sys.modules[{name!r}]", None if own else Allowed.MODULE_ENTRY)
                found.append(_Difference(change, functools.partial(sys.modules.__setitem__, name, module)))
        for namespace in self.namespaces:
            for change, name in namespace.changes(self._judge):
                found.append(_Difference(change, functools.partial(namespace.restore, (name,)), namespace))
        for function in self.functions:
            if function.changed():
                found.append(
                    _Difference(Change(ChangeKind.REPLACED, f"the code of {function.label}"), function.restore)
                )
        return found

    def _judge(self, space: _Namespace, kind: ChangeKind, name: Any) -> tuple[Change, Any]:
        """A change of `space[name]`, judged by its effect: tampering where code layercheck runs
        may look the name up (see `Reliance`, `sandbox.lookups`)."""
        what = space.path(name)
        if kind is ChangeKind.SHADOWED:
            # A module global that hides a builtin changes the module's own functions that load
            # it as a global, and no others.
            if space.live.get(name, _MISSING) is vars(builtins).get(name, _MISSING):
                return Change(kind, what, Allowed.BUILTIN), name
            reader = self.lookups.reader(space.live, None, name, globals_only=True)
            return Change(kind, what, None if reader else Allowed.UNREAD, _said(reader)), name
        # layercheck's own tables must stay the objects it watches: a copy, equal today, could
        # be changed tomorrow unseen (its entries are watched in the recorded one).
        own = space.label.partition(".")[0] == "layercheck"
        old = space.recorded.get(name, _MISSING)
        if kind is ChangeKind.REPLACED and _equivalent(old, space.live.get(name), mutable=not own):
            return Change(kind, what, Allowed.EQUAL), name
        harmless = _HARMLESS.get((space.label, name)) if isinstance(name, str) else None
        if kind is ChangeKind.REPLACED and harmless is not None and harmless[1](space.live.get(name)):
            return Change(kind, what, harmless[0]), name
        if space.reliance is Reliance.WHOLE or not isinstance(name, str):
            return Change(kind, what), name
        if space.reliance is Reliance.ATTRIBUTES:
            if name.startswith("__") and name.endswith("__"):  # looked up by the interpreter itself
                return Change(kind, what, None, "the interpreter (a special method)"), name
            reader = self.lookups.reader(space.live, space.cls, name, instances=True)
        elif kind is ChangeKind.ADDED:
            return Change(kind, what), name
        else:
            reader = self.lookups.reader(space.live, space.module, name, as_value=space.label in _AS_VALUE)
        return Change(kind, what, None if reader else Allowed.UNREAD, _said(reader)), name

    def _accepting(self, accepted: set[int]) -> Snapshot:
        namespaces = tuple(n.again() if id(n) in accepted else n for n in self.namespaces)
        hot = tuple(n for n in namespaces if n.label in _HOT or n.label in _HOT_STANDARD)
        return dataclasses.replace(
            self,
            namespaces=namespaces,
            unchanged=_Unchanged.of(namespaces, self.functions, self.modules),
            hot=_Unchanged.of(hot, (), ()),
        )


@dataclass(frozen=True)
class _Unchanged:
    """The snapshot flattened, so that the common answer (nothing changed) comes from C loops
    over ten thousand names in well under a millisecond; any doubt (a name missing, a size
    that differs, a module that gained names) sends `Snapshot.changes` the slow way, which
    says what changed, if anything."""

    modules: tuple[str, ...]
    module_objects: tuple[types.ModuleType, ...]
    spaces: tuple[_Namespace, ...]
    lives: tuple[Mapping[str, Any], ...]
    sizes: list[int]
    getters: tuple[Callable[[Mapping[str, Any]], tuple[Any, ...]], ...]
    values: tuple[Any, ...]
    functions: tuple[types.FunctionType, ...]
    codes: tuple[types.CodeType, ...]
    defaults: tuple[Any, ...]
    kwdefaults: tuple[dict[str, Any] | None, ...]
    kw_dicts: tuple[dict[str, Any], ...]  # the keyword defaults there are, and their sizes
    kw_sizes: tuple[int, ...]
    kw_owners: tuple[dict[str, Any], ...]  # one per keyword default: its dict, name and value
    kw_names: tuple[str, ...]
    kw_values: tuple[Any, ...]
    cells: tuple[Any, ...]
    contents: tuple[Any, ...]
    referents: list[
        Any
    ]  # what the functions refer to, flat (`_functions_hold`): taken again when it changes harmlessly
    # `_function_writes()` when the functions were last found as recorded (`_NO_HOOK`: never
    # skip comparing them), read before they were looked at.
    writes_seen: list[int]

    @classmethod
    def of(
        cls,
        namespaces: tuple[_Namespace, ...],
        functions: tuple[_Function, ...],
        modules: tuple[tuple[str, types.ModuleType], ...],
    ) -> _Unchanged:
        writes = _function_writes()  # before the functions are read: a write after it is seen next
        spaces = [n for n in namespaces if n.names]
        with_kw = [(f, f.fn.__kwdefaults__) for f in functions if f.fn.__kwdefaults__ is not None]
        return cls(
            tuple(name for name, _ in modules),
            tuple(module for _, module in modules),
            tuple(spaces),
            tuple(n.live for n in spaces),
            [len(n.names) + sum(name in n.live for name in n.skipped) for n in spaces],
            # itemgetter of one name returns the value, not a 1-tuple: ask for it twice
            tuple(operator.itemgetter(*n.names, *n.names[:1]) for n in spaces),
            tuple(itertools.chain.from_iterable((*n.values, n.values[0]) for n in spaces)),
            tuple(f.fn for f in functions),
            tuple(f.code for f in functions),
            tuple(f.defaults for f in functions),
            tuple(f.fn.__kwdefaults__ for f in functions),
            tuple(kw for _, kw in with_kw),
            tuple(len(kw) for _, kw in with_kw),
            tuple(kw for _, kw in with_kw for _ in kw),
            tuple(k for _, kw in with_kw for k in kw),
            tuple(v for _, kw in with_kw for v in kw.values()),
            tuple(cell for f in functions for cell, _ in f.cells),
            tuple(value for f in functions for _, value in f.cells),
            _get_referents(*(f.fn for f in functions)),
            [writes],
        )

    def holds(self) -> bool:
        same = functools.partial(map, operator.is_)
        try:
            return (
                all(same(map(sys.modules.get, self.modules), self.module_objects))
                and self._sizes_hold()
                and all(same(itertools.chain.from_iterable(map(_APPLY, self.getters, self.lives)), self.values))
                and self._functions_hold()
                and list(map(len, self.kw_dicts)) == list(self.kw_sizes)
                and all(same(map(operator.getitem, self.kw_owners, self.kw_names), self.kw_values))
                and all(same(map(_CONTENTS, self.cells), self.contents))
            )
        except (KeyError, ValueError):  # a name removed, a cell emptied
            return False

    def _functions_hold(self) -> bool:
        """Every function's code, defaults and keyword defaults the same objects. Reading those
        attributes raises an audit event each (`object.__getattr__`), which costs where an
        audit hook is installed (`running.reads`: thirty thousand calls of it per look); so
        they are first compared in one call that raises one event: the objects each function
        refers to (`gc.get_referents`, its code, defaults and keyword defaults among them),
        which match the record unless something changed. What else a function refers to may
        change without harm (its `__dict__` or `__annotations__`, made when first read): then
        the attributes are compared, and the record of referents taken again.

        Where function writes are counted (`count_function_writes`) and none was since the
        functions were last found as recorded, they are: nothing is compared."""
        writes = _function_writes()
        if writes != _NO_HOOK and writes == self.writes_seen[0]:
            return True
        same = functools.partial(map, operator.is_)
        referents = _get_referents(*self.functions)
        recorded = self.referents
        if len(referents) == len(recorded) and all(same(referents, recorded)):
            self.writes_seen[0] = writes
            return True
        held = (
            all(same(map(_CODE, self.functions), self.codes))
            and all(same(map(_DEFAULTS, self.functions), self.defaults))
            and all(same(map(_KWDEFAULTS, self.functions), self.kwdefaults))
        )
        if held:
            recorded[:] = referents
            self.writes_seen[0] = writes
        return held

    def _sizes_hold(self) -> bool:
        """No name added, but to modules, and none there that hides a builtin (the recorded
        names are looked up next: one missing fails there)."""
        sizes = list(map(len, self.lives))
        if sizes == self.sizes:
            return True
        for space, size, recorded in zip(self.spaces, sizes, self.sizes):
            if size == recorded:
                continue
            if size < recorded or space.additions == _NONE:
                return False
            if not _BUILTIN_NAMES.isdisjoint(space.live.keys() - space.names_set - space.skipped):
                return False
        return True


_CODE = operator.attrgetter("__code__")
_DEFAULTS = operator.attrgetter("__defaults__")
_KWDEFAULTS = operator.attrgetter("__kwdefaults__")
_CONTENTS = operator.attrgetter("cell_contents")


def _call(getter: Callable[[Mapping[str, Any]], tuple[Any, ...]], live: Mapping[str, Any]) -> tuple[Any, ...]:
    return getter(live)


# `getter(live)` for each namespace of a look: `operator.call` where there is one (Python
# 3.11+), in C, since a look applies about a thousand of them after every call of the layer.
_APPLY: Callable[[Callable[[Mapping[str, Any]], tuple[Any, ...]], Mapping[str, Any]], tuple[Any, ...]] = getattr(
    operator, "call", _call
)


class _Builder:
    """Walks the watched modules once: their namespaces, their mutable classes (and those of
    layercheck's that they hold), the instances layercheck keeps in module-level dicts, and
    every Python function found in any of them."""

    def __init__(self) -> None:
        self.namespaces: list[_Namespace] = []
        self.functions: dict[int, _Function] = {}
        self.seen: set[int] = set()
        self.homes: dict[int, str] = {}

    def build(self) -> Snapshot:
        modules = _watched_modules()
        self.homes = _homes(modules)
        for name, module in modules:
            self._module(name, module)
        namespaces, functions = tuple(self.namespaces), tuple(self.functions.values())
        hot = tuple(n for n in namespaces if n.label in _HOT or n.label in _HOT_STANDARD)
        return Snapshot(
            namespaces,
            functions,
            modules,
            _Unchanged.of(namespaces, functions, modules),
            _Unchanged.of(hot, (), ()),
            Lookups(
                functools.partial(_watched_functions, modules, tuple(f.fn for f in functions)),
                _holds_modules,
                functools.partial(dict, modules),
            ),
        )

    def _module(self, name: str, module: types.ModuleType) -> None:
        namespace = vars(module)
        skip = _DESCRIPTIVE | frozenset(namespace.get(_RUNTIME_GLOBALS, ()))
        if name == "builtins":
            skip |= _VOLATILE_BUILTINS
        reliance = Reliance.LOOKED_UP if name in _LOOKED_UP else Reliance.WHOLE
        self._add(name, module, namespace, _FREE, skip, reliance, module)
        own = name.partition(".")[0] == "layercheck"
        for attr, value in list(namespace.items()):
            if attr in skip:
                continue
            self._value(f"{name}.{attr}", value, own)
            if type(value) is dict and (own or (attr in _NUMPY_TABLES and name.partition(".")[0] == "numpy")):
                self._dict(f"{name}.{attr}", value, own)

    def _dict(self, label: str, table: dict[Any, Any], own: bool) -> None:
        """A module-level table: of layercheck's (the registry), its entries, the instances of
        layercheck's classes it holds (a check's `run`) and the tables it holds, each as a
        table; of NumPy's that name its types (`_NUMPY_TABLES`), its entries, with keys added
        allowed (a new alias of a type changes no existing one)."""
        if id(table) in self.seen or table is vars(builtins):  # a module's __builtins__: watched as builtins
            return
        self.seen.add(id(table))
        label = self.homes.get(id(table), label)
        self._add(label, table, table, _NONE if own else _FREE)
        if not own:
            return
        for key, value in list(table.items()):
            if _is_own_instance(value) and id(value) not in self.seen:
                self.seen.add(id(value))
                self._add(f"{label}[{key!r}]", value, vars(value), _NONE)
            elif type(value) is dict:
                # A table of tables (the default tolerances per dtype): an entry changed in
                # place changes a verdict as a replaced one does (a hunt loosened rtol there).
                self._dict(f"{label}[{key!r}]", value, own)

    def _value(self, label: str, value: Any, own: bool) -> None:
        if isinstance(value, type):
            if _mutable_class(value) and id(value) not in self.seen and _defined_in_watched(value):
                self.seen.add(id(value))
                # layercheck's own classes and the worker's channel's are watched whole.
                whole = _defined_in_own(value) or getattr(value, "__module__", None) in _CHANNEL_CLASSES
                reliance = Reliance.WHOLE if whole else Reliance.ATTRIBUTES
                self._add(_name_of(value, label), value, value.__dict__, _NONE, _DESCRIPTIVE, reliance, None, value)
                for member in list(vars(value).values()):
                    self._function(member)
                if issubclass(value, enum.Enum) and _defined_in_own(value):
                    self._enum(value)
            return
        if own and _is_own_instance(value) and id(value) not in self.seen:
            self.seen.add(id(value))
            self._add(label, value, vars(value), _NONE)
        self._function(value)

    def _enum(self, cls: type[enum.Enum]) -> None:
        """The state of an enum of layercheck's: each member's attributes (`Status.FAILED._value_`
        set to "passed" would report a failure as a pass) and the tables that look members up
        by name and by value."""
        label = _name_of(cls, cls.__name__)
        for table in ("_member_map_", "_value2member_map_"):
            live = cls.__dict__.get(table)
            if type(live) is dict:
                self._add(f"{label}.{table}", live, live, _NONE)
        for name, member in list(cls.__members__.items()):
            if id(member) not in self.seen and isinstance(getattr(member, "__dict__", None), dict):
                self.seen.add(id(member))
                self._add(f"{label}.{name}", member, vars(member), _NONE)

    def _function(self, value: Any) -> None:
        """Every Python function reachable in one step: the value itself, the function of a
        staticmethod/classmethod/property, what a decorator wrapped, NumPy's dispatchers'
        implementation."""
        for fn in _functions_of(value):
            if id(fn) not in self.functions:
                self.functions[id(fn)] = _Function.of(_name_of(fn, "a function"), fn)

    def _add(
        self,
        label: str,
        owner: Any,
        live: Mapping[str, Any],
        additions: str,
        skip: frozenset[str] = frozenset(),
        reliance: Reliance = Reliance.WHOLE,
        module: types.ModuleType | None = None,
        cls: type | None = None,
    ) -> None:
        items = [(k, v) for k, v in list(live.items()) if k not in skip]
        names, values = tuple(k for k, _ in items), tuple(v for _, v in items)
        self.namespaces.append(
            _Namespace(label, owner, live, names, values, additions, frozenset(skip), reliance, module, cls)
        )


def _homes(modules: tuple[tuple[str, types.ModuleType], ...]) -> dict[int, str]:
    """Where each of layercheck's module-level tables is defined, as far as names tell: the
    deepest module that exports it (`layercheck.checks.registry.REGISTRY`, not the package
    that re-exports it)."""
    homes: dict[int, str] = {}
    for name, module in sorted(modules, key=lambda item: item[0].count(".")):
        if name.partition(".")[0] != "layercheck":
            continue
        namespace = vars(module)
        exported = namespace.get("__all__", ())
        for attr in exported if isinstance(exported, (list, tuple)) else ():
            if type(namespace.get(attr)) is dict:
                homes[id(namespace[attr])] = f"{name}.{attr}"
    return homes


def _functions_of(value: Any) -> Iterator[types.FunctionType]:
    candidates = [value]
    if isinstance(value, (staticmethod, classmethod)):
        candidates = [value.__func__]
    elif isinstance(value, property):
        candidates = [value.fget, value.fset, value.fdel]
    else:
        for attr in ("_implementation", "__wrapped__"):
            inner = _attribute(value, attr)
            if inner is not None:
                candidates.append(inner)
    return (c for c in candidates if isinstance(c, types.FunctionType))


def _name_of(obj: Any, fallback: str) -> str:
    """`numpy.allclose`, `layercheck.checks.registry.Check`: where the class or function is
    defined (NumPy's dispatchers give their implementation the public module)."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    return f"{module}.{qualname}" if isinstance(module, str) and isinstance(qualname, str) else fallback


# layercheck's modules that never run while a verdict is computed: they parse what the user
# typed, render the reports and write files, in the parent process (and, through the Python
# API, once the checks are done). A name only their code looks up is not what a verdict reads
# (`builtins.print`, for the console; `np.load`, for reproducers' files). Their own names and
# code are watched as every module of layercheck's is. tests/test_integrity.py runs checks,
# in the API and as a worker does, under a profiler, and finds none of them called.
RENDERING = (
    "layercheck.cli",
    "layercheck.reporters",
    "layercheck.merging",
    "layercheck.baseline",
    "layercheck.runinfo",
    "layercheck.templates",
    "layercheck.pytest_plugin",
    "layercheck.reproducers.files",
    "layercheck.running.plan",
    "layercheck.running.watching",
    "layercheck.running.cache",
    "layercheck.settings.config",
)
# The reproducers' scripts are run as programs of their own, from a copy of their text.
_SCRIPTS = re.compile(r"layercheck\.reproducers\.\w+_script")


def computes_verdicts(module: str, cupy: bool = True) -> bool:
    """Whether code of the module named `module` may run while a verdict is computed: all but
    layercheck's `RENDERING` modules and its reproducers' scripts, and CuPy's only where
    `cupy` (a GPU is usable: without one no check calls CuPy, and CuPy's own code reads many
    of NumPy's names, `np.load` in `cupy.load` among them)."""
    if _SCRIPTS.fullmatch(module):
        return False
    if module.partition(".")[0] in _CUPY_PACKAGES:
        return cupy
    return not any(module == name or module.startswith(name + ".") for name in RENDERING)


_CUPY_PACKAGES = frozenset({"cupy", "cupyx", "cupy_backends"})


def _gpu_usable() -> bool:
    """Whether this process found a usable GPU (`devices.gpu_status`, asked for by
    the worker before the layer's module runs); never asked for here, where it would import
    CuPy."""
    return devices.gpu_status.cache_info().currsize > 0 and devices.gpu_status().usable


def _holds_modules(fn: types.FunctionType) -> bool:
    """Whether `fn`'s code may be handed a module as a value: layercheck's own (its numerics
    take their array module as `xp`); NumPy's, CuPy's and the standard library's reach
    modules through their globals."""
    name = fn.__globals__.get("__name__")
    return isinstance(name, str) and name.partition(".")[0] == "layercheck"


def _watched_functions(
    modules: tuple[tuple[str, types.ModuleType], ...], recorded: tuple[types.FunctionType, ...]
) -> list[types.FunctionType]:
    """The functions whose code may compute a verdict: those recorded, and every other live
    function whose globals are a watched module's (a lambda in a table, a nested function),
    found through the garbage collector once a change needs judging; none of the modules that
    only render (`computes_verdicts`)."""
    cupy = _gpu_usable()
    verdicts = {id(vars(module)) for name, module in modules if computes_verdicts(name, cupy)}
    rendering = {id(vars(module)) for name, module in modules if not computes_verdicts(name, cupy)}
    found = [fn for fn in recorded if id(fn.__globals__) not in rendering]
    seen = {id(fn) for fn in recorded}
    for obj in _get_objects():
        if type(obj) is types.FunctionType and id(obj) not in seen and id(obj.__globals__) in verdicts:
            seen.add(id(obj))
            found.append(obj)
    return found


def _watched_modules() -> tuple[tuple[str, types.ModuleType], ...]:
    return tuple(sorted((name, m) for name, m in list(sys.modules.items()) if _watched(name, m)))


def _watched(name: str, module: Any) -> bool:
    if not isinstance(module, types.ModuleType):
        return False
    return name in _STANDARD or name.partition(".")[0] in _PACKAGES


def _mutable_class(cls: type) -> bool:
    return not cls.__flags__ & _IMMUTABLE_TYPE


def _defined_in_watched(cls: type) -> bool:
    module = getattr(cls, "__module__", None)
    return isinstance(module, str) and (module.partition(".")[0] in _PACKAGES or module in _STANDARD)


def _defined_in_own(cls: type) -> bool:
    module = getattr(cls, "__module__", None)
    return isinstance(module, str) and module.partition(".")[0] == "layercheck"


def _is_own_instance(value: Any) -> bool:
    module = getattr(type(value), "__module__", "")
    return (
        isinstance(module, str)
        and module.partition(".")[0] == "layercheck"
        and not isinstance(value, (type, types.ModuleType, types.FunctionType, enum.Enum))
        and isinstance(getattr(value, "__dict__", None), dict)
    )


@dataclass(frozen=True)
class Finding:
    """Changes found at one look: what, and where (`when`: "when it was imported", "during
    outputs_are_finite"). `at_call`: found right after a call of the layer returned, and put
    back before any code of layercheck's ran (`Guard.after_call`), so the check under way
    computed nothing with them."""

    changes: tuple[Change, ...]
    when: str
    at_call: bool = False

    @property
    def at_import(self) -> bool:
        return self.when == AT_IMPORT

    def message(self) -> str:
        who = "the module" if self.at_import else "the layer"
        return f"{who} {describe(self.changes)} {self.when}"


AT_IMPORT = "when it was imported"
_RECENT: list[Snapshot] = []  # the last snapshot taken (Guard.start)


def prime() -> None:
    """Take the snapshot now, for every `Guard.start` after to reuse while nothing changed.

    The forkserver calls it once it has imported layercheck (`layercheck.forkserver_preload`):
    each worker forked from it then starts from a snapshot it need not take itself, a few
    tens of milliseconds per worker (two per target: the discovery and the checks)."""
    _RECENT[:] = [Snapshot.take()]


_MONITORING_TOOLS = range(6)  # sys.monitoring's tool ids (Python 3.12+)


@dataclass(frozen=True)
class _Hooks:
    """The interpreter's hooks as they were when the guard started. A trace function set by
    the layer (`sys.settrace`, `frame.f_trace`) can rewrite the local variables of
    layercheck's frames, the verdict of a check among them, without changing any attribute
    the snapshot holds: setting one is tampering. A hook set before layercheck started (a
    debugger's, coverage's) is recorded, and stays allowed."""

    trace: Any
    profile: Any
    thread_trace: Any
    thread_profile: Any
    monitoring: tuple[tuple[Any, int], ...]  # (the name of the tool, its events) for each tool id
    recursion_limit: int

    @classmethod
    def now(cls) -> _Hooks:
        return cls(
            sys.gettrace(),
            sys.getprofile(),
            getattr(threading, "_trace_hook", None),
            getattr(threading, "_profile_hook", None),
            _monitoring(),
            sys.getrecursionlimit(),
        )

    def hold(self) -> bool:
        """Whether no hook was set since (a few microseconds: this runs after each call of the
        layer). A lowered recursion limit is raised back here, silently: it cannot make a wrong
        layer pass, but layercheck's own code would run out of stack (a limit raised is
        harmless, and kept)."""
        if sys.getrecursionlimit() < self.recursion_limit:
            sys.setrecursionlimit(self.recursion_limit)
        return (
            _same_hook(sys.gettrace(), self.trace)
            and _same_hook(sys.getprofile(), self.profile)
            and _same_hook(getattr(threading, "_trace_hook", None), self.thread_trace)
            and _same_hook(getattr(threading, "_profile_hook", None), self.thread_profile)
            and _monitoring() == self.monitoring
        )

    def changes(self) -> tuple[Change, ...]:
        if self.hold():
            return ()
        found = []
        for now, then, what in (
            (sys.gettrace(), self.trace, "a trace function (sys.settrace)"),
            (sys.getprofile(), self.profile, "a profile function (sys.setprofile)"),
            (getattr(threading, "_trace_hook", None), self.thread_trace, "a trace function for new threads (threading.settrace)"),
            (getattr(threading, "_profile_hook", None), self.thread_profile, "a profile function for new threads (threading.setprofile)"),
        ):  # fmt: skip
            if not _same_hook(now, then):
                found.append(Change(ChangeKind.SET, what))
        if _monitoring() != self.monitoring:
            found.append(Change(ChangeKind.SET, "a monitoring tool (sys.monitoring)"))
        return tuple(found)

    def restore(self) -> None:
        """The hooks back as recorded, and the trace functions the layer put on the frames
        under way (`frame.f_trace`, which fire again as soon as any tracer is set) taken off."""
        frame: types.FrameType | None = sys._getframe()
        while frame is not None:
            if frame.f_trace is not None and not _same_hook(frame.f_trace, self.trace):
                frame.f_trace = None
            frame = frame.f_back
        sys.settrace(self.trace)
        sys.setprofile(self.profile)
        threading.settrace(self.thread_trace)
        threading.setprofile(self.thread_profile)
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is not None and _monitoring() != self.monitoring:
            for tool, (name, events) in zip(_MONITORING_TOOLS, self.monitoring):
                now = monitoring.get_tool(tool)
                if now is not None and now != name:  # the layer's tool: silenced, then freed
                    monitoring.set_events(tool, 0)
                    monitoring.free_tool_id(tool)
                    now = None
                if name is not None:
                    if now is None:
                        monitoring.use_tool_id(tool, name)
                    monitoring.set_events(tool, events)


def _same_hook(now: Any, then: Any) -> bool:
    """The same hook: the same object, or the same method of the same object (a debugger
    that sets `self.trace_dispatch` again makes a new bound method each time)."""
    if now is then:
        return True
    return (
        type(now) is types.MethodType
        and type(then) is types.MethodType
        and now.__self__ is then.__self__
        and now.__func__ is then.__func__
    )


def _monitoring() -> tuple[tuple[Any, int], ...]:
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None:  # before Python 3.12
        return ()
    return tuple(
        (name, monitoring.get_events(tool) if name is not None else 0)
        for tool in _MONITORING_TOOLS
        for name in (monitoring.get_tool(tool),)
    )


def _holder(snapshot: Snapshot) -> Callable[[], Snapshot]:
    """A second place for the guard's snapshot, out of reach of a plain attribute."""
    return lambda: snapshot


# What a guard whose snapshot was swapped for another reports (the new one would call the
# changes made before it "as they were").
_SNAPSHOT_SWAPPED = Change(ChangeKind.REPLACED, "layercheck.sandbox.integrity.Guard._snapshot")


class Guard:
    """The snapshot a target is judged under, verified after each step of the runner. Each
    change is judged by its effect (`Snapshot.settle`): tampering is put back at once
    (whatever runs next is layercheck's own code) and kept as a `Finding` in `findings`;
    what touches no verdict is accepted, and kept in `allowed`."""

    def __init__(self, snapshot: Snapshot, hooks: _Hooks | None = None):
        self._snapshot = snapshot
        self._held = _holder(snapshot)
        self._hooks = _Hooks.now() if hooks is None else hooks
        self.where = AT_IMPORT  # the runner says where it is: the next change is found there
        self.findings: list[Finding] = []  # tampering, in the order found
        self.allowed: list[Finding] = []  # changes that touch no verdict (a note)
        self._allowed_said: set[str] = set()
        # The worker's shared clock and the tally of the calls that ended, installed before.
        self._clock, self._spent = vars(calls)["_clock"], vars(calls)["_spent"]
        self.calls = 0  # the layer's outermost calls that ended under this guard
        # The look owed (`owe`): where what it finds was done, else None; and whether the
        # last owed look taken found tampering.
        self._owed: str | None = None
        self._then: Callable[[bool], None] | None = None
        self._owed_found = False

    @property
    def first(self) -> Finding | None:
        """The first tampering found, if any."""
        return self.findings[0] if self.findings else None

    @classmethod
    def start(cls) -> Guard:
        """A guard over NumPy and layercheck as they are now: take it before the user's module
        is imported. The last snapshot is taken again only when something has changed since
        (the Python API checks many layers in one process). The first guard of a process
        installs the hook that counts writes of functions (`count_function_writes`), before
        the snapshot it is judged under is taken."""
        count_function_writes()
        hooks = _Hooks.now()
        recent = _RECENT[0] if _RECENT else None
        if recent is None or recent.modules != _watched_modules() or recent.changes():
            recent = Snapshot.take()
            _RECENT[:] = [recent]
        guard = cls(recent, hooks)
        calls.guard(guard.after_call, guard.before_call)
        return guard

    def stop(self) -> None:
        """The last look: the caller's session is left with the originals of what a verdict
        reads. Always taken: the layers a run made are freed when it returns, and their
        `__del__` is the layer's code too."""
        self.verify()
        calls.guard(None)

    def after_call(self) -> None:
        """After a call of the layer: NumPy's public names and the interpreter's hooks looked
        at, everything when one changed (so that what layercheck computes next is the
        original's)."""
        self.calls += 1
        if not self.glance():
            self.verify(at_call=True)

    def glance(self) -> bool:
        """Whether NumPy's public names and the interpreter's hooks are as recorded: the look
        after each call of the layer (`after_call`); the runner takes it after a check whose
        whole look it owes, so that what such a check ran of the layer's there is found at
        once, not undone unseen before the look owed."""
        return self._hooks.hold() and self._snapshot.hot.holds()

    def owe(self, where: str, then: Callable[[bool], None] | None = None) -> None:
        """A look is owed: taken before the next call of the layer (`before_call`), else when
        the runner settles it (`settle_owed`); what it finds was done `where`, and `then(found)`
        is called once it was taken (found: whether it found tampering). The runner owes the
        look after a check that called no method of the layer: what such a check runs of the
        layer's (a property it reads, a freed object's `__del__`) is found there, before
        anything of the layer's runs again, and that check's verdict waits for it."""
        self._owed, self._then, self._owed_found = where, then, False

    def before_call(self) -> None:
        """Before a call of the layer: the look owed, if one is."""
        if self._owed is not None:
            self._take_owed()

    def settle_owed(self) -> bool:
        """The look owed taken now, if no call of the layer took it; whether the owed look
        found tampering (the checks it was owed for may have computed with it)."""
        if self._owed is not None:
            self._take_owed()
        found, self._owed_found = self._owed_found, False
        return found

    def _take_owed(self) -> None:
        where, then, self._owed, self._then = self._owed, self._then, None, None
        count = len(self.findings)
        self.verify(where)
        found = len(self.findings) > count
        self._owed_found = self._owed_found or found
        if then is not None:
            then(found)

    def _calls_kept(self) -> tuple[Change, ...]:
        """`contract.calls`' record of the layer's calls as this guard set it: its hooks after
        and before each call (set to None, no look would follow a call, nor the look owed be
        taken before one), its depth (0 between calls: more, and no call would look, nor be
        timed), its clock and the tally of the calls that ended. Its module leaves them out of
        what the snapshot records (they change while the layer runs): a verify runs between
        calls, where each has one right value. Put back where changed."""
        namespace = vars(calls)
        found = []
        kept = (
            ("_after", self.after_call),
            ("_before", self.before_call),
            ("_depth", 0),
            ("_clock", self._clock),
            ("_spent", self._spent),
        )
        for name, right in kept:
            now = namespace.get(name, _MISSING)
            if name in ("_after", "_before"):
                same = _same_hook(now, right)
            else:
                same = now is right or (type(now) is int and now == right)
            if not same:
                found.append(Change(ChangeKind.REPLACED, f"layercheck.contract.calls.{name}"))
                namespace[name] = right
        return tuple(found)

    def verify(self, where: str | None = None, at_call: bool = False) -> Finding | None:
        """Changes since the snapshot, judged and settled; the finding of the tampering among
        them, if any."""
        # First the builtins the comparisons below run with (`sandbox.own`), put back if changed;
        # then the hooks: a trace function could rewrite what follows.
        own = tuple(
            Change(ChangeKind.REPLACED, f"layercheck.sandbox.own.OWN_BUILTINS.{name}") for name in changed_entries()
        )
        hooks = self._hooks.changes()
        if hooks:
            self._hooks.restore()
        hooks += self._calls_kept()
        held = self._held()
        swapped = (_SNAPSHOT_SWAPPED,) if self._snapshot is not held else ()
        found, settled = held.settle()
        if settled is not held:  # what no verdict reads, accepted: the fast paths hold again
            self._held = _holder(settled)
        self._snapshot = settled
        changes = own + hooks + swapped + found
        if not changes:
            return None
        when = self.where if where is None else where
        # Each allowed change is said once: a layer may rebind its alias at every call.
        allowed = tuple(
            c
            for c in changes
            if not c.tampering and c.allowed is not Allowed.EQUAL and c.what not in self._allowed_said
        )
        if allowed:
            self._allowed_said.update(c.what for c in allowed)
            self.allowed.append(Finding(allowed, when, at_call))
        tampering = tuple(c for c in changes if c.tampering)
        if not tampering:
            return None
        finding = Finding(tampering, when, at_call)
        self.findings.append(finding)
        return finding


def _attribute(value: Any, name: str) -> Any:
    if isinstance(value, types.ModuleType):
        return None
    try:
        return getattr(value, name, None)
    except Exception:  # noqa: BLE001 - an object of a watched module whose __getattr__ raises: nothing to follow
        return None
