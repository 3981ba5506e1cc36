"""The pictures of where a gradient is wrong (`pictures.figures_of`) as inline SVG, for the
HTML report: one square per block, shaded by its relative error (the console's four bands),
a right block and an undecided one each drawn apart (a dot, a question mark: not colour
alone), the block's numbers in a `<title>` that a browser shows on hover, and row and column
numbers around a map of the spatial plane. Each figure comes with a table of the same numbers
(keyboard and screen-reader users get them without hovering).

Colours are CSS classes (`c-s0`..`c-s3`, `c-ok`, `c-un`, `c-none`) that the page's style sheet
defines for its light and dark schemes. Strings are enough to write this: an SVG library
would add a dependency to escape a few labels. Every text (an argument's name is the
layer's) goes through `html.escape`, after `safetext.visible`.
"""

from __future__ import annotations

from html import escape

from layercheck.reporters.pictures import SHADE_BOUNDS, Cell, Figure, Plane, Strip, Verdict
from layercheck.safetext import NAME_LIMIT, bounded, visible

__all__ = ["LEGEND_ITEMS", "figure_html", "legend_html"]

_CELL, _GAP = 24, 3  # a square and the space between two, in px
_STEP = _CELL + _GAP
_CHAR = 7.5  # px per character of a label at the page's small font (monospace 12 px)


def _t(text: object) -> str:
    """Text from a layer or a report, escaped for HTML (element text and attributes)."""
    return escape(visible(bounded(str(text), NAME_LIMIT)), quote=True)


def _percent(bound: float) -> str:
    return f"{bound * 100:g}%"


# A block's relative error is measured along one random direction of it (`pictures.LEGEND`).
_ALONG = " along a random direction"

# The legend, from the bands themselves: (css class, words).
LEGEND_ITEMS: tuple[tuple[str, str], ...] = tuple(
    (
        f"c-s{i}",
        f"wrong, relative error ≥ {_percent(bound)}{_ALONG}" if bound else f"wrong, relative error smaller{_ALONG}",
    )
    for i, bound in enumerate(SHADE_BOUNDS)
) + (("c-ok", "right"), ("c-un", "undecided"))


def _error(cell: Cell) -> str:
    return "no error recorded" if cell.rel_error is None else f"relative error {cell.rel_error:.3g}{_ALONG}"


def _words(cell: Cell) -> str:
    if cell.verdict is Verdict.WRONG:
        return f"wrong, {_error(cell)}"
    return f"{cell.verdict.value}, {_error(cell)}"


def _class(cell: Cell | None) -> str:
    if cell is None:
        return "c-none"
    if cell.verdict is Verdict.RIGHT:
        return "c-ok"
    if cell.verdict is Verdict.UNDECIDED:
        return "c-un"
    return f"c-s{cell.shade}"


def _square(x: float, y: float, cell: Cell | None, what: str | None) -> str:
    """A cell at (x, y): its rect with the hover text (where `what` names it), and the mark of
    a right or undecided one."""
    hover = f"<title>{_t(what)}: {_t(_words(cell))}</title>" if cell is not None and what is not None else ""
    square = f'<rect class="{_class(cell)}" x="{x:g}" y="{y:g}" width="{_CELL}" height="{_CELL}" rx="2">{hover}</rect>'
    middle_x, middle_y = x + _CELL / 2, y + _CELL / 2
    if cell is not None and cell.verdict is Verdict.RIGHT:
        square += f'<circle class="mark" cx="{middle_x:g}" cy="{middle_y:g}" r="2.5"/>'
    elif cell is not None and cell.verdict is Verdict.UNDECIDED:
        square += f'<text class="mark" x="{middle_x:g}" y="{middle_y + 4:g}" text-anchor="middle">?</text>'
    return square


def _svg(width: float, height: float, label: str, body: list[str]) -> str:
    return (
        f'<svg class="picture" role="img" aria-label="{_t(label)}" '
        f'width="{width:g}" height="{height:g}" viewBox="0 0 {width:g} {height:g}">' + "".join(body) + "</svg>"
    )


