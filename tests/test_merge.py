"""`layercheck merge A.json B.json ...` (issue 28): the reports of a run's shards merged into
the report of the unsharded run (order, summary, exit status); shards that do not fit
together refused in one line. And `--json -`: the JSON report alone on standard output.

Issue 36, a hostile user's shards: one run on other contents of a file (each shard records
the digest of every file it checked), one whose statuses were relabelled, and shard text
holding GitHub workflow commands (merge prints it with commands stopped, as run does)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from conftest import CLI_LAYERS, SAMPLES, one_line_usage_error, run_cli
from test_ci_logs import BACKWARD, _after_resume, _bad, _env
from test_cli import _UNDECIDABLE

from layercheck.baseline import Baseline
from layercheck.checks import REGISTRY
from layercheck.errors import UsageError
from layercheck.merging import exit_status, merge_shards, read_shard
from layercheck.runinfo import baseline_digest, shard_of
from layercheck.running.batch import run_batch
from layercheck.running.plan import make_batch
from layercheck.running.sources import SourceRecord
from layercheck.sandbox.integrity import INTEGRITY_CHECK

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


def _another_baseline(data: dict[str, Any]) -> None:
    data["run"]["baseline_entries"] = {"layers/a.py": ["target"]}
    data["run"]["baseline"] = baseline_digest([("layers/a.py", "target")])


def _a_longer_plan(data: dict[str, Any]) -> None:
    data["run"]["planned"] = 6
    data["run"]["plan"].append("layers/zz.py")  # sorted last: every other target keeps its shard


def _another_order(data: dict[str, Any]) -> None:
    """The plan alone differs (its targets dropped, or they would not be where it has them)."""
    data["run"]["plan"].reverse()
    data["targets"] = []
    data["summary"] = dict.fromkeys(data["summary"], 0)


@pytest.mark.parametrize(
    "edit, needle",
    [
        (lambda data: data["run"]["versions"].update(numpy="0.0.1"), "were run with different versions (numpy "),
        (lambda data: data["run"].update(strict=True), "s2.json was run with --strict, s1.json without"),
        (_another_baseline, "were run with different --baseline files"),
        (_a_longer_plan, "were run with different settings"),
        (_another_order, "were run with different settings"),
    ],
    ids=["versions", "strict", "baseline", "planned", "plan"],
)
def test_shards_of_different_runs_are_refused(runs, tmp_path, edit, needle):
    proc = run_cli("merge", "s1.json", edited(runs, tmp_path, "s2.json", edit), cwd=runs["root"])
    one_line_usage_error(proc, needle)


def test_a_target_given_twice_in_a_shard_is_refused(runs, tmp_path):
    def edit(data):
        target = data["targets"][0]
        data["targets"].append(target)
        for status, n in target["summary"].items():
            data["summary"][status] += n

    path = edited(runs, tmp_path, "s1.json", edit)
    proc = run_cli("merge", path, "s2.json", cwd=runs["root"])
    one_line_usage_error(proc, f"Error: {path} holds the target at position 0 (layers/")
    assert proc.stderr.rstrip().endswith(") twice"), proc.stderr


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
    proc = run_cli("merge", "s1.json", "s2.json", "--json", "./nope/../s2.json", cwd=root)  # no nope/ to go up from
    one_line_usage_error(proc, "Error: --json ./nope/../s2.json would overwrite s2.json, a report being merged")
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


def test_html_dash_writes_the_page_alone_to_stdout(runs):
    """Every report format takes `-` alike: the console then goes to stderr. (`--html -` once
    wrote the console's lines into the page's stream.)"""
    root = runs["root"]
    for command in (["run", "layers/srelu.py"], ["merge", "s1.json", "s2.json"]):
        proc = run_cli(*command, "--html", "-", cwd=root)
        # the page, whole and alone (its title holds the summary line too)
        assert proc.stdout.startswith("<!DOCTYPE html>") and proc.stdout.rstrip().endswith("</html>"), proc.stdout[:200]
        assert proc.stderr.rstrip().splitlines()[-1].startswith("Test Summary:")


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


# -- what a shard checked: every file with its digest (issue 36) -------------------------------


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_shard_records_every_planned_file_relative_to_its_working_folder(runs):
    root = runs["root"]
    shards = [json.loads((root / f"s{k}.json").read_text())["run"]["sources"] for k in (1, 2)]
    # The whole plan's files, in each shard (not only the files of its own targets).
    files = {f"layers/{name}": _sha256(root / "layers" / name) for name in LAYERS}
    for sources in shards:
        assert {path: sources[path] for path in files} == files
    merged = json.loads(run_cli("merge", "s1.json", "s2.json", "--json", "-", cwd=root).stdout)
    assert merged["run"]["sources"] == {**shards[0], **shards[1]}


def test_a_shard_run_on_other_contents_of_a_file_is_refused_naming_it(runs, tmp_path):
    """Shard 2 run on an older version of a file of shard 1's target: shard 2 never checked
    it, but hashed it as it planned the whole run, so that the two are seen to differ."""
    root = runs["root"]
    mine = read_shard(str(root / "s1.json"))
    changed = "layers/srelu_swapped.py"
    assert any(t.target.startswith(changed) for t in mine.report.targets)
    for name, older in (("clone", False), ("older", True)):
        shutil.copytree(root / "layers", tmp_path / name / "layers")
        if older:
            path = tmp_path / name / changed
            path.write_text(path.read_text() + "\n# as it was last week\n")
        args = ("run", "layers", "--no-cache", "--shard", "2/2", "--json", "s2.json")
        assert run_cli(*args, cwd=tmp_path / name).returncode == 1
    # A clone in another folder holding the same files fits: paths are the working folder's.
    clone = read_shard(str(tmp_path / "clone" / "s2.json"))
    assert len(merge_shards([mine, clone]).targets) == 5
    older = read_shard(str(tmp_path / "older" / "s2.json"))
    assert not any(t.target.startswith(changed) for t in older.report.targets)
    with pytest.raises(UsageError) as refused:
        merge_shards([mine, older])
    now, then = _sha256(root / changed), _sha256(tmp_path / "older" / changed)
    assert str(refused.value) == (
        f"{root / 's1.json'} and {tmp_path / 'older' / 's2.json'} were run on different contents of {changed} "
        f"(SHA-256 {now[:12]}... and {then[:12]}...): shards of different sources; run every shard on the same files"
    )


def _with_source(path: str, digest: str):
    def edit(data):
        data["run"]["sources"][path] = digest

    return edit


def test_a_file_one_shard_did_not_record_fits_and_one_recorded_otherwise_does_not(runs, tmp_path):
    """A module only shard 2's targets import is in shard 2's record alone: no difference. Two
    digests of one file are, an unreadable one ("") too."""
    root = runs["root"]
    helper = "helpers/common.py"
    s1 = read_shard(str(root / "s1.json"))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    only_2 = read_shard(str(edited(runs, tmp_path / "a", "s2.json", _with_source(helper, "a" * 64))))
    assert dict(merge_shards([s1, only_2]).run.sources)[helper] == "a" * 64
    both = read_shard(str(edited(runs, tmp_path, "s1.json", _with_source(helper, "b" * 64))))
    with pytest.raises(
        UsageError, match=re.escape(f"different contents of {helper} (SHA-256 bbbbbbbbbbbb... and aaaa")
    ):
        merge_shards([both, only_2])
    unread = read_shard(str(edited(runs, tmp_path / "b", "s2.json", _with_source(helper, ""))))
    with pytest.raises(UsageError, match=re.escape("and none: unreadable, or edited while that shard ran)")):
        merge_shards([both, unread])


@pytest.mark.parametrize(
    "edit, needle",
    [
        (lambda run: run.pop("sources"), "its run record holds no sources (the files it checked, with their digests)"),
        (lambda run: run.update(sources=["a.py"]), "its run's sources are not a mapping of file to SHA-256"),
        (lambda run: run["sources"].update({"a.py": "F" * 64}), "its run's sources give 'a.py' the digest 'FFFF"),
        (lambda run: run["sources"].update({"a.py": None}), "its run's sources give 'a.py' the digest 'None'"),
        (lambda run: run["sources"].update({"": "0" * 64}), "its run's sources name '', not a path"),
    ],
)
def test_a_shard_without_a_record_of_its_sources_is_refused(runs, tmp_path, edit, needle):
    path = edited(runs, tmp_path, "s1.json", lambda data: edit(data["run"]))
    with pytest.raises(UsageError, match=re.escape(f"{path}: not a JSON report of layercheck: {needle}")):
        read_shard(str(path))


def test_the_record_of_what_a_run_checked(tmp_path, monkeypatch):
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    (work / "sub").mkdir(parents=True)
    elsewhere.mkdir()
    (work / "sub" / "a.py").write_text("A = 1\n")
    (elsewhere / "b.py").write_text("B = 1\n")
    (work / "link.py").symlink_to(work / "sub" / "a.py")
    monkeypatch.chdir(work)
    record = SourceRecord()
    record.hash(str(work / "sub" / "a.py"))
    record.hash(str(work / "link.py"))  # the same file: recorded once, by its real path
    record.hash(str(elsewhere / "b.py"))
    record.hash(str(work / "missing.py"))
    assert record.recorded() == (
        (str(elsewhere.resolve() / "b.py"), _sha256(elsewhere / "b.py")),  # outside: absolute
        ("missing.py", ""),  # could not be read
        ("sub/a.py", _sha256(work / "sub" / "a.py")),
    )
    # A file seen with two contents in one run claims none.
    record.add(str(work / "sub" / "a.py"), "0" * 64)
    record.add(str(work / "sub" / "a.py"), _sha256(work / "sub" / "a.py"))
    assert dict(record.recorded())["sub/a.py"] == ""


_IMPORTING = """\
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
{at_import}


