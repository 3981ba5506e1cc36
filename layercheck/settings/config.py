"""`--config FILE`: defaults and targets in YAML (DESIGN.md section 2), validated up front.

The file is read with `yaml.safe_load` only. Every problem is a UsageError of one line that
names the file, the key path and what is allowed:

    configs/ci.yaml: targets[1].layout[0]: layout '24,24:SSCB' has 2 size(s) but format ...

Validation is a handful of small functions rather than a schema library: the rules need
coercions a schema cannot express well (YAML 1.1 reads `1e-4` as a string; layouts are
strings, mappings or lists of them; paths are relative to the config file), and each message
should say what is allowed in the user's terms rather than in the validator's.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import yaml

from layercheck.api import DEVICES
from layercheck.checks import REGISTRY
from layercheck.contract.layout import Layout, parse_layout
from layercheck.errors import UsageError
from layercheck.machine import refuse_if_too_large
from layercheck.numerics.arrays import DTYPES

# Keys that may appear under `defaults` and, as per-target overrides, in a `targets` entry.
SETTING_KEYS = ("dtypes", "seed", "timeout", "device", "tolerances", "skip", "checks", "input_domain")
TARGET_KEYS = ("target", "layout", "args") + SETTING_KEYS
TOP_KEYS = ("defaults", "targets")
TOLERANCE_KEYS = ("rtol", "atol")
DEFAULT_TIMEOUT = 120.0

# YAML 1.1 (PyYAML) reads a float only with a dot and a signed exponent: `1e-4`, `1E5` and
# `1.0e5` stay strings. These are the spellings users mean as numbers.
_SCIENTIFIC = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")


@dataclass(frozen=True)
class Settings:
    """Run settings of a target; None means "not given here" (see `over`)."""

    dtypes: tuple[str, ...] | None = None
    seed: int | None = None
    timeout: float | None = None
    device: str | None = None
    tolerances: Mapping[str, Mapping[str, float]] | None = None
    skip: tuple[str, ...] | None = None
    checks: tuple[str, ...] | None = None
    input_domain: Any = None

    def over(self, base: Settings) -> Settings:
        """These settings where given, else `base`'s. Tolerances merge per dtype and key,
        so a target can tighten float64's rtol and keep the default atol."""
        merged = {}
        for f in fields(self):
            mine = getattr(self, f.name)
            merged[f.name] = getattr(base, f.name) if mine is None else mine
        if self.tolerances is not None and base.tolerances is not None:
            tolerances = {dtype: dict(tol) for dtype, tol in base.tolerances.items()}
            for dtype, tol in self.tolerances.items():
                tolerances.setdefault(dtype, {}).update(tol)
            merged["tolerances"] = tolerances
        return Settings(**merged)


BUILTIN = Settings(
    dtypes=("float64", "float32"),
    seed=0,
    timeout=DEFAULT_TIMEOUT,
    device="auto",
    tolerances={},
    skip=(),
    checks=None,
    input_domain=None,
)


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


class _Invalid(Exception):
    """A problem at a key path; `parse_config` adds the file name and makes it a UsageError."""

    def __init__(self, where: str, problem: str):
        super().__init__(problem)
        self.where, self.problem = where, problem


# -- reading -----------------------------------------------------------------------------


