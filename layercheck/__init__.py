"""layercheck: validate hand-written neural-network layers and their backward passes.

report = layercheck.check_layer(MyLayer, "24,24,20,128:SSCB")
report.raise_on_failure()

The names in `__all__` are the public API; every other module is internal and may change.
"""

import os as _os
import sys as _sys


def _shadow_nothing_when_run_with_m() -> None:
    """`python -m layercheck` puts the working folder first on sys.path before this package
    is imported, so a user's `yaml.py`, `numpy.py` or `click.py` there would be imported in
    place of the library (what PYTHONSAFEPATH turns off). While Python locates the module of
    `-m`, `sys.argv[0]` is "-m": then, and only for layercheck's own run, that first entry
    moves to the end, as in the workers (`running.isolation.worker_sys_path`): it shadows
    nothing, and a checkout run without being installed still finds layercheck there. A
    `layercheck/` in the working folder is found by Python itself before this runs."""
    if _sys.argv[:1] != ["-m"] or not any(a in ("layercheck", "layercheck.cli") for a in _sys.orig_argv):
        return
    if _sys.path and _sys.path[0] in ("", _os.getcwd()):
        _sys.path.append(_sys.path.pop(0))


_shadow_nothing_when_run_with_m()

from layercheck.api import check_function, check_layer  # noqa: E402
from layercheck.contract.base import Layer  # noqa: E402
from layercheck.contract.layout import Layout, parse_layout  # noqa: E402
from layercheck.errors import LayercheckError, UsageError  # noqa: E402
from layercheck.results import CheckFailure, CheckResult, Kind, Report, Status, TargetReport  # noqa: E402
from layercheck.version import __version__ as __version__  # noqa: E402  (the PEP 396 attribute)

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
