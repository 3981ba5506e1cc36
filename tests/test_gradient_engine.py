"""The gradient engine on layers that misbehave while it probes them."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from conftest import GRADIENTS, REPO, load_layer

import layercheck
from layercheck.numerics.gradients import engine


class RaisesLater:
    """predict works for its first two calls on an object, then raises (an exhausted resource)."""

    def __init__(self):
        self.calls = 0

    def predict(self, X):
        self.calls += 1
        if self.calls > 2:
            raise RuntimeError("out of buffers")
        return np.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        return dLdY * (1 - Y**2)


def test_a_layer_that_raises_at_a_perturbed_point_is_reported_not_crashed():
    result = layercheck.check_layer(RaisesLater, "4,3,5,6:SSCB").result(GRADIENTS)
    assert result.status in ("incomplete", "failed")
    assert "RuntimeError" in result.message or any(
        "RuntimeError" in str(a.get("reason")) for a in result.details.get("arguments", [])
    )
    assert "internal error" not in result.message


class BackwardRaisesForMaskedLoss:
    """Correct ReLU whose backward refuses a dL/dY with zeros in it (as after masking kinks)."""

    def predict(self, X):
        return np.maximum(X, 0)

    def backward(self, X, Y, dLdY, memory):
        if np.any(dLdY == 0):
            raise ValueError("dLdY has zeros")
        return dLdY * (X > 0)


def test_backward_that_raises_on_a_second_call_is_reported():
    x = np.random.default_rng(0).standard_normal((4, 3, 5, 6))
    x.flat[:40] = 0.0  # on the kink: the engine masks these outputs and calls backward again
    result = layercheck.check_layer(BackwardRaisesForMaskedLoss, "4,3,5,6:SSCB", inputs=[x]).result(GRADIENTS)
    assert result.status == "incomplete"
    assert "ValueError" in result.message


@pytest.mark.parametrize(
    ("module", "check"),
    [
        ("backward_modifies_dLdY", "backward_does_not_modify_inputs"),
    ],
)
def test_a_layer_that_writes_into_its_arguments_gets_copies_and_its_gradients_are_judged(module, check):
    """The engine lends the layer read-only views of its own arrays; a layer that writes into
    them raises there, so it gets copies from then on: its gradients are judged as any
    other's, and only the hygiene check speaks of the writes."""
    path = Path(__file__).parent / "corpus" / f"{module}.py"
    cls = load_layer(path)
    report = layercheck.check_layer(cls, cls.example_layout, checks=["gradients_are_numerically_correct", check])
    assert report.result("gradients_are_numerically_correct").status == "passed", report.result(
        "gradients_are_numerically_correct"
    ).message
    assert report.result(check).status == "failed"
    assert "read-only" not in report.result("gradients_are_numerically_correct").message


class ClampsInPlace:
    """A ReLU whose forward clamps X in place and returns it: right gradients, wrong manners."""

    example_layout = "4,3,5,6:SSCB"

    def predict(self, X):
        return np.maximum(X, 0)

    def forward(self, X):
        X[X < 0] = 0
        return X, None

    def backward(self, X, Y, dLdY, memory):
        return dLdY * (X > 0)


def test_a_forward_that_writes_into_its_input_gets_copies_too():
    report = layercheck.check_layer(
        ClampsInPlace, ClampsInPlace.example_layout, checks=[GRADIENTS, "forward_does_not_modify_inputs"]
    )
    assert report.result(GRADIENTS).status == "passed", report.result(GRADIENTS).message
    assert report.result("forward_does_not_modify_inputs").status == "failed"


class DoublesInPlace:
    """predict doubles X in place and returns X + 1: right gradient, wrong manners."""

    example_layout = "4,3,5,6:SSCB"

    def predict(self, X):
        X *= 2
        return X + 1

    def backward(self, X, Y, dLdY, memory):
        return 2 * dLdY


