"""The precision a layer really computes in, measured from how its outputs follow a tiny change.

A layer that returns float64 may round to float32 inside (a cast, float32 weights, a float32
library call). Its outputs then carry float32 round-off, and every comparison judged at a
float64 tolerance (a batch against its observations, finite differences) fails for a reason
that is not the one it would name. The measurement: move the inputs by a relative 1e-8 both
ways and take the second difference of the outputs. A layer that computes in float64 follows
the move smoothly (the second difference is curvature, about 1e-16 of the outputs); one that
rounds at float32 resolution shows its round-off there, about 1e-8 of the outputs.
The 90th percentile of each output's elements is judged (the largest over the outputs), so
that the few elements that crossed a kink or a jump within so small a move do not count. An
output that does not move at all (a float32 cast rounds so small a move away) is moved a
hundred times more.

Round-off that float32 arithmetic leaves is relative to each value. Outputs that are all
multiples of one step, coarse against float32's rounding of the largest of them, lie on a grid
instead (a quantizer: `round(256 x) / 256`, or float32 arithmetic on far larger values inside):
the loss is measured and judged at, but not said to be a float32 computation (`grid`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from layercheck.numerics.arrays import displaced, fetch, is_array, machine_epsilon, namespace_of, random_signs
from layercheck.numerics.gradients.engine import keep_inside

__all__ = ["PrecisionFinding", "measure_precision"]

_STEP = 1e-8  # relative: above float64's resolution by 1e8, a tenth of float32's
_LOST = 1e-9  # measured round-off, relative to the outputs, that float64 arithmetic never shows
_SAMPLE = 1 << 16  # outputs judged per output array, at most
_ULPS = 16  # below this many ulps of round-off, nothing is measured
_STAIRCASE = (100, 137)  # two steps, in units of _STEP, no multiple of one another
_FLOAT32_LEVEL = 5e-9  # round-off from about 1/25 of float32's epsilon up: float32 arithmetic
_GRID_VALUES = 16  # distinct values that show a grid: float32 values fall on one by chance 4^-16 of the time
_MOVED = 0.02  # the share of an output's elements that must move for its second differences to be round-off


@dataclass(frozen=True)
class PrecisionFinding:
    """What the measurement found for one tested dtype."""

    nominal: np.dtype[Any]  # the real precision of the tested dtype
    roundoff: float  # the outputs' round-off under a tiny move, relative to their size
    float32_values: bool  # every output is a float32 value (a cast back at the end)
    moved: str = "inputs"  # what was moved to show it: "inputs", or "learnables and state"
    step: float = _STEP  # the relative move that showed it (larger where the smallest was rounded away)
    grid: bool = False  # every output on one grid coarser than float32's rounding (`_on_a_grid`)

    @property
    def lost(self) -> bool:
        return self.nominal == np.dtype(np.float64) and self.roundoff > _LOST

    @property
    def at_float32(self) -> bool:
        """Lost down to float32's level (a cast, a float32 call), not the milder loss of a few
        digits that cancelling large terms costs, nor the steps of a grid (a quantizer, whose
        coarse outputs are its design): the dtype check fails for this."""
        return self.lost and not self.grid and (self.float32_values or self.roundoff >= _FLOAT32_LEVEL)

    @property
    def effective(self) -> np.dtype[Any]:
        """The precision to judge the layer's results at."""
        return np.dtype(np.float32) if self.lost else self.nominal


def measure_precision(
    evaluate: Callable[[list[Any]], Sequence[Any]],
    inputs: Sequence[Any],
    movable: Sequence[bool],
    domains: Sequence[tuple[float | None, float | None]],
    outputs: Sequence[Any],
    nominal: np.dtype[Any],
    rng: np.random.Generator,
) -> PrecisionFinding:
    """The round-off of `evaluate` (outputs for inputs) around `inputs`, whose unperturbed
    `outputs` are given; only the inputs marked `movable` (real-valued data) are moved, and
    never out of their domain."""
    none = PrecisionFinding(nominal, 0.0, False)
    if nominal != np.dtype(np.float64) or not any(movable):
        return none
    base = [y for y in outputs if _is_float(y)]
    if not base:
        return none
    step = _STEP
    found = _noise(evaluate, inputs, movable, domains, outputs, step, rng)
    first = found.typical
    if first is None:
        # Not one output moved: either nothing depends on what moved, or the move was rounded
        # away (a float32 cast of a few values, none at a rounding boundary). A hundred
        # times the step tells them apart: float32 resolves it, with its round-off. A few
        # values (a per-channel learnable) may round symmetrically about themselves, so that
        # the second difference cancels; their staircase still shows in the first
        # differences, which two steps of one direction then disagree on.
        step = 100 * _STEP
        wider = _noise(evaluate, inputs, movable, domains, outputs, step, rng).typical
        if wider is None or wider <= _LOST:
            step = _STAIRCASE[0] * _STEP
            wider = _staircase(evaluate, inputs, movable, domains, outputs, rng)
        if wider is None or wider <= _LOST:
            return none
        first = wider
    elif first <= _ULPS * machine_epsilon(nominal):
        # The outputs that moved followed smoothly. One that did not move at all may not
        # depend on what moved, or may have had the move rounded away (a gate computed in
        # float32 beside a feature map in float64): a hundred times the step tells, as above.
        side = None
        if found.unmoved:
            side = _noise(evaluate, inputs, movable, domains, outputs, 100 * _STEP, rng, found.unmoved).typical
        if side is None or side <= _LOST:
            return PrecisionFinding(nominal, first, False)
        first, step = side, 100 * _STEP
    else:
        # Round-off does not grow with the step; kinks crossed (more of them, each by more)
        # and curvature do. A hundred times the step tells them apart.
        wider = _noise(evaluate, inputs, movable, domains, outputs, 100 * _STEP, rng).typical
        if wider is not None and wider > 10 * first:
            return none
    if first > _LOST:
        # Outputs that differ from call to call (noise added in predict) are not round-off:
        # predict_is_deterministic speaks for them.
        again = evaluate(list(inputs))
        if any(_differ(y, y2) for y, y2 in zip(outputs, again)):
            return none
    grid = all(_on_a_grid(y) for y in base)
    return PrecisionFinding(nominal, first, all(_float32_values(y) for y in base), step=step, grid=grid)


