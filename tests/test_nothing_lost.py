"""Nothing is lost to speed (issue 17): the gradient check clears arguments with one joint
probe, and still catches a relative error of 1e-6 in any one argument, names the argument,
and never fails or gives up on correct layers with inputs next to their kinks. Timings live
in benchmarks/speed.py, not here."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from conftest import GRADIENTS, SAMPLES, SEED_LAYOUT, load_layer, mentions

import layercheck

SMALL = "6,6,8,4:SSCB"


def _planted(cls, which: int, delta: float):
    """`cls` with its `which`-th returned gradient scaled by 1 + delta."""

    class Planted(cls):
        def backward(self, *args):
            grads = list(super().backward(*args))
            grads[which] = grads[which] * (1 + delta)
            return tuple(grads)

    Planted.__name__ = f"{cls.__name__}Planted"
    return Planted


def _arguments(cls) -> list[str]:
    return ["X", *getattr(cls, "learnables", ())]


CASES = [
    (name, which) for name in ("prelu", "srelu") for which in range(len(_arguments(load_layer(SAMPLES / f"{name}.py"))))
]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("name", "which"), CASES)
def test_a_relative_error_of_1e_6_in_any_one_argument_fails_and_is_named(name, which, seed):
    cls = load_layer(SAMPLES / f"{name}.py")
    argument = _arguments(cls)[which]
    result = layercheck.check_layer(
        _planted(cls, which, 1e-6), SMALL, checks=[GRADIENTS], dtypes=["float64"], seed=seed
    ).result(GRADIENTS)
    assert result.status == "failed", result.message
    failing = [r["argument"] for r in result.details["arguments"] if r["status"] == "failed"]
    assert failing == [argument]
    assert mentions(result.message, argument)


@pytest.mark.parametrize(("name", "which"), CASES)
def test_the_same_at_the_seed_layout(name, which):
    cls = load_layer(SAMPLES / f"{name}.py")
    argument = _arguments(cls)[which]
    result = layercheck.check_layer(
        _planted(cls, which, 1e-6), SEED_LAYOUT, checks=[GRADIENTS], dtypes=["float64"]
    ).result(GRADIENTS)
    assert result.status == "failed", result.message
    assert [r["argument"] for r in result.details["arguments"] if r["status"] == "failed"] == [argument]


def _near_kinks(x: np.ndarray, points: np.ndarray, rng: np.random.Generator, share: float) -> np.ndarray:
    """`x` with `share` of its elements moved to within 1e-7 of `points` (broadcast), some onto them."""
    chosen = rng.random(x.shape) < share
    target = np.broadcast_to(points, x.shape)
    near = target + rng.uniform(-1e-7, 1e-7, x.shape)
    near = np.where(rng.random(x.shape) < 0.1, target, near)
    return np.where(chosen, near, x)


@pytest.mark.parametrize("name", ["prelu", "srelu"])
def test_no_false_failure_or_incomplete_over_50_seeds_next_to_the_kinks(name):
    cls = load_layer(SAMPLES / f"{name}.py")
    layout = layercheck.parse_layout(SMALL)
    statuses = []
    for seed in range(50):
        rng = np.random.default_rng(seed)
        x = rng.standard_normal(layout.size)
        if name == "prelu":
            x = _near_kinks(x, np.zeros(1), rng, 1 / 3)
        else:
            layer = cls()
            np.random.seed(seed)
            layer.initialize(layout)
            x = _near_kinks(x, layer.tl, rng, 1 / 6)
            x = _near_kinks(x, layer.tr, rng, 1 / 6)
        result = layercheck.check_layer(cls, layout, checks=[GRADIENTS], seed=seed, inputs=[x]).result(GRADIENTS)
        statuses.append(result.status)
    assert set(statuses) == {"passed"}, statuses


class WavyScale:
    """Y = a * sin(w * X) + b per channel: smooth, with a third derivative as large as its first
    (w up to 3), and three arguments, so that the joint probe decides it."""

    learnables = ("a", "w", "b")

    def initialize(self, layout):
        shape = [1] * layout.ndim
        shape[layout.find("C")] = layout.size[layout.find("C")]
        rng = np.random.default_rng(7)
        self.a, self.w, self.b = rng.uniform(0.5, 2, shape), rng.uniform(1, 3, shape), rng.standard_normal(shape)
        self.axes = tuple(i for i in range(layout.ndim) if i != layout.find("C"))

    def predict(self, X):
        return self.a * np.sin(self.w * X) + self.b

    def backward(self, X, Y, dLdY, memory):
        wx = self.w * X
        dLda = np.sum(dLdY * np.sin(wx), axis=self.axes, keepdims=True)
        dLdw = np.sum(dLdY * self.a * np.cos(wx) * X, axis=self.axes, keepdims=True)
        dLdb = np.sum(dLdY, axis=self.axes, keepdims=True)
        return dLdY * self.a * self.w * np.cos(wx), dLda, dLdw, dLdb


@pytest.mark.parametrize("layout", [SMALL, "16,16,8,16:SSCB"])
def test_a_smooth_layer_with_a_large_third_derivative_passes_and_keeps_its_sensitivity(layout):
    """The joint probe's error estimate (the third difference) covers its truncation error on
    a curved layer, over seeds; and a 1e-6 error in any one argument still fails, named."""
    for seed in range(5):
        result = layercheck.check_layer(WavyScale, layout, checks=[GRADIENTS], dtypes=["float64"], seed=seed)
        assert result.result(GRADIENTS).status == "passed", result.result(GRADIENTS).message
    for which, argument in enumerate(["X", "a", "w", "b"]):
        planted = layercheck.check_layer(
            _planted(WavyScale, which, 1e-6), layout, checks=[GRADIENTS], dtypes=["float64"]
        ).result(GRADIENTS)
        assert planted.status == "failed", planted.message
        assert [r["argument"] for r in planted.details["arguments"] if r["status"] == "failed"] == [argument]


def _counting(cls):
    """`cls` counting its predict and backward calls (on the class: every object counts)."""

    class Counting(cls):
        calls = {"predict": 0, "backward": 0}

        def predict(self, X):
            Counting.calls["predict"] += 1
            return super().predict(X)

        def backward(self, X, Y, dLdY, memory):
            Counting.calls["backward"] += 1
            return super().backward(X, Y, dLdY, memory)

    Counting.__name__ = cls.__name__
    return Counting


@pytest.mark.parametrize(("name", "predicts"), [("prelu", 3), ("srelu", 7)])
def test_the_check_of_a_correct_layer_costs_a_few_calls(name, predicts):
    """The cost in calls, not in seconds (benchmarks/speed.py has those): the pass at the base
    point and backward there, two moved passes for every argument at once where they agree
    (three where the truncation error must be estimated); two passes for an argument whose
    share of the joint probe was too small to clear it, or (the sample SReLU's channels whose
    thresholds leave them almost no gradient) two probes of such a channel on its own. Over
    eight seeds, on average and at most. Where outputs crossed a kink within the joint probe's
    step (about one draw in eight for PReLU at this size), the third pass and one pass back to
    the base point and backward without them are its cost, counted apart: the report says
    how many outputs were left out."""
    layer = _counting(load_layer(SAMPLES / f"{name}.py"))
    seeds = range(8)
    most = {"predict": 0, "backward": 0}
    kinked = 0
    for seed in seeds:
        before = dict(layer.calls)
        result = layercheck.check_layer(layer, SEED_LAYOUT, checks=[GRADIENTS], dtypes=["float64"], seed=seed)
        gradients = result.result(GRADIENTS)
        assert gradients.status == "passed", gradients.message
        probes = [p for record in gradients.details["arguments"] for p in record["probes"]]
        kinked += any(p["outputs_masked_at_kinks"] for p in probes)
        for what in most:
            most[what] = max(most[what], layer.calls[what] - before[what])
    # Where CuPy is imported, the session first asks whether the layer is bound to the GPU:
    # one predict on NumPy inputs per target (Session.gpu_binding), outside the gradient check.
    probe = 1 if "cupy" in sys.modules else 0
    assert layer.calls["predict"] <= (predicts + probe) * len(seeds) + 2 * kinked, (layer.calls, kinked)
    assert layer.calls["backward"] <= 1.5 * len(seeds) + kinked, (layer.calls, kinked)
    assert most["predict"] <= 10 + probe and most["backward"] <= 3, most


class Swish:
    """Y = X * sigmoid(beta X) per channel: smooth, with a stationary point (dY/dX = 0 near
    X = -1.28 / beta) where outputs barely move under a probe while their second difference
    does not vanish; not kinks, so no backward more to leave them out."""

    learnables = ("beta",)

    def initialize(self, layout):
        shape = [1] * layout.ndim
        shape[layout.find("C")] = layout.size[layout.find("C")]
        self.beta = np.linspace(0.5, 1.5, shape[layout.find("C")]).reshape(shape)
        self.axes = tuple(i for i in range(layout.ndim) if i != layout.find("C"))

    def predict(self, X):
        return X / (1 + np.exp(-self.beta * X))

    def backward(self, X, Y, dLdY, memory):
        s = 1 / (1 + np.exp(-self.beta * X))
        dLdX = dLdY * (s + self.beta * X * s * (1 - s))
        return dLdX, np.sum(dLdY * X * X * s * (1 - s), axis=self.axes, keepdims=True)


def test_outputs_at_a_stationary_point_are_no_kinks_and_a_1e_6_error_is_still_caught():
    """Inputs put on and around the stationary point: the single-argument probes (a wrong beta
    makes the joint probe fail, so each argument is probed on its own) keep those outputs,
    their second differences bounded in the error, instead of a backward to leave them out;
    and a relative error of 1e-6 in either gradient still fails, named."""
    layout = layercheck.parse_layout(SMALL)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(layout.size)
    stationary = -1.2785 / np.linspace(0.5, 1.5, layout.size[2]).reshape(1, 1, -1, 1)
    x = np.where(rng.random(x.shape) < 0.01, np.broadcast_to(stationary, x.shape) + 1e-6 * x, x)
    for seed in range(3):
        counting = _counting(_planted(Swish, 1, 1e-2))
        before = counting.calls["backward"]
        result = layercheck.check_layer(
            counting, layout, checks=[GRADIENTS], dtypes=["float64"], inputs=[x], seed=seed
        ).result(GRADIENTS)
        assert result.status == "failed", result.message
        x_record = next(r for r in result.details["arguments"] if r["argument"] == "X")
        assert x_record["status"] == "passed", x_record
        assert all(p["outputs_masked_at_kinks"] == 0 for p in x_record["probes"]), x_record["probes"]
        # backward at the base point, and the diagnosis's own (linearity in dL/dY): none for kinks
        assert counting.calls["backward"] - before <= 3, counting.calls
    for which, argument in enumerate(["X", "beta"]):
        planted = layercheck.check_layer(
            _planted(Swish, which, 1e-6), layout, checks=[GRADIENTS], dtypes=["float64"], inputs=[x]
        ).result(GRADIENTS)
        assert planted.status == "failed", planted.message
        assert [r["argument"] for r in planted.details["arguments"] if r["status"] == "failed"] == [argument]
    assert layercheck.check_layer(Swish, layout, checks=[GRADIENTS], inputs=[x]).result(GRADIENTS).status == "passed"
