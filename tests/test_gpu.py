"""The GPU half: parity and device checks, the engine on the device, layers bound to one device.

Every test that needs CuPy runs twice over the `gpu` fixture: on the stand-in
(tests/fake_gpu, held against the real CuPy by test_fake_cupy.py and test_cupy_refusals.py),
marked `stand_in` and run in a pytest process whose `cupy` is the stand-in (tests/cupy_rooms.py),
which is how CI runs them; and on the real CuPy, marked `gpu` (`pytest -m gpu` on a machine
with a GPU; skipped elsewhere, with the reason).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from conftest import GRADIENTS, REPO, SAMPLES, SEED_LAYOUT, TESTS, declared, layer_files, load_layer, not_ok, run_cli
from cupy_rooms import ROOM, Room

import layercheck
from layercheck import UsageError
from layercheck.checks import REGISTRY
from layercheck.devices import gpu_status
from layercheck.settings.options import Options

GPU_CHECKS = ["predict_is_consistent_on_gpu", "backward_is_consistent_on_gpu", "outputs_stay_on_device"]
# A real GPU only where this process's CuPy is the real one: the stand-in answers "usable" too.
REAL_GPU = ROOM is Room.REAL and gpu_status().usable
CORPUS_GPU = TESTS / "corpus_gpu"
BOUND = CORPUS_GPU / "bound"
STAND_IN = TESTS / "fake_gpu"
NO_GPU_HERE = f"no GPU: {gpu_status().reason}" if ROOM is not Room.STAND_IN else "no real GPU: the stand-in's process"


@pytest.fixture(
    params=[pytest.param("stand-in", marks=pytest.mark.stand_in), pytest.param("real", marks=pytest.mark.gpu)]
)
def gpu(request):
    """CuPy for the test: the stand-in (in its own pytest process, tests/cupy_rooms.py), or the
    real one on a machine with a usable GPU. A process imports one CuPy, once: nothing here
    imports another or drops it from sys.modules."""
    if request.param == "real":
        if not REAL_GPU:
            pytest.skip(NO_GPU_HERE)
        return request.param
    assert ROOM is Room.STAND_IN, f"a stand_in test ran where cupy is {ROOM.value}"
    return request.param


@pytest.fixture
def ledger(gpu):
    """The stand-in's count of host<->device transfers (no such count exists on a real GPU)."""
    if gpu != "stand-in":
        pytest.skip("transfers are counted by the stand-in only")
    import transfer_ledger

    return transfer_ledger


def _layout(obj, small: str | None = None):
    return small or obj.example_layout


# -- without a GPU --------------------------------------------------------------------------------


@pytest.mark.skipif(REAL_GPU, reason="a GPU is usable here")
def test_without_a_gpu_the_gpu_checks_are_skipped_with_the_reason():
    report = layercheck.check_layer(load_layer(SAMPLES / "prelu.py"), "4,3,5,2:SSCB")
    for name in GPU_CHECKS:
        result = report.result(name)
        assert result.status == "skipped"
        assert "CuPy is not installed" in result.message or "no CUDA device" in result.message


@pytest.mark.skipif(REAL_GPU, reason="a GPU is usable here")
def test_the_no_gpu_reason_names_commands_that_work_without_a_package_index():
    # layercheck is installed from a checkout: a hint names CuPy's own packages, with the CUDA
    # libraries (ctk), or the extras of the checkout; never "layercheck[...]" from an index.
    reason = gpu_status().reason
    if "not installed" in reason:
        assert 'pip install "cupy-cuda12x[ctk]"' in reason and 'pip install "cupy-cuda13x[ctk]"' in reason
        assert 'pip install -e ".[cuda12]"' in reason and 'pip install -e ".[cuda13]"' in reason
    assert "layercheck[" not in reason


@pytest.mark.skipif(REAL_GPU, reason="a GPU is usable here")
def test_device_gpu_without_a_gpu_exits_2_with_the_reason():
    proc = run_cli("run", SAMPLES / "prelu.py", "--device", "gpu")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "device gpu was asked for but no GPU is usable" in proc.stderr
    with pytest.raises(UsageError, match="device gpu was asked for"):
        layercheck.check_layer(load_layer(SAMPLES / "prelu.py"), "4,3,5,2:SSCB", device="gpu")


