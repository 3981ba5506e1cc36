"""`--config FILE` (DESIGN.md section 2): parsing, validation messages, precedence, and the
shipped configs."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from conftest import CHECK_NAMES, REPO, SAMPLES, run_cli

from layercheck import UsageError, parse_layout
from layercheck.contract.loading import discover, import_module
from layercheck.running.batch import Batch, Request, _settings
from layercheck.settings.config import load_config, parse_config, parse_config_text
from layercheck.settings.options import BUILTIN, DEFAULT_TOLERANCES, Settings, options_from, settings_from

CONFIGS = REPO / "configs"


def write(tmp_path: Path, text: str, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def assert_one_line_usage_error(proc, *needles):
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error:"), proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


# -- what a valid config means -------------------------------------------------------------


def test_a_full_config_parses_with_paths_relative_to_its_file(tmp_path):
    layers = tmp_path / "layers"
    layers.mkdir()
    (layers / "mine.py").write_text("class Mine:\n    def predict(self, X):\n        return X\n")
    config = load_config(
        write(
            tmp_path / "layers",
            """
        defaults:
          dtypes: [float64]
          seed: 3
          timeout: 1e2
          device: cpu
          tolerances: {float32: {rtol: 1e-4, atol: 1.0e-5}}
          skip: [predict_is_deterministic]
          input_domain: [0, null]
        targets:
          - target: mine.py:Mine
            layout: 4,3:CB
            args: {rate: 1e-3, name: m, count: 2}
            seed: 7
            tolerances: {float32: {rtol: 2e-4}}
          - target: ./mine.py
            layout:
              - 4,3:CB
              - {size: [4, 3], format: CB}
          - .
    """,
        ),
        check_names=CHECK_NAMES,
    )
    d = config.defaults
    assert d == Settings(
        dtypes=("float64",),
        seed=3,
        timeout=100.0,
        device="cpu",
        tolerances={"float32": {"rtol": 1e-4, "atol": 1e-5}},
        skip=("predict_is_deterministic",),
        input_domain=(0.0, None),
    )
    first, second, third = config.targets
    assert (first.path, first.name, first.where) == (layers / "mine.py", "Mine", "targets[0]")
    assert first.layouts == (parse_layout("4,3:CB"),)
    assert first.args == {"rate": 1e-3, "name": "m", "count": 2}  # 1e-3 is a number, as with --arg
    assert isinstance(first.args["rate"], float)
    assert first.settings == Settings(seed=7, tolerances={"float32": {"rtol": 2e-4}})
    assert (second.name, len(second.layouts)) == (None, 2)
    assert third.path == layers and third.name is None  # a bare string is a target, a folder here


def test_precedence_is_command_line_then_target_then_defaults_then_builtin(tmp_path):
    (tmp_path / "l.py").write_text("class L:\n    def predict(self, X):\n        return X\n")
    config = parse_config(
        {
            "defaults": {"seed": 1, "timeout": 5, "tolerances": {"float64": {"rtol": 1e-6}}},
            "targets": [{"target": "l.py", "seed": 2, "tolerances": {"float64": {"atol": 1e-3}}}],
        },
        base=tmp_path,
        check_names=CHECK_NAMES,
    )
    (entry,) = config.targets
    batch = Batch((Request("l.py", tmp_path / "l.py", None, entry),), config=config)
    settings = _settings(batch, entry)
    assert (settings.seed, settings.timeout, settings.dtypes) == (2, 5.0, BUILTIN.dtypes)
    assert settings.tolerances == {"float64": {"rtol": 1e-6, "atol": 1e-3}}  # merged per key
    options = options_from(settings)
    assert options.tolerance("float64") == (1e-6, 1e-3)
    assert options.tolerance("float32") == tuple(DEFAULT_TOLERANCES["float32"].values())
    cli = Batch(batch.requests, config=config, settings=settings_from(seed=9, check_names=CHECK_NAMES))
    assert _settings(cli, entry).seed == 9


def test_a_command_line_target_takes_layout_and_args_from_the_most_specific_entry(tmp_path):
    folder = tmp_path / "layers"
    folder.mkdir()
    (folder / "two.py").write_text(
        textwrap.dedent("""
        class A:
            def predict(self, X):
                return X

        class B:
            def __init__(self, scale=1.0):
                self.scale = scale

            def predict(self, X):
                return self.scale * X
    """)
    )
    config = parse_config(
        {
            "targets": [
                {"target": "layers", "layout": "2,3:CB"},
                {"target": "layers/two.py", "layout": "4,3:CB"},
                {"target": "layers/two.py:B", "layout": "5,3:CB", "args": {"scale": 2}},
            ]
        },
        base=tmp_path,
        check_names=CHECK_NAMES,
    )
    two = (folder / "two.py").resolve()
    assert config.entry_for(two, "B").layouts == (parse_layout("5,3:CB"),)
    assert config.entry_for(two, "A").layouts == (parse_layout("4,3:CB"),)
    assert config.entry_for(folder / "other.py", "C").layouts == (parse_layout("2,3:CB"),)
    assert config.entry_for(tmp_path / "elsewhere.py", "A") is None
    out = tmp_path / "r.json"
    config_path = write(tmp_path, "targets:\n  - target: layers/two.py:B\n    layout: 5,3:CB\n    args: {scale: 2}\n")
    proc = run_cli("run", folder / "two.py", "--config", config_path, "--json", out, "--quiet", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # A has no layout anywhere
    a, b = json.loads(out.read_text())["targets"]
    assert a["status"] == "error" and "--layout" in a["error"] and "config" in a["error"]
    assert (b["status"], b["layouts"]) == ("passed", ["5,3:CB"])


def test_config_targets_are_checked_with_their_own_layouts(tmp_path):
    out = tmp_path / "r.json"
    config = write(
        tmp_path,
        f"""
        defaults: {{dtypes: [float64]}}
        targets:
          - target: {SAMPLES / "prelu.py"}:PReLU
            layout: 4,3,5,6:SSCB
            args: {{num_channels: 5}}
          - target: {SAMPLES / "weighted_addition.py"}
            layout:
              - 3,2:CB
              - 3,2:CB
    """,
    )
    proc = run_cli("run", "--config", config, "--json", out, "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    prelu, addition = json.loads(out.read_text())["targets"]
    assert prelu["target"].endswith("prelu.py:PReLU") and prelu["layouts"] == ["4,3,5,6:SSCB"]
    assert addition["layouts"] == ["3,2:CB", "3,2:CB"]


# -- malformed configs: one line naming the file, the key path and what is allowed ----------

MALFORMED = {
    "not-yaml": ("targets: [1, 2", ["line 1", "not valid YAML"]),
    "empty": ("", ["empty"]),
    "a-list": ("- a\n- b\n", ["top level", "mapping"]),
    "unknown-top-key": ("target: x.py\n", ["top level", "'target'", "defaults, targets"]),
    "misspelt-key": ("defaults: {tiemout: 3}\n", ["defaults", "'timeout'"]),
    "layout-in-defaults": ("defaults: {layout: 3,2:CB}\n", ["defaults", "targets"]),
    "bad-dtype": ("defaults: {dtypes: [float16]}\n", ["defaults.dtypes", "float16", "complex64"]),
    "bad-seed": ("defaults: {seed: -1}\n", ["defaults.seed", "integer"]),
    "bad-timeout": ("defaults: {timeout: soon}\n", ["defaults.timeout", "number"]),
    "zero-timeout": ("defaults: {timeout: 0}\n", ["defaults.timeout", "above 0 and at most 604800"]),
    # Issue 19: every number finite and in range, with the range in the message.
    "huge-timeout": ("defaults: {timeout: 1.0e10}\n", ["defaults.timeout", "at most 604800"]),
    "nan-timeout": ("defaults: {timeout: .nan}\n", ["defaults.timeout", "at most 604800", "nan"]),
    "infinite-domain": ("defaults: {input_domain: [.inf, null]}\n", ["defaults.input_domain[0]", "finite"]),
    "duplicate-key": ("defaults:\n  seed: 1\n  seed: 2\n", ["'seed' appears twice", "line 2 and line 3"]),
    "alias-bomb": (
        "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        + "".join(f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\n" for p, n in zip("abcdefgh", "bcdefghi"))
        + "defaults: {dtypes: [*i, *i, *i, *i, *i, *i, *i, *i, *i, *i]}\n",
        ["aliases", "100,000 values"],
    ),
    "bad-device": ("defaults: {device: tpu}\n", ["defaults.device", "cpu, gpu, auto"]),
    "bad-tolerance": (
        "defaults: {tolerances: {float32: {rtol: tight}}}\n",
        ["defaults.tolerances.float32.rtol", "number"],
    ),
    "tolerance-key": ("defaults: {tolerances: {float32: {eps: 1}}}\n", ["defaults.tolerances.float32", "rtol, atol"]),
    "unknown-check": ("defaults: {skip: [predict_does_not_eror]}\n", ["defaults.skip", "predict_does_not_error"]),
    "bad-domain": ("defaults: {input_domain: [1, 0]}\n", ["defaults.input_domain", "low"]),
    "targets-not-list": ("targets: prelu.py\n", ["targets", "list"]),
    "no-target-key": ("targets: [{layout: 3,2:CB}]\n", ["targets[0]", "target"]),
    "missing-file": ("targets: [{target: nope.py}]\n", ["targets[0].target", "nope.py", "relative to the config file"]),
    "not-python": ("targets: [{target: c.yaml}]\n", ["targets[0].target", ".py"]),
    "flow-list-layout": (
        "targets:\n  - target: l.py\n    layout: [24,24,20,128:SSCB]\n",
        ["targets[0].layout", "flow list"],
    ),
    "bad-layout": ("targets:\n  - l.py\n  - target: l.py\n    layout: 24,24:SSCB\n", ["targets[1].layout", "SSCB"]),
    "bad-second-layout": (
        "targets:\n  - target: l.py\n    layout:\n      - 3,2:CB\n      - 3,2:XB\n",
        ["targets[0].layout[1]", "'X'"],
    ),
    "huge-layout": (
        "targets:\n  - target: l.py\n    layout: 100000,100000,1000,1000:SSCB\n",
        ["targets[0].layout", "GiB"],
    ),
    "bad-args": ("targets: [{target: l.py, args: [1, 2]}]\n", ["targets[0].args", "mapping"]),
    "bad-arg-name": ("targets: [{target: l.py, args: {1x: 2}}]\n", ["targets[0].args", "identifier"]),
    "bad-override": ("targets: [{target: l.py, dtypes: [int8]}]\n", ["targets[0].dtypes", "int8"]),
    # One target twice (a hunt: pytest's items kept the first entry, `run` checked both under
    # one label, and the two disagreed on whether the run passed).
    "named-twice": (
        "targets:\n  - target: l.py:L\n    args: {}\n  - target: ./l.py:L\n",
        ["targets[1]", "'./l.py:L' again (targets[0] names it)"],
    ),
}


@pytest.mark.parametrize("name", MALFORMED)
def test_malformed_config_is_a_usage_error_naming_file_and_key(tmp_path, name):
    text, needles = MALFORMED[name]
    (tmp_path / "l.py").write_text("class L:\n    def predict(self, X):\n        return X\n")
    path = write(tmp_path, text)
    with pytest.raises(UsageError) as info:
        load_config(path, check_names=CHECK_NAMES)
    message = str(info.value)
    # A line per problem, each naming the file (a flow mapping `{layout: 3,2:CB}` holds two).
    assert message.splitlines() == list(info.value.problems), message
    assert all(problem.startswith(str(path)) for problem in info.value.problems), message
    for needle in needles:
        assert needle in message, (needle, message)


@pytest.mark.parametrize(
    "name", ["bad-layout", "unknown-check", "not-yaml", "missing-file", "alias-bomb", "duplicate-key", "named-twice"]
)
def test_malformed_config_exits_2_with_one_line_and_writes_nothing(tmp_path, name):
    text, needles = MALFORMED[name]
    (tmp_path / "l.py").write_text("class L:\n    def predict(self, X):\n        return X\n")
    path = write(tmp_path, text)
    out, junit = tmp_path / "r.json", tmp_path / "r.xml"
    proc = run_cli("run", "--config", path, "--json", out, "--junit", junit)
    assert_one_line_usage_error(proc, str(path), *needles)
    assert not out.exists() and not junit.exists()


def test_missing_config_file_and_config_without_targets_exit_2(tmp_path):
    assert_one_line_usage_error(run_cli("run", "--config", tmp_path / "none.yaml"), "none.yaml")
    path = write(tmp_path, "defaults: {seed: 1}\n")
    assert_one_line_usage_error(run_cli("run", "--config", path), "targets")
    assert_one_line_usage_error(run_cli("run"), "TARGET", "--config")


def test_yaml_is_read_safely(tmp_path):
    path = write(tmp_path, "defaults: !!python/object/apply:os.system ['echo pwned']\n")
    with pytest.raises(UsageError, match="not valid YAML"):
        load_config(path, check_names=CHECK_NAMES)


def test_parse_config_text_names_the_source():
    with pytest.raises(UsageError, match=r"^ci\.yaml: defaults\.seed: "):
        parse_config_text("defaults: {seed: x}", source="ci.yaml", check_names=CHECK_NAMES)


# -- the shipped configs -------------------------------------------------------------------


def test_default_config_documents_the_builtin_defaults():
    config = load_config(CONFIGS / "default.yaml", check_names=CHECK_NAMES)
    assert config.targets == ()
    d = config.defaults
    assert (d.dtypes, d.seed, d.timeout, d.device, d.skip, d.checks, d.input_domain) == (
        BUILTIN.dtypes,
        BUILTIN.seed,
        BUILTIN.timeout,
        BUILTIN.device,
        (),
        None,
        None,
    )
    assert d.tolerances == DEFAULT_TOLERANCES


def test_sample_config_lists_every_sample_layer_with_a_layout():
    config = load_config(CONFIGS / "sample_layers.yaml", check_names=CHECK_NAMES)
    listed = {(entry.path, entry.name) for entry in config.targets}
    defined = {
        (path.resolve(), name) for path in sorted(SAMPLES.glob("*.py")) for name, _ in discover(import_module(path))
    }
    assert listed == defined
    assert all(entry.layouts for entry in config.targets)
    by_name = {entry.name: entry for entry in config.targets}
    assert [str(layout) for layout in by_name["SReLUFunction"].layouts] == ["24,24,20,128:SSCB"] + ["1,1,20,1:SSCU"] * 4
    assert by_name["SReLUFunction"].args == {"format": "SSCB"}
    assert len(by_name["WeightedAddition"].layouts) == 2
    assert [str(layout) for layout in by_name["PeepholeLSTM"].layouts] == ["5,4,7:CBT"]


def test_sample_config_passes(tmp_path):
    """The README's quick-start run: every sample at its example size passes, exit 0."""
    out = tmp_path / "r.json"
    proc = run_cli(
        "run", "--config", "configs/sample_layers.yaml", "--jobs", "2", "--quiet", "--json", out, timeout=600
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    assert len(report["targets"]) == len(load_config(CONFIGS / "sample_layers.yaml", check_names=CHECK_NAMES).targets)
    assert all(t["status"] == "passed" for t in report["targets"])


def test_every_problem_of_a_config_is_said_in_one_run(tmp_path):
    # Issue 39: two mistakes need one run, not two; each is a line of its own, exit status 2.
    (tmp_path / "l.py").write_text("class L:\n    def predict(self, X):\n        return X\n")
    path = write(
        tmp_path,
        "defaults:\n  dtype: float64\n  seed: -3\ntargets:\n  - target: l.py\n    layuot: 3,2:CB\n  - target: nope.py\n",
    )
    with pytest.raises(UsageError) as info:
        load_config(path, check_names=CHECK_NAMES)
    where = [problem.removeprefix(f"{path}: ").split(":")[0] for problem in info.value.problems]
    assert where == ["defaults", "defaults.seed", "targets[0]", "targets[1].target"]
    assert "did you mean 'dtypes'?" in info.value.problems[0] and "did you mean 'layout'?" in info.value.problems[2]
    proc = run_cli("run", "--config", path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [f"Error: {problem}" for problem in info.value.problems]
