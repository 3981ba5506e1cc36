"""The one place where the findings of a failed gradient check become sentences.

The diagnosis returns typed findings (`numerics.gradients.findings`); every report renders
them through these functions, and every number in a sentence is the finding's own, so the
number in a headline is the number in its detail.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from layercheck.numerics.blocks import SMALL_SCALE
from layercheck.numerics.gradients.findings import (
    AcrossObservations,
    AxesMistake,
    Cause,
    Conjugation,
    Diagnosis,
    Factor,
    FactorForm,
    Finding,
    Flip,
    Identity,
    Misplaced,
    NonFinite,
    NonFiniteMove,
    Nonlinearity,
    Numbers,
    Permutation,
    Region,
    RegionKind,
    Size,
    SubBatchSize,
    Worst,
    resolution_text,
)
from layercheck.status import Status

__all__ = [
    "argument_lines",
    "cause_phrase",
    "differentiated",
    "factor_text",
    "headline",
    "listed",
    "non_finite_move_text",
    "region_text",
    "sub_batch_line",
    "where_lines",
]

CONVENTION = "layercheck's convention is dL/da + i*dL/db"
_COMPLEX_SUSPECT = "complex values: check each conj against the convention dL/da + i*dL/db"
_SHOWN_ELEMENTS = 8
_SHOWN_NON_FINITE = 5
_PLURAL = {"is": "are", "has": "have", "does": "do", "leaves": "leave"}


def listed(names: Sequence[str]) -> str:
    """ "X", "X and w", "X, w and b"."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _subject(arguments: Sequence[str], what: str = "gradient") -> str:
    return f"the {what} of {arguments[0]}" if len(arguments) == 1 else f"the {what}s of {listed(arguments)}"


def _verb(verb: str, arguments: Sequence[str]) -> str:
    return verb if len(arguments) == 1 else _PLURAL.get(verb, verb)


def factor_text(factor: Factor) -> str:
    """ "2", "1/128 (1/batch size)", "3/2", "1 + 0.004 (a relative error of 0.004)"."""
    if factor.form is FactorForm.SIZE and factor.size is not None:
        return f"{factor.size.n} (the {' or the '.join(_size_words(factor))})"
    if factor.form is FactorForm.INVERSE_SIZE and factor.size is not None:
        return f"1/{factor.size.n} ({' or '.join(f'1/{word}' for word in _size_words(factor))})"
    if factor.form is FactorForm.FRACTION:
        if factor.denominator == 1:
            return str(factor.numerator)
        return f"{factor.numerator}/{factor.denominator}"
    if factor.form is FactorForm.NEAR_ONE:
        off = abs(factor.ratio - 1)
        return f"1 {'+' if factor.ratio > 1 else '-'} {off:.3g} (a relative error of {off:.2g})"
    return f"{factor.ratio:.6g}"


def _size_words(factor: Factor) -> list[str]:
    """The sizes the factor equals, in words: ["batch size"]; ["size of spatial axis 1 or 2"]
    or ["batch size", "number of channels"] where sizes of the problem coincide (which one the
    bug has, the factor cannot tell)."""
    assert factor.size is not None
    sizes = (factor.size, *factor.also)
    axes = " or ".join(str(s.axis) for s in sizes if s.size is Size.SPATIAL_AXIS)
    words = []
    for named in sizes:
        if named.size is not Size.SPATIAL_AXIS:
            words.append(str(named.size.value))
        elif axes:  # every spatial axis of the size, where the first is
            words.append(f"size of spatial axis {axes}")
            axes = ""
    return words