def test_device_cpu_never_imports_cupy():
    code = (
        "import sys, layercheck\n"
        "class Double:\n"
        "    def predict(self, X):\n"
        "        return 2 * X\n"
        "r = layercheck.check_layer(Double, '4,3,5,2:SSCB', device='cpu')\n"
        "assert r.result('outputs_stay_on_device').message == '--device cpu: GPU checks not run'\n"
        "assert 'cupy' not in sys.modules\n"
        "print('ok')\n"
    )
    env = {"PYTHONPATH": str(STAND_IN), "PATH": ""}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.stdout.strip() == "ok", proc.stderr


# -- the samples ----------------------------------------------------------------------------------

SAMPLE_LAYOUTS = {
    "prelu.py": "4,3,5,2:SSCB",
    "srelu.py": "4,3,5,2:SSCB",
    "weighted_addition.py": None,
    "global_average_pooling.py": None,
    "peephole_lstm.py": None,
    "complex_scale.py": None,
    "modrelu.py": None,
}


@pytest.mark.parametrize("name", list(SAMPLE_LAYOUTS))
def test_the_samples_pass_every_gpu_check(name, gpu):
    obj = load_layer(SAMPLES / name)
    report = layercheck.check_layer(obj, SAMPLE_LAYOUTS[name] or obj.example_layout)
    assert not_ok(report) == {}
    for check in GPU_CHECKS:
        assert report.result(check).status in ("passed", "skipped"), (check, report.result(check).message)
    assert report.result("predict_is_consistent_on_gpu").status == "passed"
    assert report.result("outputs_stay_on_device").status == "passed"


@pytest.mark.parametrize("name", list(SAMPLE_LAYOUTS))
def test_the_samples_pass_every_check_on_the_device(name, gpu):
    obj = load_layer(SAMPLES / name)
    report = layercheck.check_layer(obj, SAMPLE_LAYOUTS[name] or obj.example_layout, device="gpu")
    assert not_ok(report) == {}
    assert report.result(GRADIENTS).details["device"] == "gpu"


def test_the_operation_sample_passes_on_the_device(gpu):
    obj = load_layer(SAMPLES / "srelu_function.py")
    for device in ("auto", "gpu"):
        report = layercheck.check_function(obj, obj.example_layout, device=device)
        assert not_ok(report) == {}
        assert [report.result(c).status for c in GPU_CHECKS] == ["passed"] * 3


@pytest.mark.parametrize("name", ["prelu.py", "srelu.py"])
def test_the_samples_pass_on_the_device_at_the_seed_layout(name, gpu):
    if gpu == "stand-in":
        pytest.skip("the seed layout on the stand-in is the transfer-budget test's")
    report = layercheck.check_layer(load_layer(SAMPLES / name), SEED_LAYOUT, device="gpu")
    assert not_ok(report) == {}


BUGGY = {
    "srelu_swapped.py": "the gradients of al and tr are returned in each other's place",
    "weighted_addition_swapped.py": "the gradients of X1 and X2 are returned in each other's place",
    "global_average_pooling_wrong_count.py": "off by a constant factor",
    "complex_scale_no_conj.py": "conj",
    "modrelu_no_conj.py": "conj",
    "srelu_missing_dx.py": None,
    "peephole_lstm_bug.py": None,
}


@pytest.mark.parametrize("name", list(BUGGY))
def test_the_buggy_twins_are_caught_on_the_device_with_the_cpu_diagnosis(name, gpu):
    obj = load_layer(SAMPLES / "buggy" / name)
    dtypes = ["complex128", "complex64"] if "conj" in name else ["float64", "float32"]
    cpu = layercheck.check_layer(obj, obj.example_layout, device="cpu", dtypes=dtypes)
    on_gpu = layercheck.check_layer(obj, obj.example_layout, device="gpu", dtypes=dtypes)
    failed_on_cpu = {c.name for c in cpu.checks if c.status == "failed"}
    assert failed_on_cpu and failed_on_cpu <= {c.name for c in on_gpu.checks if c.status == "failed"}
    result = on_gpu.result(GRADIENTS)
    if BUGGY[name] is not None:
        assert result.status == "failed" and BUGGY[name] in result.message
        assert result.details["device"] == "gpu"


