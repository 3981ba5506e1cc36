"""The session shares what checks compute (steps, inputs, dL/dY) without letting one check's
writes reach another, and a run costs one call per step."""

from __future__ import annotations

import dataclasses
import gc
import traceback
import weakref
from collections import Counter

import numpy as np
import pytest

import layercheck
from layercheck.checks import REGISTRY
from layercheck.contract.layout import parse_layouts
from layercheck.results import Call
from layercheck.running.session import DataKey, Session, StepKey
from layercheck.settings.options import make_options

LAYOUT = "4,3,5,6:SSCB"


class Counted:
    """A correct scaled ReLU with a learnable scale; counts the calls of each method."""

    calls: Counter[str] = Counter()
    learnables = ("w",)

    def __init__(self):
        self.w = None

    def initialize(self, layout):
        if self.w is None:
            self.w = np.ones((1, 1, layout.size[2], 1)) * 1.5

    def predict(self, X):
        Counted.calls["predict"] += 1
        return self.w * np.maximum(X, 0)

    def backward(self, X, Y, dLdY, memory):
        Counted.calls["backward"] += 1
        positive = X > 0
        return self.w * dLdY * positive, np.sum(dLdY * X * positive, axis=(0, 1, 3), keepdims=True)


def _session(cls, dtypes=("float64", "float32")) -> Session:
    options = make_options(dtypes=list(dtypes), check_names=tuple(REGISTRY))
    return Session(cls, parse_layouts(LAYOUT), options)


def test_a_training_step_is_one_predict_and_one_backward_per_dtype():
    """backward continues the predict step of a layer without forward (one call for both),
    and the hygiene checks read the steps' calls instead of calling again."""
    Counted.calls.clear()
    checks = [
        "predict_does_not_error",
        "backward_does_not_error",
        "backward_is_consistent_in_size",
        "backward_is_consistent_in_type",
        "predict_does_not_modify_inputs",
        "backward_does_not_modify_inputs",
    ]
    report = layercheck.check_layer(Counted, LAYOUT, checks=checks)
    assert report.status == "passed", [(c.name, c.message) for c in report.checks]
    assert Counted.calls == {"predict": 2, "backward": 2}


class Unassigned(Counted):
    """backward raises (a NameError), at every precision: a step keeps the error, and the
    gradient check gives up on each precision in turn."""

    def backward(self, X, Y, dLdY, memory):
        return dLdX  # noqa: F821 - the bug under test


class WrongScale(Counted):
    """backward's gradient of X is twice the true one: the gradient check fails, and says where."""

    def backward(self, X, Y, dLdY, memory):
        dX, dw = super().backward(X, Y, dLdY, memory)
        return 2 * dX, dw


@pytest.mark.parametrize(("cls", "status"), [(Counted, "passed"), (Unassigned, "failed"), (WrongScale, "failed")])
def test_what_a_run_holds_is_freed_when_check_layer_returns(cls, status, monkeypatch):
    """No reference cycle keeps a session (and the copies of the inputs, outputs and gradients
    it holds) alive after the run: the cyclic collector runs by object counts, not bytes, so a
    test suite that checks a few large layers would hold every one of them until it does. An
    error a step keeps, and an exception that ends a check, hold frames whose locals hold the
    session: neither may make a cycle."""
    made = []  # this run's sessions, weakly (another test's may be kept by its traceback)
    init = Session.__init__

    def recorded(self, *args, **kwargs):
        made.append(weakref.ref(self))
        init(self, *args, **kwargs)

    monkeypatch.setattr(Session, "__init__", recorded)
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        report = layercheck.check_layer(cls, LAYOUT)
        assert report.status == status
        assert made and all(ref() is None for ref in made)
    finally:
        if enabled:
            gc.enable()


def test_the_session_keys_its_cache_by_type():
    session = _session(Counted)
    assert session.step("forward", "float64") is session.step("predict", "float64")
    assert StepKey(Call.PREDICT, "float64", False) in session._cache.steps
    session.backward("float32")
    assert StepKey(Call.BACKWARD, "float32", False) in session._cache.steps
    assert DataKey("float32", False) in session.draws._inputs


def test_inputs_are_drawn_once_and_handed_out_as_copies():
    session = _session(Counted)
    shared64, shared32 = session.inputs("float64", shared=True)[0], session.inputs("float32", shared=True)[0]
    np.testing.assert_array_equal(shared64.astype(np.float32), shared32)
    fresh = session.inputs("float64")[0]
    assert fresh is not shared64 and np.shares_memory(fresh, shared64) is False
    fresh[...] = 0
    assert np.any(session.inputs("float64", shared=True)[0] != 0)


def test_training_dldy_is_the_same_values_in_fresh_arrays():
    session = _session(Counted)
    result = session.backward("float64").require()
    again, _ = session.training_output_gradients(result.outputs, "float64")
    more, _ = session.training_output_gradients(result.outputs, "float64")
    assert again[0] is not more[0]
    np.testing.assert_array_equal(again[0], more[0])
    np.testing.assert_array_equal(again[0], result.dLdY[0])


class WritesIntoY(Counted):
    """backward fills its Y (the very array predict returned) with NaN."""

    def backward(self, X, Y, dLdY, memory):
        grads = super().backward(X, Y, dLdY, memory)
        Y[...] = np.nan
        return grads


class IdentityWritesIntoX(Counted):
    """predict returns its input itself; backward then writes into X (and so into Y)."""

    learnables = ()

    def predict(self, X):
        return X

    def backward(self, X, Y, dLdY, memory):
        X[...] = np.inf
        return dLdY.copy()


