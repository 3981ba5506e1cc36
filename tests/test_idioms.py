"""What real libraries do to the process at import (tests/corpus_idioms/, issue 36): each
correct layer passes, each twin with a wrong gradient fails naming it, and no idiom is taken
for tampering. The folder is checked in one run, as CI would: each target in a worker of its
own, where the idioms (a NumPy reload among them) cannot reach the test process."""

from __future__ import annotations

import ast
import json
import os
import re

import pytest
from conftest import TESTS, run_cli
from once import once_per_run, process_data, process_of

from layercheck.sandbox.integrity import INTEGRITY_CHECK

CORPUS = TESTS / "corpus_idioms"


def _expected() -> dict[str, str]:
    """`module.py:Class` -> the first line of the class's docstring."""
    found = {}
    for path in sorted(CORPUS.glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                found[f"{path.name}:{node.name}"] = (ast.get_docstring(node) or "").splitlines()[0]
    return found


EXPECTED = _expected()


@pytest.fixture(scope="module")
def idioms_run(request, tmp_path_factory):
    """The corpus checked as one folder, once in the test run (`once_per_run`)."""

    def run() -> dict:
        out = tmp_path_factory.mktemp("idioms") / "report.json"
        # A time zone that time_zone.py's tzset() changes: its new tzname then differs from the
        # old (under an unchanged zone it is an equal value, which is no change at all).
        env = {**os.environ, "TZ": "America/New_York"}
        proc = run_cli("run", CORPUS, "--jobs", "2", "-v", "--json", out, "--no-cache", env=env)
        return {"process": process_data(proc), "report": json.loads(out.read_text())}

    data = once_per_run(request.config, "idioms", run)
    return process_of(data["process"]), {t["target"].rsplit("/", 1)[-1]: t for t in data["report"]["targets"]}


def test_every_idiom_has_a_correct_layer_and_a_wrong_twin():
    assert len(EXPECTED) >= 24
    for label, expected in EXPECTED.items():
        twin = label + "Wrong" if expected == "Passed" else label.removesuffix("Wrong")
        assert twin in EXPECTED, twin


@pytest.mark.parametrize("label", sorted(EXPECTED))
def test_each_idiom_layer_is_reported_as_its_docstring_says(idioms_run, label):
    proc, targets = idioms_run
    target = targets[label]
    assert target["error"] is None, target["error"]
    assert INTEGRITY_CHECK not in {c["name"] for c in target["checks"]}, target["checks"]
    expected = EXPECTED[label]
    failed = [c for c in target["checks"] if c["status"] == "failed"]
    if expected == "Passed":
        assert target["status"] == "passed", failed
        return
    regex = expected.removeprefix("Failed: ")
    assert [c["name"] for c in failed] == ["gradients_are_numerically_correct"], failed
    assert re.search(regex, failed[0]["message"]), failed[0]["message"]


@pytest.mark.parametrize(
    ("module", "said"),
    [
        ("alias_restore.py", "added numpy.int"),
        ("numpy_reload.py", "replaced sys.modules['numpy']"),
        ("time_zone.py", "replaced time.tzname"),
        ("wraps_unread_function.py", "replaced numpy.allclose (no code layercheck runs looks it up)"),
    ],
)
def test_what_an_idiom_changed_is_said_with_v_as_allowed(idioms_run, module, said):
    proc, targets = idioms_run
    (target, *_) = [t for label, t in targets.items() if label.startswith(module + ":")]
    assert any(said in change for change in target["allowed_changes"]), target["allowed_changes"]
    # With -v, as a note under the target's line; never in the failures' words.
    assert any(line.strip().startswith("note: the module") and said in line for line in proc.stdout.splitlines())
