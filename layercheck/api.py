"""The Python API: check a layer from a test suite or a notebook.

Wiring only: options are parsed and validated by `settings.options.make_options` (the
validator the command line and config files use too), then the runner checks the target.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Mapping
from typing import Any

import numpy as np

from layercheck.checks import REGISTRY
from layercheck.contract.adapter import is_operation, kind_of
from layercheck.contract.layout import parse_layouts
from layercheck.contract.loading import constructor
from layercheck.errors import UsageError
from layercheck.machine import refuse_if_too_large
from layercheck.results import TargetReport
from layercheck.running.runner import run_target
from layercheck.settings.options import make_options


def check_layer(layer: Any, layout: Any, *, args: Mapping[str, Any] | None = None, **options: Any) -> TargetReport:
    """Check a layer class (constructed with `args`), a layer instance, or a plain function.

    `layout` is `"24,24,20,128:SSCB"`, a Layout, a `{size, format}` mapping, or a list with
    one of those per input. Options: dtypes, seed, tolerances ({dtype: {rtol, atol}}), checks,
    skip, inputs (arrays to check at, one per input, instead of random draws), and
    input_domains ((low, high) or one per input, None for unbounded: overrides input_domain).
    An instance is copied for every fresh layer the checks need; it is never modified.
    An operation given here is checked as one (see `check_function`).
    """
    return _check(layer, layout, args, options)


def check_function(fn: Any, layouts: Any, *, args: Mapping[str, Any] | None = None, **options: Any) -> TargetReport:
    """Check a differentiable operation: a class (constructed with `args`) or instance with
    `forward` and `backward` and no `predict`. `layouts` has one layout per input of forward;
    options as for `check_layer`. The report's kind is "function"."""
    if not is_operation(fn):
        raise UsageError(
            f"{getattr(fn, '__name__', type(fn).__name__)} is not an operation (a class with forward and "
            "backward and no predict); check layers and plain functions with check_layer"
        )
    return _check(fn, layouts, args, options)


def _check(layer: Any, layout: Any, args: Mapping[str, Any] | None, options: dict[str, Any]) -> TargetReport:
    layouts = parse_layouts(layout)
    refuse_if_too_large(layouts)
    opts = make_options(**options, check_names=tuple(REGISTRY))
    if opts.inputs is not None:
        shapes = [np.shape(x) for x in opts.inputs]
        if shapes != [layout.size for layout in layouts]:
            raise UsageError(f"inputs have shapes {shapes} but the layouts need {[layout.size for layout in layouts]}")
    if inspect.isclass(layer):
        factory, label = constructor(layer, dict(args or {})), layer.__name__
    elif inspect.isfunction(layer):
        factory, label = (lambda: layer), layer.__name__
    else:
        factory, label = _copier(layer), type(layer).__name__
    return run_target(label, factory, layouts, opts, kind=kind_of(layer))


def _copier(instance: Any):
    """Fresh copies of an instance; the instance itself when it cannot be copied."""
    try:
        copy.deepcopy(instance)
    except Exception:
        return lambda: instance
    return lambda: copy.deepcopy(instance)
