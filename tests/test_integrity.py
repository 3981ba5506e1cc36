"""Verdicts no layer can fake (issue 27, DESIGN.md section 7): `running.integrity` records
NumPy's and layercheck's functions, finds what a layer replaced, names it and puts it back;
the runner fails the target and takes no verdict from the replaced code.

The hostile modules of tests/hostile_gate/ (tamper_*.py, numpy_settings_changed.py) run the
same through the CLI, as CI would."""

from __future__ import annotations

import ast
import importlib
import json
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path

import numpy as np
import pytest
from conftest import TESTS, run_cli

import layercheck
import layercheck.numerics.compare as compare
from layercheck.checks import REGISTRY, passed
from layercheck.contract import calls
from layercheck.results import Status
from layercheck.running.integrity import INTEGRITY_CHECK, Change, ChangeKind, Guard, Snapshot, describe

_ORIGINAL_ALLCLOSE = np.allclose
_NUMERIC = "numpy._core.numeric" if "numpy._core.numeric" in sys.modules else "numpy.core.numeric"  # NumPy 2, 1


@pytest.fixture
def snapshot():
    """A snapshot of now; whatever a test leaves changed is put back."""
    taken = Snapshot.take()
    yield taken
    taken.restore()


# -- the snapshot ------------------------------------------------------------------------------


def test_nothing_changed_is_no_change(snapshot):
    assert snapshot.changes() == ()


def test_a_replaced_numpy_function_is_named_and_put_back(snapshot):
    np.allclose = lambda *args, **kwargs: True
    assert snapshot.changes() == (Change(ChangeKind.REPLACED, "numpy.allclose"),)
    snapshot.restore()
    assert np.allclose is _ORIGINAL_ALLCLOSE and snapshot.changes() == ()


def test_a_removed_function_is_named(snapshot):
    del np.random.default_rng
    assert snapshot.changes() == (Change(ChangeKind.REMOVED, "numpy.random.default_rng"),)
    snapshot.restore()
    assert np.random.default_rng(0).random() == np.random.default_rng(0).random()


def test_a_new_name_of_the_layers_own_is_allowed(snapshot):
    np.my_helper = lambda x: 2 * x
    try:
        assert snapshot.changes() == ()
    finally:
        del np.my_helper


def test_a_new_module_global_that_hides_a_builtin_is_found_and_removed(snapshot):
    numeric = sys.modules[_NUMERIC]
    numeric.abs = lambda x: 0  # numeric's functions look `abs` up in their globals first
    (change,) = snapshot.changes()
    assert change == Change(ChangeKind.SHADOWED, f"{numeric.__name__}.abs")
    assert describe((change,)) == f"added {numeric.__name__}.abs, hiding the builtin of that name"
    snapshot.restore()
    assert "abs" not in vars(numeric)


def test_a_functions_code_replaced_in_place_is_found_and_put_back(snapshot):
    code = compare.mismatch.__code__
    compare.mismatch.__code__ = (lambda actual, expected, rtol=0.0, atol=0.0: None).__code__
    assert snapshot.changes() == (Change(ChangeKind.REPLACED, "the code of layercheck.numerics.compare.mismatch"),)
    snapshot.restore()
    assert compare.mismatch.__code__ is code


def test_defaults_and_closures_count_as_code(snapshot):
    defaults = compare.mismatch.__defaults__
    compare.mismatch.__defaults__ = (1e9, 1e9)  # huge tolerances by default
    assert snapshot.changes() == (Change(ChangeKind.REPLACED, "the code of layercheck.numerics.compare.mismatch"),)
    snapshot.restore()
    assert compare.mismatch.__defaults__ is defaults


def test_a_check_of_the_registry_is_named_by_its_key(snapshot):
    check = REGISTRY["outputs_are_finite"]
    original = check.run
    object.__setattr__(check, "run", lambda session: passed())  # past the frozen dataclass
    assert snapshot.changes() == (
        Change(ChangeKind.REPLACED, "layercheck.checks.registry.REGISTRY['outputs_are_finite'].run"),
    )
    snapshot.restore()
    assert check.run is original


def test_a_module_replaced_in_sys_modules_is_found(snapshot):
    linalg = sys.modules["numpy.linalg"]
    sys.modules["numpy.linalg"] = type(sys)("numpy.linalg")
    assert Change(ChangeKind.REPLACED, "sys.modules['numpy.linalg']") in snapshot.changes()
    snapshot.restore()
    assert sys.modules["numpy.linalg"] is linalg


