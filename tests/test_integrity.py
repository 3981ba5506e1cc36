"""Verdicts no layer can fake, and no layer failed for what touches no verdict (issues 27 and
36, DESIGN.md section 7): `sandbox.integrity` records what layercheck computes its verdicts
with, judges each change a layer makes by its effect, puts tampering back and names it; the
runner fails the target for it and still decides every other check.

The hostile modules of tests/hostile_gate/ (tamper_*.py, numpy_settings_changed.py) and the
real libraries' idioms of tests/corpus_idioms/ run the same through the CLI, as CI would."""

from __future__ import annotations

import ast
import builtins
import copy
import importlib
import json
import os
import re
import subprocess
import sys
import threading
import time
import types
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
from layercheck.running.runner import allowed_words
from layercheck.sandbox.integrity import (
    INTEGRITY_CHECK,
    Allowed,
    Change,
    ChangeKind,
    Guard,
    Snapshot,
    computes_verdicts,
    describe,
)

_ORIGINAL_ISFINITE = np.isfinite  # looked up by layercheck's outputs_are_finite, among others
_ORIGINAL_ALLCLOSE = np.allclose  # looked up by no code layercheck runs
_NUMERIC = "numpy._core.numeric" if "numpy._core.numeric" in sys.modules else "numpy.core.numeric"  # NumPy 2, 1


@pytest.fixture
def snapshot():
    """A snapshot of now; whatever a test leaves changed is put back."""
    taken = Snapshot.take()
    yield taken
    taken.restore()


def _seen(changes):
    """(kind, what, why allowed) of each change: the reader is asserted where it is the subject."""
    return [(c.kind, c.what, c.allowed) for c in changes]


# -- the snapshot: tampering ---------------------------------------------------------------------


def test_nothing_changed_is_no_change(snapshot):
    assert snapshot.changes() == ()


def test_a_replaced_numpy_function_that_layercheck_looks_up_is_tampering_named_and_put_back(snapshot):
    np.isfinite = lambda *args, **kwargs: True
    (change,) = snapshot.changes()
    assert (change.kind, change.what, change.tampering) == (ChangeKind.REPLACED, "numpy.isfinite", True)
    assert change.reader is not None and change.reader.startswith("layercheck.")  # who reads it, named
    changes, settled = snapshot.settle()
    assert changes == (change,) and settled is snapshot
    assert np.isfinite is _ORIGINAL_ISFINITE and snapshot.changes() == ()


def test_a_removed_function_is_named(snapshot):
    del np.random.default_rng
    assert _seen(snapshot.changes()) == [(ChangeKind.REMOVED, "numpy.random.default_rng", None)]
    snapshot.settle()
    assert np.random.default_rng(0).random() == np.random.default_rng(0).random()


def test_a_new_name_of_the_layers_own_is_allowed(snapshot):
    np.my_helper = lambda x: 2 * x
    try:
        assert snapshot.changes() == ()
    finally:
        del np.my_helper


def test_a_new_module_global_that_hides_a_builtin_its_functions_load_is_found_and_removed(snapshot):
    numeric = sys.modules[_NUMERIC]
    numeric.abs = lambda x: 0  # numeric's functions look `abs` up in their globals first
    (change,) = snapshot.changes()
    assert _seen([change]) == [(ChangeKind.SHADOWED, f"{numeric.__name__}.abs", None)]
    assert change.reader is not None  # one of numeric's functions (named as NumPy names it: numpy.base_repr)
    assert describe((change,)) == f"added {numeric.__name__}.abs, hiding the builtin of that name"
    snapshot.settle()
    assert "abs" not in vars(numeric)


def test_a_functions_code_replaced_in_place_is_found_and_put_back(snapshot):
    code = compare.mismatch.__code__
    compare.mismatch.__code__ = (lambda actual, expected, rtol=0.0, atol=0.0: None).__code__
    assert _seen(snapshot.changes()) == [
        (ChangeKind.REPLACED, "the code of layercheck.numerics.compare.mismatch", None)
    ]
    snapshot.settle()
    assert compare.mismatch.__code__ is code


def test_defaults_and_closures_count_as_code(snapshot):
    defaults = compare.mismatch.__defaults__
    compare.mismatch.__defaults__ = (1e9, 1e9)  # huge tolerances by default
    assert _seen(snapshot.changes()) == [
        (ChangeKind.REPLACED, "the code of layercheck.numerics.compare.mismatch", None)
    ]
    snapshot.settle()
    assert compare.mismatch.__defaults__ is defaults


def test_a_check_of_the_registry_is_named_by_its_key(snapshot):
    check = REGISTRY["outputs_are_finite"]
    original = check.run
    object.__setattr__(check, "run", lambda session: passed())  # past the frozen dataclass
    assert _seen(snapshot.changes()) == [
        (ChangeKind.REPLACED, "layercheck.checks.registry.REGISTRY['outputs_are_finite'].run", None)
    ]
    snapshot.settle()
    assert check.run is original


