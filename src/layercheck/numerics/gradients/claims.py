"""Causes of a wrong gradient, each said only once its corrected gradient holds (`Evidence`).

Claims about the incoming gradient come first: a backward that ignores dL/dY, or is not
linear in it, is found by one more backward with -2 dL/dY. Then another argument's gradient
in this one's place, a missing conjugate, permuted axes, a constant factor, a sum over the
wrong axes, a gradient reversed along some axes, dL/dY itself left out or added; each returns a
`Finding` or None.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from layercheck.numerics.arrays import fetch, namespace_of, norm_sq, to_host
from layercheck.numerics.blocks import axis_mask
from layercheck.numerics.gradients.engine import ArgumentVerdict, EvaluationError, Probe, Verdict
from layercheck.numerics.gradients.evidence import Corrected, Evidence, failing, worst_failing
from layercheck.numerics.gradients.findings import (
    AcrossObservations,
    AxesMistake,
    Cause,
    Conjugation,
    Factor,
    FactorForm,
    Finding,
    Flip,
    Identity,
    Misplaced,
    NamedSize,
    NonFinite,
    Nonlinearity,
    Permutation,
    Size,
)
from layercheck.status import Status

__all__ = [
    "CLAIMS",
    "factors_to_try",
    "name_factor",
    "non_finite",
    "proposed_ratio",
    "ratio_of",
    "sizes",
    "zero",
    "zero_on",
]

_FACTOR_SPREAD = 1e-3  # ratios of the failing probes must agree this well to propose a factor
_SHOWN = 5  # non-finite elements listed


def sizes(values: Sequence[Any], labels: Sequence[str | None]) -> tuple[NamedSize, ...]:
    """Sizes that make a constant factor recognisable (batch size, elements per channel...),
    of the first argument with a format."""
    for value, format_ in zip(values, labels):
        if not format_ or len(format_) != value.ndim:
            continue
        shape = tuple(int(n) for n in value.shape)
        # Each size with the axes whose product it is (those of one element left out): one
        # product named once, by its first name here (a CB layout's elements per channel are
        # its batch: the same number by construction, not two sizes that coincide).
        named: list[tuple[NamedSize, frozenset[int]]] = []
        for label, size in (("B", Size.BATCH), ("C", Size.CHANNELS), ("T", Size.SEQUENCE)):
            axis = format_.find(label)
            if axis >= 0 and shape[axis] > 1:
                named.append((NamedSize(size, shape[axis]), frozenset({axis})))
        c = format_.find("C")
        if c >= 0 and value.size // shape[c] > 1:
            named.append((NamedSize(Size.PER_CHANNEL, value.size // shape[c]), _axes_of(shape, c)))
        spatial_axes = [i for i, ch in enumerate(format_) if ch == "S"]
        spatial = math.prod(shape[i] for i in spatial_axes)
        if spatial > 1:
            kept = frozenset(i for i in spatial_axes if shape[i] > 1)
            named.append((NamedSize(Size.SPATIAL, spatial), kept))
            for k, axis in enumerate(spatial_axes, 1):
                if shape[axis] > 1 and len(spatial_axes) > 1:
                    named.append((NamedSize(Size.SPATIAL_AXIS, shape[axis], k), frozenset({axis})))
        named.append((NamedSize(Size.ELEMENTS, int(value.size)), _axes_of(shape)))
        products: dict[frozenset[int], NamedSize] = {}
        for found, axes in named:
            products.setdefault(axes, found)
        return tuple(dict.fromkeys(products.values()))
    return ()


def _axes_of(shape: tuple[int, ...], left_out: int | None = None) -> frozenset[int]:
    """The axes of more than one element, but `left_out`."""
    return frozenset(i for i, n in enumerate(shape) if n > 1 and i != left_out)


def name_factor(ratio: float, context: Sequence[NamedSize]) -> Factor:
    """The factor `ratio` as a size of the problem (128, the batch size), its inverse, a
    small fraction, 1 plus a small error, or the number itself."""
    # A size of the problem explains a factor better than a small integer does, except 2,
    # which a forgotten derivative of a square explains as well.
    if abs(ratio + 1) <= 1e-4:
        return Factor(ratio, FactorForm.FRACTION, -1, 1)
    for named in context:
        n = named.n
        if n > 2 and abs(ratio - n) <= 1e-4 * n:
            return Factor(ratio, FactorForm.SIZE, n, 1, named, _as_large(named, context))
        if n > 2 and abs(ratio - 1 / n) <= 1e-4 / n:
            return Factor(ratio, FactorForm.INVERSE_SIZE, 1, n, named, _as_large(named, context))
    # A batch of 2 names 2 and 1/2 as a fraction, with the batch size beside it (a hint, not the
    # name), where no other size is 2 (a guess among them otherwise).
    pair = next((named for named in context if named.size is Size.BATCH and named.n == 2), None)
    if pair is not None and _as_large(pair, context):
        pair = None
    for n in (2, 3, 4, 8):
        for value, numerator, denominator in ((n, n, 1), (1 / n, 1, n), (-n, -n, 1), (-1 / n, -1, n)):
            if abs(ratio - value) <= 1e-4 * abs(value):
                return Factor(ratio, FactorForm.FRACTION, numerator, denominator, pair if value in (2, 0.5) else None)
    if abs(ratio - 1) < 1e-2:
        return Factor(ratio, FactorForm.NEAR_ONE)
    frac = Fraction(ratio).limit_denominator(64)
    if frac.denominator > 1 and abs(float(frac) - ratio) <= 1e-6 * abs(ratio):
        return Factor(ratio, FactorForm.FRACTION, frac.numerator, frac.denominator)
    return Factor(ratio, FactorForm.DECIMAL)


# How near a measured ratio a factor a name gives must be to be tried before it: the ratio of a
# block whose gradient is small against its argument's carries the probes' error (1.99734 for
# an exact 2 on a channel scaled by 1e-5, on one seed of ten).
_NEAR = 1e-2


def factors_to_try(ratio: float, context: Sequence[NamedSize]) -> list[float]:
    """The factors to prove, in order: each exact one a name gives (a sign, a small fraction,
    a size of the problem or its inverse) near the measured `ratio`, the nearest first, then
    the ratio itself. The first that the gradient corrected by it holds for is the finding:
    where the exact one and the measured one both hold, the data cannot tell them apart, and
    the exact one is what a bug makes."""
    exact = [-1.0] + [v for n in (2, 3, 4, 8) for v in (n, 1 / n, -n, -1 / n)]
    exact += [v for named in context if named.n > 2 for v in (float(named.n), 1 / named.n)]
    near = sorted(
        (v for v in dict.fromkeys(exact) if abs(ratio - v) <= _NEAR * abs(v)), key=lambda v: abs(ratio / v - 1)
    )
    return [*near, ratio] if ratio not in near else near


def _as_large(named: NamedSize, context: Sequence[NamedSize]) -> tuple[NamedSize, ...]:
    """The other sizes of the problem equal to `named`: which of them a factor is, it cannot tell."""
    return tuple(other for other in context if other.n == named.n and other != named)


def ratio_of(probes: Sequence[Probe], minimum: int = 2) -> float | None:
    """A ratio analytic/numeric shared by the probes (`minimum` at least of those whose numeric
    side stands out of their tolerance: the others measure no ratio), within their noise."""
    ratios, noise = [], 0.0
    for p in probes:
        if not math.isfinite(p.analytic):
            return None
        if abs(p.numeric) <= 10 * p.fixed_tolerance:
            continue
        ratios.append(p.analytic / p.numeric)
        noise += p.fixed_tolerance / abs(p.numeric)
    if len(ratios) < minimum:
        return None
    typical = max(abs(r) for r in ratios)
    if max(ratios) - min(ratios) <= (_FACTOR_SPREAD + noise) * typical:
        return float(np.mean(ratios))
    return None


def non_finite(evidence: Evidence, index: int, finite: Any) -> Finding:
    bad = to_host(namespace_of(finite).argwhere(~finite))
    shown = tuple(tuple(int(i) for i in row) for row in bad[:_SHOWN])
    return Finding(Cause.NON_FINITE, (evidence.name(index),), NonFinite(len(bad), int(finite.size), shown))


def zero(evidence: Evidence, index: int) -> Finding:
    return Finding(Cause.ZERO, (evidence.name(index),))


def zero_on(gradient: Any, mask: Any) -> bool:
    """Whether backward returned exact zeros wherever `mask` (a region found wrong) holds: a
    loop one short that never writes the last channel, a border left as `zeros` made it."""
    xp = namespace_of(gradient)
    (nonzero,) = fetch(xp.count_nonzero(xp.where(mask, gradient, 0)))
    return int(nonzero) == 0


def linearity(evidence: Evidence, index: int, gradient: Any) -> Finding | None:
    """backward must be linear in dL/dY: s dL/dY, s times every gradient. Asked of the whole
    batch, never of a sub-batch's first observations alone: a backward that clips dL/dY to a
    norm past a sub-batch's is linear there."""
    scale, scaled = evidence.scaled_gradients()
    if scaled is None or scaled[index] is None:
        return None
    other = scaled[index]
    size_sq, off_linear, off_same = fetch(
        norm_sq(gradient), norm_sq(other - scale * gradient), norm_sq(other - gradient)
    )
    size = math.sqrt(size_sq)
    slack = math.sqrt(evidence.tol.eps) * size
    if math.sqrt(off_linear) <= slack:
        return None
    # Either claim says what backward does with dL/dY: only of a backward that gives the same
    # gradient when called again with the same dL/dY (one that reads what another call left,
    # a module global, is neither linear nor not: it is not a function of its arguments).
    again = evidence.repeated_gradients()
    if again is None or again[index] is None:
        return None
    (off_again,) = fetch(norm_sq(again[index] - gradient))
    if math.sqrt(off_again) > slack:
        return None
    if math.sqrt(off_same) <= slack:
        # The same gradient for a multiple of dL/dY: ignored only where a dL/dY drawn anew
        # gives it again too; else backward normalizes dL/dY (divides by its sum), and is
        # not linear in it.
        redrawn = evidence.redrawn_gradients()
        if redrawn is None or redrawn[index] is None:
            return None
        (off_redrawn,) = fetch(norm_sq(redrawn[index] - gradient))
        if math.sqrt(off_redrawn) <= slack:
            return Finding(Cause.IGNORES_DLDY, (evidence.name(index),), Nonlinearity(scale, 1.0))
    relative = math.sqrt(off_linear) / (abs(scale) * size)
    if relative > 0.01:
        return Finding(Cause.NOT_LINEAR_IN_DLDY, (evidence.name(index),), Nonlinearity(scale, relative))
    return None


