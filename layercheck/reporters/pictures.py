"""Pictures of where a gradient is wrong, drawn from a failed gradient check's diagnosis.

The diagnosis records, for each partition of an argument it screened (channels, time steps,
distance from the edge of the spatial plane, sign, value range, rows, columns), every block's
verdict and relative error (`details.arguments[i].diagnosis.blocks`). A partition whose blocks
were proven both wrong and right localizes the error: it is drawn as a strip of cells, one per
block, shaded by the relative error; the distance from the edge as a coarse map of the plane.
Nothing is drawn that the blocks do not say: every cell is one block's verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from layercheck.results import Status

__all__ = ["Picture", "pictures_of", "LEGEND"]

# Relative error to shade, largest first; a right block is a dot, an undecided one a '?'.
_SHADES = ((0.1, "█"), (1e-2, "▓"), (1e-4, "▒"), (0.0, "░"))
_RIGHT, _UNDECIDED = "·", "?"
LEGEND = "█ ≥10%  ▓ ≥1%  ▒ ≥0.01%  ░ less (wrong)   · right   ? undecided"
_MAX_CELLS = 64  # a strip longer than this shows its first cells and says how many more
_MAP_ROWS, _MAP_COLUMNS = 12, 24


# How the diagnosis words a claim about each partition (default: the partition's own name).
@dataclass(frozen=True)
class Picture:
    """A titled picture: its lines, each cell a character from the shades above."""

    title: str
    lines: tuple[str, ...]


def _cell(block: Mapping[str, Any]) -> str:
    verdict = block.get("verdict")
    if verdict == "right":
        return _RIGHT
    if verdict != "wrong":
        return _UNDECIDED
    error = block.get("rel_error")
    error = float(error) if isinstance(error, (int, float)) else float("inf")
    return next(shade for bound, shade in _SHADES if error >= bound)


def _localizes(blocks: Sequence[Mapping[str, Any]]) -> bool:
    verdicts = {b.get("verdict") for b in blocks}
    return "wrong" in verdicts and "right" in verdicts


def _strip(name: str, argument: str, blocks: Sequence[Mapping[str, Any]]) -> Picture:
    """Numbered blocks (channels, time steps) as a strip under their numbers; named ones
    (a sign, a value range) each cell beside its name."""
    labels = [str(b.get("block", "")) for b in blocks[:_MAX_CELLS]]
    cells = [_cell(b) for b in blocks[:_MAX_CELLS]]
    more = f" ({len(blocks) - _MAX_CELLS} more not drawn)" if len(blocks) > _MAX_CELLS else ""
    lines: tuple[str, ...]
    if all(label.isdigit() for label in labels):
        width = max(len(label) for label in labels)
        lines = (" ".join(label.rjust(width) for label in labels), " ".join(c.rjust(width) for c in cells))
    else:
        lines = tuple(f"{cell} {label}" for cell, label in zip(cells, labels))
    return Picture(f"{argument} by {name}{more}:", lines)


def _plane(argument: str, blocks: Sequence[Mapping[str, Any]], height: int, width: int) -> Picture:
    """The spatial plane, coarsened to at most _MAP_ROWS x _MAP_COLUMNS cells, each shaded by
    the block of its distance from the edge ("0", "1", ..., "k+")."""
    by_distance: dict[int, str] = {}
    last_open = None
    for block in blocks:
        label = str(block.get("block", ""))
        if label.endswith("+") and label[:-1].isdigit():
            last_open = (int(label[:-1]), _cell(block))
        elif label.isdigit():
            by_distance[int(label)] = _cell(block)

    def shade(distance: int) -> str:
        if distance in by_distance:
            return by_distance[distance]
        if last_open is not None and distance >= last_open[0]:
            return last_open[1]
        return " "

    depth = max(by_distance, default=-1) + 1  # the rings drawn one by one must all show
    rows, columns = _samples(height, _MAP_ROWS, depth), _samples(width, _MAP_COLUMNS, depth)
    side = len(str(rows[-1]))
    digits = max(len(str(columns[-1])), 1)
    header = " " * side + " " + " ".join(str(c).rjust(digits) for c in columns)
    lines = (header,) + tuple(
        str(r).rjust(side)
        + " "
        + " ".join(shade(min(r, c, height - 1 - r, width - 1 - c)).rjust(digits) for c in columns)
        for r in rows
    )
    coarse = ", rows and columns sampled" if height > _MAP_ROWS or width > _MAP_COLUMNS else ""
    return Picture(f"{argument} over the spatial plane ({height} rows x {width} columns{coarse}):", lines)


def _samples(size: int, most: int, depth: int = 0) -> list[int]:
    """At most `most` indices of range(size): the `depth` first and last ones (the rings next to
    the edge), and the others spread evenly over the interior; all of them when they fit."""
    if size <= most:
        return list(range(size))
    edge = min(depth, (most - 1) // 2)
    ends = set(range(edge)) | set(range(size - edge, size))
    inner = most - len(ends)
    low, high = edge, size - edge - 1
    spread = {round(low + i * (high - low) / max(inner - 1, 1)) for i in range(inner)}
    return sorted(ends | spread)


def _spatial_size(layouts: Sequence[str]) -> tuple[int, int] | None:
    """The first two spatial sizes of the first input's layout ("24,24,20,128:SSCB")."""
    if not layouts:
        return None
    sizes, _, labels = layouts[0].partition(":")
    try:
        spatial = [int(n) for n, label in zip(sizes.split(","), labels) if label == "S"]
    except ValueError:
        return None
    return (spatial[0], spatial[1]) if len(spatial) >= 2 else None


def _first_input(details: Mapping[str, Any]) -> str | None:
    """The first input's name: the layout whose plane is drawn is the first input's."""
    for record in details.get("arguments") or ():
        if isinstance(record, Mapping) and record.get("kind") == "input":
            return str(record.get("argument"))
    return None


def pictures_of(details: Mapping[str, Any], layouts: Sequence[str]) -> list[Picture]:
    """The pictures for a gradient check's details: for every failed argument, each partition
    whose blocks were proven wrong in some places and right in others."""
    found: list[Picture] = []
    for record in details.get("arguments") or ():
        diagnosis = record.get("diagnosis") if isinstance(record, Mapping) else None
        if record.get("status") != Status.FAILED.value or not isinstance(diagnosis, Mapping):
            continue
        argument = str(record.get("argument", "?"))
        # Drawn only for what the diagnosis says: the picture of a region it proved.
        said = {r.get("unit") for r in diagnosis.get("regions") or () if isinstance(r, Mapping)}
        for name, blocks in (diagnosis.get("blocks") or {}).items():
            if not isinstance(blocks, Sequence) or not blocks or not _localizes(blocks):
                continue
            if name not in said:
                continue
            size = (
                _spatial_size(layouts) if record.get("kind") == "input" and argument == _first_input(details) else None
            )
            if name == "distance from the edge" and size is not None:
                found.append(_plane(argument, blocks, *size))
            elif name not in ("row", "column"):  # the map says more than rows and columns alone
                found.append(_strip(name, argument, blocks))
    return found
