"""Finding and constructing targets: `path.py`, `path.py:Name`, or a folder of modules."""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from layercheck.contract import calls, fresh
from layercheck.contract.adapter import is_operation, kind_of
from layercheck.contract.conventions import ConventionError, adopt, pair_names
from layercheck.contract.entries import EntryKind, inspect_entry
from layercheck.contract.layout import Layout
from layercheck.errors import TargetError, UsageError
from layercheck.interrupts import reraise_if_interrupt
from layercheck.safetext import exception_text, safe_repr
from layercheck.status import Kind
from layercheck.userframes import exception_summary, user_traceback

__all__ = [
    "REPRODUCER_MARK",
    "Adopted",
    "Convention",
    "Target",
    "adopted",
    "constructor",
    "discover",
    "import_module",
    "is_declared_function",
    "is_layer_class",
    "is_reproducer",
    "load_targets",
    "pairs_in",
    "parse_args",
    "parse_target_spec",
]


@dataclass(frozen=True)
class Convention:
    """How a target not written to DESIGN.md section 3 is checked (section 11), as the user
    gave it: the backward of a function pair whose name does not say it (`--backward`), or the
    mapping of a class that keeps its gradients (a config entry's `convention:`). A pair named
    `NAME_forward` with a `NAME_backward` needs neither: it is found by its names."""

    backward: str | None = None
    keeps_gradients: Mapping[str, Any] | None = None

    def to_data(self) -> dict[str, Any]:
        return {
            "backward": self.backward,
            "keeps_gradients": None if self.keeps_gradients is None else dict(self.keeps_gradients),
        }


NO_CONVENTION = Convention()


@dataclass(frozen=True)
class Target:
    """One layer (a class with `predict`, or a plain function) or operation (a class with
    `forward` and `backward`) found in a user's module."""

    label: str
    path: Path
    name: str
    obj: Any  # the class or function; a pair's forward
    convention: Convention = NO_CONVENTION
    pair: tuple[str, str] | None = None  # a function pair's (forward, backward) names
    module: ModuleType | None = None  # where a convention finds its functions and class

    @property
    def kind(self) -> Kind:
        # A pair and a class that keeps its gradients are checked as layers (`conventions`).
        if self.pair is not None or self.convention.keeps_gradients is not None:
            return Kind.LAYER
        return kind_of(self.obj)

    def adopted(self, layouts: Sequence[Layout], args: Mapping[str, Any]) -> Adopted:
        """What is checked, and at which input layouts: the layer of section 3 its convention
        makes of the target, or the target itself (TargetError for one that does not fit)."""
        if self.pair is None and self.convention.keeps_gradients is None:
            return Adopted(self.obj, tuple(layouts), None)
        assert self.module is not None, "a target of a convention is made by named_target"
        return adopted(vars(self.module), self.name, self.pair, self.convention, layouts, args, self.label)

    @property
    def is_class(self) -> bool:
        return inspect.isclass(self.obj)

    @property
    def example_layout(self) -> Any:
        return getattr(self.obj, "example_layout", None)

    def factory(self, args: Mapping[str, Any] | None = None) -> Callable[[], Any]:
        """A callable that builds a fresh layer; errors become TargetError with user frames."""
        args = dict(args or {})
        if not self.is_class:
            if args:
                raise TargetError(
                    f"{self.label} is a plain function and takes no constructor arguments ({', '.join(args)}); "
                    "if it is the forward of a function pair with a cache, name its backward with --backward NAME"
                )
            return lambda: self.obj
        return constructor(self.obj, args)


@dataclass(frozen=True)
class Adopted:
    """A target as it is checked: `obj` (the user's, or the layer a convention makes of it),
    its input layouts, and the convention's plain data (None: none), which a reproducer
    rebuilds the same layer from (`conventions.adopt`)."""

    obj: Any
    layouts: tuple[Layout, ...]
    convention: dict[str, Any] | None


def adopted(
    names: Mapping[str, Any],
    name: str,
    pair: tuple[str, str] | None,
    convention: Convention,
    layouts: Sequence[Layout],
    args: Mapping[str, Any],
    label: str | None = None,
) -> Adopted:
    """The layer of section 3 a convention makes of the target `name` of the namespace
    `names` (a function pair's `pair` of names, else a class by `convention`), and its input
    layouts; from the plain data a reproducer rebuilds it from. TargetError (after `label`,
    where given) for a target that does not fit its convention."""
    data: dict[str, Any]
    if pair is not None:
        data = {
            "pair": list(pair),
            "layouts": [
                [list(layout.size), layout.format, None if layout.integer is None else list(layout.integer)]
                for layout in layouts
            ],
            "given": sorted(args),
        }
    else:
        data = {"keeps_gradients": dict(convention.keeps_gradients or {})}
    try:
        layer = adopt(names, name, data)
    except ConventionError as exc:
        raise TargetError(str(exc) if label is None else f"{label}: {exc}") from None
    indices = getattr(layer, "input_indices", range(len(layouts)))
    return Adopted(layer, tuple(layouts[i] for i in indices), data)