def misplaced(evidence: Evidence, index: int, gradient: Any) -> Finding | None:
    """Another argument's gradient returned in this argument's place (verified both ways)."""
    problem = evidence.problem
    for other, verdict in enumerate(evidence.verdicts):
        if other == index or problem.values[other].shape != problem.values[index].shape:
            continue
        # What backward returned for this argument must be the other's gradient; a swap
        # also needs what it returned for the other to be this argument's.
        if evidence.base.gradients[other] is None or not evidence.holds(other, _slot(index)):
            continue
        if verdict.status is Status.FAILED and evidence.holds(index, _slot(other)):
            return Finding(Cause.SWAPPED, (problem.names[index], problem.names[other]))
        if factor(evidence, index, gradient) is not None:
            # Off by a constant factor from its own gradient (Y = X1 + 0.5 X2 with the 0.5
            # left out of dL/dX2): the other's gradient is that multiple of it, and what was
            # returned equals it for that reason alone. The factor is said (`factor`, next:
            # its probes are kept, no call made again).
            return None
        return Finding(Cause.MISPLACED, (problem.names[index],), Misplaced(problem.names[other]))
    return None


def conjugation(evidence: Evidence, index: int, gradient: Any) -> Finding | None:
    """How a complex gradient misses a conjugate, if it does. A conjugate missing inside
    backward (f'(X)*dLdY where conj(f'(X))*dLdY is due) shows as a backward that is right
    when given conj(dLdY) and conjugated afterwards."""
    if not evidence.complex_values(index):
        return None
    xp = namespace_of(gradient)
    if evidence.holds(index, lambda grads: xp.conj(grads[index])):
        form = Conjugation.CONJUGATE
    elif evidence.holds(index, lambda grads: 2 * xp.conj(grads[index])):
        form = Conjugation.HALF_CONJUGATE
    else:
        try:
            flipped = evidence.problem.gradients([xp.conj(w) for w in evidence.base.weights])[index]
        except EvaluationError:  # OutOfTime too: the claim is left unsaid
            return None
        if flipped is None or not evidence.holds(index, evidence.unmasked(xp.conj(flipped))):
            return None
        form = Conjugation.INSIDE
    return Finding(Cause.CONJUGATE, (evidence.name(index),), form)


