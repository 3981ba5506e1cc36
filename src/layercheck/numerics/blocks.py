"""Partitions of an argument into blocks: along a named axis, border and interior of the
spatial plane, by sign, by value, and the blocks of a gradient whose scale is far below the
rest. The gradient check probes small-scale blocks on their own; the diagnosis probes a
partition's blocks one by one to say where a gradient is wrong.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from layercheck.numerics.arrays import fetch, namespace_of, to_host

__all__ = [
    "EDGE_DISTANCE",
    "PLANE_AXES",
    "AXIS_CELLS",
    "AXIS_WORDS",
    "Block",
    "Partition",
    "along_axis",
    "axis_mask",
    "describe_border",
    "distance_to_edge",
    "unlabelled_axes",
    "by_sign",
    "by_value",
    "refined",
    "edges",
    "small_scale_blocks",
]

# The names of the partitions a picture treats apart (the keys of `diagnosis.blocks`): the
# distance from the edge of the spatial plane, drawn as a map of the plane, and its rows and
# columns, which that map shows better (`reporters.pictures`).
EDGE_DISTANCE = "distance from the edge"
PLANE_AXES = ("row", "column")
AXIS_WORDS = {"C": "channel", "B": "observation", "T": "time step", "U": "index"}
_MAX_CELLS = 16
AXIS_CELLS = _MAX_CELLS  # the most blocks a partition along an axis has (`along_axis`)
# A block whose gradient is this much smaller (RMS) than the argument's largest block is
# invisible to a probe of the whole argument: its errors are below any whole-array tolerance.
SMALL_SCALE = 1e-3
_MAX_SMALL_GROUPS = 6
_QUANTILES = (0.0, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 1.0)
_QUANTILE_SAMPLE = 1 << 16


@dataclass(frozen=True)
class Block:
    """Part of an argument: `label` names it in a sentence ("2", "0-3", "X < 0"), `mask` marks it;
    `span`, for a block of positions along an axis or of distances from the edge, is the first
    and the last (None: every one from the first on, "3+"), as the reports draw it."""

    label: str
    mask: Any
    span: tuple[int, int | None] | None = None


@dataclass(frozen=True)
class Partition:
    """Blocks that cover an argument (or, for a value range, part of it): `unit` names one block
    in words ("channel", "row"); `plural` its plural."""

    unit: str
    blocks: tuple[Block, ...]
    plural: str = ""
    axis: int | None = None  # the axis of a partition along one (`along_axis`)
    # The index along that axis its labels and spans count from: the first observation of a
    # sub-batch cut from a larger batch (its masks are the sub-batch's own).
    first: int = 0

    @property
    def units(self) -> str:
        return self.plural or self.unit + "s"


def axis_mask(shape: tuple[int, ...], axis: int, lo: int, hi: int | None, xp: Any) -> Any:
    """True where the index along `axis` is in [lo, hi) (hi None: to the end)."""
    mask = xp.zeros(shape, dtype=bool)
    index: list[Any] = [slice(None)] * len(shape)
    index[axis] = slice(lo, hi)
    mask[tuple(index)] = True
    return mask


def spatial_words(labels: str) -> list[tuple[int, str]]:
    """Each spatial axis with its name: rows and columns for a plane, else spatial axis k."""
    axes = [i for i, ch in enumerate(labels) if ch == "S"]
    if len(axes) == 2:
        return list(zip(axes, PLANE_AXES))
    if len(axes) == 1:
        return [(axes[0], "position")]
    return [(axis, f"index of spatial axis {k}") for k, axis in enumerate(axes, 1)]


def unlabelled_axes(value: Any) -> list[tuple[int, str, str]]:
    """Each axis of more than one index of an argument whose axes have no labels (a dense
    weight matrix, a depthwise kernel (3, 3, C)), with the name of one index along it and its
    plural: "index" of a vector (an array with one axis of more than one index); "axis-2
    index" of an array with more."""
    axes = [axis for axis in range(value.ndim) if value.shape[axis] > 1]
    if len(axes) == 1:  # a vector, however many axes of one it has: its index along it is its index
        return [(axes[0], "index", "indices")]
    return [(axis, f"axis-{axis} index", f"axis-{axis} indices") for axis in axes]


def along_axis(value: Any, axis: int, unit: str, max_cells: int = _MAX_CELLS, first: int = 0) -> Partition:
    """Cells along one axis: each index, or up to `max_cells` ranges of indices on a long axis;
    labelled and spanned from index `first` (a sub-batch's first observation in its batch)."""
    shape = tuple(value.shape)
    xp = namespace_of(value)
    n = shape[axis]
    cuts = np.linspace(0, n, min(n, max_cells) + 1).astype(int).tolist()
    blocks = tuple(
        _indices_block(shape, axis, first + lo, first + hi, first, xp) for lo, hi in zip(cuts[:-1], cuts[1:])
    )
    return Partition(unit, blocks, axis=axis, first=first)


