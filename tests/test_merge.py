"""`layercheck merge A.json B.json ...` (issue 28): the reports of a run's shards merged into
the report of the unsharded run (order, summary, exit status); shards that do not fit
together refused in one line. And `--json -`: the JSON report alone on standard output."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from conftest import CLI_LAYERS, SAMPLES, one_line_usage_error, run_cli
from test_cli import _UNDECIDABLE

LAYERS = {
    "srelu.py": SAMPLES / "srelu.py",  # passes
    "prelu.py": SAMPLES / "prelu.py",  # passes
    "srelu_swapped.py": SAMPLES / "buggy" / "srelu_swapped.py",  # its gradients fail
    "missing_dx.py": SAMPLES / "buggy" / "srelu_missing_dx.py",  # its backward fails
    "import_raises.py": CLI_LAYERS / "import_raises.py",  # cannot be checked
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Any]:
    """One folder of layers checked unsharded and in two shards, each with --json and --junit."""
    root = tmp_path_factory.mktemp("merge")
    (root / "layers").mkdir()
    for name, source in LAYERS.items():
        shutil.copy(source, root / "layers" / name)
    procs = {}
    for name, shard in (("all", None), ("s1", "1/2"), ("s2", "2/2")):
        # --no-cache: each run checks (the shards would otherwise be served what "all" stored,
        # and say "cached" where the unsharded run does not)
        args = ["run", "layers", "--no-cache", "--json", f"{name}.json", "--junit", f"{name}.xml"]
        procs[name] = run_cli(*args, *(["--shard", shard] if shard else []), cwd=root)
    return {"root": root, "procs": procs}


def without_durations(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: without_durations(v) for k, v in data.items() if k != "duration_s"}
    if isinstance(data, list):
        return [without_durations(v) for v in data]
    return data


def junit_shape(path: Path) -> list[tuple[str, dict[str, str], str | None]]:
    """Every element's tag, attributes (times left out) and text, in document order."""
    return [
        (e.tag, {k: v for k, v in e.attrib.items() if k != "time"}, (e.text or "").strip() or None)
        for e in ET.parse(path).getroot().iter()
    ]


def edited(runs, tmp_path: Path, name: str, edit) -> Path:
    """A copy of a shard's report with `edit(data)` applied."""
    data = json.loads((runs["root"] / name).read_text())
    edit(data)
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_the_shards_split_the_targets(runs):
    root = runs["root"]
    shards = [json.loads((root / f"s{k}.json").read_text()) for k in (1, 2)]
    assert all(runs["procs"][name].returncode == 1 for name in ("all", "s1", "s2"))
    assert [len(s["targets"]) for s in shards] == [3, 2]
    assert [s["run"]["shard"] for s in shards] == [[1, 2], [2, 2]] and shards[0]["run"]["planned"] == 5


def test_merged_shards_give_the_unsharded_run(runs, tmp_path):
    root = runs["root"]
    # In either order: the targets come back in the plan's order.
    proc = run_cli(
        "merge", "s2.json", "s1.json", "--json", tmp_path / "m.json", "--junit", tmp_path / "m.xml", cwd=root
    )
    unsharded = runs["procs"]["all"]
    assert proc.returncode == unsharded.returncode == 1, proc.stdout + proc.stderr
    merged, whole = (json.loads(p.read_text()) for p in (tmp_path / "m.json", root / "all.json"))
    assert without_durations(merged) == without_durations(whole)
    assert [t["position"] for t in merged["targets"]] == [0, 1, 2, 3, 4]
    assert merged["run"]["shard"] is None and merged["summary"]["failed"] == 2
    assert junit_shape(tmp_path / "m.xml") == junit_shape(root / "all.xml")

    # The console report is the unsharded run's, but for the times.
    def lines(text: str) -> list[str]:
        return [line.split(" in ")[0].split(" Time elapsed")[0] for line in text.splitlines()]

    assert lines(proc.stdout) == lines(unsharded.stdout)


def test_a_missing_shard_is_named(runs, tmp_path):
    one_line_usage_error(run_cli("merge", "s1.json", cwd=runs["root"]), "Error: shard 2/2 is missing")
    root = runs["root"]
    for k in (1, 3):
        run_cli("run", "layers", "--shard", f"{k}/3", "--json", tmp_path / f"t{k}.json", cwd=root)
    proc = run_cli("merge", tmp_path / "t1.json", tmp_path / "t3.json", cwd=root)
    one_line_usage_error(proc, "Error: shard 2/3 is missing")
    one_line_usage_error(run_cli("merge", tmp_path / "t1.json", cwd=root), "shards 2/3, 3/3 are missing")
    # Shards of another split do not fit.
    proc = run_cli("merge", "s1.json", tmp_path / "t3.json", cwd=root)
    one_line_usage_error(
        proc, f"s1.json is shard 1/2 and {tmp_path / 't3.json'} is shard 3/3: shards of different splits"
    )


