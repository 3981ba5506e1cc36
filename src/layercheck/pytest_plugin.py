"""The pytest plugin (entry point `pytest11`): `pytest --layercheck [PATHS]` checks every layer
and operation, each of its checks a test item: node id `path/file.py::ClassName::check_name`.

- Enabled by `--layercheck`, `--layercheck-config FILE`, or `layercheck = true` in the ini
  file (`[tool.pytest.ini_options]`); otherwise nothing is collected and nothing but this
  module is imported (it is loaded in every pytest run of a user with layercheck installed).
- Collected: the layers and operations defined in the `.py` files among the collected paths,
  except test modules (the `python_files` patterns, unless named on the command line),
  `conftest.py` and dunder files; or, when the config file lists targets, those targets.
  Modules are imported in worker processes to find them, never in pytest's process. Each
  target is a collector of its checks (those its settings select that apply to its kind), so
  that `-k`, `-m layercheck`, `--lf` and `-x` reach checks as they reach test functions of a
  class; its last item says whether the module or layer replaced what layercheck computes
  with (`module_does_not_replace_numpy_or_layercheck`: where it does not run, every item of
  the target that does fails with a replacement). A file that cannot be imported is one
  failing item, `path/file.py::import`; a target
  that cannot be checked at all (no layout; settings that leave no check) one failing item,
  `path/file.py::ClassName`.
- A target is checked once, in a worker, when pytest runs the first of its items, for all of
  its items that pytest runs (`running.in_pytest`); each item then reads its check's result.
  Under pytest-xdist's default `--dist load`, the items of one target go to one of its workers
  (`pytest_xdist_make_scheduler`), other tests as `load` sends them. A failing item shows the
  `layercheck run` command that reproduces it and the console's text for its check. A skipped
  check is a skipped item, with layercheck's reason; a check that ran but could not decide
  (`incomplete`) is skipped with the reason `incomplete: ...` (`layercheck_strict = true`: it
  fails): pytest's word for a test that ran but could not reach a verdict, as MATLAB's
  "incomplete" is that of its test framework's failed assumptions. It neither passes silently
  nor fails a run that `layercheck run` would exit 0 from, and `--junitxml` lists it as
  `layercheck run --junit` does (`<skipped message="incomplete: ...">`).
- ini options: `layercheck` (bool), `layercheck_timeout` (seconds per target, default 120),
  `layercheck_strict` (bool).
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Generator, Iterator

    from layercheck.results import TargetReport
    from layercheck.running.batch import Found
    from layercheck.running.in_pytest import Item, PluginRun

__all__ = ["LayercheckCheck", "LayercheckFile", "LayercheckItem", "LayercheckTarget"]

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


@pytest.hookimpl(hookwrapper=True)
def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Generator[None, Any, None]:
    """The file's layers, beside what other plugins collect of it; but a layer file named on
    the command line is no test module: pytest's python plugin collects any file named there
    as one, and would import it in pytest's own process, where layercheck never imports a
    module it checks (its test modules, by `python_files`, stay pytest's)."""
    outcome = yield
    node = _layercheck_file(file_path, parent)
    if node is not None:
        kept = _is_test_module(file_path, parent.config)
        others = [other for other in outcome.get_result() if kept or not isinstance(other, pytest.Module)]
        outcome.force_result([*others, node])


def _layercheck_file(file_path: Path, parent: pytest.Collector) -> LayercheckFile | None:
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
    config.stash[_PENDING] += [path for path, _ in targets]  # looked at together, in parallel
    for path, names in targets:
        node = LayercheckFile.from_parent(session, path=path)
        node.names = names
        items.extend(_items(node))


def _items(node: pytest.Collector) -> Iterator[pytest.Item]:
    for child in node.collect():
        if isinstance(child, pytest.Item):
            yield child
        else:
            assert isinstance(child, pytest.Collector)
            yield from _items(child)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's, which may not be installed
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under `--dist load` (`-n` alone), the items of one target go to one worker, which
    checks the target once for all of them; other tests are scheduled one by one, as `load`
    schedules them. Another `--dist` is the user's choice (`loadscope` groups targets too)."""
    run = config.stash.get(_RUN, None)
    if run is None or config.getvalue("dist") != "load":
        return None
    from layercheck.running.in_pytest import target_scheduling

    return target_scheduling(config, log)


class LayercheckFile(pytest.File):
    """A `.py` file's layers: a collector of checks each, found when pytest collects the first
    file of a batch (those collected so far, pytest's folder at a time) and imported in workers."""

    names: tuple[str, ...] | None = None  # given by the config: only these

    def collect(self) -> Iterator[LayercheckTarget | LayercheckItem]:
        run = self.config.stash[_RUN]
        pending = self.config.stash[_PENDING]
        run.discover([*pending, self.path])
        pending.clear()
        found = run.discovered[self.path]
        if not isinstance(found, tuple):
            yield LayercheckItem.from_parent(self, name=IMPORT_ITEM, known=found)
            return
        targets = {target.name: target for target in found}
        for name in targets if self.names is None else self.names:
            target = targets.get(name)
            if target is None:  # named by the config, not defined there: the run says so
                yield LayercheckItem.from_parent(self, name=name)
                continue
            checks = run.checks_of(target)
            if isinstance(checks, tuple):
                yield LayercheckTarget.from_parent(self, name=name, found=target, checks=checks)
            else:
                yield LayercheckItem.from_parent(self, name=name, known=checks)


class LayercheckTarget(pytest.Collector):
    """One layer or operation: an item per check, checked once for the items pytest runs."""

    def __init__(self, *, found: Found, checks: tuple[str, ...], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.found = found
        self.checks = checks
        self.add_marker("layercheck")
        self._report: TargetReport | None = None
        self.selected: set[str] = set()  # the names of its items pytest runs, once it runs one

    def collect(self) -> Iterator[LayercheckCheck]:
        for name in self.checks:
            yield LayercheckCheck.from_parent(self, name=name)

    def report(self, check: str) -> TargetReport:
        """The target's report, made when the first of its items runs, for every item of it
        that pytest runs (after -k, -m, --lf...; `check`'s own at least)."""
        if self._report is None:
            self.selected = {item.name for item in self.session.items if item.parent is self} | {check}
            self._report = self.config.stash[_RUN].check(self.path, self.name, self.selected)
        return self._report

    @property
    def carries_tampering(self) -> bool:
        """The integrity item is not among the items pytest runs: the others say what it would."""
        return self.checks[-1] not in self.selected

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = None if self.found.line is None else self.found.line - 1  # pytest counts from 0
        return self.path, line, f"layercheck {self.nodeid}"


class LayercheckItem(pytest.Item):
    """A whole target, or a file's error: what cannot be split into checks (and what the item
    of a check shares: its report's verdict and failure)."""

    check: str | None = None  # the check's name; None: the whole target

    def __init__(self, *, known: TargetReport | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.known = known  # the error, found while collecting: nothing to run
        self.add_marker("layercheck")

    def _report(self) -> TargetReport:
        return self.known or self.config.stash[_RUN].check(self.path, self.name)

    def _item(self, report: TargetReport) -> Item:
        return self.config.stash[_RUN].item(report, self.check)

    def runtest(self) -> None:
        from layercheck.running.in_pytest import Verdict

        run = self.config.stash[_RUN]
        report = self._report()
        item = self._item(report)
        if item.verdict is Verdict.FAILED:
            raise LayercheckFailed(report, item)
        if item.verdict is Verdict.SKIPPED and item.result is not None:
            self._skip(item.result.message)
        if item.verdict is Verdict.INCOMPLETE:
            self._skip(run.undecided(report, item))

    def _skip(self, reason: str) -> None:
        """Skipped at the item's place (its target's definition) where known, as a skip mark
        is: `-rs` folds skips by place and reason, and this module's line is every target's."""
        located = self.reportinfo()[1] is not None
        raise pytest.skip.Exception(reason, _use_item_location=located)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if not isinstance(excinfo.value, LayercheckFailed):
            return super().repr_failure(excinfo)  # a defect of layercheck's: its traceback helps
        from _pytest._code.code import TerminalRepr

        run, check = self.config.stash[_RUN], self.check
        report, item = excinfo.value.report, excinfo.value.item
        verbose = self.config.get_verbosity() > 1

        class Failure(TerminalRepr):
            """Coloured on a terminal that has colour; plain into --junitxml and logs."""

            reprcrash = _Crash(run.headline(report, item, check))  # the line of pytest's short summary (-rf)

            def toterminal(self, tw: Any) -> None:
                color = bool(tw.hasmarkup)
                width = tw.fullwidth if color else None
                tw.line(run.failure_text(report, item, color=color, width=width, verbose=verbose, check=check))

        return Failure()

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"layercheck {self.nodeid}"  # the file too: two files may define one name


class LayercheckCheck(LayercheckItem):
    """One check of a target."""

    parent: LayercheckTarget

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check = self.name

    def _report(self) -> TargetReport:
        return self.parent.report(self.name)

    def _item(self, report: TargetReport) -> Item:
        return self.config.stash[_RUN].item(report, self.name, carries_tampering=self.parent.carries_tampering)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        path, line, _ = self.parent.reportinfo()
        return path, line, f"layercheck {self.nodeid}"


class _Crash:
    """What pytest's short summary reads of a failure (`longrepr.reprcrash.message`)."""

    def __init__(self, message: str) -> None:
        self.message = message


class LayercheckFailed(Exception):
    """An item that did not pass: `repr_failure` shows its report."""

    def __init__(self, report: TargetReport, item: Item) -> None:
        super().__init__(report.target)
        self.report = report
        self.item = item
