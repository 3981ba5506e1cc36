"""The findings of a failed gradient check are data, grouped over the arguments, and rendered
by one message builder whose every number is the finding's own (issue 26, section 1)."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from conftest import CORPUS, GRADIENTS, load_layer

import layercheck
from layercheck.findings import gradient_wording as wording
from layercheck.findings.gradient_wording import region_text
from layercheck.numerics.gradients.claims import factors_to_try, name_factor, sizes
from layercheck.numerics.gradients.diagnosis import group
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
    MalformedFinding,
    Misplaced,
    NamedSize,
    NonFinite,
    Nonlinearity,
    Numbers,
    Permutation,
    ProbeKind,
    Region,
    RegionKind,
    Size,
    resolution_text,
)
from layercheck.results import CheckResult, MalformedReport, Origin, plain


def _numbers(rel: float) -> Numbers:
    return Numbers(1.0, 1.0 + rel, rel, rel, 1e-8, 1e-6, ProbeKind.DIRECTION)


def test_a_claim_about_several_arguments_is_one_finding_and_one_sentence():
    ignores = [Finding(Cause.IGNORES_DLDY, (name,), Nonlinearity(-2.0, 1.0)) for name in ("X", "w", "b")]
    (found,) = group(ignores)
    assert found.arguments == ("X", "w", "b")
    text = wording.headline(found)
    assert text == ("backward ignores dL/dY: the gradients of X, w and b do not change when dL/dY is multiplied by -2")


def test_a_swap_seen_from_both_arguments_is_one_finding():
    (found,) = group([Finding(Cause.SWAPPED, ("a", "b")), Finding(Cause.SWAPPED, ("b", "a"))])
    assert found.arguments == ("a", "b")
    assert wording.headline(found) == "the gradients of a and b are returned in each other's place"


def test_claims_that_differ_in_a_number_or_a_region_stay_apart():
    unexplained = [Finding(Cause.UNEXPLAINED, (n,), numbers=_numbers(r)) for n, r in (("X", 0.1), ("w", 0.2))]
    assert len(group(unexplained)) == 2
    half = name_factor(0.5, ())
    channel = Region(RegionKind.BLOCKS, "X", "channel", "channels", ("2",), 3, 0.25)
    regional = [Finding(Cause.FACTOR, ("X",), half, region=channel), Finding(Cause.FACTOR, ("w",), half)]
    assert len(group(regional)) == 2


@pytest.mark.parametrize(
    "ratio, context, form, text",
    [
        (2.0, (), FactorForm.FRACTION, "2"),
        (1.5, (), FactorForm.FRACTION, "3/2"),
        (-0.25, (), FactorForm.FRACTION, "-1/4"),
        (1 / 128, (NamedSize(Size.BATCH, 128),), FactorForm.INVERSE_SIZE, "1/128 (1/batch size)"),
        (5.0, (NamedSize(Size.SPATIAL_AXIS, 5, 2),), FactorForm.SIZE, "5 (the size of spatial axis 2)"),
        (2.0, (NamedSize(Size.BATCH, 2),), FactorForm.FRACTION, "2"),  # a size of 2 names nothing 2 does not
        (0.5, (NamedSize(Size.CHANNELS, 2),), FactorForm.FRACTION, "1/2"),
        (1.004, (), FactorForm.NEAR_ONE, "1 + 0.004 (a relative error of 0.004)"),
        (math.pi, (), FactorForm.DECIMAL, "3.14159"),
    ],
)
def test_a_factor_is_named_from_its_value_and_the_sizes_of_the_problem(ratio, context, form, text):
    factor = name_factor(ratio, context)
    assert factor.form is form and factor.ratio == ratio
    assert wording.factor_text(factor) == text


@pytest.mark.parametrize(
    "layout, ratio, text",
    [
        ("24,24,20,128:SSCB", 24.0, "24 (the size of spatial axis 1 or 2)"),
        ("4,4,16,16:SSCB", 1 / 16, "1/16 (1/batch size or 1/number of channels or 1/number of spatial positions)"),
        ("6,5,4,3:SSCB", 5.0, "5 (the size of spatial axis 2)"),
        ("2,2:CB", 0.5, "1/2"),  # a batch of 2 beside 2 channels: no hint about the batch either
    ],
)
def test_a_factor_equal_to_several_sizes_names_each_never_one_of_them(layout, ratio, text):
    """A hunt for false causes: the project's own global average pooling that divides by H
    alone (a factor W) read "off by a constant factor 24 (the size of spatial axis 1)" at the
    README's layout, where both spatial axes are 24. Which size a factor is, it cannot tell
    where sizes coincide: each is named, and no hint about the observations is guessed."""
    import numpy as np

    shape = layercheck.parse_layout(layout)
    factor = name_factor(ratio, sizes([np.zeros(shape.size)], [shape.format]))
    assert wording.factor_text(factor) == text
    assert "observations" not in wording.headline(Finding(Cause.FACTOR, ("X",), factor))
    alone = name_factor(1 / 16, sizes([np.zeros((4, 5, 3, 16))], ["SSCB"]))  # the batch size alone: hinted
    assert wording.headline(Finding(Cause.FACTOR, ("X",), alone)).endswith(
        "a mean over the observations instead of a sum?"
    )


def test_sizes_name_the_axes_of_the_first_formatted_argument():
    import numpy as np

    found = sizes([np.zeros((4, 5, 3, 8))], ["SSCB"])
    assert NamedSize(Size.BATCH, 8) in found and NamedSize(Size.CHANNELS, 3) in found
    assert NamedSize(Size.SPATIAL_AXIS, 5, 2) in found and NamedSize(Size.SPATIAL, 20) in found


def test_a_cause_line_is_a_phrase_without_a_dangling_verb():
    factor = Factor(1.5, FactorForm.FRACTION, 3, 2)
    channel = Region(RegionKind.BLOCKS, "X", "channel", "channels", ("2",), 3, 0.25)
    finding = Finding(Cause.FACTOR, ("X",), factor, region=channel)
    assert wording.cause_phrase(finding) == "off by a factor 3/2 in channel 2 of X (right in the 3 others checked)"
    assert wording.headline(finding).startswith("the gradient of X is off by a factor 3/2 in channel 2 of X")
    assert wording.cause_phrase(Finding(Cause.UNEXPLAINED, ("X",), numbers=_numbers(0.1))) is None


def test_the_number_of_an_unexplained_finding_is_its_probe_s():
    finding = Finding(Cause.UNEXPLAINED, ("X",), numbers=_numbers(0.0251))
    assert wording.headline(finding) == "the gradient of X is wrong (relative error 0.0251 along a random direction)"


def test_a_backward_that_ignores_dldy_for_every_argument_is_told_once():
    obj = load_layer(CORPUS / "scale_bias_ignores_dldy.py")
    result = layercheck.check_layer(obj, obj.example_layout, checks=[GRADIENTS]).result(GRADIENTS)
    assert result.status == "failed"
    assert result.message.count("ignores dL/dY") == 1, result.message
    (finding,) = result.details["findings"]
    assert finding["cause"] == "ignores_dldy" and sorted(finding["arguments"]) == ["X", "b", "w"]
    for argument in ("X", "w", "b"):
        assert argument in result.message


def test_the_json_findings_are_data_without_prose():
    obj = load_layer(CORPUS / "grad_one_channel.py")
    result = layercheck.check_layer(obj, obj.example_layout, checks=[GRADIENTS]).result(GRADIENTS)
    (finding,) = result.details["findings"]
    region = finding["region"]
    assert region["kind"] == "blocks" and region["unit"] == "channel" and region["wrong"] == ["2"]
    assert region["right"] >= 1 and 0 < region["share"] < 1
    # What the headline says is rendered from these fields, not stored beside them.
    assert "channel 2 of X" in result.message


@pytest.mark.parametrize("seed", range(3, 9))
def test_a_learnable_rounded_to_float32_is_found_whatever_its_values(seed):
    """A per-channel learnable of 4 values rounded to float32 inside predict: at some values
    (seed 4) they round symmetrically about themselves, the second differences cancel, and the
    gradient check once 'proved' the staircase's slope bias as a constant factor 1.10123.
    Their staircase shows in first differences at two steps instead."""
    import test_verdicts

    (expectation,) = [e for e in test_verdicts.EXPECTATIONS if e.id == "float32_learnables"]
    obj = test_verdicts._fresh_load(expectation.path)
    report = layercheck.check_layer(obj, obj.example_layout, seed=seed)
    dtype = report.result("predict_is_consistent_in_type")
    assert dtype.status == "failed" and "float32" in dtype.message, dtype.message
    for check in report.checks:
        assert "constant factor" not in check.message, (check.name, check.message)


@pytest.mark.parametrize(
    ("contiguous", "said"),
    [(True, "(a range that holds about 25% of the elements)"), (False, "(ranges that hold about 25% of the elements)")],
)
def test_a_value_range_says_the_share_of_elements_it_holds_not_that_they_are_wrong(contiguous, said):
    """Two swapped elements are found in a range of X that holds a quarter of them: "(about
    25% of the elements)" read as a quarter of X wrong."""
    from layercheck.numerics.gradients.findings import Region, RegionKind

    region = Region(
        RegionKind.VALUE_RANGE, "X", "value range", "value ranges", ("1",), 3, 0.25,
        low=0.0386, high=0.607, contiguous=contiguous,
    )  # fmt: skip
    text = wording.region_text(region)
    assert said in text and text.startswith("wrong only ") and text.endswith(", right elsewhere")