def test_a_shard_given_twice_is_refused(runs):
    proc = run_cli("merge", "s1.json", "s2.json", "s1.json", cwd=runs["root"])
    one_line_usage_error(proc, "Error: shard 1/2 is given twice: s1.json and s1.json")


def test_shards_run_with_other_settings_are_refused(runs, tmp_path):
    root = runs["root"]
    other = tmp_path / "seed.json"
    assert run_cli("run", "layers", "--shard", "2/2", "--seed", "1", "--json", other, cwd=root).returncode == 1
    proc = run_cli("merge", "s1.json", other, cwd=root)
    one_line_usage_error(proc, f"s1.json and {other} were run with different settings")


@pytest.mark.parametrize(
    "field, value, needle",
    [
        ("versions", {"numpy": "0.0.1"}, "were run with different versions (numpy "),
        ("strict", True, "s2.json was run with --strict, s1.json without"),
        ("baseline", "0123456789abcdef", "were run with different --baseline files"),
        ("planned", 6, "were run with different settings"),
    ],
)
def test_shards_of_different_runs_are_refused(runs, tmp_path, field, value, needle):
    def edit(data):
        run = data["run"]
        run[field] = {**run[field], **value} if isinstance(value, dict) else value

    proc = run_cli("merge", "s1.json", edited(runs, tmp_path, "s2.json", edit), cwd=runs["root"])
    one_line_usage_error(proc, needle)


def test_targets_at_one_position_twice_are_refused(runs, tmp_path):
    def edit(data):
        data["targets"][0]["position"] = 0  # shard 1 holds position 0

    proc = run_cli("merge", "s1.json", edited(runs, tmp_path, "s2.json", edit), cwd=runs["root"])
    one_line_usage_error(proc, f"s1.json and {tmp_path / 's2.json'} both hold the target at position 0 (layers/")


@pytest.mark.parametrize(
    "content, needle",
    [
        ("{", "not a JSON report of layercheck (not JSON: line 1, column 2:"),
        ("[1]", "not a JSON report of layercheck (no version and targets)"),
        ('{"version": "9", "targets": []}', "report version '9'; this layercheck merges version '1.0'"),
        ('{"version": "1.0", "targets": []}', "the report records no run to merge"),
        ('{"version": "1.0", "targets": [], "run": {"shard": [3, 2]}}', "its run record is not one layercheck writes"),
        ('{"version": "1.0", "targets": [{"target": "a.py", "bogus": 1}]}', "unknown field(s) 'bogus'"),
    ],
)
def test_a_malformed_or_foreign_file_is_one_line(tmp_path, content, needle):
    path = tmp_path / "r.json"
    path.write_text(content)
    one_line_usage_error(run_cli("merge", path), f"Error: {path}: ", needle)


def test_a_target_without_a_position_is_refused(runs, tmp_path):
    def edit(data):
        data["targets"][1]["position"] = None

    path = edited(runs, tmp_path, "s1.json", edit)
    one_line_usage_error(run_cli("merge", path, "s2.json", cwd=runs["root"]), "has no place in the run's plan of 5")


def test_a_junit_file_or_a_missing_file_is_refused(runs):
    one_line_usage_error(run_cli("merge", "s1.xml", cwd=runs["root"]), "s1.xml: not a JSON report of layercheck")
    one_line_usage_error(run_cli("merge", "nothing.json", cwd=runs["root"]), "nothing.json: no such file")
    one_line_usage_error(run_cli("merge", cwd=runs["root"]), "Missing argument")


def test_merge_honours_strict_as_the_shards_were_run(tmp_path):
    layer = tmp_path / "undecidable.py"
    layer.write_text(_UNDECIDABLE)
    args = ("run", layer, "--checks", "gradients_are_numerically_correct", "--dtype", "float64", "--shard", "1/1")
    for name, extra in (("lenient", ()), ("strict", ("--strict",))):
        assert run_cli(*args, *extra, "--json", tmp_path / f"{name}.json").returncode == (name == "strict")
    lenient = run_cli("merge", tmp_path / "lenient.json")
    assert lenient.returncode == 0 and "--strict" not in lenient.stdout, lenient.stdout
    strict = run_cli("merge", tmp_path / "strict.json")
    assert strict.returncode == 1 and "--strict: 1 incomplete check fails the run" in strict.stdout, strict.stdout