def test_a_module_of_layercheck_replaced_in_sys_modules_is_tampering(snapshot):
    # layercheck imports some of its own modules inside functions: through sys.modules.
    own = sys.modules["layercheck.numerics.compare"]
    sys.modules["layercheck.numerics.compare"] = type(sys)("layercheck.numerics.compare")
    assert _seen(snapshot.changes()) == [(ChangeKind.REPLACED, "sys.modules['layercheck.numerics.compare']", None)]
    snapshot.settle()
    assert sys.modules["layercheck.numerics.compare"] is own


# -- the snapshot: what touches no verdict ------------------------------------------------------


def test_a_numpy_function_no_code_looks_up_is_allowed_and_left_as_the_layer_set_it(snapshot):
    # np.allclose: layercheck compares with functions of its own; a layer's module may wrap
    # np.allclose (or np.long, np.load...) for its own code, which then keeps working.
    wrapper = lambda *args, **kwargs: True  # noqa: E731
    np.allclose = wrapper
    try:
        (change,) = snapshot.changes()
        assert (change.what, change.allowed, change.reader) == ("numpy.allclose", Allowed.UNREAD, None)
        changes, settled = snapshot.settle()
        assert np.allclose is wrapper  # left for the layer's own code
        assert settled is not snapshot and settled.changes() == ()  # accepted: the fast path holds again
        assert settled.unchanged.holds() and settled.hot.holds()
        np.isfinite = lambda *args, **kwargs: True
        assert _seen(settled.changes()) == [(ChangeKind.REPLACED, "numpy.isfinite", None)]  # still watched
        settled.settle()
    finally:
        np.allclose = _ORIGINAL_ALLCLOSE
        np.isfinite = _ORIGINAL_ISFINITE


def test_print_wrapped_is_allowed_and_a_json_accelerator_may_be_turned_off_but_not_replaced(snapshot):
    """A hunt for false alarms: distributed training wraps builtins.print (print on the main
    process only), and a json recipe turns its C encoder off; neither changes a value a verdict
    is computed with. The encoder replaced by another function still does."""
    import json.encoder

    original_print, original_encoder = builtins.print, json.encoder.c_make_encoder
    try:
        builtins.print = lambda *args, **kwargs: original_print(*args, flush=True, **kwargs)
        json.encoder.c_make_encoder = None
        assert sorted(_seen(snapshot.changes())) == [
            (ChangeKind.REPLACED, "builtins.print", Allowed.OUTPUT),
            (ChangeKind.REPLACED, "json.encoder.c_make_encoder", Allowed.PYTHON_TWIN),
        ]
        json.encoder.c_make_encoder = lambda *args: original_encoder(*args)
        (encoder,) = [c for c in snapshot.changes() if c.what == "json.encoder.c_make_encoder"]
        assert encoder.tampering, encoder
    finally:
        builtins.print, json.encoder.c_make_encoder = original_print, original_encoder


def test_a_cache_or_buffer_size_tuned_is_allowed_and_anything_else_there_is_not(snapshot):
    """A hunt for false alarms: `re._MAXCACHE = 1024` and `io.DEFAULT_BUFFER_SIZE = 65536`
    failed the guard; how much is kept or read at a time changes nothing computed."""
    import io
    import re

    original_cache, original_buffer = re._MAXCACHE, io.DEFAULT_BUFFER_SIZE
    try:
        re._MAXCACHE, io.DEFAULT_BUFFER_SIZE = 1024, 1 << 16
        assert sorted(_seen(snapshot.changes())) == [
            (ChangeKind.REPLACED, "io.DEFAULT_BUFFER_SIZE", Allowed.SIZE),
            (ChangeKind.REPLACED, "re._MAXCACHE", Allowed.SIZE),
        ]
        re._MAXCACHE = lambda: 1024  # not a size
        (cache,) = [c for c in snapshot.changes() if c.what == "re._MAXCACHE"]
        assert cache.tampering, cache
    finally:
        re._MAXCACHE, io.DEFAULT_BUFFER_SIZE = original_cache, original_buffer


def test_an_alias_restored_as_the_builtin_itself_is_allowed(snapshot):
    # What older libraries do where NumPy removed the aliases (np.int, np.float, np.object).
    added = [name for name in ("int", "float", "object", "complex", "str") if name not in vars(np)]
    for name in added:
        setattr(np, name, getattr(builtins, name))
    try:
        assert {(c.kind, c.allowed) for c in snapshot.changes()} <= {(ChangeKind.SHADOWED, Allowed.BUILTIN)}
        assert [c.what for c in snapshot.changes()] == [f"numpy.{name}" for name in added]
        snapshot.settle()
        assert all(name in vars(np) for name in added)  # left in place
    finally:
        for name in added:
            vars(np).pop(name, None)


def test_numpy_reloaded_is_allowed_and_the_original_put_back_in_sys_modules(snapshot):
    # A framework that reloads NumPy to switch its promotion rules: layercheck computes with the
    # module objects it imported, which the reload leaves as they were.
    original = sys.modules["numpy"]
    del sys.modules["numpy"]
    try:
        import numpy as reloaded  # noqa: F401 - a module object of its own

        assert sys.modules["numpy"] is not original
        assert _seen(snapshot.changes()) == [(ChangeKind.REPLACED, "sys.modules['numpy']", Allowed.MODULE_ENTRY)]
        snapshot.settle()
        assert sys.modules["numpy"] is original and snapshot.changes() == ()
    finally:
        sys.modules["numpy"] = original


