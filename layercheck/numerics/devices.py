"""The GPU backend: whether CuPy and a CUDA device are usable, and moving arrays there.

Nothing here imports CuPy until a GPU is asked about, so `--device cpu` never touches it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from layercheck.errors import UsageError

__all__ = ["GpuStatus", "INSTALL_HINT", "gpu_status", "require_usable_gpu"]

INSTALL_HINT = (
    'CuPy is not installed (pip install "layercheck[cuda12]" or "layercheck[cuda13]", '
    "for the CUDA major version nvidia-smi reports)"
)


@dataclass(frozen=True)
class GpuStatus:
    usable: bool
    reason: str  # why not, when not usable; the device's name when usable
    module: Any = None


@functools.lru_cache(maxsize=1)
def gpu_status() -> GpuStatus:
    """CuPy importable and a CUDA device that can allocate, or the reason there is none."""
    try:
        import cupy  # noqa: PLC0415 - optional dependency
    except ImportError:
        return GpuStatus(False, INSTALL_HINT)
    except Exception as exc:  # a broken CuPy install raises at import
        return GpuStatus(False, f"CuPy cannot be imported: {type(exc).__name__}: {exc}")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CUDA driver missing or too old
        return GpuStatus(False, f"no CUDA device found ({type(exc).__name__}: {exc})")
    if count == 0:
        return GpuStatus(False, "no CUDA device found")
    try:
        cupy.zeros(1).sum().item()
        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        name = props["name"].decode() if isinstance(props.get("name"), bytes) else str(props.get("name", "GPU"))
    except Exception as exc:
        return GpuStatus(False, f"the CUDA device is not usable ({type(exc).__name__}: {exc})")
    return GpuStatus(True, f"{name}, CuPy {cupy.__version__}", cupy)


def require_usable_gpu() -> Any:
    """The CuPy module for `--device gpu`; a usage error (exit 2) with the reason otherwise."""
    status = gpu_status()
    if not status.usable:
        raise UsageError(f"device gpu was asked for but no GPU is usable: {status.reason}")
    return status.module
