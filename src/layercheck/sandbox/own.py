"""The sandbox's own builtins: a copy of the interpreter's, taken when layercheck is imported,
before any code of a layer runs.

Each module of the sandbox resolves `all`, `any`, `len`, `isinstance`... in this copy (its
`__builtins__`), not in the `builtins` module a layer can write to: the look that finds
`builtins.all` replaced must not call the replacement. A hunt made `all` return True and `any`
False, and the guard's comparisons saw nothing changed; a layer whose outputs were all NaN
passed. The copy is one of layercheck's own tables, watched as the others are (a change to it
is tampering); the interpreter's `builtins` stays watched after every call of the layer.
"""

from __future__ import annotations

import builtins
from typing import Any

__all__ = ["OWN_BUILTINS"]

OWN_BUILTINS: dict[str, Any] = dict(vars(builtins))
