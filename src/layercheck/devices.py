"""The GPU backend: whether CuPy and a CUDA device are usable, and moving arrays there.

Nothing here imports CuPy until a GPU is asked about, so `--device cpu` never touches it.

Usable means what the engine does works: allocating on the device, running an elementwise
kernel (CuPy compiles its kernels with NVRTC) and drawing random numbers with cuRAND (the
engine's loss weights and directions on the GPU come from `cupy.random.RandomState`:
`numerics.arrays._device_state`). CuPy 14 loads NVRTC and cuRAND only when first used, from
a CUDA toolkit or from the `nvidia-*` wheels of its `ctk` extra; a machine with only the
driver has neither, so each is tried here, and a missing one is named with what to install.

Every hint is a command that works wherever layercheck came from (a checkout, a wheel): it
names CuPy's own package, not a layercheck extra (layercheck is not on a package index).
"""

from __future__ import annotations

import functools
import importlib.metadata
import re
from dataclasses import dataclass
from typing import Any

from layercheck import cupyref
from layercheck.errors import UsageError
from layercheck.portability import is_cuda_error

__all__ = [
    "GpuStatus",
    "INSTALL_HINT",
    "cuda_major",
    "gpu_status",
    "no_device_hint",
    "probe",
    "require_usable_gpu",
    "toolkit_hint",
]

INSTALL_HINT = (
    'CuPy is not installed: pip install "cupy-cuda12x[ctk]" or pip install "cupy-cuda13x[ctk]", for the '
    'CUDA major version nvidia-smi reports (in a layercheck checkout: pip install -e ".[cuda12]" or '
    'pip install -e ".[cuda13]")'
)

_DETAIL_LIMIT = 240  # characters of an exception's text in a reason: CuPy's compile errors hold the source
# How a shared library that cannot be found or loaded reads, CuPy 13 (dlopen's OSError, often
# wrapped in a RuntimeError) and CuPy 14 (cuda-pathfinder's DynamicLibNotFoundError, or an
# ImportError from `cupy.cuda.curand`).
_UNLOADABLE = re.compile(
    r"cannot open shared object|Failure finding|failed to load|lib\w+\.so|\w+\.dll\b", re.IGNORECASE
)


@dataclass(frozen=True)
class GpuStatus:
    usable: bool
    reason: str  # why not, when not usable; the device's name when usable
    module: Any = None


@functools.lru_cache(maxsize=1)
def gpu_status() -> GpuStatus:
    """CuPy importable and a CUDA device that can allocate, run a kernel and draw random
    numbers, or the reason there is none. Once per process: a few milliseconds once CuPy's
    kernel cache holds the probe's kernels."""
    try:
        import cupy  # noqa: PLC0415 - optional dependency
    except ImportError as exc:
        if isinstance(exc, ModuleNotFoundError) and exc.name == "cupy":
            return GpuStatus(False, INSTALL_HINT)
        return GpuStatus(False, f"CuPy cannot be imported: {_detail(exc)}")  # a library it needs is missing
    except Exception as exc:  # a broken CuPy install raises at import
        return GpuStatus(False, f"CuPy cannot be imported: {_detail(exc)}")
    fake = cupyref.fake_cupy()
    if fake is not None:  # `import cupy` handed back what a layer put in sys.modules
        return GpuStatus(False, f"sys.modules['cupy'] {fake}, so it is not CuPy")
    return probe(cupy)


def probe(cupy: Any) -> GpuStatus:
    """What `gpu_status` says of an imported CuPy module (any object shaped like it)."""
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CUDA driver missing or too old
        return GpuStatus(False, f"no CUDA device found ({_driver_note(cupy)}{_detail(exc)})")
    if count == 0:
        return GpuStatus(False, "no CUDA device found")
    try:
        x = cupy.zeros(4)  # a memset: no kernel yet
        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        name = props["name"].decode() if isinstance(props.get("name"), bytes) else str(props.get("name", "GPU"))
    except Exception as exc:
        return GpuStatus(False, f"the CUDA device is not usable ({_detail(exc)})")
    hint = toolkit_hint(cuda_major(cupy), _major(getattr(cupy, "__version__", "")))
    try:
        # Loading the library first: a kernel found in CuPy's on-disk cache would not need NVRTC,
        # but the next kernel (a layer's own operation) does.
        nvrtc = getattr(cupy.cuda, "nvrtc", None)  # a CuPy-like module without kernels has none
        if nvrtc is not None:
            nvrtc.getVersion()
        y = _elementwise(cupy, x)
        if float(y[0]) != 1.0:
            raise RuntimeError(f"2 * 0 + 1 gave {float(y[0])!r}")
    except Exception as exc:
        return GpuStatus(False, _failure("NVRTC", "compile and run a kernel", exc, hint))
    try:
        state = cupy.random.RandomState(1)  # as the engine draws: uniform values, random signs
        u = state.uniform(-1.0, 1.0, (4,))
        signs = state.randint(0, 2, size=(4,)).astype(cupy.float64)
        float((u + signs).sum())
    except Exception as exc:
        return GpuStatus(False, _failure("cuRAND", "draw random numbers", exc, hint))
    return GpuStatus(True, f"{name}, CuPy {getattr(cupy, '__version__', '?')}", cupy)


