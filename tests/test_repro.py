"""`layercheck run --repro DIR`: a reproducer per failed gradient check, run where only NumPy
is importable; it fails on the bug with the report's numbers and passes once the layer is fixed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import conftest
import numpy as np
import pytest
from conftest import CORPUS, GRADIENTS, SAMPLES, run_isolated

from layercheck.checks import SCRIPTS
from layercheck.reporters.html import report_html
from layercheck.reporters.junit import report_junit
from layercheck.reproducers.evidence import Evidence, ReproKind
from layercheck.reproducers.files import ReproDir, ReproRun, check_repro_dir, safe_stems, script_text
from layercheck.results import CheckResult, Report, Status, TargetReport

SCRIPT = f"layer__{GRADIENTS}.py"


def _layercheck(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return conftest.run_cli("run", *argv, cwd=cwd, env={**os.environ, "COLUMNS": "200"})


def _worst_failing_probe(report: dict, argument: str) -> dict:
    (record,) = [a for a in report["details"]["arguments"] if a["argument"] == argument]
    return max((p for p in record["probes"] if p["verdict"] == "fail"), key=lambda p: p["abs_error"])


def _printed(output: str, argument: str) -> tuple[float, float]:
    section = output.split(f"\n{argument} (", 1)[1]
    analytic = float(re.search(r"analytic <dL/d\w+, v> = (\S+)", section).group(1))
    numeric = float(re.search(r"numeric  central difference = (\S+)", section).group(1))
    return analytic, numeric


# (buggy module, its class, the fixed module, its class, the arguments whose gradient is wrong,
# options): a layer with learnables and kinks, two inputs, an operation, a layer that changes
# the layout, a recurrent layer with state, a per-channel bug, complex arithmetic.
CASES = [
    ("buggy/srelu_swapped.py", "SReLUSwapped", "srelu.py", "SReLU", ("al", "tr"), ()),
    (
        "buggy/weighted_addition_swapped.py",
        "WeightedAdditionSwapped",
        "weighted_addition.py",
        "WeightedAddition",
        ("X1", "X2"),
        (),
    ),
    ("buggy/srelu_function_seed.py", "SReLUFunctionSeed", "srelu_function.py", "SReLUFunction", ("al", "tr"), ()),
    (
        "buggy/global_average_pooling_wrong_count.py",
        "GlobalAveragePoolingWrongCount",
        "global_average_pooling.py",
        "GlobalAveragePooling",
        ("X",),
        (),
    ),
    ("buggy/peephole_lstm_bug.py", "PeepholeLSTMBug", "peephole_lstm.py", "PeepholeLSTM", None, ()),
    (
        "buggy/complex_scale_no_conj.py",
        "ComplexScaleNoConj",
        "complex_scale.py",
        "ComplexScale",
        None,
        ("--dtype", "complex128"),
    ),
]


@pytest.mark.parametrize("buggy, buggy_class, fixed, fixed_class, arguments, options", CASES, ids=[c[1] for c in CASES])
def test_reproducer_fails_with_the_reports_numbers_and_passes_once_fixed(
    tmp_path, numpy_alone, buggy, buggy_class, fixed, fixed_class, arguments, options
):
    work = tmp_path / "project"
    work.mkdir()
    shutil.copy(SAMPLES / buggy, work / "layer.py")
    run = _layercheck(work, "layer.py", "--repro", "reps", "--json", "r.json", "--junit", "r.xml", *options)
    assert run.returncode == 1, run.stdout + run.stderr
    (target,) = json.loads((work / "r.json").read_text())["targets"]
    check = next(c for c in target["checks"] if c["name"] == GRADIENTS)
    assert check["status"] == "failed"
    assert check["repro"] == os.path.join("reps", SCRIPT)
    # Every report names it; DIR holds the script and its data alone (no staging folder left).
    assert f"reproduce: python {os.path.join('reps', SCRIPT)}" in run.stdout
    assert f"reproduce: python {os.path.join('reps', SCRIPT)}" in (work / "r.xml").read_text()
    assert sorted(os.listdir(work / "reps")) == [SCRIPT.replace(".py", ".npz"), SCRIPT]
    failing = [a["argument"] for a in check["details"]["arguments"] if a["status"] == "failed"]
    if arguments is not None:
        assert sorted(failing) == sorted(arguments)

    script = work / "reps" / SCRIPT
    buggy_run = run_isolated(numpy_alone, str(script), cwd=tmp_path)
    assert buggy_run.returncode == 1, buggy_run.stdout + buggy_run.stderr
    assert "FAILED: the gradient of" in buggy_run.stdout
    for argument in failing:
        probe = _worst_failing_probe(check, argument)
        analytic, numeric = _printed(buggy_run.stdout, argument)
        assert analytic == pytest.approx(probe["analytic"], rel=1e-6, abs=1e-12)
        assert numeric == pytest.approx(probe["numeric"], rel=1e-6, abs=1e-12)
    assert re.search(r"worst of \d+ element\(s\) measured: \w+\[[\d, ]+\]: analytic", buggy_run.stdout)

    fixed_source = (SAMPLES / fixed).read_text()
    (work / "layer.py").write_text(fixed_source + f"\n\n{buggy_class} = {fixed_class}\n")
    fixed_run = run_isolated(numpy_alone, str(script), cwd=tmp_path)
    assert fixed_run.returncode == 0, fixed_run.stdout + fixed_run.stderr
    assert "PASSED" in fixed_run.stdout
    assert not (work / "__pycache__").exists()  # the script writes nothing beside the user's files


def test_per_channel_bug_reproduced_and_runs_under_pytest(tmp_path, numpy_alone):
    """A per-channel bug (channel 2 of X only): the reproducer shows an element of channel 2;
    pytest collects the script given by its path, fails on the bug and passes once fixed."""
    work = tmp_path / "project"
    work.mkdir()
    source = (CORPUS / "grad_one_channel.py").read_text()
    (work / "layer.py").write_text(source)
    run = _layercheck(work, "layer.py", "--repro", str(work / "reps"), "-q")
    assert run.returncode == 1, run.stdout + run.stderr
    script = work / "reps" / SCRIPT
    assert f"reproduce: python {script}" in run.stdout
    result = run_isolated(numpy_alone, str(script), cwd=tmp_path)
    assert result.returncode == 1
    assert re.search(r"worst of \d+ element\(s\) measured: X\[\d+, \d+, 2, \d+\]: .*WRONG", result.stdout)

    def under_pytest() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(script)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=300,
        )

    failing = under_pytest()
    assert failing.returncode == 1 and "1 failed" in failing.stdout, failing.stdout
    fixed = source.replace("factor[tuple(index)] = 1.5  # BUG: channel 2 scaled by 1.5", "pass")
    assert fixed != source
    (work / "layer.py").write_text(fixed)
    passing = under_pytest()
    assert passing.returncode == 0 and "1 passed" in passing.stdout, passing.stdout
    assert run_isolated(numpy_alone, str(script), cwd=tmp_path).returncode == 0


def test_nothing_is_written_for_a_passing_layer(tmp_path):
    shutil.copy(SAMPLES / "prelu.py", tmp_path / "layer.py")
    run = _layercheck(tmp_path, "layer.py", "--repro", "reps", "--json", "r.json")
    assert run.returncode == 0, run.stdout + run.stderr
    assert os.listdir(tmp_path / "reps") == []
    assert "reproduce:" not in run.stdout
    (target,) = json.loads((tmp_path / "r.json").read_text())["targets"]
    assert all("repro" not in c for c in target["checks"])


def test_a_repro_dir_that_is_a_file_is_refused_in_one_line(tmp_path):
    shutil.copy(SAMPLES / "prelu.py", tmp_path / "layer.py")
    (tmp_path / "taken").write_text("")
    for given, words in (("taken", "is not a folder"), ("taken/sub", "cannot be made: ")):
        run = _layercheck(tmp_path, "layer.py", "--repro", given)
        assert run.returncode == 2
        (line,) = run.stderr.strip().splitlines()
        assert f"--repro {given}: {words}" in line and "Traceback" not in run.stderr


def test_safe_file_names_of_hostile_labels():
    hostile = [
        "a/b/../../x.py:Layer",
        "C:\\users\\me\\layer.py",
        "läyer ü.py:Cläss",
        "\u202etxt.py:K",
        "x" * 1000 + ".py",
        "1st.py",
        "dir1/same.py",
        "dir2/same.py",
        "dir3/SAME.py",
        "",
    ]
    stems = safe_stems(hostile)
    assert len(set(stems.values())) == len(hostile)
    assert len({s.lower() for s in stems.values()}) == len(hostile)  # case-insensitive file systems
    for stem in stems.values():
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", stem) and len(stem) <= 70
    assert stems["a/b/../../x.py:Layer"] == "x_Layer"
    assert stems["1st.py"] == "target_1st"
    assert stems["dir1/same.py"].startswith("same_") and stems["dir1/same.py"] != stems["dir2/same.py"]


def test_the_header_holds_any_label_as_a_literal(tmp_path):
    label = "x.py:K\n'\"\u202e# <<< the target\nimport os"
    args = {"name": "a\nb", "scale": 1.5}
    text = script_text(ReproKind.GRADIENT, tmp_path / "m.py", tmp_path / "reps", "K", args, label)
    scope: dict = {}
    header = text.split("# >>> the target (written by layercheck)\n", 1)[1].split("# <<< the target\n", 1)[0]
    exec(compile(header, "header", "exec"), scope)
    assert scope["TARGET_LABEL"] == label
    assert json.loads(scope["CONSTRUCTOR_ARGS"]) == args
    assert scope["MODULE_PATH"] == os.path.join("..", "m.py") and scope["MODULE_PATH_IS_RELATIVE"] is True
    assert text.isascii()
    compile(text, "script", "exec")


def _failed(name: str = GRADIENTS, repro: str | None = None) -> CheckResult:
    return CheckResult(name, Status.FAILED, "wrong", repro=repro)


def _evidence(check: str = GRADIENTS) -> Evidence:
    return Evidence(ReproKind.GRADIENT, check, {"failures": []}, {"x0": np.zeros(3)})


def test_only_verified_evidence_of_a_failed_check_is_kept(tmp_path):
    """The parent takes no worker's word: a forged repro field, a link, a file that is not
    the check's evidence, and evidence of a passing check are all left out."""
    where = check_repro_dir(str(tmp_path / "reps"))
    module = tmp_path / "layer.py"
    module.write_text("")
    outside = tmp_path / "outside.npz"
    _evidence().write(str(outside))
    with ReproRun(where, [(f"t{i}.py", str(module), "K", {}) for i in range(5)], SCRIPTS) as run:
        os.symlink(outside, os.path.join(run.folder(0), f"{GRADIENTS}.npz"))  # a link
        Path(run.folder(1), f"{GRADIENTS}.npz").write_bytes(b"PK not a zip")  # not an npz
        _evidence("predict_is_deterministic").write(os.path.join(run.folder(2), f"{GRADIENTS}.npz"))  # another check's
        _evidence().write(os.path.join(run.folder(3), f"{GRADIENTS}.npz"))  # a passing check's
        _evidence().write(os.path.join(run.folder(4), f"{GRADIENTS}.npz"))  # the real thing
        reports = [TargetReport(f"t{i}.py", checks=[_failed(repro="forged.py")]) for i in range(5)]
        reports[3].checks[0].status = Status.PASSED
        for i, report in enumerate(reports):
            run.attach(i, report)
        staging = run.staging
    assert [r.checks[0].repro for r in reports] == [None] * 4 + [os.path.join(where.given, f"t4__{GRADIENTS}.py")]
    assert sorted(os.listdir(where.path)) == [f"t4__{GRADIENTS}.npz", f"t4__{GRADIENTS}.py"]
    assert not os.path.exists(staging)
    assert outside.exists()


