"""Layouts: `SIZES:FORMAT` strings and `{size, format}` mappings (DESIGN.md section 1)."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from layercheck import Layout, UsageError, parse_layout

LABELS = "SCBTU"


@st.composite
def formats(draw, min_size: int = 1, max_size: int = 8) -> str:
    """A valid format: any number of S and U, at most one each of C, B and T, in any order."""
    unique = draw(st.lists(st.sampled_from("CBT"), unique=True, max_size=3))
    n_rest = draw(st.integers(max(0, min_size - len(unique)), max(0, max_size - len(unique))))
    rest = draw(st.lists(st.sampled_from("SU"), min_size=n_rest, max_size=n_rest))
    labels = draw(st.permutations(unique + rest))
    return "".join(labels)


@st.composite
def valid_layouts(draw) -> tuple[tuple[int, ...], str]:
    fmt = draw(formats())
    sizes = draw(st.lists(st.integers(1, 10**6), min_size=len(fmt), max_size=len(fmt)))
    return tuple(sizes), fmt


def spelled(sizes, fmt) -> str:
    return ",".join(map(str, sizes)) + ":" + fmt


# -- valid layouts ---------------------------------------------------------------------------


@given(valid_layouts())
def test_valid_layout_round_trips_through_its_string(layout):
    sizes, fmt = layout
    parsed = parse_layout(spelled(sizes, fmt))
    assert parsed.size == sizes
    assert parsed.format == fmt
    assert parsed.ndim == len(sizes)
    assert str(parsed) == spelled(sizes, fmt)
    assert parse_layout(str(parsed)) == parsed


@given(valid_layouts())
def test_lowercase_and_spaces_are_accepted(layout):
    sizes, fmt = layout
    text = " " + " , ".join(map(str, sizes)) + " : " + fmt.lower() + " "
    assert parse_layout(text) == Layout(sizes, fmt)


@given(valid_layouts(), st.booleans())
def test_mapping_form_equals_string_form(layout, as_tuple):
    sizes, fmt = layout
    mapping = {"size": tuple(sizes) if as_tuple else list(sizes), "format": fmt}
    assert parse_layout(mapping) == parse_layout(spelled(sizes, fmt))


@given(valid_layouts())
def test_a_layout_parses_to_itself(layout):
    parsed = parse_layout(spelled(*layout))
    assert parse_layout(parsed) is parsed


@given(valid_layouts())
def test_find_returns_the_first_axis_with_the_label_or_none(layout):
    sizes, fmt = layout
    parsed = parse_layout(spelled(sizes, fmt))
    for label in LABELS:
        expected = fmt.index(label) if label in fmt else None
        assert parsed.find(label) == expected


def test_find_on_the_seed_layout():
    layout = parse_layout("24,24,20,128:SSCB")
    assert layout.size == (24, 24, 20, 128)
    assert layout.ndim == 4
    assert (layout.find("S"), layout.find("C"), layout.find("B")) == (0, 2, 3)
    assert layout.find("T") is None
    assert layout.find("U") is None


# -- garbage -----------------------------------------------------------------------------------


def _check_garbage(spec):
    try:
        parsed = parse_layout(spec)
    except UsageError as exc:
        assert str(exc), "a UsageError needs a message"
        return
    # Whatever parses is a valid layout, and its spelling parses back to it.
    assert isinstance(parsed, Layout)
    assert len(parsed.size) == len(parsed.format) >= 1
    assert all(isinstance(n, int) and n >= 1 for n in parsed.size)
    assert set(parsed.format) <= set(LABELS)
    assert all(parsed.format.count(label) <= 1 for label in "CBT")
    assert parse_layout(str(parsed)) == parsed


@given(st.text(max_size=40))
@example("1,2:ss")
@example("3\n,4:SS")
@example("1,,2:SS")
@example("1,2:S S")
@example("-1,2:CB")
@example("1.5,2:CB")
@example("1,2::CB")
@example(" : ")
def test_garbage_text_parses_or_raises_usage_error(text):
    _check_garbage(text)


@given(st.text(alphabet="0123456789,: SCBTUXscbtu-", max_size=30))
def test_near_miss_text_parses_or_raises_usage_error(text):
    _check_garbage(text)


@given(
    st.dictionaries(
        st.sampled_from(["size", "format", "sizes", "fmt"]),
        st.one_of(
            st.none(),
            st.text(max_size=6),
            st.integers(-3, 5),
            st.lists(st.one_of(st.integers(-2, 5), st.booleans(), st.floats(0, 5), st.text(max_size=2)), max_size=5),
        ),
    )
)
def test_garbage_mappings_parse_or_raise_usage_error(mapping):
    _check_garbage(mapping)


@given(st.one_of(st.none(), st.integers(), st.floats(), st.binary(max_size=8), st.lists(st.integers(1, 4), max_size=4)))
def test_non_layout_objects_raise_usage_error(value):
    with pytest.raises(UsageError):
        parse_layout(value)


def test_booleans_are_not_sizes():
    with pytest.raises(UsageError):
        parse_layout({"size": [True, 2], "format": "CB"})


# -- the documented malformed examples ------------------------------------------------------

MALFORMED = [
    ("24,24:SSCB", "SSCB"),  # 2 sizes, 4 labels
    ("a,b:SS", "a,b"),  # sizes are not integers
    ("24,24,20,128:SSXB", "X"),  # unknown label
    ("0,3:CB", "0"),  # sizes must be positive
    ("2,2:CC", "CC"),  # two channel axes
    ("24,24,20,128", "SIZES:FORMAT"),  # no format
    (":SSCB", ":SSCB"),  # no sizes
]


@pytest.mark.parametrize("text, named", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_layout_raises_a_one_line_usage_error(text, named):
    with pytest.raises(UsageError) as info:
        parse_layout(text)
    message = str(info.value)
    assert "\n" not in message
    assert named in message, f"the message should point at the problem: {message!r}"


@pytest.mark.parametrize("fmt", ["BB", "TT", "CSC"])
def test_at_most_one_channel_batch_and_time_axis(fmt):
    with pytest.raises(UsageError):
        parse_layout(",".join(["2"] * len(fmt)) + ":" + fmt)


def test_lowercase_format_is_accepted():
    layout = parse_layout("1,2:ss")
    assert layout == Layout((1, 2), "SS")
    assert str(layout) == "1,2:SS"


def test_several_spatial_and_unspecified_axes_are_allowed():
    assert parse_layout("2,3,4,5,6:SSUUS").format == "SSUUS"


def test_layout_validates_when_constructed_directly():
    with pytest.raises(UsageError):
        Layout((2, 3), "SSC")
    with pytest.raises(UsageError):
        Layout((2, -3), "SC")


# -- known defects (see the report of the test-suite author) ------------------------------------


def test_absurdly_long_size_raises_usage_error():
    with pytest.raises(UsageError):
        parse_layout("1" * 5000 + ":S")


def test_non_ascii_label_is_rejected():
    with pytest.raises(UsageError):
        parse_layout("1,2:\u00df")


def test_usage_error_for_control_character_label_is_one_line():
    with pytest.raises(UsageError) as info:
        parse_layout("1,2:S\nS")
    assert "\n" not in str(info.value)
