"""Pictures of where a gradient is wrong, drawn from a failed gradient check's diagnosis.

The diagnosis records, for each partition of an argument it screened (channels, time steps,
distance from the edge of the spatial plane, sign, value range, rows, columns), every block's
verdict and relative error, read typed into `CheckResult.gradient` (`findings.gradient`). A partition whose blocks
were proven both wrong and right localizes the error: it is drawn as a strip of cells, one per
block, shaded by the relative error; the distance from the edge as a coarse map of the plane.
Nothing is drawn that the blocks do not say: every cell is one block's verdict.

`figures_of` says what to draw (`Strip`, `Plane`: cells with their block, verdict and error);
`pictures_of` draws it as text for the console, `reporters.svg` as SVG for the HTML report,
so both show the same cells.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from layercheck.findings.gradient import EDGE_DISTANCE, PLANE_AXES, BlockResult, GradientReport
from layercheck.findings.gradient import BlockVerdict as Verdict
from layercheck.status import Status

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
# A block's relative error is measured along one random direction of it, as the check's own:
# it may read a few times above or below the block's whole relative error, and the legend says so.
LEGEND = (
    "wrong, by the relative error along a random direction: █ ≥10%  ▓ ≥1%  ▒ ≥0.01%  ░ less   · right   ? undecided"
)
_MAX_CELLS = 64  # a strip longer than this shows its first cells and says how many more
_MAP_ROWS, _MAP_COLUMNS = 12, 24


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


def _cell(block: BlockResult) -> Cell:
    return Cell(block.label, block.verdict, block.rel_error)


def _character(cell: Cell | None) -> str:
    if cell is None:
        return " "
    if cell.verdict is Verdict.RIGHT:
        return _RIGHT
    if cell.verdict is Verdict.UNDECIDED:
        return _UNDECIDED
    return _SHADES[cell.shade]


def _strip(name: str, argument: str, blocks: Sequence[BlockResult]) -> Strip:
    return Strip(argument, name, tuple(_cell(b) for b in blocks[:_MAX_CELLS]), max(len(blocks) - _MAX_CELLS, 0))


def _plane(argument: str, blocks: Sequence[BlockResult], height: int, width: int) -> Plane:
    """The spatial plane, coarsened to at most _MAP_ROWS x _MAP_COLUMNS cells, each the block
    of its distance from the edge (each block spans one distance, the last every one from
    its first on: "0", "1", ..., "3+")."""
    spans = [(block.span, _cell(block)) for block in blocks if block.span is not None]

    def at(distance: int) -> Cell | None:
        return next(
            (cell for (first, last), cell in spans if first <= distance and (last is None or distance <= last)), None
        )

    # the rings drawn one by one must all show
    depth = max((last + 1 for (_, last), _ in spans if last is not None), default=0)
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


def figures_of(report: GradientReport) -> list[Figure]:
    """What to draw for a gradient check: for every failed argument, each partition whose
    blocks were proven wrong in some places and right in others, and that a region of the
    diagnosis names (a picture shows what was said)."""
    found: list[Figure] = []
    for argument in report.arguments:
        if argument.status is not Status.FAILED:
            continue
        for partition in argument.partitions:
            if not partition.said or not partition.localizes:
                continue
            plane = argument.plane
            if partition.name == EDGE_DISTANCE and plane is not None:
                found.append(_plane(argument.argument, partition.blocks, *plane))
            elif partition.name not in PLANE_AXES:  # the map says more than rows and columns alone
                found.append(_strip(partition.name, argument.argument, partition.blocks))
    return found


def pictures_of(report: GradientReport) -> list[Picture]:
    """The console's pictures of `figures_of`, as text."""
    return [_plane_text(f) if isinstance(f, Plane) else _strip_text(f) for f in figures_of(report)]