def test_numpys_settings_and_layerchecks_own_state_are_no_change(snapshot):
    errors, printing, state = np.geterr(), np.get_printoptions(), np.random.get_state()
    try:
        np.seterr(all="ignore")
        np.set_printoptions(precision=3, linewidth=200)
        np.random.seed(1234)
        calls.run(lambda: None)  # rebinds calls._depth, which calls declares as its own state
        assert snapshot.changes() == ()
    finally:
        np.seterr(**errors)
        np.set_printoptions(**printing)
        np.random.set_state(state)


def test_every_global_layercheck_rebinds_is_declared_as_its_runtime_state():
    # A global a module of layercheck rebinds while the checks run would read as replaced by
    # the layer: each is declared in its module's _RUNTIME_GLOBALS, which the snapshot leaves out.
    package = Path(layercheck.__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        rebound = {
            name
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Global)
            for name in node.names
        }
        if rebound:
            module = ".".join(("layercheck", *path.relative_to(package).with_suffix("").parts))
            declared = set(getattr(importlib.import_module(module), "_RUNTIME_GLOBALS", ()))
            assert rebound <= declared, (module, rebound - declared)


def test_describe_names_the_first_changes_by_kind_and_counts_the_rest():
    changes = (
        Change(ChangeKind.REPLACED, "numpy.allclose"),
        Change(ChangeKind.REMOVED, "numpy.isnan"),
        Change(ChangeKind.REPLACED, "numpy.isclose"),
        Change(ChangeKind.REPLACED, "numpy.isfinite"),
    )
    assert describe(changes) == (
        "replaced numpy.allclose and numpy.isclose, removed numpy.isnan and made 1 more change(s)"
    )
    assert describe(changes[:1]) == "replaced numpy.allclose"


def test_an_unchanged_record_is_confirmed_by_the_fast_path(snapshot):
    # It runs after every check. What keeps it quick (about 1 ms with NumPy alone, several with
    # CuPy's modules too: machines differ, so no time is asserted here) is that "nothing
    # changed" is answered by the flattened identity comparisons, never by the slow walk.
    assert snapshot.unchanged.holds()
    assert snapshot.changes() == ()


def test_a_guard_puts_back_at_once_and_keeps_the_first_finding():
    guard = Guard.start()
    guard.where = "during predict_does_not_error"
    np.allclose = lambda *args, **kwargs: True
    first = guard.verify()
    assert np.allclose is _ORIGINAL_ALLCLOSE
    assert first is not None and first.message() == "the layer replaced numpy.allclose during predict_does_not_error"
    np.isclose, isclose = (lambda *args, **kwargs: True), np.isclose
    try:
        assert guard.verify("later") is not None and guard.first is first
    finally:
        np.isclose = isclose


def test_after_each_call_of_the_layer_a_replaced_numpy_name_is_found_and_put_back():
    def tampers():
        np.allclose = lambda *args, **kwargs: True

    guard = Guard.start()
    try:
        guard.where = "during predict_does_not_error"
        calls.run(tampers)  # the call's own hook: before layercheck computes anything with it
        assert np.allclose is _ORIGINAL_ALLCLOSE
        assert guard.first is not None
        assert guard.first.message() == "the layer replaced numpy.allclose during predict_does_not_error"
    finally:
        guard.stop()
        np.allclose = _ORIGINAL_ALLCLOSE


def test_an_enum_members_state_is_named_and_put_back(snapshot):
    # Status.FAILED whose value reads "passed" would report every failure as a pass.
    object.__setattr__(Status.FAILED, "_value_", "passed")
    assert snapshot.changes() == (Change(ChangeKind.REPLACED, "layercheck.results.Status.FAILED._value_"),)
    snapshot.restore()
    assert Status.FAILED.value == "failed" and Status("failed") is Status.FAILED


def test_an_enums_lookup_table_is_watched(snapshot):
    Status._value2member_map_["failed"] = Status.PASSED
    try:
        assert snapshot.changes() == (
            Change(ChangeKind.REPLACED, "layercheck.results.Status._value2member_map_.failed"),
        )
        snapshot.restore()
        assert Status("failed") is Status.FAILED
    finally:
        Status._value2member_map_["failed"] = Status.FAILED


def test_the_workers_channel_to_its_parent_is_watched(snapshot):
    Connection.send = lambda self, obj: None
    try:
        assert snapshot.changes() == (Change(ChangeKind.ADDED, "multiprocessing.connection.Connection.send"),)
        snapshot.restore()
        assert "send" not in vars(Connection)
    finally:
        if "send" in vars(Connection):
            del Connection.send


