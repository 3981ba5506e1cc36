"""layercheck: validate hand-written neural-network layers and their backward passes.

report = layercheck.check_layer(MyLayer, "24,24,20,128:SSCB")
report.raise_on_failure()

The names in `__all__` are the public API; every other module is internal and may change.
"""

import os as _os
import sys as _sys
from typing import TYPE_CHECKING as _TYPE_CHECKING


def _shadow_nothing_when_run_with_m() -> None:
    """`python -m layercheck` puts the working folder first on sys.path before this package
    is imported, so a user's `yaml.py`, `numpy.py` or `click.py` there would be imported in
    place of the library (what PYTHONSAFEPATH turns off). While Python locates the module of
    `-m`, `sys.argv[0]` is "-m": then, and only for layercheck's own run, that first entry
    moves to the end, as in the workers (`sandbox.isolation.worker_sys_path`): it shadows
    nothing, and a checkout run without being installed still finds layercheck there. A
    `layercheck/` in the working folder is found by Python itself before this runs."""
    if _sys.argv[:1] != ["-m"] or not any(a in ("layercheck", "layercheck.cli") for a in _sys.orig_argv):
        return
    if _sys.path and _sys.path[0] in ("", _os.getcwd()):
        _sys.path.append(_sys.path.pop(0))


_shadow_nothing_when_run_with_m()

# The public names are imported when first used (PEP 562), not with the package: every pytest
# run of a user with layercheck installed imports `layercheck.pytest_plugin`, and so this
# package, and the API pulls in NumPy and the checks (about 0.4 s). The first use imports them
# all at once, so that the package's namespace is what an eager import gave.
_PUBLIC = {
    "check_layer": "layercheck.api",
    "check_function": "layercheck.api",
    "Layer": "layercheck.contract.base",
    "Layout": "layercheck.contract.layout",
    "parse_layout": "layercheck.contract.layout",
    "LayercheckError": "layercheck.errors",
    "UsageError": "layercheck.errors",
    "CheckFailure": "layercheck.results",
    "CheckResult": "layercheck.results",
    "Kind": "layercheck.results",
    "Report": "layercheck.results",
    "Status": "layercheck.results",
    "TargetReport": "layercheck.results",
    "__version__": "layercheck.version",  # the PEP 396 attribute
}

if _TYPE_CHECKING:
    from layercheck.api import check_function, check_layer
    from layercheck.contract.base import Layer
    from layercheck.contract.layout import Layout, parse_layout
    from layercheck.errors import LayercheckError, UsageError
    from layercheck.results import CheckFailure, CheckResult, Kind, Report, Status, TargetReport
    from layercheck.version import __version__ as __version__


def _import_public() -> None:
    """Import every public name into the package's namespace (once; `__getattr__`, and the
    forkserver, so that a worker's record of layercheck is taken with them loaded)."""
    import importlib

    for name, module in _PUBLIC.items():
        globals()[name] = getattr(importlib.import_module(module), name)


def __getattr__(name: str) -> object:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'layercheck' has no attribute {name!r}")
    _import_public()
    return globals()[name]


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})


__all__ = [
    "Layer",
    "Layout",
    "parse_layout",
    "check_layer",
    "check_function",
    "Report",
    "TargetReport",
    "CheckResult",
    "CheckFailure",
    "Status",
    "Kind",
    "UsageError",
    "LayercheckError",
]
