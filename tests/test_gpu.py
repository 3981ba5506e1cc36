"""The GPU checks: skipped with the reason without a GPU, exit 2 for --device gpu without
one; their code paths run in CI on a stand-in CuPy (tests/fake_gpu), and on a real GPU in the
tests marked `gpu`."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import layercheck
from layercheck.devices import gpu_status
from layercheck.errors import UsageError

from conftest import GRADIENTS, SAMPLES, TESTS, load_layer, not_ok, run_cli

GPU_CHECKS = ["predict_is_consistent_on_gpu", "backward_is_consistent_on_gpu", "outputs_stay_on_device"]
REAL_GPU = gpu_status().usable


@pytest.fixture
def fake_gpu(monkeypatch):
    """layercheck sees the stand-in CuPy (unless a real one is usable)."""
    if REAL_GPU:
        yield
        return
    monkeypatch.syspath_prepend(str(TESTS / "fake_gpu"))
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    gpu_status.cache_clear()
    yield
    sys.modules.pop("cupy", None)
    gpu_status.cache_clear()


@pytest.mark.skipif(REAL_GPU, reason="a GPU is usable here")
def test_without_a_gpu_the_gpu_checks_are_skipped_with_the_reason():
    report = layercheck.check_layer(load_layer(SAMPLES / "prelu.py"), "4,3,5,2:SSCB")
    for name in GPU_CHECKS:
        result = report.result(name)
        assert result.status == "skipped"
        assert "CuPy is not installed" in result.message or "no CUDA device" in result.message


@pytest.mark.skipif(REAL_GPU, reason="a GPU is usable here")
def test_device_gpu_without_a_gpu_exits_2_with_the_reason():
    proc = run_cli("run", SAMPLES / "prelu.py", "--device", "gpu")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "device gpu was asked for but no GPU is usable" in proc.stderr
    with pytest.raises(UsageError, match="device gpu was asked for"):
        layercheck.check_layer(load_layer(SAMPLES / "prelu.py"), "4,3,5,2:SSCB", device="gpu")


def test_device_cpu_never_imports_cupy():
    code = (
        "import sys, layercheck; from layercheck.loading import import_module, discover; from pathlib import Path;"
        f"cls = discover(import_module(Path({str(SAMPLES / 'prelu.py')!r})))[0][1];"
        "r = layercheck.check_layer(cls, '4,3,5,2:SSCB', device='cpu');"
        "assert r.result('outputs_stay_on_device').message == '--device cpu: GPU checks not run', r.result('outputs_stay_on_device').message;"
        "assert 'cupy' not in sys.modules; print('ok')"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": str(TESTS / "fake_gpu"), "PATH": ""})
    assert proc.stdout.strip() == "ok", proc.stderr


SAMPLE_LAYOUTS = {
    "prelu.py": "4,3,5,2:SSCB", "srelu.py": "4,3,5,2:SSCB", "weighted_addition.py": None,
    "global_average_pooling.py": None, "peephole_lstm.py": None, "complex_scale.py": None, "modrelu.py": None,
}


@pytest.mark.parametrize("name", list(SAMPLE_LAYOUTS))
def test_the_samples_pass_every_gpu_check(name, fake_gpu):
    obj = load_layer(SAMPLES / name)
    report = layercheck.check_layer(obj, SAMPLE_LAYOUTS[name] or obj.example_layout)
    assert not_ok(report) == {}
    for check in GPU_CHECKS:
        assert report.result(check).status in ("passed", "skipped"), (check, report.result(check).message)
    assert report.result("predict_is_consistent_on_gpu").status == "passed"
    assert report.result("outputs_stay_on_device").status == "passed"


def test_the_operation_sample_passes_the_gpu_checks(fake_gpu):
    obj = load_layer(SAMPLES / "srelu_function.py")
    report = layercheck.check_function(obj, obj.example_layout)
    assert not_ok(report) == {}
    assert [report.result(c).status for c in GPU_CHECKS] == ["passed"] * 3


class HostRoundTrip:
    """Computes on the host: cupy.asnumpy in, NumPy out."""

    def predict(self, X):
        host = X.get() if hasattr(X, "get") else X
        return np.tanh(host)

    def backward(self, X, Y, dLdY, memory):
        xp = X.__array_namespace__()
        return dLdY * (1 - xp.asarray(Y) ** 2)


def test_a_layer_that_round_trips_through_the_host_fails_naming_it(fake_gpu):
    report = layercheck.check_layer(HostRoundTrip, "3,4:CB")
    result = report.result("outputs_stay_on_device")
    assert result.status == "failed"
    assert "NumPy array from CuPy inputs" in result.message and "host" in result.message


class GpuFloat64Leak:
    def predict(self, X):
        xp = X.__array_namespace__()
        return X * xp.asarray(2.0, dtype="float64")


def test_a_float64_leak_on_the_gpu_fails_the_device_type_check(fake_gpu):
    result = layercheck.check_layer(GpuFloat64Leak, "3,4:CB").result("outputs_stay_on_device")
    assert result.status == "failed" and "float64, expected float32" in result.message and "GPU" in result.message


class DiffersOnGpu:
    def predict(self, X):
        xp = X.__array_namespace__()
        return X + (0.5 if xp is not np else 0.0)


def test_a_layer_that_computes_something_else_on_the_gpu_fails_parity(fake_gpu):
    result = layercheck.check_layer(DiffersOnGpu, "3,4:CB").result("predict_is_consistent_on_gpu")
    assert result.status == "failed"
    assert "differs between GPU and CPU" in result.message


def test_device_gpu_runs_the_gradient_check_on_the_gpu(fake_gpu):
    obj = load_layer(SAMPLES / "srelu.py")
    result = layercheck.check_layer(obj, "4,3,5,2:SSCB", device="gpu", checks=[GRADIENTS]).result(GRADIENTS)
    assert result.status == "passed" and result.details["device"] == "gpu"
    assert "on the GPU" in result.message
    buggy = load_layer(SAMPLES / "buggy" / "srelu_swapped.py")
    result = layercheck.check_layer(buggy, "4,3,5,2:SSCB", device="gpu", checks=[GRADIENTS]).result(GRADIENTS)
    assert "the gradients of al and tr are returned in each other's place" in result.message


@pytest.mark.gpu
@pytest.mark.skipif(not REAL_GPU, reason=f"no GPU: {gpu_status().reason}")
def test_on_a_real_gpu_numpy_asarray_on_an_input_fails_naming_the_conversion():
    class CallsNumpy:
        def predict(self, X):
            return np.asarray(X) * 2

    result = layercheck.check_layer(CallsNumpy, "3,4:CB").result("outputs_stay_on_device")
    assert result.status == "failed"
    assert "converts a CuPy array to NumPy" in result.message
