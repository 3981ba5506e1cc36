"""What is wrong with a gradient that failed, and where.

Patterns are recognised from probes that already ran (no extra cost): a gradient that is zero,
has the wrong sign or a constant factor, belongs to another argument (returned in the wrong
order), is transposed or conjugated. Localization then spends a bounded number of restricted
probes: per channel, per observation, per range of input values, or element by element for
small arguments, to say where the gradient is wrong and by how much.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from layercheck.numerics.arrays import is_complex, namespace_of, to_host
from layercheck.numerics.gradcheck import (
    ArgumentVerdict,
    Baseline,
    EvaluationError,
    GradientProblem,
    Probe,
    Tolerances,
    Verdict,
    element_probe,
    restricted_probe,
)

__all__ = [
    "Diagnosis",
    "ElementExample",
    "Region",
    "SizeContext",
    "constant_factor",
    "localize",
    "name_factor",
    "patterns",
    "size_context",
]

_LABEL_NAMES = {"C": "channel", "B": "observation", "T": "time step", "S": "spatial position", "U": "index"}
_MAX_CELLS = 16
_ELEMENTWISE_LIMIT = 32


@dataclass(frozen=True)
class ElementExample:
    """The analytic and numeric gradient at one element, and whether they disagree."""

    index: tuple[int, ...]
    analytic: complex | float
    numeric: complex | float
    abs_error: float
    rel_error: float
    tolerance: float
    wrong: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": list(self.index),
            "analytic": self.analytic,
            "numeric": self.numeric,
            "abs_error": self.abs_error,
            "rel_error": self.rel_error,
            "tolerance": self.tolerance,
            "wrong": self.wrong,
        }


@dataclass
class Diagnosis:
    headline: str
    causes: list[str] = field(default_factory=list)
    where: list[str] = field(default_factory=list)
    examples: list[ElementExample] = field(default_factory=list)
    swapped_with: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "headline": self.headline,
            "causes": self.causes,
            "where": self.where,
            "examples": [e.to_dict() for e in self.examples],
        }


@dataclass(frozen=True)
class SizeContext:
    """Sizes that make a constant factor recognisable (batch size, elements per channel...)."""

    named: tuple[tuple[str, int], ...]


def size_context(problem: GradientProblem) -> SizeContext:
    named: list[tuple[str, int]] = []
    for value, labels in zip(problem.values, problem.labels):
        if not labels or len(labels) != value.ndim:
            continue
        for label, word in (("B", "batch size"), ("C", "number of channels"), ("T", "sequence length")):
            axis = labels.find(label)
            if axis >= 0 and value.shape[axis] > 1:
                named.append((word, value.shape[axis]))
        c = labels.find("C")
        if c >= 0 and value.size // value.shape[c] > 1:
            named.append(("number of elements per channel", value.size // value.shape[c]))
        spatial = math.prod(value.shape[i] for i, ch in enumerate(labels) if ch == "S")
        if spatial > 1:
            named.append(("number of spatial positions", spatial))
            spatial_axes = [i for i, ch in enumerate(labels) if ch == "S"]
            for k, axis in enumerate(spatial_axes, 1):
                if value.shape[axis] > 1 and len(spatial_axes) > 1:
                    named.append((f"size of spatial axis {k}", value.shape[axis]))
        named.append(("number of elements", value.size))
        break
    return SizeContext(tuple(dict.fromkeys(named)))


def name_factor(ratio: float, context: SizeContext) -> str:
    """`2`, `1/128 (1/batch size)`, or the ratio itself."""
    # A size of the problem explains a factor better than a small integer does, except 2,
    # which a forgotten derivative of a square explains as well.
    candidates: list[tuple[float, str]] = [(-1.0, "-1")]
    for word, n in context.named:
        if n > 2:
            candidates += [(float(n), f"{n} (the {word})"), (1.0 / n, f"1/{n} (1/{word})")]
    for n in (2, 3, 4, 8):
        candidates += [(float(n), str(n)), (1.0 / n, f"1/{n}"), (-float(n), f"-{n}"), (-1.0 / n, f"-1/{n}")]
    for value, text in candidates:
        if abs(ratio - value) <= 1e-4 * abs(value):
            return text
    if abs(ratio - 1) < 1e-2:
        return f"1 {'+' if ratio > 1 else '-'} {abs(ratio - 1):.3g} (a relative error of {abs(ratio - 1):.2g})"
    frac = Fraction(ratio).limit_denominator(64)
    if frac.denominator > 1 and abs(float(frac) - ratio) <= 1e-6 * abs(ratio):
        return f"{frac.numerator}/{frac.denominator}"
    return f"{ratio:.6g}"


def _failing(verdict: ArgumentVerdict) -> list[Probe]:
    return [p for p in verdict.probes if p.verdict is Verdict.FAIL]


def _reference_probe(verdict: ArgumentVerdict) -> Probe | None:
    """The first probe of an argument whose numeric side is trustworthy."""
    for probe in verdict.probes:
        if probe.verdict in (Verdict.PASS, Verdict.FAIL):
            return probe
    return None


def constant_factor(probes: list[Probe]) -> float | None:
    """A ratio analytic/numeric shared by every failing probe (two at least), within their noise."""
    ratios, noise = [], 0.0
    for p in probes:
        if abs(p.numeric) <= 10 * p.fixed_tolerance:
            return None
        ratios.append(p.analytic / p.numeric)
        noise += p.fixed_tolerance / abs(p.numeric)
    if len(ratios) < 2:
        return None
    typical = max(abs(r) for r in ratios)
    if max(ratios) - min(ratios) <= (1e-5 + noise) * typical:
        return float(np.mean(ratios))
    return None


def _misplaced(problem: GradientProblem, verdicts: list[ArgumentVerdict], index: int) -> tuple[str, bool] | None:
    """Another argument whose gradient the layer returned in this argument's place.

    Returns (other name, swapped) where `swapped` says the other slot holds this gradient.
    """
    mine = _failing(verdicts[index])[0]
    for other, verdict in enumerate(verdicts):
        if other == index or problem.values[other].shape != problem.values[index].shape:
            continue
        theirs = _reference_probe(verdict)
        if theirs is None or not theirs.agrees(theirs.gradients[index]):
            continue
        return problem.names[other], mine.agrees(mine.gradients[other])
    return None


def _transposed(probes: list[Probe], gradient: np.ndarray) -> str | None:
    if gradient.ndim < 2 or gradient.ndim > 4:
        return None
    for perm in itertools.permutations(range(gradient.ndim)):
        if perm == tuple(range(gradient.ndim)):
            continue
        moved = gradient.transpose(perm)
        if moved.shape == gradient.shape and all(p.agrees(moved) for p in probes):
            return "transposed" if gradient.ndim == 2 else f"has its axes permuted (transpose {perm} fits)"
    return None


_CONVENTION = "layercheck's convention is dL/da + i*dL/db"


def _conjugation(problem: GradientProblem, probes: list[Probe], index: int, weights) -> str | None:
    """How a complex gradient misses a conjugate, if it does.

    The whole gradient conjugated is JAX's convention. A conjugate missing inside backward
    (f'(X)*dLdY where conj(f'(X))*dLdY is due) shows as a backward that is right when given
    conj(dLdY) and conjugated afterwards.
    """
    gradient = probes[0].gradients[index]
    xp = namespace_of(gradient)
    if all(p.agrees(xp.conj(gradient)) for p in probes):
        return f"the conjugate of the correct one (conj missing: dL/da - i*dL/db is JAX's convention, {_CONVENTION})"
    if all(p.agrees(2 * xp.conj(gradient)) for p in probes):
        return "half the conjugate of the correct one: the Wirtinger derivative dL/dz instead of dL/da + i*dL/db (conj missing)"
    if weights is None:
        return None
    try:
        flipped = problem.gradients([xp.conj(w) for w in weights])[index]
    except EvaluationError:
        return None
    if flipped is not None and all(p.agrees(xp.conj(flipped)) for p in probes):
        return "missing a conjugate (conj missing): a derivative multiplies dL/dY where its conjugate belongs"
    return None


def _complex_factor_hint(ratio: float) -> str:
    if abs(ratio - 0.5) <= 1e-4 * 0.5:
        return f": the Wirtinger derivative dL/dconj(z) = (dL/da + i*dL/db)/2? {_CONVENTION}"
    if abs(ratio - 2) <= 1e-4 * 2:
        return f": twice the gradient, as if dL/dY were taken as a Wirtinger derivative and doubled? {_CONVENTION}"
    return ""


def patterns(
    problem: GradientProblem,
    verdicts: list[ArgumentVerdict],
    index: int,
    context: SizeContext,
    weights=None,
) -> Diagnosis | None:
    """A pattern that explains the failure from the probes alone (and, for a missing conjugate,
    one more backward call with conjugated loss weights `weights`), or None."""
    name = problem.names[index]
    probes = _failing(verdicts[index])
    gradient = probes[0].gradients[index]
    if not bool(namespace_of(gradient).any(gradient)):
        return Diagnosis(f"the gradient of {name} is zero everywhere", ["zero or missing gradient"])
    misplaced = _misplaced(problem, verdicts, index)
    if misplaced is not None:
        other, swapped = misplaced
        if swapped:
            return Diagnosis(
                f"the gradients of {name} and {other} are returned in each other's place",
                [f"gradient order: {name} and {other} swapped"],
                swapped_with=other,
            )
        return Diagnosis(
            f"the gradient returned for {name} is the gradient of {other}",
            [f"gradient of {other} in the place of {name}"],
        )
    complex_values = any(is_complex(v) for v in problem.values) or is_complex(gradient)
    conjugation = _conjugation(problem, probes, index, weights) if complex_values else None
    if conjugation:
        return Diagnosis(f"the gradient of {name} is {conjugation}", ["conj missing"])
    transposed = _transposed(probes, gradient)
    if transposed:
        return Diagnosis(f"the gradient of {name} is {transposed}", [transposed])
    ratio = constant_factor(probes)
    if ratio is not None:
        if abs(ratio + 1) <= 1e-4:
            return Diagnosis(f"the gradient of {name} has the wrong sign", ["wrong sign"])
        if abs(ratio) <= 1e-6:
            return Diagnosis(f"the gradient of {name} is (nearly) zero", ["zero or missing gradient"])
        factor = name_factor(ratio, context)
        cause = f"off by a constant factor {factor}"
        hint = ""
        if "1/batch size" in factor:
            hint = ": a mean over the observations instead of a sum?"
        elif "(the batch size)" in factor:
            hint = ": a sum over the observations where a mean belongs?"
        elif complex_values:
            hint = _complex_factor_hint(ratio)
        return Diagnosis(f"the gradient of {name} is {cause}{hint}", [cause])
    return None


# -- localization ------------------------------------------------------------------------------


def _cells_along(value: Any, axis: int) -> list[tuple[str, Any]]:
    shape = tuple(value.shape)
    xp = namespace_of(value)
    n = shape[axis]
    edges = np.linspace(0, n, min(n, _MAX_CELLS) + 1).astype(int).tolist()
    cells = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        mask = xp.zeros(shape, dtype=bool)
        index = [slice(None)] * len(shape)
        index[axis] = slice(lo, hi)
        mask[tuple(index)] = True
        cells.append((str(lo) if hi - lo == 1 else f"{lo}-{hi - 1}", mask))
    return cells


_QUANTILES = (0.0, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 1.0)


def _value_cells(value: Any) -> list[tuple[tuple[float, float], Any]]:
    """Cells by quantile of the (real part of the) argument's values, the tails finest."""
    xp = namespace_of(value)
    real = value.real
    edges = to_host(xp.quantile(real, xp.asarray(_QUANTILES))).tolist()
    cells = []
    for k, (lo, hi) in enumerate(zip(edges[:-1], edges[1:])):
        mask = (real >= lo) & ((real < hi) if k < len(edges) - 2 else (real <= hi))
        if mask.any():
            cells.append(((float(lo), float(hi)), mask))
    return cells


