"""Verdicts no layer can fake (DESIGN.md section 7): a record of NumPy's and layercheck's own
functions, taken before the user's code runs, checked after it ran, and put back.

A layer's module runs in the process that judges it. It can rebind `numpy.allclose` to a
function that always agrees, `numpy.random.default_rng` to a generator of zeros, the `run` of a
check in the registry, or the code of a function layercheck calls (`__code__` is writable).
`Snapshot.take()` records, by identity, every name of the watched modules (NumPy's, CuPy's once
loaded, layercheck's, and `builtins`, `math`, `cmath`, `operator`, `time`), the attributes of their
mutable classes, the objects layercheck keeps in module-level dicts (the registry's checks),
and the code, defaults and closures of every Python function among them. `changes()` lists what
differs; `restore()` puts the originals back.

What stays allowed, because no verdict reads it: NumPy's settings (`np.seterr`,
`np.set_printoptions`, the global RNG's state), a new name added to a module (unless it would
hide a builtin that the module's functions look up), and a change undone before layercheck
looks.

`Guard` is what the runner holds: it looks at everything after the module is imported, after
the layer is set up and after each check (about a millisecond each time: ten thousand names
compared by identity in C loops, `_Unchanged`), and at NumPy's public namespaces after every
call of the layer (`contract.calls`; tens of microseconds); it puts back what changed at once,
and remembers where the first change was found, so that no verdict computed after it counts
(`running.runner`). Looking at everything after every call would cost more than the checks of
a small layer: a change deeper than NumPy's public names (a function's code, the registry)
that a layer makes and undoes within one check is not seen.

A layer that goes looking for the snapshot itself (through the garbage collector) is beyond
what an in-process record can stop; the snapshot holds tuples only, and the code that reads it
is itself watched.
"""

from __future__ import annotations

import builtins
import enum
import functools
import importlib
import itertools
import operator
import sys
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from layercheck.contract import calls

__all__ = ["Change", "ChangeKind", "Guard", "INTEGRITY_ABOUT", "INTEGRITY_CHECK", "Snapshot", "describe", "prime"]

INTEGRITY_CHECK = "module_does_not_replace_numpy_or_layercheck"
"""The name of the failed result a replacement makes (not in the registry: it cannot be
selected or skipped, it is the condition of every other verdict)."""
INTEGRITY_ABOUT = (
    "the module and the layer leave the functions of NumPy, CuPy, layercheck, builtins, math, cmath, operator "
    "and time as they were; a replacement is put back, and no verdict from then on counts"
)
"""What the check verifies, as `list-checks` says it."""

# Modules watched whole (and their submodules, by prefix); the standard ones every verdict's
# arithmetic goes through, and the clocks its timeouts and durations read (layercheck binds
# its own, `layercheck.clock`, but a layer that stops the clocks is tampering with its host all
# the same, and is told so rather than passed).
_PACKAGES = ("numpy", "cupy", "cupyx", "layercheck")
_STANDARD = ("builtins", "math", "cmath", "operator", "time")
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
# NumPy 2 imports these on first use (`np.random`): a layer's module would be the first, and
# could change them before they were ever recorded. Imported here, in the forkserver.
_NUMPY_LAZY = ("numpy.random", "numpy.linalg", "numpy.fft")


def _import_lazy_numpy() -> None:
    for name in _NUMPY_LAZY:
        importlib.import_module(name)


_import_lazy_numpy()
# Looked at after every call of the layer (tens of microseconds): the names a layer would
# replace first, so that a replacement undone by a later call within the same check is seen
# too. Everything is looked at after each check.
_HOT = frozenset({"numpy", *_NUMPY_LAZY, "cupy", "cupy.random", "cupy.linalg", "cupy.fft"})
_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: C types whose attributes cannot be set
_MISSING = object()
_BUILTIN_NAMES = frozenset(vars(builtins))


class ChangeKind(str, enum.Enum):
    REPLACED = "replaced"
    REMOVED = "removed"
    ADDED = "added"  # to a class, an instance or a table of layercheck's
    SHADOWED = "shadowed"  # a module global added that hides the builtin of the same name


@dataclass(frozen=True)
class Change:
    """One difference from the snapshot: `what` is a dotted path (`numpy.allclose`,
    `layercheck.checks.registry.REGISTRY['outputs_are_finite'].run`, `sys.modules['numpy']`)."""

    kind: ChangeKind
    what: str


