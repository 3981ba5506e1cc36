"""Shared helpers for the layercheck test-suite.

Every layer file under tests/corpus/ and tests/layers/ declares in its module docstring what
layercheck must say about it: it starts with "Correct" (every check passed or skipped), or it
contains "Must fail: <check_name>" (that check must fail). `declared()` reads that contract
without importing the module; `load_layer()` imports it the way the CLI does.

Test modules import these helpers with `from conftest import ...` (tests/ is on sys.path in
pytest's default import mode, and the module is the one pytest loaded).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cupy_rooms
import numpy as np
import pytest

import layercheck
from layercheck.checks import REGISTRY
from layercheck.contract.loading import discover, import_module
from layercheck.running.cache import CACHE_DIR, CACHE_DIR_ENV

# The suite's processes read and write bytecode, as Python does by default. Where
# PYTHONDONTWRITEBYTECODE is set (CI images often set it), every pytest process the suite starts
# (xdist's workers, which start after this module ran, the stand-in's room, the examples' pytest
# runs) rewrites the asserts of each plugin's whole package again (layercheck's, Hypothesis's:
# about 170 modules, 3 s each time), and every `layercheck` process compiles layercheck again:
# a fifth of the suite's time on 2 cores. The tests of what layercheck writes beside a user's
# files remove it themselves (tests/test_user_files.py); a user's files are never compiled to
# bytecode (`contract.fresh`).
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

REPO = Path(__file__).resolve().parents[1]


def report_json(*reports: Any) -> dict[str, Any]:
    """The JSON report of these `TargetReport`s, as a reader loads it."""
    import json

    from layercheck.results import Report

    return json.loads(json.dumps(Report(list(reports)).to_dict()))  # type: ignore[no-any-return]


def schema_errors(data: dict[str, Any]) -> list[str]:
    """What the published JSON Schema (docs/report.schema.json) says is wrong with a JSON
    report (the test is skipped without jsonschema)."""
    import json

    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((REPO / "docs" / "report.schema.json").read_text(encoding="utf-8"))
    return [error.message for error in jsonschema.Draft202012Validator(schema).iter_errors(data)]


TESTS = REPO / "tests"
CORPUS = TESTS / "corpus"
LAYERS = TESTS / "layers"
FUNCTIONS = TESTS / "corpus_functions"
CLI_LAYERS = LAYERS / "cli"
SAMPLES = REPO / "sample_layers"
# layercheck's own frames are those in its package folder: a checkout is itself often named
# `layercheck` (what `git clone` makes), and the user's files in it are not layercheck's.
PACKAGE = Path(layercheck.__file__).resolve().parent
INTERNAL_FRAME = re.compile(rf'File "{re.escape(str(PACKAGE))}[/\\\\][^"]*"|<frozen importlib')

GRADIENTS = "gradients_are_numerically_correct"
SMALL_LAYOUT = "4,3,5,6:SSCB"
SEED_LAYOUT = "24,24,20,128:SSCB"
CHECK_NAMES = tuple(REGISTRY)  # what the CLI and the API hand to the settings validator

_MUST_FAIL = re.compile(r"Must fail:\s*([a-z_]+)")
_LEFT_INCOMPLETE = re.compile(r"Left incomplete:\s*([a-z_]+)")
_ARGUMENTS = re.compile(r"\(arguments?\s+(\w+)(?:\s+and\s+(\w+))?")


@dataclass(frozen=True)
class Declared:
    """What a layer file's docstring promises."""

    path: Path
    correct: bool
    must_fail: tuple[str, ...]  # check names that must fail
    arguments: tuple[str, ...]  # for gradient bugs: the argument(s) the docstring names
    # Check names that must be incomplete, every other check passing or skipped: no layer
    # that can be trained could be written so (learnables and no backward).
    left_incomplete: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return self.path.name


def declared(path: Path) -> Declared:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    must_fail = tuple(_MUST_FAIL.findall(doc))
    arguments: tuple[str, ...] = ()
    match = _ARGUMENTS.search(doc)
    if match:
        arguments = tuple(a for a in match.groups() if a)
    return Declared(path, doc.startswith("Correct"), must_fail, arguments, tuple(_LEFT_INCOMPLETE.findall(doc)))


def layer_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))


def load_layer(path: Path) -> Any:
    """The single layer class a module defines, or (plain_function.py) its function `square`."""
    module = import_module(Path(path))
    layers = discover(module)
    if not layers:
        return module.square
    assert len(layers) == 1, f"{path.name} defines {len(layers)} layers; the tests expect one"
    return layers[0][1]


