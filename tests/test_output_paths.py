"""No output path overwrites an input, and reproducers are written inside their folder only
(issue 36, DESIGN.md section 7).

- `--json`, `--junit`, `--html` and `--update-baseline` naming a file the run reads (a target's
  file, a `.py` file below a folder target, the config, the `--baseline` file) are refused
  before anything is checked (exit 2, one line naming the option and the file), however the
  path is spelled: files are compared by identity (device and inode). `--update-baseline` may
  name the `--baseline` file: that is how a baseline is refreshed. `layercheck merge`'s
  reports and its shards: tests/test_merge.py.
- `--repro DIR`: each file reaches its name by a rename within DIR, which replaces a symlink
  planted there and never writes through it; a file there that layercheck did not write (a
  layer, when DIR is the layers' folder) is left as it is, and the target's notes say so.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import GRADIENTS, SAMPLES, one_line_usage_error, run_cli

from layercheck.checks import SCRIPTS
from layercheck.errors import UsageError
from layercheck.reporters.files import (
    Input,
    check_no_input_overwritten,
    check_report_paths,
    destination,
    write_report,
)
from layercheck.reproducers.evidence import Evidence, ReproKind
from layercheck.reproducers.files import ReproRun, check_repro_dir
from layercheck.results import CheckResult, Status, TargetReport
from layercheck.running.batch import run_batch
from layercheck.running.plan import BEING_CHECKED, READ_BY_THE_LAYERS, inputs_of, inputs_read, make_batch

posix_only = pytest.mark.skipif(os.name != "posix", reason="symlinks and hard links as on POSIX")

# A layer that says, by a file beside it, that it was imported: nothing may run before a
# refusal.
_MARKING = """
from pathlib import Path

Path(__file__).with_name("imported").write_text("yes")


class Double:
    example_layout = "3,2:CB"

    def predict(self, X):
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        return 2 * dLdY
"""


# -- report paths: in-process ----------------------------------------------------------------


@posix_only
def test_a_report_path_naming_an_input_is_refused_however_it_is_spelled(tmp_path):
    layer = tmp_path / "layers" / "layer.py"
    layer.parent.mkdir()
    layer.write_text("")
    inputs = [Input(layer, BEING_CHECKED, "layers/layer.py")]
    (tmp_path / "link.json").symlink_to(layer)
    os.link(layer, tmp_path / "hard.json")
    spellings = (
        layer,
        tmp_path / "layers" / ".." / "layers" / "layer.py",
        tmp_path / "nope" / ".." / "layers" / "layer.py",  # `..` after a folder that is not there
        tmp_path / "link.json",
    )
    for spelled in spellings:
        with pytest.raises(UsageError) as refused:
            check_report_paths({"--json": str(spelled)}, inputs)
        assert str(refused.value) == (
            f"--json {spelled} would overwrite layers/layer.py, a file being checked: give --json another file"
        )
    with pytest.raises(UsageError, match=r"^--html \S+hard\.json would overwrite layers/layer\.py, "):
        check_report_paths({"--html": str(tmp_path / "hard.json")}, inputs)
    # A file of the same name elsewhere, a new file, a folder's other file: not an input.
    (tmp_path / "layer.py").write_text("")
    check_report_paths(
        {
            "--json": str(tmp_path / "layer.py"),
            "--junit": str(tmp_path / "new.xml"),
            "--html": str(tmp_path / "layers" / "report.html"),
        },
        inputs,
    )
    assert layer.read_text() == ""


def test_a_report_goes_where_every_check_looks(tmp_path, monkeypatch):
    """`nope/../a.json`: the system finds no `nope/` to go up from, but the report is written
    to `a.json` (as `os.path.realpath` reads it); the checks look there too."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.json").write_text("{}")
    (tmp_path / "sub").mkdir()
    where = destination("nope/../a.json")
    assert where.path == str(tmp_path / "a.json") and where.identity == destination("a.json").identity is not None
    write_report("nope/../new.json", "written")
    assert (tmp_path / "new.json").read_text() == "written" and not (tmp_path / "nope").exists()
    with pytest.raises(UsageError, match=r"^--json and --junit name the same file \(nope/\.\./a\.json\); "):
        check_report_paths({"--json": "a.json", "--junit": "nope/../a.json"})
    with pytest.raises(UsageError, match=r"^--json nope/\.\./sub: cannot write the report: it is a folder$"):
        check_report_paths({"--json": "nope/../sub"})
    # A device by the name given, a missing folder made as the report would make it: unchanged.
    assert destination(os.devnull).path == os.devnull
    assert destination("out/r.json") == destination(str(tmp_path / "out" / "r.json"))
    check_report_paths({"--json": "nope/../b.json", "--junit": os.devnull, "--html": "out/r.html"})
    with pytest.raises(
        UsageError, match=r"^--json 'a\\x00b': cannot write the report: the name holds a NUL character$"
    ):
        check_report_paths({"--json": "a\0b"})


