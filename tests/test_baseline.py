"""`layercheck run --baseline FILE` and `--update-baseline FILE` (issue 28, DESIGN.md section 9):
accepted failures, keyed on target and check, reported as `known`; only the others fail the run."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import CLI_LAYERS, GRADIENTS, SAMPLES, one_line_usage_error, run_cli

from layercheck.baseline import TARGET_ERROR
from layercheck.checks import REGISTRY
from layercheck.results import MalformedReport, Origin, TargetReport

PASSING, FAILING, BROKEN = "layers/srelu.py", "layers/srelu_swapped.py", "layers/import_raises.py"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A working folder with a passing layer, one whose gradients are wrong and one that
    cannot be imported; targets are named relative to it, as a user in a checkout does."""
    root = tmp_path_factory.mktemp("project")
    (root / "layers").mkdir()
    shutil.copy(SAMPLES / "srelu.py", root / PASSING)
    shutil.copy(SAMPLES / "buggy" / "srelu_swapped.py", root / FAILING)
    shutil.copy(CLI_LAYERS / "import_raises.py", root / BROKEN)
    return root


def write_baseline(path: Path, failures: dict, version: object = 1) -> Path:
    path.write_text(json.dumps({"version": version, "failures": failures}))
    return path


def test_update_baseline_records_every_failure_sorted_and_exits_0(project, tmp_path):
    baseline = tmp_path / "baseline.json"
    proc = run_cli("run", FAILING, BROKEN, PASSING, "--update-baseline", baseline, cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"--update-baseline {baseline}: recorded 2 failure(s)" in proc.stdout
    data = json.loads(baseline.read_text())
    assert data["version"] == 1 and "keyed on target" in data["about"]
    # The import error is the target's pseudo-check; the passing layer has no entry.
    assert data["failures"] == {FAILING: [GRADIENTS], BROKEN: [TARGET_ERROR]}
    assert list(data["failures"]) == sorted(data["failures"])
    # Nothing fails: nothing is recorded, and the run is told so.
    clean = run_cli("run", PASSING, "--update-baseline", baseline, cwd=project)
    assert clean.returncode == 0 and "recorded 0 failure(s)" in clean.stdout
    assert json.loads(baseline.read_text())["failures"] == {}


def test_the_pseudo_check_of_a_target_error_is_no_check_name():
    assert TARGET_ERROR not in REGISTRY


def test_failures_in_the_baseline_are_known_and_do_not_fail_the_run(project, tmp_path):
    baseline = write_baseline(tmp_path / "b.json", {FAILING: [GRADIENTS], BROKEN: [TARGET_ERROR]})
    report, junit = tmp_path / "r.json", tmp_path / "r.xml"
    args = ("run", FAILING, BROKEN, PASSING, "--json", report, "--junit", junit)
    without = run_cli(*args, cwd=project)
    assert without.returncode == 1 and "known" not in without.stdout.lower(), without.stdout
    proc = run_cli(*args, "--baseline", baseline, cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert f"KNOWN {FAILING} " in out and f"    KNOWN {GRADIENTS} " in out
    assert f"KNOWN  {BROKEN} (layer, no layout): could not be checked (a known failure: baseline)" in out
    assert "FAILED" not in out and "ERROR" not in out and "short summary" not in out, out
    assert ", 0 failed, 1 known (baseline), " in out
    assert "Targets: 1 passed, 0 failed, 2 with known failures only, 0 could not be checked." in out
    data = json.loads(report.read_text())
    statuses = {t["target"]: t["status"] for t in data["targets"]}
    assert statuses == {FAILING: "known", BROKEN: "known", PASSING: "passed"}
    failing = data["targets"][0]
    assert {c["name"]: c["status"] for c in failing["checks"]}[GRADIENTS] == "known"
    assert failing["summary"]["known"] == 1 and data["summary"]["known"] == 1 and data["summary"]["failed"] == 0
    assert data["targets"][1]["error"], "a known error keeps its reason"
    root = ET.parse(junit).getroot()
    assert (root.get("failures"), root.get("errors")) == ("0", "0")
    skipped = [s.get("message") for s in root.iter("skipped")]
    assert any(m.startswith("known failure (baseline): the gradients of al and tr") for m in skipped), skipped
    assert any(m.startswith("known failure (baseline): importing import_raises.py raised") for m in skipped)


def test_quiet_leaves_out_targets_with_known_failures_only(project, tmp_path):
    baseline = write_baseline(tmp_path / "b.json", {FAILING: [GRADIENTS]})
    proc = run_cli("run", FAILING, PASSING, "--baseline", baseline, "-q", cwd=project)
    assert proc.returncode == 0 and FAILING not in proc.stdout, proc.stdout
    assert "1 known (baseline)" in proc.stdout


def test_a_failure_not_in_the_baseline_fails_the_run(project, tmp_path):
    # The same check of another target, another check of the same target, and the error
    # of another target are not what the baseline records: keyed on target and check.
    baseline = write_baseline(
        tmp_path / "b.json",
        {"layers/other.py": [GRADIENTS, TARGET_ERROR], FAILING: ["backward_is_repeatable", TARGET_ERROR]},
    )
    proc = run_cli("run", FAILING, BROKEN, "--baseline", baseline, cwd=project)
    assert proc.returncode == 1, proc.stdout
    assert f"FAILED {FAILING} " in proc.stdout and f"ERROR  {BROKEN} " in proc.stdout
    assert "KNOWN" not in proc.stdout and "known (baseline)" not in proc.stdout


def test_known_failures_beside_a_new_error_fail_the_run(project, tmp_path):
    baseline = write_baseline(tmp_path / "b.json", {FAILING: [GRADIENTS]})
    # One target's failures are all known, the other's error is new: the run fails.
    proc = run_cli("run", FAILING, BROKEN, "--baseline", baseline, "--json", tmp_path / "r.json", cwd=project)
    assert proc.returncode == 1
    data = json.loads((tmp_path / "r.json").read_text())
    assert [t["status"] for t in data["targets"]] == ["known", "error"]


def test_a_stale_entry_is_said_in_one_line_and_does_not_fail(project, tmp_path):
    baseline = write_baseline(
        tmp_path / "b.json",
        {
            PASSING: [GRADIENTS, TARGET_ERROR],  # it passes and is checked: both stale
            FAILING: [GRADIENTS],  # still fails: known, not stale
            "layers/not_run.py": [GRADIENTS],  # not checked by this run: nothing said
        },
    )
    proc = run_cli("run", PASSING, FAILING, "--baseline", baseline, cwd=project)
    assert proc.returncode == 0, proc.stdout
    stale = [line for line in proc.stdout.splitlines() if "no longer fail" in line]
    assert stale == [
        f"baseline {baseline}: 2 entries no longer fail ({PASSING} :: {GRADIENTS}; {PASSING} :: {TARGET_ERROR}); "
        f"--update-baseline {baseline} drops them"
    ], proc.stdout
    # A check the run did not run is not stale either.
    only = run_cli("run", PASSING, "--checks", "predict_does_not_error", "--baseline", baseline, cwd=project)
    assert only.returncode == 0
    assert f"1 entry no longer fails ({PASSING} :: {TARGET_ERROR})" in only.stdout, only.stdout


def test_a_baseline_recorded_with_absolute_paths_holds_in_a_clone_elsewhere(project, tmp_path):
    clone = tmp_path / "clone"
    shutil.copytree(project, clone)
    baseline = tmp_path / "b.json"
    recorded = run_cli("run", project / FAILING, "--update-baseline", baseline, cwd=project)
    assert recorded.returncode == 0
    assert json.loads(baseline.read_text())["failures"] == {FAILING: [GRADIENTS]}
    proc = run_cli("run", f"./{FAILING}", "--baseline", baseline, cwd=clone)
    assert proc.returncode == 0 and "1 known (baseline)" in proc.stdout, proc.stdout


@pytest.mark.parametrize(
    "content, needles",
    [
        ("{not json", ["not a baseline layercheck wrote (not JSON: line 1, column 2"]),
        ("[]", ["not a baseline"]),
        ('{"version": 2, "failures": {}}', ["version 2; this layercheck reads baselines of version 1"]),
        ('{"failures": {}}', ["version None"]),
        ('{"version": 1, "failures": []}', ["failures: [] is not a mapping"]),
        ('{"version": 1, "failures": {"a.py": "x"}}', ["'a.py': 'x' is not a list of check names"]),
        ('{"version": 1, "failures": {"a.py": ["no_such_check"]}}', ["'no_such_check' is not a check"]),
        ('{"version": 1, "failures": {}, "extra": 1}', ["unknown key 'extra'"]),
        (b"\xff\xfe", ["not UTF-8"]),
    ],
)
def test_a_malformed_baseline_is_one_line_and_exit_2(tmp_path, content, needles):
    path = tmp_path / "b.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    proc = run_cli("run", SAMPLES / "srelu.py", "--baseline", path)
    one_line_usage_error(proc, f"--baseline {path}: ", *needles)


def test_a_missing_baseline_says_how_to_record_one(tmp_path):
    path = tmp_path / "none.json"
    proc = run_cli("run", SAMPLES / "srelu.py", "--baseline", path)
    one_line_usage_error(proc, f"no such file (record one with --update-baseline {path})")


def test_update_baseline_is_refused_with_shard(tmp_path):
    proc = run_cli("run", SAMPLES / "srelu.py", "--shard", "1/2", "--update-baseline", tmp_path / "b.json")
    one_line_usage_error(proc, "--update-baseline records every failure of a run: give it without --shard")
    assert not (tmp_path / "b.json").exists()


def test_a_worker_cannot_report_a_failure_as_known():
    """`known` is the parent's, from the baseline: a worker's report (the layer ran there)
    holding it is malformed, and a target's status is not read from it."""
    check = {"name": GRADIENTS, "status": "known", "message": "", "details": {}, "duration_s": 0.0}
    with pytest.raises(MalformedReport, match="status 'known'"):
        TargetReport.from_dict({"target": "a.py", "checks": [check]}, Origin.WORKER)
    forged = TargetReport.from_dict({"target": "a.py", "status": "known", "error": "boom"}, Origin.WORKER)
    assert forged.status == "error" and not forged.ok
    # Read back from a report file (to merge shards), it is what the run wrote.
    assert TargetReport.from_dict({"target": "a.py", "checks": [check]}, Origin.FILE).status == "known"
    assert TargetReport.from_dict({"target": "a.py", "status": "known", "error": "boom"}, Origin.FILE).ok
    # The cache holds what a worker sent: no more believed than the worker.
    with pytest.raises(MalformedReport, match="status 'known'"):
        TargetReport.from_dict({"target": "a.py", "checks": [check]}, Origin.CACHE)