def test_the_seed_port_of_the_srelu_function_is_caught_on_the_device(gpu):
    obj = load_layer(SAMPLES / "buggy" / "srelu_function_seed.py")
    result = layercheck.check_function(obj, obj.example_layout, device="gpu").result(GRADIENTS)
    assert "the gradients of al and tr are returned in each other's place" in result.message


# -- GPU-only bugs and correct lookalikes ---------------------------------------------------------

GPU_CORPUS = [declared(p) for p in layer_files(CORPUS_GPU)]


def test_the_gpu_corpus_is_there():
    assert len([d for d in GPU_CORPUS if d.correct]) >= 2 and len([d for d in GPU_CORPUS if d.must_fail]) >= 7
    for d in GPU_CORPUS:
        assert d.correct != bool(d.must_fail) and all(n in REGISTRY for n in d.must_fail), d.id


@pytest.mark.parametrize("d", GPU_CORPUS, ids=lambda d: d.id)
def test_gpu_only_bugs_are_caught_and_correct_gpu_paths_pass(d, gpu):
    obj = load_layer(d.path)
    report = layercheck.check_layer(obj, obj.example_layout)
    if d.id == "gpu_array_namespace_idiom.py" and not hasattr(np.ndarray, "__array_namespace__"):
        d = type(d)(d.path, False, ("predict_does_not_error",), ())  # NumPy 1.x: fails on the CPU too
    if d.correct:
        assert not_ok(report) == {}
        assert [report.result(c).status for c in GPU_CHECKS] == ["passed"] * 3
        return
    result = report.result(d.must_fail[0])
    assert result.status == "failed", f"{d.id}: {result.status}: {result.message}"
    raised = result.message.startswith(("predict raised", "forward raised", "backward raised"))
    if result.name in ("predict_is_consistent_on_gpu", "backward_is_consistent_on_gpu") and not raised:
        # A value the GPU computed otherwise is typed (`findings.problems.Parity`): its
        # message is rendered from the problem.
        assert result.problem is not None and result.message == result.problem.sentence()
    # The bug is the GPU's: every check of the CPU run passes.
    cpu_checks = [c for c in report.checks if c.name not in GPU_CHECKS]
    if d.must_fail[0] in GPU_CHECKS:
        assert {c.name: c.status for c in cpu_checks if c.status not in ("passed", "skipped")} == {}


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("gpu_array_namespace_idiom.py", ["have no __array_namespace__", "get_array_module(X)"]),
        ("gpu_numpy_asarray.py", ["Implicit conversion to a NumPy array", "converts a CuPy array to NumPy"]),
        ("gpu_numpy_constant.py", ["Unsupported type", "mixes a NumPy array into CuPy arithmetic"]),
        ("gpu_host_round_trip.py", ["NumPy array from CuPy inputs", "get_array_module(X)"]),
        ("gpu_float32_downcast.py", ["float32, expected float64", "on the GPU"]),
    ],
)
def test_gpu_failures_say_what_to_write_instead(name, words, gpu):
    obj = load_layer(CORPUS_GPU / name)
    report = layercheck.check_layer(obj, obj.example_layout, dtypes=["float64"])
    messages = " ".join(c.message for c in report.checks if c.status == "failed")
    for word in words:
        assert word in messages, (word, messages)


def test_the_portability_hint_is_given_only_for_the_errors_it_explains():
    from layercheck.portability import hint_for

    assert hint_for(AttributeError("'ndarray' object has no attribute '__array_namespace__'"))
    assert hint_for(AttributeError("'ndarray' object has no attribute 'namespace'")) is None
    assert hint_for(TypeError("Unsupported type <class 'list'>")) is None
    assert hint_for(ValueError("Implicit conversion to a NumPy array is not allowed")) is None


# -- layers bound to one device -------------------------------------------------------------------


def test_a_layer_bound_to_cupy_is_one_line_on_the_host(gpu):
    obj = load_layer(BOUND / "bound_good.py")
    report = layercheck.check_layer(obj, obj.example_layout)
    assert report.error is not None and not report.checks
    assert "runs only on the GPU" in report.error and "--device gpu" in report.error
    assert "\n" not in report.error