def test_tzset_is_allowed(snapshot):
    time.tzset()  # new tuples in time.tzname, equal to the old ones where TZ did not change
    changes, settled = snapshot.settle()
    assert {c.allowed for c in changes} <= {Allowed.UNREAD, Allowed.EQUAL}
    assert settled.changes() == ()


def test_tzset_in_another_time_zone_is_allowed(snapshot, monkeypatch):
    # New values, not only new objects, where TZ is not UTC: read by no verdict all the same
    # (numpy's datetime printing reads `self.timezone`, an attribute of its own, not `time`'s).
    monkeypatch.setenv("TZ", "America/New_York")
    try:
        time.tzset()
        changes, settled = snapshot.settle()
        assert changes and {c.allowed for c in changes} <= {Allowed.UNREAD, Allowed.EQUAL}, changes
        assert settled.changes() == ()
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_a_name_rebound_to_an_equal_value_or_the_same_function_is_no_change(snapshot):
    numeric = sys.modules[_NUMERIC]
    names = [n for n, v in vars(numeric).items() if type(v) in (str, tuple) and not n.startswith("__")][:1]
    functions = [n for n, v in vars(np).items() if type(v) is types.FunctionType and not vars(v)][:1]
    assert names and functions
    originals = {n: vars(numeric)[n] for n in names}
    function = vars(np)[functions[0]]
    try:
        for n, v in originals.items():
            setattr(numeric, n, copy.deepcopy(v) if type(v) is tuple else "".join(v))  # equal, not the same
        setattr(
            np,
            functions[0],
            types.FunctionType(
                function.__code__, function.__globals__, function.__name__, function.__defaults__, function.__closure__
            ),
        )
        changes, settled = snapshot.settle()
        assert changes and {c.allowed for c in changes} == {Allowed.EQUAL}, changes
        assert settled.changes() == ()
        # Equal code under other globals is another function: judged by who reads it.
        setattr(np, functions[0], types.FunctionType(function.__code__, {}, function.__name__))
        assert [c.allowed for c in settled.changes()] != [Allowed.EQUAL]
    finally:
        for n, v in originals.items():
            setattr(numeric, n, v)
        setattr(np, functions[0], function)


def test_a_table_of_layercheck_replaced_by_an_equal_copy_is_tampering(snapshot):
    # The copy would be what layercheck reads, and its entries are not the ones watched.
    from layercheck.checks import registry

    original = registry.REGISTRY
    registry.REGISTRY = dict(original)
    try:
        assert _seen(snapshot.changes()) == [(ChangeKind.REPLACED, "layercheck.checks.registry.REGISTRY", None)]
        snapshot.settle()
        assert registry.REGISTRY is original
    finally:
        registry.REGISTRY = original


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
    # the layer: each is declared in its module's _RUNTIME_GLOBALS, which the snapshot leaves out,
    # or in _SET_BEFORE_THE_RECORD where it is set only before the snapshot is taken (watched).
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
            imported = importlib.import_module(module)
            declared = {*getattr(imported, "_RUNTIME_GLOBALS", ()), *getattr(imported, "_SET_BEFORE_THE_RECORD", ())}
            assert rebound <= declared, (module, rebound - declared)


def test_describe_names_the_first_changes_by_kind_and_counts_the_rest():
    changes = (
        Change(ChangeKind.REPLACED, "numpy.isfinite"),
        Change(ChangeKind.REMOVED, "numpy.isnan"),
        Change(ChangeKind.REPLACED, "numpy.isclose"),
        Change(ChangeKind.REPLACED, "numpy.abs"),
    )
    assert describe(changes) == (
        "replaced numpy.isfinite and numpy.isclose, removed numpy.isnan and made 1 more change(s)"
    )
    assert describe(changes[:1]) == "replaced numpy.isfinite"


def test_allowed_changes_are_said_with_why_each_is_allowed():
    guard = Guard.start()
    try:
        np.int = int  # type: ignore[attr-defined]
        np.allclose = lambda *args, **kwargs: True
        assert guard.verify() is None and guard.findings == []
        (allowed,) = guard.allowed
        assert allowed_words(allowed) == (
            "the module replaced numpy.allclose (no code layercheck runs looks it up); added numpy.int "
            "(it is the builtin of that name itself) when it was imported: allowed, it touches no verdict"
        )
    finally:
        np.allclose = _ORIGINAL_ALLCLOSE
        vars(np).pop("int", None)
        guard.stop()


def test_an_unchanged_record_is_confirmed_by_the_fast_path(snapshot):
    # It runs after every check. What keeps it quick (about 1 ms with NumPy alone, several with
    # CuPy's modules too: machines differ, so no time is asserted here) is that "nothing
    # changed" is answered by the flattened identity comparisons, never by the slow walk.
    assert snapshot.unchanged.holds()
    assert snapshot.changes() == ()


