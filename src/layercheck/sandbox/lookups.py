"""Which names of a namespace the code layercheck runs looks up (DESIGN.md section 7: a change
made by a layer is judged by its effect, never by its surface).

A layer may rebind a name of a public namespace (`np.long = int`, `np.load` wrapped to allow
pickles) for reasons of its own. That changes what layercheck computes only where some code
that runs while a verdict is computed looks that name up at run time: layercheck's own
functions (`np.isfinite(y)`, `xp.abs(d)`), and NumPy's (`np.bool` in `numpy._core._dtype`,
which a replaced `np.bool` breaks). `Lookups.reader` finds such a function from the bytecode
of the functions given (those of the watched modules: `sandbox.integrity`):

- `NAME` loaded as a global by a function whose globals are the namespace (or, for
  `builtins`, by any function whose globals lack it; `__import__` and `__build_class__`,
  which the interpreter looks up itself, always count);
- `.NAME` loaded as an attribute of the namespace's module: `np.NAME`, `numpy.random.NAME`,
  `from numpy import NAME` inside a function. The object the attribute is read from is
  resolved where the bytecode says it for certain (a global, a closure's cell, an attribute
  of a module so resolved, a method's `self` or `cls`, which is never a module): then the
  reader is certain. Where it does not (a local variable such as `xp`, the result of a call,
  a value that more than one path of the code reaches), the object may be the module where
  code is handed modules as values: layercheck's own, whose numerics take their array module
  as `xp`, and only for the namespaces handed around so (NumPy's and CuPy's). NumPy's and the
  standard library's code reach those through their module globals, which are resolved;
- `NAME` as a string constant of such code that calls `getattr`, `hasattr`, `attrgetter` or
  `methodcaller`: a lookup the bytecode cannot place, which may read it too.

The answer errs one way only: a name is taken as looked up whenever that cannot be ruled
out, and the reader named says whether it certainly reads it (`Reader`). It is computed when
a change is found, not before (most runs find none): an index of the names each code object
mentions, then the bytecode of those that mention the name.
"""

from __future__ import annotations

import builtins
import dis
import opcode
import operator
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from layercheck.sandbox.own import OWN_BUILTINS

# Builtins resolved in the sandbox's own copy (`sandbox.own`): what a layer writes to
# `builtins` never reaches the code that looks for it.
__builtins__ = OWN_BUILTINS  # type: ignore[assignment]  # noqa: A001

__all__ = ["Lookups", "Reader"]

_ATTRIBUTE = frozenset({"LOAD_ATTR", "LOAD_METHOD", "IMPORT_FROM"})
_GLOBAL = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})
_DEREF = frozenset({"LOAD_DEREF", "LOAD_CLASSDEREF"})
_FAST = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW"})
# The first parameter of a method by these names is its instance or its class: `self.timezone`
# reads an attribute of an object, not of the `time` module.
_INSTANCE = frozenset({"self", "cls"})
# Instructions that leave the value an attribute is read from where it was.
_TRANSPARENT = frozenset({"CACHE", "EXTENDED_ARG", "NOP", "PUSH_NULL", "PRECALL", "RESUME"})
# The interpreter looks these up in builtins itself: `import` and `class` statements.
_IMPLICIT_BUILTINS = frozenset({"__import__", "__build_class__"})
# A string constant of a function that calls one of these may be an attribute's name.
_DYNAMIC = frozenset({"getattr", "hasattr", "attrgetter", "methodcaller"})
# The bytecode reader, bound before any code of a layer's runs: a layer that rebinds
# `dis.get_instructions` is found (the integrity guard watches `dis` whole) but must not be
# what judges the other changes it made in the same breath.
_instructions = dis.get_instructions
_UNKNOWN = object()  # a value the bytecode does not determine
_ELSEWHERE = object()  # a module known not to be the one asked about
_SELF = object()  # a method's own instance or class: never a module, perhaps an instance of the class asked about


@dataclass(frozen=True)
class Reader:
    """A function that looks a name up: `certain` where the bytecode names the namespace it
    reads from; else it reads the name from an object the bytecode does not name, which may
    be the namespace's module (`xp.load`)."""

    function: str
    certain: bool

    def __str__(self) -> str:
        return (
            self.function
            if self.certain
            else f"{self.function} (perhaps: it reads that name from an object it is given)"
        )