def transposed(evidence: Evidence, index: int, gradient: Any) -> Finding | None:
    if gradient.ndim < 2 or gradient.ndim > 4:
        return None
    for perm in itertools.permutations(range(gradient.ndim)):
        moved = [axis for axis in perm if gradient.shape[axis] > 1]
        if moved == sorted(moved):
            continue  # it moves axes of length 1 alone: the same elements in the same order
        if gradient.transpose(perm).shape == gradient.shape and evidence.holds(index, _permuted(index, perm)):
            return Finding(Cause.TRANSPOSED, (evidence.name(index),), Permutation(tuple(perm)))
    return None


# The labels of the axes along which a gradient is tried reversed: where a layer reverses its
# input (a sequence run backwards, an image mirrored) and backward does not undo it. Not the
# channels, nor the observations: a batch reordered and not put back is a dependence across
# observations (`across_observations`), and a reversal of the batch's axis, the last in most
# formats, makes every pass over the reversed gradient several times slower.
_FLIPPABLE = "ST"
_MOST_FLIPPED = 4  # axes of size above 1: at most 15 sets of them tried


def flipped(evidence: Evidence, index: int, gradient: Any) -> Finding | None:
    """The right gradient reversed along some axes (a kernel's gradient rotated by 180
    degrees): the fewest axes first, each set tried only where it reverses elements (axes of
    size above 1; along the spatial and time axes where the argument has a format). A set
    that the first failing probe rejects costs a few passes over the argument and no call of
    the layer; one that every failing probe admits is proven as any correction is
    (`Evidence.holds`). After the sign: a gradient that is odd under the reversal, returned
    with the wrong sign, is the right one reversed too, and its sign is the simpler claim."""
    labels = evidence.problem.labels[index] or ""
    if len(labels) != gradient.ndim:
        labels = ""
    axes = [k for k, n in enumerate(gradient.shape) if n > 1 and (not labels or labels[k] in _FLIPPABLE)]
    if not axes or len(axes) > _MOST_FLIPPED:
        return None
    xp = namespace_of(gradient)
    for count in range(1, len(axes) + 1):
        for chosen in itertools.combinations(axes, count):
            if evidence.holds(index, _reversed(index, chosen, xp)):
                return Finding(Cause.FLIPPED, (evidence.name(index),), Flip(chosen, labels))
    return None