def test_a_guard_puts_back_at_once_and_keeps_every_finding():
    guard = Guard.start()
    guard.where = "during predict_does_not_error"
    np.isfinite = lambda *args, **kwargs: True
    first = guard.verify()
    assert np.isfinite is _ORIGINAL_ISFINITE
    assert first is not None and first.message() == "the layer replaced numpy.isfinite during predict_does_not_error"
    assert not first.at_call
    np.isnan, isnan = (lambda *args, **kwargs: True), np.isnan
    try:
        second = guard.verify("later")
        assert second is not None and guard.first is first and guard.findings == [first, second]
    finally:
        np.isnan = isnan
        guard.stop()


def test_after_each_call_of_the_layer_a_replaced_numpy_name_is_found_and_put_back():
    def tampers():
        np.isfinite = lambda *args, **kwargs: True

    guard = Guard.start()
    try:
        guard.where = "during predict_does_not_error"
        calls.run(tampers)  # the call's own hook: before layercheck computes anything with it
        assert np.isfinite is _ORIGINAL_ISFINITE
        assert guard.first is not None and guard.first.at_call
        assert guard.first.message() == "the layer replaced numpy.isfinite during predict_does_not_error"
    finally:
        guard.stop()
        np.isfinite = _ORIGINAL_ISFINITE


def test_the_guards_last_look_puts_back_what_changed_after_every_other():
    # Guard.stop always looks: the layers a run made are freed as it returns, and a __del__
    # of theirs may change what a verdict reads after the report's last look.
    defaults = compare.mismatch.__defaults__
    guard = Guard.start()
    try:
        guard.verify()
        compare.mismatch.__defaults__ = (1e9, 1e9)  # as a __del__ of the layer's could
        guard.where = "as its objects were freed after the checks"
        guard.stop()
        assert compare.mismatch.__defaults__ == defaults
        assert guard.first is not None
        assert guard.first.message() == (
            "the layer replaced the code of layercheck.numerics.compare.mismatch as its objects were freed after "
            "the checks"
        )
    finally:
        calls.guard(None)
        compare.mismatch.__defaults__ = defaults


def test_a_layer_whose_finalizer_replaces_layercheck_code_leaves_the_originals_when_the_check_returns():
    defaults = compare.mismatch.__defaults__

    class TampersWhenFreed:
        made = 0

        def __init__(self):
            TampersWhenFreed.made += 1
            self.first = TampersWhenFreed.made == 1  # the session's reference layer

        def predict(self, X):
            return 2 * X

        def __del__(self):
            if self.first:
                compare.mismatch.__defaults__ = (1e9, 1e9)

    try:
        layercheck.check_layer(TampersWhenFreed, "4,4,2,3:SSCB", checks=["predict_does_not_modify_inputs"])
        assert compare.mismatch.__defaults__ == defaults
    finally:
        compare.mismatch.__defaults__ = defaults


def test_an_enum_members_state_is_named_and_put_back(snapshot):
    # Status.FAILED whose value reads "passed" would report every failure as a pass.
    object.__setattr__(Status.FAILED, "_value_", "passed")
    assert _seen(snapshot.changes()) == [(ChangeKind.REPLACED, "layercheck.status.Status.FAILED._value_", None)]
    snapshot.settle()
    assert Status.FAILED.value == "failed" and Status("failed") is Status.FAILED


def test_an_enums_lookup_table_is_watched(snapshot):
    Status._value2member_map_["failed"] = Status.PASSED
    try:
        assert _seen(snapshot.changes()) == [
            (ChangeKind.REPLACED, "layercheck.status.Status._value2member_map_.failed", None)
        ]
        snapshot.settle()
        assert Status("failed") is Status.FAILED
    finally:
        Status._value2member_map_["failed"] = Status.FAILED


def test_the_workers_channel_to_its_parent_is_watched(snapshot):
    Connection.send = lambda self, obj: None
    try:
        assert _seen(snapshot.changes()) == [(ChangeKind.ADDED, "multiprocessing.connection.Connection.send", None)]
        snapshot.settle()
        assert "send" not in vars(Connection)
    finally:
        if "send" in vars(Connection):
            del Connection.send


def test_numpy_ma_is_recorded_though_import_numpy_does_not_load_it(snapshot):
    # np.median imports it on first use: it is imported before the snapshot, so that a layer's
    # module is never the first to load (and change) it.
    import numpy.ma

    numpy.ma.isMaskedArray = lambda x: True
    assert _seen(snapshot.changes()) == [(ChangeKind.REPLACED, "numpy.ma.isMaskedArray", None)]
    snapshot.settle()
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
        np.isfinite = lambda *args, **kwargs: True
        guard._snapshot = Snapshot.take()  # the "before" would now hold the replacement
        finding = guard.verify("when it was imported")
        assert finding is not None
        assert _seen(finding.changes) == [
            (ChangeKind.REPLACED, "layercheck.sandbox.integrity.Guard._snapshot", None),
            (ChangeKind.REPLACED, "numpy.isfinite", None),
        ]
        assert np.isfinite is _ORIGINAL_ISFINITE
    finally:
        np.isfinite = _ORIGINAL_ISFINITE
        guard.stop()


# -- the verdicts, in-process (the Python API) --------------------------------------------------