class {name}:
    example_layout = "4,3:CB"

    def predict(self, X):
        {lazily}
        return helper.K * X
"""


def test_a_shard_records_the_modules_its_targets_import(tmp_path, monkeypatch):
    """At discovery, for every planned target (each shard imports them all); while checking,
    what its own targets import later (inside predict)."""
    (tmp_path / "at_import.py").write_text("K = 2.0\n")
    (tmp_path / "lazily.py").write_text("K = 2.0\n")
    (tmp_path / "a.py").write_text(_IMPORTING.format(name="A", at_import="import at_import as helper", lazily="pass"))
    (tmp_path / "b.py").write_text(_IMPORTING.format(name="B", at_import="", lazily="import lazily as helper"))
    monkeypatch.chdir(tmp_path)
    recorded = []
    for k in (1, 2):
        batch = make_batch(
            ["a.py", "b.py"], shard=f"{k}/2", no_cache=True, settings={"checks": "predict_does_not_error"}
        )
        report = run_batch(batch)
        assert [t.status.value for t in report.targets] == ["passed"], report.targets
        # The files of the working folder (recorded relative to it). On Python 3.13 a run started
        # from pytest's own process also records the modules of pytest's that its workers import.
        recorded.append({name: digest for name, digest in report.run.sources if not os.path.isabs(name)})
    planned = {name: _sha256(tmp_path / name) for name in ("a.py", "b.py", "at_import.py")}
    assert recorded[0] == planned  # shard 1 checks a.py: b.py's lazy import is not its to see
    assert recorded[1] == {**planned, "lazily.py": _sha256(tmp_path / "lazily.py")}


# -- statuses that do not fit the checks or the run (issue 36) ---------------------------------


def _target(data, status: str) -> dict[str, Any]:
    return next(t for t in data["targets"] if t["status"] == status)


def _failed_check(target: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in target["checks"] if c["status"] == "failed")


def _known(data) -> None:
    """Shard 1's failed check relabelled known, every summary and status made to fit."""
    target = _target(data, "failed")
    _failed_check(target)["status"] = "known"
    target["status"] = "known"
    for summary in (target["summary"], data["summary"]):
        summary["failed"] -= 1
        summary["known"] += 1


