"""Every setting of a run, parsed and validated once: command line, YAML and API alike.

The command line (`cli.py`), the config files (`settings/config.py`) and the Python API
(`api.py`) each hand their values to `parse_settings`, which runs the same parser for each
key, so one bad value gives one message wherever it comes from; only the key path in front
differs (`--dtype`, `c.yaml: defaults.dtypes`, `dtypes`). Layers of settings are merged by
`Settings.over` (`merge_settings` for a whole chain), and `Options` is what one target's
checks read: complete, final numbers, tolerances already merged over `DEFAULT_TOLERANCES`.

Settings sit below the checks they configure, so nothing here imports `layercheck.checks`
or `layercheck.api`: check names are validated against a list the caller hands in (the CLI
and the API hand in the registry's names;
none is handed in).

Only the names in `__all__` are public; the underscored parsers are shared with
`settings/config.py` alone.
"""

from __future__ import annotations

import difflib
import functools
import math
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from layercheck.contract.layout import Layout, parse_layout
from layercheck.devices import require_usable_gpu
from layercheck.errors import UsageError
from layercheck.machine import refuse_if_too_large
from layercheck.numerics.arrays import DTYPES, machine_epsilon
from layercheck.settings.values import Invalid, Problems, check_keys, number, show

__all__ = [
    "BUILTIN",
    "COMPLEX_DTYPES",
    "DEFAULT_DTYPES",
    "DEFAULT_TIMEOUT",
    "DEFAULT_TOLERANCES",
    "DEVICES",
    "MAX_JOBS",
    "MAX_TIMEOUT",
    "MEMORY_RANGE",
    "Options",
    "SETTING_KEYS",
    "Settings",
    "TARGET_KEYS",
    "TOLERANCE_KEYS",
    "TOP_KEYS",
    "make_options",
    "merge_settings",
    "merge_tolerances",
    "options_from",
    "parse_input_domain",
    "parse_input_layouts",
    "parse_jobs",
    "parse_memory",
    "parse_settings",
    "parse_shard",
    "settings_from",
    "settings_from_command_line",
    "SETTINGS",
    "Setting",
    "IN_TARGETS",
]

DEVICES = ("cpu", "gpu", "auto")
DEFAULT_DTYPES = ("float64", "float32")
COMPLEX_DTYPES = ("complex128", "complex64")  # added to the default for a complex layer
DEFAULT_TIMEOUT = 120.0  # seconds per target
# A week: past it a timer overflows the operating system's waits (2**31 milliseconds).
MAX_TIMEOUT = 7 * 24 * 3600.0
DEFAULT_TOLERANCES = {
    "float32": {"rtol": 1e-4, "atol": 1e-5},
    "float64": {"rtol": 1e-9, "atol": 1e-12},
    "complex64": {"rtol": 1e-4, "atol": 1e-5},
    "complex128": {"rtol": 1e-9, "atol": 1e-12},
}

TOP_KEYS = ("defaults", "targets")
TOLERANCE_KEYS = ("rtol", "atol")