def _factor_hint(finding: Finding, factor: Factor) -> str:
    # Only where the batch size alone is the factor's size: a hint about observations is a
    # guess among several sizes otherwise.
    batch = factor.size is not None and factor.size.size is Size.BATCH and not factor.also
    if batch and factor.form is FactorForm.INVERSE_SIZE:
        return ": a mean over the observations instead of a sum?"
    if batch and factor.form is FactorForm.SIZE:
        return ": a sum over the observations where a mean belongs?"
    if finding.complex_values and math.isclose(factor.ratio, 0.5, rel_tol=1e-4):
        return f": the Wirtinger derivative dL/dconj(z) = (dL/da + i*dL/db)/2? {CONVENTION}"
    if finding.complex_values and math.isclose(factor.ratio, 2.0, rel_tol=1e-4):
        return f": twice the gradient, as if dL/dY were taken as a Wirtinger derivative and doubled? {CONVENTION}"
    if batch and factor.form is FactorForm.FRACTION:  # 2 or 1/2 with a batch of 2
        what = "a mean over the observations instead of a sum" if factor.ratio < 1 else "a sum where a mean belongs"
        return f" (with a batch of 2, {what}?)"
    return ""


# -- regions -------------------------------------------------------------------------------


# A border, by the number of spatial axes it runs along.
_BORDERS = {
    1: "the ends of the spatial axis",
    2: "the border of the spatial plane",
    3: "the border of the spatial volume",
}


def _place(region: Region) -> str:
    """Where, as a phrase after a verb: "in channel 2 of X (right in the 3 others checked)"."""
    if region.kind is RegionKind.BORDER:
        edges = f": wrong in {', '.join(region.wrong_edges)}" if region.wrong_edges else ""
        return f"at {_BORDERS.get(region.spatial_axes, 'the border of the spatial axes')} ({region.border}{edges})"
    if region.kind is RegionKind.SIGN:
        return f"where {region.argument} {'<' if region.below else '>'} 0"
    if region.kind is RegionKind.VALUE_RANGE:
        return _value_span(region)
    if region.kind is RegionKind.ELEMENTS:
        # Of those measured, which may be fewer than the argument holds (a learnable some of
        # whose elements no output uses), said so.
        total = len(region.wrong) + region.right
        rest = ""
        if region.resolution:
            others = "the other" if region.right == 1 else "the others"
            coarse = f"only to a reduced resolution of {resolution_text(region.resolution)}"
            rest = (
                f"; right in {others} ({_elements(region.reduced)} {coarse})"
                if region.reduced
                else f"; right in {others}, {coarse}"
            )
        return f"at {len(region.wrong)} of the {total} elements of {region.argument} measured: {_shown(region.wrong)}{rest}"
    others = f"{region.right} other{'s' if region.right > 1 else ''}"
    undecided = ""
    if region.undecided:
        # What they are (small_scale_blocks picked them), not why no probe decided them.
        undecided = (
            f"; undecided in {_blocks(region, region.undecided)}, whose gradient is below {SMALL_SCALE:g} "
            f"of the largest {region.unit}'s"
        )
    return f"in {_blocks(region, region.wrong)} of {region.argument} (right in the {others} checked{_reduced(region)}{undecided})"


def _shown(labels: tuple[str, ...]) -> str:
    """Elements' indices, the first few: "(0, 1), (2, 3) ..."."""
    return ", ".join(labels[:_SHOWN_ELEMENTS]) + (" ..." if len(labels) > _SHOWN_ELEMENTS else "")


def _elements(labels: tuple[str, ...]) -> str:
    return f"element{'s' if len(labels) > 1 else ''} {_shown(labels)}"


def _reduced(region: Region) -> str:
    """How finely the blocks said right were shown right, where some only were to a reduced
    resolution (a steep layer's curvature): "; in channel 4 only to a reduced resolution of
    5.7e-06", as a passed check says it of an argument ("" where every one was at the full)."""
    if not region.resolution:
        return ""
    which = f"; in {_blocks(region, region.reduced)}" if region.reduced else ","
    return f"{which} only to a reduced resolution of {resolution_text(region.resolution)}"


def _blocks(region: Region, labels: tuple[str, ...]) -> str:
    """ "channel 2", "channels 0-3, 7": the unit and the labels."""
    many = len(labels) > 1 or "-" in labels[0]  # "0-3" is a range of several
    return f"{region.units if many else region.unit} {', '.join(labels)}"


