"""Not layercheck: the folder of a clone of its source, imported as `layercheck` by mistake.

A script run from the folder that holds a clone named `layercheck` has that folder first on
`sys.path`, so `import layercheck` finds the clone before the installed package. Without this
file the clone would be an empty namespace package (`module 'layercheck' has no attribute
'check_layer'`, and nothing more). With it, the import hands over to the installed package,
the clone's own folder set aside; where there is none, it fails in one line that says why.
The package itself is `src/layercheck/`; nothing else imports this file.
"""

import os
import sys

_CLONE = os.path.dirname(os.path.abspath(__file__))


def _elsewhere(entry: str) -> bool:
    """Whether a `sys.path` entry finds some other `layercheck` than this folder."""
    here = os.path.join(entry or os.curdir, "layercheck", "__init__.py")
    try:
        return not os.path.samefile(here, __file__)
    except OSError:  # no such file there
        return True


del sys.modules[__name__]  # so that the import below looks again, past this folder
_path = sys.path[:]
sys.path[:] = [entry for entry in _path if _elsewhere(entry)]
try:
    import layercheck  # the installed package, wherever it is
except ImportError:
    raise ImportError(
        f"layercheck is not installed for {sys.executable}: {_CLONE} is a clone of its source, "
        f"not the package; install it with: {sys.executable} -m pip install -e {_CLONE}"
    ) from None
finally:
    sys.path[:] = _path
sys.modules[__name__] = layercheck
