"""Whether reading a class's attributes can run code of the layer's: where it cannot, the
guard's look after layercheck read them (to tell what the class is, how to construct it) would
find what the look before found, and is not taken again (`running.runner`'s `looked`).

A class attribute read runs the metaclass's `__getattribute__` and the `__get__` of what it
finds: of the interpreter's own (a plain function's, a property's, a staticmethod's...) for a
class made by `type` from plain functions and values; and the `__eq__` of a key whose hash is
the name's, of `str`'s own for a plain `str`. Anything else (a metaclass, a descriptor of the
layer's, a classmethod wrapping one, a key of a `str` subclass) may be the layer's code.

The class and its bases are read through `type`'s own descriptors (`__mro__`, `__dict__`),
never through attributes a metaclass could define.
"""

from __future__ import annotations

import types
from typing import Any

from layercheck.sandbox.own import OWN_BUILTINS

# Builtins resolved in the sandbox's own copy: `all`, `type` or `frozenset` replaced in
# `builtins` by the layer's module never answer for it here.
__builtins__ = OWN_BUILTINS  # type: ignore[assignment]  # noqa: A001

__all__ = ["reads_run_no_code"]

_MRO = type.__dict__["__mro__"].__get__
_DICT = type.__dict__["__dict__"].__get__

# The interpreter's own descriptors: their `__get__` on a class returns a function, the
# property itself, or what a slot holds, without calling anything else.
_INERT = frozenset(
    {
        types.FunctionType,
        types.BuiltinFunctionType,
        types.WrapperDescriptorType,
        types.MethodDescriptorType,
        types.ClassMethodDescriptorType,
        types.MemberDescriptorType,
        types.GetSetDescriptorType,
        property,
    }
)


def reads_run_no_code(cls: Any) -> bool:
    """Whether reading any attribute of class `cls` runs only the interpreter's code: a class
    whose metaclass is `type` (so are its bases'), whose namespaces and bases' hold plain
    functions, the interpreter's descriptors, and values that are no descriptors, under keys
    that are plain `str`."""
    if type(cls) is not type:
        return False
    spaces = [_DICT(klass) for klass in _MRO(cls)]
    # A key of another type than str (one whose hash is a name's) has its `__eq__` run by
    # every lookup of that name.
    return all(type(key) is str and _inert(value) for space in spaces for key, value in space.items())


def _inert(value: Any) -> bool:
    kind = type(value)
    if kind in _INERT:
        return True
    if kind is staticmethod or kind is classmethod:
        # classmethod calls the `__get__` of what it wraps (Python 3.9 to 3.12)
        return type(value.__func__) in _INERT
    # A value read back as it is, unless its type (or a base) defines `__get__`.
    return not any("__get__" in _DICT(base) for base in _MRO(kind))