def _error_known(data) -> None:
    _target(data, "error")["status"] = "known"


def _passed(data) -> None:
    _target(data, "failed")["status"] = "passed"


def _uncounted(data) -> None:
    summary = _target(data, "failed")["summary"]
    summary["failed"] -= 1
    summary["passed"] += 1


def _true(data) -> None:
    _target(data, "failed")["summary"]["failed"] = True


def _no_status(data) -> None:
    del _target(data, "error")["status"]


def _report_summary(data) -> None:
    data["summary"]["failed"] = 0


@pytest.mark.parametrize(
    "edit, needle, also",
    [
        (_known, "{failed}: its check {check} is marked known, but the run recorded no --baseline", ""),
        (_error_known, "{error}: its error is marked known, but the run recorded no --baseline", ""),
        (_passed, "{failed} has the status 'passed', but its checks and error make it failed", ""),
        (_no_status, "{error} has the status None, but its checks and error make it error", ""),
        (_uncounted, "the summary of {failed} does not count its checks (it says ", " 0 failed, "),
        (_true, "the summary of {failed} does not count its checks (it says ", " True failed, "),
        (_report_summary, "the report's summary does not add up its targets' checks (it says ", " 0 failed, "),
    ],
)
def test_a_shard_whose_statuses_do_not_fit_is_refused_naming_what(runs, tmp_path, edit, needle, also):
    data = json.loads((runs["root"] / "s1.json").read_text())
    names = {
        "failed": f"target {_target(data, 'failed')['target']}",
        "error": f"target {_target(data, 'error')['target']}",
        "check": _failed_check(_target(data, "failed"))["name"],
    }
    path = edited(runs, tmp_path, "s1.json", edit)
    with pytest.raises(UsageError) as refused:
        read_shard(str(path))
    message = str(refused.value)
    assert message.startswith(f"{path}: {needle.format(**names)}"), message
    if also:  # what it says, then what the checks count
        said, counted = message.split("; they are ")
        assert also in said and " 1 failed, " in counted, message
    # As the command line says it: one line, exit 2.
    if edit is _known:
        one_line_usage_error(run_cli("merge", path, "s2.json", cwd=runs["root"]), "is marked known")