def _cell_verdicts(problem, base, index, cells, tol, rng) -> list[str | None]:
    out = []
    for _, mask in cells:
        probe = restricted_probe(problem, base, index, mask, tol, rng)
        out.append("bad" if probe.verdict is Verdict.FAIL else "ok" if probe.verdict is Verdict.PASS else None)
    return out


@dataclass(frozen=True)
class Region:
    """Where a gradient is wrong along one partition: text, share of elements, and mask."""

    text: str
    share: float
    mask: Any


def _axis_region(name: str, label: str, cells, verdicts) -> Region | None:
    bad = [(c, m) for (c, m), v in zip(cells, verdicts) if v == "bad"]
    ok = [c for (c, _), v in zip(cells, verdicts) if v == "ok"]
    if not bad or not ok:
        return None
    word = _LABEL_NAMES.get(label, "index")
    plural = "s" if len(bad) > 1 or "-" in bad[0][0] else ""
    mask = functools.reduce(namespace_of(bad[0][1]).logical_or, [m for _, m in bad])
    text = f"wrong only in {word}{plural} {', '.join(c for c, _ in bad)} of {name} (right in the {len(ok)} other(s) checked)"
    return Region(text, float(mask.mean()), mask)


def _value_region(name: str, cells, verdicts) -> Region | None:
    bad = [k for k, v in enumerate(verdicts) if v == "bad"]
    ok = [k for k, v in enumerate(verdicts) if v == "ok"]
    if not bad or not ok:
        return None
    lo, hi = cells[bad[0]][0][0], cells[bad[-1]][0][1]
    mask = functools.reduce(namespace_of(cells[0][1]).logical_or, [cells[k][1] for k in bad])
    if bad == list(range(bad[0], bad[-1] + 1)):
        if bad[-1] == len(cells) - 1:
            span = f"where {name} >= {lo:.4g}"
        elif bad[0] == 0:
            span = f"where {name} <= {hi:.4g}"
        else:
            span = f"where {name} is in [{lo:.4g}, {hi:.4g}]"
    else:
        span = f"for some ranges of {name} between {lo:.4g} and {hi:.4g}"
    text = f"wrong only {span} (about {100 * float(mask.mean()):.2g}% of the elements), right elsewhere"
    return Region(text, float(mask.mean()), mask)


