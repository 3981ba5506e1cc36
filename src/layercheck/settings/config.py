"""`--config FILE`: defaults and targets in YAML (DESIGN.md section 2), validated up front.

The file is read with `yaml.safe_load` only. Every problem is a UsageError of one line that
names the file, the key path and what is allowed:

    configs/ci.yaml: targets[1].layout[0]: layout '24,24:SSCB' has 2 size(s) but format ...

This module reads files and their structure only (the keys, the targets, their paths,
layouts and constructor arguments); every setting's value goes through
`settings.options.parse_settings`, the validator the command line and the API use too, so a
bad value reads the same wherever it was given. Check names are validated against the list
the caller hands in (`check_names`), so that settings never import the checks.

Validation is a handful of small functions rather than a schema library: the rules need
coercions a schema cannot express well (YAML 1.1 reads `1e-4` as a string; layouts are
strings, mappings or lists of them; paths are relative to the config file), and each message
should say what is allowed in the user's terms rather than in the validator's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from layercheck.contract.conventions import KEEPS_GRADIENTS_KEYS
from layercheck.contract.entries import EntryKind, inspect_entry
from layercheck.contract.layout import Layout
from layercheck.contract.loading import NO_CONVENTION, Convention
from layercheck.errors import UsageError
from layercheck.settings.options import (
    IN_TARGETS,
    SETTING_KEYS,
    TARGET_KEYS,
    TOP_KEYS,
    Settings,
    parse_input_layouts,
    parse_settings,
)
from layercheck.settings.values import SCIENTIFIC, Invalid, Problems, check_keys, show

__all__ = [
    "CONFIG_REFERENCE",
    "Config",
    "TargetEntry",
    "keeps_gradients_mapping",
    "load_config",
    "parse_config",
    "parse_config_text",
]

# The page of the documentation that describes every key of a config file, relative to the
# repository; `layercheck run --help` cites it by this name, and the README links to it.
CONFIG_REFERENCE = "docs/configuration.md"


@dataclass(frozen=True)
class TargetEntry:
    """One item of `targets`: what to check, with which layouts, arguments and settings."""

    where: str  # its key path, e.g. "targets[2]", for messages
    target: str  # as written in the file
    path: Path  # resolved against the config file's folder
    name: str | None  # the class or function after `path.py:`
    layouts: tuple[Layout, ...] | None = None
    args: Mapping[str, Any] = field(default_factory=dict)
    settings: Settings = Settings()
    convention: Convention = NO_CONVENTION  # `backward:` of a pair, `convention:` of a class

    def matches(self, path: Path, name: str) -> int:
        """How specifically this entry names the target `name` in file `path`: 3 by class
        name, 2 by file, 1 by a folder above it, 0 not at all."""
        path = path.resolve()
        if self.path == path:
            return 3 if self.name == name else (2 if self.name is None else 0)
        return 1 if self.path in path.parents else 0


@dataclass(frozen=True)
class Config:
    source: str
    defaults: Settings = Settings()
    targets: tuple[TargetEntry, ...] = ()

    def entry_for(self, path: Path, name: str) -> TargetEntry | None:
        """The most specific entry naming a target (the first of equals), or None."""
        best, score = None, 0
        for entry in self.targets:
            s = entry.matches(path, name)
            if s > score:
                best, score = entry, s
        return best


# -- reading -----------------------------------------------------------------------------


def load_config(path: str | os.PathLike[str], *, check_names: Sequence[str]) -> Config:
    """Read and validate a config file; paths in it are relative to its folder.

    `check_names` are the names `checks` and `skip` accept (the registry's, handed in: settings
    never import the checks they configure)."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"config {source!r}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"config {source!r} cannot be read: {exc}") from None
    return parse_config_text(text, source=source, base=Path(path).resolve().parent, check_names=check_names)


