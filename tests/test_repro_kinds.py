"""Reproducers of the checks a few calls decide (every one but the gradient check): for each
kind, a buggy layer's reproducer run where NumPy alone is importable fails with the numbers the
report gave, and passes once the bug is fixed; the script imports nothing of layercheck."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import conftest
import pytest
from conftest import CORPUS, FUNCTIONS, TESTS, run_isolated
from cupy_rooms import ROOM, STAND_IN, Room

from layercheck.checks import SCRIPTS
from layercheck.reproducers.evidence import ReproKind


@dataclass(frozen=True)
class Case:
    source: Path
    check: str
    bug: str  # code found once in the source, replaced by `fix` to fix the layer
    fix: str
    printed: tuple[str, ...]  # what the reproducer must print while the bug is there
    options: tuple[str, ...] = ()


CASES = [
    Case(
        CORPUS / "modifies_input.py",
        "predict_does_not_modify_inputs",
        "X *= 2  # BUG",
        "X = X * 2  # fixed",
        ("X was modified in place",),
    ),
    Case(
        CORPUS / "forward_modifies_input.py",
        "forward_does_not_modify_inputs",
        "X[X < 0] = 0  # BUG",
        "X = X * (X > 0)  # fixed",
        ("X was modified in place: 179 of 360 elements changed",),
    ),
    Case(
        CORPUS / "backward_modifies_dLdY.py",
        "backward_does_not_modify_inputs",
        "dLdY *= (X > 0).astype(dLdY.dtype)  # BUG",
        "dLdY = dLdY * (X > 0).astype(dLdY.dtype)  # fixed",
        ("dLdY was modified in place: 179 of 360 elements changed",),
    ),
    Case(
        FUNCTIONS / "backward_scales_dLdY_in_place.py",
        "backward_does_not_modify_inputs",
        "dLdY *= 1 - Y * Y  # BUG",
        "dLdY = dLdY * (1 - Y * Y)  # fixed",
        ("dLdY was modified in place",),
    ),
    Case(
        CORPUS / "noisy_predict.py",
        "predict_is_deterministic",
        "noise = xp.random.standard_normal(X.shape).astype(X.dtype)  # BUG",
        "noise = xp.zeros(X.shape, X.dtype)  # fixed",
        ("Y differs at 360 of 360 elements", "16 ulps of the largest value"),
    ),
    Case(
        CORPUS / "accumulates_gradients.py",
        "backward_is_repeatable",
        "self.grad_w = grad if self.grad_w is None else self.grad_w + grad  # BUG",
        "self.grad_w = grad  # fixed",
        ("dLdw differs at 5 of 5 elements",),
    ),
    Case(
        CORPUS / "float64_leak.py",
        "predict_is_consistent_in_type",
        "half = xp.full((1,) * X.ndim, 0.5)  # BUG",
        "half = xp.full((1,) * X.ndim, 0.5, dtype=X.dtype)  # fixed",
        ("predict output Y is float64, expected float32",),
    ),
    Case(
        CORPUS / "forward_type_leak.py",
        "forward_is_consistent_in_type",
        "slope = xp.where(X > 0, 1.0, 0.01)  # BUG",
        "slope = xp.where(X > 0, 1.0, 0.01).astype(X.dtype)  # fixed",
        ("forward output Y is float64, expected float32",),
    ),
    Case(
        CORPUS / "backward_float64_leak.py",
        "backward_is_consistent_in_type",
        "mask = xp.where(X > 0, 1.0, 0.0)  # BUG",
        "mask = xp.where(X > 0, 1.0, 0.0).astype(X.dtype)  # fixed",
        ("gradient dLdX is float64, expected float32",),
    ),
    Case(
        CORPUS / "batch_mixing_forward.py",
        "predict_is_consistent_across_observations",
        "return X - X.mean(axis=3, keepdims=True)  # BUG",
        "return X - X.mean(axis=2, keepdims=True)  # fixed",
        ("observation 0: Y[", "alone and", "in the batch"),
    ),
    Case(
        CORPUS / "batch_mixing_forward.py",
        "forward_is_consistent_across_observations",
        "return X - X.mean(axis=3, keepdims=True)  # BUG",
        "return X - X.mean(axis=2, keepdims=True)  # fixed",
        ("observation 5: Y[",),
    ),
    Case(
        CORPUS / "grad_mean_not_sum.py",
        "backward_is_consistent_across_observations",
        "dLdalpha = xp.mean(dLdalpha, axis=self.batch_axis, keepdims=True)  # BUG",
        "dLdalpha = xp.sum(dLdalpha, axis=self.batch_axis, keepdims=True)  # fixed",
        ("dLdalpha[0, 0, 4, 0] is -1.283997733 for the batch and -7.703986397 summed over its observations alone",),
    ),
    Case(
        CORPUS / "batch_normalization_over_batch.py",
        "backward_is_consistent_across_observations",
        "self.axes = tuple(i for i in range(layout.ndim) if i != channel_axis)",
        "self.axes = tuple(i for i in range(layout.ndim) if i not in (channel_axis, layout.find('B')))",
        ("observation 4: dLdX[0, 0, 4, 4] is -2.578022332 alone and -1.153810679 in the batch",),
    ),
    Case(
        CORPUS / "nan_output.py",
        "outputs_are_finite",
        "return xp.log(X)  # BUG",
        "return xp.log(xp.abs(X) + 1)  # fixed",
        ("output Y has 179 NaN and 0 infinite value(s) of 360", "(where X["),
    ),
    Case(
        CORPUS / "backward_wrong_shape.py",
        "backward_is_consistent_in_size",
        "# BUG: missing xp.sum(dLdalpha, axis=3, keepdims=True) over the observations",
        "dLdalpha = xp.sum(dLdalpha, axis=3, keepdims=True)  # fixed",
        ("the gradient of alpha has shape (1, 1, 5, 6) but alpha has shape (1, 1, 5, 1)",),
    ),
    Case(
        CORPUS / "forward_size_mismatch.py",
        "forward_predict_are_consistent_in_size",
        "return 2 * X[..., :-1]  # BUG",
        "return 2 * X  # fixed",
        ("Y has shape (4, 3, 5, 5) from forward but (4, 3, 5, 6) from predict",),
    ),
    Case(
        CORPUS / "gap_no_output_format.py",
        "output_format_is_consistent",
        "    def predict(self, X):",
        '    def output_format(self, fmt):  # fixed\n        return "CB"\n\n    def predict(self, X):',
        ("predict output Y has 2 dimension(s) (shape (5, 6)) but its format 'SSCB' has 4",),
    ),
    Case(
        CORPUS / "output_batch_size_one.py",
        "output_batch_size_matches_input",
        "return xp.sum(X, axis=self.batch_axis, keepdims=True)  # BUG",
        "return 2 * X  # fixed",
        ("predict output Y has batch size 1 (shape (4, 3, 5, 1), B is axis 3) for inputs with 6 observations",),
    ),
    Case(
        CORPUS / "state_changes_shape.py",
        "predict_returns_valid_states",
        "return Y, Y  # BUG",
        "return Y, Y.mean(axis=1, keepdims=True)  # fixed",
        ("predict returns updated h as (5, 4), but state h has shape (5, 1)",),
    ),
    Case(
        CORPUS / "forward_state_wrong_dtype.py",
        "forward_returns_valid_states",
        "np.asarray(updated, dtype=np.float64)  # BUG",
        "updated  # fixed",
        ("forward returns updated mean as (5, 1) of dtype float64, but state mean is float32",),
    ),
    Case(
        CORPUS / "init_overwrites.py",
        "initialize_does_not_change_nonempty_learnables",
        "self.w = np.random.rand(*shape)  # BUG",
        "self.w = np.random.rand(*shape) if self.w is None else self.w  # fixed",
        ("learnable w was changed by initialize: 5 of 5 elements changed, the largest change at [0, 0, 2, 0]",),
    ),
    Case(
        TESTS / "layers" / "init_overwrites_state.py",
        "initialize_does_not_change_nonempty_states",
        "self.h = np.zeros(shape)  # BUG",
        "self.h = np.zeros(shape) if self.h is None else self.h  # fixed",
        ("state h was changed by initialize: 5 of 5 elements changed", "4.722034512 became 0"),
    ),
    Case(
        FUNCTIONS / "ignores_mask.py",
        "backward_respects_compute_gradients",
        "return dLdX, dLda, dLdb",
        "return tuple(g if wanted else None for g, wanted in zip((dLdX, dLda, dLdb), compute_gradients))  # fixed",
        (
            "with compute_gradients=(True, False, False), backward returned a gradient for a, which was not requested",
            "(6 findings above)",
        ),
    ),
    Case(
        CORPUS / "reset_state_wrong.py",
        "reset_state_does_not_error",
        "self.h = np.ones_like(self.h)  # BUG",
        "self.h = np.zeros_like(self.h)  # fixed",
        (
            "state h is not restored by reset_state: 12 of 12 elements changed, the largest change at [0, 0]: 0 became 1",
        ),
    ),
    Case(
        CORPUS / "reset_state_to_float64.py",
        "reset_state_does_not_error",
        "self.h = np.zeros(self.h.shape)  # BUG: np.zeros_like(self.h) keeps its dtype",
        "self.h = np.zeros_like(self.h)  # fixed",
        ("predict with float32 inputs", "state h is float64 after reset_state, float32 before"),
    ),
    Case(  # reset_state in MATLAB's style: the script takes the layer it returns, as layercheck does
        TESTS / "layers" / "reset_returns_float64_layer.py",
        "reset_state_does_not_error",
        "return DecayResetReturnsALayer(np.zeros(self.h.shape))  # BUG",
        "return DecayResetReturnsALayer(np.zeros_like(self.h))  # fixed",
        ("state h is float64 after reset_state, float32 before",),
    ),
    Case(  # at the second batch size: the script calls the layer as layercheck did there
        CORPUS / "flatten_fixed_batch.py",
        "output_batch_size_matches_input",
        "return X.reshape(-1, BATCH)  # BUG",
        "return X.reshape(-1, X.shape[-1])  # fixed",
        (
            "predict with float64 inputs of shape (4, 3, 5, 2)",
            "predict output Y has batch size 4 (shape (30, 4), B is axis 1) for inputs with 2 observations",
        ),
    ),
]


CORPUS_GPU = TESTS / "corpus_gpu"
# On the GPU (the stand-in CuPy: the script imports it as it would the real one).
GPU_CASES = [
    Case(
        CORPUS_GPU / "gpu_wrong_channel.py",
        "predict_is_consistent_on_gpu",
        "alpha = xp.roll(self.alpha, 1, axis=2) if xp is not np else self.alpha",
        "alpha = self.alpha",
        ("on the GPU and", "on the CPU (|difference|", "145 of 300 elements differ"),
    ),
    Case(
        CORPUS_GPU / "gpu_backward_branch_wrong.py",
        "backward_is_consistent_on_gpu",
        "return dLdY * X  # the GPU-only path: wrong",
        "return dLdY / (1 + xp.exp(-X))",
        ("dLdX[3, 1, 0] is -2.709054832 on the GPU and 0.1722747003 on the CPU",),
    ),
    Case(
        CORPUS_GPU / "gpu_host_round_trip.py",
        "outputs_stay_on_device",
        "return np.tanh(host)",
        "return get_array_module(X).tanh(X)",
        ("predict output Y is a numpy.ndarray but the inputs were cupy arrays",),
    ),
]


def test_every_kind_has_a_case_and_a_script():
    cases = CASES + GPU_CASES
    assert {SCRIPTS[case.check] for case in cases} == set(ReproKind) - {ReproKind.GRADIENT}
    assert {case.check for case in cases} == {c for c, kind in SCRIPTS.items() if kind is not ReproKind.GRADIENT}


def _layercheck(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return conftest.run_cli("run", *argv, cwd=cwd, env={**os.environ, "COLUMNS": "200"})


@pytest.mark.parametrize("case", CASES, ids=[f"{c.source.stem}-{c.check}" for c in CASES])
def test_reproducer_fails_on_the_bug_and_passes_once_fixed(tmp_path, numpy_alone, case):
    _fails_on_the_bug_and_passes_once_fixed(tmp_path, numpy_alone, case)


@pytest.mark.stand_in
@pytest.mark.parametrize("case", GPU_CASES, ids=[f"{c.source.stem}-{c.check}" for c in GPU_CASES])
def test_gpu_reproducer_fails_on_the_bug_and_passes_once_fixed(tmp_path, numpy_alone, case):
    assert ROOM is Room.STAND_IN, f"a stand_in test ran where cupy is {ROOM.value}"
    _fails_on_the_bug_and_passes_once_fixed(tmp_path, numpy_alone, case, also=STAND_IN)


def _fails_on_the_bug_and_passes_once_fixed(
    tmp_path: Path, numpy_alone: Path, case: Case, also: Path | None = None
) -> None:
    work = tmp_path / "project"
    work.mkdir()
    source = case.source.read_text()
    assert source.count(case.bug) == 1
    (work / "layer.py").write_text(source)
    run = _layercheck(work, "layer.py", "--repro", "reps", "--json", "r.json", *case.options)
    assert run.returncode == 1, run.stdout + run.stderr
    (target,) = json.loads((work / "r.json").read_text())["targets"]
    check = next(c for c in target["checks"] if c["name"] == case.check)
    assert check["status"] == "failed"
    script = work / check["repro"]
    assert script.name.endswith(f"__{case.check}.py") and script.with_suffix(".npz").is_file()
    assert f"reproduce: python {check['repro']}" in run.stdout
    text = script.read_text()
    assert "import layercheck" not in text and "from layercheck" not in text

    buggy = run_isolated(numpy_alone, str(script), cwd=tmp_path, also=also)
    assert buggy.returncode == 1, buggy.stdout + buggy.stderr
    assert f"reproducing {case.check} of layer.py" in buggy.stdout
    for words in case.printed:
        assert words in buggy.stdout, buggy.stdout
    assert "FAILED:" in buggy.stdout

    (work / "layer.py").write_text(source.replace(case.bug, case.fix))
    fixed = run_isolated(numpy_alone, str(script), cwd=tmp_path, also=also)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "PASSED:" in fixed.stdout
    assert not (work / "__pycache__").exists()
    # The fixed layer passes the check itself: the reproducer agrees with layercheck.
    _layercheck(work, "layer.py", "--json", "r2.json", *case.options)
    (target,) = json.loads((work / "r2.json").read_text())["targets"]
    assert next(c for c in target["checks"] if c["name"] == case.check)["status"] == "passed"


def test_the_reports_numbers_are_the_reproducers(tmp_path, numpy_alone):
    """The worst element the report names for a mutation is the one the reproducer prints."""
    work = tmp_path / "project"
    work.mkdir()
    (work / "layer.py").write_text((CORPUS / "backward_modifies_dLdY.py").read_text())
    run = _layercheck(work, "layer.py", "--repro", "reps", "--json", "r.json")
    (target,) = json.loads((work / "r.json").read_text())["targets"]
    check = next(c for c in target["checks"] if c["name"] == "backward_does_not_modify_inputs")
    assert "the worst, at index (0, 2, 1, 5)" in check["message"], check["message"]
    printed = run_isolated(numpy_alone, str(work / check["repro"]), cwd=tmp_path).stdout
    assert "the largest change at [0, 2, 1, 5]" in printed, printed + run.stdout


@pytest.mark.parametrize(
    ("rtol", "atol", "judged", "dtype", "words"),
    [
        (1e-9, 1e-12, "float64", "float64", "layercheck's defaults for float64"),
        (1e-3, 1e-12, "float64", "float64", "the tolerances configured for float64"),
        (1e-9, 1e-12, "float64", "complex128", "layercheck's defaults for complex128"),
        (
            1e-4,
            1e-5,
            "float32",
            "float64",
            "layercheck's defaults for float32; judged at float32 because the layer computes below float64 inside",
        ),
        (
            1e-4,
            1e-5,
            "float32",
            "complex128",
            "layercheck's defaults for complex64; judged at complex64 because the layer computes below complex128 inside",
        ),
        (1e-4, 1e-5, "complex64", "complex64", "layercheck's defaults for complex64"),
    ],
)
def test_a_reproducer_says_where_its_tolerance_comes_from(rtol, atol, judged, dtype, words):
    from layercheck.checks.evidence import tolerance_words

    assert tolerance_words(rtol, atol, judged, dtype) == words
