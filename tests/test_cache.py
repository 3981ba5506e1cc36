"""The result cache (DESIGN.md sections 7 and 9): a target whose inputs did not change is served
from `.layercheck_cache/`, says so in every report, and any change it depends on checks it
again: a source it imports, a data file it reads, an environment variable it reads. What cannot
be keyed is never stored.

Most tests run the real CLI (`run_cli`) in a folder of their own, with the cache in a folder of
its own (`conftest._own_result_cache`), and read what the reports say; those of what a layer
reads run the batch runner in this process (`run_batch`: this process is the parent, whose
environment the workers get). Whether the layer really ran is read from a file its `predict`
appends to: a cached target's layer does not run.
"""

from __future__ import annotations

import json
import os
import py_compile
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

from layercheck.results import Kind, Status, TargetReport
from layercheck.running import cache as cache_module
from layercheck.running.batch import Batch, CheckJob, Request, _unexpected_report, run_batch
from layercheck.running.cache import CACHE_DIR, CACHE_DIR_ENV, ResultCache, cache_key
from layercheck.running.sources import (
    ABSENT,
    MAX_SOURCES,
    UNSET,
    Inputs,
    Look,
    Uncacheable,
    file_state,
    split_inputs,
    variable_state,
)
from layercheck.settings.options import Options

# A layer whose backward multiplies by FACTOR, from wherever `{import}` takes it: right with
# FACTOR = 1.0, wrong (the gradient check fails) with 2.0, an edit that keeps the file's size.
# Its predict appends a line to runs.log beside it: the layer ran.
LAYER = """\
import os
{top}

def _ran():
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "runs.log"), "a") as log:
        log.write("ran\\n")


class Scale:
    example_layout = "3,4:CB"

    def predict(self, X):
        _ran()
        return 3.0 * X

    def backward(self, X, Y, dLdY, memory):
        {inner}
        return FACTOR * 3.0 * dLdY
"""
RIGHT, WRONG = "FACTOR = 1.0\n", "FACTOR = 2.0\n"
GRADIENTS = "gradients_are_numerically_correct"

# Where FACTOR comes from: (the layer's import at the top, its import inside backward, the
# file that defines FACTOR, relative to the folder).
WHERE = {
    "the layer's module": (RIGHT, "pass", "scale.py"),
    "a sibling module": ("from helper import FACTOR", "pass", "helper.py"),
    "a module of a package": ("from pkg.sub import FACTOR", "pass", "pkg/sub.py"),
    "a module imported inside backward": ("", "from lazy import FACTOR", "lazy.py"),
}