def _elementwise(cupy: Any, x: Any) -> Any:
    kernel = getattr(cupy, "ElementwiseKernel", None)
    if kernel is None:  # a CuPy-like module without kernels of its own (the tests' stand-in)
        return x * 2.0 + 1.0
    return kernel("float64 x", "float64 y", "y = 2 * x + 1", "layercheck_gpu_probe")(x)


def _driver_note(cupy: Any) -> str:
    """Why the runtime found no device, when the driver's version says: none, or too old."""
    try:
        driver = int(cupy.cuda.runtime.driverGetVersion())
        runtime = int(cupy.cuda.runtime.runtimeGetVersion())
    except Exception:
        return ""
    if driver == 0:
        return "no NVIDIA driver is installed; "
    if driver < runtime:
        return (
            f"the NVIDIA driver supports CUDA up to {_version(driver)}, CuPy was built for CUDA {_version(runtime)}; "
        )
    return ""


def _version(cuda: int) -> str:
    return f"{cuda // 1000}.{cuda % 1000 // 10}"


def cuda_major(cupy: Any) -> int | None:
    """The CUDA major version this CuPy was built for (12 for cupy-cuda12x), or None. The
    runtime is linked into CuPy: its version needs neither a driver nor a device."""
    try:
        return int(cupy.cuda.runtime.runtimeGetVersion()) // 1000
    except Exception:
        pass
    found = set()
    for major in (12, 13):
        try:
            importlib.metadata.version(f"cupy-cuda{major}x")
        except importlib.metadata.PackageNotFoundError:
            continue
        found.add(major)
    return found.pop() if len(found) == 1 else None


def toolkit_hint(cuda: int | None, cupy_major: int | None) -> str:
    """What to install for CuPy's CUDA libraries (cuRAND, NVRTC...), as a command."""
    packages = [f"cupy-cuda{cuda}x"] if cuda is not None else ["cupy-cuda12x", "cupy-cuda13x"]
    if cupy_major is not None and cupy_major < 14:
        # CuPy 13 has no `ctk` extra: it loads the libraries of a CUDA toolkit installed on the system.
        commands = " or ".join(f'pip install "{p}[ctk]>=14"' for p in packages)
        toolkit = "the CUDA toolkit" if cuda is None else f"the CUDA {cuda} toolkit"
        return f"install {toolkit}, or CuPy 14 with the CUDA libraries (it needs NumPy 2): {commands}"
    commands = " or ".join(f'pip install "{p}[ctk]"' for p in packages)
    return f"install the CUDA toolkit libraries: {commands}" + (
        "" if cuda is not None else ", for the CUDA major version nvidia-smi reports"
    )


def _failure(library: str, action: str, exc: Exception, hint: str) -> str:
    detail = _detail(exc)
    if isinstance(exc, (ImportError, OSError)) or "DynamicLib" in type(exc).__name__ or _UNLOADABLE.search(detail):
        return f"CuPy cannot load {library} ({detail}): {hint}"
    reason = f"the CUDA device cannot {action} with {library} ({detail})"
    if "PTX" in detail:
        reason += (
            "; the CUDA libraries are newer than the driver: update the driver, or install those of its CUDA version"
        )
    return reason


def _detail(exc: BaseException) -> str:
    """`Type: first line of the message`, cut: CuPy's compile errors carry the whole source."""
    try:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    except Exception:
        text = ""
    if len(text) > _DETAIL_LIMIT:
        text = text[: _DETAIL_LIMIT - 3] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _major(version: str) -> int | None:
    match = re.match(r"\d+", str(version))
    return int(match.group()) if match else None


def no_device_hint(exc: BaseException) -> str | None:
    """For one of CuPy's CUDA errors raised where no GPU is usable (CuPy installed without a
    driver, a device or its CUDA libraries): that the layer called CuPy on the GPU, and why
    none is usable. Where a GPU is usable the error is the layer's own (out of memory, a bad
    kernel), and there is nothing to add: None."""
    if not is_cuda_error(exc):
        return None
    status = gpu_status()  # CuPy is imported already: the error came from it
    if status.usable:
        return None
    return f"the layer calls CuPy on the GPU, and no GPU is usable here: {status.reason}"


def require_usable_gpu() -> Any:
    """The CuPy module for `--device gpu`; a usage error (exit 2) with the reason otherwise."""
    status = gpu_status()
    if not status.usable:
        raise UsageError(f"device gpu was asked for but no GPU is usable: {status.reason}")
    return status.module