def _every_kind_of_finding() -> list[Finding]:
    """A finding of every cause, with every kind of detail and region, and numbers that JSON
    writes in its own ways (complex, infinite, NaN)."""
    batch = NamedSize(Size.BATCH, 128)
    axis = NamedSize(Size.SPATIAL_AXIS, 24, axis=1)
    channel = Region(RegionKind.BLOCKS, "X", "channel", "channels", ("2", "5"), 18, 0.1)
    border = Region(RegionKind.BORDER, "X", "row", "rows", ("row 0",), 22, 0.08, 1, "rows 0 and 23", ("row 0",), 2)
    sign = Region(RegionKind.SIGN, "X", "sign", "signs", ("X < 0",), 1, 0.5, below=False)
    above = Region(RegionKind.VALUE_RANGE, "X", "range", "ranges", ("x >= 2",), 7, 0.02, low=2.0)
    between = Region(
        RegionKind.VALUE_RANGE, "X", "range", "ranges", ("a", "b"), 6, 0.3, low=-1, high=1, contiguous=False
    )
    elements = Region(RegionKind.ELEMENTS, "w", "element", "elements", ("(0, 1)",), 9, 0.1)
    beside_saturated = Region(
        RegionKind.BLOCKS, "t", "channel", "channels", ("5",), 296, 0.003, undecided=("40", "106-107", "200")
    )
    steep = Region(RegionKind.BLOCKS, "X", "channel", "channels", ("2",), 5, 0.17, resolution=0.002, reduced=("3-4",))
    complex_numbers = Numbers(1 + 2j, 3 - 4j, 2.5, 0.7, 1e-9, 1e-6, ProbeKind.ELEMENT, (0, 1))
    infinite = Numbers(math.inf, 1.0, math.inf, math.inf, 1e-9, 1e-6, ProbeKind.DIRECTION)
    return [
        Finding(Cause.NON_FINITE, ("X",), NonFinite(3, 120, ((0, 1), (2, 3), (4, 5)))),
        Finding(Cause.ZERO, ("w", "b")),
        Finding(Cause.ZERO, ("X",), region=channel),
        Finding(Cause.ZERO, ("X",), region=border),
        Finding(Cause.IGNORES_DLDY, ("X",), Nonlinearity(-2.0, 1.0)),
        Finding(Cause.NOT_LINEAR_IN_DLDY, ("X",), Nonlinearity(-2.0, 0.25)),
        Finding(Cause.SWAPPED, ("al", "tr")),
        Finding(Cause.MISPLACED, ("X",), Misplaced("w")),
        *(Finding(Cause.CONJUGATE, ("z",), form) for form in Conjugation),
        Finding(Cause.TRANSPOSED, ("W",), Permutation((1, 0))),
        Finding(Cause.FLIPPED, ("K",), Flip((0, 1), "")),
        Finding(Cause.FLIPPED, ("X",), Flip((2,), "CBT")),
        Finding(Cause.IDENTITY, ("X",), Identity("dL/dY", True)),
        Finding(Cause.IDENTITY, ("X",), Identity("dL/dY2", False)),
        Finding(Cause.WRONG_AXES, ("b",), AxesMistake("dL/dY", (0,), (2,), "SSCB")),
        Finding(Cause.ACROSS_OBSERVATIONS, ("X",), AcrossObservations((0, 127), 128, 0.0, -0.0172, 1.0)),
        Finding(Cause.ACROSS_OBSERVATIONS, ("X",), AcrossObservations((0, 3, 7), 128, 0.0, 0.00266, 1.0, 8)),
        Finding(Cause.WRONG_SIGN, ("X",), region=sign),
        Finding(Cause.FACTOR, ("X",), Factor(1 / 128, FactorForm.INVERSE_SIZE, 1, 128, batch)),
        Finding(
            Cause.FACTOR, ("X",), Factor(24.0, FactorForm.SIZE, 24, 1, axis, (NamedSize(Size.SPATIAL_AXIS, 24, 2),))
        ),
        Finding(Cause.FACTOR, ("beta",), Factor(1.5, FactorForm.FRACTION, 3, 2), region=channel),
        Finding(Cause.FACTOR, ("z",), Factor(0.5, FactorForm.FRACTION, 1, 2), complex_values=True),
        Finding(Cause.FACTOR, ("X",), Factor(1.004, FactorForm.NEAR_ONE)),
        Finding(Cause.LOCALIZED, ("X",), region=border),
        Finding(Cause.FACTOR, ("t",), Factor(2.0, FactorForm.FRACTION, 2, 1), region=beside_saturated),
        Finding(Cause.LOCALIZED, ("X",), region=above),
        Finding(Cause.LOCALIZED, ("X",), region=between),
        Finding(Cause.FACTOR, ("X",), Factor(2.0, FactorForm.FRACTION, 2, 1), region=steep),
        Finding(Cause.UNEXPLAINED, ("w",), region=elements, numbers=complex_numbers),
        Finding(Cause.UNEXPLAINED, ("X",), numbers=infinite, complex_values=True),
    ]