def _write_layer(folder: Path, where: str) -> Path:
    """The layer with FACTOR where `where` says, right; the file that holds FACTOR."""
    top, inner, factor_file = WHERE[where]
    (folder / "pkg").mkdir(parents=True, exist_ok=True)
    (folder / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    for name in ("helper.py", "pkg/sub.py", "lazy.py"):
        (folder / name).write_text(RIGHT, encoding="utf-8")
    (folder / "scale.py").write_text(LAYER.format(top=top, inner=inner), encoding="utf-8")
    return folder / factor_file


def _runs(folder: Path) -> int:
    log = folder / "runs.log"
    return len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0


def _check(folder: Path, *args: str, env: dict | None = None):
    """`layercheck run scale.py ARGS --json --junit` in `folder`: (process, the JSON target,
    the JUnit suite's properties, whether the layer ran)."""
    before = _runs(folder)
    proc = run_cli("run", "scale.py", *args, "--json", "r.json", "--junit", "r.xml", cwd=folder, env=env)
    assert proc.returncode in (0, 1), proc.stderr
    [target] = json.loads((folder / "r.json").read_text(encoding="utf-8"))["targets"]
    suite = ET.parse(folder / "r.xml").getroot().find("testsuite")
    assert suite is not None
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    return proc, target, properties, _runs(folder) > before


def _says_cached(proc, target, properties) -> bool:
    """Whether all three reports say "cached", checking that they agree."""
    console = "(cached)" in proc.stdout
    assert console is target["cached"] is (properties["cached"] == "true"), (proc.stdout, target, properties)
    return console


def _entries(folder: Path) -> list[Path]:
    return sorted((folder / "results").glob("*.json")) if (folder / "results").exists() else []


def _cache_dir() -> Path:
    return Path(os.environ[CACHE_DIR_ENV])


# -- served from the cache -----------------------------------------------------------------


def test_a_second_run_is_served_from_the_cache_and_every_report_says_so(tmp_path):
    _write_layer(tmp_path, "a sibling module")
    first = _check(tmp_path)
    assert first[-1] and not _says_cached(*first[:3])
    second = _check(tmp_path)
    assert not second[-1], "the layer ran again"
    assert _says_cached(*second[:3])
    assert second[0].returncode == first[0].returncode == 0
    same = ("target", "kind", "layouts", "status", "error", "checks", "summary", "notes")
    assert {k: second[1][k] for k in same} == {k: first[1][k] for k in same}
    # The time is the run's that checked it, said beside "cached".
    assert second[1]["duration_s"] == first[1]["duration_s"]
    assert f"in {first[1]['duration_s']:.2f}s (cached)" in second[0].stdout


def _markers(folder: Path) -> list[str]:
    """The marker files in `folder`, checked to be layercheck's own."""
    found = [name for name in (".gitignore", "CACHEDIR.TAG") if (folder / name).exists()]
    if ".gitignore" in found:
        assert (folder / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
    if "CACHEDIR.TAG" in found:
        tag = (folder / "CACHEDIR.TAG").read_text(encoding="utf-8")
        assert tag.startswith("Signature: 8a477f597d28d172789f06886806bc55")
    return found


def test_a_cache_folder_layercheck_makes_is_ignored_by_git_and_tagged_for_backup_tools(tmp_path):
    _write_layer(tmp_path, "a sibling module")
    _check(tmp_path, "--cache-dir", "made/here")
    folder = tmp_path / "made" / "here"
    assert _markers(folder) == [".gitignore", "CACHEDIR.TAG"]
    assert _markers(folder / "results") == []  # inside a folder already left out
    assert not _markers(tmp_path / "made")  # made too, but not the cache's: nothing in it is hidden
    assert len(_entries(folder)) == 1
    assert not [p for p in (folder / "results").iterdir() if p.name.startswith(".tmp-")]
    _check(tmp_path, "--cache-dir", "made/here")  # served; a marker deleted since stays deleted
    (folder / ".gitignore").unlink()
    assert _says_cached(*_check(tmp_path, "--cache-dir", "made/here")[:3])
    assert _markers(folder) == ["CACHEDIR.TAG"]


def test_a_folder_of_the_user_s_gets_no_marker_only_the_folder_layercheck_makes_in_it(tmp_path):
    """--cache-dir naming a folder that was there (the user's own: a `.gitignore` of `*` there
    would hide their new files from git, a CACHEDIR.TAG from their backups): the markers go
    into the `results/` folder layercheck makes for its entries."""
    _write_layer(tmp_path, "a sibling module")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine\n", encoding="utf-8")
    for _ in range(2):
        _check(tmp_path, "--cache-dir", "mine")
        assert _markers(mine) == [] and sorted(p.name for p in mine.iterdir()) == ["notes.txt", "results"]
        assert _markers(mine / "results") == [".gitignore", "CACHEDIR.TAG"]
        assert len(_entries(mine)) == 1
    assert _says_cached(*_check(tmp_path, "--cache-dir", "mine")[:3])


def test_a_results_folder_that_was_there_gets_no_marker_either(tmp_path):
    """The user's folder holding a `results/` of their own: layercheck made neither."""
    (tmp_path / "mine" / "results").mkdir(parents=True)
    cache = ResultCache(tmp_path / "mine")
    source = tmp_path / "a.py"
    source.write_text(RIGHT, encoding="utf-8")
    assert cache.store("k" * 64, TargetReport("a.py"), Inputs(((str(source), file_state(str(source))),)))
    assert _markers(tmp_path / "mine") == [] and _markers(tmp_path / "mine" / "results") == []


def test_without_the_variable_the_cache_is_in_the_working_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(CACHE_DIR_ENV)
    _write_layer(tmp_path, "a sibling module")
    assert not _says_cached(*_check(tmp_path)[:3])
    assert len(_entries(tmp_path / CACHE_DIR)) == 1
    assert _says_cached(*_check(tmp_path)[:3])


def test_cache_dir_puts_it_there(tmp_path):
    _write_layer(tmp_path, "a sibling module")
    _check(tmp_path, "--cache-dir", "elsewhere")
    assert len(_entries(tmp_path / "elsewhere")) == 1 and not _entries(_cache_dir())
    assert _says_cached(*_check(tmp_path, "--cache-dir", "elsewhere")[:3])
    assert not _says_cached(*_check(tmp_path)[:3])  # the default folder has no entry


def test_an_empty_cache_dir_is_refused_in_one_line(tmp_path):
    _write_layer(tmp_path, "a sibling module")
    proc = run_cli("run", "scale.py", "--cache-dir", " ", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("Error: --cache-dir: give a folder") and proc.stderr.count("\n") == 1


def test_no_cache_checks_again_and_stores_nothing(tmp_path):
    _write_layer(tmp_path, "a sibling module")
    for _ in range(2):
        proc, target, properties, ran = _check(tmp_path, "--no-cache")
        assert ran and not _says_cached(proc, target, properties)
    assert not _entries(_cache_dir())
    _check(tmp_path)  # stored now: --no-cache does not read it either
    proc, target, properties, ran = _check(tmp_path, "--no-cache")
    assert ran and not _says_cached(proc, target, properties)


# -- what the key covers: any change checks again --------------------------------------------


@pytest.mark.parametrize("where", list(WHERE))
def test_an_edit_of_any_source_checks_again_even_with_its_size_and_time(tmp_path, where):
    """FACTOR edited from 1.0 to 2.0 (same size, the modification time put back): a stale
    verdict would be a pass; the layer is checked again and fails, and that verdict is cached."""
    factor_file = _write_layer(tmp_path, where)
    assert _check(tmp_path)[1]["status"] == "passed"
    assert _says_cached(*_check(tmp_path)[:3])
    times = os.stat(factor_file)
    text = factor_file.read_text(encoding="utf-8")
    factor_file.write_text(text.replace(RIGHT, WRONG), encoding="utf-8")
    os.utime(factor_file, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert os.stat(factor_file).st_size == times.st_size
    proc, target, properties, ran = _check(tmp_path)
    assert ran and not _says_cached(proc, target, properties)
    assert target["status"] == "failed" and proc.returncode == 1
    assert {c["name"]: c["status"] for c in target["checks"]}[GRADIENTS] == "failed"
    proc, target, properties, ran = _check(tmp_path)  # a failed verdict is a verdict: cached
    assert not ran and _says_cached(proc, target, properties) and target["status"] == "failed"
    assert proc.returncode == 1


def test_a_sibling_the_layer_does_not_import_is_not_a_source(tmp_path):
    """The sources are what the worker imported: an edit of another file of the folder does not
    check the layer again (this also shows the edits above are seen through imports)."""
    _write_layer(tmp_path, "the layer's module")
    _check(tmp_path)
    (tmp_path / "helper.py").write_text(WRONG, encoding="utf-8")
    assert _says_cached(*_check(tmp_path)[:3])


def test_a_setting_changed_checks_again_and_each_setting_keeps_its_entry(tmp_path):
    _write_layer(tmp_path, "a sibling module")
    _check(tmp_path, "--seed", "0")
    assert _says_cached(*_check(tmp_path, "--seed", "0")[:3])
    for args in (("--seed", "1"), ("--dtype", "float64"), ("--timeout", "60"), ("--skip", GRADIENTS)):
        proc, target, properties, ran = _check(tmp_path, *args)
        assert ran and not _says_cached(proc, target, properties), args
    assert _says_cached(*_check(tmp_path, "--seed", "0")[:3])
    assert _says_cached(*_check(tmp_path, "--seed", "1")[:3])


def test_an_edit_of_the_config_checks_again(tmp_path):
    _write_layer(tmp_path, "a sibling module")
    config = tmp_path / "ci.yaml"
    config.write_text("defaults:\n  seed: 0\n", encoding="utf-8")
    _check(tmp_path, "--config", "ci.yaml")
    assert _says_cached(*_check(tmp_path, "--config", "ci.yaml")[:3])
    config.write_text("defaults:\n  seed: 0  # reviewed\n", encoding="utf-8")
    proc, target, properties, ran = _check(tmp_path, "--config", "ci.yaml")
    assert ran and not _says_cached(proc, target, properties)
    config.write_text("defaults:\n  seed: 0\n  tolerances: {float64: {rtol: 1e-3}}\n", encoding="utf-8")
    proc, target, properties, ran = _check(tmp_path, "--config", "ci.yaml")
    assert ran and not _says_cached(proc, target, properties)
    assert _says_cached(*_check(tmp_path, "--config", "ci.yaml")[:3])


def _batch(folder: Path, cache: Path) -> Batch:
    return Batch(requests=(Request("scale.py", (folder / "scale.py").resolve()),), cache=cache)


def _clear_environment(monkeypatch) -> None:
    """The environment computed at each key, not once per process as layercheck does."""
    unwrapped = getattr(cache_module._environment, "__wrapped__", cache_module._environment)
    monkeypatch.setattr(cache_module, "_environment", unwrapped)


@pytest.mark.parametrize(
    "change",
    [
        "numpy",
        "python",
        "layercheck",
        "layercheck's source",
        "a numeric variable",
        "the import path",
        "the environment",
        "the interpreter",
    ],
)
def test_a_version_change_checks_again(tmp_path, monkeypatch, change):
    """The parent's key, in this process (`run_batch`): what a new version would change in it;
    and what decides which file an import finds (another PYTHONPATH, another virtual
    environment sharing the working folder's cache: tox, nox)."""
    _write_layer(tmp_path, "a sibling module")
    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "cache"
    assert not run_batch(_batch(tmp_path, cache)).targets[0].cached
    assert run_batch(_batch(tmp_path, cache)).targets[0].cached
    _clear_environment(monkeypatch)
    if change == "numpy":
        monkeypatch.setattr(np, "__version__", np.__version__ + ".post1")
    elif change == "python":
        monkeypatch.setattr(sys, "version", sys.version + " (patched)")
    elif change == "layercheck":
        monkeypatch.setattr(cache_module, "__version__", cache_module.__version__ + ".dev1")
    elif change == "layercheck's source":
        monkeypatch.setattr(cache_module, "_layercheck_digest", lambda: "0" * 64)
    elif change == "a numeric variable":
        monkeypatch.setenv("OMP_NUM_THREADS", "3")
    elif change == "the import path":
        monkeypatch.syspath_prepend(str(tmp_path / "elsewhere"))
    elif change == "the environment":
        monkeypatch.setattr(sys, "prefix", sys.prefix + "-other")
    else:
        monkeypatch.setattr(sys, "executable", sys.executable + "-other")
    report = run_batch(_batch(tmp_path, cache)).targets[0]
    assert not report.cached and report.status == Status.PASSED
    assert run_batch(_batch(tmp_path, cache)).targets[0].cached


def test_layercheck_s_source_digest_changes_with_any_file_of_its_package(tmp_path):
    package = tmp_path / "layercheck"
    (package / "checks").mkdir(parents=True)
    (package / "checks" / "a.py").write_text("X = 1\n", encoding="utf-8")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"1")
    first = cache_module._tree_digest(package)
    (package / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"2")  # bytecode is not source
    assert cache_module._tree_digest(package) == first
    (package / "checks" / "a.py").write_text("X = 2\n", encoding="utf-8")
    assert cache_module._tree_digest(package) != first


def test_the_gpu_is_asked_about_only_when_the_device_is_not_cpu(monkeypatch):
    asked = []
    monkeypatch.setattr(cache_module, "_gpu", lambda: asked.append(1) or {"usable": False})
    _clear_environment(monkeypatch)
    cpu = cache_key({"target": "a"}, "cpu")
    assert not asked
    auto = cache_key({"target": "a"}, "auto")
    assert asked and auto != cpu
    monkeypatch.setattr(cache_module, "_gpu", lambda: {"usable": True, "reason": "a GPU"})
    _clear_environment(monkeypatch)
    assert cache_key({"target": "a"}, "auto") != auto  # a GPU now usable: other checks run


# -- what the layer reads: a change checks again, what cannot be keyed is never stored ------

# A layer whose backward multiplies by a factor it reads (`{top}` at import, `{inner}` inside
# backward, `{init}` in its constructor): right when the factor is 1.0, wrong (the gradient check
# fails) when it is 2.0. Its predict appends to runs.log beside it (a file only written is not
# read: the layer stays cacheable).
READER = """\
import importlib.util
import os
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
{top}


class Scale:
    example_layout = "3,4:CB"

    def __init__(self):
        {init}

    def predict(self, X):
        with open(HERE / "runs.log", "a") as log:
            log.write("ran\\n")
        return 3.0 * X

    def backward(self, X, Y, dLdY, memory):
        {inner}
        return factor * 3.0 * dLdY
"""
BY_PATH = (
    "spec = importlib.util.spec_from_file_location('helper_by_path', HERE / 'helper.py')\n"
    "helper = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(helper)"
)
VARIABLE = "LC_TEST_FACTOR"
# name: (top, init, inner), what makes it right, what makes it wrong.
READS = {
    "np.load at import": (
        "FACTOR = float(np.load(HERE / 'factor.npy'))", "pass", "factor = FACTOR", "npy 1.0", "npy 2.0"
    ),
    "open inside backward": ("", "pass", "factor = float(open(HERE / 'factor.txt').read())", "txt 1.0", "txt 2.0"),
    "Path.read_text in the constructor": (
        "",
        "self.factor = float((HERE / 'factor.txt').read_text())",
        "factor = self.factor",
        "txt 1.0",
        "txt 2.0",
    ),
    "a file whose presence it tests": (
        "", "pass", "factor = 2.0 if (HERE / 'wrong.flag').exists() else 1.0", "no flag", "flag"
    ),
    "a helper loaded by path": (BY_PATH, "pass", "factor = helper.FACTOR", "helper 1.0", "helper 2.0"),
    "os.environ[] at import": (
        f"FACTOR = float(os.environ[{VARIABLE!r}])", "pass", "factor = FACTOR", "variable 1.0", "variable 2.0"
    ),
    "os.getenv of an unset variable": (
        f"FACTOR = float(os.getenv({VARIABLE!r}, '1.0'))", "pass", "factor = FACTOR", "unset", "variable 2.0"
    ),
    "os.environ.get inside backward": (
        "", "pass", f"factor = float(os.environ.get({VARIABLE!r}, '1.0'))", "variable 1.0", "variable 2.0"
    ),
    "in os.environ, set to nothing": (
        "", "pass", f"factor = 2.0 if {VARIABLE!r} in os.environ else 1.0", "unset", "variable empty"
    ),
    # A dangling link made (`ln -s nowhere flip`): os.path.lexists looks with os.lstat.
    "a link whose presence it tests": (
        "", "pass", "factor = 2.0 if os.path.lexists(HERE / 'flip') else 1.0", "link none", "link dangling"
    ),
    # The newer of two checkpoints, by their times (`touch ckpt_b.txt`): the same contents.
    "the newer of two files": (
        "",
        "pass",
        "factor = float(max([HERE / 'ckpt_a.txt', HERE / 'ckpt_b.txt'], key=os.path.getmtime).read_text())",
        "newer a",
        "newer b",
    ),
}  # fmt: skip


def _reader(folder: Path, name: str) -> None:
    top, init, inner, right, _ = READS[name]
    (folder / "scale.py").write_text(READER.format(top=top, init=init, inner=inner), encoding="utf-8")
    _make(folder, right)


def _make(folder: Path, what: str) -> None:
    """Put the file or variable the layer reads in the state `what` says (in this process, the
    parent, for a variable), each edit keeping the file's size and putting its time back."""
    kind, _, value = what.partition(" ")
    factor = folder / {"npy": "factor.npy", "txt": "factor.txt", "helper": "helper.py"}.get(kind, "none")
    times = os.stat(factor) if factor.exists() else None
    if kind == "npy":
        np.save(factor, np.array(float(value)))
    elif kind == "txt":
        factor.write_text(value, encoding="utf-8")
    elif kind == "helper":
        factor.write_text(f"FACTOR = {value}\n", encoding="utf-8")
    elif kind == "flag":
        (folder / "wrong.flag").write_text("", encoding="utf-8")
    elif kind == "no":
        (folder / "wrong.flag").unlink(missing_ok=True)
    elif kind == "link":
        flip = folder / "flip"
        if value == "dangling" and not os.path.lexists(flip):
            flip.symlink_to("nowhere")
        elif value == "none":
            flip.unlink(missing_ok=True)
    elif kind == "newer":  # ckpt_a.txt holds 1.0, ckpt_b.txt 2.0; `value`'s is the newer by 10 s
        for name, text in (("a", "1.0"), ("b", "2.0")):
            checkpoint = folder / f"ckpt_{name}.txt"
            checkpoint.write_text(text, encoding="utf-8")
            time_ns = 1_700_000_000 * 10**9 + (10 * 10**9 if name == value else 0)
            os.utime(checkpoint, ns=(time_ns, time_ns))
    elif kind == "variable":
        os.environ[VARIABLE] = "" if value == "empty" else value
    else:
        assert kind == "unset", what
        os.environ.pop(VARIABLE, None)
    if times is not None and kind != "helper":  # (Python's loader trusts a .pyc by time and size)
        os.utime(factor, ns=(times.st_atime_ns, times.st_mtime_ns))
        assert os.stat(factor).st_size == times.st_size


def _run(folder: Path) -> tuple[TargetReport, bool]:
    """The target's report from `run_batch` in this process, and whether its layer ran."""
    before = _runs(folder)
    [report] = run_batch(_batch(folder, _cache_dir())).targets
    assert report.error is None, report.error
    return report, _runs(folder) > before


@pytest.fixture
def _factor_variable(monkeypatch):
    """The variable the readers read, put back as it was after the test."""
    monkeypatch.delenv(VARIABLE, raising=False)
    yield
    os.environ.pop(VARIABLE, None)


@pytest.mark.usefixtures("_factor_variable")
@pytest.mark.parametrize("name", list(READS))
def test_a_change_of_a_file_or_variable_the_layer_reads_checks_it_again(tmp_path, monkeypatch, name):
    """The stale pass: a layer right with what it reads, then what it reads made wrong (the
    file's size and time kept). It is checked again and fails; unchanged, it is served."""
    monkeypatch.chdir(tmp_path)
    _reader(tmp_path, name)
    report, ran = _run(tmp_path)
    assert ran and not report.cached and report.status == Status.PASSED, report.checks
    report, ran = _run(tmp_path)
    assert not ran and report.cached and report.status == Status.PASSED
    _make(tmp_path, READS[name][4])
    report, ran = _run(tmp_path)
    assert ran and not report.cached, "a stale verdict"
    assert report.status == Status.FAILED and {c.name: c.status for c in report.checks}[GRADIENTS] == Status.FAILED
    report, ran = _run(tmp_path)  # a failed verdict is a verdict: cached
    assert not ran and report.cached and report.status == Status.FAILED
    _make(tmp_path, READS[name][3])  # right again: the entry holds the wrong state now
    report, ran = _run(tmp_path)
    assert ran and not report.cached and report.status == Status.PASSED


def _touch(path: Path) -> None:
    """New times for `path` (what a checkout, or `touch`, gives a file), its contents kept."""
    later = os.stat(path).st_mtime_ns + 10 * 10**9
    os.utime(path, ns=(later, later))


def test_a_touch_of_a_file_only_opened_or_resolved_is_still_served(tmp_path, monkeypatch):
    """The lookalike of the newer of two files: a file the layer only opens is keyed on its
    contents; its own source, resolved (`Path(__file__).resolve()` looks at it with os.lstat),
    on being a file. New times on both, and on the folder they are in, change neither."""
    monkeypatch.chdir(tmp_path)
    _reader(tmp_path, "open inside backward")
    assert _run(tmp_path)[0].status == Status.PASSED
    for path in (tmp_path / "factor.txt", tmp_path / "scale.py", tmp_path):
        _touch(path)
    report, ran = _run(tmp_path)
    assert not ran and report.cached


def test_a_look_is_keyed_on_what_it_returned_and_an_open_on_the_contents_alone(tmp_path):
    """The states the parent takes again at each lookup (`Inputs.unchanged`): a file looked at
    with os.stat (`Look.STAT`) changes with its time; a file opened does not."""
    path = tmp_path / "ckpt.txt"
    path.write_text("1.0", encoding="utf-8")
    looked = Inputs(((str(path), file_state(str(path), {Look.STAT})),))
    opened = Inputs(((str(path), file_state(str(path))),))
    assert looked.unchanged() and opened.unchanged() and looked != opened
    _touch(path)
    assert opened.unchanged() and not looked.unchanged()


def test_the_working_folder_is_part_of_the_key(tmp_path, monkeypatch):
    """A relative path is read from the working folder: the same target, with the same cache,
    checked from another folder whose file makes it wrong, is checked again."""
    layer = tmp_path / "layer"
    layer.mkdir()
    (layer / "scale.py").write_text(
        READER.format(top="", init="pass", inner="factor = float(open('factor.txt').read())"), encoding="utf-8"
    )
    for name, factor in (("right", "1.0"), ("wrong", "2.0")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "factor.txt").write_text(factor, encoding="utf-8")
    monkeypatch.chdir(tmp_path / "right")
    assert _run(layer)[0].status == Status.PASSED
    assert _run(layer)[0].cached
    monkeypatch.chdir(tmp_path / "wrong")
    report, ran = _run(layer)
    assert ran and not report.cached and report.status == Status.FAILED


def test_a_layer_that_reads_nothing_more_is_still_served(tmp_path, monkeypatch):
    """The lookalike: paths built, a sibling imported (the import system lists its folder), a
    log written, NumPy and the standard library used; nothing read that is not a source."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "helper.py").write_text(RIGHT, encoding="utf-8")
    top = "from helper import FACTOR\nimport json\nSETTINGS = json.loads('{\"a\": 1}')"
    (tmp_path / "scale.py").write_text(
        READER.format(top=top, init="self.where = HERE / 'factor.npy'", inner="factor = FACTOR"), encoding="utf-8"
    )
    assert _run(tmp_path)[0].status == Status.PASSED
    report, ran = _run(tmp_path)
    assert not ran and report.cached


# -- what an import finds: a change of where it finds it checks again ---------------------


def _importer(tmp_path: Path, top: str = "from phelper import FACTOR") -> Path:
    """The reader in `layer/`, taking FACTOR from `top`'s import; the working folder is
    `tmp_path`, so that `layer/` is first on the import path while the layer is imported (as
    for `layercheck run layer/scale.py`). The folder of the layer."""
    layer = tmp_path / "layer"
    layer.mkdir()
    (layer / "scale.py").write_text(READER.format(top=top, init="pass", inner="factor = FACTOR"), encoding="utf-8")
    return layer


def _module(path: Path, text: str) -> None:
    """A module at `path`: its source, or (`.pyc`) bytecode compiled from it, with no source."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix != ".pyc":
        path.write_text(text, encoding="utf-8")
        return
    source = path.parent.parent / f"{path.stem}_source.py"
    source.write_text(text, encoding="utf-8")
    py_compile.compile(str(source), cfile=str(path), doraise=True)


def test_the_same_files_through_another_import_path_check_again(tmp_path, monkeypatch):
    """`from phelper import FACTOR` with PYTHONPATH=a (right), then b (wrong): the files the
    first run read are unchanged, but the import path finds b's. Checked again, it fails; with
    a again, it is served the entry of a."""
    layer = _importer(tmp_path)
    for name, text in (("a", RIGHT), ("b", WRONG)):
        _module(tmp_path / name / "phelper.py", text)
    monkeypatch.chdir(tmp_path)
    expected = ((Status.PASSED, False), (Status.PASSED, True), (Status.FAILED, False), (Status.PASSED, True))
    for folder, (status, cached) in zip(("a", "a", "b", "a"), expected):
        with pytest.MonkeyPatch.context() as patch:
            patch.syspath_prepend(str(tmp_path / folder))
            report, ran = _run(layer)
        assert (report.status, report.cached, ran) == (status, cached, not cached), folder


@pytest.mark.parametrize(
    "made", ["layer/phelper.py", "layer/phelper/__init__.py", "layer/phelper.pyc", "a/phelper/__init__.py"]
)
def test_a_module_made_where_the_import_path_would_find_it_first_checks_again(tmp_path, monkeypatch, made):
    """phelper is found in a/ (on PYTHONPATH). A phelper made where the import system looks
    before it (the layer's folder, searched first while it is imported; a package, which is
    found before a module of its folder), source, package or bytecode alone, would be imported
    instead: no file the first run read changed, yet the layer is checked again, and fails."""
    layer = _importer(tmp_path)
    _module(tmp_path / "a" / "phelper.py", RIGHT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path / "a"))
    assert _run(layer)[0].status == Status.PASSED
    assert _run(layer)[0].cached
    _module(tmp_path / made, WRONG)
    report, ran = _run(layer)
    assert ran and not report.cached and report.status == Status.FAILED


def test_a_module_made_where_the_import_path_looks_after_it_is_still_served(tmp_path, monkeypatch):
    """The lookalike: a phelper made in the working folder, which is searched after a/ (last),
    and a file beside the layer of another name: what the import finds is unchanged."""
    layer = _importer(tmp_path)
    _module(tmp_path / "a" / "phelper.py", RIGHT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path / "a"))
    assert _run(layer)[0].status == Status.PASSED
    _module(tmp_path / "phelper.py", WRONG)
    _module(layer / "phelpers.py", WRONG)
    report, ran = _run(layer)
    assert not ran and report.cached


def test_a_portion_of_a_namespace_package_made_before_it_checks_again(tmp_path, monkeypatch):
    """`from nsp.helper import FACTOR`, nsp a folder without `__init__.py` in a/: a folder nsp
    made beside the layer is a portion searched before a/'s, and its helper.py is imported."""
    layer = _importer(tmp_path, "from nsp.helper import FACTOR")
    _module(tmp_path / "a" / "nsp" / "helper.py", RIGHT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path / "a"))
    assert _run(layer)[0].status == Status.PASSED
    assert _run(layer)[0].cached
    _module(layer / "nsp" / "helper.py", WRONG)
    report, ran = _run(layer)
    assert ran and not report.cached and report.status == Status.FAILED