class _TampersOnCall:
    """2 * X, right; its `at`-th call of predict replaces np.isfinite and leaves it replaced."""

    at = 1

    def __init__(self):
        self.calls = 0

    def predict(self, X):
        type(self).calls = getattr(type(self), "calls", 0) + 1
        if type(self).calls == self.at:
            np.isfinite = lambda *args, **kwargs: True
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        return 2 * dLdY


def _by_name(report):
    return {c.name: c for c in report.checks}


def test_a_layer_that_replaces_numpy_while_checked_fails_for_it_and_every_check_still_decides():
    class Tamper(_TampersOnCall):
        calls = 0

    report = layercheck.check_layer(Tamper, "3,2:CB")
    assert np.isfinite is _ORIGINAL_ISFINITE  # the caller's session is left as it was
    assert report.status == Status.FAILED
    integrity = _by_name(report)[INTEGRITY_CHECK]
    assert integrity.status == Status.FAILED
    assert integrity.message.startswith("the layer replaced numpy.isfinite during ")
    assert [(c["kind"], c["what"]) for c in integrity.details["changes"]] == [("replaced", "numpy.isfinite")]
    # Found right after the call that made it, and put back before layercheck computed with
    # it: every check decided, with the originals.
    others = [c for c in report.checks if c.name != INTEGRITY_CHECK]
    assert {c.name for c in others} == set(REGISTRY)
    assert not any(c.status in (Status.FAILED, Status.INCOMPLETE) for c in others), others


def test_a_layer_that_tampers_and_has_a_wrong_gradient_fails_on_both():
    class TamperWrong(_TampersOnCall):
        calls = 0

        def backward(self, X, Y, dLdY, memory):
            return 3 * dLdY  # predict is 2 * X

    report = layercheck.check_layer(TamperWrong, "3,2:CB")
    checks = _by_name(report)
    assert checks[INTEGRITY_CHECK].status == Status.FAILED
    gradients = checks["gradients_are_numerically_correct"]
    assert gradients.status == Status.FAILED and "3/2" in gradients.message


def test_a_change_found_only_when_a_check_ended_leaves_that_check_undecided_and_no_other():
    # A change no look after a call sees (the defaults of one of layercheck's functions): the
    # check it was made in may have computed with it, the others did not.
    defaults = compare.mismatch.__defaults__

    class Deep:
        done = False

        def predict(self, X):
            if not Deep.done:
                Deep.done = True
                compare.mismatch.__defaults__ = (1e9, 1e9)
            return 2 * X

        def backward(self, X, Y, dLdY, memory):
            return 2 * dLdY

    try:
        report = layercheck.check_layer(Deep, "3,2:CB")
    finally:
        compare.mismatch.__defaults__ = defaults
    undecided = [c for c in report.checks if c.status == Status.INCOMPLETE]
    assert len(undecided) == 1 and undecided[0].message.startswith("not decided: the layer replaced")
    integrity = _by_name(report)[INTEGRITY_CHECK]
    assert (
        integrity.message
        == f"the layer replaced the code of layercheck.numerics.compare.mismatch during {undecided[0].name}"
    )
    assert any("not decided" in line for line in integrity.explanation)
    decided = [c for c in report.checks if c.name not in (INTEGRITY_CHECK, undecided[0].name)]
    assert decided and all(c.status in (Status.PASSED, Status.SKIPPED) for c in decided)


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
    assert report.allowed_changes == []


def test_a_replacement_undone_within_the_call_is_no_change():
    class Undoes:
        def predict(self, X):
            original = np.isfinite
            np.isfinite = lambda *args, **kwargs: True
            try:
                return 2 * X
            finally:
                np.isfinite = original

        def backward(self, X, Y, dLdY, memory):
            return 2 * dLdY

    report = layercheck.check_layer(Undoes, "3,2:CB")
    assert report.status == Status.PASSED and INTEGRITY_CHECK not in _by_name(report)


def test_a_layer_that_rebinds_a_name_no_code_looks_up_passes_and_says_so_in_its_allowed_changes():
    class Wraps:
        def predict(self, X):
            np.allclose = lambda a, b, **kwargs: _ORIGINAL_ALLCLOSE(a, b, rtol=1e-3)  # for its own code
            return 2 * X

        def backward(self, X, Y, dLdY, memory):
            return 2 * dLdY

    try:
        report = layercheck.check_layer(Wraps, "3,2:CB")
        assert np.allclose is not _ORIGINAL_ALLCLOSE  # left as the layer set it
    finally:
        np.allclose = _ORIGINAL_ALLCLOSE
    assert report.status == Status.PASSED and INTEGRITY_CHECK not in _by_name(report)
    (said,) = report.allowed_changes
    # Said once, though every call rebinds it: where it was first found.
    first_check = next(c.name for c in report.checks if c.status is Status.PASSED)
    assert said == (
        f"the layer replaced numpy.allclose (no code layercheck runs looks it up) during {first_check}: "
        "allowed, it touches no verdict"
    )