def test_no_output_names_a_file_the_run_recorded_as_read(tmp_path, monkeypatch):
    """After the run: the files it recorded (thousands, it may be) are each looked at once, and
    an output naming one of them, however spelled, is refused; outputs that name none pass."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "layers").mkdir()
    read = [Input(f"layers/m{i}.py", READ_BY_THE_LAYERS, f"layers/m{i}.py") for i in range(2000)]
    for item in read:
        Path(item.path).write_text("")
    Path("layers/other.txt").write_text("")
    check_no_input_overwritten({"--json": "layers/other.txt", "--junit": "new.xml", "--html": None}, read)
    for spelled in ("layers/m1999.py", "nope/../layers/m1999.py", str(tmp_path / "layers" / "m1999.py")):
        with pytest.raises(UsageError) as refused:
            check_no_input_overwritten({"--json": "r.json", "--update-baseline": spelled}, read)
        assert str(refused.value) == (
            f"--update-baseline {spelled} would overwrite layers/m1999.py, a file the layers read: "
            "give --update-baseline another file"
        )


def test_update_baseline_alone_may_rewrite_the_baseline_it_reads(tmp_path):
    baseline = tmp_path / "b.json"
    baseline.write_text("{}")
    inputs = [Input(baseline, "the --baseline file", "b.json", rewritten_by=frozenset({"--update-baseline"}))]
    check_report_paths({"--update-baseline": str(baseline)}, inputs)
    with pytest.raises(UsageError, match=r"^--json \S+ would overwrite b\.json, the --baseline file: give --json "):
        check_report_paths({"--json": str(baseline), "--update-baseline": str(baseline)}, inputs)


@posix_only
def test_two_reports_on_one_file_through_a_hard_link_are_refused(tmp_path):
    (tmp_path / "a.json").write_text("")
    os.link(tmp_path / "a.json", tmp_path / "b.json")
    with pytest.raises(UsageError, match=r"^--json and --junit name the same file "):
        check_report_paths({"--json": str(tmp_path / "a.json"), "--junit": str(tmp_path / "b.json")})


def test_the_inputs_of_a_run_are_its_files_the_py_files_below_its_folders_and_its_config(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("layers/a.py", "layers/deep/b.py", "layers/notes.txt", "layers/.hidden.py", "single.py"):
        Path(name).parent.mkdir(parents=True, exist_ok=True)
        Path(name).write_text("")
    Path("c.yaml").write_text("defaults: {seed: 1}\n")
    batch = make_batch(["layers", "single.py:Double"], config="c.yaml")
    inputs = inputs_of(batch)
    assert [(item.shown, item.what) for item in inputs] == [
        (None, "the config file"),
        ("layers/a.py", BEING_CHECKED),
        ("layers/deep/b.py", BEING_CHECKED),
        ("single.py", BEING_CHECKED),
    ]
    assert os.fspath(inputs[0].path) == "c.yaml" and Path(inputs[-1].path) == tmp_path / "single.py"
    # The targets a config lists are its inputs too, named as the reports name them.
    Path("c.yaml").write_text("targets:\n  - target: single.py\n")
    (config, single) = inputs_of(make_batch(config="c.yaml"))
    assert (config.what, single.shown, single.what) == ("the config file", "single.py", BEING_CHECKED)


# -- report paths: the command line ------------------------------------------------------------


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "layers").mkdir()
    (tmp_path / "layers" / "double.py").write_text(_MARKING)
    (tmp_path / "layers" / "helper.py").write_text("HELP = 1\n")
    (tmp_path / "c.yaml").write_text("defaults: {seed: 1}\n")
    (tmp_path / "b.json").write_text('{"version": 1, "about": "", "failures": {}}\n')
    if os.name == "posix":
        (tmp_path / "link.xml").symlink_to(tmp_path / "layers" / "helper.py")
    return tmp_path


@pytest.mark.parametrize(
    "args, said",
    [
        (
            ("layers/double.py", "--json", "layers/double.py"),
            "--json layers/double.py would overwrite layers/double.py",
        ),
        (("layers", "--html", "layers/../layers/helper.py"), "--html layers/../layers/helper.py would overwrite"),
        pytest.param(
            ("layers", "--junit", "link.xml"),
            "--junit link.xml would overwrite layers/helper.py, a file being checked: give --junit another file",
            marks=posix_only,
        ),
        (("layers/double.py:Double", "--update-baseline", "layers/double.py"), "--update-baseline layers/double.py"),
        (
            ("layers/double.py", "--json", "./nope/../layers/double.py"),
            "--json ./nope/../layers/double.py would overwrite layers/double.py, a file being checked",
        ),
        (
            ("layers/double.py", "--update-baseline", "./nope/../layers/double.py"),
            "--update-baseline ./nope/../layers/double.py would overwrite layers/double.py",
        ),
        (("layers", "--config", "c.yaml", "--json", "c.yaml"), "--json c.yaml would overwrite c.yaml, the config file"),
        (
            ("layers", "--baseline", "b.json", "--junit", "b.json"),
            "--junit b.json would overwrite b.json, the --baseline file: give --junit another file",
        ),
    ],
    ids=[
        "target",
        "below-a-folder",
        "through-a-link",
        "update-baseline",
        "up-from-nothing",
        "baseline-up-from-nothing",
        "config",
        "baseline",
    ],
)
def test_run_refuses_an_output_that_names_an_input_before_importing_anything(project, args, said):
    before = {path: path.read_bytes() for path in project.rglob("*") if path.is_file() and not path.is_symlink()}
    proc = run_cli("run", *args, "--no-cache", cwd=project)
    one_line_usage_error(proc, f"Error: {said}")
    after = {path: path.read_bytes() for path in project.rglob("*") if path.is_file() and not path.is_symlink()}
    assert after == before  # not written, and nothing imported (the layer writes `imported`)


def test_update_baseline_refreshes_the_baseline_the_run_reads(project):
    proc = run_cli("run", "layers/double.py", "--baseline", "b.json", "--update-baseline", "b.json", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "--update-baseline b.json: recorded 0 failure(s)" in proc.stdout


# -- outputs naming a file the layers read, known once the run is over -------------------------

# A layer that imports a helper beside it and reads a data file there while it runs.
_READING = """
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import helper  # noqa: E402