# A config is a few hundred lines; these budgets are far above any real one and far below what
# hurts. A YAML alias is a reference: nine levels of ten aliases each are a 545-byte file that
# expands to a billion values when anything walks it (a message that prints a value, say).
MAX_CONFIG_CHARS = 1_000_000
MAX_CONFIG_NODES = 100_000  # values, counted with every alias expanded


class _Loader(yaml.SafeLoader):
    """`yaml.SafeLoader` that refuses a mapping with a key given twice (PyYAML keeps the last,
    silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        # The mapping's own keys: those a `<<: *defaults` merge key brings in may be overridden.
        own = [key_node for key_node, _ in node.value if key_node.tag != "tag:yaml.org,2002:merge"]
        seen: dict[Any, yaml.Node] = {}
        for key_node in own:
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node)
            except TypeError:  # an unhashable key: construct_mapping says so below
                continue
            if first is not key_node:
                line = key_node.start_mark.line + 1
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"key {show(key)} appears twice in one mapping (line {first.start_mark.line + 1} and line {line})",
                    key_node.start_mark,
                )
        return super().construct_mapping(node, deep=deep)


def _expanded_size(node: yaml.Node, budget: int) -> int:
    """How many values `node` holds with every alias expanded, counted up to just past
    `budget` (each shared node is counted once per reference, in time proportional to the
    distinct nodes)."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(n: yaml.Node) -> int:
        key = id(n)
        if key in sizes:
            return sizes[key]
        if key in active:  # a recursive alias: unbounded
            return budget + 1
        active.add(key)
        total = 1
        if isinstance(n, yaml.SequenceNode):
            children = n.value
        elif isinstance(n, yaml.MappingNode):
            children = [child for pair in n.value for child in pair]
        else:
            children = []
        for child in children:
            total += size(child)
            if total > budget:
                break
        active.discard(key)
        sizes[key] = min(total, budget + 1)
        return sizes[key]

    return size(node)


def _load_yaml(text: str) -> Any:
    """The document, loaded safely within the size budgets (UsageError past them)."""
    if len(text) > MAX_CONFIG_CHARS:
        raise UsageError(f"is {len(text):,} characters long; a config may have at most {MAX_CONFIG_CHARS:,}")
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_size(node, MAX_CONFIG_NODES) > MAX_CONFIG_NODES:
            raise UsageError(
                f"holds more than {MAX_CONFIG_NODES:,} values once its YAML aliases (*name) are expanded; "
                "write the values out, or use fewer levels of aliases"
            )
        return loader.construct_document(node)
    finally:
        loader.dispose()