def test_a_layer_instance_that_replaces_numpy_when_copied_is_caught_and_still_checked():
    class CopyTampers:
        def __deepcopy__(self, memo):
            np.isfinite = lambda *args, **kwargs: True
            return CopyTampers()

        def predict(self, X):
            return 2 * X

    report = layercheck.check_layer(CopyTampers(), "3,2:CB")
    assert np.isfinite is _ORIGINAL_ISFINITE
    integrity = _by_name(report)[INTEGRITY_CHECK]
    # Each copy replaces it again: said once, with where it was found again.
    assert integrity.message.startswith(
        "the layer replaced numpy.isfinite before the checks began; again while the layer was set up, "
        "during function_syntaxes_are_correct and "
    )
    assert integrity.message.endswith(" more times")
    assert _by_name(report)["outputs_are_finite"].status == Status.PASSED


def test_no_rendering_module_runs_while_verdicts_are_computed(tmp_path):
    # The names only the rendering modules look up (builtins.print for the console, np.load for
    # the reproducers' files) are not read by any verdict (integrity.RENDERING): checks run
    # through the API and as a worker runs them, under a profiler, call none of their code.
    from layercheck.results import Kind
    from layercheck.running.batch import CheckJob
    from layercheck.settings.options import Options

    layer = tmp_path / "wrong.py"
    layer.write_text(
        "class Wrong:\n"
        "    example_layout = '3,2:CB'\n\n"
        "    def predict(self, X):\n"
        "        return X * X\n\n"
        "    def backward(self, X, Y, dLdY, memory):\n"
        "        return 3 * dLdY * X\n"
    )
    called: set[str] = set()

    def profile(frame, event, arg):
        if event == "call":
            called.add(frame.f_globals.get("__name__") or "")

    from layercheck.contract.layout import parse_layouts

    job = CheckJob(
        "wrong.py",
        str(layer),
        "Wrong",
        Kind.LAYER,
        tuple(parse_layouts("3,2:CB")),
        {},
        Options(),
        60.0,
        repro_folder=str(tmp_path),
        record_sources=True,
    )
    sys.setprofile(profile)  # before the guards start: a hook there before, allowed
    try:
        layercheck.check_layer(_TampersOnCall, "3,2:CB")
        payload = job.run(lambda kind, data: None)
    finally:
        sys.setprofile(None)
        np.isfinite = _ORIGINAL_ISFINITE
    assert payload["status"] == "failed" and any(name.endswith(".npz") for name in os.listdir(tmp_path))
    ours = {name for name in called if name.partition(".")[0] == "layercheck"}
    assert "layercheck.checks.gradients" in ours and "layercheck.reproducers.evidence" in ours
    assert [name for name in ours if not computes_verdicts(name)] == []


# -- the CLI, with CuPy --------------------------------------------------------------------------


def test_a_module_that_replaces_cupy_fails_from_the_cli(tmp_path):
    # The stand-in CuPy first on the path: layercheck imports it before the module, so it is
    # recorded as it was.
    module = tmp_path / "replaces_cupy.py"
    module.write_text(
        "import cupy\n\n"
        "cupy.isfinite = lambda a, *args, **kwargs: cupy.ones(a.shape, dtype=bool)\n\n\n"
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
    assert integrity["message"] == "the module replaced cupy.isfinite when it was imported"


# -- the count of function writes (a worker's looks skip comparing functions while none was made) --


_COUNTED = """
import subprocess
import sys
import layercheck.numerics.compare as compare
from layercheck.sandbox import integrity

hooked = sys.argv[1] == "hooked"
if hooked:
    integrity.count_function_writes()
snapshot = integrity.Snapshot.take()
assert snapshot.changes() == () and snapshot.changes() == ()  # nothing written: nothing found, twice
original = compare.mismatch.__code__
compare.mismatch.__code__ = (lambda *a, **k: None).__code__
print("code:", [c.what for c in snapshot.changes()])
compare.mismatch.__code__ = original
assert snapshot.changes() == ()
compare.mismatch.__defaults__ = (1e9, 1e9)  # a write of defaults is counted as well
print("defaults:", [c.what for c in snapshot.changes()])
snapshot.restore()
if not hooked:  # a layer that claims the hook where there is none changes a watched name
    integrity._HOOKED = True
    compare.mismatch.__code__ = (lambda *a, **k: None).__code__
    print("claimed:", sorted(c.what for c in snapshot.changes()))
"""


@pytest.mark.parametrize("hooked", ["hooked", "not hooked"])
def test_a_write_of_a_functions_code_or_defaults_is_found_whether_writes_are_counted_or_not(tmp_path, hooked):
    # A process of its own: an audit hook cannot be removed from the one that installs it.
    script = tmp_path / "counted.py"
    script.write_text(_COUNTED, encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script), hooked], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "code: ['the code of layercheck.numerics.compare.mismatch']"
    assert lines[1] == "defaults: ['the code of layercheck.numerics.compare.mismatch']"
    if hooked == "not hooked":
        assert lines[2] == (
            "claimed: ['layercheck.sandbox.integrity._HOOKED', 'the code of layercheck.numerics.compare.mismatch']"
        )


