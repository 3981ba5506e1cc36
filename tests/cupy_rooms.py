"""One CuPy per test process: the tests of the stand-in run in a pytest process of their own.

A process imports `cupy` once, whichever its path finds: the real CuPy (which does not survive
being dropped from sys.modules and imported again), the stand-in (tests/fake_gpu), or none. So
no test swaps CuPy under the others. The tests that need the stand-in are marked `stand_in`.
Where this process's `cupy` is not the stand-in (CuPy not installed, or the real one), those
tests run in one second pytest process started with the stand-in first on PYTHONPATH, and each
reports here, under its own name, the outcome it had there: counts, -k, -m, -x and the recap
work as for any test, and `python -m pytest` runs everything in every room.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from once import once_per_run

STAND_IN = Path(__file__).resolve().parent / "fake_gpu"
_NODES_ENV = "LAYERCHECK_TESTS_STAND_IN_NODES"  # the node ids the second process is to run
_RESULTS_ENV = "LAYERCHECK_TESTS_STAND_IN_RESULTS"  # where it writes their outcomes
_OUTPUT_TAIL = 6000
_PLUGIN = "layercheck-stand-in-room"


class Room(Enum):
    """Which `cupy` this process imports."""

    NONE = "none"
    STAND_IN = "stand-in"
    REAL = "real"


def cupy_room() -> Room:
    """This process's CuPy, found without importing it."""
    try:
        spec = importlib.util.find_spec("cupy")
    except (ImportError, ValueError):
        return Room.NONE
    if spec is None:
        return Room.NONE
    places = [spec.origin] if spec.origin else list(spec.submodule_search_locations or ())
    inside = any(STAND_IN in Path(p).resolve().parents for p in places if p)
    return Room.STAND_IN if inside else Room.REAL


ROOM = cupy_room()


def pytest_configure(config: pytest.Config) -> None:
    """Registers the plugin once, whether this module came as `-p cupy_rooms` or from conftest."""
    if not config.pluginmanager.has_plugin(_PLUGIN):
        config.pluginmanager.register(StandInRoom(), _PLUGIN)


@dataclass(frozen=True)
class Result:
    outcome: str  # passed, failed, skipped, xfailed
    text: str = ""


def _result_of(reports: list[Any]) -> Result:
    """One test's outcome from its setup, call and teardown reports, as pytest would count it."""
    for report in reports:
        if report.failed:
            return Result("failed", f"[{report.when}] {report.longreprtext}")
    for report in reports:
        if report.skipped:
            if hasattr(report, "wasxfail"):
                return Result("xfailed", str(report.wasxfail))
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            return Result("skipped", reason.removeprefix("Skipped: "))
    return Result("passed")


class StandInRoom:
    """The plugin: in the main process it hands the `stand_in` tests to the second one; in the
    second, it runs only those and writes their outcomes."""

    def __init__(self) -> None:
        self._handed: list[pytest.Item] = []
        self._results: dict[str, Result] | None = None
        self._output = ""
        self._reports: dict[str, list[Any]] = {}

    # -- in the second process ----------------------------------------------------------------

    @pytest.hookimpl(trylast=True)  # after -k and -m have deselected
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        if ROOM is Room.STAND_IN:
            wanted_file = os.environ.get(_NODES_ENV)
            if wanted_file:
                wanted = set(json.loads(Path(wanted_file).read_text(encoding="utf-8")))
                kept = [i for i in items if i.nodeid in wanted]
                config.hook.pytest_deselected(items=[i for i in items if i.nodeid not in wanted])
                items[:] = kept
            return
        self._handed = [i for i in items if i.get_closest_marker("stand_in") is not None]
        for item in self._handed:
            # Its fixtures would import the stand-in here: the second process sets them up.
            item.setup = _nothing  # type: ignore[method-assign]
            item.teardown = _nothing  # type: ignore[method-assign]
            item.runtest = _Deferred(self, item)  # type: ignore[method-assign]

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if ROOM is Room.STAND_IN and os.environ.get(_RESULTS_ENV):
            self._reports.setdefault(report.nodeid, []).append(report)

    def pytest_sessionfinish(self) -> None:
        path = os.environ.get(_RESULTS_ENV)
        if ROOM is Room.STAND_IN and path:
            results = {node: vars(_result_of(reports)) for node, reports in self._reports.items()}
            Path(path).write_text(json.dumps(results), encoding="utf-8")

    # -- in the main process --------------------------------------------------------------------

    def result(self, item: pytest.Item) -> Result:
        if self._results is None:
            self._results = self._shared_results(item.config)
        found = self._results.get(item.nodeid)
        if found is None:
            return Result(
                "failed", f"the stand-in's pytest process did not report this test; it printed:\n{self._output}"
            )
        return found

    def _shared_results(self, config: pytest.Config) -> dict[str, Result]:
        """The second process's outcomes, for this run once. Under pytest-xdist every worker
        collects every test and hands on all the `stand_in` ones: the first worker to need
        them runs the second process, and the others read what it found (`once_per_run`)."""
        data = once_per_run(config, "stand-in-room", lambda: self._run_second_process(config))
        self._output = data["output"]
        return {node: Result(**result) for node, result in data["results"].items()}

    def _run_second_process(self, config: pytest.Config) -> dict[str, Any]:
        """What the second process printed (its tail) and each test's outcome there, as JSON."""
        files = sorted({str(item.path) for item in self._handed})
        with tempfile.TemporaryDirectory(prefix="layercheck-stand-in-") as scratch:
            nodes, results = Path(scratch, "nodes.json"), Path(scratch, "results.json")
            nodes.write_text(json.dumps([item.nodeid for item in self._handed]), encoding="utf-8")
            env = dict(os.environ)
            here = str(Path(__file__).resolve().parent)  # this module, as a plugin there too
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(STAND_IN), here, env.get("PYTHONPATH")]))
            env.update({_NODES_ENV: str(nodes), _RESULTS_ENV: str(results)})
            plugin = ["-p", Path(__file__).stem]
            command = [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                *plugin,
                "-o",
                "addopts=",
                *files,
            ]
            proc = subprocess.run(
                command, cwd=config.rootpath, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True
            )
            output = (proc.stdout + proc.stderr)[-_OUTPUT_TAIL:]
            found = json.loads(results.read_text(encoding="utf-8")) if results.exists() else {}
            return {"output": output, "results": found}


def _nothing() -> None:
    pass


class _Deferred:
    """An item's runtest in the main process: the outcome the second process gave it."""

    def __init__(self, room: StandInRoom, item: pytest.Item) -> None:
        self.room, self.item = room, item

    def __call__(self) -> None:
        result = self.room.result(self.item)
        if result.outcome == "skipped":
            # At the test's location, as the skip was there (pytest's own flag for this).
            raise pytest.skip.Exception(result.text, _use_item_location=True)
        if result.outcome == "xfailed":
            pytest.xfail(result.text)
        if result.outcome != "passed":
            pytest.fail(f"in the stand-in's pytest process (PYTHONPATH={STAND_IN}):\n{result.text}", pytrace=False)