def _reversed(k: int, axes: tuple[int, ...], xp: Any) -> Corrected:
    """Argument k's gradient reversed along `axes` (a view: nothing copied)."""
    return lambda grads: xp.flip(grads[k], axis=axes)


def identity(evidence: Evidence, index: int, gradient: Any) -> Finding | None:
    """The gradient off by the loss weights of an output of its shape, dL/dY itself: left out
    (Y = X + f(X), whose backward returns f's gradient alone, the skip connection's forgotten),
    or added where the layer has no such path. Proven as any correction is (`Evidence.holds`),
    for the check's own dL/dY (`Evidence.unmasked`: the correction is the loss's, and a probe
    whose loss left kinks out is left out of it). After a constant factor: of Y = 2 X, a
    backward that returns dL/dY lacks dL/dY and is off by 1/2, which is the simpler claim."""
    weights = evidence.base.weights
    for k, w in enumerate(weights):
        if tuple(w.shape) != tuple(gradient.shape) or w.dtype.kind == "c" or gradient.dtype.kind == "c":
            continue
        output = "dL/dY" if len(weights) == 1 else f"dL/dY{k + 1}"
        for left_out in (True, False):
            candidate = gradient + w if left_out else gradient - w
            if evidence.holds(index, evidence.unmasked(candidate)):
                return Finding(Cause.IDENTITY, (evidence.name(index),), Identity(output, left_out))
            del candidate
    return None


def proposed_ratio(evidence: Evidence, index: int) -> float | None:
    """analytic / numeric: the median over the elements of a small argument, else the ratio
    the failing probes share."""
    table = evidence.elements(index)
    if table is None:
        return ratio_of(failing(evidence.verdicts[index]))
    gradient = evidence.base.gradients[index]
    assert gradient is not None  # a failed argument has a gradient
    ratios = []
    for element, probes in table:
        p = probes[0]
        if p.verdict in (Verdict.PASS, Verdict.FAIL) and abs(p.numeric) > 10 * p.fixed_tolerance:
            (analytic,) = fetch(gradient.real[element])
            ratios.append(float(analytic) / p.numeric)
    if not ratios:
        return None
    return float(np.median(ratios))