class Lookups:
    """The lookups of the code of the functions `functions()` returns, asked for once a
    question needs them (see the module). `holders(fn)`: whether `fn`'s code may be handed a
    module as a value (layercheck's `xp`): only there does a name read from an object the
    bytecode does not name count, and only for a namespace that is handed around so (`as_value`)."""

    def __init__(
        self,
        functions: Callable[[], Iterable[types.FunctionType]],
        holders: Callable[[types.FunctionType], bool] = lambda fn: True,
        modules: Callable[[], Mapping[str, types.ModuleType]] = lambda: {},
    ):
        self._functions = functions
        self._holders = holders
        self._modules = modules
        self._index: dict[str, list[tuple[types.FunctionType, types.CodeType]]] | None = None
        self._dynamic: dict[str, str] | None = None
        self._answers: dict[tuple[int, str, bool, bool, bool], Reader | None] = {}

    def reader(
        self,
        namespace: Mapping[str, Any],
        module: Any,
        name: str,
        globals_only: bool = False,
        as_value: bool = True,
        instances: bool = False,
    ) -> Reader | None:
        """A function that looks `name` up in `namespace` (the `__dict__` of `module`, when it
        is a module's), or None when none does; one that certainly does first. `globals_only`:
        as a global of the namespace's own functions only (what a global added to a module that
        hides a builtin changes). `as_value`: the module may be handed around as a value (an
        array module, `xp`), so that a name read from an object the code does not name may be
        read from it. `instances`: `module` is a class, whose names are read through the class,
        a subclass or any instance, by any code."""
        key = (id(namespace), name, globals_only, as_value, instances)
        if key not in self._answers:
            owner = None if globals_only else module
            self._answers[key] = self._find(namespace, owner, name, globals_only, as_value, instances)
        return self._answers[key]

    def _find(
        self,
        namespace: Mapping[str, Any],
        module: Any,
        name: str,
        globals_only: bool,
        as_value: bool,
        instances: bool = False,
    ) -> Reader | None:
        if not _same_tables(_tables(), _TABLES):  # the reader's own tables changed in place: not to be trusted
            return Reader("the bytecode reader itself, whose tables the layer changed", True)
        is_builtins = namespace is vars(builtins)
        if is_builtins and name in _IMPLICIT_BUILTINS:
            return Reader("the interpreter (import and class statements)", True)
        index, dynamic = self._built()
        possible: Reader | None = None
        for fn, code in index.get(name, ()):
            if globals_only and fn.__globals__ is not namespace:
                continue
            unnamed = as_value and not globals_only and self._holders(fn)
            found = _looks_up(
                fn, code, namespace, module, name, is_builtins, globals_only, unnamed, instances, self._modules()
            )
            if found is _CERTAIN:
                return Reader(_qualified(fn), True)
            if found is _POSSIBLE and possible is None:
                possible = Reader(_qualified(fn), False)
        if possible is None and module is not None and (as_value or instances) and name in dynamic:
            possible = Reader(dynamic[name], False)
        return possible

    def _built(self) -> tuple[dict[str, list[tuple[types.FunctionType, types.CodeType]]], dict[str, str]]:
        if self._index is None or self._dynamic is None:
            index: dict[str, list[tuple[types.FunctionType, types.CodeType]]] = {}
            dynamic: dict[str, str] = {}
            for fn in self._functions():
                holder = self._holders(fn)
                for code in _codes(fn.__code__):
                    for name in code.co_names:
                        index.setdefault(name, []).append((fn, code))
                    if holder and not _DYNAMIC.isdisjoint(code.co_names):
                        for constant in code.co_consts:
                            if type(constant) is str and constant.isidentifier():
                                dynamic.setdefault(constant, _qualified(fn))
            self._index, self._dynamic = index, dynamic
        return self._index, self._dynamic


def _tables() -> tuple[tuple[str, tuple[Any, ...]], ...]:
    """The members of the tables `dis` and `opcode` read bytecode with (an opcode's name, which
    ones jump...), flat (a dict's keys and values in turn). A layer that changes one in place
    (`opcode.opname[...] = ...`) makes every name read (`Lookups.reader`: the answer errs one
    way only). They are compared by identity (`_same_tables`): no code of the layer's runs."""
    found = []
    for module in (dis, opcode):
        for name, value in sorted(vars(module).items()):
            if name == "__builtins__":
                continue
            if type(value) is dict:
                found.append((f"{module.__name__}.{name}", tuple(part for item in value.items() for part in item)))
            elif type(value) in (list, tuple, set, frozenset):
                found.append((f"{module.__name__}.{name}", tuple(value)))
    return tuple(found)


def _same_tables(now: tuple[tuple[str, tuple[Any, ...]], ...], then: tuple[tuple[str, tuple[Any, ...]], ...]) -> bool:
    return len(now) == len(then) and all(
        a == b and len(x) == len(y) and all(map(operator.is_, x, y)) for (a, x), (b, y) in zip(now, then)
    )


_TABLES = _tables()


def _codes(code: types.CodeType) -> list[types.CodeType]:
    """`code` and the code objects nested in it (comprehensions, inner functions, lambdas)."""
    found = [code]
    for nested in found:
        found.extend(c for c in nested.co_consts if isinstance(c, types.CodeType))
    return found


def _qualified(fn: types.FunctionType) -> str:
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    return f"{module}.{qualname}" if isinstance(module, str) and isinstance(qualname, str) else "a function"


_CERTAIN, _POSSIBLE = "certain", "possible"


