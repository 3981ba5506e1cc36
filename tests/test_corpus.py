"""The corpus: every file in tests/corpus/ says in its docstring what layercheck must report."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import CORPUS, GRADIENTS, declared, example_layout, layer_files, load_layer, mentions, not_ok

import layercheck
from layercheck.checks import REGISTRY

FILES = layer_files(CORPUS)
DECLARED = [declared(path) for path in FILES]
CORRECT = [d for d in DECLARED if d.correct]
BROKEN = [d for d in DECLARED if d.must_fail]
LEFT_INCOMPLETE = [d for d in DECLARED if d.left_incomplete]


def _check(d):
    obj = load_layer(d.path)
    return obj, layercheck.check_layer(obj, example_layout(obj))


def test_the_corpus_is_there():
    assert len(FILES) >= 30
    assert len(CORRECT) >= 10 and len(BROKEN) >= 20


@pytest.mark.parametrize("d", DECLARED, ids=lambda d: d.id)
def test_every_corpus_file_declares_one_expectation(d):
    kinds = [d.correct, bool(d.must_fail), bool(d.left_incomplete)]
    assert kinds.count(True) == 1, (
        f"{d.id}: docstring must start with 'Correct', or say 'Must fail: <check>' or 'Left incomplete: <check>'"
    )
    for name in (*d.must_fail, *d.left_incomplete):
        assert name in REGISTRY, f"{d.id} names an unknown check {name!r}"


@pytest.mark.parametrize("d", LEFT_INCOMPLETE, ids=lambda d: d.id)
def test_a_layer_left_incomplete_fails_nothing_and_leaves_the_named_checks_undecided(d):
    obj, report = _check(d)
    assert report.error is None
    assert {name: status.split(":")[0] for name, status in not_ok(report).items()} == dict.fromkeys(
        d.left_incomplete, "incomplete"
    )
    assert report.status == "incomplete" and report.ok and report.fails(strict=True)


@pytest.mark.parametrize("d", CORRECT, ids=lambda d: d.id)
def test_correct_layer_passes_every_check(d):
    obj, report = _check(d)
    assert report.error is None
    assert report.checks, "no check ran"
    assert not_ok(report) == {}
    assert report.status == "passed"
    assert report.ok


@pytest.mark.parametrize("d", BROKEN, ids=lambda d: d.id)
def test_broken_layer_fails_the_named_check(d):
    obj, report = _check(d)
    assert report.error is None
    name = d.must_fail[0]
    result = report.result(name)
    assert result.status == "failed", f"{d.id}: {name} is {result.status}: {result.message}"
    assert report.status == "failed"
    assert not report.ok
    assert result.message.strip(), "a failure needs a message"
    if name == GRADIENTS:
        failing = [r["argument"] for r in result.details["arguments"] if r["status"] == "failed"]
        assert failing, "no argument is reported as failing"
        for argument in failing:
            assert mentions(result.message, argument), f"{argument!r} not named in {result.message!r}"
        for argument in d.arguments:
            assert argument in failing, f"the docstring names {argument}, the check blames {failing}"


def test_plain_function_is_reported_as_a_layer_without_backward():
    obj = load_layer(CORPUS / "plain_function.py")
    report = layercheck.check_layer(obj, obj.example_layout)
    assert report.kind == "layer"
    assert report.result("backward_does_not_error").status == "skipped"
    assert "backward" in report.result(GRADIENTS).message
    assert report.result("predict_does_not_error").status == "passed"


# -- awkward but correct layers: the gradient check must never cry wolf ------------------------

AWKWARD = [
    "kink_dense",
    "near_kink_inputs",
    "good_relu",
    "good_abs",
    "large_offset",
    "tiny_values",
    "zero_grad_learnable",
    "good_softplus",
]


@pytest.mark.parametrize("name", AWKWARD)
def test_awkward_correct_layer_never_fails_the_gradient_check(name):
    obj = load_layer(CORPUS / f"{name}.py")
    outcomes = {}
    for seed in range(30):
        report = layercheck.check_layer(obj, obj.example_layout, seed=seed, checks=[GRADIENTS])
        result = report.result(GRADIENTS)
        outcomes[seed] = (result.status, result.message)
    failed = {s: m for s, (status, m) in outcomes.items() if status == "failed"}
    assert failed == {}
    # "incomplete" is allowed, but a check that never decides would prove nothing.
    assert sum(status == "passed" for status, _ in outcomes.values()) >= 15


def near_kink_inputs(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    """Standard normal values with a third of the elements within 1e-7 of 0, some exactly 0."""
    rng = np.random.default_rng(1000 + seed)
    x = rng.standard_normal(shape)
    flat = x.reshape(-1)
    chosen = rng.permutation(flat.size)[: flat.size // 3]
    flat[chosen] = rng.uniform(-1e-7, 1e-7, chosen.size)
    flat[chosen[: max(1, chosen.size // 10)]] = 0.0
    return x


def test_near_kink_inputs_have_the_intended_shape():
    x = near_kink_inputs(0, (4, 3, 5, 6))
    close = np.abs(x) <= 1e-7
    assert close.sum() == x.size // 3
    assert (x == 0).sum() >= 1


@pytest.mark.parametrize("name", ["near_kink_inputs", "good_relu", "good_abs"])
def test_kink_layers_never_fail_on_inputs_next_to_the_kink(name):
    obj = load_layer(CORPUS / f"{name}.py")
    layout = layercheck.parse_layout(obj.example_layout)
    failures = {}
    gradient_statuses = []
    for seed in range(30):
        x = near_kink_inputs(seed, layout.size)
        report = layercheck.check_layer(obj, layout, seed=seed, inputs=[x])
        failed = {c.name: c.message for c in report.checks if c.status == "failed"}
        if failed:
            failures[seed] = failed
        gradient_statuses.append(report.result(GRADIENTS).status)
    assert failures == {}
    assert gradient_statuses.count("passed") >= 15, gradient_statuses