def _divided(index: int, ratio: float) -> Corrected:
    return lambda grads: grads[index] / ratio


def factor(evidence: Evidence, index: int, gradient: Any) -> Finding | None:
    ratio = proposed_ratio(evidence, index)
    if ratio is None or not math.isfinite(ratio) or ratio == 0:
        return None
    context = sizes(evidence.problem.values, evidence.problem.labels)
    # The factor a name gives (1/128, the batch size) is tried as it is: the ratio the probes
    # measured carries their error (1.7e-7 of it on a seed, more than a tolerance allows where
    # the gradient is large), and would fail a factor that holds exactly.
    proven = next((r for r in factors_to_try(ratio, context) if evidence.holds(index, _divided(index, r))), None)
    if proven is None:
        return None
    named = name_factor(proven, context)
    name = evidence.name(index)
    if abs(proven + 1) <= 1e-4:
        return Finding(Cause.WRONG_SIGN, (name,))
    if gradient.size == 1 and named.form in (FactorForm.DECIMAL, FactorForm.NEAR_ONE):
        # One element is off by some factor whatever is wrong with it: only a factor that a
        # size of the problem or a small fraction names says more than the mismatch (a
        # gradient of a scalar that leaves out half the sum is "off by 0.553296" for one loss
        # and by another number for the next).
        return None
    return Finding(Cause.FACTOR, (name,), named, complex_values=evidence.complex_values(index))


def wrong_axes(evidence: Evidence, index: int, gradient: Any) -> Finding | None:
    """A broadcast argument (a bias of shape 1x1xCx1) whose gradient sums a full-size
    contribution over the wrong axes: proven when the sum over the right axes is right
    and the sum over the others is exactly what backward returned."""
    value = evidence.problem.values[index]
    kept = [k for k, n in enumerate(value.shape) if n > 1]
    if not kept or len(kept) == value.ndim:
        return None
    for what, full in _contributions(evidence, value):
        axes_right = tuple(k for k in range(value.ndim) if k not in kept)
        if any(full.shape[k] != value.shape[k] for k in kept):
            continue
        corrected = full.sum(axis=axes_right, keepdims=True)
        if not evidence.holds(index, evidence.unmasked(corrected)):
            continue
        for chosen in itertools.permutations(range(value.ndim), len(kept)):
            if list(chosen) == kept or list(chosen) != sorted(chosen):
                continue
            if [full.shape[k] for k in chosen] != [value.shape[k] for k in kept]:
                continue
            summed = full.sum(axis=tuple(k for k in range(value.ndim) if k not in chosen)).reshape(value.shape)
            (off, size) = fetch(norm_sq(summed - gradient), norm_sq(summed))
            if math.sqrt(off) <= 1e3 * evidence.tol.eps * math.sqrt(size):
                labels = evidence.problem.labels[index] or ""
                mistake = AxesMistake(what, tuple(chosen), tuple(kept), labels)
                return Finding(Cause.WRONG_AXES, (evidence.name(index),), mistake)
    return None


def _contributions(evidence: Evidence, value: Any) -> list[tuple[str, Any]]:
    """Full-size tensors whose sum over the broadcast axes is a broadcast argument's gradient
    in the common layers: dL/dY (a bias), dL/dY * X (a scale)."""
    found = []
    weights = evidence.base.weights
    for k, w in enumerate(weights):
        if w.ndim != value.ndim:
            continue
        label = "dL/dY" if len(weights) == 1 else f"dL/dY{k + 1}"
        found.append((label, w))
        for name, x in zip(evidence.problem.names, evidence.problem.values):
            if x.shape == w.shape:
                found.append((f"{label} * {name}", w * x))
    return found


_LEFT_OUT = 1e-6  # backward's share of the dependence across observations, at most, to have left it out