def test_known_statuses_of_a_run_that_recorded_a_baseline_are_read(runs, tmp_path):
    """The lookalike of the relabelled shard: a run with --baseline marks failures known."""

    def edit(data):
        _known(data)
        target = _target(data, "known")
        check = next(c["name"] for c in target["checks"] if c["status"] == "known")
        data["run"]["baseline_entries"] = {target["target"]: [check]}
        data["run"]["baseline"] = baseline_digest([(target["target"], check)])

    shard = read_shard(str(edited(runs, tmp_path, "s1.json", edit)))
    (target,) = [t for t in shard.report.targets if t.checks and t.status.value == "known"]
    assert shard.report.summary["known"] == 1 and target.ok


def test_a_clean_merge_exits_as_the_unsharded_run(runs):
    root = runs["root"]
    merged = merge_shards([read_shard(str(root / f"s{k}.json")) for k in (2, 1)])
    whole = read_shard(str(root / "all.json")).report
    assert exit_status(merged, strict=False) == exit_status(whole, strict=False) == runs["procs"]["all"].returncode
    assert merged.summary == whole.summary
    assert [t.status for t in merged.targets] == [t.status for t in whole.targets]


# -- each target where the plan has it, in its own shard (issue 36) ----------------------------


def test_shard_of_deals_the_sorted_labels_round_robin():
    # Sorted: a (position 1), a (3), b (2), c (0); a label twice by its position.
    assert shard_of(["c", "a", "b", "a"], 2) == [2, 1, 1, 2]
    assert shard_of(["c", "a", "b", "a"], 1) == [1, 1, 1, 1]
    assert shard_of(["b", "a"], 3) == [2, 1]  # a shard may have no share


def test_every_shard_records_the_whole_plan_and_holds_its_share_of_it(runs):
    root = runs["root"]
    whole = read_shard(str(root / "all.json"))
    assert whole.run.plan == tuple(target.target for target in whole.report.targets)
    for k in (1, 2):
        shard = read_shard(str(root / f"s{k}.json"))
        assert shard.run.plan == whole.run.plan
        dealt = shard_of(shard.run.plan, 2)
        assert [t.position for t in shard.report.targets] == [p for p in range(5) if dealt[p] == k]
    assert json.loads((root / "s1.json").read_text())["run"]["plan"] == list(whole.run.plan)


