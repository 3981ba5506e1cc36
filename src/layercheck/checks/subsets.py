"""A batch cut by observation: which axis of each input, output and state is the batch's,
and a layer and inputs for some of its observations. For the checks that compare a batch with
its observations (`observations`) and for the gradient check's sub-batch, where a failed
gradient is localized on a few observations of a large batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from layercheck.checks.common import named_outputs, primary_dtype, require_arrays
from layercheck.checks.context import CheckContext
from layercheck.checks.layouts import output_batch_axes, require_batch
from layercheck.checks.registry import Incomplete, Skip
from layercheck.contract.adapter import Adapter
from layercheck.numerics import arrays

__all__ = ["MAX_OBSERVATIONS", "Split", "split_by_observation", "subset_inputs", "subset_layer", "take"]

MAX_OBSERVATIONS = 16


def take(x: Any, indices: Sequence[int], axis: int | None) -> Any:
    """The observations `indices` of `x` along its batch `axis` (all of `x` where it has none)."""
    if axis is None:
        return x
    return x.take(arrays.array_module(x).asarray(list(indices), dtype=np.intp), axis=axis)


def _chosen(n: int, rng: np.random.Generator) -> list[int]:
    if n <= MAX_OBSERVATIONS:
        return list(range(n))
    middle = rng.choice(np.arange(1, n - 1), MAX_OBSERVATIONS - 2, replace=False)
    return sorted({0, n - 1, *middle.tolist()})


@dataclass(frozen=True)
class Split:
    """How to cut the arguments and results of one layer by observation."""

    dtype: str
    inputs: list[int | None]
    outputs: list[int | None]
    states: dict[str, int | None]

    @property
    def results(self) -> list[int | None]:
        """The batch axis of each output, then of each updated state."""
        return self.outputs + list(self.states.values())


def _state_axes(session: CheckContext, dtype: str, n: int) -> dict[str, int | None]:
    """Each state's batch axis: the one axis where its size is n with n observations and 1 with one."""
    names = session.reference.state
    if not names:
        return {}
    one = session.layer(dtype, [layout.with_batch_size(1) for layout in session.layouts])
    axes: dict[str, int | None] = {}
    for name in names:
        full, single = session.reference_parameters[name].shape, one.get(name).shape
        differ = [k for k in range(len(full)) if len(full) == len(single) and full[k] != single[k]]
        if full == single:
            axes[name] = None
        elif len(full) == len(single) and len(differ) == 1 and full[differ[0]] == n and single[differ[0]] == 1:
            axes[name] = differ[0]
        else:
            raise Incomplete(
                f"not checked: state {name} has shape {tuple(full)} for {n} observations and {tuple(single)} "
                "for one, so it cannot be split by observation"
            )
    return axes


def split_by_observation(
    session: CheckContext, method: str, outputs: Sequence[Any] | None = None
) -> tuple[Split, list[int]]:
    """How to cut by observation, and which observations to check. `outputs`: the arrays
    `method` returned for the session's inputs, where the caller holds them (the gradient
    check's base point: the session's step is not run again for their shapes)."""
    n = require_batch(session)
    if n == 1:
        raise Skip("the layout has a single observation")
    dtype = primary_dtype(session)
    if outputs is None:
        returned = session.step(method, dtype).require()
        require_arrays(named_outputs(session.reference, returned), method)
        outputs = returned.values
    split = Split(
        dtype,
        [layout.find("B") for layout in session.layouts],
        output_batch_axes(session, outputs),
        _state_axes(session, dtype, n),
    )
    if all(axis is None for axis in split.results):
        raise Skip("no output or state has a batch axis")
    return split, _chosen(n, session.rng("observations"))


def subset_layer(session: CheckContext, split: Split, indices: Sequence[int]) -> Adapter:
    layer = session.layer(split.dtype, [layout.with_batch_size(len(indices)) for layout in session.layouts])
    for name, axis in split.states.items():
        layer.set(name, take(session.parameters(split.dtype)[name].copy(), indices, axis))
    return layer


def subset_inputs(session: CheckContext, split: Split, indices: Sequence[int]) -> list[Any]:
    """Fresh arrays of the observations `indices` of the session's inputs (taken from its own
    arrays, never written: a copy of the whole input for each subset would cost more than
    running the layer on it)."""
    return [
        x.copy() if axis is None else take(x, indices, axis)
        for x, axis in zip(session.inputs(split.dtype, shared=True), split.inputs)
    ]