def constructor(cls: type, args: Mapping[str, Any]) -> Callable[[], Any]:
    """`cls(**args)` as a factory whose errors are TargetErrors with the user's frames."""

    def build() -> Any:
        try:
            return calls.run(lambda: cls(**args))
        except BaseException as exc:  # the user's constructor: KeyboardInterrupt is its own too
            reraise_if_interrupt(exc)
            raise TargetError(
                f"constructing {cls.__name__} raised {exception_summary(exc)}", user_traceback(exc)
            ) from None

    build.args = dict(args)  # type: ignore[attr-defined]  # read by the report's notes
    return build


# The attributes layercheck reads as the layer's contract, and what each means to it.
CONTRACT_ATTRIBUTES = {
    "num_inputs": "its number of inputs",
    "num_outputs": "its number of outputs",
    "num_memory_values": "its number of memory values",
    "learnables": "the names of its learnables",
    "state": "the names of its state",
    "input_domain": "the domain of its inputs",
    "output_format": "the format of its outputs",
    "example_layout": "its example layout",
    "save_inputs_for_backward": "whether backward gets the inputs",
    "save_outputs_for_backward": "whether backward gets the outputs",
}


def contract_collisions(obj: Any, args: Mapping[str, Any]) -> list[str]:
    """Constructor arguments that set an attribute layercheck reads as the contract, in words
    (`--arg num_outputs=10` may mean ten classes to the user and ten outputs to layercheck)."""
    found = []
    for name, value in args.items():
        if name in CONTRACT_ATTRIBUTES and name in getattr(obj, "__dict__", {}) and obj.__dict__[name] is value:
            found.append(
                f"the constructor argument {name}={safe_repr(value, 80)} set the attribute {name}, which layercheck reads as "
                f"{CONTRACT_ATTRIBUTES[name]}"
            )
    return found


def missing_target(spec: str) -> str:
    """Why the target `spec` names nothing, in one line: no such file or folder, or what was
    meant where the file is there (a pytest node id `path.py::Name`; `path.py:` with no name)."""
    head, sep, tail = spec.partition("::")
    if sep and os.path.isfile(head):
        name = tail.split("::")[0].split("[")[0]
        return f"target {spec!r}: a pytest node id; layercheck names a layer {head}:{name}"
    if spec.endswith(":") and os.path.isfile(spec[:-1]):
        return f"target {spec!r}: no name after ':' (give path.py:Name, or path.py for every layer in it)"
    return f"target {spec!r}: no such file or folder"


def parse_target_spec(spec: str) -> tuple[Path, str | None]:
    """Split `path.py:Name` (the name is optional)."""
    path_text, name = spec, None
    head, sep, tail = spec.rpartition(":")
    if sep and head and tail.isidentifier() and not os.path.exists(spec):
        path_text, name = head, tail
    return Path(path_text), name