def _in_range(value: Any, where: str, low: float, high: float, what: str, low_open: bool = False) -> float:
    """A finite number from `low` to `high` (above `low` when `low_open`); the message gives the
    range, e.g. `--timeout: must be a number of seconds above 0 and at most 604800, got nan`."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        try:
            x = float(value)
        except OverflowError:  # an int beyond float: out of range like any other
            x = math.inf
    else:
        x = number(value, where)
    above = x > low if low_open else x >= low
    if not (math.isfinite(x) and above and x <= high):
        lower = f"above {low:g}" if low_open else f"from {low:g}"
        upper = "and at most" if low_open else "to"
        raise Invalid(where, f"must be {what} {lower} {upper} {high:g}, got {show(value)}")
    return x


def _seconds(value: Any, where: str) -> float:
    return _in_range(value, where, 0, MAX_TIMEOUT, "a number of seconds", low_open=True)


def _seed(value: Any, where: str) -> int:
    seed = int(value) if isinstance(value, numbers.Integral) and not isinstance(value, bool) else -1
    if not 0 <= seed < 2**32:
        raise Invalid(where, f"must be an integer from 0 to 2**32 - 1, got {show(value)}")
    return seed


def _names(value: Any, where: str, allowed: tuple[str, ...], what: str) -> tuple[str, ...]:
    """A list of names, or one comma-separated string, each of them allowed."""
    if isinstance(value, str):
        value = [n.strip() for n in value.split(",") if n.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(n, str) for n in value):
        raise Invalid(where, f"must be a list of {what}, got {show(value)}")
    for n in value:
        if n not in allowed:
            close = difflib.get_close_matches(n, allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            listing = ", ".join(allowed) if len(allowed) <= 8 else "see `layercheck list-checks`"
            raise Invalid(where, f"unknown {what[:-1]} {n!r}{hint}; allowed: {listing}")
    return tuple(value)


def _dtypes(value: Any, where: str) -> tuple[str, ...]:
    names = _names(value, where, DTYPES, "dtypes")
    if not names:
        raise Invalid(where, f"needs at least one dtype; allowed: {', '.join(DTYPES)}")
    return names


def _check_names(value: Any, where: str, allowed: Sequence[str]) -> tuple[str, ...]:
    """Check names, each one of `allowed` (handed in by the caller: settings never import the
    checks they configure)."""
    return _names(value, where, tuple(allowed), "checks")


def _device(value: Any, where: str) -> str:
    if value not in DEVICES:
        raise Invalid(where, f"must be one of {', '.join(DEVICES)}, got {show(value)}")
    device: str = value
    return device


def _tolerances(value: Any, where: str) -> dict[str, dict[str, float]]:
    check_keys(value, where, DTYPES)
    tolerances: dict[str, dict[str, float]] = {}
    for dtype, tol in value.items():
        check_keys(tol, f"{where}.{dtype}", TOLERANCE_KEYS)
        tolerances[dtype] = {}
        for key, x in tol.items():
            t = number(x, f"{where}.{dtype}.{key}")
            if not 0 <= t < math.inf:
                raise Invalid(f"{where}.{dtype}.{key}", f"must be a number >= 0, got {show(x)}")
            tolerances[dtype][key] = t
    return tolerances


def _bound(value: Any, where: str) -> float | None:
    """A finite side of an interval, or None for unbounded (an infinite side is None's job:
    inputs are drawn next to a bound)."""
    if value is None:
        return None
    x = number(value, where)
    if not math.isfinite(x):
        raise Invalid(
            where,
            f"must be a finite number, or None (null in YAML, empty on the command line) for unbounded, got {show(value)}",
        )
    return x


def _interval(value: Any, where: str) -> tuple[float | None, float | None]:
    if not (isinstance(value, (list, tuple)) and len(value) == 2):
        raise Invalid(where, f"must be [low, high] (null for unbounded, e.g. [0, null]), got {show(value)}")
    low, high = _bound(value[0], f"{where}[0]"), _bound(value[1], f"{where}[1]")
    if low is not None and high is not None and not low < high:
        raise Invalid(where, f"low must be below high, got {show(value)}")
    if low is not None and high is not None:
        _wide_enough(low, high, where, value)
    return low, high


# How narrow a bounded domain may be. Inputs are drawn in its middle 90%
# (`arrays.random_array`) and the gradient engine moves them by steps relative to their size
# (from 1e-7 at float64 and 3e-3 at float32, larger where round-off needs: `gradients.engine`),
# never out of the domain; where no step fits, the gradient check ends undecided ("every
# element sits at the edge of its domain"), which a declared domain must not be a way to. A
# step of 1e-7 of the values' size fits 0.05 of the width from a width of 2e-6 of their size:
# _RELATIVE_WIDTH leaves room for larger steps. Below _ABSOLUTE_WIDTH, a float32 step from a value
# drawn 0.05 of the width inside (3e-3 x 0.05 x width) can be below float32's smallest normal
# number (1.2e-38), where it keeps no precision.
_RELATIVE_WIDTH = 1e-5
_ABSOLUTE_WIDTH = 1e-34


def _wide_enough(low: float, high: float, where: str, value: Any) -> None:
    width = high - low  # inf for the widest domains: wide enough
    if width < _ABSOLUTE_WIDTH:
        raise Invalid(
            where,
            f"is too narrow to check gradients in: {width:.3g} wide, below {_ABSOLUTE_WIDTH:g} (the gradient "
            f"check's steps between inputs drawn in it can be below float32's smallest normal number, 1.2e-38, "
            f"where they keep no precision), got {show(value)}",
        )
    size = max(abs(low), abs(high))
    if width < _RELATIVE_WIDTH * size:
        raise Invalid(
            where,
            f"is too narrow to check gradients in: {width:.3g} wide at values of size {size:.3g}, below "
            f"{_RELATIVE_WIDTH:g} of their size (the gradient check's steps, from 1e-7 of the values' size at "
            f"float64, must fit inside it: give it at least {_RELATIVE_WIDTH * size:.3g}), got {show(value)}",
        )


def _is_single(value: Any) -> bool:
    """One [low, high] for every input, rather than one per input: two items, neither a list."""
    return (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(v is None or not isinstance(v, (list, tuple, Mapping)) for v in value)
    )


def _input_domain(value: Any, where: str) -> Any:
    """[low, high] for every input, or a list with one [low, high] (or null) per input.

    The count per input is checked against the target's inputs when it is known (the session).
    """
    if _is_single(value):
        return _interval(value, where)
    if not isinstance(value, (list, tuple)) or not value:
        raise Invalid(where, f"must be [low, high] or a list of one [low, high] (or null) per input, got {show(value)}")
    return tuple(None if d is None else _interval(d, f"{where}[{i}]") for i, d in enumerate(value))


def parse_input_domain(value: Any, where: str) -> Any:
    """An input domain as `--domain`, a config file and the API give it, validated by the same
    rules wherever it comes from (a layer's `input_domain` too): `(low, high)` with finite
    sides, None for unbounded, low < high; or one such interval (or None) per input.

    Raises:
        UsageError: `where: problem` on one line, in the words `--domain` gets.
    """
    return _input_domain(value, where)


def _from_text(text: str) -> Any:
    """A number's command-line text as YAML would give it: the int or float it spells, else
    the text itself (`--seed x`), which the setting's parser then refuses in its words."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _domains_from_text(texts: Sequence[str]) -> Any:
    """`--domain LOW:HIGH`: given once, one interval for every input; repeated, one per input.
    Each is `[low, high]` as a config gives it (None for an empty side)."""
    domains = tuple(_domain_from_text(text) for text in texts)
    return domains[0] if len(domains) == 1 else domains


def _domain_from_text(text: str) -> tuple[float | None, float | None]:
    low_text, sep, high_text = text.partition(":")
    try:
        if not sep:
            raise ValueError
        low, high = (float(t) if t.strip() else None for t in (low_text, high_text))
    except ValueError:
        raise UsageError(
            f"--domain {text!r}: give LOW:HIGH with LOW < HIGH, an empty side for unbounded (e.g. 0: or -1:1)"
        ) from None
    return low, high


@dataclass(frozen=True)
class Setting:
    """One setting, named once for every way in: its key in a config file (and `Settings`'
    field), its option on the command line, its keyword in the Python API (and `Options`'
    field), and its parser, shared by all three."""

    key: str
    option: str | None  # None: not on the command line (tolerances: a table, for a config)
    keyword: str
    parse: Callable[[Any, str], Any] | None  # None: check names, parsed against the caller's
    from_text: Callable[[Any], Any] | None = None  # the command line's text as a config's value


# In the order messages and `SETTING_KEYS` list them.
SETTINGS = (
    Setting("dtypes", "--dtype", "dtypes", _dtypes),
    Setting("seed", "--seed", "seed", _seed, _from_text),
    Setting("timeout", "--timeout", "timeout", _seconds, _from_text),
    Setting("device", "--device", "device", _device),
    Setting("tolerances", None, "tolerances", _tolerances),
    Setting("skip", "--skip", "skip", None),
    Setting("checks", "--checks", "checks", None),
    Setting("input_domain", "--domain", "input_domains", _input_domain, _domains_from_text),
)
# Keys that may appear under `defaults` and, as per-target overrides, in a `targets` entry.
SETTING_KEYS = tuple(setting.key for setting in SETTINGS)
TARGET_KEYS = ("target", "layout", "args", "backward", "convention") + SETTING_KEYS
# What a key that belongs to a target entry is told elsewhere in a config.
IN_TARGETS = {key: "it belongs in an entry of targets" for key in TARGET_KEYS}


# -- layouts: the inputs of a target, as every entry point gives them --------------------------


def parse_input_layouts(value: Any, where: str | None = None) -> tuple[Layout, ...]:
    """The layouts of one target's inputs, however an entry point gives them: a layout
    (`"24,24,20,128:SSCB"`, a `{size, format}` mapping or a `Layout`) or a list with one per
    input. Each is parsed, and together they are refused when their arrays would not fit in the
    memory available (`machine.refuse_if_too_large`): the one place where both are done, for the
    command line, config files, the API and a class's `example_layout` alike.

    Args:
        where: the key path put before a message (`targets[0].layout`); None for none (the
            command line and the API: the message quotes the layout).

    Raises:
        UsageError: one line: the malformed layout, or the memory needed and available.
    """
    single = not isinstance(value, (list, tuple)) or bool(value and isinstance(value[0], int))
    items = [value] if single else list(value)
    try:
        if not items:
            raise Invalid(where or "layout", "needs at least one layout")
        layouts = []
        for i, item in enumerate(items):
            try:
                layouts.append(parse_layout(item))
            except UsageError as exc:
                if where is None:
                    raise
                raise Invalid(where if single else f"{where}[{i}]", str(exc)) from None
        try:
            refuse_if_too_large(layouts)
        except UsageError as exc:
            if where is None:
                raise
            raise Invalid(where, str(exc)) from None
    except Invalid as exc:
        raise UsageError(str(exc)) from None
    return tuple(layouts)


# -- how a batch runs: numbers of the command line alone --------------------------------------

_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
# Below 64 MiB a worker cannot import much beside NumPy (a cap of 1K fails the user's import,
# which would read as the layer's fault); above 2**50 the cap overflows the kernel's limits.
MEMORY_RANGE = (64 * 2**20, 2**50)
MAX_JOBS = 1024
_SIZE = re.compile(r"\s*((?:\d+(?:\.\d*)?|\.\d+)(?:[eE]\+?\d+)?)\s*([KMGT]?)(?:i?B)?\s*", re.IGNORECASE)


def parse_memory(value: Any, where: str = "--max-memory") -> int | None:
    """A memory cap per worker: `4G`, `512M`, `1.5GiB` (K, M, G, T: powers of 1024; B or iB
    after them allowed), a number of bytes, or `none` (None: no cap).

    Raises:
        UsageError: not a size, or outside `MEMORY_RANGE` (the message gives the range).
    """
    allowed = f"from 64M to 1024T, or none (e.g. 512M, 4G, 1.5GiB), got {show(value)}"
    if isinstance(value, str):
        if value.strip().lower() == "none":
            return None
        match = _SIZE.fullmatch(value)
        if not match:
            raise UsageError(f"{where}: must be a size {allowed}")
        size = float(match[1]) * _UNITS[match[2].upper()]
    elif isinstance(value, numbers.Real) and not isinstance(value, bool):
        try:
            size = float(value)
        except OverflowError:
            size = math.inf
    else:
        raise UsageError(f"{where}: must be a size {allowed}")
    if not (math.isfinite(size) and MEMORY_RANGE[0] <= size <= MEMORY_RANGE[1]):
        raise UsageError(f"{where}: must be a size {allowed}")
    return int(size)


def parse_jobs(value: Any, where: str = "--jobs") -> int:
    """Targets checked in parallel: an integer from 1 to `MAX_JOBS`."""
    text = value.strip() if isinstance(value, str) else value
    number = int(text) if isinstance(text, str) and re.fullmatch(r"[-+]?\d{1,30}", text) else text
    if isinstance(number, bool) or not isinstance(number, numbers.Integral) or not 1 <= int(number) <= MAX_JOBS:
        raise UsageError(f"{where}: must be an integer from 1 to {MAX_JOBS}, got {show(value)}")
    return int(number)


def parse_shard(value: Any, where: str = "--shard") -> tuple[int, int]:
    """`K/N`: the K-th of N shares of the targets, 1 <= K <= N (N at most 10**6)."""
    match = re.fullmatch(r"\s*(\d{1,7})\s*/\s*(\d{1,7})\s*", value) if isinstance(value, str) else None
    if not match or not 1 <= int(match[1]) <= int(match[2]) <= 10**6:
        raise UsageError(f"{where}: must be K/N with 1 <= K <= N <= 1000000, e.g. 1/4, got {show(value)}")
    return int(match[1]), int(match[2])


# -- settings: what a command line, a config's defaults or one of its targets gives ----------


def merge_tolerances(
    over: Mapping[str, Mapping[str, float]] | None, base: Mapping[str, Mapping[str, float]] | None
) -> dict[str, dict[str, float]]:
    """The one merge of tolerance tables: `over`'s values where given, else `base`'s.

    Per dtype and per key, so that a target can tighten float64's rtol and keep the default
    atol. A given 0 is a value like any other.

    Args:
        over: {dtype: {rtol, atol}}, any key left out; None for none.
        base: the same, underneath.

    Returns:
        A new table; neither argument is modified.
    """
    merged = {dtype: dict(tol) for dtype, tol in (base or {}).items()}
    for dtype, tol in (over or {}).items():
        merged.setdefault(dtype, {}).update(tol)
    return merged


@dataclass(frozen=True)
class Settings:
    """Validated run settings of one layer (command line, config defaults, config target).

    None means "not given here", so that layers can be merged (see `over`).
    """

    dtypes: tuple[str, ...] | None = None
    seed: int | None = None
    timeout: float | None = None
    device: str | None = None
    tolerances: Mapping[str, Mapping[str, float]] | None = None
    skip: tuple[str, ...] | None = None
    checks: tuple[str, ...] | None = None
    input_domain: Any = None

    def over(self, base: Settings) -> Settings:
        """These settings where given, else `base`'s; tolerances merge per dtype and key
        (`merge_tolerances`)."""
        merged = {}
        for f in fields(self):
            mine = getattr(self, f.name)
            merged[f.name] = getattr(base, f.name) if mine is None else mine
        if self.tolerances is not None and base.tolerances is not None:
            merged["tolerances"] = merge_tolerances(self.tolerances, base.tolerances)
        return Settings(**merged)


BUILTIN = Settings(
    dtypes=DEFAULT_DTYPES,
    seed=0,
    timeout=DEFAULT_TIMEOUT,
    device="auto",
    tolerances={},  # DEFAULT_TOLERANCES lie under every table: Options merges them in
    skip=(),
    checks=None,
    input_domain=None,
)


def merge_settings(*layers: Settings) -> Settings:
    """Each setting from the first layer that gives it, else from `BUILTIN`.

    Args:
        layers: most specific first, e.g. command line, config target, config defaults.

    Returns:
        Complete settings, ready for `options_from`.
    """
    merged = BUILTIN
    for layer in reversed(layers):
        merged = layer.over(merged)
    return merged


def _label(where: str | Mapping[str, str], key: str) -> str:
    if isinstance(where, Mapping):
        return where.get(key, key)
    return f"{where}.{key}" if where else key


def parse_settings(
    values: Mapping[str, Any], where: str | Mapping[str, str] = "", *, check_names: Sequence[str]
) -> Settings:
    """The one validator of settings, for the command line, config files and the API.

    Args:
        values: setting key (`SETTING_KEYS`) to value as YAML would give it (a list or a
            comma-separated string of names, `[low, high]`, `1e-4` as text or number); a key
            left out or None is not given.
        where: the key path of `values` in a config (`defaults`, `targets[2]`), put before
            each key in messages; or, for the command line and the API, each key's own name
            there (`{"dtypes": "--dtype"}`; a key not in it is shown as itself).
        check_names: the check names `checks` and `skip` accept (the registry's).

    Returns:
        The settings given, each parsed (None where not given).

    Raises:
        UsageError: one line, `key path: problem` (a config adds its file name in front).
    """
    names = functools.partial(_check_names, allowed=check_names)
    parsers: dict[str, Callable[[Any, str], Any]] = {setting.key: setting.parse or names for setting in SETTINGS}
    problems = Problems()  # every unknown key and every bad value, not the first alone
    with problems.collected():
        check_keys(values, where if isinstance(where, str) and where else "settings", SETTING_KEYS, IN_TARGETS)
    if not isinstance(values, Mapping):
        problems.raise_any()
    parsed = {}
    for key in SETTING_KEYS:
        if values.get(key) is not None:
            with problems.collected():
                parsed[key] = parsers[key](values[key], _label(where, key))
    problems.raise_any()
    settings = Settings(**parsed)
    if settings.checks is not None and settings.skip is not None and not set(settings.checks) - set(settings.skip):
        raise UsageError(
            f"{_label(where, 'skip')}: skips every check that {_label(where, 'checks')} names: nothing would run"
        )
    return settings


def settings_from(*, check_names: Sequence[str], **values: Any) -> Settings:
    """Settings given as keywords in code (None: not given), validated by `parse_settings`."""
    return parse_settings({k: v for k, v in values.items() if v is not None}, "", check_names=check_names)


def settings_from_command_line(
    texts: Mapping[str, Any], *, check_names: Sequence[str], names: Mapping[str, str] | None = None
) -> Settings:
    """The settings of a command line: `texts` maps a setting's key to what its option was given
    (a text, the texts of a repeated option, or None / nothing when not given); each is turned
    into the value a config would hold and validated by `parse_settings`, named by its option
    in messages (`--seed: must be an integer ...`), or by `names` where the text came from
    elsewhere (pytest's ini option `layercheck_timeout`)."""
    unknown = set(texts) - {setting.key for setting in SETTINGS if setting.option}
    if unknown:  # a defect of the caller, not of the user's input
        raise ValueError(f"not settings of the command line: {sorted(unknown)}")
    values = {}
    for setting in SETTINGS:
        text = texts.get(setting.key)
        if text is None or text == ():
            continue
        values[setting.key] = setting.from_text(text) if setting.from_text else text
    options = {setting.key: setting.option for setting in SETTINGS if setting.option}
    return parse_settings(values, {**options, **(names or {})}, check_names=check_names)


# -- options: what the checks of one target read ---------------------------------------------


@dataclass(frozen=True)
class Options:
    """The complete settings of one target's checks.

    `tolerances` is merged over `DEFAULT_TOLERANCES` when an Options is made, so that it
    holds the final rtol and atol of every dtype, however the Options was built.
    """

    dtypes: tuple[str, ...] = DEFAULT_DTYPES
    seed: int = 0
    tolerances: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    checks: tuple[str, ...] | None = None
    skip: tuple[str, ...] = ()
    inputs: tuple[Any, ...] | None = None  # fixed input values instead of random draws
    input_domains: Any = None  # overrides the layer's input_domain: (low, high) or one per input
    device: str = "auto"  # cpu | gpu | auto
    # The target's time limit in seconds (None: none, as in the Python API): the checks that
    # spend time on their own work (the diagnosis of a failed gradient) keep to a share of it.
    timeout: float | None = None
    # No dtypes were given (`dtypes` is `DEFAULT_DTYPES`): a layer whose learnables, state or
    # constants are complex is checked at `COMPLEX_DTYPES` too (`running.session`), since its
    # complex arithmetic (a conjugate above all) is what real dtypes never exercise.
    default_dtypes: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "tolerances", merge_tolerances(self.tolerances, DEFAULT_TOLERANCES))

    def tolerance(self, dtype: Any) -> tuple[float, float]:
        """(rtol, atol) for `dtype`; an rtol or atol of 0 is kept, not taken for "unset".

        A dtype without a tolerance of its own (a float16, longdouble or complex256 result: a
        layer may return any dtype, and the settings name only the tested ones) takes that of
        the nearest precision of its kind. One coarser than all of them gets an rtol of no
        less than `_COARSE_ULPS` of its own epsilon: its rounding is failed once, by the checks
        of dtypes, not again as a difference.
        """
        dtype = np.dtype(dtype)
        tol = self.tolerances.get(dtype.name)  # merged over DEFAULT_TOLERANCES: every tested dtype
        if tol is not None:
            return float(tol["rtol"]), float(tol["atol"])
        known = ("complex64", "complex128") if dtype.kind == "c" else ("float32", "float64")
        eps = _epsilon(dtype)
        if eps is None:  # not a NumPy float (an extension type): the coarsest known precision
            rtol, atol = self.tolerance(known[0])
            return rtol, atol
        nearest = min(known, key=lambda name: abs(math.log(eps / machine_epsilon(name))))
        rtol, atol = self.tolerance(nearest)
        if eps > machine_epsilon(known[0]):
            rtol = max(rtol, _COARSE_ULPS * eps)
        return rtol, atol