def _strip_svg(strip: Strip) -> str:
    label = strip.partition
    if strip.numbered:  # numbers above a row of squares
        body = []
        for i, cell in enumerate(strip.cells):
            x = i * _STEP
            body.append(f'<text class="axis" x="{x + _CELL / 2:g}" y="12" text-anchor="middle">{_t(cell.block)}</text>')
            body.append(_square(x, 18, cell, f"{label} {cell.block}"))
        return _svg(len(strip.cells) * _STEP, 18 + _CELL, strip.title, body)
    # named blocks (a sign, a value range): a square each, its name beside it
    longest = max(len(_t(cell.block)) for cell in strip.cells)
    body = []
    for i, cell in enumerate(strip.cells):
        y = i * _STEP
        body.append(_square(0, y, cell, f"{label} {cell.block}"))
        body.append(f'<text class="axis" x="{_STEP + 2}" y="{y + 16}">{_t(cell.block)}</text>')
    return _svg(_STEP + 4 + longest * _CHAR, len(strip.cells) * _STEP, strip.title, body)


def _plane_svg(plane: Plane) -> str:
    """Column numbers on top, row numbers on the left, a square per sampled position."""
    left = max(len(str(plane.rows[-1])), 1) * _CHAR + 6
    top = 18
    body = [
        f'<text class="axis" x="{left + j * _STEP + _CELL / 2:g}" y="12" text-anchor="middle">{c}</text>'
        for j, c in enumerate(plane.columns)
    ]
    for i, (r, row) in enumerate(zip(plane.rows, plane.cells)):
        y = top + i * _STEP
        body.append(f'<text class="axis" x="{left - 6:g}" y="{y + 16}" text-anchor="end">{r}</text>')
        for j, (c, cell) in enumerate(zip(plane.columns, row)):
            what = f"row {r}, column {c} (distance from the edge {cell.block if cell else 'not screened'})"
            body.append(_square(left + j * _STEP, y, cell, what))
    return _svg(left + len(plane.columns) * _STEP, top + len(plane.rows) * _STEP, plane.title, body)


def _numbers(figure: Figure) -> str:
    """The blocks' numbers as a table, in the order drawn (a plane's blocks once each)."""
    if isinstance(figure, Plane):
        cells: list[Cell] = []
        for row in figure.cells:
            cells += [cell for cell in row if cell is not None and cell not in cells]
        heading = "distance from the edge"
    else:
        cells, heading = list(figure.cells), figure.partition
    rows = "".join(
        f"<tr><td>{_t(cell.block)}</td><td>{cell.verdict.value}</td>"
        f"<td>{'' if cell.rel_error is None else f'{cell.rel_error:.3g}'}</td></tr>"
        for cell in cells
    )
    return (
        f'<details class="numbers"><summary>Numbers</summary><div class="scroll"><table>'
        f"<thead><tr><th>{_t(heading)}</th><th>verdict</th><th>relative error</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div></details>"
    )


def figure_html(figure: Figure) -> str:
    """A `<figure>`: the title, the SVG in a box that scrolls on its own, the numbers."""
    svg = _plane_svg(figure) if isinstance(figure, Plane) else _strip_svg(figure)
    return (
        f'<figure class="where"><figcaption>{_t(figure.title.rstrip(":"))}</figcaption>'
        f'<div class="scroll">{svg}</div>{_numbers(figure)}</figure>'
    )


def legend_html() -> str:
    """The legend of every picture: a swatch drawn as the cells are, and its words."""
    items = []
    for css, words in LEGEND_ITEMS:
        verdict = Verdict.RIGHT if css == "c-ok" else Verdict.UNDECIDED if css == "c-un" else Verdict.WRONG
        swatch = _square(1, 1, Cell("", verdict, None), None) if css in ("c-ok", "c-un") else ""
        swatch = swatch or f'<rect class="{css}" x="1" y="1" width="{_CELL}" height="{_CELL}" rx="2"/>'
        svg = f'<svg class="swatch" aria-hidden="true" width="{_CELL + 2}" height="{_CELL + 2}">{swatch}</svg>'
        items.append(f"<li>{svg} {_t(words)}</li>")
    return f'<ul class="legend" aria-label="legend of the pictures">{"".join(items)}</ul>'