def _value_span(region: Region) -> str:
    name = region.argument
    if not region.contiguous:
        return f"for some ranges of {name} between {region.low:.4g} and {region.high:.4g}"
    if math.isinf(region.high):
        return f"where {name} >= {region.low:.4g}"
    if math.isinf(region.low):
        return f"where {name} <= {region.high:.4g}"
    return f"where {name} is in [{region.low:.4g}, {region.high:.4g}]"


def _rest(region: Region) -> str:
    """What is right around the region, after a semicolon ("" where the place says it)."""
    if region.kind is RegionKind.BORDER:
        return f"; right in its interior{_reduced(region)}"
    if region.kind is RegionKind.SIGN:
        return f"; right where {region.argument} {'>' if region.below else '<'} 0{_reduced(region)}"
    return ""


def region_text(region: Region) -> str:
    """The region as a claim on its own: "wrong only in channel 2 of X (right in the ...)"."""
    if region.kind is RegionKind.ELEMENTS:
        return f"wrong {_place(region)}"
    if region.kind is RegionKind.VALUE_RANGE:
        # The share is of the elements the range holds, not of those wrong in it (two swapped
        # elements are found in a range that holds a quarter of them).
        holds = "a range that holds" if region.contiguous else "ranges that hold"
        return (
            f"wrong {'' if region.resolution else 'only '}{_place(region)} ({holds} about "
            f"{100 * region.share:.2g}% of the elements), "
            f"right elsewhere{_reduced(region)}"
        )
    # Not "only" where some of the rest is undecided, or right only to a reduced resolution:
    # it may be wrong there too.
    return f"wrong {'' if region.undecided or region.resolution else 'only '}{_place(region)}{_rest(region)}"


# -- claims --------------------------------------------------------------------------------


def _permutation_text(permutation: Permutation) -> tuple[str, str]:
    """(verb, the rest): a matrix is transposed; a larger array has its axes permuted."""
    if len(permutation.axes) == 2:
        return "is", "transposed"
    return "has", f"its axes permuted (transpose {permutation.axes} fits)"


def _flip_text(flip: Flip) -> str:
    """ "axis 2 (T)", "axes 0 (S) and 1 (S)", "axes 0 and 1" (no format)."""
    axes = [_axis(k, flip.labels) for k in flip.axes]
    return f"{'axis' if len(axes) == 1 else 'axes'} {listed(axes)}"


def _axis(k: int, labels: str) -> str:
    """ "2 (T)", or "2" where the argument has no format."""
    return f"{k} ({labels[k]})" if k < len(labels) else str(k)


def _axes(ks: Sequence[int], labels: str) -> str:
    return ", ".join(_axis(k, labels) for k in ks)


def _conjugation_text(form: Conjugation) -> str:
    if form is Conjugation.CONJUGATE:
        return f"the conjugate of the correct one (conj missing: dL/da - i*dL/db is JAX's convention, {CONVENTION})"
    if form is Conjugation.HALF_CONJUGATE:
        return "half the conjugate of the correct one: the Wirtinger derivative dL/dz instead of dL/da + i*dL/db (conj missing)"
    return "missing a conjugate (conj missing): a derivative multiplies dL/dY where its conjugate belongs"


def _error(numbers: Numbers) -> str:
    return f"relative error {numbers.rel_error:.3g} along a random direction"