def _example(problem, base, index, element, gradient, tol) -> ElementExample | None:
    """The analytic and numeric gradient at one element; for a complex argument the numeric
    one is dL/da + i*dL/db, from one probe of each part."""
    units = (1, 1j) if is_complex(problem.values[index]) else (1,)
    probes = [element_probe(problem, base, index, element, tol, unit) for unit in units]
    if any(p.verdict not in (Verdict.PASS, Verdict.FAIL) for p in probes):
        return None
    analytic = complex(gradient[element]) if is_complex(gradient) else float(gradient[element])
    numeric = probes[0].numeric if len(probes) == 1 else complex(probes[0].numeric, probes[1].numeric)
    probe = max(probes, key=lambda p: (p.verdict is Verdict.FAIL, p.tolerance))
    abs_error = abs(analytic - numeric)
    return ElementExample(
        index=tuple(int(i) for i in element),
        analytic=analytic,
        numeric=numeric,
        abs_error=abs_error,
        rel_error=abs_error / abs(numeric) if numeric else math.inf,
        tolerance=probe.tolerance,
        wrong=probe.verdict is Verdict.FAIL,
    )


def _examples(problem, base, index, gradient, tol, elements) -> list[ElementExample]:
    found = [e for e in (_example(problem, base, index, el, gradient, tol) for el in elements) if e]
    return sorted(found, key=lambda e: (not e.wrong, -e.abs_error))