def test_every_worker_counts_function_writes(tmp_path):
    # Else each look compares every function again: correct, and three times slower.
    (tmp_path / "probe.py").write_text(
        "from layercheck.sandbox import integrity\n\n"
        "class Probe:\n"
        "    def predict(self, X):\n"
        "        assert integrity._HOOKED and integrity._function_writes() >= 0\n"
        "        return 2 * X\n\n"
        "    def backward(self, X, Y, dLdY, memory):\n"
        "        return 2 * dLdY\n",
        encoding="utf-8",
    )
    proc = run_cli("run", tmp_path / "probe.py", "--layout", "3,2:CB", "-q")
    assert proc.returncode == 0, proc.stdout + proc.stderr


class _TampersWhenRead:
    """A descriptor whose `__get__`, run as the class attribute is read, replaces numpy's."""

    def __get__(self, instance, owner=None):
        np.isfinite = lambda *args, **kwargs: True
        return lambda X: 2 * X


class ReadTampers:
    forward = _TampersWhenRead()  # read first, to tell a layer from an operation

    def predict(self, X):
        return 2 * X


class _CollidesWithForward:
    """A key of a class's namespace whose hash is that of "forward": every lookup of the name
    in it compares the key, and runs its `__eq__` (a review's way into the time between the
    guard's first look and the layer's set-up, for a class of plain methods)."""

    armed = False  # not while the class is made, nor after the check: by the test alone

    def __hash__(self):
        return hash("forward")

    def __eq__(self, other):
        if _CollidesWithForward.armed:
            np.isfinite = lambda *args, **kwargs: True
        return False


class KeyTampers:
    locals()[_CollidesWithForward()] = None

    def forward(self, X):
        return 2 * X

    def backward(self, dLdY):
        return 2 * dLdY

    def predict(self, X):
        return 2 * X


@pytest.mark.parametrize("layer", [ReadTampers, KeyTampers])
def test_what_a_class_runs_as_it_is_read_is_caught_before_the_checks_began(layer):
    # What the class's attributes run when layercheck reads them to tell what it is (a
    # descriptor, a key of its namespace) is the layer's code: the guard looks before the
    # layer is set up, whatever its methods are.
    _CollidesWithForward.armed = True
    try:
        report = layercheck.check_layer(layer, "3,2:CB")
    finally:
        _CollidesWithForward.armed = False
    try:
        assert np.isfinite is _ORIGINAL_ISFINITE
    finally:
        np.isfinite = _ORIGINAL_ISFINITE
    integrity = _by_name(report)[INTEGRITY_CHECK]
    assert integrity.message.startswith("the layer replaced numpy.isfinite before the checks began"), integrity.message


class _Harmless:
    """A descriptor of the layer's that does nothing but return a function: its `__get__` is
    still the layer's code, run by the read."""

    def __get__(self, instance, owner=None):
        return lambda X: 2 * X


class _Meta(type):
    pass


class _Slotted:
    __slots__ = ("scale",)


class PlainDouble(_Slotted):
    """A class of plain functions and values: a property, a staticmethod, a classmethod and
    slots (the interpreter's descriptors) among them."""

    learnables = ()
    size = property(lambda self: 2)
    make = staticmethod(lambda: None)
    build = classmethod(lambda cls: cls)

    def predict(self, X):
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        return 2 * dLdY


def _variants():
    return {
        "descriptor": type("Described", (PlainDouble,), {"twice": _Harmless()}),
        "inherited descriptor": type("Inherits", (type("Base", (), {"twice": _Harmless()}), PlainDouble), {}),
        "metaclass": _Meta("Meta", (PlainDouble,), {}),
        "classmethod of a descriptor": type("WrapsDescriptor", (PlainDouble,), {"build": classmethod(_Harmless())}),
    }


def _looks_counted(monkeypatch):
    """Where each whole look of the guard is taken (its `where`), in order, as they are."""
    from layercheck.sandbox import integrity

    looks = []
    verify = integrity.Guard.verify
    monkeypatch.setattr(
        integrity.Guard, "verify", lambda self, *a, **k: looks.append(self.where) or verify(self, *a, **k)
    )
    return looks


def _around_checks(monkeypatch, before=None, after=None):
    """The runner's checks run with `before(name)` and `after(name)` around each: what a
    layer's code could do from a check that calls none of its methods."""
    from layercheck.running import runner

    original = runner.run_check

    def run_check(check, session, on_evidence=None):
        if before is not None:
            before(check.name)
        result = original(check, session, on_evidence)
        if after is not None:
            after(check.name)
        return result

    monkeypatch.setattr(runner, "run_check", run_check)


def _replace_isfinite():
    np.isfinite = lambda *args, **kwargs: True


def test_reads_run_no_code_for_a_class_of_plain_functions_and_values_alone():
    from layercheck.sandbox import reads_run_no_code

    assert reads_run_no_code(PlainDouble)
    for what, cls in _variants().items():
        assert not reads_run_no_code(cls), what
    assert not reads_run_no_code(KeyTampers)  # a key whose __eq__ is the layer's
    assert not reads_run_no_code(ReadTampers)
    assert not reads_run_no_code(PlainDouble())  # an instance: its class's reads are not all