def _indices_block(shape: tuple[int, ...], axis: int, lo: int, hi: int, first: int, xp: Any) -> Block:
    """The block of indices [lo, hi) along `axis`, counted from `first` (its mask's index 0)."""
    label = str(lo) if hi - lo == 1 else f"{lo}-{hi - 1}"
    return Block(label, axis_mask(shape, axis, lo - first, hi - first, xp), (lo, hi - 1))


def refined(value: Any, partition: Partition, wide: tuple[Block, ...], max_cells: int = _MAX_CELLS) -> Partition:
    """`partition` (along an axis) with each block of `wide` cut into one block per index, or,
    where that would make more than `max_cells` blocks of them all, into as many ranges of
    indices each as keep them within it (a bisection's next step)."""
    assert partition.axis is not None
    shape, xp = tuple(value.shape), namespace_of(value)
    cut = {id(block) for block in wide}  # blocks hold arrays: compared by identity
    each = max(2, max_cells // max(len(wide), 1))
    at = partition.first  # spans count from it; masks are the value's own
    blocks: list[Block] = []
    for block in partition.blocks:
        first, last = block.span if block.span is not None else (0, None)
        if id(block) in cut and last is not None:
            n = last - first + 1
            cuts = np.linspace(first, last + 1, min(n, each) + 1).astype(int).tolist()
            blocks += [_indices_block(shape, partition.axis, lo, hi, at, xp) for lo, hi in zip(cuts[:-1], cuts[1:])]
        else:
            blocks.append(block)
    return Partition(partition.unit, tuple(blocks), partition.plural, partition.axis, partition.first)


def set_apart(value: Any, partition: Partition, indices: list[int]) -> Partition:
    """`partition` (along an axis) with each of `indices` (counted as its spans are) a block of
    its own, cut out of a block that held it with others; the rest of that block kept in the
    runs of indices around it. Blocks that hold none are kept as they are (the same objects)."""
    assert partition.axis is not None
    shape, xp, at = tuple(value.shape), namespace_of(value), partition.first
    blocks: list[Block] = []
    for block in partition.blocks:
        first, last = block.span if block.span is not None else (0, None)
        inside = sorted({i for i in indices if last is not None and first <= i <= last})
        if not inside or first == last:
            blocks.append(block)
            continue
        assert last is not None
        cuts = [first, *(k for i in inside for k in (i, i + 1)), last + 1]
        blocks += [
            _indices_block(shape, partition.axis, lo, hi, at, xp) for lo, hi in zip(cuts[:-1], cuts[1:]) if hi > lo
        ]
    return Partition(partition.unit, tuple(blocks), partition.plural, partition.axis, partition.first)


def distance_to_edge(value: Any, labels: str | None) -> Partition | None:
    """Cells by distance to the nearest edge of the spatial plane (0: the border itself), up to
    3, then the rest; for arguments whose every spatial axis has an interior."""
    if not labels or len(labels) != value.ndim:
        return None
    axes = [i for i, ch in enumerate(labels) if ch == "S"]
    if not axes or any(value.shape[i] < 3 for i in axes):
        return None
    xp = namespace_of(value)
    shape = tuple(value.shape)
    distance = None
    for axis in axes:
        n = shape[axis]
        along = xp.minimum(xp.arange(n), n - 1 - xp.arange(n)).reshape(
            [n if i == axis else 1 for i in range(len(shape))]
        )
        distance = along if distance is None else xp.minimum(distance, along)
    distance = xp.broadcast_to(distance, shape)
    deepest = min(shape[i] for i in axes) // 2 - (1 if min(shape[i] for i in axes) % 2 == 0 else 0)
    cells = [Block(str(d), distance == d, (d, d)) for d in range(min(deepest, 3))]
    cells.append(Block(f"{min(deepest, 3)}+", distance >= min(deepest, 3), (min(deepest, 3), None)))
    return Partition(EDGE_DISTANCE, tuple(cells), "distances from the edge")


def describe_border(shape: tuple[int, ...], labels: str, depth: int) -> str:
    """ "rows 0 and 7, columns 0 and 7" for the border `depth` deep."""

    def span(n: int) -> str:
        if depth == 1:
            return f"0 and {n - 1}"
        return f"0-{depth - 1} and {n - depth}-{n - 1}"

    words = spatial_words(labels)
    if len(words) > 2:
        return f"the first and last {depth} indices of each spatial axis"
    return ", ".join(f"{word}s {span(shape[axis])}" for axis, word in words)


def edges(value: Any, labels: str, corners: bool = True) -> list[Block]:
    """The first and the last slice along each spatial axis ("row 0", "column 7"); without
    `corners`, each without the first and last index of the other spatial axes (the cells it
    shares with the edges across it)."""
    xp = namespace_of(value)
    shape = tuple(value.shape)
    words = spatial_words(labels)
    found = []
    for axis, word in words:
        for index in (0, shape[axis] - 1):
            mask = axis_mask(shape, axis, index, index + 1, xp)
            if not corners:
                for other, _ in words:
                    if other != axis:
                        mask &= axis_mask(shape, other, 1, shape[other] - 1, xp)
            found.append(Block(f"{word} {index}", mask))
    return found


def by_sign(value: Any, name: str) -> Partition | None:
    """Where the argument (its real part) is below zero and where above."""
    real = value.real
    below, above = real < 0, real > 0
    if not (bool(below.any()) and bool(above.any())):
        return None
    return Partition("sign", (Block(f"{name} < 0", below), Block(f"{name} > 0", above)))


def by_value(value: Any, name: str) -> list[tuple[tuple[float, float], Block]]:
    """Cells by quantile of the (real part of the) argument's values, the tails finest."""
    xp = namespace_of(value)
    real = value.real
    # The cuts from at most _QUANTILE_SAMPLE elements (a quantile partitions the whole array
    # otherwise): each block is exactly the elements between its cuts, wherever they fall.
    step = -(-real.size // _QUANTILE_SAMPLE)
    sample = real.reshape(-1)[::step]
    cuts = to_host(xp.quantile(sample, xp.asarray(_QUANTILES))).tolist()
    cuts[0], cuts[-1] = fetch(real.min(), real.max())
    cells = []
    for k, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:])):
        mask = (real >= lo) & ((real < hi) if k < len(cuts) - 2 else (real <= hi))
        if bool(mask.any()):
            cells.append(((float(lo), float(hi)), Block(f"{name} in [{lo:.4g}, {hi:.4g}]", mask)))
    return cells


