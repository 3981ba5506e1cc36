"""The JSON report against its published JSON Schema (docs/report.schema.json, issue 37): every
way a run can end writes a report the schema accepts, and the schema refuses what is not one."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from conftest import REPO, load_layer, run_cli

from layercheck.results import CONTRACT_CHECK, Call, Report, Status

jsonschema = pytest.importorskip("jsonschema")

SCHEMA = json.loads((REPO / "docs" / "report.schema.json").read_text(encoding="utf-8"))
SAMPLES = REPO / "sample_layers"
BROKEN = "import numpy as np\n\nclass Broken:\n    def predict(self, X)\n        return X\n"
BACKWARD_RAISES = """import numpy as np

class Raises:
    example_layout = "4,3:CB"

    def predict(self, X):
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        raise RuntimeError("not written yet")


class TwoGradients:
    example_layout = "4,3:CB"

    def predict(self, X):
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        return 2 * dLdY, dLdY
"""


def errors(report: object) -> list[str]:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    return [f"{error.json_path}: {error.message[:200]}" for error in validator.iter_errors(report)]


def test_the_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """One report per way a run ends: failures with reproducers, errors, undecided checks, a
    baseline's known failures, and two shards merged."""
    folder = tmp_path_factory.mktemp("schema")
    (folder / "broken.py").write_text(BROKEN)
    (folder / "raises.py").write_text(BACKWARD_RAISES)
    targets = [SAMPLES / "buggy" / "srelu_swapped.py", SAMPLES / "prelu.py", folder / "broken.py", folder / "raises.py"]
    made: dict[str, dict] = {}
    proc = run_cli("run", *targets, "--json", folder / "run.json", "--repro", folder / "repro", "-q", cwd=folder)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    made["run"] = json.loads((folder / "run.json").read_text())
    proc = run_cli("run", *targets, "--update-baseline", folder / "baseline.json", "-q", cwd=folder)
    proc = run_cli("run", *targets, "--baseline", folder / "baseline.json", "--json", folder / "known.json", cwd=folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    made["known"] = json.loads((folder / "known.json").read_text())
    for k in (1, 2):
        run_cli("run", *targets, "--shard", f"{k}/2", "--json", folder / f"shard{k}.json", "-q", cwd=folder)
    proc = run_cli(
        "merge", folder / "shard1.json", folder / "shard2.json", "--json", folder / "merged.json", cwd=folder
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    made["merged"] = json.loads((folder / "merged.json").read_text())
    return made


@pytest.mark.parametrize("name", ["run", "known", "merged"])
def test_every_report_a_run_writes_fits_the_schema(reports: dict[str, dict], name: str):
    assert errors(reports[name]) == []


def test_the_reports_hold_what_the_schema_describes(reports: dict[str, dict]):
    """Not an empty pass: the reports exercise the schema's every kind of target and check."""
    run, known = reports["run"], reports["known"]
    statuses = {target["status"] for target in run["targets"]}
    assert statuses == {"failed", "passed", "error"}
    checks = [check for target in run["targets"] for check in target["checks"]]
    assert any("repro" in check for check in checks)
    assert any(check["details"].get("findings") for check in checks)
    assert {check["details"].get("blocked_by") for check in checks} >= {"backward"}
    assert any(check["details"].get("broke_contract") for check in checks)
    assert {target["status"] for target in known["targets"]} == {"known", "passed", "incomplete"}


def test_the_schema_names_every_call_a_check_can_be_blocked_by():
    assert SCHEMA["$defs"]["details"]["properties"]["blocked_by"]["enum"] == [call.value for call in Call]
    assert set(SCHEMA["$defs"]["check"]["properties"]["status"]["enum"]) == {
        s.value for s in Status if s is not Status.ERROR
    }


def test_a_report_from_the_api_fits_the_schema():
    import layercheck

    report = Report([layercheck.check_layer(load_layer(SAMPLES / "prelu.py")(), "4,4,3,2:SSCB")])
    assert report.targets[0].status is Status.PASSED
    assert errors(json.loads(json.dumps(report.to_dict()))) == []


def test_every_call_a_check_is_blocked_by_is_reported_by_a_registered_check():
    from layercheck.checks import REGISTRY

    reporters = {call.check for call in Call if call.check is not None}
    assert reporters and reporters <= set(REGISTRY)
    assert CONTRACT_CHECK in REGISTRY


@pytest.mark.parametrize(
    "path, value",
    [
        (("version",), "2.0"),
        (("targets", 0, "status"), "fine"),
        (("targets", 0, "checks", 0, "status"), "ok"),
        (("targets", 0, "checks", 0, "details"), "a string"),
        (("targets", 0, "summary", "passed"), -1),
        (("summary",), {"passed": 1}),
        (("targets", 0, "source"), {"path": "a.py"}),
    ],
)
def test_the_schema_refuses_what_is_not_a_report(reports: dict[str, dict], path: tuple, value: object):
    report = copy.deepcopy(reports["run"])
    place = report
    for key in path[:-1]:
        place = place[key]
    place[path[-1]] = value
    assert errors(report), f"{path} = {value!r} was accepted"


def test_the_docs_link_the_schema():
    assert "report.schema.json" in (REPO / "docs" / "reports.md").read_text(encoding="utf-8")


def test_a_blocked_check_names_its_call_typed(reports: dict[str, dict], tmp_path: Path):
    """`details.blocked_by` read back is the typed `Call`, for every reporter."""
    report = Report.from_dict(reports["run"])
    blocked = [check.blocked for target in report.targets for check in target.checks if check.blocked is not None]
    assert blocked and all(isinstance(b.call, Call) for b in blocked)