def test_the_look_before_set_up_is_taken_unless_nothing_of_the_layers_can_have_run(monkeypatch):
    """A class of plain functions given with its layout: the guard's look after Guard.start
    would find what that found, and is not taken; any class whose reads may run its code
    (here a harmless descriptor) has it taken, and the checks are the same."""
    looks = _looks_counted(monkeypatch)
    counts = {}
    for what, cls in {"plain": PlainDouble, **_variants()}.items():
        looks.clear()
        report = layercheck.check_layer(cls, "3,2:CB", checks=["gradients_are_numerically_correct"], dtypes=["float64"])
        assert report.result("gradients_are_numerically_correct").status == "passed", what
        counts[what] = looks.count("before the checks began")
    assert counts.pop("plain") == 0
    assert set(counts.values()) == {1}, counts


def _statuses(report):
    return {c.name: c.status for c in report.checks if c.name != INTEGRITY_CHECK}


@pytest.mark.parametrize("every_time", [True, False])
def test_tampering_in_a_check_that_calls_no_method_of_the_layer_is_found_and_every_other_check_decides(
    monkeypatch, every_time
):
    """The look after a check that called no method of the layer is owed, and taken before the
    layer's next call: what such a check ran of the layer's (here: after outputs_are_finite,
    as a property of the layer it read could) is found there, and put back. The checks since
    the last look then run again, each looked after: the one that tampers again is not
    decided, every other one is, as on the untampered layer; tampering made once leaves none
    undecided."""
    clean = _statuses(layercheck.check_layer(PlainDouble, "3,2:CB"))
    done = []

    def after(name):
        if name == "outputs_are_finite" and (every_time or not done):
            done.append(name)
            _replace_isfinite()

    _around_checks(monkeypatch, after=after)
    try:
        report = layercheck.check_layer(PlainDouble, "3,2:CB")
    finally:
        assert np.isfinite is _ORIGINAL_ISFINITE
        np.isfinite = _ORIGINAL_ISFINITE
    expected = dict(clean, outputs_are_finite=Status.INCOMPLETE) if every_time else clean
    assert _statuses(report) == expected
    assert [c.name for c in report.checks][:-1] == list(clean)  # recorded in their order
    message = _by_name(report)[INTEGRITY_CHECK].message
    assert re.match(r"the layer replaced numpy\.isfinite during one of the \d+ checks from \w+ to \w+", message), (
        message
    )
    assert ("; again during outputs_are_finite" in message) is every_time, message


def test_a_look_is_taken_after_the_checks_that_call_the_layer_and_after_the_last_alone(monkeypatch):
    looks = _looks_counted(monkeypatch)
    report = layercheck.check_layer(PlainDouble, "3,2:CB")
    after_checks = [where for where in looks if where.startswith("during ")]
    checks = [c.name for c in report.checks if c.name != INTEGRITY_CHECK]
    assert after_checks[-1] == f"during {checks[-1]}"
    assert len(after_checks) < len(checks) / 2, (after_checks, checks)


def test_the_checks_a_look_was_owed_for_are_reported_before_the_layer_runs_again():
    """A worker streams each result as it is recorded (`on_check`): those of the checks that
    called no method of the layer are recorded once the look owed for them is taken, before
    the layer's next call, so that a layer that then hangs or crashes loses none of them."""
    from layercheck.running.runner import run_target
    from layercheck.settings.options import make_options, parse_input_layouts

    started, recorded, behind = [], [], []

    class Watched(PlainDouble):
        def predict(self, X):
            ended = started[:-1]  # every check started before the one under way has ended
            behind.append(sorted(set(ended) - set(recorded)))
            return 2 * X

    report = run_target(
        "Watched",
        Watched,
        parse_input_layouts("3,2:CB"),
        make_options(check_names=tuple(REGISTRY)),
        on_start=lambda check: started.append(check.name),
        on_check=lambda result: recorded.append(result.name),
    )
    assert all(not names for names in behind), behind
    assert recorded == [c.name for c in report.checks]


def test_numpy_replaced_after_a_check_that_calls_no_method_and_put_back_before_the_next_call_is_seen(monkeypatch):
    """What a layer could do from a check that calls none of its methods (a property read, a
    `__del__`): replace np.isfinite there, and put it back as the next check starts, before
    the look owed would see it. NumPy's public names are looked at after each such check, as
    after a call: the replacement is found where it was made, and that check is not decided."""
    clean = list(_statuses(layercheck.check_layer(PlainDouble, "3,2:CB")))
    following = clean[clean.index("outputs_are_finite") + 1]

    def undo(name):
        if name == following:  # undone before anything of the layer's runs again
            np.isfinite = _ORIGINAL_ISFINITE

    def replace(name):
        if name == "outputs_are_finite":
            _replace_isfinite()

    _around_checks(monkeypatch, before=undo, after=replace)
    try:
        report = layercheck.check_layer(PlainDouble, "3,2:CB")
    finally:
        np.isfinite = _ORIGINAL_ISFINITE
    assert _by_name(report)[INTEGRITY_CHECK].status == Status.FAILED
    assert _by_name(report)["outputs_are_finite"].status == Status.INCOMPLETE