def test_a_layer_bound_to_cupy_is_one_line_from_the_cli(gpu, tmp_path):
    if gpu == "stand-in":
        env = {"PYTHONPATH": str(STAND_IN), "PATH": "", "COLUMNS": "200"}
    else:
        env = None
    proc = run_cli("run", BOUND / "bound_good.py", env=env)
    assert proc.returncode == 1
    report, _, recap = proc.stdout.partition("short summary")
    assert report.count("runs only on the GPU") == 1 and recap.count("runs only on the GPU") == 1, proc.stdout


def test_a_layer_bound_to_cupy_is_checked_whole_on_the_device(gpu):
    obj = load_layer(BOUND / "bound_good.py")
    report = layercheck.check_layer(obj, obj.example_layout, device="gpu")
    assert report.error is None
    assert not_ok(report) == {}
    assert report.result(GRADIENTS).status == "passed" and report.result(GRADIENTS).details["device"] == "gpu"
    parity = report.result("predict_is_consistent_on_gpu")
    assert parity.status == "skipped" and "runs only on the GPU" in parity.message
    assert report.result("outputs_stay_on_device").status == "passed"


def test_a_gradient_bug_of_a_layer_bound_to_cupy_is_caught_on_the_device(gpu):
    obj = load_layer(BOUND / "bound_wrong_gradient.py")
    report = layercheck.check_layer(obj, obj.example_layout, device="gpu")
    result = report.result(GRADIENTS)
    assert result.status == "failed" and "w" in result.message
    assert report.result("predict_does_not_error").status == "passed"


# -- the engine on the device: what crosses the bus -----------------------------------------------

# Bytes that may come back to the host per check: scalars, counts and a few element examples.
DOWNLOAD_BUDGET = 16 * 1024


def _seed_inputs_bytes(dtypes) -> int:
    elements = int(np.prod([int(n) for n in SEED_LAYOUT.split(":")[0].split(",")]))
    return sum(elements * np.dtype(d).itemsize for d in dtypes)


@pytest.mark.parametrize("check", sorted(REGISTRY))
def test_every_check_at_the_seed_layout_keeps_its_arrays_on_the_device(check, ledger):
    """--device gpu: the inputs go up once per dtype (with dL/dY and the CPU's results where a
    check needs them), and only scalars and element examples come back."""
    obj = load_layer(SAMPLES / "srelu.py")
    dtypes = ("float64", "float32")
    with ledger.counting() as moved:
        report = layercheck.check_layer(obj, SEED_LAYOUT, device="gpu", checks=[check], dtypes=list(dtypes))
    assert not_ok(report) == {}
    assert moved.downloaded <= DOWNLOAD_BUDGET, (check, moved.downloaded, _largest(moved.events, "download"))
    # inputs, dL/dY and a CPU result per dtype for the parity checks; the inputs alone otherwise.
    uploads = 3 if check in GPU_CHECKS else 2
    assert moved.uploaded <= uploads * _seed_inputs_bytes(dtypes) + DOWNLOAD_BUDGET, (check, moved.uploaded)


def test_the_gradient_check_uploads_only_its_inputs(ledger):
    """The float64 inputs, and one training step at the first dtype (its inputs and dL/dY),
    which decides whether the layer runs on the GPU at all."""
    obj = load_layer(SAMPLES / "srelu.py")
    with ledger.counting() as moved:
        report = layercheck.check_layer(obj, SEED_LAYOUT, device="gpu", checks=[GRADIENTS])
    assert report.result(GRADIENTS).status == "passed"
    first = Options().dtypes[0]
    budget = _seed_inputs_bytes(["float64"]) + 2 * _seed_inputs_bytes([first]) + 4096
    assert moved.uploaded <= budget, moved.uploaded
    assert moved.downloaded <= 4096, _largest(moved.events, "download")


def test_a_failing_gradient_is_diagnosed_on_the_device(ledger):
    """Localization and element examples: a bounded number of small downloads."""
    obj = load_layer(TESTS / "corpus" / "grad_one_channel.py")
    layout = "12,12,8,16:SSCB"
    with ledger.counting() as moved:
        result = layercheck.check_layer(obj, layout, device="gpu", checks=[GRADIENTS]).result(GRADIENTS)
    assert result.status == "failed" and "channel" in result.message
    assert moved.downloaded <= DOWNLOAD_BUDGET, _largest(moved.events, "download")