@pytest.mark.parametrize("finding", _every_kind_of_finding(), ids=lambda f: f.cause.value)
def test_a_finding_read_back_from_json_is_the_finding_written(finding):
    """The codec of the JSON report, the worker's messages, the cache and shards: what is
    read back is equal, field by field, and says the same sentence."""
    data = json.loads(json.dumps(plain(finding.to_dict())))
    read = Finding.from_dict(data)
    assert read == finding
    assert Finding.from_dict(finding.to_dict()) == finding  # as the check holds it: complex, NumPy numbers
    assert wording.headline(read) == wording.headline(finding)


@pytest.mark.parametrize(
    "change, words",
    [
        ({"cause": "haunted"}, "cause 'haunted'"),
        ({"arguments": []}, "names no argument"),
        ({"arguments": "X"}, "not a list"),
        ({"detail": {"other": "w"}}, "carries a detail"),
        ({"complex_values": "yes"}, "not true or false"),
        ({"numbers": {"analytic": [1.0], "numeric": 1.0}}, "not a number or [re, im]"),
        (
            {"cause": "across_observations", "detail": {"observations": [], "batch": 4}},
            "shows no observation",
        ),
        ({"region": {"kind": "blocks", "argument": "X", "wrong": []}}, "holds no block found wrong"),
        ({"cause": "factor", "detail": {"ratio": 0.5, "form": "inverse_size"}}, "names no size"),
    ],
)
def test_a_finding_that_is_not_one_is_refused_in_one_line(change, words):
    data = {**Finding(Cause.ZERO, ("X",)).to_dict(), **change}
    with pytest.raises(MalformedFinding, match=words.replace("[", r"\[").replace("(", r"\(")):
        Finding.from_dict(data)