def test_numpy_ma_is_recorded_though_import_numpy_does_not_load_it(snapshot):
    # np.median imports it on first use: it is imported before the snapshot, so that a layer's
    # module is never the first to load (and change) it.
    import numpy.ma

    numpy.ma.isMaskedArray = lambda x: True
    assert snapshot.changes() == (Change(ChangeKind.REPLACED, "numpy.ma.isMaskedArray"),)
    snapshot.restore()
    assert numpy.ma.isMaskedArray(np.zeros(2)) is False


def _tracer(frame, event, arg):
    return _tracer


@pytest.fixture
def hooks_kept():
    """The test's hooks (coverage's, a debugger's) back as they were, whatever a test set."""
    trace, profile, limit = sys.gettrace(), sys.getprofile(), sys.getrecursionlimit()
    yield
    sys.settrace(trace)
    sys.setprofile(profile)
    threading.settrace(None)  # type: ignore[arg-type]
    threading.setprofile(None)  # type: ignore[arg-type]
    sys.setrecursionlimit(limit)


def test_a_trace_function_set_in_a_call_is_named_taken_off_and_off_the_frames(hooks_kept):
    # A tracer can rewrite layercheck's local variables (a check's outcome) with no attribute
    # changed: setting one is tampering.
    outer = sys._getframe()
    before = sys.gettrace()

    def traces():
        frame = sys._getframe()
        while frame is not None:
            frame.f_trace = _tracer
            frame = frame.f_back
        sys.settrace(_tracer)

    guard = Guard.start()
    try:
        guard.where = "during predict_does_not_error"
        calls.run(traces)
        assert sys.gettrace() is before and outer.f_trace is not _tracer
        assert guard.first is not None
        assert guard.first.message() == "the layer set a trace function (sys.settrace) during predict_does_not_error"
    finally:
        guard.stop()


@pytest.mark.parametrize(
    ("hook", "named"),
    [
        (sys.setprofile, "a profile function (sys.setprofile)"),
        (threading.settrace, "a trace function for new threads (threading.settrace)"),
        (threading.setprofile, "a profile function for new threads (threading.setprofile)"),
    ],
)
def test_a_profile_or_thread_hook_set_is_named_and_taken_off(hooks_kept, hook, named):
    guard = Guard.start()
    try:
        hook(_tracer)
        finding = guard.verify("during predict_does_not_error")
        assert finding is not None and finding.changes == (Change(ChangeKind.SET, named),)
        assert _tracer not in (sys.getprofile(), getattr(threading, "_trace_hook", None))
        assert getattr(threading, "_profile_hook", None) is not _tracer
    finally:
        guard.stop()


def test_a_tracer_set_before_the_guard_started_stays_allowed(hooks_kept):
    # coverage, a debugger: set before layercheck looked, recorded, not the layer's doing. A
    # debugger that sets its bound method again (bdb's `self.trace_dispatch`) sets the same hook.
    class Debugger:
        def dispatch(self, frame, event, arg):
            return None

    debugger = Debugger()
    sys.settrace(debugger.dispatch)
    guard = Guard.start()
    try:
        calls.run(lambda: sys.settrace(debugger.dispatch))
        assert guard.verify() is None and guard.first is None
        assert sys.gettrace() == debugger.dispatch
    finally:
        sys.settrace(None)
        guard.stop()


def test_a_recursion_limit_lowered_is_raised_back_silently_and_one_raised_is_kept(hooks_kept):
    limit = sys.getrecursionlimit()
    guard = Guard.start()
    try:
        calls.run(sys.setrecursionlimit, 60)
        assert sys.getrecursionlimit() == limit and guard.first is None
        calls.run(sys.setrecursionlimit, limit + 1000)
        assert guard.verify() is None and sys.getrecursionlimit() == limit + 1000
    finally:
        guard.stop()


def test_a_guards_snapshot_swapped_for_a_later_one_is_found_with_what_it_hid():
    guard = Guard.start()
    try:
        np.allclose = lambda *args, **kwargs: True
        guard._snapshot = Snapshot.take()  # the "before" would now hold the replacement
        finding = guard.verify("when it was imported")
        assert finding is not None
        assert finding.changes == (
            Change(ChangeKind.REPLACED, "layercheck.running.integrity.Guard._snapshot"),
            Change(ChangeKind.REPLACED, "numpy.allclose"),
        )
        assert np.allclose is _ORIGINAL_ALLCLOSE
    finally:
        np.allclose = _ORIGINAL_ALLCLOSE
        guard.stop()


# -- the verdicts, in-process (the Python API) --------------------------------------------------


class _TampersOnCall:
    """2 * X, right; its `at`-th call of predict replaces np.allclose and leaves it replaced."""

    at = 1

    def __init__(self):
        self.calls = 0

    def predict(self, X):
        type(self).calls = getattr(type(self), "calls", 0) + 1
        if type(self).calls == self.at:
            np.allclose = lambda *args, **kwargs: True
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        return 2 * dLdY