def test_a_failing_gradient_of_a_large_batch_is_localized_on_a_sub_batch_on_the_device(ledger):
    """Issue 38: the sub-batch is cut on the device, and what it found proven there too."""
    obj = load_layer(TESTS / "corpus" / "grad_one_channel.py")
    with ledger.counting() as moved:
        result = layercheck.check_layer(obj, "12,12,8,64:SSCB", device="gpu", checks=[GRADIENTS]).result(GRADIENTS)
    assert result.status == "failed" and "channel" in result.message
    (x,) = [r for r in result.details["arguments"] if r.get("diagnosis")]
    assert x["diagnosis"]["sub_batch"] == {"observations": 8, "batch": 64}
    assert moved.downloaded <= DOWNLOAD_BUDGET, _largest(moved.events, "download")


def _largest(events, direction: str):
    chosen = [e for e in events if e.direction == direction]
    return sorted(chosen, key=lambda e: -e.nbytes)[:5]


# -- real GPU only --------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.skipif(not REAL_GPU, reason=f"no GPU: {gpu_status().reason}")
def test_a_cuda_kernel_that_reads_the_wrong_channel_fails_parity():
    import cupy

    kernel = cupy.ElementwiseKernel(
        "T x, raw T alpha, int32 channels, int32 inner",
        "T y",
        "int c = (i / inner) % channels; int wrong = (c + 1) % channels;y = x > 0 ? x : alpha[wrong] * x;",
        "prelu_wrong_channel",
    )

    class KernelPReLU:
        learnables = ("alpha",)

        def __init__(self):
            self.alpha = None

        def initialize(self, layout):
            if self.alpha is None:
                self.alpha = np.random.rand(1, layout.size[1], 1) * 0.5

        def predict(self, X):
            if isinstance(X, cupy.ndarray):
                alpha = cupy.ascontiguousarray(self.alpha.ravel())
                return kernel(X, alpha, X.shape[1], X.shape[2])
            return np.maximum(X, 0) + self.alpha * np.minimum(X, 0)

    result = layercheck.check_layer(KernelPReLU, "4,6,5:BCS", dtypes=["float64"]).result("predict_is_consistent_on_gpu")
    assert result.status == "failed" and "differs between GPU and CPU" in result.message


@pytest.mark.gpu
@pytest.mark.skipif(not REAL_GPU, reason=f"no GPU: {gpu_status().reason}")
def test_the_gpu_benchmark_runs():
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "gpu.py"), "--quick"], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    assert "gradient check / (predict + backward)" in proc.stdout


def test_a_mismatch_prints_as_many_digits_as_it_takes_to_differ():
    from layercheck.numerics.compare import mismatch

    close = mismatch(np.array([-1.5799901], np.float32), np.array([-1.5799899], np.float32), rtol=1e-9)
    assert close is not None
    actual, expected = close.detail().split("is ", 1)[1].split(" (abs diff")[0].split(" instead of ")
    assert actual != expected and float(actual) == pytest.approx(-1.5799901, abs=1e-7)
    far = mismatch(np.array([2.0]), np.array([1.0]))
    assert far is not None and "is 2 instead of 1 " in far.detail()


@pytest.mark.parametrize("name", ["gpu_numpy_asarray.py", "gpu_numpy_constant.py"])
def test_a_layer_that_crashes_on_the_gpu_gets_every_cpu_check_and_one_gpu_failure(name, gpu):
    obj = load_layer(CORPUS_GPU / name)
    report = layercheck.check_layer(obj, obj.example_layout, device="gpu")
    cpu = {
        c.name: c.status for c in report.checks if c.name not in GPU_CHECKS and c.status not in ("passed", "skipped")
    }
    assert cpu == {}, not_ok(report)
    assert report.result(GRADIENTS).status == "passed"
    statuses = [report.result(c).status for c in GPU_CHECKS]
    assert statuses.count("failed") == 1, not_ok(report)
    assert report.result("predict_is_consistent_on_gpu").status == "failed"
    for check in GPU_CHECKS[1:]:
        result = report.result(check)
        assert result.status in ("passed", "incomplete")
        if result.status == "incomplete":
            assert "see predict_is_consistent_on_gpu" in result.message


