"""Differentiable operations (DESIGN section 4): the contract, the checks, the samples."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import (
    FUNCTIONS,
    GRADIENTS,
    SAMPLES,
    declared,
    layer_files,
    load_layer,
    mentions,
    not_ok,
    run_cli,
    statuses,
)

import layercheck
from layercheck import UsageError
from layercheck.checks import REGISTRY

DECLARED = [declared(p) for p in layer_files(FUNCTIONS)]
MASKS = "backward_respects_compute_gradients"
SRELU_LAYOUTS = ["24,24,20,128:SSCB"] + ["1,1,20,1:SSCU"] * 4


def _report(d, seed=0):
    obj = load_layer(d.path)
    return layercheck.check_function(obj, obj.example_layout, seed=seed)


def test_the_operation_corpus_is_there():
    assert sum(d.correct for d in DECLARED) >= 3 and sum(bool(d.must_fail) for d in DECLARED) >= 4


@pytest.mark.parametrize("d", [d for d in DECLARED if d.correct], ids=lambda d: d.id)
def test_correct_operation_passes_for_many_seeds(d):
    for seed in range(10):
        report = _report(d, seed)
        assert report.kind == "function"
        assert not_ok(report) == {}, (seed, not_ok(report))
        for name in (
            "forward_does_not_error",
            "backward_is_consistent_in_size",
            "backward_is_consistent_in_type",
            GRADIENTS,
            MASKS,
        ):
            assert report.result(name).status == "passed", name


@pytest.mark.parametrize("d", [d for d in DECLARED if d.must_fail], ids=lambda d: d.id)
def test_broken_operation_fails_the_named_check(d):
    for seed in range(3):
        report = _report(d, seed)
        result = report.result(d.must_fail[0])
        assert result.status == "failed", (seed, result.message)
        for argument in d.arguments:
            assert mentions(result.message, argument)
        if d.must_fail[0] == GRADIENTS:
            failing = [r["argument"] for r in result.details["arguments"] if r["status"] == "failed"]
            assert sorted(failing) == sorted(d.arguments)


def test_layer_checks_are_skipped_for_operations_and_operation_checks_for_layers():
    report = _report(declared(FUNCTIONS / "good_scale_shift.py"))
    for name in ("predict_does_not_error", "predict_is_consistent_across_observations", "reset_state_does_not_error"):
        assert report.result(name).status == "skipped"
        assert "layers only" in report.result(name).message
    layer_report = layercheck.check_layer(load_layer(SAMPLES / "prelu.py"), "4,3,5,2:SSCB")
    assert layer_report.result(MASKS).status == "skipped"
    assert "operations only" in layer_report.result(MASKS).message
    assert REGISTRY[MASKS].kinds == ("function",)


def test_srelu_function_passes_at_the_seed_layout():
    obj = load_layer(SAMPLES / "srelu_function.py")
    report = layercheck.check_function(obj, SRELU_LAYOUTS, args={"format": "SSCB"})
    assert not_ok(report) == {}
    arguments = [r["argument"] for r in report.result(GRADIENTS).details["arguments"]]
    assert arguments == ["X", "tl", "al", "tr", "ar"]
    assert report.result(MASKS).message == "6 masks checked"


def test_the_seed_operation_port_is_caught_with_the_swap_named():
    obj = load_layer(SAMPLES / "buggy" / "srelu_function_seed.py")
    for seed in range(5):
        report = layercheck.check_function(obj, obj.example_layout, seed=seed)
        result = report.result(GRADIENTS)
        assert result.message == "the gradients of al and tr are returned in each other's place"
        assert [n for n, s in statuses(report).items() if s == "failed"] == [GRADIENTS]


def test_the_cli_checks_an_operation_with_one_layout_per_input_and_constructor_arguments(tmp_path):
    out = tmp_path / "report.json"
    layouts = [a for layout in ["8,8,4,2:SSCB"] + ["1,1,4,1:SSCU"] * 4 for a in ("--layout", layout)]
    proc = run_cli("run", SAMPLES / "buggy" / "srelu_function_seed.py", *layouts, "--arg", "format=SSCB", "--json", out)
    assert proc.returncode == 1
    assert "the gradients of al and tr are returned in each other's place" in proc.stdout
    target = json.loads(out.read_text())["targets"][0]
    assert target["kind"] == "function"
    assert target["layouts"] == ["8,8,4,2:SSCB"] + ["1,1,4,1:SSCU"] * 4


class Square:
    """An operation written as an instance with a single input and a bare-array return."""

    def forward(self, X):
        return X * X, X

    num_memory_values = 1

    def backward(self, dLdY, compute_gradients, X):
        return 2 * X * dLdY if compute_gradients[0] else None


def test_check_function_takes_instances_and_rejects_layers():
    report = layercheck.check_function(Square(), "3,4:CB")
    assert report.kind == "function"
    assert not_ok(report) == {}
    with pytest.raises(UsageError, match="not an operation"):
        layercheck.check_function(load_layer(SAMPLES / "prelu.py"), "3,4:CB")


class WrongBackwardArity:
    save_inputs_for_backward = True

    def forward(self, X, w):
        return X * w

    def backward(self, dLdY, compute_gradients):
        return dLdY, dLdY


def test_a_backward_that_cannot_take_the_saved_inputs_breaks_the_syntax_check():
    report = layercheck.check_function(WrongBackwardArity, ["3,4:CB", "3,4:CB"])
    result = report.result("function_syntaxes_are_correct")
    assert result.status == "failed"
    assert "dLdY, compute_gradients, X, w" in result.message


def test_an_operation_returning_a_float64_gradient_in_float32_fails_the_type_check():
    class Leaks(Square):
        def backward(self, dLdY, compute_gradients, X):
            return np.asarray(2 * X * dLdY, dtype=np.float64)

    result = layercheck.check_function(Leaks, "3,4:CB").result("backward_is_consistent_in_type")
    assert result.status == "failed" and "float64" in result.message