def across_observations(evidence: Evidence, index: int, gradient: Any) -> Finding | None:
    """The dependence of the other observations' outputs on each observation's input left
    out of backward (a batch statistic whose gradient it treats as a constant, a permutation
    of the batch it does not undo): the first and the last observation's input, and one drawn
    between them, each moved alone, change the other observations' outputs, and for a loss on
    those alone backward gives nothing (a gradient that fails, twice for the first: the check's
    own rule, once for the others: a claim's); a backward that has the dependence, however
    wrongly scaled, or has it for the observation between, is no such finding.

    On a large batch this is shown among its first observations (`Evidence.screen`, where
    each costs a fraction of the whole batch's calls), then for the first and the last
    observation among the whole batch's (`_ends_left_out`: one backward, one failing probe
    each, a claim's), the first's numbers said. The first 8 run alone are not the whole batch's
    first 8: a backward that has the dependence past them (a loop over chunks that skips the
    first) has it for the last observation, and one that has it for every group of 8 but the
    last (statistics over groups of 8, a loop one short) has it for the first.

    Tried only where the argument and every output have an observation axis of the batch's
    size, and one call of the layer per observation shows that moving it changes another
    observation's outputs at all (a layer that computes each observation on its own does
    not: nothing more is spent on it)."""
    split = _observation_axes(evidence, index)
    if split is None:
        return None
    axis, batch, output_axes = split
    screen = evidence.screen()
    among = None if screen is None else _observation_axes(screen, index)
    if screen is None or among is None or among[1] < _AMONG:
        shown = _each_left_out(evidence, index, split)
        if shown is None:
            return None
        observations, first, within, others = shown[0], shown[1], None, None
    else:
        found = _each_left_out(screen, index, among)
        if found is None:
            return None
        # Shown there; the whole batch's first and last observations then, without the call
        # that asks whether moving each moves the others at all (a failing probe shows it).
        ends = _ends_left_out(evidence, index, axis, output_axes, batch)
        if ends is None:
            return None
        observations, (first, others), within = found[0], ends, among[1]
    relative = first.discrepancy / abs(first.numeric) if first.numeric else math.inf
    detail = AcrossObservations(observations, batch, first.analytic, first.numeric, relative, within, others)
    return Finding(Cause.ACROSS_OBSERVATIONS, (evidence.name(index),), detail)


# The fewest observations the claim is shown among on a sub-batch: the first, the last and one
# between them. On two, both are ends: a backward that leaves out the dependence of the batch's
# two ends alone leaves out all of theirs, and that of the observations between would be
# claimed unseen.
_AMONG = 3


def _each_left_out(
    evidence: Evidence, index: int, split: tuple[int, int, list[int]]
) -> tuple[tuple[int, ...], Probe] | None:
    """The observations shown left out (`_left_out`) and the first one's worst probe; None
    unless each of them is."""
    axis, batch, output_axes = split
    # The first, the last, and one drawn between them: "each observation's" is said of what a
    # backward that leaves out the two ends alone (an off-by-one loop) would fail.
    observations = [0, batch - 1]
    if batch > 2:
        observations.insert(1, int(evidence.rng("claim observation between").integers(1, batch - 1)))
    shown = []
    for k in observations:
        worst = _left_out(evidence, index, axis, output_axes, k, 2 if k == 0 else 1)
        if worst is None:
            return None
        shown.append(worst)
    return tuple(observations), shown[0]


def _left_out(
    evidence: Evidence, index: int, axis: int, output_axes: list[int], k: int, fails_needed: int
) -> Probe | None:
    """The worst probe that shows backward giving nothing of how observation k's input moves
    the other observations' outputs (None: it moves none of them, or backward has it)."""
    support = _observation(evidence, index, axis, k)
    purpose = f"observation {k} alone"
    moved = evidence.moved_alone(index, support, purpose)
    if moved is None or not any(
        _others_moved(y, y0, j, k) for y, y0, j in zip(moved, evidence.base.outputs, output_axes)
    ):
        return None
    others = _without(evidence, output_axes, (k,))
    return _nothing(evidence.with_loss(index, others, support, f"{purpose}, the others' outputs", fails_needed))