def headline(finding: Finding) -> str:
    """The finding as one sentence, for the check's message."""
    args = finding.arguments
    subject, detail, region = _subject(args), finding.detail, finding.region
    cause = finding.cause
    if cause is Cause.NON_FINITE and isinstance(detail, NonFinite):
        return (
            f"{subject} {_verb('has', args)} NaN or infinite values at {detail.count} of {detail.total} elements "
            f"({_non_finite_elements(detail)}), where the outputs and their finite differences are finite"
        )
    if cause is Cause.ZERO:
        where = "everywhere" if region is None else f"{_place(region)}{_rest(region)}"
        return f"{subject} {_verb('is', args)} zero {where}"
    if cause is Cause.IGNORES_DLDY and isinstance(detail, Nonlinearity):
        return (
            f"backward ignores dL/dY: {subject} {_verb('does', args)} not change when dL/dY is multiplied by "
            f"{detail.scale:g}"
        )
    if cause is Cause.NOT_LINEAR_IN_DLDY and isinstance(detail, Nonlinearity):
        return (
            f"{subject} {_verb('is', args)} not linear in dL/dY: multiplying dL/dY by {detail.scale:g} does not "
            f"multiply it by {detail.scale:g} (it is off by a relative {detail.relative:.3g})"
        )
    if cause is Cause.SWAPPED:
        return f"the gradients of {listed(args)} are returned in each other's place"
    if cause is Cause.MISPLACED and isinstance(detail, Misplaced):
        return f"the gradient returned for {args[0]} is the gradient of {detail.other}"
    if cause is Cause.CONJUGATE and isinstance(detail, Conjugation):
        return f"{subject} {_verb('is', args)} {_conjugation_text(detail)}"
    if cause is Cause.TRANSPOSED and isinstance(detail, Permutation):
        verb, rest = _permutation_text(detail)
        return f"{subject} {_verb(verb, args)} {rest}"
    if cause is Cause.FLIPPED and isinstance(detail, Flip):
        return f"{subject} {_verb('is', args)} flipped: the right one reversed along {_flip_text(detail)}"
    if cause is Cause.IDENTITY and isinstance(detail, Identity):
        if detail.left_out:
            return (
                f"{subject} {_verb('leaves', args)} out a term equal to {detail.output}: the gradient of an identity "
                "path (Y = X + f(X), a skip connection?)"
            )
        return (
            f"{subject} {_verb('has', args)} a term equal to {detail.output} too many: the gradient of an identity "
            "path the layer does not have?"
        )
    if cause is Cause.WRONG_AXES and isinstance(detail, AxesMistake):
        return (
            f"{subject} {_verb('is', args)} summed over the wrong axis: it equals {detail.contribution} summed over "
            f"every axis but {_axes(detail.summed_over_all_but, detail.labels)}, where every axis but "
            f"{_axes(detail.should_keep, detail.labels)} is right"
        )
    if cause is Cause.ACROSS_OBSERVATIONS and isinstance(detail, AcrossObservations):
        observations = listed([str(k) for k in detail.observations])
        lead = (
            f"{subject} {_verb('leaves', args)} out how each observation's {listed(args)} moves the other "
            f"observations' outputs (shown for observations {observations}"
        )
        if detail.within is not None:
            others = detail.batch - 2 if detail.others is None else detail.others
            return (
                f"{lead} among the first {detail.within}, each moved alone, then for observations 0 and "
                f"{detail.batch - 1} among all {detail.batch}: moving observation 0, the loss on the "
                f"{others} other observations' outputs changes at a rate of {detail.numeric:.3g} along a "
                f"random direction, where backward's gradient gives {detail.analytic:.3g})"
            )
        return (
            f"{lead} of {detail.batch}, each moved alone): the loss on the others' outputs changes at a rate of "
            f"{detail.numeric:.3g} along a random direction, where backward's gradient gives {detail.analytic:.3g}"
        )
    if cause is Cause.WRONG_SIGN:
        where = "" if region is None else f" {_place(region)}{_rest(region)}"
        return f"{subject} {_verb('has', args)} the wrong sign{where}"
    if cause is Cause.FACTOR and isinstance(detail, Factor):
        if region is not None:
            return (
                f"{subject} {_verb('is', args)} off by a factor {factor_text(detail)} {_place(region)}{_rest(region)}"
            )
        return (
            f"{subject} {_verb('is', args)} off by a constant factor {factor_text(detail)}"
            f"{_factor_hint(finding, detail)}"
        )
    if cause is Cause.LOCALIZED and region is not None:
        return f"{subject} {_verb('is', args)} {region_text(region)}"
    numbers = finding.numbers
    if region is not None and region.kind is RegionKind.ELEMENTS and numbers is not None and numbers.index:
        return (
            f"{subject} {_verb('is', args)} wrong at every element measured (largest error "
            f"{numbers.abs_error:.3g} at {args[0]}{numbers.index}, relative {numbers.rel_error:.3g})"
        )
    text = f"{subject} {_verb('is', args)} wrong"
    if numbers is not None:
        text += f" ({_error(numbers)})"
    if finding.complex_values:
        text += f"; {_COMPLEX_SUSPECT}"
    return text


