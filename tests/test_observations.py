"""Observations, output formats and state: the checks of issue 4 on small inline layers."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import CORPUS, SAMPLES, SEED_LAYOUT, load_layer, not_ok, run_cli

import layercheck
from layercheck.checks import REGISTRY
from layercheck.checks.layouts import OTHER_BATCH_SIZES, other_batch_size

OBSERVATION_CHECKS = [
    "output_batch_size_matches_input",
    "predict_is_consistent_across_observations",
    "forward_is_consistent_across_observations",
    "backward_is_consistent_across_observations",
]


class Tanh:
    def predict(self, X):
        return np.tanh(X)

    def forward(self, X):
        return np.tanh(X), None

    def backward(self, X, Y, dLdY, memory):
        return dLdY * (1 - Y * Y)


def test_observation_checks_skip_without_a_batch_axis():
    report = layercheck.check_layer(Tanh, "5,7:CU")
    for name in OBSERVATION_CHECKS:
        result = report.result(name)
        assert result.status == "skipped" and "batch (B) axis" in result.message, name


def test_observation_checks_skip_with_a_single_observation():
    report = layercheck.check_layer(Tanh, "5,1:CB")
    assert report.result("predict_is_consistent_across_observations").message == "the layout has a single observation"
    assert report.result("output_batch_size_matches_input").status == "passed"


def test_many_observations_are_checked_on_a_subset_with_the_first_and_last():
    obj = load_layer(SAMPLES / "srelu.py")
    report = layercheck.check_layer(obj, SEED_LAYOUT, checks=OBSERVATION_CHECKS[1:])
    result = report.result("predict_is_consistent_across_observations")
    assert result.status == "passed"
    chosen = result.details["observations_checked"]
    assert len(chosen) == 16 and chosen[0] == 0 and chosen[-1] == 127
    assert report.result("backward_is_consistent_across_observations").status == "passed"


class MixesOnlyTheLastObservation:
    """Observation B-1 gets the first one's values added: a bug only one observation shows."""

    def predict(self, X):
        Y = X.copy()
        if X.shape[-1] > 1:
            Y[..., -1] += X[..., 0]
        return Y


def test_a_single_mixed_observation_is_named():
    result = layercheck.check_layer(MixesOnlyTheLastObservation, "3,40:CB").result(
        "predict_is_consistent_across_observations"
    )
    assert result.status == "failed"
    assert result.details["differing_observations"] == [39]
    assert "observation(s) 39 (1 of 16 checked)" in result.message


class BatchStatisticsOnceLarge:
    """Normalizes by fixed statistics on a small batch and by the batch's own from 32
    observations on (a fast path for training-size batches): at a layout of 40 it mixes the
    observations, which a batch of the 16 checked alone would never show."""

    def predict(self, X):
        if X.shape[-1] < 32:
            return X - 0.5
        return X - X.mean(axis=-1, keepdims=True)


class ChunksForgetTheirOffset:
    """Handles the batch in chunks of 32 observations, each after the first reading the first
    chunk's inputs: observations 32-39 of 40 get the outputs of 0-7."""

    def predict(self, X):
        Y = np.empty_like(X)
        for start in range(0, X.shape[-1], 32):
            stop = min(start + 32, X.shape[-1])
            Y[..., start:stop] = np.tanh(X[..., : stop - start])
        return Y


@pytest.mark.parametrize("layer", [BatchStatisticsOnceLarge, ChunksForgetTheirOffset])
def test_observations_alone_are_compared_with_the_batch_at_the_layouts_own_size(layer):
    result = layercheck.check_layer(layer, "3,40:CB", checks=OBSERVATION_CHECKS[1:2]).result(
        "predict_is_consistent_across_observations"
    )
    assert result.status == "failed", result.message
    checked, differing = result.details["observations_checked"], result.details["differing_observations"]
    assert len(checked) == 16 and "the layer mixes observations" in result.message
    assert differing == (checked if layer is BatchStatisticsOnceLarge else [i for i in checked if i >= 32])
    # The worst element's index is its index in the batch: along B, an observation that differs.
    worst = re.search(r"the worst, at index \((\d+), (\d+)\)", result.message)
    assert worst is not None and int(worst.group(2)) in differing, result.message


class FixedBatch:
    """Works only at the batch size it was built for: a learnable with a batch axis."""

    learnables = ("w",)

    def __init__(self):
        self.w = np.ones((3, 5))

    def predict(self, X):
        return X * self.w