# The relative tolerance, in units of its own epsilon, of a precision coarser than any tested
# one (float16: 1.6e-2): sums of a few dozen terms, each rounded, stay within it.
_COARSE_ULPS = 16


def _epsilon(dtype: np.dtype[Any]) -> float | None:
    try:
        return machine_epsilon(dtype)
    except (ValueError, TypeError):  # an integer or extension dtype
        return None


def options_from(settings: Settings, inputs: Sequence[Any] | None = None) -> Options:
    """The Options of validated settings; nothing is parsed again.

    Args:
        settings: validated and merged (`merge_settings`); one not given takes the built-in
            default, as `Options`' own defaults are.
        inputs: the API's fixed input values, one per input, or None for random draws.

    Raises:
        UsageError: device gpu where no GPU is usable (with the reason).
    """
    if settings.device == "gpu":
        require_usable_gpu()
    given = {setting.keyword: getattr(settings, setting.key) for setting in SETTINGS}
    inputs = tuple(inputs) if inputs is not None else None
    # BUILTIN's own tuple where no layer of settings gave dtypes: a given one is parsed anew.
    default_dtypes = settings.dtypes is BUILTIN.dtypes
    return Options(inputs=inputs, default_dtypes=default_dtypes, **{k: v for k, v in given.items() if v is not None})


def make_options(*, check_names: Sequence[str], inputs: Sequence[Any] | None = None, **keywords: Any) -> Options:
    """The Options of the Python API's keyword options, validated by `parse_settings`.

    Args:
        check_names: the check names `checks` and `skip` accept (the registry's).
        inputs: fixed input values, one per input (their shapes are checked against the layouts
            by the caller).
        keywords: each setting by its API keyword (`Setting.keyword`: `dtypes`, `seed`,
            `tolerances`, `checks`, `skip`, `input_domains`, `device`, `timeout`), as in a
            config file (tuples for lists); None for the built-in default.

    Raises:
        UsageError: `name: problem` for a bad value, or device gpu where no GPU is usable.
        TypeError: a keyword that is not a setting's (a defect of the caller).
    """
    by_keyword = {setting.keyword: setting for setting in SETTINGS}
    unknown = set(keywords) - set(by_keyword)
    if unknown:
        raise TypeError(f"unknown option(s): {', '.join(sorted(unknown))}")
    values = {by_keyword[k].key: v for k, v in keywords.items() if v is not None}
    names = {setting.key: setting.keyword for setting in SETTINGS}
    settings = parse_settings(values, names, check_names=check_names)
    return options_from(merge_settings(settings), inputs=inputs)