def cause_phrase(finding: Finding) -> str | None:
    """The proven cause in a few words, for a "likely cause:" line (None: none proven)."""
    detail, region = finding.detail, finding.region
    cause = finding.cause
    if cause is Cause.NON_FINITE:
        return "NaN or infinite gradient"
    if cause is Cause.ZERO:
        return "zero or missing gradient" + ("" if region is None else f" {_place(region)}")
    if cause is Cause.IGNORES_DLDY:
        return "backward ignores dL/dY"
    if cause is Cause.NOT_LINEAR_IN_DLDY:
        return "backward not linear in dL/dY"
    if cause is Cause.SWAPPED:
        return f"gradient order: {listed(finding.arguments)} swapped"
    if cause is Cause.MISPLACED and isinstance(detail, Misplaced):
        return f"gradient of {detail.other} in the place of {finding.arguments[0]}"
    if cause is Cause.CONJUGATE:
        return "conj missing"
    if cause is Cause.TRANSPOSED and isinstance(detail, Permutation):
        return _permutation_text(detail)[1]
    if cause is Cause.FLIPPED and isinstance(detail, Flip):
        return f"reversed along {_flip_text(detail)}"
    if cause is Cause.IDENTITY and isinstance(detail, Identity):
        return f"{detail.output} {'left out' if detail.left_out else 'added once too often'} (an identity path)"
    if cause is Cause.WRONG_AXES:
        return "summed over the wrong axis"
    if cause is Cause.ACROSS_OBSERVATIONS:
        return "backward leaves out the dependence across observations"
    if cause is Cause.WRONG_SIGN:
        return "wrong sign" + ("" if region is None else f" {_place(region)}")
    if cause is Cause.FACTOR and isinstance(detail, Factor):
        if region is not None:
            return f"off by a factor {factor_text(detail)} {_place(region)}"
        return f"off by a constant factor {factor_text(detail)}"
    # An unexplained error of complex values gets advice in the headline (`_COMPLEX_SUSPECT`),
    # not a "likely cause": nothing showed that a conj is what is wrong.
    return None


def where_lines(finding: Finding, regions: Sequence[Region]) -> list[str]:
    """Where the gradient is wrong, each proven region once."""
    if isinstance(finding.detail, NonFinite):
        detail = finding.detail
        return [f"NaN or infinite at {detail.count} of {detail.total} elements: {_non_finite_elements(detail)}"]
    return [region_text(r) for r in regions]


def _non_finite_elements(detail: NonFinite) -> str:
    shown = ", ".join(str(e) for e in detail.elements[:_SHOWN_NON_FINITE])
    return shown + (" ..." if detail.count > _SHOWN_NON_FINITE else "")


def non_finite_move_text(move: NonFiniteMove, arguments: Sequence[str], outputs: Sequence[str]) -> str:
    """ "moving X by a step of 1e-07 along a random direction made Y NaN or infinite at 12 of 24
    elements, first at (0, 3), where they were finite at the drawn inputs: finite differences
    cannot be taken there"."""
    moved = listed([_named(arguments, i) for i in move.arguments])
    if move.element is not None:
        part = "the imaginary part of " if move.imaginary else ""
        what = f"{part}{moved}{move.element}"
        how = ""
    else:
        what, how = moved, " along a random direction"
    went = ", ".join(
        f"{_named(outputs, o.output)} NaN or infinite at {o.count} of {o.total} elements, first at {o.first}"
        for o in move.outputs
    )
    return (
        f"moving {what} by a step of {move.step:.3g}{how} made {went}, where the outputs were finite at "
        "the drawn inputs: finite differences cannot be taken there"
    )