def test_output_batch_size_is_checked_at_a_second_batch_size():
    result = layercheck.check_layer(FixedBatch, "3,5:CB").result("output_batch_size_matches_input")
    assert result.status == "failed"
    assert "with 2 observations (the layouts have 5)" in result.message
    assert "ValueError" in result.message


class SeesBatchSizes:
    """Records the batch size of every predict call (class-level: the check copies the layer)."""

    seen: set[int] = set()

    def predict(self, X):
        SeesBatchSizes.seen.add(X.shape[-1])
        return np.tanh(X)


@pytest.mark.parametrize("batch", [5, OTHER_BATCH_SIZES[0]])
def test_list_checks_says_the_batch_sizes_the_check_uses(batch):
    """The description is written from the constant the check uses, and says every batch size
    predict is called at: the layout's and the other one (not "one more", as it once said)."""
    SeesBatchSizes.seen = set()
    result = layercheck.check_layer(SeesBatchSizes, f"3,{batch}:CB", checks=["output_batch_size_matches_input"])
    assert result.result("output_batch_size_matches_input").status == "passed"
    other = other_batch_size(batch)
    assert SeesBatchSizes.seen == {batch, other} and other in OTHER_BATCH_SIZES
    description = REGISTRY["output_batch_size_matches_input"].description
    assert "one more" not in description
    assert (
        f"at {OTHER_BATCH_SIZES[0]} ({OTHER_BATCH_SIZES[1]} when the layout's is {OTHER_BATCH_SIZES[0]})" in description
    )
    listed = " ".join(run_cli("list-checks", env={"COLUMNS": "200"}).stdout.split())
    assert description in listed


class BadOutputFormat:
    def predict(self, X):
        return X.sum(axis=0)

    def output_format(self, fmt):
        return "XB"


def test_an_invalid_output_format_fails_naming_it():
    report = layercheck.check_layer(BadOutputFormat, "3,5:CB")
    result = report.result("output_format_is_consistent")
    assert result.status == "failed"
    assert "'X'" in result.message and "output_format" in result.message
    assert report.result("output_batch_size_matches_input").status == "incomplete"


class LearnableGradientIsAMean:
    """dLdw averages over the observations instead of summing: the batch gradient is not the
    sum of the observations' gradients (and the gradient check blames w as 1/B)."""

    learnables = ("w",)

    def __init__(self):
        self.w = np.full((3, 1), 0.5)

    def predict(self, X):
        return X * self.w

    def backward(self, X, Y, dLdY, memory):
        return dLdY * self.w, (dLdY * X).mean(axis=1, keepdims=True)


def test_a_learnable_gradient_that_is_not_the_sum_over_observations_fails():
    report = layercheck.check_layer(LearnableGradientIsAMean, "3,4:CB")
    result = report.result("backward_is_consistent_across_observations")
    assert result.status == "failed"
    assert "not the sum of the gradients of its observations" in result.message and "dLdw" in result.message
    assert "1/4 (1/batch size)" in report.result("gradients_are_numerically_correct").message


@pytest.mark.parametrize(
    ("layout", "hint"),
    [
        ("3,2:CB", "off by a constant factor 1/2 (with a batch of 2, a mean over the observations instead of a sum?)"),
        ("3,5:CB", "off by a constant factor 1/5 (1/batch size): a mean over the observations instead of a sum?"),
    ],
)
def test_a_mean_over_a_batch_of_two_is_named_as_a_half_with_the_batch_beside_it(layout, hint):
    message = (
        layercheck.check_layer(LearnableGradientIsAMean, layout).result("gradients_are_numerically_correct").message
    )
    assert hint in " ".join(message.split()), message


class HalvedChannelGradient:
    """The lookalike: a gradient off by 1/2 with 2 channels and a batch of 3 names no batch."""

    learnables = ("w",)

    def __init__(self):
        self.w = np.full((2, 1), 0.5)

    def predict(self, X):
        return X * self.w

    def backward(self, X, Y, dLdY, memory):
        return dLdY * self.w, 0.5 * (dLdY * X).sum(axis=1, keepdims=True)


def test_a_half_with_no_batch_of_two_names_no_batch():
    message = (
        layercheck.check_layer(HalvedChannelGradient, "2,3:CB").result("gradients_are_numerically_correct").message
    )
    assert "off by a constant factor 1/2" in message and "batch" not in message, message