def _recount(data: dict[str, Any], removed: dict[str, Any] | None, added: dict[str, Any] | None) -> None:
    """The report's summary made to count the checks of target `added` and not of `removed`."""
    for status in data["summary"]:
        data["summary"][status] += (added or {"summary": {}})["summary"].get(status, 0)
        data["summary"][status] -= (removed or {"summary": {}})["summary"].get(status, 0)


def _copied_over(data: dict[str, Any]) -> None:
    """Shard 1's failing target replaced by a copy of its passing one, at the failing one's
    position, the summary made to fit: the merge would pass."""
    failing, passing = _target(data, "failed"), _target(data, "passed")
    data["targets"][data["targets"].index(failing)] = {**passing, "position": failing["position"]}
    _recount(data, failing, passing)


def _swapped(data: dict[str, Any]) -> None:
    first, second = data["targets"][:2]
    first["position"], second["position"] = second["position"], first["position"]


def test_a_target_where_the_plan_has_another_is_refused(runs, tmp_path):
    plan = read_shard(str(runs["root"] / "s1.json")).run.plan
    path = edited(runs, tmp_path, "s1.json", _copied_over)
    with pytest.raises(UsageError) as refused:
        read_shard(str(path))
    (passing,) = [label for label in plan if label.startswith("layers/prelu.py")]
    (failing,) = [label for label in plan if label.startswith("layers/srelu_swapped.py")]
    assert str(refused.value) == (
        f"{path}: target {passing} is at position {plan.index(failing)}, where the run's plan has {failing}"
    )
    one_line_usage_error(run_cli("merge", path, "s2.json", cwd=runs["root"]), f"target {passing} is at position ")
    # Two targets that traded places: the first is where the plan has the second.
    (tmp_path / "swapped").mkdir()
    path = edited(runs, tmp_path / "swapped", "s1.json", _swapped)
    first, second = read_shard(str(runs["root"] / "s1.json")).report.targets[:2]
    with pytest.raises(UsageError) as refused:
        read_shard(str(path))
    assert str(refused.value) == (
        f"{path}: target {first.target} is at position {second.position}, where the run's plan has {second.target}"
    )


def test_a_target_moved_to_another_shard_is_refused(runs, tmp_path):
    """Shard 2's passing target moved, at its own position, into shard 1: every position is
    held once, but shard 1 never checks it."""
    moved = json.loads((runs["root"] / "s2.json").read_text())
    target = _target(moved, "passed")
    moved["targets"].remove(target)
    _recount(moved, target, None)
    (tmp_path / "s2.json").write_text(json.dumps(moved))
    read_shard(str(tmp_path / "s2.json"))  # shard 2 without it holds only its own targets

    def edit(data):
        data["targets"].append(target)
        _recount(data, None, target)

    (tmp_path / "one").mkdir()
    path = edited(runs, tmp_path / "one", "s1.json", edit)
    with pytest.raises(UsageError) as refused:
        read_shard(str(path))
    assert str(refused.value) == (
        f"{path}: target {target['target']} (position {target['position']}) is not in the share of shard 1/2: "
        "the plan deals it to shard 2/2"
    )


# -- known failures: those the run's baseline accepts (issue 36) ------------------------------


@pytest.fixture(scope="module")
def baselined(runs) -> dict[str, Any]:
    """The layers of `runs` checked with a baseline that accepts the failures of
    srelu_swapped.py alone (missing_dx.py fails, import_raises.py cannot be checked)."""
    root = runs["root"]
    every = json.loads((root / "all.json").read_text())
    (swapped,) = [t for t in every["targets"] if t["target"].startswith("layers/srelu_swapped.py")]
    failures = {swapped["target"]: [c["name"] for c in swapped["checks"] if c["status"] == "failed"]}
    (root / "base.json").write_text(json.dumps({"version": 1, "failures": failures}))
    args = ("run", "layers", "--no-cache", "--baseline", "base.json", "--shard", "1/1", "--json", "b.json")
    proc = run_cli(*args, cwd=root)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # missing_dx.py fails
    return {"root": root, "shard": root / "b.json", "baseline": root / "base.json"}