def describe(changes: tuple[Change, ...], limit: int = 3) -> str:
    """`replaced numpy.allclose and numpy.isclose, removed numpy.isnan`: the first `limit`
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


@dataclass(frozen=True)
class _Namespace:
    """The names of one namespace, by identity. `owner` is what to set them on when restored
    (a module or class: setattr; a dict: item; an instance: its `__dict__`)."""

    label: str
    owner: Any
    live: Mapping[str, Any]
    names: tuple[Any, ...]
    values: tuple[Any, ...]
    additions: str  # "free" (a module: forbidden only when hiding a builtin) or "none"
    skipped: frozenset[str] = frozenset()  # names not recorded on purpose: a module's runtime globals

    @functools.cached_property
    def names_set(self) -> frozenset[Any]:
        return frozenset(self.names)

    def changes(self) -> Iterator[Change]:
        live = self.live
        # Fast path (C loops): as many names as recorded, each the same object, so no name was
        # added either. A module that gained names (allowed) takes the slow path, which says
        # whether any of them matters.
        expected = len(self.names) + sum(name in live for name in self.skipped)
        if len(live) != expected or not all(map(operator.is_, map(live.get, self.names), self.values)):
            yield from self._compare()

    def _compare(self) -> Iterator[Change]:
        live = self.live
        for name, value in zip(self.names, self.values):
            now = live.get(name, _MISSING)
            if now is _MISSING:
                yield Change(ChangeKind.REMOVED, self._path(name))
            elif now is not value:
                yield Change(ChangeKind.REPLACED, self._path(name))
        for name in list(live.keys()):
            if name in self.names_set or name in self.skipped:
                continue
            if self.additions == "none":
                yield Change(ChangeKind.ADDED, self._path(name))
            elif name in _BUILTIN_NAMES:
                yield Change(ChangeKind.SHADOWED, self._path(name))

    def _path(self, name: Any) -> str:
        return f"{self.label}.{name}" if isinstance(name, str) and name.isidentifier() else f"{self.label}[{name!r}]"

    def restore(self) -> None:
        recorded = dict(zip(self.names, self.values))
        for name in list(self.live.keys()):
            if name in recorded or name in self.skipped:
                continue
            if self.additions == "none" or name in _BUILTIN_NAMES:
                self._delete(name)
        for name, value in recorded.items():
            if self.live.get(name, _MISSING) is not value:
                self._set(name, value)

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


def _same_items(live: Mapping[str, Any], recorded: tuple[tuple[str, Any], ...]) -> bool:
    return len(live) == len(recorded) and all(live.get(k, _MISSING) is v for k, v in recorded)


def _contents(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:
        return _MISSING


@dataclass(frozen=True)
class Snapshot:
    """NumPy's and layercheck's functions as they were when `take()` ran (see the module)."""

    namespaces: tuple[_Namespace, ...]
    functions: tuple[_Function, ...]
    modules: tuple[tuple[str, types.ModuleType], ...]  # the watched entries of sys.modules
    unchanged: _Unchanged
    hot: _Unchanged  # NumPy's public namespaces only: looked at after every call of the layer

    @classmethod
    def take(cls) -> Snapshot:
        """NumPy's, CuPy's (if imported) and layercheck's functions as they are now (tens of
        milliseconds)."""
        return _Builder().build()

    def changes(self) -> tuple[Change, ...]:
        """What differs from the snapshot, in a stable order (empty when nothing)."""
        if self.unchanged.holds():
            return ()
        found: list[Change] = []
        for name, module in self.modules:
            if sys.modules.get(name) is not module:
                found.append(Change(ChangeKind.REPLACED, f"sys.modules[{name!r}]"))
        for namespace in self.namespaces:
            found.extend(namespace.changes())
        found.extend(Change(ChangeKind.REPLACED, f"the code of {f.label}") for f in self.functions if f.changed())
        return tuple(found)

    def restore(self) -> None:
        """Put every recorded name, module and function back as it was."""
        for name, module in self.modules:
            sys.modules[name] = module
        for namespace in self.namespaces:
            namespace.restore()
        for function in self.functions:
            if function.changed():
                function.restore()


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

    @classmethod
    def of(
        cls,
        namespaces: tuple[_Namespace, ...],
        functions: tuple[_Function, ...],
        modules: tuple[tuple[str, types.ModuleType], ...],
    ) -> _Unchanged:
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
        )

    def holds(self) -> bool:
        same = functools.partial(map, operator.is_)
        try:
            return (
                all(same(map(sys.modules.get, self.modules), self.module_objects))
                and self._sizes_hold()
                and all(same(itertools.chain.from_iterable(map(_call, self.getters, self.lives)), self.values))
                and all(same(map(_CODE, self.functions), self.codes))
                and all(same(map(_DEFAULTS, self.functions), self.defaults))
                and all(same(map(_KWDEFAULTS, self.functions), self.kwdefaults))
                and list(map(len, self.kw_dicts)) == list(self.kw_sizes)
                and all(same(map(operator.getitem, self.kw_owners, self.kw_names), self.kw_values))
                and all(same(map(_CONTENTS, self.cells), self.contents))
            )
        except (KeyError, ValueError):  # a name removed, a cell emptied
            return False

    def _sizes_hold(self) -> bool:
        """No name added, but to modules, and none there that hides a builtin (the recorded
        names are looked up next: one missing fails there)."""
        sizes = list(map(len, self.lives))
        if sizes == self.sizes:
            return True
        for space, size, recorded in zip(self.spaces, sizes, self.sizes):
            if size == recorded:
                continue
            if size < recorded or space.additions == "none":
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
        hot = tuple(n for n in namespaces if n.label in _HOT)
        return Snapshot(
            namespaces, functions, modules, _Unchanged.of(namespaces, functions, modules), _Unchanged.of(hot, (), ())
        )

    def _module(self, name: str, module: types.ModuleType) -> None:
        namespace = vars(module)
        skip = _DESCRIPTIVE | frozenset(namespace.get(_RUNTIME_GLOBALS, ()))
        if name == "builtins":
            skip |= _VOLATILE_BUILTINS
        self._add(name, module, namespace, "free", skip)
        own = name.partition(".")[0] == "layercheck"
        for attr, value in list(namespace.items()):
            if attr in skip:
                continue
            self._value(f"{name}.{attr}", value, own)
            if own and type(value) is dict:
                self._dict(f"{name}.{attr}", value)

    def _dict(self, label: str, table: dict[Any, Any]) -> None:
        """A module-level table of layercheck's (the registry): its entries, and the instances
        of layercheck's classes it holds (a check's `run`)."""
        if id(table) in self.seen:
            return
        self.seen.add(id(table))
        label = self.homes.get(id(table), label)
        self._add(label, table, table, "none")
        for key, value in list(table.items()):
            if _is_own_instance(value) and id(value) not in self.seen:
                self.seen.add(id(value))
                self._add(f"{label}[{key!r}]", value, vars(value), "none")

    def _value(self, label: str, value: Any, own: bool) -> None:
        if isinstance(value, type):
            if _mutable_class(value) and id(value) not in self.seen and _defined_in_watched(value):
                self.seen.add(id(value))
                self._add(_name_of(value, label), value, value.__dict__, "none", _DESCRIPTIVE)
                for member in list(vars(value).values()):
                    self._function(member)
            return
        if own and _is_own_instance(value) and id(value) not in self.seen:
            self.seen.add(id(value))
            self._add(label, value, vars(value), "none")
        self._function(value)

    def _function(self, value: Any) -> None:
        """Every Python function reachable in one step: the value itself, the function of a
        staticmethod/classmethod/property, what a decorator wrapped, NumPy's dispatchers'
        implementation."""
        for fn in _functions_of(value):
            if id(fn) not in self.functions:
                self.functions[id(fn)] = _Function.of(_name_of(fn, "a function"), fn)

    def _add(
        self, label: str, owner: Any, live: Mapping[str, Any], additions: str, skip: frozenset[str] = frozenset()
    ) -> None:
        items = [(k, v) for k, v in list(live.items()) if k not in skip]
        names, values = tuple(k for k, _ in items), tuple(v for _, v in items)
        self.namespaces.append(_Namespace(label, owner, live, names, values, additions, frozenset(skip)))


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
    return isinstance(module, str) and module.partition(".")[0] in _PACKAGES


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
    """The first change found: what, and where (`when`: "when it was imported", "during
    outputs_are_finite")."""

    changes: tuple[Change, ...]
    when: str

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

    The forkserver calls it once it has imported layercheck (`running.forkserver_preload`):
    each worker forked from it then starts from a snapshot it need not take itself, a few
    tens of milliseconds per worker (two per target: the discovery and the checks)."""
    _RECENT[:] = [Snapshot.take()]


class Guard:
    """The snapshot a target is judged under, verified after each step of the runner. A change
    found is put back at once (whatever runs next is layercheck's own code), and the first
    `Finding` is kept."""

    def __init__(self, snapshot: Snapshot):
        self._snapshot = snapshot
        self.where = AT_IMPORT  # the runner says where it is: the next change is found there
        self.first: Finding | None = None

    @classmethod
    def start(cls) -> Guard:
        """A guard over NumPy and layercheck as they are now: take it before the user's module
        is imported. The last snapshot is taken again only when something has changed since
        (the Python API checks many layers in one process)."""
        recent = _RECENT[0] if _RECENT else None
        if recent is None or recent.modules != _watched_modules() or recent.changes():
            recent = Snapshot.take()
            _RECENT[:] = [recent]
        guard = cls(recent)
        calls.guard(guard.after_call)
        return guard

    def stop(self) -> None:
        """The last look: the caller's session is left with the originals."""
        calls.guard(None)
        self.verify()

    def after_call(self) -> None:
        """After a call of the layer: NumPy's public names looked at, everything when one
        changed (so that what layercheck computes next is the original's)."""
        if not self._snapshot.hot.holds():
            self.verify()

    def verify(self, where: str | None = None) -> Finding | None:
        """Changes since the snapshot, put back; the finding, when there were any."""
        changes = self._snapshot.changes()
        if not changes:
            return None
        self._snapshot.restore()
        finding = Finding(changes, self.where if where is None else where)
        if self.first is None:
            self.first = finding
        return finding


def _attribute(value: Any, name: str) -> Any:
    if isinstance(value, types.ModuleType):
        return None
    try:
        return getattr(value, name, None)
    except Exception:  # noqa: BLE001 - an object of a watched module whose __getattr__ raises: nothing to follow
        return None