def test_a_failed_gradient_checks_words_are_rendered_from_its_details_wherever_they_are_read():
    """The message and explanation a worker, the cache or a file carries beside the details
    are never read: they are rendered from the typed findings and records where the result is
    made, and findings in a check that passed, or that are no findings, refuse the report."""
    obj = load_layer(CORPUS / "grad_one_channel.py")
    result = layercheck.check_layer(obj, obj.example_layout, checks=[GRADIENTS]).result(GRADIENTS)
    assert result.gradient is not None and result.message == result.gradient.headline
    assert result.message.startswith("the gradient of X is off by a factor")  # the check's own: a sentence
    data = result.to_dict()
    assert result.explanation[0] == "differentiated: predict" and "  likely cause: off by a factor" in "\n".join(
        result.explanation
    )
    forged = {**data, "message": "all good, trust me", "details": {**data["details"], "explanation": ["fine"]}}
    for origin in Origin:
        read = CheckResult.from_dict(forged, origin)
        assert read.message == result.message and read.explanation == result.explanation
        assert read.gradient == result.gradient
    with pytest.raises(MalformedReport, match=r"findings in a check that did not fail \(passed\)"):
        CheckResult.from_dict({**data, "status": "passed"}, Origin.WORKER)
    broken = json.loads(json.dumps(data))
    broken["details"]["findings"][0]["region"]["kind"] = "everywhere"
    with pytest.raises(MalformedReport, match="a region's kind is 'everywhere', not one of blocks"):
        CheckResult.from_dict(broken, Origin.FILE)