def test_a_run_records_its_baselines_entries(baselined):
    shard = read_shard(str(baselined["shard"]))
    baseline = Baseline.load(str(baselined["baseline"]), (*REGISTRY, INTEGRITY_CHECK))
    entries = tuple(sorted((entry.target, entry.check) for entry in baseline.entries))
    assert entries and {target for target, _ in entries} == {"layers/srelu_swapped.py:SReLUSwapped"}
    assert shard.run.baseline_entries == entries and shard.run.baseline == baseline.digest
    written = json.loads(baselined["shard"].read_text())["run"]["baseline_entries"]
    assert written == json.loads(baselined["baseline"].read_text())["failures"]  # keyed as the baseline is
    assert shard.report.summary["known"] == 1 and shard.report.summary["failed"] == 1
    # The failures it accepts are read as known; the merge fails on the others alone.
    (known,) = [t for t in shard.report.targets if t.status.value == "known"]
    assert known.target.startswith("layers/srelu_swapped.py")
    assert exit_status(merge_shards([shard]), strict=False) == 1


def _edited_baselined(baselined, tmp_path: Path, edit) -> Path:
    data = json.loads(baselined["shard"].read_text())
    edit(data)
    path = tmp_path / "b.json"
    path.write_text(json.dumps(data))
    return path


def _forged_known(data: dict[str, Any]) -> None:
    """missing_dx.py's failure marked known, every status and summary made to fit (its other
    checks could not decide: its status is incomplete)."""
    _known(data)
    target = _target(data, "known")
    target["status"] = "incomplete" if target["summary"]["incomplete"] else "known"


def test_a_failure_marked_known_that_no_entry_accepts_is_refused(baselined, tmp_path):
    path = _edited_baselined(baselined, tmp_path, _forged_known)
    (target,) = [t for t in json.loads(path.read_text())["targets"] if t["target"].startswith("layers/missing_dx.py")]
    check = next(c["name"] for c in target["checks"] if c["status"] == "known")
    with pytest.raises(UsageError) as refused:
        read_shard(str(path))
    assert str(refused.value) == (
        f"{path}: target {target['target']}: its check {check} is marked known, but the run's --baseline has no "
        f"entry {target['target']} :: {check}"
    )
    proc = run_cli("merge", path, cwd=baselined["root"])
    one_line_usage_error(proc, f"its check {check} is marked known, but the run's --baseline has no entry ")

    # The lookalike: the same shard, of a run whose baseline held that entry, is read.
    def accepted(data):
        _forged_known(data)
        entries = {(t, c) for t, checks in data["run"]["baseline_entries"].items() for c in checks}
        entries.add((target["target"], check))
        data["run"]["baseline_entries"].setdefault(target["target"], []).append(check)
        data["run"]["baseline"] = baseline_digest(entries)

    (tmp_path / "accepted").mkdir()
    shard = read_shard(str(_edited_baselined(baselined, tmp_path / "accepted", accepted)))
    assert shard.report.summary["known"] == 2


def test_an_error_marked_known_that_no_entry_accepts_is_refused(baselined, tmp_path):
    path = _edited_baselined(baselined, tmp_path, _error_known)
    with pytest.raises(UsageError) as refused:
        read_shard(str(path))
    assert str(refused.value) == (
        f"{path}: target layers/import_raises.py: its error is marked known, but the run's --baseline has no entry "
        "layers/import_raises.py :: target"
    )


def test_an_absolute_label_refused_says_it_is_looked_up_from_the_working_folder(baselined, tmp_path):
    """A label outside the working folder is looked up as it is: the run that keyed it may
    have been run from a folder above it. The hint is said for an absolute label alone (the
    relative one above gets none)."""
    outside = f"{tmp_path}/elsewhere/layers/missing_dx.py:SReLUMissingDX"

    def edit(data):
        _forged_known(data)
        (target,) = [t for t in data["targets"] if t["target"].startswith("layers/missing_dx.py")]
        plan = data["run"]["plan"]
        plan[plan.index(target["target"])] = target["target"] = outside

    path = _edited_baselined(baselined, tmp_path, edit)
    with pytest.raises(UsageError, match=re.escape(f"has no entry {outside} :: ")) as refused:
        read_shard(str(path))
    assert str(refused.value).endswith(
        " (an absolute label is looked up relative to the working folder where it is below it: merge from the "
        "folder the shards were run in)"
    )