def localize(
    problem: GradientProblem,
    base: Baseline,
    verdicts: list[ArgumentVerdict],
    index: int,
    tol: Tolerances,
    rng: np.random.Generator,
) -> tuple[list[str], list[ElementExample]]:
    """Where the gradient of argument `index` is wrong (most specific first), and examples."""
    name = problem.names[index]
    value = problem.values[index]
    gradient = _failing(verdicts[index])[0].gradients[index]
    if value.size <= _ELEMENTWISE_LIMIT:
        examples = _examples(problem, base, index, gradient, tol, np.ndindex(value.shape))
        wrong = [e for e in examples if e.wrong]
        where = []
        if wrong and len(wrong) < len(examples):
            listed = ", ".join(str(e.index) for e in wrong[:8]) + (" ..." if len(wrong) > 8 else "")
            where.append(f"wrong at {len(wrong)} of {len(examples)} elements of {name}: {listed}")
        return where, examples[:5]
    regions: list[Region] = []
    labels = problem.labels[index]
    if labels and len(labels) == value.ndim:
        for label in "CBT":
            axis = labels.find(label)
            if axis >= 0 and value.shape[axis] > 1:
                cells = _cells_along(value, axis)
                region = _axis_region(name, label, cells, _cell_verdicts(problem, base, index, cells, tol, rng))
                if region:
                    regions.append(region)
    value_cells = _value_cells(value)
    region = _value_region(name, value_cells, _cell_verdicts(problem, base, index, value_cells, tol, rng))
    if region:
        regions.append(region)
    regions = sorted((r for r in regions if r.share <= 0.5), key=lambda r: r.share)
    xp = namespace_of(value)
    suspect = xp.ones(value.shape, dtype=bool)
    for r in regions:
        if bool((suspect & r.mask).any()):
            suspect &= r.mask
    candidates = xp.argwhere(suspect)
    chosen = rng.choice(len(candidates), size=min(4, len(candidates)), replace=False)
    picks = to_host(candidates[xp.asarray(chosen)]).tolist()
    examples = _examples(problem, base, index, gradient, tol, [tuple(int(i) for i in el) for el in picks])
    return [r.text for r in regions], examples