def load_config(path: str | os.PathLike) -> Config:
    """Read and validate a config file; paths in it are relative to its folder."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"config {source!r}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"config {source!r} cannot be read: {exc}") from None
    return parse_config_text(text, source=source, base=Path(path).resolve().parent)


def parse_config_text(text: str, source: str = "<config>", base: Path | None = None) -> Config:
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "YAML"
        raise UsageError(f"{source}: {where}: not valid YAML: {exc.problem or exc.context}") from None
    except (yaml.YAMLError, ValueError) as exc:
        raise UsageError(f"{source}: not valid YAML: {_one_line(exc)}") from None
    except RecursionError:
        raise UsageError(f"{source}: not valid YAML: nested too deeply") from None
    return parse_config(data, source=source, base=base)


def parse_config(data: Any, source: str = "<config>", base: Path | None = None) -> Config:
    """Validate loaded YAML; raises UsageError naming `source`, the key path and the rule."""
    base = Path.cwd() if base is None else base
    try:
        return _config(data, source, base)
    except _Invalid as exc:
        raise UsageError(f"{source}: {exc.where}: {_one_line(exc.problem)}") from None
    except RecursionError:
        raise UsageError(f"{source}: nested too deeply") from None


def _one_line(text: Any) -> str:
    return " ".join(str(text).split())


# -- the structure -----------------------------------------------------------------------


def _config(data: Any, source: str, base: Path) -> Config:
    if data is None:
        raise _Invalid("top level", "the file is empty; expected a mapping with the keys defaults and targets")
    _keys(data, "top level", TOP_KEYS)
    defaults = _settings({} if data.get("defaults") is None else data["defaults"], "defaults", SETTING_KEYS)
    targets = data.get("targets")
    if targets is None:
        targets = []
    if not isinstance(targets, list):
        raise _Invalid("targets", f"must be a list of targets (- target: path.py), got {_show(targets)}")
    return Config(source, defaults, tuple(_entry(item, f"targets[{i}]", base) for i, item in enumerate(targets)))


def _keys(data: Any, where: str, allowed: tuple[str, ...]) -> None:
    """A mapping with string keys, all of them allowed."""
    if not isinstance(data, dict):
        raise _Invalid(where, f"must be a mapping with the keys {', '.join(allowed)}, got {_show(data)}")
    for key in data:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            if key in TARGET_KEYS:
                hint = " (it belongs in an entry of targets)"
            raise _Invalid(where, f"unknown key {_show(key)}{hint}; allowed: {', '.join(allowed)}")


def _settings(data: Any, where: str, allowed: tuple[str, ...]) -> Settings:
    _keys(data, where, allowed)
    values: dict[str, Any] = {}
    for key in SETTING_KEYS:
        if data.get(key) is not None:
            values[key] = _SETTING_PARSERS[key](data[key], f"{where}.{key}")
    return Settings(**values)


def _entry(item: Any, where: str, base: Path) -> TargetEntry:
    if isinstance(item, str):  # `- path.py` is short for `- target: path.py`
        item = {"target": item}
    _keys(item, where, TARGET_KEYS)
    if "target" not in item:
        raise _Invalid(where, "needs a 'target': path.py, path.py:ClassName or a folder")
    spec = item["target"]
    path, name = _target_path(spec, f"{where}.target", base)
    layouts = None if item.get("layout") is None else _layouts(item["layout"], f"{where}.layout")
    args = {} if item.get("args") is None else _args(item["args"], f"{where}.args")
    settings = _settings({k: v for k, v in item.items() if k in SETTING_KEYS}, where, SETTING_KEYS)
    return TargetEntry(where, spec, path, name, layouts, args, settings)


def _target_path(spec: Any, where: str, base: Path) -> tuple[Path, str | None]:
    if not isinstance(spec, str) or not spec.strip():
        raise _Invalid(where, f"must be a path: path.py, path.py:ClassName or a folder, got {_show(spec)}")
    if "\0" in spec:
        raise _Invalid(
            where, f"must be a path: path.py, path.py:ClassName or a folder, got {_show(spec)} (a NUL character)"
        )
    text, name = spec.strip(), None
    head, sep, tail = text.rpartition(":")
    if sep and head and tail.isidentifier() and not (base / text).exists():
        text, name = head, tail
    path = (base / os.path.expanduser(text)).resolve()
    if not path.exists():
        raise _Invalid(where, f"{spec!r}: no such file or folder ({path}; paths are relative to the config file)")
    if path.is_dir() and name is not None:
        raise _Invalid(where, f"{spec!r}: a class name follows a .py file, not a folder")
    if not path.is_dir() and path.suffix != ".py":
        raise _Invalid(where, f"{spec!r} is not a .py file or a folder")
    return path, name


# -- values ------------------------------------------------------------------------------


def _show(value: Any) -> str:
    try:
        text = repr(value)
    except ValueError:  # an int of more digits than Python converts to text
        return "a very large number"
    return text if len(text) <= 60 else text[:57] + "..."


def _number(value: Any, where: str = "value") -> float:
    """An int or float, or a string that YAML 1.1 did not read as one (`1e-4`); not NaN."""
    if isinstance(value, str) and _SCIENTIFIC.match(value.strip()):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Invalid(where, f"must be a number, got {_show(value)}")
    try:
        x = float(value)
    except OverflowError:
        raise _Invalid(where, "is too large a number") from None
    if math.isnan(x):
        raise _Invalid(where, "must be a number, got NaN")
    return x


def _positive(value: Any, where: str) -> float:
    x = _number(value, where)
    if not (0 < x < math.inf):
        raise _Invalid(where, f"must be a positive number of seconds, got {_show(value)}")
    return x


def _seed(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**32:
        raise _Invalid(where, f"must be an integer from 0 to 2**32 - 1, got {_show(value)}")
    return value


def _names(value: Any, where: str, allowed: tuple[str, ...], what: str) -> tuple[str, ...]:
    """A list of names, or one comma-separated string, each of them allowed."""
    if isinstance(value, str):
        value = [n.strip() for n in value.split(",") if n.strip()]
    if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
        raise _Invalid(where, f"must be a list of {what}, got {_show(value)}")
    for n in value:
        if n not in allowed:
            close = difflib.get_close_matches(n, allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            listing = ", ".join(allowed) if len(allowed) <= 8 else "see `layercheck list-checks`"
            raise _Invalid(where, f"unknown {what[:-1]} {n!r}{hint}; allowed: {listing}")
    return tuple(value)


def _dtypes(value: Any, where: str) -> tuple[str, ...]:
    names = _names(value, where, DTYPES, "dtypes")
    if not names:
        raise _Invalid(where, f"needs at least one dtype; allowed: {', '.join(DTYPES)}")
    return names


def _check_names(value: Any, where: str) -> tuple[str, ...]:
    return _names(value, where, tuple(REGISTRY), "checks")


def _device(value: Any, where: str) -> str:
    if value not in DEVICES:
        raise _Invalid(where, f"must be one of {', '.join(DEVICES)}, got {_show(value)}")
    return value


def _tolerances(value: Any, where: str) -> dict[str, dict[str, float]]:
    _keys(value, where, DTYPES)
    tolerances = {}
    for dtype, tol in value.items():
        _keys(tol, f"{where}.{dtype}", TOLERANCE_KEYS)
        tolerances[dtype] = {}
        for key, x in tol.items():
            t = _number(x, f"{where}.{dtype}.{key}")
            if not 0 <= t < math.inf:
                raise _Invalid(f"{where}.{dtype}.{key}", f"must be a number >= 0, got {_show(x)}")
            tolerances[dtype][key] = t
    return tolerances


def _bound(value: Any, where: str) -> float | None:
    return None if value is None else _number(value, where)


def _interval(value: Any, where: str) -> tuple[float | None, float | None]:
    if not (isinstance(value, list) and len(value) == 2):
        raise _Invalid(where, f"must be [low, high] (null for unbounded, e.g. [0, null]), got {_show(value)}")
    low, high = _bound(value[0], f"{where}[0]"), _bound(value[1], f"{where}[1]")
    if low is not None and high is not None and not low < high:
        raise _Invalid(where, f"low must be below high, got {_show(value)}")
    return low, high


def _input_domain(value: Any, where: str) -> Any:
    """[low, high] for every input, or a list with one [low, high] (or null) per input."""
    if isinstance(value, list) and len(value) == 2 and all(v is None or not isinstance(v, (list, dict)) for v in value):
        return _interval(value, where)
    if not isinstance(value, list) or not value:
        raise _Invalid(
            where, f"must be [low, high] or a list of one [low, high] (or null) per input, got {_show(value)}"
        )
    return tuple(None if d is None else _interval(d, f"{where}[{i}]") for i, d in enumerate(value))


def _layouts(value: Any, where: str) -> tuple[Layout, ...]:
    """A layout (`24,24,20,128:SSCB` or {size, format}) or a list with one per input."""
    if isinstance(value, list) and any(isinstance(v, int) for v in value):
        raise _Invalid(
            where,
            f"got {_show(value)}: a flow list [...] splits a layout on its commas; "
            "write the layout as a string, or one per line as a block list (- 8,8,4,2:SSCB)",
        )
    items = value if isinstance(value, list) else [value]
    if not items:
        raise _Invalid(where, "needs at least one layout")
    layouts = []
    for i, item in enumerate(items):
        at = f"{where}[{i}]" if isinstance(value, list) else where
        try:
            layouts.append(parse_layout(item))
        except UsageError as exc:
            raise _Invalid(at, str(exc)) from None
    try:
        refuse_if_too_large(layouts)
    except UsageError as exc:
        raise _Invalid(where, str(exc)) from None
    return tuple(layouts)


def _args(value: Any, where: str) -> dict[str, Any]:
    """Constructor arguments: names are identifiers; `1e-3` strings become numbers, as --arg."""
    if not isinstance(value, dict):
        raise _Invalid(where, f"must be a mapping of argument names to values, got {_show(value)}")
    args = {}
    for key, x in value.items():
        if not (isinstance(key, str) and key.isidentifier()):
            raise _Invalid(where, f"argument name {_show(key)} is not a Python identifier")
        args[key] = float(x) if isinstance(x, str) and _SCIENTIFIC.match(x.strip()) else x
    return args


_SETTING_PARSERS = {
    "dtypes": _dtypes,
    "seed": _seed,
    "timeout": _positive,
    "device": _device,
    "tolerances": _tolerances,
    "skip": _check_names,
    "checks": _check_names,
    "input_domain": _input_domain,
}


def settings_from(**values: Any) -> Settings:
    """Settings from keyword values already validated elsewhere (the command line)."""
    return replace(Settings(), **{k: v for k, v in values.items() if v is not None})