def parse_config_text(
    text: str, source: str = "<config>", base: Path | None = None, *, check_names: Sequence[str]
) -> Config:
    try:
        data = _load_yaml(text)
    except UsageError as exc:
        raise UsageError(f"{source}: {exc}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "YAML"
        raise UsageError(f"{source}: {where}: not valid YAML: {exc.problem or exc.context}") from None
    except (yaml.YAMLError, ValueError) as exc:
        raise UsageError(f"{source}: not valid YAML: {_one_line(exc)}") from None
    except RecursionError:
        raise UsageError(f"{source}: not valid YAML: nested too deeply") from None
    return parse_config(data, source=source, base=base, check_names=check_names)


def parse_config(
    data: Any, source: str = "<config>", base: Path | None = None, *, check_names: Sequence[str]
) -> Config:
    """Validate loaded YAML; raises UsageError naming `source`, the key path and the rule."""
    base = Path.cwd() if base is None else base
    try:
        return _config(data, source, base, check_names)
    except UsageError as exc:  # each `key path: problem`, from here or from parse_settings
        raise UsageError(*(f"{source}: {_one_line(problem)}" for problem in exc.problems)) from None
    except RecursionError:
        raise UsageError(f"{source}: nested too deeply") from None


def _one_line(text: Any) -> str:
    return " ".join(str(text).split())


# -- the structure -----------------------------------------------------------------------


def _config(data: Any, source: str, base: Path, check_names: Sequence[str]) -> Config:
    """The config, every problem of it said at once: each part is checked whatever the
    others held (`Problems`)."""
    if data is None:
        raise Invalid("top level", "the file is empty; expected a mapping with the keys defaults and targets")
    problems = Problems()
    with problems.collected():
        check_keys(data, "top level", TOP_KEYS, IN_TARGETS)
    if not isinstance(data, Mapping):
        problems.raise_any()
    defaults = Settings()
    with problems.collected():
        defaults = parse_settings(
            {} if data.get("defaults") is None else data["defaults"], "defaults", check_names=check_names
        )
    targets = data.get("targets")
    if targets is None:
        targets = []
    entries = []
    with problems.collected():
        if not isinstance(targets, list):
            raise Invalid("targets", f"must be a list of targets (- target: path.py), got {show(targets)}")
        for i, item in enumerate(targets):
            with problems.collected():
                entries.append(_entry(item, f"targets[{i}]", base, check_names))
    named: dict[tuple[Path, str | None], TargetEntry] = {}
    for entry in entries:
        first = named.setdefault((entry.path.resolve(), entry.name), entry)
        if first is not entry:
            # A target is known by its path and name (its label in every report, the cache, a
            # baseline, the pytest item's id): two entries would be one target twice, each
            # run reading the settings of either.
            with problems.collected():
                raise Invalid(
                    entry.where,
                    f"names {entry.target!r} again ({first.where} names it): a target may be named once; "
                    "check it with other settings from another config (a class also as a subclass of its own)",
                )
    problems.raise_any()
    return Config(source, defaults, tuple(entries))


def _entry(item: Any, where: str, base: Path, check_names: Sequence[str]) -> TargetEntry:
    if isinstance(item, str):  # `- path.py` is short for `- target: path.py`
        item = {"target": item}
    problems = Problems()
    with problems.collected():
        check_keys(item, where, TARGET_KEYS, IN_TARGETS)
    if not isinstance(item, Mapping):
        problems.raise_any()
    if "target" not in item:
        with problems.collected():
            raise Invalid(where, "needs a 'target': path.py, path.py:ClassName or a folder")
    path, name = Path(), None
    with problems.collected():
        if "target" in item:
            path, name = _target_path(item["target"], f"{where}.target", base)
    layouts = None
    with problems.collected():
        layouts = None if item.get("layout") is None else _layouts(item["layout"], f"{where}.layout")
    args: dict[str, Any] = {}
    with problems.collected():
        args = {} if item.get("args") is None else _args(item["args"], f"{where}.args")
    settings = Settings()
    with problems.collected():
        settings = parse_settings({k: v for k, v in item.items() if k in SETTING_KEYS}, where, check_names=check_names)
    convention = NO_CONVENTION
    with problems.collected():
        convention = _convention(item, where, name)
    problems.raise_any()
    return TargetEntry(where, item["target"], path, name, layouts, args, settings, convention)


def _convention(item: Mapping[str, Any], where: str, name: str | None) -> Convention:
    """`backward: NAME` (a function pair's) and `convention: {...}` (a class that keeps its
    gradients, DESIGN.md section 11); both name one target, as path.py:NAME."""
    backward, mapping = item.get("backward"), item.get("convention")
    if backward is None and mapping is None:
        return NO_CONVENTION
    key = "backward" if backward is not None else "convention"
    if name is None:
        raise Invalid(f"{where}.{key}", "applies to one target: name it, as path.py:NAME")
    if backward is not None and mapping is not None:
        raise Invalid(where, "has both 'backward' (a function pair) and 'convention' (a class); give one")
    if backward is not None:
        if not (isinstance(backward, str) and backward.isidentifier()):
            raise Invalid(f"{where}.backward", f"must be a function's name, got {show(backward)}")
        return Convention(backward=backward)
    return Convention(keeps_gradients=keeps_gradients_mapping(mapping, f"{where}.convention"))


def keeps_gradients_mapping(mapping: Any, where: str) -> dict[str, Any]:
    """A validated `convention:` mapping of a class that keeps its gradients (its keys:
    `KEEPS_GRADIENTS_KEYS`); `where` names it in messages."""
    if not isinstance(mapping, Mapping):
        raise Invalid(where, f"must be a mapping of {', '.join(KEEPS_GRADIENTS_KEYS)}, got {show(mapping)}")
    check_keys(mapping, where, KEEPS_GRADIENTS_KEYS)
    for key in ("predict", "output", "backward", "input_gradient"):
        value = mapping.get(key)
        if value is not None and not (isinstance(value, str) and value.isidentifier()):
            raise Invalid(f"{where}.{key}", f"must be a method's or an attribute's name, got {show(value)}")
    arguments = mapping.get("arguments")
    if arguments is not None and not (
        isinstance(arguments, Mapping) and all(isinstance(k, str) and k.isidentifier() for k in arguments)
    ):
        raise Invalid(
            f"{where}.arguments",
            f"must map the other arguments of the method that computes the outputs to their values ({{training: false}}), got {show(arguments)}",
        )
    learnables = mapping.get("learnables")
    if learnables is not None and not (
        isinstance(learnables, Mapping)
        and all(
            isinstance(k, str) and k.isidentifier() and isinstance(v, str) and v.isidentifier()
            for k, v in learnables.items()
        )
    ):
        raise Invalid(
            f"{where}.learnables",
            f"must map each parameter's attribute to its gradient's ({{weights: dweights}}), got {show(learnables)}",
        )
    return {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in mapping.items()}


def _target_path(spec: Any, where: str, base: Path) -> tuple[Path, str | None]:
    if not isinstance(spec, str) or not spec.strip():
        raise Invalid(where, f"must be a path: path.py, path.py:ClassName or a folder, got {show(spec)}")
    if "\0" in spec:
        raise Invalid(
            where, f"must be a path: path.py, path.py:ClassName or a folder, got {show(spec)} (a NUL character)"
        )
    text, name = spec.strip(), None
    head, sep, tail = text.rpartition(":")
    if sep and head and tail.isidentifier() and not (base / text).exists():
        text, name = head, tail
    path = base / os.path.expanduser(text)
    entry = inspect_entry(path)  # before resolve(), which a symlink loop makes raise
    if entry.kind is EntryKind.MISSING:
        raise Invalid(where, f"{spec!r}: no such file or folder ({path}; paths are relative to the config file)")
    if entry.kind is not EntryKind.FILE and entry.kind is not EntryKind.FOLDER:
        raise Invalid(where, f"{spec!r} {entry.problem}")
    path = path.resolve()
    if path.is_dir() and name is not None:
        raise Invalid(where, f"{spec!r}: a class name follows a .py file, not a folder")
    if not path.is_dir() and path.suffix != ".py":
        raise Invalid(where, f"{spec!r} is not a .py file or a folder")
    return path, name


def _layouts(value: Any, where: str) -> tuple[Layout, ...]:
    """A layout (`24,24,20,128:SSCB` or {size, format}) or a list with one per input."""
    if isinstance(value, list) and any(isinstance(v, int) for v in value):
        raise Invalid(
            where,
            f"got {show(value)}: a flow list [...] splits a layout on its commas; "
            "write the layout as a string, or one per line as a block list (- 8,8,4,2:SSCB)",
        )
    return parse_input_layouts(value, where)


def _args(value: Any, where: str) -> dict[str, Any]:
    """Constructor arguments: names are identifiers; `1e-3` strings become numbers, as --arg."""
    if not isinstance(value, dict):
        raise Invalid(where, f"must be a mapping of argument names to values, got {show(value)}")
    args = {}
    for key, x in value.items():
        if not (isinstance(key, str) and key.isidentifier()):
            raise Invalid(where, f"argument name {show(key)} is not a Python identifier")
        args[key] = float(x) if isinstance(x, str) and SCIENTIFIC.match(x.strip()) else x
    return args