class WritesIntoHeldY(Counted):
    """predict keeps its output on self; backward writes into that one, not its argument."""

    def predict(self, X):
        self.Y = super().predict(X)
        return self.Y

    def backward(self, X, Y, dLdY, memory):
        grads = super().backward(X, Y, dLdY, memory)
        self.Y *= 2
        return grads


@pytest.mark.parametrize("cls", [WritesIntoY, IdentityWritesIntoX, WritesIntoHeldY])
def test_what_backward_writes_into_reaches_no_other_check(cls):
    """The step's outputs are read by many checks after backward has run on them: backward
    writing into Y (or into X, which Y is) is its own failure only."""
    report = layercheck.check_layer(cls, LAYOUT)
    failed = {c.name for c in report.checks if c.status == "failed"}
    assert "backward_does_not_modify_inputs" in failed
    for name in ("outputs_are_finite", "predict_is_consistent_in_type", "forward_predict_are_consistent_in_size"):
        assert report.result(name).status != "failed", report.result(name).message
    assert report.result("predict_is_consistent_across_observations").status == "passed"


def test_a_predict_that_writes_into_its_input_is_still_caught():
    class DoublesX(Counted):
        def predict(self, X):
            X *= 2
            return super().predict(X / 2)

    report = layercheck.check_layer(DoublesX, LAYOUT, checks=["predict_does_not_modify_inputs"])
    result = report.result("predict_does_not_modify_inputs")
    assert result.status == "failed" and "X was modified in place" in result.message


class _RunningMean:
    """Y = X - m, with m an exponential running mean of X that predict returns as the updated
    state and also keeps on the layer: set anew (`rebind`) or written into."""

    state = ("m",)
    rebind = True

    def __init__(self):
        self.m = np.zeros((1, 1, 3, 1))

    def predict(self, X):
        m = 0.9 * self.m + 0.1 * X.mean(axis=(0, 1, 3), keepdims=True)
        if self.rebind:
            self.m = m
        else:
            self.m[...] = m
        return X - m, m


class _RunningMeanInPlace(_RunningMean):
    rebind = False


@pytest.mark.parametrize(
    ("layer", "said"), [(_RunningMean, "set to another array on the layer"), (_RunningMeanInPlace, "modified in place")]
)
def test_a_state_kept_on_the_layer_is_said_set_anew_or_written_into_as_it_was(layer, said):
    """A state the layer sets to a new array is no array written into: each is said as it is
    (the repair differs: return the state, or stop writing into the one given)."""
    result = layercheck.check_layer(layer, "4,4,3,5:SSCB", checks=["predict_does_not_modify_inputs"]).result(
        "predict_does_not_modify_inputs"
    )
    assert result.status == "failed"
    assert result.message.startswith(f"predict modifies its arguments: state m was {said}: "), result.message


@dataclasses.dataclass(frozen=True)
class _FrozenError(Exception):
    """An exception class that refuses attribute writes, as a frozen dataclass does."""

    shape: tuple


class RaisesFrozen(Counted):
    def backward(self, X, Y, dLdY, memory):
        raise _FrozenError(X.shape)


def test_an_exception_that_refuses_attribute_writes_is_the_layers_failure():
    """A step lets go of the traceback of what the layer raised, through BaseException's own
    method: an exception that refuses `__traceback__ = None` is still the layer's failure."""
    report = layercheck.check_layer(RaisesFrozen, LAYOUT, checks=["backward_does_not_error"])
    assert report.error is None
    result = report.result("backward_does_not_error")
    assert result.status == "failed"
    assert result.message.startswith("backward raised _FrozenError: (4, 3, 5, 6) (test_session.py:")


def test_the_exception_a_caller_is_handling_keeps_its_traceback_and_locals():
    """check_layer called while its caller handles an exception: what the layer and the checks
    raise chains it as their context, and letting go of their frames leaves the caller's
    exception, its traceback and its frames' locals as they were."""

    def crash():
        secret = "a local of the caller's frame"  # noqa: F841 - read back through the traceback
        raise KeyError("the caller's")

    try:
        crash()
    except KeyError as exc:
        before = len(traceback.extract_tb(exc.__traceback__))
        report = layercheck.check_layer(Unassigned, LAYOUT)
        assert report.status == "failed"
        assert len(traceback.extract_tb(exc.__traceback__)) == before == 2
        frame = exc.__traceback__.tb_next.tb_frame
        assert frame.f_locals["secret"] == "a local of the caller's frame"


class _ComplexGain:
    """A complex learnable gain read through a property that counts its reads; its constructor
    argument `num_outputs` sets an attribute layercheck reads as the contract."""

    learnables = ("w",)
    reads = 0

    def __init__(self, num_outputs=1):
        self.num_outputs = num_outputs
        self._w = None

    @property
    def w(self):
        _ComplexGain.reads += 1
        return self._w

    @w.setter
    def w(self, value):
        self._w = value

    def initialize(self, layout):
        if self._w is None:
            self._w = np.full((1, 1, layout.size[2], 1), 1.5 + 0.5j)

    def predict(self, X):
        return self._w * X


def test_the_notes_run_nothing_of_the_layer_once_it_is_set_up():
    # The report's last look is the one after the last check: the notes, made
    # after it, say of the layer only what was read while it was set up or a check ran.
    from layercheck.contract.loading import constructor
    from layercheck.running.session import notes

    options = make_options(dtypes=["float64"], check_names=tuple(REGISTRY))
    session = Session(constructor(_ComplexGain, {"num_outputs": 1}), parse_layouts(LAYOUT), options)
    session.step("predict", "float64").require()
    reads = _ComplexGain.reads
    said = notes(session)
    assert _ComplexGain.reads == reads
    assert [note.split(",")[0].split(" are ")[0] for note in said] == [
        "the constructor argument num_outputs=1 set the attribute num_outputs",
        "learnable w and the outputs",
    ]