@pytest.mark.parametrize(
    "edit, needle",
    [
        (
            lambda run: run.pop("plan"),
            "its run record holds no plan (the label of each target it planned): a report of",
        ),
        (
            lambda run: run.pop("baseline_entries"),
            "its run record holds no baseline entries (the failures its --baseline accepts): a report of an older",
        ),
        (lambda run: run["plan"].pop(), "its run's plan is not the label of each of its 5 planned targets"),
        (lambda run: run["plan"].__setitem__(0, 7), "its run's plan is not the label of each of its 5 planned targets"),
        (
            lambda run: run.update(baseline_entries={}),
            "its run's baseline entries are not those of its baseline's fingerprint",
        ),
        (
            lambda run: run.update(baseline_entries=[["a.py", "target"]], baseline="0" * 16),
            "its run's baseline entries are not a mapping of target to check names",
        ),
        (
            lambda run: run.update(baseline_entries={"a.py": "target"}, baseline="0" * 16),
            "its run's baseline entries give 'a.py' target, not check names",
        ),
    ],
    ids=[
        "no-plan",
        "no-entries",
        "short-plan",
        "not-a-label",
        "entries-without-baseline",
        "not-a-mapping",
        "not-a-list",
    ],
)
def test_a_run_record_without_its_plan_or_baseline_entries_is_refused(runs, tmp_path, edit, needle):
    path = edited(runs, tmp_path, "s1.json", lambda data: edit(data["run"]))
    with pytest.raises(UsageError, match=re.escape(f"{path}: not a JSON report of layercheck: {needle}")):
        read_shard(str(path))


# -- GitHub workflow commands in shards (issue 36) ---------------------------------------------


def test_merge_prints_shard_text_with_workflow_commands_stopped_and_annotates_as_run(tmp_path):
    forged = "boom\n::add-mask::secret\n  ::stop-commands::mine\n##[warning]legacy"
    _bad(tmp_path, "bad.py", forged)
    env = _env(GITHUB_ACTIONS="true")
    run = run_cli(
        "run", "bad.py", "--checks", BACKWARD, "--shard", "1/1", "--json", "s.json", "-v", cwd=tmp_path, env=env
    )
    merged = run_cli("merge", "s.json", "-v", cwd=tmp_path, env=env)
    assert run.returncode == merged.returncode == 1, merged.stdout + merged.stderr
    # The shard's traceback is printed, each forged command on a line of its own, between
    # layercheck's stop and resume (`_after_resume` asserts none comes before).
    lines = [line.strip() for line in merged.stdout.splitlines()]  # the runner trims a line's spaces
    assert "::add-mask::secret" in lines and "::stop-commands::mine" in lines and "##[warning]legacy" in lines
    after = _after_resume(merged.stdout)
    # Then the annotations run gives: the failure on the layer's line, escaped.
    assert after == _after_resume(run.stdout)
    assert len(after) == 1 and after[0].startswith(f"::error file=bad.py,line=4,title=bad.py%3A {BACKWARD}::")
    assert r"boom\n::add-mask::secret\n  ::stop-commands::mine\n##[warning]legacy" in after[0]  # shown, not written


def test_a_usage_error_quoting_a_shard_is_printed_with_workflow_commands_stopped(runs, tmp_path):
    def edit(data):
        data["run"]["versions"]["numpy"] = "##[add-mask]secret"

    path = edited(runs, tmp_path, "s2.json", edit)
    proc = run_cli("merge", "s1.json", path, cwd=runs["root"], env=_env(GITHUB_ACTIONS="true"))
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout
    stop, line, resume = proc.stderr.splitlines()
    token = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", stop)
    assert token is not None and resume == f"::{token.group(1)}::"
    assert line.startswith(f"Error: s1.json and {path} were run with different versions (numpy ")
    assert "##[add-mask]secret" in line
    # Elsewhere, the one line alone.
    one_line_usage_error(run_cli("merge", "s1.json", path, cwd=runs["root"], env=_env()), "different versions")
