"""Pictures of where a gradient is wrong, drawn from a failed gradient check's diagnosis.

The diagnosis records, for each partition of an argument it screened (channels, time steps,
distance from the edge of the spatial plane, sign, value range, rows, columns), every block's
verdict and relative error (`details.arguments[i].diagnosis.blocks`). A partition whose blocks
were proven both wrong and right localizes the error: it is drawn as a strip of cells, one per
block, shaded by the relative error; the distance from the edge as a coarse map of the plane.
Nothing is drawn that the blocks do not say: every cell is one block's verdict.

`figures_of` says what to draw (`Strip`, `Plane`: cells with their block, verdict and error);
`pictures_of` draws it as text for the console, `reporters.svg` as SVG for the HTML report,
so both show the same cells.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from layercheck.results import Status

__all__ = [
    "Cell",
    "Figure",
    "Picture",
    "Plane",
    "SHADE_BOUNDS",
    "Strip",
    "Verdict",
    "figures_of",
    "pictures_of",
    "LEGEND",
]

# Relative error to shade, largest first: a wrong block's shade is the first bound it reaches.
SHADE_BOUNDS = (0.1, 1e-2, 1e-4, 0.0)
_SHADES = ("█", "▓", "▒", "░")
_RIGHT, _UNDECIDED = "·", "?"
LEGEND = "█ ≥10%  ▓ ≥1%  ▒ ≥0.01%  ░ less (wrong)   · right   ? undecided"
_MAX_CELLS = 64  # a strip longer than this shows its first cells and says how many more
_MAP_ROWS, _MAP_COLUMNS = 12, 24


class Verdict(str, Enum):
    """A block's verdict, as the diagnosis records it (anything else: undecided)."""

    WRONG = "wrong"
    RIGHT = "right"
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class Cell:
    """One block: its label ("3", "X < 0", "2+"), verdict and relative error (None where the
    diagnosis recorded no number)."""

    block: str
    verdict: Verdict
    rel_error: float | None

    @property
    def shade(self) -> int:
        """The index in SHADE_BOUNDS of a wrong block's error (0 where it is not a number)."""
        error = self.rel_error if self.rel_error is not None and not math.isnan(self.rel_error) else math.inf
        # a negative error (not one the diagnosis writes, but a report read back may hold
        # anything) takes the last shade rather than none
        return next((i for i, bound in enumerate(SHADE_BOUNDS) if error >= bound), len(SHADE_BOUNDS) - 1)


@dataclass(frozen=True)
class Strip:
    """The blocks of one partition (channels, time steps, sign, value range), in order."""

    argument: str
    partition: str
    cells: tuple[Cell, ...]
    hidden: int  # blocks past _MAX_CELLS, not drawn

    @property
    def numbered(self) -> bool:
        """Blocks numbered 0, 1, ... (channels, time steps) rather than named (a sign)."""
        return all(cell.block.isdigit() for cell in self.cells)

    @property
    def title(self) -> str:
        more = f" ({self.hidden} more not drawn)" if self.hidden else ""
        return f"{self.argument} by {self.partition}{more}:"


@dataclass(frozen=True)
class Plane:
    """The spatial plane, each sampled position the block of its distance from the edge (None
    where no block covers that distance)."""

    argument: str
    height: int
    width: int
    rows: tuple[int, ...]
    columns: tuple[int, ...]
    cells: tuple[tuple[Cell | None, ...], ...]  # cells[i][j]: rows[i], columns[j]

    @property
    def sampled(self) -> bool:
        return len(self.rows) < self.height or len(self.columns) < self.width

    @property
    def title(self) -> str:
        coarse = ", rows and columns sampled" if self.sampled else ""
        return f"{self.argument} over the spatial plane ({self.height} rows x {self.width} columns{coarse}):"


Figure = Strip | Plane


@dataclass(frozen=True)
class Picture:
    """A titled picture: its lines, each cell a character from the shades above."""

    title: str
    lines: tuple[str, ...]


def _cell(block: Mapping[str, Any]) -> Cell:
    verdict = block.get("verdict")
    error = block.get("rel_error")
    number = float(error) if isinstance(error, (int, float)) and not isinstance(error, bool) else None
    known = verdict in (Verdict.WRONG.value, Verdict.RIGHT.value)
    return Cell(str(block.get("block", "")), Verdict(verdict) if known else Verdict.UNDECIDED, number)


def _character(cell: Cell | None) -> str:
    if cell is None:
        return " "
    if cell.verdict is Verdict.RIGHT:
        return _RIGHT
    if cell.verdict is Verdict.UNDECIDED:
        return _UNDECIDED
    return _SHADES[cell.shade]


