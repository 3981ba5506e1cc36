"""The evidence of the failed checks that a few calls of the layer decide (every one but the
gradient check): what the layer was given, so that its reproducer calls it the same way.

Every such evidence holds the arguments of the call at the dtype the check ran (`x0`, `x1`...:
the inputs, then the learnables and state), for backward the loss gradients (`w0`...: dL/dY
then dL/dS_out), and `target_meta`: how to build and call the layer. The checks call these
builders only when a reproducer is asked for (`LazyEvidence`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from layercheck.contract.adapter import LayerAdapter, OperationAdapter
from layercheck.contract.layout import Layout
from layercheck.numerics import arrays
from layercheck.reproducers.evidence import Evidence, ReproKind
from layercheck.settings.options import DEFAULT_TOLERANCES

if TYPE_CHECKING:  # for annotations only
    from layercheck.checks.context import CheckContext

__all__ = ["call_evidence", "layouts_meta", "session_tolerance_words", "target_meta", "tolerance_words"]


def target_meta(session: CheckContext, dtype: str, arguments: Sequence[Any]) -> dict[str, Any]:
    """How a reproducer builds the layer and calls it as layercheck did: its kind, methods,
    names, layouts and seed, and the dtype of each argument it was given."""
    layer = session.reference
    operation = layer if isinstance(layer, OperationAdapter) else None
    plain = isinstance(layer, LayerAdapter) and layer.is_plain_function
    return {
        "target_kind": layer.kind.value,
        "plain_function": plain,
        "has_forward": layer.has_forward,
        "has_backward": layer.has_backward,
        "seed": int(session.options.seed),
        "device": "gpu" if arrays.on_gpu(session.home_module()) else "cpu",
        "dtype": dtype,
        "precision": str(arrays.precision_of(dtype)),
        "arg_dtypes": [np.dtype(value.dtype).name for value in arguments],
        "names": list(layer.input_names),
        "outputs": list(layer.output_names),
        "gradient_names": list(layer.gradient_names()),
        "n_inputs": layer.num_inputs,
        "n_outputs": layer.num_outputs,
        "learnables": list(layer.learnables),
        "state": list(layer.state),
        "num_memory_values": 0 if operation is None else operation.num_memory_values,
        "save_inputs": False if operation is None else operation.save_inputs,
        "save_outputs": False if operation is None else operation.save_outputs,
        "differentiable": [not integer for integer in session.integer_inputs],
        "integer_arguments": list(session.integer_arguments),
        "layouts": layouts_meta(session.layouts),
        # A layer of another convention (a function pair): how the reproducer makes it again,
        # and how it names the gradients (dx, dout) as the reports do.
        "convention": layer.convention_data,
        "gradient_labels": {name: layer.d(name) for name in (*layer.gradient_names(), *layer.output_names)},
    }


def layouts_meta(layouts: Sequence[Layout]) -> list[dict[str, Any]]:
    """The layouts as a reproducer's harness reads them (`Layout(**each)`)."""
    return [{"size": list(layout.size), "format": layout.format, "integer": layout.integer} for layout in layouts]


def call_evidence(
    session: CheckContext,
    kind: ReproKind,
    check: str,
    method: str,
    dtype: str,
    arguments: Sequence[Any] | None = None,
    loss: Sequence[Any] = (),
    **meta: Any,
) -> Evidence:
    """The evidence of `check`, which called `method` at `dtype` with `arguments` (default:
    the session's inputs, learnables and state at `dtype`) and, for backward, the loss
    gradients `loss`; `meta` adds what the kind's script reads besides."""
    if arguments is None:
        held = session.parameters(dtype)
        arguments = [*session.inputs(dtype, shared=True), *(held[name] for name in session.reference.parameter_names)]
    data = {f"x{i}": value for i, value in enumerate(arguments)}
    data.update({f"w{j}": value for j, value in enumerate(loss)})
    described = {**target_meta(session, dtype, arguments), "method": method, **meta}
    return Evidence(kind, check, described, data)


def tolerance_words(rtol: float, atol: float, judged: Any, dtype: Any) -> str:
    """Where the tolerance (`rtol`, `atol`) of a check on `dtype` data comes from, in words
    (the numbers are printed beside it). `judged` is the precision it was judged at: below
    `dtype`'s where the layer computes below it inside."""
    data = np.dtype(dtype)
    precision = arrays.precision_of(judged)
    # Named as the data is: complex64's tolerances for complex data judged at float32.
    name = np.result_type(precision, np.complex64).name if data.kind == "c" else precision.name
    defaults = DEFAULT_TOLERANCES.get(name, {})
    if defaults and (rtol, atol) == (defaults["rtol"], defaults["atol"]):
        words = f"layercheck's defaults for {name}"
    else:
        words = f"the tolerances configured for {name}"
    if precision != arrays.precision_of(data):
        words += f"; judged at {name} because the layer computes below {data.name} inside"
    return words


def session_tolerance_words(session: CheckContext, dtype: str) -> str:
    """`tolerance_words` for the tolerance `session.tolerance(dtype)` the calls' checks use."""
    judged = np.float32 if session.precision(dtype).lost else dtype
    return tolerance_words(*session.tolerance(dtype), judged, dtype)
