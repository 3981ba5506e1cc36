"""Complex-valued layers (issue 7): dtypes, the gradient convention and its diagnosis."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import GRADIENTS, SAMPLES, TESTS, declared, layer_files, load_layer, mentions, not_ok, run_cli, statuses

import layercheck

COMPLEX = TESTS / "corpus_complex"
DECLARED = [declared(p) for p in layer_files(COMPLEX)]
BOTH = ["complex128", "complex64"]


@pytest.mark.parametrize("d", [d for d in DECLARED if d.correct], ids=lambda d: d.id)
def test_correct_complex_layer_passes_for_many_seeds(d):
    obj = load_layer(d.path)
    for seed in range(10):
        report = layercheck.check_layer(obj, obj.example_layout, dtypes=BOTH, seed=seed)
        assert not_ok(report) == {}, (seed, not_ok(report))
        assert report.result(GRADIENTS).details["precision"] == "float64"


@pytest.mark.parametrize("d", [d for d in DECLARED if d.must_fail], ids=lambda d: d.id)
def test_broken_complex_layer_fails_naming_the_conjugate_or_the_convention(d):
    obj = load_layer(d.path)
    for seed in range(3):
        report = layercheck.check_layer(obj, obj.example_layout, dtypes=["complex128"], seed=seed)
        result = report.result(GRADIENTS)
        assert result.status == "failed"
        failing = [r["argument"] for r in result.details["arguments"] if r["status"] == "failed"]
        assert sorted(failing) == sorted(d.arguments)
        for argument in d.arguments:
            assert mentions(result.message, argument)
        expected = "Wirtinger" if "wirtinger" in d.id else "conj missing"
        assert expected in result.message, result.message
        assert [n for n, s in statuses(report).items() if s == "failed"] == [GRADIENTS]


@pytest.mark.parametrize("name", ["complex_scale.py", "modrelu.py"])
def test_complex_samples_pass_at_complex_and_real_precisions(name):
    obj = load_layer(SAMPLES / name)
    for dtypes in (BOTH, ["float64", "float32"]):
        for seed in range(4):
            report = layercheck.check_layer(obj, obj.example_layout, dtypes=dtypes, seed=seed)
            assert not_ok(report) == {}, (dtypes, seed, not_ok(report))


@pytest.mark.parametrize("name, argument", [("complex_scale_no_conj.py", "w"), ("modrelu_no_conj.py", "X")])
def test_complex_sample_twins_fail_with_conj_in_the_diagnosis(name, argument):
    obj = load_layer(SAMPLES / "buggy" / name)
    result = layercheck.check_layer(obj, obj.example_layout, dtypes=["complex128"]).result(GRADIENTS)
    assert result.status == "failed"
    assert "conj" in result.message
    assert [r["argument"] for r in result.details["arguments"] if r["status"] == "failed"] == [argument]


def test_a_cause_is_said_likely_only_where_it_was_shown_and_a_complex_suspicion_is_advice():
    # modReLU's missing conj is inside a projection: no cause is shown, and none is said to be
    # likely; the headline advises checking each conj. complex_scale's missing conj is shown.
    for name, likely in (("modrelu_no_conj.py", None), ("complex_scale_no_conj.py", "conj missing")):
        obj = load_layer(SAMPLES / "buggy" / name)
        result = layercheck.check_layer(obj, obj.example_layout, dtypes=["complex128"]).result(GRADIENTS)
        said = [line.strip() for line in result.explanation if line.strip().startswith("likely cause:")]
        assert said == ([] if likely is None else [f"likely cause: {likely}"]), (name, result.explanation)
        if likely is None:
            assert result.message.endswith("complex values: check each conj against the convention dL/da + i*dL/db")


def test_the_whole_gradient_conjugated_is_named_as_the_other_convention():
    class Conjugated:
        def predict(self, X):
            return X * X

        def backward(self, X, Y, dLdY, memory):
            return np.conj(np.conj(2 * X) * dLdY)  # dL/da - i dL/db

    result = layercheck.check_layer(Conjugated, "5,6:CB", dtypes=["complex128"]).result(GRADIENTS)
    assert "the conjugate of the correct one" in result.message and "JAX" in result.message


def test_learnables_keep_their_kind_at_the_tested_precision():
    seen = {}

    class Records:
        learnables = ("w", "b")

        def __init__(self):
            self.w = np.ones((3, 1), dtype=complex)
            self.b = np.zeros((3, 1))

        def predict(self, X):
            seen[X.dtype.name] = (self.w.dtype.name, self.b.dtype.name)
            return self.w * X + self.b

    report = layercheck.check_layer(
        Records, "3,4:CB", dtypes=["complex64", "float32"], checks=["predict_is_consistent_in_type"]
    )
    assert report.result("predict_is_consistent_in_type").status == "passed"
    assert seen["complex64"] == ("complex64", "float32")
    assert seen["float32"] == ("complex64", "float32")  # real inputs with a complex learnable


class RealLearnablesComplexOutput:
    learnables = ("w",)

    def __init__(self):
        self.w = np.ones((3, 1))

    def predict(self, X):
        return self.w * X * (1 + 0j)


class Complex64To128:
    def predict(self, X):
        return X.astype(np.complex128)


def test_type_checks_for_complex_values():
    result = layercheck.check_layer(RealLearnablesComplexOutput, "3,4:CB").result("predict_is_consistent_in_type")
    assert result.status == "failed" and "complex" in result.message and "real" in result.message
    result = layercheck.check_layer(Complex64To128, "3,4:CB", dtypes=BOTH).result("predict_is_consistent_in_type")
    assert result.status == "failed" and "complex128, expected complex64" in result.message


def test_the_cli_takes_complex_dtypes():
    proc = run_cli("run", SAMPLES / "buggy" / "complex_scale_no_conj.py", "--dtype", "complex128,complex64")
    assert proc.returncode == 1
    assert "conj missing" in proc.stdout
    proc = run_cli("run", SAMPLES / "complex_scale.py", "--dtype", "complex256")
    assert proc.returncode == 2


def test_a_layer_with_complex_learnables_is_checked_at_complex_dtypes_when_none_are_given():
    # Real dtypes never exercise a missing conjugate (issue 39): the project's own buggy sample
    # fails by default, and passes with the dtypes given as real ones, with a note that says so.
    from conftest import REPO

    buggy = load_layer(REPO / "sample_layers" / "buggy" / "complex_scale_no_conj.py")
    report = layercheck.check_layer(buggy, "8,8,4,2:SSCB")
    assert report.result("gradients_are_numerically_correct").status == "failed"
    assert not any("only real dtypes were tested" in note for note in report.notes)
    given = layercheck.check_layer(buggy, "8,8,4,2:SSCB", dtypes=["float64", "float32"])
    assert given.status == "passed"
    assert any("only real dtypes were tested" in note for note in given.notes)


class _Seen:
    """Records the dtypes of the inputs predict is called with."""

    seen: set[str] = set()

    def predict(self, X):
        type(self).seen.add(str(X.dtype))
        return X * self.scale

    def backward(self, X, Y, dLdY, memory):
        return dLdY * np.conj(self.scale)


class _RealConstant(_Seen):
    seen: set[str] = set()

    def __init__(self):
        self.scale = np.float64(2.0)


class _ComplexConstant(_Seen):
    seen: set[str] = set()

    def __init__(self):
        self.scale = np.array(2.0 + 1.0j)  # a constant, not a learnable


def test_a_layer_with_a_complex_constant_is_checked_at_complex_dtypes_and_a_real_one_at_real_ones():
    layercheck.check_layer(_RealConstant, "3,2:CB")
    assert _RealConstant.seen == {"float64", "float32"}
    layercheck.check_layer(_ComplexConstant, "3,2:CB")
    assert {"complex128", "complex64"} <= _ComplexConstant.seen
    _ComplexConstant.seen.clear()
    layercheck.check_layer(_ComplexConstant, "3,2:CB", dtypes=["float64"])  # given: as given
    assert _ComplexConstant.seen == {"float64"}