class SharedCounterState:
    """A state of fixed size (a step counter) is shared by every observation, not split."""

    state = ("steps",)

    def __init__(self):
        self.steps = np.zeros(1)

    def predict(self, X):
        return 2 * X, self.steps + 1


def test_a_state_of_fixed_size_is_shared_and_one_with_a_batch_axis_is_split():
    report = layercheck.check_layer(SharedCounterState, "3,4:CB")
    assert not_ok(report) == {}
    assert report.result("predict_is_consistent_across_observations").status == "passed"
    report = layercheck.check_layer(load_layer(SAMPLES / "peephole_lstm.py"), "5,4,7:CBT")
    assert report.result("predict_is_consistent_across_observations").status == "passed"


class ResetReturnsANewLayer:
    """reset_state in MATLAB's style: it returns the reset layer instead of changing self."""

    state = ("h",)

    def __init__(self, h=None):
        self.h = np.zeros((3, 4)) if h is None else h

    def predict(self, X):
        return X + self.h, self.h + X

    def reset_state(self):
        return ResetReturnsANewLayer(np.zeros_like(self.h))  # of the layer's dtype (float32 too)


class ResetReturnsAFloat64Layer(ResetReturnsANewLayer):
    def reset_state(self):
        return ResetReturnsAFloat64Layer()  # h = np.zeros((3, 4)): float64 in a float32 layer


def test_reset_state_may_return_the_reset_layer_of_the_layers_dtype():
    result = layercheck.check_layer(ResetReturnsAFloat64Layer, "3,4:CB").result("reset_state_does_not_error")
    assert result.status == "failed"
    assert result.message.startswith("after reset_state with float32 inputs, state h is NumPy float64 array"), (
        result.message
    )


def test_reset_state_may_return_the_reset_layer():
    result = layercheck.check_layer(ResetReturnsANewLayer, "3,4:CB").result("reset_state_does_not_error")
    assert result.status == "passed"
    assert result.message == "h updated by predict and restored"


class ResetRaises(ResetReturnsANewLayer):
    def reset_state(self):
        raise RuntimeError("cannot reset")


def test_reset_state_that_raises_fails_with_the_error():
    result = layercheck.check_layer(ResetRaises, "3,4:CB").result("reset_state_does_not_error")
    assert result.status == "failed"
    assert "RuntimeError: cannot reset" in result.message


def test_batch_normalization_forward_may_use_batch_statistics_but_predict_may_not():
    report = layercheck.check_layer(load_layer(CORPUS / "good_batch_norm.py"), "4,3,5,6:SSCB")
    assert not_ok(report) == {}
    assert report.result("predict_is_consistent_across_observations").status == "passed"
    for name in ("forward_is_consistent_across_observations", "backward_is_consistent_across_observations"):
        result = report.result(name)
        assert result.status == "skipped" and "its observations interact" in result.message
        assert "batch statistics" in result.message


class Dropout:
    """Inverted dropout: a mask drawn in forward for the whole batch, the identity in predict."""

    def predict(self, X):
        return X

    def forward(self, X):
        mask = (np.random.random(X.shape) >= 0.5).astype(X.dtype) * 2
        return X * mask, mask

    def backward(self, X, Y, dLdY, memory):
        return dLdY * memory


def test_dropout_in_forward_is_skipped_for_its_draws_and_never_said_to_interact():
    report = layercheck.check_layer(Dropout, "4,3,5,6:SSCB", checks=OBSERVATION_CHECKS[1:])
    assert report.result("predict_is_consistent_across_observations").status == "passed"
    for name, method in (
        ("forward_is_consistent_across_observations", "forward"),
        ("backward_is_consistent_across_observations", "forward then backward"),
    ):
        result = report.result(name)
        assert result.status == "skipped", result.message
        assert f"{method} is not repeatable" in result.message and "dropout" in result.message
        assert "interact" not in result.message and "batch statistics" not in result.message


class RefusesABatchOfOne:
    """Training forward normalizes with the batch's statistics and refuses a batch of one, as
    PyTorch's batch norm does."""

    def predict(self, X):
        return X * 0.5

    def forward(self, X):
        if X.shape[-1] < 2:
            raise ValueError("expected more than 1 value per channel when training")
        return (X - X.mean(axis=-1, keepdims=True)) / X.std(axis=-1, keepdims=True), None

    def backward(self, X, Y, dLdY, memory):
        return 0.5 * dLdY


