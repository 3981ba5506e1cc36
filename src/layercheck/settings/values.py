"""The building blocks of validation that config files and settings share: the error of a bad
value at a key path, how a value is shown in a message, the check of a mapping's keys, and
numbers as YAML 1.1 leaves them.

`settings/options.py` (the settings) and `settings/config.py` (the file's structure) both
build on these, so neither reaches into the other's private names.
"""

from __future__ import annotations

import contextlib
import difflib
import math
import numbers
import re
from collections.abc import Iterator, Mapping
from typing import Any

from layercheck.errors import UsageError
from layercheck.safetext import safe_repr

__all__ = ["SCIENTIFIC", "Invalid", "Problems", "check_keys", "number", "show"]

# YAML 1.1 (PyYAML) reads a float only with a dot and a signed exponent: `1e-4`, `1E5` and
# `1.0e5` stay strings. These are the spellings users mean as numbers.
SCIENTIFIC = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")


class Invalid(UsageError):
    """A bad value at a key path: `where: problem`, on one line (exit status 2).

    `where` is the key path in the caller's terms: `defaults.seed` in a config (to which
    `parse_config` adds the file name), `--seed` on the command line, `seed` in the API.
    The public functions raise it as a plain UsageError.
    """

    def __init__(self, where: str, problem: str):
        super().__init__(f"{where}: {' '.join(str(problem).split())}")
        self.where, self.problem = where, problem


# -- the values ----------------------------------------------------------------------------


def show(value: Any) -> str:
    """A value in a message: short, and safe from what it holds (an int of more digits than
    Python converts to text; YAML aliases that expand to gigabytes when printed)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return "a very large number"
    text = safe_repr(value, 200)
    return text if len(text) <= 60 else text[:57] + "..."


def check_keys(data: Any, where: str, allowed: tuple[str, ...], hints: Mapping[str, str] | None = None) -> None:
    """A mapping with string keys, all of them allowed; `hints` says where a key that is not
    allowed here belongs instead. Every unknown key is a problem of its own (`UsageError`)."""
    if not isinstance(data, Mapping):
        raise Invalid(where, f"must be a mapping with the keys {', '.join(allowed)}, got {show(data)}")
    problems = Problems()
    for key in data:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            if hints and key in hints:
                hint = f" ({hints[key]})"
            problems.add(Invalid(where, f"unknown key {show(key)}{hint}; allowed: {', '.join(allowed)}"))
    problems.raise_any()


class Problems:
    """The problems of a validation that goes on past each one, raised together at the end
    (`raise_any`): a config with two mistakes is told of both in one run."""

    def __init__(self) -> None:
        self.found: list[str] = []

    @contextlib.contextmanager
    def collected(self) -> Iterator[None]:
        """Run the block; a UsageError it raises is kept, and what follows goes on."""
        try:
            yield
        except UsageError as exc:
            self.add(exc)

    def add(self, problem: UsageError) -> None:
        """Keep `problem` (each of its own problems, where it has several)."""
        self.found.extend(problem.problems or (str(problem),))

    def raise_any(self) -> None:
        if self.found:
            raise UsageError(*self.found)


def number(value: Any, where: str = "value") -> float:
    """An int or float, or a string that YAML 1.1 did not read as one (`1e-4`); not NaN."""
    if isinstance(value, str) and SCIENTIFIC.match(value.strip()):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise Invalid(where, f"must be a number, got {show(value)}")
    try:
        x = float(value)
    except OverflowError:
        raise Invalid(where, "is too large a number") from None
    if math.isnan(x):
        raise Invalid(where, "must be a number, got NaN")
    return x