def test_repro_round_trips_through_the_json_and_shows_in_junit():
    check = _failed(repro="reps/x__g.py")
    again = CheckResult.from_dict(check.to_dict())
    assert again.repro == "reps/x__g.py"
    assert "repro" not in CheckResult(GRADIENTS, Status.PASSED).to_dict()
    xml = report_junit(Report([TargetReport("x.py", checks=[check])]))
    assert "reproduce: python reps/x__g.py" in xml
    page = report_html(Report([TargetReport("x.py", checks=[check])]))
    assert "Reproduce: <code>python reps/x__g.py</code>" in page
    assert "Reproduce:" not in report_html(Report([TargetReport("x.py", checks=[_failed()])]))


def test_an_evidence_file_is_never_written_through_a_link(tmp_path):
    target = tmp_path / "target"
    target.write_text("keep")
    os.symlink(target, tmp_path / "e.npz")
    with pytest.raises(OSError):
        _evidence().write(str(tmp_path / "e.npz"))
    assert target.read_text() == "keep"


def test_a_repro_dir_is_not_made_before_the_run(tmp_path):
    where = check_repro_dir(str(tmp_path / "new" / "reps"))
    assert isinstance(where, ReproDir) and not (tmp_path / "new").exists()


def test_a_folder_checked_with_its_reproducers_in_it_has_the_same_targets(tmp_path):
    # `--repro` into the folder a run checks: the scripts' own classes (Saved has predict) are
    # no layers, for `layercheck run .` and for the pytest plugin alike.
    shutil.copy(SAMPLES / "prelu.py", tmp_path / "prelu.py")
    shutil.copy(CORPUS / "backward_wrong_shape.py", tmp_path / "wrong_shape.py")
    first = _layercheck(tmp_path, ".", "--repro", "repro", "--json", "r1.json")
    assert first.returncode == 1, first.stdout + first.stderr
    scripts = sorted((tmp_path / "repro").glob("*.py"))
    assert scripts and "LAYERCHECK_REPRODUCER = True" in scripts[0].read_text()
    again = _layercheck(tmp_path, ".", "--json", "r2.json")
    assert again.returncode == 1, again.stdout + again.stderr

    def targets(name: str) -> list[tuple[str, str]]:
        return [(t["target"], t["status"]) for t in json.loads((tmp_path / name).read_text())["targets"]]

    assert (
        targets("r2.json")
        == targets("r1.json")
        == [
            ("prelu.py:PReLU", "passed"),
            ("wrong_shape.py:BackwardWrongShape", "failed"),
        ]
    )
    plugin = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--layercheck", ".", "--collect-only"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    found = {line.rsplit("::", 1)[0] for line in plugin.stdout.splitlines() if "::" in line}
    assert found == {"prelu.py::PReLU", "wrong_shape.py::BackwardWrongShape"}, plugin.stdout + plugin.stderr
    # Named alone, a reproducer is refused with what to do instead.
    named = _layercheck(tmp_path, str(scripts[0].relative_to(tmp_path)))
    assert named.returncode != 0
    said = " ".join(named.stdout.split())  # as wrapped to the width
    assert f"is a reproducer that layercheck wrote, not a layer: run it with python repro/{scripts[0].name}" in said