@dataclass(frozen=True)
class _Noise:
    """The typical second difference of the outputs under a move (None: no output moved;
    0.0: none to compare), and the float outputs that did not move at all, by position."""

    typical: float | None
    unmoved: tuple[int, ...] = ()


def _noise(
    evaluate: Callable[[list[Any]], Sequence[Any]],
    inputs: Sequence[Any],
    movable: Sequence[bool],
    domains: Sequence[tuple[float | None, float | None]],
    outputs: Sequence[Any],
    step: float,
    rng: np.random.Generator,
    only: Sequence[int] | None = None,
) -> _Noise:
    """The second differences of the outputs (those at the positions `only`, where given)
    under a relative move `step` of the movable inputs, relative to each output's size."""
    plus, minus = _moved_both_ways(evaluate, inputs, _directions(inputs, movable, rng), domains, step, consume=True)
    ratios, unmoved = [], []
    for j, (y0, yp, ym) in enumerate(zip(outputs, plus, minus)):
        if only is not None and j not in only:
            continue
        if not (_is_float(y0) and is_array(yp) and is_array(ym) and yp.shape == y0.shape == ym.shape):
            continue
        y0, yp, ym = _sampled(y0, yp, ym)
        xp = namespace_of(y0, yp, ym)
        first, second = xp.abs(yp - ym), xp.abs(yp + ym - 2 * y0)
        ratio = _relative(second, y0, (first > 0) | (second > 0))
        ratios.append(ratio)
        if ratio.size == 0 and y0.size:
            unmoved.append(j)
    if not ratios:
        return _Noise(0.0)
    return _Noise(_typical(ratios), tuple(unmoved))


def _staircase(
    evaluate: Callable[[list[Any]], Sequence[Any]],
    inputs: Sequence[Any],
    movable: Sequence[bool],
    domains: Sequence[tuple[float | None, float | None]],
    outputs: Sequence[Any],
    rng: np.random.Generator,
) -> float | None:
    """How far the outputs are from following one direction linearly at two steps s1 < s2:
    |D(s1) s2 / s1 - D(s2)| / 2, D(s) = Y(x + s v) - Y(x - s v), relative to each output's
    size (the 90th percentile over the outputs that moved). A smooth layer's central
    differences agree to its curvature's third order, far below float64's round-off at these
    steps; a layer that rounds what moved to float32 moves in whole float32 steps, and the two
    disagree by its round-off. None when no output moved."""
    directions = _directions(inputs, movable, rng)
    differences = []
    for factor in _STAIRCASE:
        plus, minus = _moved_both_ways(evaluate, inputs, directions, domains, factor * _STEP)
        differences.append([yp - ym if _is_float(yp) and is_array(ym) else None for yp, ym in zip(plus, minus)])
    ratios = []
    scale = _STAIRCASE[1] / _STAIRCASE[0]
    for y0, near, far in zip(outputs, *differences):
        if near is None or far is None or not _is_float(y0) or near.shape != y0.shape or far.shape != y0.shape:
            continue
        y0, near, far = _sampled(y0, near, far)
        off = namespace_of(near, far).abs(near * scale - far) / 2
        ratios.append(_relative(off, y0, (near != 0) | (far != 0)))
    if not ratios:
        return None
    return _typical(ratios)


def _directions(inputs: Sequence[Any], movable: Sequence[bool], rng: np.random.Generator) -> list[Any]:
    """A random sign pattern for each movable real-valued input; None for the others."""
    return [random_signs(x, rng) if move and _is_float(x) else None for x, move in zip(inputs, movable)]