def test_a_predict_that_writes_into_its_input_gets_copies_too():
    report = layercheck.check_layer(
        DoublesInPlace, DoublesInPlace.example_layout, checks=[GRADIENTS, "predict_does_not_modify_inputs"]
    )
    assert report.result(GRADIENTS).status == "passed", report.result(GRADIENTS).message
    assert report.result("predict_does_not_modify_inputs").status == "failed"


# -- the diagnosis of a failure spends calls of the layer; the failure itself is never lost -------


def test_the_diagnosis_budget_is_calls_a_function_of_the_size_alone():
    from layercheck.numerics.gradients.budget import CALLS, calls_for

    assert calls_for(0) == calls_for(1) == CALLS.most  # a small layer: every claim and every axis
    assert calls_for(CALLS.work // CALLS.most) == CALLS.most
    assert calls_for(2 * CALLS.work // CALLS.most) == max(CALLS.fewest, CALLS.most // 2)
    assert calls_for(10**12) == CALLS.fewest  # however large: enough for every claim
    assert CALLS.fewest >= 145  # the most a diagnosis of a layer in tests/ took at its working size


def test_the_timeout_bounds_the_diagnosis_in_seconds_and_nothing_else_does():
    from layercheck.checks.gradients import DIAGNOSIS_TIMEOUT_SHARE, diagnosis_seconds

    assert diagnosis_seconds(None) is None and diagnosis_seconds(None, 5.0) is None
    assert diagnosis_seconds(20.0) == DIAGNOSIS_TIMEOUT_SHARE * 20.0
    # Never past the target's timeout: with 5 s of 100 left, less than 5 s.
    seconds = diagnosis_seconds(100.0, 5.0)
    assert seconds is not None and 0 < seconds < 5.0
    assert diagnosis_seconds(100.0, -1.0) == 0.0


def test_a_budget_of_calls_stops_at_its_count_whatever_the_clock_says(monkeypatch):
    from layercheck.numerics.gradients import budget as budgets

    clock = iter(range(0, 10**6, 1000))  # a clock that races: were seconds counted, none is left
    monkeypatch.setattr(budgets, "perf_counter", lambda: float(next(clock)))
    budget = budgets.WorkBudget(3)
    budget.start()
    for _ in range(3):
        budget.charge()
    with pytest.raises(budgets.OutOfBudget, match="3 calls of the layer"):
        budget.charge()
    assert budget.stopped is budgets.Limit.CALLS and budget.made == 3
    timed = budgets.WorkBudget(3, seconds=0.5)
    timed.start()
    with pytest.raises(budgets.OutOfBudget, match="its share of the timeout"):
        timed.charge()
    assert timed.stopped is budgets.Limit.TIMEOUT


def test_a_call_on_part_of_the_batch_is_charged_its_share_and_no_budget_passes_its_most_calls():
    from layercheck.numerics.gradients import budget as budgets
    from layercheck.numerics.gradients.sub_batch import call_share

    assert call_share(8, 64) == 1 / 8 and call_share(8, 128) == 1 / 16
    assert call_share(8, 4096) == 1 / 16  # what a call costs beside its arrays does not shrink
    budget = budgets.WorkBudget(3, most=20)
    budget.start()
    for _ in range(16):  # two calls on the whole problem's worth
        budget.charge(1 / 8)
    assert budget.affords(1) and not budget.affords(2) and not budget.affords(5, 1 / 8)
    budget.charge()
    with pytest.raises(budgets.OutOfBudget, match="3 calls of the layer"):
        budget.charge(1 / 8)
    assert (budget.made, budget.on_part, budget.stopped_at) == (17, 16, 3)
    # However small each call's share, no more than `most` calls of any size.
    small = budgets.WorkBudget(3, most=20)
    small.start()
    for _ in range(20):
        small.charge(1 / 16)
    with pytest.raises(budgets.OutOfBudget, match="20 calls of the layer"):
        small.charge(1 / 16)
    assert small.stopped is budgets.Limit.CALLS and small.stopped_at == 20


BORDER_BUG = Path(__file__).resolve().parent / "corpus_verdicts" / "border_pool_divides_by_nine.py"


def test_a_budget_the_whole_batch_would_spend_localizes_on_a_sub_batch_at_its_share(monkeypatch):
    """A large layer's budget is as few calls as its size allows (240 at 2.6 million elements):
    counted one each, the sub-batch's calls of a localization spent it (a depthwise convolution
    wrong at its ends, at 640,64,64:SCB, said only "wrong"). Each is charged its share of a call
    on the whole batch: 30 calls' worth hold the hundred calls, mostly on 8 of 64 observations,
    that prove where; a budget too small still stops, and says what it counted."""
    import layercheck.checks.gradients as gradients

    obj = load_layer(BORDER_BUG)
    monkeypatch.setattr(gradients, "calls_for", lambda elements: 30)
    named = layercheck.check_layer(obj, "6,6,4,64:SSCB", checks=[GRADIENTS], dtypes=["float64"]).result(GRADIENTS)
    assert "wrong only at the border of the spatial plane" in named.message, named.message
    assert not any("localization stopped" in line for line in named.explanation)
    monkeypatch.setattr(gradients, "calls_for", lambda elements: 8)
    stopped = layercheck.check_layer(obj, "6,6,4,64:SSCB", checks=[GRADIENTS], dtypes=["float64"]).result(GRADIENTS)
    (x,) = [a for a in stopped.details["arguments"] if a["argument"] == "X"]
    on_part = x["diagnosis"]["calls_on_part"]
    assert x["diagnosis"]["stopped_after_calls"] == 8 and on_part > 8
    assert (
        f"  localization stopped after its budget of 8 calls of the layer ({on_part} calls on part of the batch, "
        "each counted for its share of one on the whole batch): what is said above was proven before it"
    ) in stopped.explanation


CHANNEL_BUG = Path(__file__).resolve().parent / "corpus" / "grad_one_channel.py"


def _gradient_result(monkeypatch, calls):
    import layercheck.checks.gradients as gradients

    monkeypatch.setattr(gradients, "calls_for", lambda elements: calls)
    obj = load_layer(CHANNEL_BUG)
    return layercheck.check_layer(obj, obj.example_layout).result("gradients_are_numerically_correct")


def test_a_proven_failure_is_reported_when_the_diagnosis_has_no_calls_and_names_no_cause(monkeypatch):
    result = _gradient_result(monkeypatch, 0)
    assert result.status == "failed"
    assert result.message.startswith("the gradient of X is wrong (relative error "), result.message
    assert "channel" not in result.message and "factor" not in result.message
    (x,) = [a for a in result.details["arguments"] if a["argument"] == "X"]
    assert x["status"] == "failed" and x["diagnosis"]["stopped_after_calls"] == 0
    assert x["diagnosis"]["stopped_after_s"] is None
    # One number for one claim: the headline's relative error is the record's, in the same digits.
    assert f"(relative error {x['max_rel_error']:.3g} along a random direction)" in result.message
    assert any(f"(relative error {x['max_rel_error']:.3g})" in line for line in result.explanation)
    finding = x["diagnosis"]["finding"]
    assert finding["cause"] == "unexplained" and x["diagnosis"]["regions"] == []
    assert finding["numbers"]["rel_error"] == x["max_rel_error"]  # the same probe's number, not another's
    assert any(
        line.strip().startswith("localization stopped after its budget of 0 calls of the layer")
        for line in result.explanation
    )


def test_with_calls_the_same_failure_is_localized_and_says_nothing_stopped(monkeypatch):
    result = _gradient_result(monkeypatch, 10_000)
    assert result.status == "failed" and "channel 2" in result.message, result.message
    (x,) = [a for a in result.details["arguments"] if a["argument"] == "X"]
    assert x["diagnosis"]["stopped_after_s"] is None and x["diagnosis"]["stopped_after_calls"] is None
    assert not any("localization stopped" in line for line in result.explanation)


def test_an_undecided_arguments_reasons_name_the_kinks_once_with_the_count_of_each_step():
    # Issue 39: the kinks' phrase was said again for every step size.
    from layercheck.numerics.gradients.engine import Undecided, _reasons

    class _Probe:
        def __init__(self, reason, masked=0, changed=0):
            self.reason, self.masked, self.changed = reason, masked, changed
            self.reason_text = reason.describe(masked, changed)

    bent = "bent sharply within the step (a non-differentiable point, or curvature finer than the step)"
    probes = [_Probe(Undecided.KINKS, 10, 10), _Probe(Undecided.KINKS, 6, 10), _Probe(Undecided.ROUND_OFF)]
    assert _reasons(probes) == f"10 of 10 and 6 of 10 changed outputs {bent}; round-off"
    assert _reasons([_Probe(Undecided.KINKS, 3, 4)]) == f"3 of 4 changed outputs {bent}"
    assert _reasons([_Probe(Undecided.CURVATURE), _Probe(Undecided.ROUND_OFF)]) == "curvature; round-off"


class _PerChannel:
    """A learnable w, one value per channel, from 0.5 to 1.5."""

    learnables = ("w",)

    def __init__(self):
        self.w = None

    def initialize(self, layout):
        if self.w is None:
            self.w = np.linspace(0.5, 1.5, layout.size[2]).reshape(1, 1, -1, 1)


class _Scaled(_PerChannel):
    """Y = w * X per channel, dL/dX `wrong` times the true one: two arguments, so that the
    joint probe decides."""

    wrong = 1.0

    def predict(self, X):
        return self.w * X

    def backward(self, X, Y, dLdY, memory):
        return self.wrong * self.w * dLdY, (dLdY * X).sum(axis=(0, 1, 3), keepdims=True)


class _ScaledWrong(_Scaled):
    wrong = 1.001


@pytest.mark.parametrize(("layer", "looked"), [(_Scaled, False), (_ScaledWrong, True)])
def test_the_joint_probe_looks_for_kinks_only_where_its_central_difference_disagrees(monkeypatch, layer, looked):
    """Issue 38, the passing path at its floor: a pair that agrees decides at once; the kinks
    within the step are looked for (to leave them out) only before a disagreement is judged."""
    from layercheck.numerics.gradients import engine

    seen = []
    looking = engine._pair_kinks

    def pair_kinks(*args, **kwargs):
        seen.append(True)
        return looking(*args, **kwargs)

    monkeypatch.setattr(engine, "_pair_kinks", pair_kinks)
    result = layercheck.check_layer(layer, "6,6,4,8:SSCB", checks=[GRADIENTS], dtypes=["float64"]).result(GRADIENTS)
    assert result.status == ("failed" if looked else "passed"), result.message
    assert bool(seen) is looked


class _SteepTanhWrong:
    """tanh(20 X) with a gradient off by a factor 3/2: its second differences are too large a
    bound to decide at the full resolution; the third call's tighter one fails it."""

    def predict(self, X):
        return np.tanh(20 * X)

    def backward(self, X, Y, dLdY, memory):
        return 1.5 * dLdY * 20 * (1 - np.tanh(20 * X) ** 2)


@pytest.mark.parametrize(("layer", "third_call"), [(_ScaledWrong, False), (_SteepTanhWrong, True)])
def test_a_joint_failure_beyond_the_second_differences_bound_needs_no_third_call(monkeypatch, layer, third_call):
    """Issue 38, the failing path: a pair without kinks that disagrees beyond the bound of its
    second differences (a probe of one argument's, the wider) fails at the full resolution
    without the third call; where that bound is too wide to, the third call is made."""
    far = engine._joint_far
    calls = []

    def joint_far(*args, **kwargs):
        calls.append(True)
        return far(*args, **kwargs)

    monkeypatch.setattr(engine, "_joint_far", joint_far)
    result = layercheck.check_layer(layer, "6,6,4,8:SSCB", checks=[GRADIENTS], dtypes=["float64"]).result(GRADIENTS)
    assert result.status == "failed", result.message
    assert bool(calls) is third_call


@pytest.mark.parametrize("size", [7, (1 << 16) + 3, 3 * (1 << 16)])
def test_the_norm_of_a_product_taken_in_chunks_is_the_norm_of_the_product(size):
    """`product_norm_sq` never makes an array of the factors' size on the host: its chunks
    must add up to what the product would give, complex factors and masks among them, in
    any order."""
    from layercheck.numerics.arrays import norm_sq, product_norm_sq

    rng = np.random.default_rng(size)
    real = rng.standard_normal(size)
    other = rng.standard_normal(size)
    complex_ = rng.standard_normal(size) + 1j * rng.standard_normal(size)
    mask = rng.random(size) > 0.5
    for factors in [(real, other), (real, other, mask), (real, complex_), (real, mask, complex_)]:
        product = factors[0]
        for f in factors[1:]:
            product = product * f
        expected = float(norm_sq(product))
        assert float(product_norm_sq(*factors)) == pytest.approx(expected, rel=1e-12)


class _SwapsTwoElements:
    """Y = tanh(X) + a X per channel; backward hands two elements of dL/dX each other's value
    (an indexing slip): an error of two equal and opposite parts, in an X of 5,120 elements."""

    learnables = ("a",)

    def __init__(self):
        self.a = np.full((1, 1, 4, 1), 0.25)

    def predict(self, X):
        return np.tanh(X) + self.a * X

    def backward(self, X, Y, dLdY, memory):
        dLdX = dLdY * (1 - np.tanh(X) ** 2 + self.a)
        dLdX[1, 2, 0, 3], dLdX[5, 6, 3, 11] = dLdX[5, 6, 3, 11], dLdX[1, 2, 0, 3]
        return dLdX, (dLdY * X).sum(axis=(0, 1, 3), keepdims=True)


@pytest.mark.parametrize("seed", range(6))
def test_two_elements_gradients_swapped_fail_at_every_seed(seed):
    """With random signs alone each move of the two elements is equal in one draw of two, and
    the error projects to zero: the joint probe passed the layer at about every second seed.
    Random magnitudes make that one draw in 32,768."""
    report = layercheck.check_layer(_SwapsTwoElements, "8,8,4,20:SSCB", checks=[GRADIENTS], seed=seed)
    result = report.result(GRADIENTS)
    assert result.status == "failed", result.message
    assert result.message.startswith("the gradient of X is wrong"), result.message


def test_random_moves_are_signs_times_magnitudes_from_half_to_one_and_a_half():
    from layercheck.numerics.arrays import random_moves

    x = np.zeros((128, 128, 64))
    moves = random_moves(x, np.random.default_rng(7))
    assert moves.shape == x.shape and moves.dtype == np.float64
    magnitudes = np.abs(moves)
    assert magnitudes.min() >= 0.5 and magnitudes.max() < 1.5
    assert 0.49 < np.mean(moves > 0) < 0.51
    assert len(np.unique(moves)) == 1 << 15  # every level of both signs, among a million draws
    assert np.array_equal(moves, random_moves(x, np.random.default_rng(7)))
    assert random_moves(np.zeros(3), np.random.default_rng(0)).shape == (3,)


@pytest.mark.parametrize("path", ["sample_layers/buggy/srelu_swapped.py", "sample_layers/prelu.py"])
def test_base_outputs_let_go_during_the_pair_are_evaluated_again_to_the_same_verdict(monkeypatch, path):
    """Large base outputs are let go while the joint probe's pair runs (a copy less at the
    check's peak) and evaluated again where kinks or a failure need them: the same verdict and
    words, for one call more where they are needed."""
    from layercheck.numerics.gradients import engine

    obj = load_layer(REPO / path)
    layout = "6,6,4,8:SSCB"
    kept = layercheck.check_layer(obj, layout, checks=[GRADIENTS], dtypes=["float64"]).result(GRADIENTS)
    monkeypatch.setattr(engine, "_RELEASE_BYTES", 0)
    released = []
    original = engine.Baseline.release_outputs
    monkeypatch.setattr(engine.Baseline, "release_outputs", lambda self: (released.append(1), original(self))[1])
    let_go = layercheck.check_layer(obj, layout, checks=[GRADIENTS], dtypes=["float64"]).result(GRADIENTS)
    assert released, "the outputs were never let go"
    assert (let_go.status, let_go.message) == (kept.status, kept.message)


def _baseline(y, spread):
    """A baseline of output `y` alone, its round-off measured as `spread` times its RMS."""
    tol = engine.Tolerances(1e-6, 1e-6, y.dtype, measured_roundoff=spread)
    return engine.Baseline([y], [np.ones_like(y)], [None], tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("size", [(1 << 16) + 1, 3 * (1 << 16) - 5])
@pytest.mark.parametrize("spread", [0.0, 1e-5])
@pytest.mark.parametrize("every", [7, 997])
def test_the_kinks_found_in_chunks_on_the_host_are_those_of_whole_arrays(monkeypatch, dtype, size, spread, every):
    """At real sizes the kink test runs on the host in chunks that stay in the cache, each
    screened first by |second| > rho |delta| and tested where that holds (on the whole chunk
    where many outputs do, `every` seventh; on those alone where a few do): the same
    operations element by element, so the very same mask, at every chunk's edge, with or
    without a measured spread of round-off, in either precision, for outputs screened in that
    the floor of round-off then clears, and for values that are not finite."""
    rng = np.random.default_rng(size)
    y = rng.standard_normal(size).astype(dtype)
    delta = (1e-3 * rng.standard_normal(size)).astype(dtype)
    second = (1e-9 * rng.standard_normal(size)).astype(dtype)  # a smooth layer's: no kinks
    second[::every] = 2 * delta[::every]  # kinks
    y[::11], delta[::29] = 0, 0  # outputs at zero, outputs that did not move
    second[::29] = np.finfo(dtype).eps * y[::29] * rng.uniform(-8, 8, second[::29].size)  # their round-off
    delta[3::4001], second[3::4001], delta[9::4001], second[9::4001] = np.nan, np.inf, -np.inf, np.nan
    # Outputs on either side of the test's threshold: of rho |delta|, and of the floor alone.
    second[1::211] = 1e-3 * np.abs(delta[1::211]) * rng.uniform(0.5, 2.5, second[1::211].size)
    delta[2::307] = 0
    second[2::307] = 10.0 ** rng.uniform(-16, -2, second[2::307].size)
    # Outputs that did not move, whose second difference is round-off: screened in, no kinks.
    delta[5::503], second[5::503] = 0, np.finfo(dtype).eps * y[5::503]
    base = _baseline(y, spread)
    assert engine._in_chunks(y, delta, second) and (base.floor_scale(0)[1] > 0) == (spread > 0)
    chunked = engine._kinks(delta, second, base, 0, 1e-3)
    monkeypatch.setattr(engine, "_in_chunks", lambda *arrays: False)
    whole = engine._kinks(delta, second, base, 0, 1e-3)
    assert whole.sum() > size // (3 * every)
    assert not whole[5::503].any()
    assert chunked.shape == whole.shape and np.array_equal(chunked, whole)


def test_the_kinks_of_outputs_in_fortran_order_are_those_of_the_same_outputs_in_c_order():
    """Outputs flagged as kinks are looked at again by their flat indices, and those that
    barely move are taken out of the mask: a mask laid out in Fortran order, as the outputs it
    was computed from, has no flat view to write into, and must come out as the C-ordered one
    (written into a copy, it would keep every output that barely moves as a kink)."""
    rng = np.random.default_rng(5)
    shape = (6, 5, 4, 3)
    y = rng.standard_normal(shape)
    delta = 1e-3 * rng.standard_normal(shape)
    second = 1e-9 * rng.standard_normal(shape)
    second.reshape(-1)[::9] = 2 * delta.reshape(-1)[::9]  # kinks
    delta.reshape(-1)[4::9], second.reshape(-1)[4::9] = 0, 1e-12  # barely moving: kept
    w = rng.standard_normal(shape)
    found = {}
    for order in "CF":
        arrays = [np.asarray(a, order=order) for a in (y, delta, second, w)]
        assert arrays[0].flags.f_contiguous == (order == "F")
        mask, count, bound = engine._joint_kinks(arrays[1], arrays[2], _baseline(arrays[0], 0.0), 0, 1e-3, arrays[3])
        found[order] = (np.ascontiguousarray(mask), count, bound)
    (c_mask, c_count, c_bound), (f_mask, f_count, f_bound) = found["C"], found["F"]
    assert c_count == c_mask.sum() == len(range(0, y.size, 9)) and c_bound > 0
    assert np.array_equal(f_mask, c_mask) and f_count == c_count and f_bound == pytest.approx(c_bound, rel=1e-12)


@pytest.mark.parametrize("shape", [(), (0,), (5,), ((1 << 16) + 7,), (24, 24, 20, 8)])
def test_a_drawn_dldy_is_uniform_draws_as_rng_uniform_makes_them(shape):
    """dL/dY is drawn in chunks (scaled while in the cache): the very values, and the same
    state of the generator after, as one `rng.uniform(-sqrt(3), sqrt(3))` of the shape."""
    from layercheck.numerics.arrays import random_host_like

    mine, theirs = np.random.default_rng(11), np.random.default_rng(11)
    drawn = random_host_like(np.zeros(shape), mine)
    expected = np.sqrt(3) * (2 * theirs.random(shape) - 1)
    assert isinstance(drawn, np.ndarray) and drawn.shape == shape
    np.testing.assert_allclose(drawn, expected, rtol=1e-15, atol=1e-15)
    assert mine.random() == theirs.random()


class _Swish(_PerChannel):
    """X sigmoid(w X), one w per channel, dL/dw doubled (so the joint probe fails and X is
    probed alone) and dL/dX `wrong_x` times the true one: a smooth layer whose second
    differences, the error bound of a probe of one argument, are mostly curvature."""

    wrong_x = 1.0

    def predict(self, X):
        return X / (1 + np.exp(-self.w * X))

    def backward(self, X, Y, dLdY, memory):
        s = 1 / (1 + np.exp(-self.w * X))
        dX = self.wrong_x * dLdY * (s + self.w * X * s * (1 - s))
        return dX, 2 * (dLdY * X * X * s * (1 - s)).sum(axis=(0, 1, 3), keepdims=True)


class _SwishXOff(_Swish):
    wrong_x = 1 + 1e-5


def _x_probes(layer, seed):
    result = layercheck.check_layer(layer, "8,8,6,16:SSCB", checks=[GRADIENTS], dtypes=["float64"], seed=seed)
    x = result.result(GRADIENTS).details["arguments"][0]
    return x["status"], [p["verdict"] for p in x["probes"]]


def test_a_probe_whose_bound_is_curvature_passes_on_its_round_off_where_the_sides_agree_within_it():
    """Issue 38, the failing path: at seed 1 the first probe of the right X agrees within its
    round-off, and its second differences' bound is too wide to decide; it passes there (two
    forward calls), where another direction at a smaller step used to be drawn."""
    assert _x_probes(_Swish, 1) == ("passed", ["pass"])


@pytest.mark.parametrize("seed", range(4))
def test_a_gradient_off_by_1e_5_is_never_passed_on_the_round_off_alone(seed):
    status, verdicts = _x_probes(_SwishXOff, seed)
    assert status == "failed" and "pass" not in verdicts


def test_the_round_off_bound_passes_no_discrepancy_beyond_it_and_nothing_undecisive():
    probe = engine.Probe(
        argument=0,
        direction=np.ones(3),
        step=1e-7,
        numeric=10.0,
        analytic=10.0 + 2e-6,
        error_bound=1e-3,
        scale=10.0,
        masked=0,
        changed=3,
        gradients=[np.ones(3)],
        verdict=engine.Verdict.UNDECIDED,
        reason=engine.Undecided.CURVATURE,
        fixed_tolerance=1e-3,
        curvature=True,
    )
    tol = engine.Tolerances(0.0, 0.0, np.dtype(np.float64))
    assert engine._within_roundoff(probe, tol, 1e-6, 0.0) is None  # |2e-6| beyond the round-off
    passed = engine._within_roundoff(probe, tol, 3e-6, 0.0)
    assert passed is not None and passed.verdict is engine.Verdict.PASS and passed.error_bound == 3e-6
    assert engine._within_roundoff(dataclasses.replace(probe, analytic=1e-6, numeric=0.0), tol, 3e-6, 0.0) is None


class _SteepAtanOneElement(_PerChannel):
    """atan(50 w X) with one element of dL/dX 1e-3 off: the joint probe fails at the full
    resolution, X's own probes do not see it, and w's first probe is undecided for curvature."""

    def predict(self, X):
        return np.arctan(50 * self.w * X)

    def backward(self, X, Y, dLdY, memory):
        d = 50 / (1 + (50 * self.w * X) ** 2)
        dX = dLdY * d * self.w
        dX.flat[7] *= 1 + 1e-3
        return dX, (dLdY * d * X).sum(axis=(0, 1, 3), keepdims=True)


@pytest.mark.parametrize("seed", [0, 6])
def test_a_pass_within_the_round_off_alone_does_not_overrule_a_failed_joint_probe(seed):
    # Found by a review: w passed on its round-off alone, nothing failed, and the joint
    # probe's failure (X's one wrong element) would have been set aside: a wrong layer passed.
    result = layercheck.check_layer(
        _SteepAtanOneElement, "8,8,6,16:SSCB", checks=[GRADIENTS], dtypes=["float64"], seed=seed
    )
    gradients = result.result(GRADIENTS)
    assert gradients.status == "incomplete", gradients.message
    assert "agree only within their round-off, the bound of their curvature left out" in gradients.message


class _Float32Tanh(_PerChannel):
    """tanh(5 w X) computed in float32 inside: checked at float32's steps and tolerances,
    where its probes are undecided for curvature."""

    def predict(self, X):
        return np.tanh(5 * (self.w * X).astype(np.float32)).astype(X.dtype)

    def backward(self, X, Y, dLdY, memory):
        d = 5 * (1 - np.tanh(5 * self.w * X) ** 2)
        return dLdY * d * self.w, (dLdY * d * X).sum(axis=(0, 1, 3), keepdims=True)


def test_no_probe_passes_on_its_round_off_alone_at_float32s_step(monkeypatch):
    # At a step of 3e-3 a steep layer's truncation error reaches float32's resolution.
    precisions = []
    within = engine._within_roundoff

    def recorded(probe, tol, *args):
        precisions.append(tol.eps)
        return within(probe, tol, *args)

    monkeypatch.setattr(engine, "_within_roundoff", recorded)
    for seed in range(2):
        result = layercheck.check_layer(
            _Float32Tanh, "8,8,6,16:SSCB", checks=[GRADIENTS], dtypes=["float64"], seed=seed
        )
        assert result.result(GRADIENTS).status == "passed"
    assert all(eps <= np.finfo(np.float64).eps for eps in precisions)
    layercheck.check_layer(_Swish, "8,8,6,16:SSCB", checks=[GRADIENTS], dtypes=["float64"], seed=1)
    assert precisions  # the same question, in float64, is asked