def _localizes(blocks: Sequence[Any]) -> bool:
    verdicts = {b.get("verdict") for b in blocks if isinstance(b, Mapping)}
    return Verdict.WRONG.value in verdicts and Verdict.RIGHT.value in verdicts


def _strip(name: str, argument: str, blocks: Sequence[Mapping[str, Any]]) -> Strip:
    return Strip(argument, name, tuple(_cell(b) for b in blocks[:_MAX_CELLS]), max(len(blocks) - _MAX_CELLS, 0))


def _plane(argument: str, blocks: Sequence[Mapping[str, Any]], height: int, width: int) -> Plane:
    """The spatial plane, coarsened to at most _MAP_ROWS x _MAP_COLUMNS cells, each the block
    of its distance from the edge ("0", "1", ..., "k+")."""
    by_distance: dict[int, Cell] = {}
    last_open: tuple[int, Cell] | None = None
    for block in blocks:
        cell = _cell(block)
        if cell.block.endswith("+") and cell.block[:-1].isdigit():
            last_open = (int(cell.block[:-1]), cell)
        elif cell.block.isdigit():
            by_distance[int(cell.block)] = cell

    def at(distance: int) -> Cell | None:
        if distance in by_distance:
            return by_distance[distance]
        if last_open is not None and distance >= last_open[0]:
            return last_open[1]
        return None

    depth = max(by_distance, default=-1) + 1  # the rings drawn one by one must all show
    rows, columns = _samples(height, _MAP_ROWS, depth), _samples(width, _MAP_COLUMNS, depth)
    cells = tuple(tuple(at(min(r, c, height - 1 - r, width - 1 - c)) for c in columns) for r in rows)
    return Plane(argument, height, width, tuple(rows), tuple(columns), cells)


def _strip_text(strip: Strip) -> Picture:
    """Numbered blocks (channels, time steps) as a strip under their numbers; named ones
    (a sign, a value range) each cell beside its name."""
    labels = [cell.block for cell in strip.cells]
    cells = [_character(cell) for cell in strip.cells]
    lines: tuple[str, ...]
    if strip.numbered:
        width = max(len(label) for label in labels)
        lines = (" ".join(label.rjust(width) for label in labels), " ".join(c.rjust(width) for c in cells))
    else:
        lines = tuple(f"{cell} {label}" for cell, label in zip(cells, labels))
    return Picture(strip.title, lines)


def _plane_text(plane: Plane) -> Picture:
    side = len(str(plane.rows[-1]))
    digits = max(len(str(plane.columns[-1])), 1)
    header = " " * side + " " + " ".join(str(c).rjust(digits) for c in plane.columns)
    lines = (header,) + tuple(
        str(r).rjust(side) + " " + " ".join(_character(cell).rjust(digits) for cell in row)
        for r, row in zip(plane.rows, plane.cells)
    )
    return Picture(plane.title, lines)


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


def figures_of(details: Mapping[str, Any], layouts: Sequence[str]) -> list[Figure]:
    """What to draw for a gradient check's details: for every failed argument, each partition
    whose blocks were proven wrong in some places and right in others, and that a region of
    the diagnosis names."""
    found: list[Figure] = []
    for record in details.get("arguments") or ():
        if not isinstance(record, Mapping) or record.get("status") != Status.FAILED.value:
            continue
        diagnosis = record.get("diagnosis")
        if not isinstance(diagnosis, Mapping):
            continue
        argument = str(record.get("argument", "?"))
        # Drawn only for what the diagnosis says: the picture of a region it proved.
        said = {r.get("unit") for r in diagnosis.get("regions") or () if isinstance(r, Mapping)}
        blocks_of = diagnosis.get("blocks")
        for name, blocks in blocks_of.items() if isinstance(blocks_of, Mapping) else ():
            if not isinstance(blocks, Sequence) or not blocks or not _localizes(blocks) or name not in said:
                continue
            blocks = [b for b in blocks if isinstance(b, Mapping)]
            size = (
                _spatial_size(layouts) if record.get("kind") == "input" and argument == _first_input(details) else None
            )
            if name == "distance from the edge" and size is not None:
                found.append(_plane(argument, blocks, *size))
            elif name not in ("row", "column"):  # the map says more than rows and columns alone
                found.append(_strip(str(name), argument, blocks))
    return found


def pictures_of(details: Mapping[str, Any], layouts: Sequence[str]) -> list[Picture]:
    """The console's pictures of `figures_of`, as text."""
    return [_plane_text(f) if isinstance(f, Plane) else _strip_text(f) for f in figures_of(details, layouts)]