def _by_name(report):
    return {c.name: c for c in report.checks}


def test_a_layer_that_replaces_numpy_while_checked_fails_and_the_callers_numpy_is_restored():
    class Tamper(_TampersOnCall):
        calls = 0

    report = layercheck.check_layer(Tamper, "3,2:CB")
    assert np.allclose is _ORIGINAL_ALLCLOSE  # the caller's session is left as it was
    assert report.status == Status.FAILED
    integrity = _by_name(report)[INTEGRITY_CHECK]
    assert integrity.status == Status.FAILED
    assert integrity.message.startswith("the layer replaced numpy.allclose during ")
    assert integrity.details["changes"] == [{"kind": "replaced", "what": "numpy.allclose"}]


def test_verdicts_before_the_replacement_stand_and_none_after_it_passes():
    class TamperLater(_TampersOnCall):
        calls, at = 0, 6  # a few checks in

    report = layercheck.check_layer(TamperLater, "3,2:CB")
    names = [c.name for c in report.checks]
    found = names.index(INTEGRITY_CHECK)
    before, found_in, after = report.checks[:found], report.checks[found + 1], report.checks[found + 2 :]
    assert any(c.status == Status.PASSED for c in before)  # decided with the original code
    assert found_in.status == Status.INCOMPLETE and found_in.message.startswith("not decided: the layer replaced")
    assert after and all(c.status == Status.INCOMPLETE and c.message.startswith("not checked:") for c in after)
    assert set(names) - {INTEGRITY_CHECK} == set(REGISTRY)  # every check is reported


def test_a_layer_that_changes_only_settings_and_its_own_names_passes_with_no_word_of_replacing():
    class Settles:
        def predict(self, X):
            np.seterr(over="ignore")
            np.layer_scale = 2.0
            return np.layer_scale * X

        def backward(self, X, Y, dLdY, memory):
            return 2 * dLdY

    errors = np.geterr()
    try:
        report = layercheck.check_layer(Settles, "3,2:CB")
    finally:
        np.seterr(**errors)
        del np.layer_scale
    assert report.status == Status.PASSED, report.checks
    assert INTEGRITY_CHECK not in _by_name(report)
    assert not any("replaced" in c.message for c in report.checks)


def test_a_replacement_undone_within_the_call_is_no_change():
    class Undoes:
        def predict(self, X):
            original = np.allclose
            np.allclose = lambda *args, **kwargs: True
            try:
                return 2 * X
            finally:
                np.allclose = original

        def backward(self, X, Y, dLdY, memory):
            return 2 * dLdY

    report = layercheck.check_layer(Undoes, "3,2:CB")
    assert report.status == Status.PASSED and INTEGRITY_CHECK not in _by_name(report)


def test_a_layer_instance_that_replaces_numpy_when_copied_is_caught_before_the_checks():
    class CopyTampers:
        def __deepcopy__(self, memo):
            np.allclose = lambda *args, **kwargs: True
            return CopyTampers()

        def predict(self, X):
            return 2 * X

    report = layercheck.check_layer(CopyTampers(), "3,2:CB")
    assert np.allclose is _ORIGINAL_ALLCLOSE
    integrity = _by_name(report)[INTEGRITY_CHECK]
    assert integrity.message == "the layer replaced numpy.allclose before the checks began"
    assert all(c.status == Status.INCOMPLETE for c in report.checks if c.name != INTEGRITY_CHECK)


# -- the CLI, with CuPy --------------------------------------------------------------------------


def test_a_module_that_replaces_cupy_fails_from_the_cli(tmp_path):
    # The stand-in CuPy first on the path: layercheck imports it before the module, so it is
    # recorded as it was.
    module = tmp_path / "replaces_cupy.py"
    module.write_text(
        "import cupy\n\n"
        "cupy.asnumpy = lambda a, *args, **kwargs: a.get() * 0\n\n\n"
        "class Double:\n"
        "    example_layout = '3,2:CB'\n\n"
        "    def predict(self, X):\n"
        "        return 2 * X\n"
    )
    report_path = tmp_path / "report.json"
    proc = run_cli("run", module, "--json", report_path, env={"PYTHONPATH": str(TESTS / "fake_gpu"), "PATH": ""})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (target,) = json.loads(report_path.read_text())["targets"]
    (integrity,) = [c for c in target["checks"] if c["name"] == INTEGRITY_CHECK]
    assert integrity["message"] == "the module replaced cupy.asnumpy when it was imported"