def _moved_both_ways(
    evaluate: Callable[[list[Any]], Sequence[Any]],
    inputs: Sequence[Any],
    directions: Sequence[Any],
    domains: Sequence[tuple[float | None, float | None]],
    step: float,
    consume: bool = False,
) -> tuple[Sequence[Any], Sequence[Any]]:
    """The outputs with every input moved by a relative `step` along its direction, then back
    the other way (never out of its domain). `consume`: the directions are this call's alone,
    and the moves are made in them (no array of an input's size more).

    Each element moves by `step` of its own magnitude (an array of zeros by `step`): a step
    relative to the array's RMS would carry its smallest elements across zero, where a
    learnable variance of 1e-6 beside others of 1e2 makes the outputs NaN, and a layer exact
    in float64 would read as rounding to float32."""
    moves: list[Any] = []
    for x, v, domain in zip(inputs, directions, domains):
        if v is None:
            moves.append(None)
            continue
        size = namespace_of(x).abs(x)
        if bool(namespace_of(size).any(size)):
            size *= step
        else:  # an array of zeros
            size = step
        if consume:  # a direction given to be consumed: the move is made in it
            v *= size
            move = v
        else:
            move = v * size
        moves.append(keep_inside(x, move, 1.0, domain))
    plus = evaluate([x if d is None else x + d for x, d in zip(inputs, moves)])
    # The point at -step is written into its move, which nothing needs any more.
    minus = evaluate([x if d is None else displaced(x, d, -1, into_move=True) for x, d in zip(inputs, moves)])
    return plus, minus


def _sampled(*arrays: Any) -> tuple[Any, ...]:
    """Every k-th element of each (flat) array, as a view: a percentile needs no more than
    _SAMPLE of them."""
    k = max(1, arrays[0].size // _SAMPLE)
    return tuple(y.reshape(-1)[::k] for y in arrays)


def _relative(off: Any, y0: Any, moved: Any) -> Any:
    """`off` relative to each output's size, at the elements that moved; none where fewer than
    `_MOVED` of them did. Rounding moves a share of the elements by an ulp or so (a relative
    move of 1e-8 carries about one float32 value in six across a rounding boundary, a hundred
    times that every one); a function constant between jumps (a quantizer whose step is no
    power of two, a mask, an argmax) moves the few that cross a jump, by the jump."""
    xp = namespace_of(y0)
    (count,) = fetch(xp.count_nonzero(moved))
    if int(count) < _MOVED * moved.size:
        return xp.zeros(0, dtype=y0.real.dtype)
    size = xp.abs(y0)
    return (off / xp.where(size > 0, size, 1.0))[moved].ravel()


def _typical(ratios: list[Any]) -> float | None:
    """The 90th percentile over the elements that moved of each output, the largest over the
    outputs (None when none moved): round-off is discrete (many elements round alike, to
    zero), while kinks and jumps crossed within so small a move are a few elements, however
    large. Each output on its own: a small one computed in float32 beside a large one in
    float64 (a gate of four values beside a feature map) would be a tenth of the elements
    pooled, under the percentile."""
    moved = [r for r in ratios if r.size]
    if not moved:
        return None
    xp = namespace_of(*moved)
    found = fetch(*(xp.percentile(r, 90) for r in moved))
    return max(float(t) if math.isfinite(t) else 0.0 for t in found)


def _differ(y: Any, y2: Any) -> bool:
    if not (_is_float(y) and is_array(y2)) or y2.shape != y.shape:
        return _is_float(y)
    xp = namespace_of(y, y2)
    (same,) = fetch(xp.all(y == y2))
    return not bool(same)


def _is_float(x: Any) -> bool:
    return is_array(x) and np.dtype(x.dtype).kind in "fc"


def _on_a_grid(y: Any) -> bool:
    """Every element (of a sample) a multiple of four float32 ulps of the largest: float32
    rounds each value to its own ulps, finer for the smaller ones; a quantizer's outputs, all
    multiples of its step, are on one grid. Shown by _GRID_VALUES distinct values at least: one
    float32 value is such a multiple one time in four, two one time in forty."""
    (sample,) = _sampled(y)
    xp = namespace_of(sample)
    (distinct,) = fetch(xp.unique(sample[sample != 0]).size) if sample.size else (0,)
    if int(distinct) < _GRID_VALUES:
        return False
    (largest,) = fetch(xp.max(xp.abs(sample)))
    if not (math.isfinite(float(largest)) and float(largest) > 0):
        return False
    step = 2.0 ** (math.frexp(float(largest))[1] - 24 + 2)  # four float32 ulps of the largest
    scaled = sample / step  # exact: a power of two
    (on,) = fetch(xp.all(scaled == xp.round(scaled)))
    return bool(on)


def _float32_values(y: Any) -> bool:
    """Every element is a float32 value, and not all are integers (which any precision holds)."""
    xp = namespace_of(y)
    if np.dtype(y.dtype) != np.dtype(np.float64) or y.size == 0:
        return False
    same, integral = fetch(xp.all(y.astype(np.float32).astype(np.float64) == y), xp.all(y == xp.round(y)))
    return bool(same) and not bool(integral)
