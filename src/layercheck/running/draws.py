"""The random values a target's checks are given: its inputs and the dL/dY of its training
step, each drawn once on the host from the seed (the same values at every precision and on
both devices) and handed out as copies; and draws of their own for the checks that need other
values (another batch size, another dL/dY)."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from layercheck.checks.registry import Incomplete
from layercheck.contract.adapter import Outputs
from layercheck.contract.layout import Layout
from layercheck.numerics import arrays

__all__ = ["DataKey", "Draws", "OutputGradients"]

OutputGradients = tuple[tuple[Any, ...], tuple[Any, ...]]
Domains = tuple[tuple[float | None, float | None], ...]


@dataclass(frozen=True)
class DataKey:
    """Arrays at one dtype (by its NumPy name) on one device."""

    dtype: str
    gpu: bool


@dataclass
class Draws:
    """The inputs and dL/dY of one target, drawn once and cast once per dtype and device."""

    seed: int
    layouts: tuple[Layout, ...]
    domains: Callable[[], Domains]  # where each input is drawn (asked when first needed)
    fixed: Sequence[Any] | None = None  # the user's own inputs, in place of draws
    _drawn: dict[bool, tuple[Any, ...]] = field(default_factory=dict)  # by complexness, on the host
    _inputs: dict[DataKey, tuple[Any, ...]] = field(default_factory=dict)
    _output_gradients: dict[DataKey, OutputGradients] = field(default_factory=dict)
    # dL/dY and dL/dS_out as drawn on the host, by the shape and complexness of each output
    _drawn_dldy: dict[tuple[Any, ...], tuple[Any, ...]] = field(default_factory=dict)

    def rng(self, purpose: str) -> np.random.Generator:
        """A generator that depends only on the seed and `purpose`: checks do not disturb each other."""
        return np.random.default_rng([self.seed, zlib.crc32(purpose.encode())])

    def inputs(self, dtype: Any, xp: Any, shared: bool = False) -> tuple[Any, ...]:
        """The inputs at `dtype` in the module `xp`: a fresh copy each call, or with `shared`
        the session's own arrays, which the caller must never write into (nor let a layer)."""
        key = DataKey(np.dtype(dtype).name, arrays.on_gpu(xp))
        if key not in self._inputs:
            drawn = self._drawn_inputs(np.dtype(dtype).kind == "c")
            # The draw itself where it is at `dtype` already (the session's, never given away).
            self._inputs[key] = tuple(
                arrays.to_module(x if x.dtype == np.dtype(dtype) else arrays.at_dtype(x, dtype), xp) for x in drawn
            )
        values = self._inputs[key]
        return values if shared else tuple(x.copy() for x in values)

    def _drawn_inputs(self, is_complex: bool) -> tuple[Any, ...]:
        """The user's fixed inputs (shapes checked by `check_layer`), or standard normal draws
        inside each input's domain; on the host."""
        if is_complex not in self._drawn:
            if self.fixed is not None:
                drawn = [arrays.to_host(x) for x in self.fixed]
            else:
                rng = self.rng("inputs")
                draw = np.complex128 if is_complex else np.float64
                drawn = [
                    arrays.random_array(layout, draw, rng, domain)
                    for layout, domain in zip(self.layouts, self.domains())
                ]
            self._drawn[is_complex] = tuple(drawn)
        return self._drawn[is_complex]

    def random_inputs(self, layouts: Sequence[Layout], dtype: Any, purpose: str, xp: Any) -> tuple[Any, ...]:
        """Inputs drawn like `inputs` but for other layouts (another batch size)."""
        rng = self.rng(purpose)
        draw = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
        return tuple(
            arrays.to_module(arrays.at_dtype(arrays.random_array(layout, draw, rng, domain), dtype), xp)
            for layout, domain in zip(layouts, self.domains())
        )

    def output_gradients(self, outputs: Outputs, purpose: str) -> OutputGradients:
        """Random dL/dY and dL/dS_out shaped and typed like the outputs and states, in their
        module. Drawn on the host: a purpose gives the same values on the CPU and the GPU."""
        rng = self.rng(purpose)

        def like(y: Any) -> Any:
            _require_array(y)
            return arrays.to_module(arrays.random_host_like(y, rng).astype(y.dtype), arrays.array_module(y))

        return tuple(like(y) for y in outputs.values), tuple(like(s) for s in outputs.states)

    def training_output_gradients(self, outputs: Outputs, dtype: Any, shared: bool = False) -> OutputGradients:
        """The dL/dY and dL/dS_out of the training step at `dtype`, cast once per dtype and
        device: as fresh arrays on every call (the values that step's backward was given,
        which it may have overwritten in place: its own failure,
        `backward_does_not_modify_inputs`), or with `shared` the session's own."""
        dLdY, dLdS = self._training_output_gradients(outputs, dtype)
        return (dLdY, dLdS) if shared else (tuple(d.copy() for d in dLdY), tuple(d.copy() for d in dLdS))

    def _training_output_gradients(self, outputs: Outputs, dtype: Any) -> OutputGradients:
        key = DataKey(np.dtype(dtype).name, any(arrays.is_cupy_array(y) for y in outputs.all))
        cast = self._output_gradients.get(key)
        if cast is None or not all(map(_alike, (*cast[0], *cast[1]), outputs.all)):
            drawn = self._drawn_output_gradients(outputs)
            m = len(outputs.values)
            like = tuple(_at(d, y) for d, y in zip(drawn, outputs.all))
            cast = self._output_gradients[key] = like[:m], like[m:]
        return cast

    def _drawn_output_gradients(self, outputs: Outputs) -> tuple[Any, ...]:
        """dL/dY then dL/dS_out as drawn, on the host at full precision, for outputs shaped and
        typed (real or complex) like `outputs`."""
        shapes = tuple((tuple(y.shape), arrays.is_complex(y)) if arrays.is_array(y) else None for y in outputs.all)
        if shapes not in self._drawn_dldy:
            rng = self.rng("dLdY")
            for y in outputs.all:
                _require_array(y)
            self._drawn_dldy[shapes] = tuple(arrays.random_host_like(y, rng) for y in outputs.all)
        return self._drawn_dldy[shapes]


def _require_array(y: Any) -> None:
    if not arrays.is_array(y):
        raise Incomplete(f"not checked: an output is {arrays.describe(y)}, not an array")


def _at(drawn: Any, y: Any) -> Any:
    """The host array `drawn` at the dtype of the array `y`, in its module: `drawn` itself where
    it is that already (the session's, never given away)."""
    if arrays.array_module(y) is np and drawn.dtype == y.dtype:
        return drawn
    return arrays.to_module(drawn.astype(y.dtype), arrays.array_module(y))


def _alike(drawn: Any, y: Any) -> bool:
    """`drawn` has the shape, dtype and module of the array `y`."""
    return (
        arrays.is_array(y)
        and drawn.shape == y.shape
        and drawn.dtype == y.dtype
        and arrays.array_module(drawn) is arrays.array_module(y)
    )