def test_an_optional_module_installed_later_checks_again(tmp_path, monkeypatch):
    """A layer that falls back when an optional module fails to import: the module installed
    later (in a folder of the import path) is imported, and the layer is checked again."""
    layer = _importer(tmp_path, "try:\n    from optional_factor import FACTOR\nexcept ImportError:\n    FACTOR = 1.0")
    (tmp_path / "a").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path / "a"))
    assert _run(layer)[0].status == Status.PASSED
    assert _run(layer)[0].cached
    _module(tmp_path / "a" / "optional_factor.py", WRONG)
    report, ran = _run(layer)
    assert ran and not report.cached and report.status == Status.FAILED


# What the layer does besides reading its factor (1.0, from the layer's module), that no key can
# hold: the target is checked every time, and nothing is stored.
UNCACHEABLE = {
    "lists its folder": "os.listdir(HERE)",
    "globs": "import glob; glob.glob(str(HERE / '*.py'))",
    "starts a process": "import subprocess, sys; subprocess.run([sys.executable, '-c', 'pass'], check=True)",
    "copies the environment": "dict(os.environ)",
    "reads a file it writes": (
        "p = HERE / 'count.txt'; p.write_text(str(int(p.read_text()) + 1) if p.exists() else '0')"
    ),
    "reads a device": "open(os.devnull, 'rb').read()",
    "replaces os.environ": "os.environ = {}",
    # Which file that is, the worker cannot tell: the open's audit event names no folder.
    "opens a file by name in a folder it holds open": (
        "d = os.open(HERE, os.O_RDONLY); os.close(os.open('scale.py', os.O_RDONLY, dir_fd=d)); os.close(d)"
    ),
}


