"""What the GPU probe says, without a GPU: `devices.probe` fed module objects shaped like CuPy.

The probe does what the engine does on the device (allocate, run an elementwise kernel that
NVRTC compiles, draw with cuRAND's RandomState), and names what to install when a library
cannot be loaded, for the CUDA major version CuPy was built for. No fake `cupy` goes into
sys.modules: each test hands its object to `probe` directly.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from layercheck import devices
from layercheck.devices import INSTALL_HINT, probe, toolkit_hint

REPO = Path(__file__).resolve().parents[1]


class DynamicLibNotFoundError(RuntimeError):
    """What cuda-pathfinder (CuPy 14) raises for a library it cannot find."""


class CURANDError(RuntimeError):
    pass


def _raise(exc):
    def call(*args, **kwargs):
        raise exc

    return call


class _State:
    def __init__(self, seed):
        self._rs = np.random.RandomState(seed)

    def uniform(self, low, high, size):
        return self._rs.uniform(low, high, size)

    def randint(self, low, high, size):
        return self._rs.randint(low, high, size)


def fake_cupy(
    *,
    devices_found=1,
    runtime=12090,
    driver=12090,
    version="14.2.0",
    count_error=None,
    nvrtc_error=None,
    kernel_error=None,
    random_error=None,
):
    """A module object with what the probe touches, NumPy underneath."""

    def kernel(in_params, out_params, operation, name):
        assert name == "layercheck_gpu_probe"

        def run(x):
            if kernel_error is not None:
                raise kernel_error
            return 2 * x + 1

        return run

    runtime_api = SimpleNamespace(
        getDeviceCount=_raise(count_error) if count_error else (lambda: devices_found),
        getDeviceProperties=lambda device: {"name": b"Fake GPU"},
        runtimeGetVersion=_raise(RuntimeError("no runtime")) if runtime is None else (lambda: runtime),
        driverGetVersion=lambda: driver,
    )
    nvrtc = SimpleNamespace(getVersion=_raise(nvrtc_error) if nvrtc_error else (lambda: (12, 9)))
    random = SimpleNamespace(RandomState=_raise(random_error) if random_error else _State)
    return SimpleNamespace(
        __version__=version,
        cuda=SimpleNamespace(runtime=runtime_api, Device=lambda: SimpleNamespace(id=0), nvrtc=nvrtc),
        zeros=np.zeros,
        float64=np.float64,
        ElementwiseKernel=kernel,
        random=random,
    )


def test_a_working_device_is_usable_and_named():
    cupy = fake_cupy()
    status = probe(cupy)
    assert status.usable and status.module is cupy
    assert status.reason == "Fake GPU, CuPy 14.2.0"


def test_without_a_driver_no_device_is_found_and_the_driver_is_named():
    error = RuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version")
    status = probe(fake_cupy(count_error=error, driver=0))
    assert not status.usable
    assert status.reason.startswith("no CUDA device found (no NVIDIA driver is installed; RuntimeError: cudaErrorIns")


def test_a_driver_older_than_cupys_cuda_is_named_with_both_versions():
    status = probe(fake_cupy(count_error=RuntimeError("cudaErrorInsufficientDriver"), driver=11080, runtime=12090))
    assert "the NVIDIA driver supports CUDA up to 11.8, CuPy was built for CUDA 12.9" in status.reason


def test_no_device():
    assert probe(fake_cupy(devices_found=0)).reason == "no CUDA device found"


@pytest.mark.parametrize("runtime, package", [(12090, "cupy-cuda12x"), (13000, "cupy-cuda13x")])
def test_a_missing_nvrtc_is_named_with_the_package_for_cupys_cuda(runtime, package):
    error = DynamicLibNotFoundError('Failure finding "libnvrtc.so.13 or libnvrtc.so.12": No such file')
    status = probe(fake_cupy(runtime=runtime, nvrtc_error=error))
    assert not status.usable
    assert status.reason == (
        'CuPy cannot load NVRTC (DynamicLibNotFoundError: Failure finding "libnvrtc.so.13 or libnvrtc.so.12": '
        f'No such file): install the CUDA toolkit libraries: pip install "{package}[ctk]"'
    )


def test_a_missing_curand_is_named_with_what_to_install():
    error = ImportError("libcurand.so.10: cannot open shared object file: No such file or directory")
    status = probe(fake_cupy(random_error=error))
    assert status.reason == (
        "CuPy cannot load cuRAND (ImportError: libcurand.so.10: cannot open shared object file: No such file or "
        'directory): install the CUDA toolkit libraries: pip install "cupy-cuda12x[ctk]"'
    )


def test_cupy_13_is_told_of_the_system_toolkit_or_cupy_14():
    error = RuntimeError("CuPy failed to load libnvrtc.so.12: OSError: libnvrtc.so.12: cannot open shared object file")
    status = probe(fake_cupy(version="13.6.0", nvrtc_error=error))
    assert status.reason.startswith("CuPy cannot load NVRTC (RuntimeError: CuPy failed to load libnvrtc.so.12")
    assert status.reason.endswith(
        'install the CUDA 12 toolkit, or CuPy 14 with the CUDA libraries (it needs NumPy 2): pip install "cupy-cuda12x[ctk]>=14"'
    )


def test_an_unknown_cuda_version_names_both_packages(monkeypatch):
    monkeypatch.setattr(
        devices.importlib.metadata, "version", _raise(devices.importlib.metadata.PackageNotFoundError())
    )
    status = probe(fake_cupy(runtime=None, random_error=ImportError("libcurand.so.10: cannot open shared object file")))
    assert status.reason.endswith(
        'pip install "cupy-cuda12x[ctk]" or pip install "cupy-cuda13x[ctk]", for the CUDA major version nvidia-smi reports'
    )


def test_a_failure_that_is_not_a_missing_library_is_said_as_it_is():
    status = probe(fake_cupy(random_error=CURANDError("CURAND_STATUS_INITIALIZATION_FAILED")))
    assert (
        status.reason
        == "the CUDA device cannot draw random numbers with cuRAND (CURANDError: CURAND_STATUS_INITIALIZATION_FAILED)"
    )
    assert "pip install" not in status.reason


def test_a_compile_error_is_cut_to_its_first_line():
    error = RuntimeError("nvrtc: error: invalid value\n" + 'extern "C" __global__ void k() {}\n' * 500)
    status = probe(fake_cupy(kernel_error=error))
    assert (
        status.reason
        == "the CUDA device cannot compile and run a kernel with NVRTC (RuntimeError: nvrtc: error: invalid value)"
    )


def test_a_ptx_too_new_for_the_driver_says_so():
    error = RuntimeError(
        "CUDA_ERROR_UNSUPPORTED_PTX_VERSION: the provided PTX was compiled with an unsupported toolchain."
    )
    assert "update the driver" in probe(fake_cupy(kernel_error=error)).reason


def test_a_wrong_kernel_result_is_not_usable():
    cupy = fake_cupy()
    cupy.ElementwiseKernel = lambda *args: lambda x: x
    assert probe(cupy).reason == (
        "the CUDA device cannot compile and run a kernel with NVRTC (RuntimeError: 2 * 0 + 1 gave 0.0)"
    )


def test_the_install_hint_names_commands_that_work_from_anywhere():
    """layercheck is not on a package index: the hint names CuPy's packages, and the extras of a
    checkout with -e; every extra it names exists in pyproject.toml, with CuPy's ctk."""
    assert "CuPy is not installed" in INSTALL_HINT
    assert "layercheck[" not in INSTALL_HINT
    assert re.findall(r'pip install "(cupy-cuda1[23]x\[ctk\])"', INSTALL_HINT) == [
        "cupy-cuda12x[ctk]",
        "cupy-cuda13x[ctk]",
    ]
    extras = re.findall(r'pip install -e "\.\[(\w+)\]"', INSTALL_HINT)
    assert extras == ["cuda12", "cuda13"]
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    optional = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    for extra in extras:
        (requirement,) = optional[extra]
        assert requirement.startswith(f"cupy-{extra}x[ctk]")


def test_toolkit_hint_for_cupy_14():
    assert toolkit_hint(13, 14) == 'install the CUDA toolkit libraries: pip install "cupy-cuda13x[ctk]"'


def test_the_gpu_probe_is_found_where_the_shared_gpu_procedure_imports_it():
    """shared/tools/gpu-procedure.sh asks `layercheck.numerics.devices` whether a GPU is usable
    (its first step, after which nothing else runs without one): the probe's home moved to
    `layercheck.devices`, and both names are the same objects."""
    from layercheck.numerics.devices import GpuStatus, gpu_status

    assert gpu_status is devices.gpu_status and GpuStatus is devices.GpuStatus
    status = gpu_status()
    assert isinstance(status, GpuStatus) and isinstance(status.reason, str)