def _looks_up(
    fn: types.FunctionType,
    code: types.CodeType,
    namespace: Mapping[str, Any],
    module: Any,
    name: str,
    is_builtins: bool,
    globals_only: bool = False,
    unnamed: bool = True,
    instances: bool = False,
    modules: Mapping[str, types.ModuleType] | None = None,
) -> str | None:
    """Whether an instruction of `code` (of `fn`, or nested in it) looks `name` up in `namespace`
    (as a global only, with `globals_only`): `_CERTAIN`, `_POSSIBLE` (from an object the
    bytecode does not name, which counts only where `unnamed`), or None. With `instances`,
    `module` is a class, read from through itself, a subclass, or any instance (an object the
    bytecode does not name, a method's `self`), in any code."""
    own_globals = fn.__globals__ is namespace
    modules = {} if modules is None else modules
    value: Any = _UNKNOWN  # what the last instruction that pushed a value pushed
    imported: Any = _UNKNOWN  # what the last IMPORT_NAME pushed (IMPORT_FROM reads it)
    dotted = False  # whether it was `import a.b as c` (IMPORT_FROM then reads down the names)
    constants: list[Any] = [_UNKNOWN, _UNKNOWN]  # the last two LOAD_CONSTs: an import's level, fromlist
    possible = False
    for ins in _instructions(code):
        op = ins.opname
        if op in _TRANSPARENT:
            continue
        if _is_jump_target(ins):
            value = _UNKNOWN  # reached from more than one place: the value is not known
        if op == "LOAD_CONST":
            constants = [constants[1], ins.argval]
        if op in _GLOBAL:
            if ins.argval == name and (own_globals or (is_builtins and name not in fn.__globals__)):
                return _CERTAIN
            value = _global(fn, ins.argval)
        elif op in _ATTRIBUTE:
            receiver = imported if op == "IMPORT_FROM" else value
            if not globals_only and ins.argval == name:
                if module is not None and (receiver is module or (instances and _subclass(receiver, module))):
                    return _CERTAIN
                possible = (
                    possible or (receiver is _UNKNOWN and (unnamed or instances)) or (instances and receiver is _SELF)
                )
            value = vars(receiver).get(ins.argval, _UNKNOWN) if isinstance(receiver, types.ModuleType) else _UNKNOWN
            if op == "IMPORT_FROM" and dotted:  # `import a.b.c as d`: each name read from the last
                imported = value
        elif op == "IMPORT_NAME":
            # `from a.b import c` reads from a.b; `import a.b [as d]` pushes the package a.
            dotted = constants[1] is None
            value = imported = _imported(fn, ins.argval, constants[0], dotted, modules, module)
        elif op in _DEREF:
            value = _cell(fn, code, ins.argval)
        elif op in _FAST and ins.argval in _INSTANCE and code.co_argcount and code.co_varnames[0] == ins.argval:
            value = _SELF
        else:
            value = _UNKNOWN
    return _POSSIBLE if possible else None


def _subclass(value: Any, cls: Any) -> bool:
    return isinstance(value, type) and isinstance(cls, type) and issubclass(value, cls)


def _is_jump_target(ins: dis.Instruction) -> bool:
    target = getattr(ins, "is_jump_target", None)  # Python 3.10 to 3.13
    if target is None:
        target = getattr(ins, "label", None) is not None  # Python 3.14 marks targets with labels
    return bool(target)


def _global(fn: types.FunctionType, name: str) -> Any:
    namespace = fn.__globals__
    if name in namespace:
        return namespace[name]
    table = getattr(fn, "__builtins__", None)  # Python 3.10+: the builtins the function was made with
    return (table if isinstance(table, dict) else vars(builtins)).get(name, _UNKNOWN)


def _imported(
    fn: types.FunctionType,
    name: str,
    level: Any,
    dotted: bool,
    modules: Mapping[str, types.ModuleType],
    module: Any = None,
) -> Any:
    """What an import inside `fn` pushes, as far as these questions go: the module of `modules`
    (those watched, as the snapshot recorded them) it names, another module where it names
    none of them, unknown where its level is not known. For `import a.b` (`dotted`) that is
    the package `a`; `module`, the one asked about, where `modules` lacks it. An import
    resolves through `sys.modules` when it runs, which `sandbox.integrity` keeps as recorded."""
    if type(level) is not int or level < 0:
        return _UNKNOWN
    if level > 0:
        package = fn.__globals__.get("__package__")
        if type(package) is not str or package.count(".") < level - 1:
            return _UNKNOWN
        base = package.rsplit(".", level - 1)[0] if level > 1 else package
        name = f"{base}.{name}" if name else base
    if dotted:
        name = name.partition(".")[0]
    if name in modules:
        return modules[name]
    return module if isinstance(module, types.ModuleType) and name == module.__name__ else _ELSEWHERE


def _cell(fn: types.FunctionType, code: types.CodeType, name: str) -> Any:
    """The contents of the closure's cell `name` of `fn` itself (a nested code's cells are
    not known here)."""
    if code is not fn.__code__ or not fn.__closure__ or name not in code.co_freevars:
        return _UNKNOWN
    try:
        return fn.__closure__[code.co_freevars.index(name)].cell_contents
    except (ValueError, IndexError):
        return _UNKNOWN