def _named(names: Sequence[str], index: int) -> str:
    return names[index] if 0 <= index < len(names) else f"output {index + 1}"


def sub_batch_line(size: SubBatchSize, located: bool) -> str:
    """Where the blocks and elements of a diagnosis were measured, when not on the whole batch."""
    if located:
        return (
            f"localized on {size.words}: the blocks and elements shown were measured there, "
            "the finding then proven on the whole batch"
        )
    return f"the elements shown were measured on {size.words} (nothing narrower than the argument was found there)"


# -- the explanation -------------------------------------------------------------------------


def passed(
    evaluated: str,
    checked: Sequence[tuple[str, float | None]],
    worst: float,
    masked: Sequence[int],
    on_gpu: bool,
    fallback: str | None,
) -> str:
    """A passed check's message: the gradients that agree (`checked`: each argument, with the
    reduced resolution it agreed to where that is all it did), the `worst` relative difference,
    the outputs left out at kinks (`masked`: by each probe that left some out; the most one
    did is said), and what the check fell back to."""
    message = (
        f"{len(checked)} gradient(s) of {evaluated} agree with finite differences "
        f"(worst relative difference {worst:.1g})"
    )
    if on_gpu:
        message += " on the GPU"
    for argument, resolution in checked:
        if resolution is not None:
            message += f"; {argument} only to a reduced resolution of {resolution_text(resolution)}"
    if masked:
        most = max(masked)
        some = "up to " if len(set(masked)) > 1 else ""
        message += f"; {some}{most} output(s) that bent sharply within the step left out"
    if fallback:
        message += f"; {fallback}"
    return message


def differentiated(evaluated: str, fallback: str | None) -> str:
    """The explanation's first line: the pass differentiated, and what the check fell back to."""
    return f"differentiated: {evaluated}" + (f"; {fallback}" if fallback else "")


def argument_lines(
    argument: str, kind: str, status: Status, worst: Worst | None, reason: str, diagnosis: Diagnosis | None
) -> list[str]:
    """An argument that did not pass: its status and worst numbers, then, where it failed, the
    cause, where, on which observations, the budget the diagnosis stopped after, and the first
    elements measured wrong."""
    line = f"{argument} ({kind}): {status.value}"
    if worst is not None:
        line += (
            f"; along a random direction the analytic derivative is off by {worst.abs_error:.3g} "
            f"where {worst.tolerance:.3g} is allowed (relative error {worst.rel_error:.3g})"
        )
    if reason:
        line += f"; {reason}"
    lines = [line]
    if diagnosis is None:
        return lines
    cause = cause_phrase(diagnosis.finding)
    lines += [f"  likely cause: {cause}"] if cause else []
    lines += [f"  where: {w}" for w in where_lines(diagnosis.finding, diagnosis.regions)]
    if diagnosis.sub_batch is not None:
        lines.append(f"  {sub_batch_line(diagnosis.sub_batch, diagnosis.finding.region is not None)}")
    budget = _budget_words(diagnosis)
    if budget is not None:
        lines.append(f"  localization stopped after its budget of {budget}: what is said above was proven before it")
    for e in [e for e in diagnosis.examples if e.wrong][:3]:
        lines.append(
            f"  at {argument}{e.index}: analytic {e.analytic:.6g}, numeric {e.numeric:.6g} "
            f"(abs error {e.abs_error:.3g}, rel error {e.rel_error:.3g})"
        )
    return lines


def _budget_words(diagnosis: Diagnosis) -> str | None:
    """The budget a diagnosis stopped after, in words; None where it ran to the end."""
    if diagnosis.stopped_after_calls is not None:
        words = f"{diagnosis.stopped_after_calls} calls of the layer"
        if diagnosis.calls_on_part:
            n = diagnosis.calls_on_part
            parts = "a call on part of the batch" if n == 1 else f"{n} calls on part of the batch, each"
            words += f" ({parts} counted for its share of one on the whole batch)"
        return words
    if diagnosis.stopped_after_s is not None:
        return f"{diagnosis.stopped_after_s:.3g} s, its share of the timeout"
    return None