def test_a_report_of_an_earlier_version_keeps_the_message_its_findings_cannot_render():
    """Findings written before `complex_values` was (a shard of the previous version, merged):
    the sentence cannot say what it said of complex data, and the message carried stays; a
    finding that has the key is rendered whatever the message beside it says."""
    obj = load_layer(CORPUS.parent / "corpus_complex" / "wirtinger_half.py")
    result = layercheck.check_layer(obj, obj.example_layout, checks=[GRADIENTS]).result(GRADIENTS)
    assert "Wirtinger" in result.message
    data = json.loads(json.dumps(result.to_dict()))
    for finding in data["details"]["findings"]:
        del finding["complex_values"]
    assert CheckResult.from_dict(data, Origin.FILE).message == result.message
    data["message"] = "carried"
    assert CheckResult.from_dict(data, Origin.FILE).message == "carried"
    assert CheckResult.from_dict({**result.to_dict(), "message": "carried"}).message == result.message


class _Scaled:
    """A correct layer: Y = W X."""

    learnables = ("W",)

    def __init__(self):
        self.W = np.linspace(0.5, 1.5, 4).reshape(4, 1)

    def predict(self, X):
        return self.W * X

    def backward(self, X, Y, dLdY, memory):
        return self.W * dLdY, (dLdY * X).sum(axis=1, keepdims=True)


