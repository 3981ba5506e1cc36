"""layercheck: validate hand-written neural-network layers and their backward passes.

report = layercheck.check_layer(MyLayer, "24,24,20,128:SSCB")
report.raise_on_failure()

The names in `__all__` are the public API; every other module is internal and may change.
"""

__version__ = "0.1.0"

from layercheck.api import check_function, check_layer  # noqa: E402
from layercheck.contract.base import Layer  # noqa: E402
from layercheck.contract.layout import Layout, parse_layout  # noqa: E402
from layercheck.errors import LayercheckError, UsageError  # noqa: E402
from layercheck.results import CheckFailure, CheckResult, Kind, Report, Status, TargetReport  # noqa: E402

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
