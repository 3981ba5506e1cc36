"""The sandbox's own builtins: a copy of the interpreter's, taken when layercheck is imported,
before any code of a layer runs.

Each module of the sandbox resolves `all`, `any`, `len`, `isinstance`... in this copy (its
`__builtins__`), not in the `builtins` module a layer can write to: the look that finds
`builtins.all` replaced must not call the replacement. A hunt made `all` return True and `any`
False, and the guard's comparisons saw nothing changed; a layer whose outputs were all NaN
passed. The interpreter's `builtins` stays watched after every call of the layer.

The copy is layercheck's own object, within a layer's reach (`OWN_BUILTINS["all"] = ...`, a
review's attack): each look first compares it, entry by entry, with what it held when it was
made (`changed_entries`), by code that resolves nothing in it (its defaults, bound when it was
defined), and puts back what was changed before any other comparison runs.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

__all__ = ["OWN_BUILTINS", "changed_entries"]

OWN_BUILTINS: dict[str, Any] = dict(vars(builtins))


def changed_entries(
    live: dict[str, Any] = OWN_BUILTINS,
    names: tuple[str, ...] = tuple(OWN_BUILTINS),
    values: tuple[Any, ...] = tuple(OWN_BUILTINS.values()),
    get: Any = OWN_BUILTINS.get,
    same: Any = operator.is_,
    apply: Any = map,
    items: type[tuple[Any, ...]] = tuple,
    size: Any = len,
    restore: Any = OWN_BUILTINS.update,
    clear: Any = OWN_BUILTINS.clear,
    pairs: Any = zip,
) -> tuple[str, ...]:
    """The names of the copy's entries changed, added or removed since it was made, each put
    back (the copy then holds what it held). Its primitives are its defaults: a name resolved
    at run time would be looked up in the very copy it checks."""
    held = items(apply(same, apply(get, names), values))
    if size(live) == size(names) and False not in held:
        return ()
    changed = items(name for name, kept in pairs(names, held) if not kept)
    added = items(name for name in live if name not in names)
    clear()
    restore(pairs(names, values))
    return changed + added