def example_layout(obj: Any) -> Any:
    layout = getattr(obj, "example_layout", None)
    assert layout is not None, f"{obj!r} has no example_layout"
    return layout


def statuses(report) -> dict[str, str]:
    return {c.name: c.status for c in report.checks}


def not_ok(report) -> dict[str, str]:
    """name -> 'status: message' of every check that neither passed nor was skipped."""
    return {c.name: f"{c.status}: {c.message}" for c in report.checks if c.status not in ("passed", "skipped")}


def mentions(text: str, word: str) -> bool:
    """`word` appears in `text` as a whole word (so that `X` is not found in `Xhat`)."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])", text) is not None


# What a process reads once, as it starts or imports a library (the import path, the temporary
# folder, the time zone, the locale, the settings of CUDA, CuPy, NumPy and the BLAS): a run
# given other values than this process has needs a process of its own to see them.
_READ_AT_START = re.compile(r"PYTHON|PATH$|TMPDIR$|TEMP$|TMP$|TZ$|LD_|CUDA|CUPY|NPY_|OMP_|OPENBLAS|MKL_|LANG$|LC_")


def run_cli(
    *args: object, cwd: Path = REPO, env: dict | None = None, timeout: float = 600, process: bool = False
) -> subprocess.CompletedProcess:
    """`python -m layercheck ARGS...` with stdout and stderr captured (as pipes would).

    In this process by default (`cli.invoke`, with `env` as os.environ and `cwd` as the working
    folder while it runs): the checks run in worker processes all the same, and a run costs
    no interpreter and no forkserver of its own. In a process of its own (`python -m
    layercheck`) with `process`, or where `env` changes what only a new process reads
    (`_READ_AT_START`): for the tests whose subject is the process.

    The environment is os.environ's, given explicitly: a COLUMNS that a library set in the C
    environment (curses does) and os.environ does not show would otherwise wrap the output.
    The timeout (a process's only) is a guard against a hung run, not a measure: a loaded CI
    machine (room 3, CuPy imported in every worker) took over 120 s for a folder of the corpus."""
    env = dict(os.environ) if env is None else env
    if CACHE_DIR_ENV in os.environ:  # an environment made from scratch keeps the test's cache too
        env = {CACHE_DIR_ENV: os.environ[CACHE_DIR_ENV], **env}
    argv = [str(arg) for arg in args]
    if process or _differs_at_start(env):
        return subprocess.run(
            [sys.executable, "-m", "layercheck", *argv],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    return _run_in_this_process(argv, cwd, env)


def _differs_at_start(env: dict) -> bool:
    names = {name for name in (*env, *os.environ) if _READ_AT_START.match(name)}
    return any(env.get(name) != os.environ.get(name) for name in names)


def _run_in_this_process(argv: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
    """`cli.invoke(argv)` as `python -m layercheck` would run it (docs/examples.py's runner, which
    runs the pages' `layercheck` commands so)."""
    return docs_examples.run_in_process(argv, cwd, env)


def _load_docs_examples():
    """docs/examples.py is a script, not a module of a package: loaded from its path (and put in
    sys.modules first, as dataclasses need to find the module of the classes they build)."""
    spec = importlib.util.spec_from_file_location("docs_examples", REPO / "docs" / "examples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


docs_examples = _load_docs_examples()


def pytest_configure(config):
    cupy_rooms.pytest_configure(config)  # the stand-in's tests in a process of their own
    if "PYTEST_XDIST_WORKER" in os.environ:
        # pytest-xdist gives its workers COLUMNS and LINES of the terminal it started in; the
        # tests see what a plain `pytest` sees, a pipe that wraps only where a test asks.
        os.environ.pop("COLUMNS", None)
        os.environ.pop("LINES", None)
    # nan_output.py is meant to take log of negative numbers; its RuntimeWarning is expected.
    config.addinivalue_line("filterwarnings", "ignore:invalid value encountered in log:RuntimeWarning")


# CI's tiers (.ci/run): room 1 runs the whole suite; each other room runs the quick tier and
# the tests of what differs there: the interpreter (bytecode, audit hooks, the import system,
# processes and signals: Python 3.10 and 3.13), NumPy (the numerics: NumPy 1.23), CuPy (CuPy
# installed without a GPU, and the stand-in). A test module belongs to one tier.
TIERS = {
    "quick": (
        "baseline config console docs_site html html_browser junit layout merge odd_entries output_paths "
        "payload pre_commit report_schema results run_options session settings templates terminal user_files visible_text"
    ),
    "interpreter": "cache forkserver_attacks hostile_gate idioms integrity isolation lookups reads reaping",
    "numerics": (
        "checks comparison_report size_report problems raised observation_report complex conventions corpus diagnosis findings fuzz gradient_engine non_finite_move nothing_lost "
        "observations operations real_layers samples verdicts"
    ),
    "cupy": "cupy_refusals cupy_rooms devices fake_cupy gpu",
    # The rest of room 1: what runs the product as users do, whole (the pages' examples, the
    # CLI, CI logs, the pytest plugin, reproducers), the same in every room.
    "whole": "ci_logs cli docs_examples pytest_plugin repro repro_kinds",
}
TIER_OF = {f"test_{name}": tier for tier, names in TIERS.items() for name in names.split()}


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's: unknown where it is not installed
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`-n` hands the tests out by work stealing where it would by `load`: a worker that runs
    out takes half of what another has left, where `load` fixes most of each worker's share
    up front. Tests here take from a hundredth of a second to half a minute (a page's
    examples, a module's hostile corpus), and a share fixed up front left one worker idle
    for the last of them: the README's test command took 5:12 on two cores, and takes 4:59."""
    if config.getoption("dist") != "load":
        return None  # a mode asked for by name (`--dist loadfile`) is kept
    from xdist.scheduler import WorkStealingScheduling

    return WorkStealingScheduling(config, log)


@pytest.hookimpl(tryfirst=True)  # before -m selects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = item.path.stem
        if module.startswith("test_"):
            if module not in TIER_OF:
                raise pytest.UsageError(f"tests/{module}.py is in no tier: name it in TIERS (tests/conftest.py)")
            item.add_marker(TIER_OF[module])


@pytest.fixture(autouse=True)
def _not_in_github_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """With GITHUB_ACTIONS=true layercheck adds workflow commands to its output (annotations,
    stop-commands): the tests that read that output expect a plain run's wherever they run,
    on GitHub's runners too. The tests of those commands set it themselves."""
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)


@pytest.fixture(autouse=True)
def _own_result_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test has a result cache of its own, empty (`layercheck run` caches by default): a
    target it checks is checked, whatever the tests before it checked, and no cache is left in
    the checkout (run_cli's working folder). The cache's own tests run it twice on purpose."""
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path_factory.mktemp("layercheck_cache")))


@pytest.fixture(autouse=True, scope="module")
def _own_module_result_cache(tmp_path_factory: pytest.TempPathFactory):
    """The same for the module-scoped fixtures that run the CLI (a module's hostile gate run)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_DIR_ENV, str(tmp_path_factory.mktemp("layercheck_cache")))
        yield


@pytest.fixture(autouse=True, scope="session")
def _no_cache_in_the_checkout():
    """No test may leave a `.layercheck_cache` in the checkout (the .gitignore would hide it)."""
    folder = REPO / CACHE_DIR
    there = folder.exists()
    yield
    assert there or not folder.exists(), f"a test left {folder}"


def one_line_usage_error(proc, *needles: str) -> None:
    """A usage error: exit status 2, one line on stderr naming each of `needles`, nothing else."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error:"), proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr and proc.stdout == ""
    for needle in needles:
        assert needle in lines[0], lines[0]


# -- reproducers: run where NumPy alone is importable -----------------------------------------


@pytest.fixture(scope="session")
def numpy_alone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding NumPy and nothing else: the scripts run with it as their only
    import path (`python -I -S`), where layercheck cannot be imported."""
    root = tmp_path_factory.mktemp("numpy_alone")
    site = Path(np.__file__).resolve().parent.parent
    for name in ("numpy", "numpy.libs"):
        if (site / name).exists():
            (root / name).symlink_to(site / name)
    probe = run_isolated(root, "-c", "import numpy, importlib.util as u; print(u.find_spec('layercheck') is None)")
    assert probe.stdout.strip() == "True", probe.stderr
    return root


def run_isolated(
    numpy_root: Path, *argv: str, cwd: Path | None = None, also: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -I -S` with `numpy_root` alone on sys.path (and `also`, before it: the stand-in
    CuPy's folder for a GPU reproducer), running a script or `-c` code."""
    paths = [str(numpy_root)] + ([str(also)] if also is not None else [])
    if argv[0] == "-c":
        code = f"import sys; sys.path[:0] = {paths!r}; exec({argv[1]!r})"
    else:
        code = (
            f"import sys, runpy; sys.path[:0] = {paths!r}; sys.argv = [{argv[0]!r}]; "
            f"runpy.run_path({argv[0]!r}, run_name='__main__')"
        )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    return subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )
