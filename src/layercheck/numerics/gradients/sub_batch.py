"""Where a gradient is wrong, found on a few observations of a large batch.

Saying where a gradient is wrong takes dozens of probes, two calls of the layer each. At the
sizes users check (128 observations), that is seconds; on a few observations of the batch it
is a fraction of that, and a backward that is wrong in a channel, a time step or a border is
wrong there too. So the localization runs on a `SubBatch` (the same layer, its learnables and
some observations of its inputs and states: the first ones, or a window past them that
`diagnosis.Diagnostician` found wrong by halving the rest of the batch), and what it found is
then proven on the whole batch before it is said: the region's mask carried over to the whole
argument, a factor by the corrected gradient passing the whole batch's failing probes and a
fresh one, a region without a factor by a probe that fails in each of its blocks and one that
passes everywhere else, "right in the others" by each small block outside passing alone,
"nothing narrower" by the observations past the sub-batch being wrong too. Where neither the
first observations nor a window shows a finding that holds on the whole batch, or the
sub-batch returns no gradient or NaN where the whole batch does not, the whole batch is
localized.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from layercheck.numerics.arrays import namespace_of
from layercheck.numerics.gradients.engine import Baseline, GradientProblem
from layercheck.numerics.gradients.findings import Region, RegionKind

__all__ = ["SUB_BATCH", "SubBatch", "call_share", "last_at_batch_end", "observations_for", "whole_batch_mask"]

# The most observations a sub-batch holds, and how many times as many the batch must hold for
# one to be worth it: a batch of 8 to 31 is localized on a quarter of it (2 to 7 observations),
# one below 8 on the whole of it.
SUB_BATCH = 8
_WORTH = 4
_FEWEST = 2  # observations: a dependence across them, or a batch statistic, needs two
# The least share of a call on the whole batch that a call on a sub-batch is charged: what a
# call and its probe cost beside the arrays they compute (the layer's own overhead, the
# engine's passes over small arrays) does not shrink with the observations.
_LEAST_SHARE = 1 / 16


def observations_for(batch: int) -> int | None:
    """The observations of a sub-batch of a batch of `batch` (a function of the layout alone):
    `SUB_BATCH`, or a quarter of a smaller batch; None where the whole batch is localized."""
    observations = min(SUB_BATCH, batch // _WORTH)
    return observations if observations >= _FEWEST else None


def call_share(observations: int, batch: int) -> float:
    """What a call of the layer on `observations` of a batch of `batch` is charged, as a share
    of a call on the whole batch (`budget.WorkBudget`): a function of the layout alone."""
    return max(observations / batch, _LEAST_SHARE)


@dataclass(frozen=True)
class SubBatch:
    """The gradient problem on `observations` of a batch of `batch`, from its `first` (0: the
    first ones; else a window found wrong past them, `diagnosis.Diagnostician`); `axes` is
    each argument's batch axis (None: the argument has none, as a learnable, and is the
    same array in both problems)."""

    problem: GradientProblem
    base: Baseline
    observations: int
    batch: int
    axes: tuple[int | None, ...]
    first: int = 0


def whole_batch_mask(
    region: Region, mask: Any, axis: int | None, value: Any, observations: int, start: int = 0
) -> Any | None:
    """The elements of the whole batch's argument `value` that a region found on the
    sub-batch's (`mask`, its elements there: `observations` from the batch's `start`) stands
    for; None where it cannot be carried over (a value range of several pieces).

    A region of values (a sign, a value range) is where the whole argument has those values.
    A region along another axis (a channel, a time step, a border) holds the same elements of
    every observation; one along the batch axis, the observations found (of the sub-batch's)."""
    xp = namespace_of(value)
    if axis is None:
        return mask if tuple(mask.shape) == tuple(value.shape) else None
    real = value.real
    if region.kind is RegionKind.SIGN:
        return real < 0 if region.below else real > 0
    if region.kind is RegionKind.VALUE_RANGE:
        return (real >= region.low) & (real <= region.high) if region.contiguous else None
    first = xp.take(mask, xp.asarray([0]), axis=axis)
    if bool(xp.all(mask == first)):
        return xp.broadcast_to(first, value.shape).copy()
    whole = xp.zeros(value.shape, dtype=bool)
    index: list[Any] = [slice(None)] * value.ndim
    index[axis] = slice(start, start + observations)
    whole[tuple(index)] = mask
    return whole


def last_at_batch_end(mask: Any, axis: int, value: Any, observations: int) -> Any:
    """The elements of the whole batch's argument `value` that a mask of the first
    `observations` stands for where their last observation stands for the batch's last: a
    layer that treats the ends of its batch apart (a loop over observations 1 to B - 2) has
    its own ends on the first observations run alone, and the batch's ends on the batch."""
    xp = namespace_of(value)
    whole = xp.zeros(value.shape, dtype=bool)
    head: list[Any] = [slice(None)] * value.ndim
    head[axis] = slice(0, observations - 1)
    whole[tuple(head)] = mask[tuple(head)]
    head[axis] = value.shape[axis] - 1
    last: list[Any] = [slice(None)] * value.ndim
    last[axis] = observations - 1
    whole[tuple(head)] = mask[tuple(last)]
    return whole
