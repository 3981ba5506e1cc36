"""Strict readers of a check's typed details as JSON holds them (`results.plain`: complex
numbers as [re, im], non-finite floats as "inf", "-inf" or "nan") or as the check holds them
(Python and NumPy numbers): each returns the value typed, or raises `MalformedFinding` with one
line that says what does not fit. The gradient check's findings (`gradients.findings`,
`findings.gradient`) and a mismatch (`compare.Mismatch`) are read with them."""

from __future__ import annotations

import enum
import math
import numbers
from collections.abc import Mapping
from typing import Any, TypeVar

import numpy as np

__all__ = [
    "MalformedFinding",
    "flag",
    "indices",
    "integer",
    "items",
    "exactly",
    "mapping",
    "member",
    "named",
    "number",
    "real",
    "shown",
    "text",
    "whole",
]


class MalformedFinding(ValueError):
    """Data that is not a finding as its `to_dict` writes it: `str()` says what, in one line."""


def shown(value: Any) -> str:
    return repr(value)[:40]


def mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise MalformedFinding(f"{what} is not a mapping")
    return value


def exactly(value: Any, what: str, keys: set[str]) -> Mapping[str, Any]:
    """A mapping with these keys and no other."""
    fields = mapping(value, what)
    if set(fields) != keys:
        raise MalformedFinding(f"{what} has the keys {', '.join(sorted(map(str, fields)))}")
    return fields


def items(value: Any, what: str) -> list[Any]:
    if not isinstance(value, (list, tuple)):
        raise MalformedFinding(f"{what} holds {shown(value)}, not a list")
    return list(value)


def text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise MalformedFinding(f"{what} is {shown(value)}, not a string")
    return value


def flag(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise MalformedFinding(f"{what} is {shown(value)}, not true or false")
    return value


def integer(value: Any, what: str) -> int:
    # JSON's ints, and the NumPy integers a check's own details may hold (never a bool).
    if not isinstance(value, numbers.Integral) or isinstance(value, (bool, np.bool_)):
        raise MalformedFinding(f"{what} is {shown(value)}, not a whole number")
    return int(value)


def whole(value: Any, what: str) -> int:
    # Sizes and indices of arrays: below 2**63, as NumPy's are.
    if not 0 <= integer(value, what) < 1 << 63:
        raise MalformedFinding(f"{what} is {shown(value)}, not a whole number >= 0")
    return int(value)


def indices(value: Any, what: str) -> tuple[int, ...]:
    return tuple(whole(k, what) for k in items(value, what))


_NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def real(value: Any, what: str) -> float:
    """A float as `results.plain` writes it (a number, or "inf", "-inf" or "nan"), or as the
    check holds it (a NumPy float)."""
    if isinstance(value, str) and value in _NON_FINITE:
        return _NON_FINITE[value]
    if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)):
        raise MalformedFinding(f"{what} is {shown(value)}, not a number")
    try:
        return float(value)
    except OverflowError:
        raise MalformedFinding(f"{what} is {shown(value)}, too large for a float") from None


def number(value: Any, what: str) -> complex | float:
    """A real number, or a complex one: written as [re, im] (`results.plain`), or as the
    check holds it."""
    if isinstance(value, (list, tuple)):
        if len(value) != 2:
            raise MalformedFinding(f"{what} is {shown(value)}, not a number or [re, im]")
        return complex(real(value[0], what), real(value[1], what))
    if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
        return complex(value)
    return real(value, what)


_E = TypeVar("_E", bound=enum.Enum)


def named(kind: type[_E], value: Any, what: str) -> _E:
    """The member of `kind` whose name, in lower case, is `value` (how the typed findings write
    an enum whose values are words)."""
    names = {m.name.lower(): m for m in kind}
    if not isinstance(value, str) or value not in names:
        raise MalformedFinding(f"{what} is {shown(value)}, not one of {', '.join(names)}")
    return names[value]


def member(kind: type[_E], value: Any, what: str) -> _E:
    try:
        return kind(value)
    except (ValueError, TypeError):
        raise MalformedFinding(
            f"{what} is {shown(value)}, not one of {', '.join(str(m.value) for m in kind)}"
        ) from None
