"""CuPy as this process has it: the `cupy` of `sys.modules`, and its array class.

CuPy is never imported here: a CuPy array can only exist once `cupy` is in `sys.modules`. But a
layer's module can put anything there (`sys.modules["cupy"] = types.ModuleType("cupy")`, or a
module whose `ndarray` is `numpy.ndarray`): layercheck must then neither crash on it nor take
NumPy arrays for CuPy's, nor run its GPU checks on it. So a `cupy` counts only when the import
system loaded it from a file (CuPy itself, or a stand-in package such as the tests' on the
path); its `ndarray` counts only when it is a class of its own, not NumPy's. Nothing here runs
code of the object found (no `getattr` through a module's `__getattr__`, no `isinstance`
through a metaclass's `__instancecheck__`).
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["cupy_array_class", "fake_cupy", "imported_cupy", "is_cupy_array"]


def imported_cupy() -> ModuleType | None:
    """The `cupy` of `sys.modules` when the import system loaded it from a file, else None."""
    return sys.modules.get("cupy") if cupy_array_class() is not None else None


def fake_cupy() -> str | None:
    """What `sys.modules["cupy"]` holds when it is there but is no imported module, in words
    ("holds a module made in memory, not imported from a file"), else None."""
    module = sys.modules.get("cupy")
    return None if module is None else _not_imported(module)


_MODULE_DICT: Any = vars(ModuleType)["__dict__"]  # the slot of every module, subclasses' too


def _not_imported(module: Any) -> str | None:
    if not isinstance(module, ModuleType):
        return f"holds a {type(module).__name__!r} object, not a module"
    namespace = _MODULE_DICT.__get__(module, ModuleType)  # its own namespace, whatever its class overrides
    spec = namespace.get("__spec__")
    if type(spec) is not ModuleSpec:  # the import system's own class, not a look-alike
        return "holds a module made in memory, not one imported from a file"
    origin = spec.origin
    if not (isinstance(origin, str) and os.path.isfile(origin)) or spec.name != "cupy":
        return "holds a module made in memory, not one imported from a file"
    array_class = namespace.get("ndarray")
    if not isinstance(array_class, type) or np.ndarray in array_class.__mro__:
        return "holds a module whose ndarray is not an array class of its own"
    return None


# The last `cupy` judged and its array class: the engine asks for every array it touches, and
# judging reads the file system (the module's origin).
_judged: tuple[Any, type | None] = (None, None)
_RUNTIME_GLOBALS = ("_judged",)  # rebound while the checks run: not watched (sandbox.integrity)


def cupy_array_class() -> type | None:
    """`cupy.ndarray` of the imported CuPy, or None (no CuPy, or none that counts)."""
    global _judged
    module = sys.modules.get("cupy")
    if module is None:
        return None
    if _judged[0] is not module:
        _judged = (module, None if _not_imported(module) is not None else _MODULE_DICT.__get__(module)["ndarray"])
    return _judged[1]


def is_cupy_array(x: Any) -> bool:
    """Whether `x` is an array of the imported CuPy (its class's MRO, read without running code)."""
    array_class = cupy_array_class()
    return array_class is not None and array_class in type(x).__mro__
