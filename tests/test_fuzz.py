"""Bad input never crashes the parsers: random layouts and configs raise UsageError (one
line, exit 2 at the command line) or nothing, never anything else (hypothesis)."""

from __future__ import annotations

import string
from pathlib import Path

import yaml
from conftest import CHECK_NAMES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from layercheck import Layout, UsageError, parse_layout
from layercheck.settings.config import parse_config, parse_config_text
from layercheck.settings.options import SETTING_KEYS, TARGET_KEYS

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FUZZ_NESTED = settings(FUZZ, max_examples=120)  # nested values are slow to draw

# Text that looks like layouts: digits, commas, colons, labels, and some noise.
layout_alphabet = st.sampled_from(list("0123456789,:SCBTUscbtu -+.xß\t\n") + ["٣", "\x00"])
layout_text = st.one_of(st.text(layout_alphabet, max_size=30), st.text(max_size=30))
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    layout_text,
)
yaml_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(st.one_of(st.text(max_size=10), st.integers()), inner, max_size=5)
    ),
    max_leaves=12,
)


def parses_or_refuses(parse, value):
    try:
        return parse(value)
    except UsageError as exc:
        # A line per problem (a config says all of its mistakes at once), each one line.
        assert exc.problems and str(exc).splitlines() == list(exc.problems), "a usage error is a line per problem"
        assert all(problem and "\n" not in problem for problem in exc.problems)
        return None


@FUZZ
@given(layout_text)
def test_layout_text_parses_or_is_a_usage_error(text):
    layout = parses_or_refuses(parse_layout, text)
    if layout is not None:
        assert isinstance(layout, Layout) and parse_layout(str(layout)) == layout


@FUZZ_NESTED
@given(st.dictionaries(st.sampled_from(["size", "format", "integer", "sizes", 1]), yaml_values, max_size=4))
def test_layout_mappings_parse_or_are_usage_errors(mapping):
    parses_or_refuses(parse_layout, mapping)


@FUZZ_NESTED
@given(yaml_values)
def test_any_value_as_a_layout_parses_or_is_a_usage_error(value):
    parses_or_refuses(parse_layout, value)


@FUZZ
@given(st.text(string.printable, max_size=200))
def test_config_text_parses_or_is_a_usage_error(text):
    parses_or_refuses(lambda t: parse_config_text(t, source="fuzz.yaml", check_names=CHECK_NAMES), text)


@FUZZ_NESTED
@given(yaml_values)
def test_any_yaml_value_as_a_config_parses_or_is_a_usage_error(value):
    parses_or_refuses(lambda v: parse_config(v, source="fuzz.yaml", check_names=CHECK_NAMES), value)


def _config_like(base: Path):
    """Configs with the right shape and random values: they get past the first checks."""
    layouts = st.one_of(layout_text, st.lists(layout_text, max_size=3), yaml_values)
    targets = st.one_of(st.just("layer.py"), st.just("layer.py:Layer"), st.just("."), st.text(max_size=10), yaml_values)
    setting = st.dictionaries(st.sampled_from(SETTING_KEYS), yaml_values, max_size=4)
    entry = st.fixed_dictionaries(
        {"target": targets},
        optional={"layout": layouts, "args": yaml_values, **{k: yaml_values for k in SETTING_KEYS}},
    )
    entry = st.one_of(entry, st.dictionaries(st.sampled_from(TARGET_KEYS + ("layouts",)), yaml_values, max_size=4))
    return st.fixed_dictionaries({}, optional={"defaults": setting, "targets": st.lists(entry, max_size=3)})


def test_config_like_values_parse_or_are_usage_errors(tmp_path_factory):
    base = tmp_path_factory.mktemp("fuzz")
    (base / "layer.py").write_text("class Layer:\n    def predict(self, X):\n        return X\n")

    @FUZZ_NESTED
    @given(_config_like(base))
    def check(data):
        config = parses_or_refuses(
            lambda d: parse_config(d, source="fuzz.yaml", base=base, check_names=CHECK_NAMES), data
        )
        if config is not None:  # and what parses, round-trips through YAML text
            parses_or_refuses(
                lambda t: parse_config_text(t, source="fuzz.yaml", base=base, check_names=CHECK_NAMES),
                yaml.safe_dump(data),
            )

    check()