def test_a_pass_is_typed_and_its_message_rendered_from_what_it_rests_on():
    result = layercheck.check_layer(_Scaled, "4,3:CB", checks=[GRADIENTS]).result(GRADIENTS)
    agreement = result.gradient.agreement
    assert result.status == "passed" and agreement is not None and agreement.device == "cpu"
    assert result.message == result.gradient.passed
    assert result.message == (
        f"2 gradient(s) of predict agree with finite differences (worst relative difference {agreement.worst:.1g})"
    )
    data = json.loads(json.dumps(result.to_dict()))
    assert CheckResult.from_dict({**data, "message": "forged"}).message == result.message
    # Rendered from the agreement, not carried: what it rests on is said as the data has it.
    data["details"]["agreement"]["outputs_masked_at_kinks"] = [3, 5]
    data["details"]["device"] = "gpu"
    assert CheckResult.from_dict(data).message.endswith(
        " on the GPU; up to 5 output(s) that bent sharply within the step left out"
    )


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"worst_rel_error": -1}, "an agreement of -1.0"),
        ({"outputs_masked_at_kinks": [0]}, "(0,) left out"),
        ({"surplus": 1}, "the agreement has the keys"),
    ],
)
def test_a_forged_agreement_is_refused(change, said):
    data = layercheck.check_layer(_Scaled, "4,3:CB", checks=[GRADIENTS]).result(GRADIENTS).to_dict()
    data["details"]["agreement"].update(change)
    with pytest.raises(MalformedReport, match=re.escape(said)):
        CheckResult.from_dict(data)
    data["details"]["agreement"] = {"worst_rel_error": 1e-10, "outputs_masked_at_kinks": []}
    with pytest.raises(MalformedReport, match="an agreement in a check that did not pass"):
        CheckResult.from_dict({**data, "status": "failed"})


def test_a_pass_of_the_previous_version_keeps_the_message_it_carries():
    data = layercheck.check_layer(_Scaled, "4,3:CB", checks=[GRADIENTS]).result(GRADIENTS).to_dict()
    del data["details"]["agreement"]
    data["message"] = "2 gradient(s) of predict agree, as said then"
    assert CheckResult.from_dict(data).message == data["message"]


def test_an_exact_factor_near_the_measured_ratio_is_proven_first():
    """A block whose gradient is small carries its probes' error into the ratio they measure
    (1.99734 for an exact 2, -0.998672 for a sign): the exact factors near it are tried first,
    the nearest first, then the ratio itself."""
    batch = (NamedSize(Size.BATCH, 128),)
    assert factors_to_try(1.99734, ()) == [2.0, 1.99734]
    assert factors_to_try(-0.998672, ())[0] == -1.0
    assert factors_to_try(0.0078130, batch)[0] == 1 / 128
    assert factors_to_try(1.5, batch) == [1.5]  # nothing exact within 1%: the ratio alone
    assert factors_to_try(2.0, ()) == [2.0]


def test_a_tiny_channel_off_by_2_is_said_exactly():
    """A scale-shift whose channel 0 is scaled by 1e-5, its dX doubled there: on this seed the
    probes measured 1.99734, which the corrected gradient also passed, and that number was said."""
    obj = load_layer(CORPUS.parent / "corpus_verdicts" / "tiny_channel_exact_factor.py")
    report = layercheck.check_layer(obj, "4,4,6,3:SSCB", seed=9, checks=[GRADIENTS])
    assert "off by a factor 2 in channel 0 of X (right in the 5 others checked)" in report.result(GRADIENTS).message