def test_a_forward_that_raises_on_one_observation_is_skipped_for_that_and_no_difference_is_claimed():
    """A review: the skip said "an observation's results differ when it runs alone" of a
    forward that gave no results alone (it raised)."""
    report = layercheck.check_layer(RefusesABatchOfOne, "3,8:CB", checks=OBSERVATION_CHECKS[2:3])
    result = report.result("forward_is_consistent_across_observations")
    assert result.status == "skipped", result.message
    assert "raised ValueError: expected more than 1 value per channel" in result.message
    assert "differ when it runs alone" not in result.message


class NoisyPredict:
    """Noise drawn in predict: each fresh layer starts from the same seeds, so the draws fall
    on other observations when one runs alone, and the same ones when the others change."""

    def predict(self, X):
        return X + 0.1 * np.random.standard_normal(X.shape)

    def backward(self, X, Y, dLdY, memory):
        return dLdY


class ScalesByBatchSize:
    def predict(self, X):
        return X * X.shape[-1]

    def backward(self, X, Y, dLdY, memory):
        return dLdY * X.shape[-1]


class MeanOverTheLongest:
    """A masked mean over time divided by the batch's longest length (an integer input): each
    observation's output depends on the others' lengths, which a redraw from the lengths held
    may leave as they were."""

    def output_format(self, fx, fl):
        return "CB"

    def predict(self, X, L):
        mask = (np.arange(X.shape[2])[None, :] < L[:, None]).astype(X.dtype)
        return np.einsum("cbt,bt->cb", X, mask) / X.dtype.type(L.max())

    def backward(self, X, L, Y, dLdY, memory):
        mask = (np.arange(X.shape[2])[None, :] < L[:, None]).astype(X.dtype)
        return dLdY[:, :, None] * mask[None] / X.dtype.type(L.max()), None


@pytest.mark.parametrize("seed", range(3))
def test_results_are_never_said_independent_of_the_others_values_where_integers_were_not_drawn_anew(seed):
    report = layercheck.check_layer(
        MeanOverTheLongest, ["4,5,6:CBT", "5:B:int=1..6"], checks=OBSERVATION_CHECKS[1:2], seed=seed
    )
    result = report.result("predict_is_consistent_across_observations")
    assert result.status == "failed", result.message
    assert "not on the others' values" not in result.message, result.message


@pytest.mark.parametrize(
    ("layer", "said", "never"),
    [
        (NoisyPredict, "predict is not repeatable", "mixes observations|depend on the batch's size"),
        (ScalesByBatchSize, "depend on the batch's size", "mixes observations|not repeatable"),
        (Tanh, None, "not repeatable|depend on the batch's size|mixes"),
    ],
    ids=["random draws", "batch size", "correct"],
)
def test_why_observations_differ_is_said_only_as_far_as_it_was_shown(layer, said, never):
    report = layercheck.check_layer(layer, "4,3,5,6:SSCB", checks=["predict_is_consistent_across_observations"])
    result = report.result("predict_is_consistent_across_observations")
    assert result.status == ("passed" if said is None else "failed"), result.message
    assert said is None or said in result.message
    assert not re.search(never, result.message), result.message


def test_the_cli_takes_one_layout_per_input():
    path = SAMPLES / "buggy" / "weighted_addition_swapped.py"
    proc = run_cli("run", path, "--layout", "6,5,4,3:SSCB", "--layout", "6,5,4,3:SSCB")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "the gradients of X1 and X2 are returned in each other's place" in proc.stdout
    proc = run_cli("run", path, "--layout", "6,5,4,3:SSCB")
    assert proc.returncode == 1
    assert "takes 2 input(s) (X1, X2) but 1 layout(s) were given" in proc.stdout


@pytest.mark.parametrize(
    "name", ["two_inputs_good.py", "pooling_good.py", "good_recurrent_state.py", "good_batch_norm.py"]
)
def test_correct_contract_layers_pass_for_many_seeds(name):
    obj = load_layer(CORPUS / name)
    for seed in range(12):
        report = layercheck.check_layer(obj, obj.example_layout, seed=seed)
        assert not_ok(report) == {}, (seed, not_ok(report))