def test_merge_keeps_known_failures_known(tmp_path):
    """Shards run with one --baseline merge into known failures, and exit 0."""
    baseline = tmp_path / "b.json"
    target = str(SAMPLES / "buggy" / "srelu_swapped.py")
    assert run_cli("run", target, "--update-baseline", baseline).returncode == 0
    shard = tmp_path / "s.json"
    assert run_cli("run", target, "--baseline", baseline, "--shard", "1/1", "--json", shard).returncode == 0
    proc = run_cli("merge", shard, "--json", tmp_path / "m.json")
    assert proc.returncode == 0 and "1 known (baseline)" in proc.stdout, proc.stdout
    assert json.loads((tmp_path / "m.json").read_text())["targets"][0]["status"] == "known"


def test_no_merged_report_overwrites_a_shard_it_reads(runs, tmp_path):
    root = runs["root"]
    shards = {name: (root / name).read_bytes() for name in ("s1.json", "s2.json")}
    proc = run_cli("merge", "s1.json", "s2.json", "--json", "s1.json", cwd=root)
    one_line_usage_error(proc, "Error: --json s1.json would overwrite s1.json, a report being merged: give --json")
    # However the path is spelled: through a link, and through `..`.
    (tmp_path / "link.html").symlink_to(root / "s2.json")
    proc = run_cli("merge", "s1.json", "s2.json", "--html", tmp_path / "link.html", cwd=root)
    one_line_usage_error(proc, f"Error: --html {tmp_path / 'link.html'} would overwrite s2.json, a report being merged")
    proc = run_cli("merge", "s1.json", "s2.json", "--junit", "layers/../s1.json", cwd=root)
    one_line_usage_error(proc, "Error: --junit layers/../s1.json would overwrite s1.json, a report being merged")
    assert {name: (root / name).read_bytes() for name in shards} == shards


def test_json_dash_writes_the_report_alone_to_stdout(runs):
    root = runs["root"]
    proc = run_cli("run", "layers/srelu_swapped.py", "--json", "-", cwd=root)
    assert proc.returncode == 1
    report = json.loads(proc.stdout)  # the whole of stdout is one JSON document
    assert report["targets"][0]["status"] == "failed"
    assert "FAILED layers/srelu_swapped.py" in proc.stderr and "Test Summary:" in proc.stderr
    # A file of that name is not written; without `-` the console is on stdout.
    assert not (root / "-").exists()
    plain = run_cli("run", "layers/srelu_swapped.py", cwd=root)
    assert "Test Summary:" in plain.stdout and "Test Summary:" not in plain.stderr
    merged = run_cli("merge", "s1.json", "s2.json", "--json", "-", cwd=root)
    assert merged.returncode == 1 and len(json.loads(merged.stdout)["targets"]) == 5
    assert "Test Summary:" in merged.stderr


def test_junit_dash_writes_junit_alone_and_only_one_report_takes_stdout(runs):
    root = runs["root"]
    proc = run_cli("run", "layers/srelu.py", "--junit", "-", cwd=root)
    assert proc.returncode == 0 and ET.fromstring(proc.stdout).tag == "testsuites", proc.stdout
    both = run_cli("run", "layers/srelu.py", "--json", "-", "--junit", "-", cwd=root)
    one_line_usage_error(both, "--json and --junit both name standard output (-); give one a file")


def test_the_environment_of_shards_says_where_they_differ_and_claims_nothing_for_all():
    from layercheck.environment import Environment
    from layercheck.merging import merged_environment

    laptop = Environment(
        python="3.11.7", numpy="2.1.0", gpu=None, seeds=(0,), devices=("auto",), variables={"CUPY_TF32": None}
    )
    gpu_box = Environment(
        python="3.11.7", numpy="2.1.0", gpu="NVIDIA H100", seeds=(1,), devices=("auto",), variables={"CUPY_TF32": "1"}
    )
    merged = merged_environment([laptop, gpu_box])
    assert merged.python == "3.11.7" and merged.numpy == "2.1.0"  # agreed: said once
    assert merged.gpu == "none | NVIDIA H100"
    assert merged.variables == {"CUPY_TF32": "none | 1"}
    assert merged.seeds == (0, 1) and merged.devices == ("auto",)
    assert merged_environment([laptop, laptop]) == laptop
    assert merged_environment([None, None]) is None