def import_module(path: Path) -> ModuleType:
    """Import a user's module from its file, with its folder importable for siblings.

    The module, and every module of the user's tree imported from then on in this process
    (its siblings, and those its layer imports while it runs), is compiled from its current
    source, never from a `.pyc`, and no bytecode is written beside it (`contract.fresh`).
    """
    try:
        path = path.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop: RuntimeError before Python 3.13
        raise TargetError(f"cannot import {path.name}: {exception_text(exc)}") from None
    digest = hashlib.sha1(os.fsencode(path)).hexdigest()[:10]  # any file name, undecodable bytes too
    stem = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in path.stem)
    module_name = f"{fresh.MODULE_PREFIX}{stem}_{digest}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    package = _package_of(path)
    if package is not None:
        module = _import_in_package(path, *package)
        if module is not None:
            return module
    fresh.install()
    spec = importlib.util.spec_from_file_location(
        module_name, path, loader=fresh.SourceOnlyLoader(module_name, str(path))
    )
    if spec is None or spec.loader is None:
        raise TargetError(f"cannot import {path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    folder = str(path.parent)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        calls.run(spec.loader.exec_module, module)
    except BaseException as exc:
        del sys.modules[module_name]
        reraise_if_interrupt(exc)
        raise TargetError(f"importing {path.name} raised {exception_summary(exc)}", user_traceback(exc)) from None
    finally:
        if added:
            sys.path.remove(folder)
    return module


def _package_of(path: Path) -> tuple[Path, str] | None:
    """Where a module of a package is imported from, and its dotted name (`pkg.sub.mod` of
    `ROOT/pkg/sub/mod.py`, each folder holding an `__init__.py`): as `import pkg.sub.mod` would
    import it, its relative imports resolved. None outside a package."""
    parts, folder = [path.stem], path.parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        parts.append(folder.name)
        folder = folder.parent
    if len(parts) == 1 or path.name == "__init__.py" or not all(part.isidentifier() for part in parts):
        return None
    return folder, ".".join(reversed(parts))


def _import_in_package(path: Path, root: Path, dotted: str) -> ModuleType | None:
    """The module of a package imported by its dotted name, from `root` (its folder put on
    sys.path too, for siblings imported by their own names); None where another package of its
    top name is imported already, or the name finds another file (the caller then imports the
    file on its own, its relative imports unresolved)."""
    top = dotted.partition(".")[0]
    held = sys.modules.get(top)
    if held is not None and str(root / top) not in [os.path.normpath(p) for p in getattr(held, "__path__", ())]:
        return None
    fresh.install()
    added = [folder for folder in dict.fromkeys((str(root), str(path.parent))) if folder not in sys.path]
    sys.path[:0] = added
    try:
        module = calls.run(importlib.import_module, dotted)
    except BaseException as exc:
        reraise_if_interrupt(exc)
        raise TargetError(f"importing {path.name} raised {exception_summary(exc)}", user_traceback(exc)) from None
    finally:
        for folder in added:
            sys.path.remove(folder)
    found = getattr(module, "__file__", None)
    return module if found is not None and Path(found).resolve() == path else None


def is_layer_class(obj: Any) -> bool:
    """A class with `predict` (a layer) or with `forward` and `backward` (an operation); not an
    abstract base class (abstract methods left) nor a `typing.Protocol`, which declare what
    their subclasses define and cannot be made themselves."""
    if not inspect.isclass(obj) or inspect.isabstract(obj) or getattr(obj, "_is_protocol", False) is True:
        return False
    return callable(getattr(obj, "predict", None)) or is_operation(obj)


def is_declared_function(obj: Any) -> bool:
    """A plain function that declares `example_layout`: a layer target when found in a module."""
    return inspect.isfunction(obj) and getattr(obj, "example_layout", None) is not None


# A module global every reproducer script defines (`reproducers/harness_script.py`): a folder
# checked with the reproducers written into it (`--repro DIR`) has no layer in them.
REPRODUCER_MARK = "LAYERCHECK_REPRODUCER"


def is_reproducer(module: ModuleType) -> bool:
    """Whether `module` is a reproducer script that `layercheck run --repro` wrote."""
    return vars(module).get(REPRODUCER_MARK) is True


def discover(module: ModuleType) -> list[tuple[str, Any]]:
    """The layers and operations a module defines (not the ones it imports), in source order:
    classes with `predict`, classes with `forward` and `backward`, and plain functions that
    declare `example_layout` (other functions are helpers). None in a reproducer script."""
    if is_reproducer(module):
        return []
    found = [
        (name, obj)
        for name, obj in vars(module).items()
        if not name.startswith("_")
        and (is_layer_class(obj) or is_declared_function(obj))
        and getattr(obj, "__module__", None) == module.__name__
    ]
    return sorted(found, key=lambda item: _source_line(item[1]))


def _source_line(obj: Any) -> int:
    try:
        return inspect.getsourcelines(obj)[1]
    except Exception:  # noqa: BLE001 - no source (OSError, TypeError), or a metaclass whose __name__ raises
        return 0


def load_targets(spec: str, convention: Convention = NO_CONVENTION) -> list[Target]:
    """The targets named by `path.py`, `path.py:Name` or a folder; a named function pair
    (`path.py:NAME_forward`, or `path.py:NAME` when both functions exist) or a class checked
    by `convention`.

    Raises UsageError for a path that does not exist (bad usage of the tool) and TargetError
    for a module that cannot be imported or names nothing checkable.
    """
    path, name = parse_target_spec(spec)
    entry = inspect_entry(path)
    if entry.kind is EntryKind.MISSING:
        raise UsageError(missing_target(spec))
    if entry.kind is not EntryKind.FILE and entry.kind is not EntryKind.FOLDER:
        raise UsageError(f"target {spec!r} {entry.problem}")
    if entry.kind is EntryKind.FOLDER or path.suffix != ".py":
        raise UsageError(f"target {spec!r} is not a .py file")
    module = import_module(path)
    if is_reproducer(module):
        shown = os.path.relpath(path)
        shown = str(path) if shown.startswith("..") else shown
        raise TargetError(f"{path.name} is a reproducer that layercheck wrote, not a layer: run it with python {shown}")
    if name is not None:
        return [named_target(module, path, name, spec, convention)]
    layers = discover(module)
    if not layers:
        raise TargetError(_nothing_found(module, path))
    if len(layers) == 1:
        return [Target(str(path), path, layers[0][0], layers[0][1])]
    return [Target(f"{path}:{n}", path, n, obj) for n, obj in layers]


def named_target(
    module: ModuleType, path: Path, name: str, label: str, convention: Convention = NO_CONVENTION
) -> Target:
    """The target `name` of `module`: a layer, an operation, a function, a function pair, or
    a class checked by `convention` (TargetError: none of these)."""
    names = vars(module)
    obj = names.get(name)
    if convention.keeps_gradients is not None:
        if not inspect.isclass(obj):
            raise TargetError(f"{path.name}:{name} is not a class; a `convention:` maps the methods of a class")
        return Target(label, path, name, obj, convention, module=module)
    pair = pair_names(names, name, convention.backward)
    if pair is not None:
        return Target(label, path, name, names[pair[0]], convention, pair, module)
    if convention.backward is not None:
        missing = (
            name
            if not inspect.isfunction(obj) and not inspect.isfunction(names.get(f"{name}_forward"))
            else convention.backward
        )
        raise TargetError(
            f"{path.name} defines no function {missing!r} (the pair {name} with the backward {convention.backward})"
        )
    if obj is None:
        defined = ", ".join([found for found, _ in discover(module)] + [forward for forward, _ in pairs_in(module)])
        raise TargetError(
            f"{path.name} defines no {name!r}; "
            + (
                f"it defines {defined} (give {path.name}:NAME, or the file alone for all)"
                if defined
                else "it defines no layer"
            )
        )
    if not (is_layer_class(obj) or inspect.isfunction(obj)):
        raise TargetError(
            f"{path.name}:{name} is not a layer class (with predict), an operation (with forward and backward) or a function"
        )
    return Target(label, path, name, obj)


def pairs_in(module: ModuleType) -> list[tuple[str, str]]:
    """The function pairs a module defines (`NAME_forward` with `NAME_backward`, or `NAME` with
    a `NAME_backward` that takes a cache), in source order."""
    names = vars(module)
    found = []
    for name, obj in names.items():
        if inspect.isfunction(obj) and getattr(obj, "__module__", None) == module.__name__:
            pair = pair_names(names, name) if "forward" in name or f"{name}_backward" in names else None
            if pair is not None:
                found.append((pair, _source_line(obj)))
    return [pair for pair, _ in sorted(found, key=lambda item: item[1])]


def _nothing_found(module: ModuleType, path: Path) -> str:
    pairs = pairs_in(module)
    if pairs:
        shown = ", ".join(forward for forward, _ in pairs[:4]) + (", ..." if len(pairs) > 4 else "")
        return (
            f"{path.name} defines no layer, but function pairs with a cache ({shown}): name one, as "
            f"{path.name}:{pairs[0][0]}, with one --layout per array argument (see `layercheck list-targets {path.name}`)"
        )
    return (
        f"{path.name} defines no layer (a class with a predict method, or a function with "
        f"example_layout) and no operation (a class with forward and backward); "
        f"name a plain function as {path.name}:function_name"
    )


def parse_args(pairs: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """`--arg NAME=VALUE` pairs, with values read as YAML scalars (`3`, `1.0e-3`, `true`, `SSCB`)."""
    args: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise UsageError(f"--arg {pair!r} is not NAME=VALUE with NAME a Python identifier")
        try:
            parsed = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError:
            raise UsageError(f"--arg {pair!r}: the value is not valid YAML (3, 1e-3, name, {{key: value}})") from None
        if isinstance(parsed, str):
            parsed = _number_or_string(parsed)
        args[key] = parsed
    return args


def _number_or_string(text: str) -> Any:
    # YAML 1.1 reads 1e-4 as a string; users mean the number.
    try:
        return float(text) if any(c in text for c in ".eE") else text
    except ValueError:
        return text