@pytest.mark.parametrize("what", list(UNCACHEABLE))
def test_a_layer_whose_reads_cannot_be_keyed_is_checked_every_time_and_never_stored(tmp_path, monkeypatch, what):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scale.py").write_text(
        READER.format(top="FACTOR = 1.0", init="pass", inner=f"{UNCACHEABLE[what]}\n        factor = FACTOR"),
        encoding="utf-8",
    )
    for _ in range(2):
        report, ran = _run(tmp_path)
        assert ran and not report.cached and report.status == Status.PASSED, report.checks
    assert not _entries(_cache_dir())


# -- only complete verdicts ----------------------------------------------------------------

SLOW = """\
import time


class Slow:
    example_layout = "3,4:CB"

    def predict(self, X):
        time.sleep(30)
        return X
"""

BROKEN = """\
class Broken:
    example_layout = "3,4:CB"

    def __init__(self):
        raise RuntimeError("no")

    def predict(self, X):
        return X
"""


EXITS = """\
import sys


class Exits:
    example_layout = "3,4:CB"

    def predict(self, X):
        sys.exit(3)
"""


@pytest.mark.parametrize(
    ("source", "args"),
    [(SLOW, ("--timeout", "1")), (BROKEN, ()), (EXITS, ())],
    ids=["timeout", "error", "sys.exit after the import"],
)
def test_a_target_that_could_not_be_checked_is_not_cached(tmp_path, source, args):
    (tmp_path / "scale.py").write_text(source, encoding="utf-8")
    for _ in range(2):
        proc, target, properties, _ = _check(tmp_path, *args)
        assert target["status"] == "error" and not _says_cached(proc, target, properties)
    assert not _entries(_cache_dir())


