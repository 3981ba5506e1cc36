"""Settings (issue 15): one validator for the command line, config files and the API, one
tolerance merge, and a `settings/` package that stands below the checks and the API."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from conftest import CHECK_NAMES, PACKAGE, SAMPLES, run_cli

import layercheck
from layercheck import UsageError
from layercheck.settings.config import load_config, parse_config
from layercheck.settings.options import (
    DEFAULT_TOLERANCES,
    Options,
    make_options,
    merge_settings,
    options_from,
)

SETTINGS_PACKAGE = PACKAGE / "settings"

# -- a 0 tolerance is a tolerance ----------------------------------------------------------


def test_a_zero_tolerance_is_kept_not_taken_for_unset():
    exact = Options(tolerances={"float64": {"rtol": 0.0, "atol": 0.0}})
    assert exact.tolerance("float64") == (0.0, 0.0)
    assert exact.tolerance(np.float64) == (0.0, 0.0)
    assert exact.tolerance("float32") == tuple(DEFAULT_TOLERANCES["float32"].values())


def test_a_zero_tolerance_is_kept_from_the_api_and_a_config(tmp_path):
    api = make_options(check_names=CHECK_NAMES, tolerances={"float64": {"rtol": 0, "atol": 0}, "float32": {"atol": 0}})
    assert api.tolerance("float64") == (0.0, 0.0)
    assert api.tolerance("float32") == (DEFAULT_TOLERANCES["float32"]["rtol"], 0.0)  # merged per key
    config = parse_config(
        {"defaults": {"tolerances": {"float64": {"rtol": 0, "atol": "0e0"}}}}, base=tmp_path, check_names=CHECK_NAMES
    )
    assert options_from(merge_settings(config.defaults)).tolerance("float64") == (0.0, 0.0)


def test_options_hold_final_tolerances_however_they_are_made():
    assert Options().tolerances == DEFAULT_TOLERANCES
    partial = Options(tolerances={"complex64": {"rtol": 1e-3}})
    assert partial.tolerances["complex64"] == {"rtol": 1e-3, "atol": DEFAULT_TOLERANCES["complex64"]["atol"]}


# -- one validator: the same message from the command line, a config and the API ------------

# (config key and YAML value, command-line option and text, API keyword and value)
BAD_VALUES = {
    "dtype": (("dtypes", "[float16]"), ("--dtype", "float16"), ("dtypes", ["float16"])),
    "device": (("device", "tpu"), ("--device", "tpu"), ("device", "tpu")),
    "seed": (("seed", "-1"), ("--seed", "-1"), ("seed", -1)),
    "skip": (
        ("skip", "[predict_does_not_eror]"),
        ("--skip", "predict_does_not_eror"),
        ("skip", ["predict_does_not_eror"]),
    ),
    "checks": (("checks", "nope"), ("--checks", "nope"), ("checks", ("nope",))),
}


@pytest.mark.parametrize("name", BAD_VALUES)
def test_a_bad_value_reads_the_same_from_the_cli_a_config_and_the_api(tmp_path, name):
    (key, yaml_value), (option, text), (keyword, value) = BAD_VALUES[name]
    config = tmp_path / "c.yaml"
    config.write_text(f"defaults:\n  {key}: {yaml_value}\n", encoding="utf-8")
    with pytest.raises(UsageError) as info:
        load_config(config, check_names=CHECK_NAMES)
    from_config = str(info.value)
    prefix = f"{config}: defaults.{key}: "
    assert from_config.startswith(prefix), from_config
    problem = from_config[len(prefix) :]

    with pytest.raises(UsageError) as info:
        layercheck.check_layer(lambda X: X, "3,2:CB", **{keyword: value})
    assert str(info.value) == f"{keyword}: {problem}"

    proc = run_cli("run", SAMPLES / "prelu.py", option, text)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"Error: {option}: {problem}\n")
    proc = run_cli("run", "--config", config)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"Error: {from_config}\n")


def test_the_api_and_a_config_refuse_a_bad_tolerance_alike(tmp_path):
    with pytest.raises(UsageError) as from_api:
        make_options(check_names=CHECK_NAMES, tolerances={"float32": {"rtol": -1}})
    with pytest.raises(UsageError) as from_config:
        parse_config(
            {"defaults": {"tolerances": {"float32": {"rtol": -1}}}},
            source="c.yaml",
            base=tmp_path,
            check_names=CHECK_NAMES,
        )
    assert str(from_api.value) == "tolerances.float32.rtol: must be a number >= 0, got -1"
    assert str(from_config.value) == f"c.yaml: defaults.{from_api.value}"


# -- settings/ sits below the checks and the API ---------------------------------------------


def _imported_modules(path: Path) -> set[str]:
    """Every module a file imports, anywhere in it (`from a import b` counts as a and a.b)."""
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.name}: relative import (keep them absolute)"
            modules.add(node.module)
            modules.update(f"{node.module}.{alias.name}" for alias in node.names)
    return modules


@pytest.mark.parametrize("path", sorted(SETTINGS_PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_settings_import_neither_the_checks_nor_the_api(path):
    above = ("layercheck.checks", "layercheck.api", "layercheck.cli", "layercheck.running")
    upward = sorted(m for m in _imported_modules(path) if any(m == a or m.startswith(a + ".") for a in above))
    assert upward == [], f"{path.name} imports {upward}"


def test_every_setting_is_named_once_for_every_way_in():
    """The table of settings is the one place that names a setting: a field of Settings or
    Options, an option of `layercheck run` or a keyword of the API without its row would be
    a setting one way in cannot give."""
    from dataclasses import fields

    from layercheck.cli import run
    from layercheck.settings.options import SETTINGS, Options, Settings

    assert [s.key for s in SETTINGS] == [f.name for f in fields(Settings)]
    # `inputs` is the API's own; `default_dtypes` says that no dtypes were given, not a setting.
    assert {s.keyword for s in SETTINGS} == {f.name for f in fields(Options)} - {"inputs", "default_dtypes"}
    options = {opt for param in run.params for opt in param.opts}
    assert {s.option for s in SETTINGS if s.option} <= options
    # Each command-line setting reaches `run` under its key, as the plan takes it.
    assert {s.key for s in SETTINGS if s.option} <= {param.name for param in run.params}


def test_a_bad_value_reads_the_same_from_the_command_line_a_config_and_the_api(tmp_path):
    from layercheck.running.plan import make_batch

    (tmp_path / "c.yaml").write_text("defaults:\n  seed: -1\ntargets: []\n")
    messages = []
    for give in (
        lambda: make_batch(["x.py"], settings={"seed": "-1"}),
        lambda: load_config(tmp_path / "c.yaml", check_names=CHECK_NAMES),
        lambda: make_options(check_names=CHECK_NAMES, seed=-1),
    ):
        with pytest.raises(UsageError) as info:
            give()
        messages.append(str(info.value))
    problems = {message.rsplit(": ", 1)[-1] for message in messages}
    assert len(problems) == 1, messages
    assert messages[0].startswith("--seed:") and messages[2].startswith("seed:"), messages
    assert "defaults.seed:" in messages[1], messages