@pytest.mark.parametrize(
    "region, words",
    [
        (
            Region(RegionKind.BLOCKS, "X", "channel", "channels", ("2",), 5, 0.17, resolution=0.002, reduced=("3-4",)),
            "wrong in channel 2 of X (right in the 5 others checked; in channels 3-4 only to a reduced resolution "
            "of 0.002)",
        ),
        (
            Region(RegionKind.BLOCKS, "X", "time step", "time steps", ("0",), 39, 0.025, resolution=9e-5),
            "wrong in time step 0 of X (right in the 39 others checked, only to a reduced resolution of 9e-05)",
        ),
        (
            Region(RegionKind.SIGN, "X", "sign", "signs", ("X < 0",), 1, 0.5, resolution=3e-6),
            "wrong where X < 0; right where X > 0, only to a reduced resolution of 3e-06",
        ),
        (
            Region(RegionKind.VALUE_RANGE, "X", "range", "ranges", ("x >= 2",), 7, 0.02, low=2.0, resolution=3e-6),
            "wrong where X >= 2 (a range that holds about 2% of the elements), right elsewhere, only to a reduced "
            "resolution of 3e-06",
        ),
        (
            Region(
                RegionKind.ELEMENTS, "w", "element", "elements", ("(2,)",), 5, 0.17, resolution=9e-5, reduced=("(4,)",)
            ),
            "wrong at 1 of the 6 elements of w measured: (2,); right in the others (element (4,) only to a reduced "
            "resolution of 9e-05)",
        ),
        (
            Region(RegionKind.ELEMENTS, "w", "element", "elements", ("(0,)",), 1, 0.5, resolution=1.3e-5),
            "wrong at 1 of the 2 elements of w measured: (0,); right in the other, only to a reduced resolution of "
            "1.3e-05",
        ),
        (
            Region(
                RegionKind.ELEMENTS,
                "w",
                "element",
                "elements",
                ("(2,)",),
                26,
                0.04,
                resolution=9.7e-5,
                reduced=tuple(f"({k},)" for k in range(5, 25)),
            ),
            "wrong at 1 of the 27 elements of w measured: (2,); right in the others (elements (5,), (6,), (7,), (8,), "
            "(9,), (10,), (11,), (12,) ... only to a reduced resolution of 9.7e-05)",
        ),
    ],
    ids=["some-blocks", "every-block", "sign", "value-range", "elements", "one-other-element", "many-elements"],
)
def test_what_was_shown_right_only_at_a_reduced_resolution_is_said_so(region, words):
    """ "Right in the others" is said as finely as it was shown: blocks whose probe agreed only
    at a reduced resolution (a steep layer's curvature) are named with it, as a passed check
    names an argument so, and the region is not said to be all that is wrong ("only")."""
    assert region_text(region) == words
    data = Finding(Cause.LOCALIZED, (region.argument,), region=region).to_dict()
    del data["region"]["resolution"], data["region"]["reduced"]
    earlier = Finding.from_dict(data)  # a report written before the fields were there
    assert earlier.region is not None and earlier.region.resolution == 0.0 and earlier.region.reduced == ()
    assert "reduced" not in region_text(earlier.region)


@pytest.mark.parametrize(
    "resolution, said",
    [(5.64e-6, "5.7e-06"), (1.02e-6, "1.1e-06"), (3e-5, "3e-05"), (9.96e-6, "1e-05"), (0.002, "0.002")],
)
def test_a_reduced_resolution_is_said_in_two_digits_rounded_up(resolution, said):
    """What a probe ruled out is never said finer than it was: 1.02e-6 would read "1e-06", the
    full resolution, rounded to the nearest."""
    assert resolution_text(resolution) == said
    assert float(said) >= resolution


@pytest.mark.parametrize("resolution", [-1.0, math.nan, math.inf])
def test_a_region_read_back_with_a_resolution_that_is_no_relative_error_is_refused(resolution):
    data = Region(RegionKind.BLOCKS, "X", "channel", "channels", ("2",), 5, 0.17).to_dict()
    data["resolution"] = resolution
    with pytest.raises(MalformedFinding, match="resolution"):
        Region.from_dict(data)


def test_blocks_no_probe_decided_are_said_undecided_and_a_report_without_them_reads_none():
    """Counted "right in the N others checked": the blocks a probe found right; those too small
    for any (a saturated channel) are named apart, as what they are. A report written before
    the field was there holds none."""
    region = Region(RegionKind.BLOCKS, "t", "channel", "channels", ("5",), 296, 0.003, undecided=("40", "106-107"))
    finding = Finding(Cause.LOCALIZED, ("t",), region=region)
    # Not "wrong only": the channels undecided may be wrong too.
    assert wording.headline(finding).endswith(
        "wrong in channel 5 of t (right in the 296 others checked; undecided in channels 40, 106-107, "
        "whose gradient is below 0.001 of the largest channel's)"
    )
    data = finding.to_dict()
    del data["region"]["undecided"]
    earlier = Finding.from_dict(data)
    assert earlier.region is not None and earlier.region.undecided == ()
    assert wording.headline(earlier).endswith("wrong only in channel 5 of t (right in the 296 others checked)")
