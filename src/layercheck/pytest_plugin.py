"""The pytest plugin (entry point `pytest11`): `pytest --layercheck [PATHS]` checks every layer
and operation as a test item, node id `path/file.py::ClassName`.

- Enabled by `--layercheck`, `--layercheck-config FILE`, or `layercheck = true` in the ini
  file (`[tool.pytest.ini_options]`); otherwise nothing is collected and nothing but this
  module is imported (it is loaded in every pytest run of a user with layercheck installed).
- Collected: the layers and operations defined in the `.py` files among the collected paths,
  except test modules (the `python_files` patterns, unless named on the command line),
  `conftest.py` and dunder files; or, when the config file lists targets, those targets.
  Modules are imported in worker processes to find them, never in pytest's process; a file
  that cannot be imported is one failing item, `path/file.py::import`.
- Each item checks its target in a worker when pytest runs it (`running.in_pytest`), so that
  `-k`, `-m layercheck`, `-x`, `--lf`, `-n` (pytest-xdist) and `--junitxml` work as for any
  test. A failing item shows the `layercheck run` command that reproduces it and the
  console's text for the target. An item whose checks passed but some could not decide
  (`incomplete`) is skipped, with the reason `incomplete: ...` (`layercheck_strict = true`:
  it fails): pytest's word for a test that ran but could not reach a verdict, as MATLAB's
  "incomplete" is that of its test framework's failed assumptions. It neither passes
  silently nor fails a run that `layercheck run` would exit 0 from, and `--junitxml` lists
  it as `layercheck run --junit` does (`<skipped message="incomplete: ...">`).
- ini options: `layercheck` (bool), `layercheck_timeout` (seconds per target, default 120),
  `layercheck_strict` (bool).
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from layercheck.results import TargetReport
    from layercheck.running.in_pytest import PluginRun

__all__ = ["LayercheckFile", "LayercheckItem"]

_RUN: pytest.StashKey[PluginRun] = pytest.StashKey()
_PENDING: pytest.StashKey[list[Path]] = pytest.StashKey()  # files collected, not yet looked at for layers
# The item of a file that could not be imported: no layer can have this name (a keyword).
IMPORT_ITEM = "import"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("layercheck", "layercheck: check neural-network layers")
    group.addoption(
        "--layercheck",
        action="store_true",
        help="Check every layer and operation in the .py files collected (one item per target).",
    )
    group.addoption(
        "--layercheck-config",
        metavar="FILE",
        help="layercheck's YAML config: its settings, and its targets (collected instead of the .py files "
        "when it lists any). Implies --layercheck.",
    )
    group.addoption(
        "--layercheck-no-cache",
        action="store_true",
        help="Check every target, and store nothing in layercheck's result cache (.layercheck_cache, "
        "or $LAYERCHECK_CACHE_DIR).",
    )
    parser.addini("layercheck", type="bool", default=False, help="Enable --layercheck.")
    parser.addini("layercheck_timeout", default="", help="layercheck: seconds per target (default 120).")
    parser.addini(
        "layercheck_strict", type="bool", default=False, help="layercheck: an incomplete check fails its item."
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "layercheck: a layer or operation checked by layercheck (--layercheck)")
    config_path = config.getoption("layercheck_config")
    if not (config.getoption("layercheck") or config_path or config.getini("layercheck")):
        return
    from layercheck.errors import UsageError
    from layercheck.running.in_pytest import PluginRun

    try:
        run = PluginRun.load(
            config_path,
            config.getini("layercheck_timeout"),
            config.getini("layercheck_strict"),
            no_cache=config.getoption("layercheck_no_cache"),
        )
    except UsageError as exc:
        raise pytest.UsageError(f"layercheck: {exc}") from None
    config.stash[_RUN] = run
    config.stash[_PENDING] = []


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> LayercheckFile | None:
    run = parent.config.stash.get(_RUN, None)
    if run is None or file_path.suffix != ".py" or (run.config is not None and run.config.targets):
        return None
    name = file_path.name
    if name.startswith((".", "__")) or name == "conftest.py":
        return None
    if not parent.session.isinitpath(file_path) and _is_test_module(file_path, parent.config):
        return None
    parent.config.stash[_PENDING].append(file_path)
    node: LayercheckFile = LayercheckFile.from_parent(parent, path=file_path)
    return node


def _is_test_module(path: Path, config: pytest.Config) -> bool:
    """Whether pytest collects `path` as a test module (its `python_files` patterns): tests
    rarely define layers, and often small ones without a layout."""
    patterns: list[str] = config.getini("python_files")
    return any(fnmatch.fnmatch(str(path) if "/" in p else path.name, p) for p in patterns)


@pytest.hookimpl(tryfirst=True)  # before -k, -m and --lf select among the items
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """The config file's targets, when it lists any: collected here, after the test files,
    wherever they are (as `layercheck run --config FILE` checks them)."""
    run = config.stash.get(_RUN, None)
    if run is None or run.config is None or not run.config.targets:
        return
    targets = run.config_targets()
    config.stash[_PENDING] += [path for path, names in targets if names is None]
    for path, names in targets:
        node = LayercheckFile.from_parent(session, path=path)
        node.names = names
        items.extend(node.collect())


class LayercheckFile(pytest.File):
    """A `.py` file's layers: one item each, found when pytest collects the first file of a
    batch (those collected so far, pytest's folder at a time) and imported in workers."""

    names: tuple[str, ...] | None = None  # given by the config: no need to look

    def collect(self) -> Iterator[LayercheckItem]:
        if self.names is not None:
            for name in self.names:
                yield LayercheckItem.from_parent(self, name=name)
            return
        run = self.config.stash[_RUN]
        pending = self.config.stash[_PENDING]
        run.discover([*pending, self.path])
        pending.clear()
        found = run.discovered[self.path]
        if isinstance(found, tuple):
            for name in found:
                yield LayercheckItem.from_parent(self, name=name)
        else:
            yield LayercheckItem.from_parent(self, name=IMPORT_ITEM, known=found)


class LayercheckItem(pytest.Item):
    """One target, checked in a worker when the item runs."""

    def __init__(self, *, known: TargetReport | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.known = known  # the file's error, found while collecting: nothing to run
        self.add_marker("layercheck")

    def runtest(self) -> None:
        from layercheck.running.in_pytest import Verdict

        run = self.config.stash[_RUN]
        report = self.known or run.check(self.path, self.name)
        verdict = run.verdict(report)
        if verdict is Verdict.FAILED:
            raise LayercheckFailed(report)
        if verdict is Verdict.INCOMPLETE:
            pytest.skip(run.undecided(report))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if not isinstance(excinfo.value, LayercheckFailed):
            return super().repr_failure(excinfo)  # a defect of layercheck's: its traceback helps
        from _pytest._code.code import TerminalRepr

        run, report = self.config.stash[_RUN], excinfo.value.report
        verbose = self.config.get_verbosity() > 1

        class Failure(TerminalRepr):
            """Coloured on a terminal that has colour; plain into --junitxml and logs."""

            reprcrash = _Crash(run.headline(report))  # the line of pytest's short summary (-rf)

            def toterminal(self, tw: Any) -> None:
                color = bool(tw.hasmarkup)
                width = tw.fullwidth if color else None
                tw.line(run.failure_text(report, color=color, width=width, verbose=verbose))

        return Failure()

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"layercheck {self.nodeid}"  # the file too: two files may define one name


class _Crash:
    """What pytest's short summary reads of a failure (`longrepr.reprcrash.message`)."""

    def __init__(self, message: str) -> None:
        self.message = message


class LayercheckFailed(Exception):
    """A target that did not pass: `repr_failure` shows its report."""

    def __init__(self, report: TargetReport) -> None:
        super().__init__(report.target)
        self.report = report