class Scaled:
    example_layout = "3,2:CB"

    def predict(self, X):
        return helper.K * np.loadtxt(os.path.join(HERE, "scale.txt")) * X
"""


@pytest.fixture
def reading(tmp_path) -> Path:
    (tmp_path / "layers").mkdir()
    (tmp_path / "layers" / "scaled.py").write_text(_READING)
    (tmp_path / "layers" / "helper.py").write_text("K = 2.0\n")
    (tmp_path / "layers" / "scale.txt").write_text("1.5\n")
    (tmp_path / "layers" / "notes.txt").write_text("not read\n")
    return tmp_path


def test_a_run_records_the_modules_its_layers_import_and_with_the_cache_the_files_they_read(reading, monkeypatch):
    monkeypatch.chdir(reading)
    settings = {"checks": "predict_does_not_error"}
    for cache in ({"no_cache": True}, {"cache_dir": str(reading / "cache")}):
        report = run_batch(make_batch(["layers/scaled.py"], settings=settings, **cache))
        assert [t.status.value for t in report.targets] == ["passed"], report.targets
        read = {os.fspath(item.path): item for item in inputs_read(report)}
        assert {"layers/scaled.py", "layers/helper.py"} <= set(read) and "layers/notes.txt" not in read
        assert all(item.what == READ_BY_THE_LAYERS and item.shown == path for path, item in read.items())
    assert "layers/scale.txt" in read  # recorded for the cache, which was on


@pytest.mark.parametrize(
    "args, said",
    [
        (("--json", "layers/helper.py", "--no-cache"), "--json layers/helper.py would overwrite layers/helper.py"),
        (
            ("--junit", "./nope/../layers/helper.py", "--no-cache"),
            "--junit ./nope/../layers/helper.py would overwrite layers/helper.py",
        ),
        (
            ("--update-baseline", "layers/scale.txt", "--cache-dir", "cache"),
            "--update-baseline layers/scale.txt would overwrite layers/scale.txt",
        ),
    ],
    ids=["module", "module-up-from-nothing", "data-file"],
)
def test_run_refuses_an_output_naming_a_file_the_layers_read_once_it_is_over(reading, args, said):
    """Known only after the run: its report is printed, then one line, exit 2, nothing written."""

    def files() -> dict[Path, bytes]:  # the user's (the result cache's entries aside)
        return {path: path.read_bytes() for path in (reading / "layers").iterdir()}

    before = files()
    proc = run_cli(
        "run", "layers/scaled.py", "--checks", "predict_does_not_error", "--json", "r.json", *args, cwd=reading
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.splitlines() == [f"Error: {said}, a file the layers read: give {args[0]} another file"]
    assert "PASSED layers/scaled.py" in proc.stdout and "Traceback" not in proc.stdout
    assert files() == before
    assert not (reading / "r.json").exists()  # no report is written, not even one that could be
    # A file beside them that they do not read takes the report.
    proc = run_cli(
        "run", "layers/scaled.py", "--checks", "predict_does_not_error", "--json", "layers/notes.txt", cwd=reading
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads((reading / "layers" / "notes.txt").read_text())["targets"][0]["status"] == "passed"


# -- reproducers -----------------------------------------------------------------------------


def _evidence() -> Evidence:
    return Evidence(ReproKind.GRADIENT, GRADIENTS, {"failures": []}, {"x0": np.zeros(3)})


def _attach(where, module: Path, times: int = 1) -> list[TargetReport]:
    """Reproducers of target `t.py` (class K of `module`) `times` over, a run each."""
    reports = []
    for _ in range(times):
        with ReproRun(where, [("t.py", str(module), "K", {})], SCRIPTS) as run:
            _evidence().write(os.path.join(run.folder(0), f"{GRADIENTS}.npz"))
            reports.append(run.attach(0, TargetReport("t.py", checks=[CheckResult(GRADIENTS, Status.FAILED, "no")])))
    return reports


@posix_only
def test_a_link_planted_in_the_repro_folder_is_replaced_never_written_through(tmp_path):
    where = check_repro_dir(str(tmp_path / "reps"))
    os.mkdir(where.path)
    outside = {tmp_path / "outside.py": b"# the user's\n", tmp_path / "outside.npz": b"not evidence"}
    for path, data in outside.items():
        path.write_bytes(data)
        os.symlink(path, os.path.join(where.path, f"t__{GRADIENTS}{path.suffix}"))
    (report,) = _attach(where, tmp_path / "layer.py")
    assert {path: path.read_bytes() for path in outside} == outside
    script, data = (Path(where.path, f"t__{GRADIENTS}{suffix}") for suffix in (".py", ".npz"))
    assert not script.is_symlink() and not data.is_symlink()
    assert "# >>> the target (written by layercheck)" in script.read_text()
    assert report.checks[0].repro == os.path.join(where.given, script.name) and report.notes == []
    assert sorted(os.listdir(where.path)) == [f"t__{GRADIENTS}.npz", f"t__{GRADIENTS}.py"]  # nothing staged left


@pytest.mark.parametrize("taken", [".py", ".npz"])
def test_a_file_layercheck_did_not_write_keeps_its_name_and_the_notes_say_so(tmp_path, taken):
    where = check_repro_dir(str(tmp_path / "reps"))
    os.mkdir(where.path)
    users = Path(where.path, f"t__{GRADIENTS}{taken}")
    users.write_text("class Layer:\n    def predict(self, X):\n        return X\n")
    (report,) = _attach(where, tmp_path / "layer.py")
    assert users.read_text().startswith("class Layer:")
    assert os.listdir(where.path) == [users.name]  # neither file of the pair is written
    assert report.checks[0].repro is None
    assert report.notes == [
        f"--repro: the reproducer of {GRADIENTS} was not written: {os.path.join(where.given, users.name)} is not a "
        "file layercheck wrote, and is left as it is"
    ]


def test_the_reproducers_of_an_earlier_run_are_replaced(tmp_path):
    where = check_repro_dir(str(tmp_path / "reps"))
    first, again = _attach(where, tmp_path / "layer.py", times=2)
    assert first.checks[0].repro == again.checks[0].repro is not None and again.notes == []
    assert sorted(os.listdir(where.path)) == [f"t__{GRADIENTS}.npz", f"t__{GRADIENTS}.py"]


def test_reproducers_written_into_the_layers_folder_leave_its_layers_as_they_are(tmp_path):
    layers = tmp_path / "layers"
    layers.mkdir()
    shutil.copy(SAMPLES / "buggy" / "srelu_swapped.py", layers / "a.py")
    # A layer (that passes) under the name of a.py's reproducer.
    taken = layers / f"a_SReLUSwapped__{GRADIENTS}.py"
    shutil.copy(SAMPLES / "prelu.py", taken)
    kept = taken.read_bytes()
    proc = run_cli(
        "run", "layers", "--repro", "layers", "--no-cache", "-q", cwd=tmp_path, env={**os.environ, "COLUMNS": "300"}
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert taken.read_bytes() == kept
    said = f"note: --repro: the reproducer of {GRADIENTS} was not written: layers/{taken.name} is not a file"
    assert said in proc.stdout, proc.stdout
    assert not list(layers.glob("*.npz"))


@pytest.mark.parametrize("option", ["--junit", "--json", "--html"])
def test_a_report_path_that_names_a_folder_not_made_yet_is_refused(tmp_path, option):
    """A hunt: `--junit reports/` wrote a file named `reports`, and the same command then failed
    on its second run ("Not a directory")."""
    proc = run_cli("run", SAMPLES / "prelu.py", option, "reports/", "-q", cwd=tmp_path)
    one_line_usage_error(proc, option, "'reports/'", "names a folder")
    assert not (tmp_path / "reports").exists()