def _ends_left_out(
    evidence: Evidence, index: int, axis: int, output_axes: list[int], batch: int
) -> tuple[Probe, int] | None:
    """The worst probe that shows backward giving nothing of how the first observation's
    input moves the outputs of the observations but the first and the last, where the last's
    does too (one backward for the loss on those outputs), and how many observations' outputs
    its loss was on; None unless both do.

    An end whose move shows no error there may move only the other end's outputs (a layer
    that reverses the batch pairs the first observation with the last, a roll the last with
    the first): it is moved again for the loss on every observation's outputs but its own
    (a backward more, on this path alone)."""
    ends = (0, batch - 1)
    supports = [(_observation(evidence, index, axis, k), f"observation {k} alone, among all") for k in ends]
    verdicts = evidence.with_loss_on(index, _without(evidence, output_axes, ends), supports, 1)
    if verdicts is None:
        return None
    shown: list[tuple[Probe, int]] = []
    for k, verdict, (support, purpose) in zip(ends, verdicts, supports):
        others = batch - 2
        if verdict.status is not Status.FAILED:
            loss = _without(evidence, output_axes, (k,))
            again = evidence.with_loss(index, loss, support, f"{purpose}, the others' outputs", 1)
            if again is None:  # the budget spent, or the layer raised
                return None
            verdict, others = again, batch - 1
        probe = _nothing(verdict)
        if probe is None:
            return None
        shown.append((probe, others))
    return shown[0]


def _observation(evidence: Evidence, index: int, axis: int, k: int) -> Any:
    """The mask of observation k of argument `index` (its batch axis `axis`)."""
    value = evidence.problem.values[index]
    return axis_mask(tuple(value.shape), axis, k, k + 1, namespace_of(value))


def _without(evidence: Evidence, output_axes: list[int], observations: tuple[int, ...]) -> list[Any]:
    """The check's loss weights with the outputs of `observations` left out (each output's
    batch axis in `output_axes`): the loss on the others' outputs."""
    weights = []
    for w, j in zip(evidence.base.weights, output_axes):
        w = w.copy()
        for k in observations:
            w[_at(j, w.ndim, k)] = 0
        weights.append(w)
    return weights


def _nothing(verdict: ArgumentVerdict | None) -> Probe | None:
    """The worst failing probe of a verdict whose failing probes show backward giving
    nothing: |analytic| a millionth of the finite difference at most (a NaN is not nothing)."""
    if verdict is None or verdict.status is not Status.FAILED:
        return None
    if not all(abs(p.analytic) <= _LEFT_OUT * abs(p.numeric) for p in failing(verdict)):
        return None
    return worst_failing(verdict)


def _observation_axes(evidence: Evidence, index: int) -> tuple[int, int, list[int]] | None:
    """The argument's observation axis, the batch size and each output's observation axis;
    None unless all of them have one, of the same size (at least 2)."""
    problem = evidence.problem
    labels, value = problem.labels[index], problem.values[index]
    if not labels or len(labels) != value.ndim or "B" not in labels:
        return None
    axis = labels.index("B")
    batch = int(value.shape[axis])
    outputs = evidence.base.outputs
    if batch < 2 or len(problem.output_labels) != len(outputs):
        return None
    output_axes = []
    for y, fmt in zip(outputs, problem.output_labels):
        if not fmt or len(fmt) != y.ndim or "B" not in fmt or y.shape[fmt.index("B")] != batch:
            return None
        output_axes.append(fmt.index("B"))
    return axis, batch, output_axes


def _at(axis: int, ndim: int, k: int) -> tuple[Any, ...]:
    """The index of slice k along `axis`."""
    return tuple(k if i == axis else slice(None) for i in range(ndim))


def _others_moved(y: Any, y0: Any, axis: int, k: int) -> bool:
    """Whether an output of any observation but k differs from the base point's, at all."""
    if y.shape != y0.shape or y.shape[axis] < 2:
        return False
    xp = namespace_of(y, y0)
    differs = xp.any(y != y0, axis=tuple(i for i in range(y.ndim) if i != axis))
    count, own = fetch(xp.count_nonzero(differs), differs[k])
    return int(count) - int(bool(own)) > 0


# In the order they are tried: the first that holds is the argument's cause.
CLAIMS: tuple[Callable[[Evidence, int, Any], Finding | None], ...] = (
    linearity,
    misplaced,
    conjugation,
    transposed,
    factor,
    wrong_axes,
    flipped,
    identity,
    across_observations,
)


def _slot(k: int) -> Corrected:
    """The gradient backward returned in argument k's place."""
    return lambda grads: grads[k]


def _permuted(k: int, perm: tuple[int, ...]) -> Corrected:
    """Argument k's gradient with its axes permuted."""
    return lambda grads: grads[k].transpose(perm)