def _power_table(gradient: Any, kept: list[int]) -> Any:
    """sum(|g|^2) over every axis but `kept` (in their order), where the gradient is: one pass
    over it, with no array of its size made (for a real one)."""
    xp = namespace_of(gradient)
    letters = "abcdefghijklmnopqrstuvwxyz"[: gradient.ndim]
    out = "".join(letters[i] for i in kept)
    if np.dtype(gradient.dtype).kind == "c":
        power = (gradient * gradient.conj()).real
        table = power.sum(axis=tuple(i for i in range(gradient.ndim) if i not in kept))
    else:
        table = xp.einsum(f"{letters},{letters}->{out}", gradient, gradient)
    return table


def small_scale_blocks(gradient: Any, labels: str | None) -> list[tuple[str, float, Any]]:
    """Blocks along the channel, observation and time axes whose gradient RMS is below
    SMALL_SCALE times the largest block's, grouped by decade of scale: (description, scale
    relative to the largest block, mask). Empty for an argument without such axes."""
    if not labels or len(labels) != gradient.ndim or gradient.size == 0:
        return []
    xp = namespace_of(gradient)
    axes = {label: labels.find(label) for label in "CBT" if labels.find(label) >= 0}
    axes = {label: axis for label, axis in axes.items() if gradient.shape[axis] >= 2}
    kept = sorted(axes.values())
    table = _power_table(gradient, kept)
    found: list[tuple[str, float, Any]] = []
    for label, axis in axes.items():
        position = kept.index(axis)
        power = to_host(table.sum(axis=tuple(i for i in range(table.ndim) if i != position)))
        rms = np.sqrt(np.asarray(power, dtype=float) / (gradient.size // gradient.shape[axis]))
        top = float(rms.max()) if rms.size else 0.0
        if not (top > 0 and math.isfinite(top)):
            continue
        groups: dict[int, list[int]] = {}
        for k, r in enumerate(rms.tolist()):
            if r < SMALL_SCALE * top:
                groups.setdefault(math.floor(math.log10(r / top)) if r > 0 else -999, []).append(k)
        unit = AXIS_WORDS[label]
        for decade, members in sorted(groups.items(), reverse=True)[:_MAX_SMALL_GROUPS]:
            mask = xp.zeros(gradient.shape, dtype=bool)
            index: list[Any] = [slice(None)] * gradient.ndim
            index[axis] = xp.asarray(members)
            mask[tuple(index)] = True
            shown = ", ".join(map(str, members[:8])) + (", ..." if len(members) > 8 else "")
            relative = 0.0 if decade == -999 else float(max(rms[members]) / top)
            found.append((f"{unit}{'s' if len(members) > 1 else ''} {shown}", relative, mask))
    return found