def test_a_cache_folder_that_cannot_be_made_is_said_once_and_the_run_goes_on(tmp_path):
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(LAYER.format(top=RIGHT, inner="pass"), encoding="utf-8")
    (tmp_path / "file").write_text("", encoding="utf-8")  # a folder under a file: even root cannot
    for _ in range(2):
        proc = run_cli("run", ".", "--cache-dir", "file/cache", "--json", "r.json", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr.count("cannot write the result cache file/cache") == 1, proc.stderr
        assert proc.stderr.count("\n") == 1 and "results are not cached" in proc.stderr
        targets = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["targets"]
        assert len(targets) == 2 and not any(t["cached"] for t in targets)


def _entry(tmp_path: Path) -> Path:
    _write_layer(tmp_path, "a sibling module")
    _check(tmp_path)
    [entry] = _entries(_cache_dir())
    return entry


@pytest.mark.parametrize(
    "damage",
    ["garbage", "truncated", "a list", "another format", "another key", "a folder", "a report of another target"],
)
def test_a_damaged_or_foreign_entry_is_a_miss(tmp_path, damage):
    entry = _entry(tmp_path)
    data = json.loads(entry.read_text(encoding="utf-8"))
    if damage == "garbage":
        entry.write_bytes(b"\x00\xff not json")
    elif damage == "truncated":
        entry.write_text(entry.read_text(encoding="utf-8")[: entry.stat().st_size // 2], encoding="utf-8")
    elif damage == "a list":
        entry.write_text("[]", encoding="utf-8")
    elif damage == "another format":
        entry.write_text(json.dumps({**data, "format": 99}), encoding="utf-8")
    elif damage == "another key":
        entry.write_text(json.dumps({**data, "key": "0" * 64}), encoding="utf-8")
    elif damage == "a folder":
        entry.unlink()
        entry.mkdir()
    else:
        data["report"]["target"] = "other.py"
        entry.write_text(json.dumps(data), encoding="utf-8")
    proc, target, properties, ran = _check(tmp_path)
    assert ran and not _says_cached(proc, target, properties) and target["status"] == "passed"
    if damage != "a folder":
        assert _says_cached(*_check(tmp_path)[:3])  # stored again over it


def test_runs_with_jobs_and_at_once_share_one_cache(tmp_path):
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(LAYER.format(top=RIGHT, inner="pass"), encoding="utf-8")
    command = [sys.executable, "-m", "layercheck", "run", ".", "--jobs", "2"]
    both = [
        subprocess.Popen([*command, "--json", f"{n}.json"], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
        for n in range(2)
    ]
    for proc in both:
        proc.communicate(timeout=300)
        assert proc.returncode == 0
    assert len(_entries(_cache_dir())) == 3
    assert not [p for p in (_cache_dir() / "results").iterdir() if p.name.startswith(".tmp-")]
    # A process as the two were: one started from pytest has another import path, a key of its own.
    proc = run_cli("run", ".", "--jobs", "2", "--json", "r.json", cwd=tmp_path, process=True)
    targets = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["targets"]
    assert [t["cached"] for t in targets] == [True, True, True] and proc.stdout.count("(cached)") == 3


# -- what the parent believes of a worker ------------------------------------------------------


def _job(tmp_path: Path) -> CheckJob:
    return CheckJob("scale.py", str(tmp_path / "scale.py"), "Scale", Kind.LAYER, (), {}, Options(), 60.0)


def test_a_worker_s_report_that_says_it_was_cached_is_refused(tmp_path):
    job = _job(tmp_path)
    # A report of a worker that stopped (an error) may hold no check: it fits, but for "cached".
    assert _unexpected_report(job, TargetReport("scale.py", error="stopped")) is None
    forged = TargetReport("scale.py", error="stopped", cached=True)
    assert _unexpected_report(job, forged) == "it says it came from the result cache"


def _sent(files=(), variables=(), uncacheable=None) -> dict:
    return {"files": list(files), "variables": list(variables), "uncacheable": uncacheable}


@pytest.mark.parametrize(
    "inputs",
    [
        "x",
        {"files": []},
        _sent(files=["/a.py"]),
        _sent(files=[["a.py", "0" * 64]]),
        _sent(files=[["/a.py", "xyz"]]),
        _sent(files=[["/a.py", 3]]),
        _sent(files=[["/a.py", "0" * 64]] * (MAX_SOURCES + 2)),
        _sent(variables=[["", UNSET]]),
        _sent(variables=[["A", "set"]]),
        _sent(variables=[["A\0B", UNSET]]),
        _sent(uncacheable="did something odd"),
        _sent(files=[["/a.py", "0" * 64 + ";stat=yesterday"]]),
        _sent(files=[["/a.py", "0" * 64 + ";mtime=1"]]),
        _sent(files=[["/a.py", "0" * 64 + ";target=none;link=file"]]),
        _sent(files=[["/a.py", "0" * 64 + ";link=file;link=file"]]),
        _sent(files=[["/a.py", ";link=file"]]),
    ],
    ids=[
        "not a dict",
        "not all of it",
        "no state",
        "relative",
        "not a state",
        "not text",
        "too many",
        "no name",
        "a variable's state that is no digest",
        "a NUL in a name",
        "a reason of its own",
        "a look's value that is not what it returns",
        "a look of its own",
        "looks out of order",
        "a look twice",
        "a look at a file that cannot be keyed",
    ],
)
def test_inputs_a_worker_sends_are_read_strictly(inputs):
    from layercheck.results import MalformedReport

    with pytest.raises(MalformedReport):
        split_inputs({"target": "a.py", "inputs": inputs})


def test_inputs_read_back():
    linked = f"{ABSENT};link=link;lstat=link:777:1000:1000:2049:12:7:-5;target={'3' * 64}"
    sent = _sent(
        files=[["/b.py", "1" * 64], ["/a.py", ""], ["/c.npy", ABSENT], ["/d", linked]],
        variables=[["SCALE", UNSET], ["FACTOR", "2" * 64]],
        uncacheable=Uncacheable.LISTING.value,
    )
    rest, inputs = split_inputs({"target": "a.py", "inputs": sent})
    assert rest == {"target": "a.py"}
    assert inputs == Inputs(
        (("/a.py", ""), ("/b.py", "1" * 64), ("/c.npy", ABSENT), ("/d", linked)),
        (("FACTOR", "2" * 64), ("SCALE", UNSET)),
        Uncacheable.LISTING,
    )
    assert split_inputs({"target": "a.py"}) == ({"target": "a.py"}, None)


def test_a_source_changed_since_the_worker_saw_it_is_not_stored(tmp_path):
    """The worker's digest is of the bytes it ran; a file edited while the checks ran must not
    get the old verdict under its new text."""
    source = tmp_path / "a.py"
    source.write_text(RIGHT, encoding="utf-8")
    cache = ResultCache(tmp_path / "cache")
    seen = Inputs(((str(source), cache_module.digest_file(str(source)) or ""),))
    source.write_text(WRONG, encoding="utf-8")
    assert not cache.store("k" * 64, TargetReport("a.py"), seen)
    source.write_text(RIGHT, encoding="utf-8")
    assert cache.store("k" * 64, TargetReport("a.py"), seen)
    assert cache.lookup("k" * 64) is not None


def test_a_variable_changed_since_the_worker_saw_it_is_not_stored_and_a_later_change_is_a_miss(tmp_path, monkeypatch):
    """A variable set while the checks ran (in the parent, whose environment a worker gets) is
    not stored under its new value; one set after the entry was stored makes it a miss, and
    so does one unset."""
    source = tmp_path / "a.py"
    source.write_text(RIGHT, encoding="utf-8")
    monkeypatch.delenv("LC_CACHE_SCALE", raising=False)
    seen = Inputs(((str(source), file_state(str(source))),), (("LC_CACHE_SCALE", variable_state(None)),))
    cache = ResultCache(tmp_path / "cache")
    monkeypatch.setenv("LC_CACHE_SCALE", "1")
    assert not cache.store("k" * 64, TargetReport("a.py"), seen)
    monkeypatch.delenv("LC_CACHE_SCALE")
    assert cache.store("k" * 64, TargetReport("a.py"), seen)
    assert cache.lookup("k" * 64) is not None
    monkeypatch.setenv("LC_CACHE_SCALE", "")  # set, even to nothing
    assert cache.lookup("k" * 64) is None
    monkeypatch.delenv("LC_CACHE_SCALE")
    assert cache.lookup("k" * 64) is not None


def test_inputs_that_cannot_be_keyed_are_not_stored(tmp_path):
    source = tmp_path / "a.py"
    source.write_text(RIGHT, encoding="utf-8")
    keyed = ((str(source), file_state(str(source))),)
    cache = ResultCache(tmp_path / "cache")
    for inputs in (
        Inputs(keyed, uncacheable=Uncacheable.LISTING),
        Inputs((*keyed, (str(tmp_path / "device"), ""))),
        Inputs(),
    ):
        assert not cache.store("k" * 64, TargetReport("a.py"), inputs), inputs
    assert not (tmp_path / "cache").exists()
    assert cache.store("k" * 64, TargetReport("a.py"), Inputs(keyed))


def test_an_entry_s_inputs_are_read_as_strictly_as_a_worker_s(tmp_path):
    """An entry whose files or variables are not what `store` writes is a miss, never a hit on
    what it does not say."""
    source = tmp_path / "a.py"
    source.write_text(RIGHT, encoding="utf-8")
    cache = ResultCache(tmp_path / "cache")
    assert cache.store("k" * 64, TargetReport("a.py"), Inputs(((str(source), file_state(str(source))),)))
    [entry] = _entries(tmp_path / "cache")
    data = json.loads(entry.read_text(encoding="utf-8"))
    for inputs in ({**data["inputs"], "files": []}, {**data["inputs"], "uncacheable": "lists a folder"}, None):
        entry.write_text(json.dumps({**data, "inputs": inputs}), encoding="utf-8")
        assert cache.lookup("k" * 64) is None, inputs


def test_the_worker_records_the_digest_of_the_source_that_ran(tmp_path):
    """Edited after its import, a module's recorded digest is still that of the text that ran,
    which the parent then finds changed (above); a file of the standard library is no source."""
    import hashlib

    from layercheck.contract.loading import import_module
    from layercheck.running.sources import imported_sources, loaded_modules

    module = tmp_path / "ran.py"
    module.write_text("import colorsys\nimport helper_ran\n", encoding="utf-8")
    (tmp_path / "helper_ran.py").write_text(RIGHT, encoding="utf-8")
    before = loaded_modules() - {"colorsys"}
    import_module(module)
    module.write_text("X = 2\n", encoding="utf-8")
    recorded = dict(imported_sources(before))
    ran = hashlib.sha256(b"import colorsys\nimport helper_ran\n").hexdigest()
    assert recorded[str(module)] == ran
    assert recorded[str(tmp_path / "helper_ran.py")] == hashlib.sha256(RIGHT.encode()).hexdigest()
    assert not [path for path in recorded if path.endswith("colorsys.py")]


def test_only_complete_verdicts_are_cacheable():
    from layercheck.results import Cause, CheckResult
    from layercheck.running.cache import cacheable
    from layercheck.sandbox.integrity import INTEGRITY_CHECK

    passed = [CheckResult("predict_does_not_error", Status.PASSED)]
    assert cacheable(TargetReport("a.py", checks=passed))
    assert cacheable(TargetReport("a.py", checks=[CheckResult("predict_does_not_error", Status.FAILED)]))
    assert not cacheable(TargetReport("a.py", checks=passed, error="timed out"))
    assert not cacheable(TargetReport("a.py", checks=passed, cause=Cause.EXIT))
    assert not cacheable(TargetReport("a.py", checks=[*passed, CheckResult(INTEGRITY_CHECK, Status.FAILED)]))
    assert not cacheable(TargetReport("a.py", checks=passed, cached=True))