# -- the rooms users live in: no CuPy, the real CuPy without a GPU, the stand-in, a GPU ----------

ROOMS_CORPUS = CORPUS_GPU / "rooms"


def _initialize_failure_is_reported_as_initializes():
    obj = load_layer(ROOMS_CORPUS / "init_raises_guarded.py")
    report = layercheck.check_layer(obj, obj.example_layout)
    assert report.error is None, report.error
    result = report.result("initialize_does_not_error")
    assert result.status == "failed" and "no weights file" in result.message, result.message
    assert "internal error" not in str(report)


def test_an_initialize_that_raises_is_its_own_failure_in_this_processs_room():
    """No CuPy, or the real one (imported by the module: the session's GPU-binding probe runs)."""
    _initialize_failure_is_reported_as_initializes()


def test_an_initialize_that_raises_is_its_own_failure_where_cupy_computes(gpu):
    _initialize_failure_is_reported_as_initializes()


def test_a_layer_bound_to_cupy_at_construction_is_checked_or_told_why_not_in_this_processs_room():
    """Without CuPy the module takes NumPy and the layer passes; with the real CuPy and no usable
    GPU, constructing it raises CuPy's CUDA error: the target could not be checked, and the one
    line names the layer's line and why no GPU is usable, never an internal error."""
    obj = load_layer(ROOMS_CORPUS / "bound_at_construction.py")
    report = layercheck.check_layer(obj, obj.example_layout)
    if ROOM is Room.REAL and not REAL_GPU:
        assert report.error is not None and report.error.startswith("constructing BoundScale raised CUDA"), report.error
        assert "(bound_at_construction.py:16 in __init__)" in report.error
        assert f"the layer calls CuPy on the GPU, and no GPU is usable here: {gpu_status().reason}" in report.error
        assert "internal error" not in str(report)
    else:
        assert report.error is None and report.ok, str(report)


def test_a_numpy_error_is_never_said_to_need_a_gpu():
    """The no-device hint is for CuPy's CUDA errors only: a lookalike message from elsewhere gets none."""

    class CUDARuntimeError(RuntimeError):
        pass

    from layercheck.devices import no_device_hint

    assert no_device_hint(CUDARuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient")) is None
    assert no_device_hint(np.linalg.LinAlgError("Singular matrix")) is None


@pytest.mark.parametrize(
    "path", [BOUND / "bound_good.py", ROOMS_CORPUS / "bound_in_predict.py"], ids=["in initialize", "in predict"]
)
def test_a_correct_layer_bound_to_cupy_is_never_failed_where_no_gpu_is_usable(path):
    """The real CuPy without a usable GPU raises a CUDA error in the layer's initialize or
    predict: one target error saying the layer runs only on the GPU and why none is usable
    (no failed check of a layer that may be right). Without CuPy the layer takes NumPy."""
    obj = load_layer(path)
    report = layercheck.check_layer(obj, obj.example_layout)
    if ROOM is Room.NONE:
        assert report.error is None and report.ok, str(report)
    elif ROOM is Room.REAL and not REAL_GPU:
        assert report.error is not None and not report.checks, str(report)
        assert "runs only on the GPU" in report.error and "calls CuPy on the GPU (" in report.error
        assert f"no GPU is usable here ({gpu_status().reason})" in report.error and "\n" not in report.error
    else:
        pytest.skip("a usable GPU: tests/test_gpu.py's bound-layer tests check it there")


def test_an_exception_class_with_an_odd_module_is_no_cuda_error():
    from layercheck.devices import no_device_hint
    from layercheck.portability import is_cuda_error

    class Meta(type):
        @property
        def __module__(cls):
            raise RuntimeError("no module for you")

    class Odd(Exception, metaclass=Meta):
        pass

    class NotText(Exception):
        pass

    NotText.__module__ = 12  # type: ignore[assignment]
    for exc in (Odd("x"), NotText("y")):
        assert is_cuda_error(exc) is False and no_device_hint(exc) is None
