"""What a report records of the machine it was made on (DESIGN.md section 10), so that a
failure on a CI machine can be compared with one on a laptop: Python, NumPy and its BLAS,
CuPy and CUDA, the device, the seeds, and the environment variables that change numerics.

Low in the layering (it imports neither the checks nor the running): a report reads it back
with `Environment.from_dict`, and a batch run collects it with `collect` in the parent
process, whose interpreter, libraries and variables are the workers' (they are started from
it and inherit its environment).

CuPy's version comes from the installed distribution's metadata, which imports nothing, so a
CPU-only run never imports CuPy; CUDA's versions and the GPU's name are read where a run may
use the GPU (`--device gpu` or `auto`) through the probe the caller hands in (the batch runner
hands in `devices.gpu_status`, the probe the workers use, once per process): this
module sits below the numerics, which the reports it is part of describe.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import platform
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from layercheck.safetext import NAME_LIMIT, bounded, encodable
from layercheck.version import __version__

__all__ = ["NUMERIC_VARIABLES", "Environment", "collect"]

# Variables that change what the numerics compute: TF32 matrix products on the GPU (CuPy's
# switch and the driver's override), CuPy's reduction back ends (another summation order),
# and the BLAS threads (another summation order in matrix products).
NUMERIC_VARIABLES = (
    "CUPY_TF32",
    "NVIDIA_TF32_OVERRIDE",
    "CUPY_ACCELERATORS",
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
)
_TEXT = ("layercheck", "python", "platform", "numpy", "gpu_reason")
_OPTIONAL_TEXT = ("blas", "cupy", "cuda_runtime", "cuda_driver", "gpu")
_MAX_SEEDS = 1_000  # a config names a few seeds; more read back is not a report of layercheck's


@dataclass(frozen=True)
class Environment:
    """The environment of a run. None where a thing is absent or was not asked about: `cupy`
    when it is not installed, `cuda_*` and `gpu` when no GPU was usable or asked for (then
    `gpu_reason` says why), a variable that is not set."""

    layercheck: str = __version__
    python: str = ""
    platform: str = ""
    numpy: str = ""
    blas: str | None = None
    cupy: str | None = None
    cuda_runtime: str | None = None
    cuda_driver: str | None = None
    gpu: str | None = None
    gpu_reason: str = ""
    devices: tuple[str, ...] = ()  # the --device settings of the targets (cpu, gpu, auto)
    seeds: tuple[int, ...] = ()  # the seeds of the targets
    variables: Mapping[str, str | None] = field(default_factory=dict)

    def items(self) -> list[tuple[str, str]]:
        """(name, value) to show, in the order of the fields; what is absent said in words."""
        if self.gpu is not None:
            gpu, no_cuda = self.gpu, "unknown"
        else:
            gpu, no_cuda = f"none ({self.gpu_reason})" if self.gpu_reason else "none", "not read (no GPU used)"
        shown = [
            ("layercheck", self.layercheck),
            ("python", self.python),
            ("platform", self.platform),
            ("numpy", self.numpy),
            ("blas", self.blas or "unknown"),
            ("cupy", self.cupy or "not installed"),
            ("cuda_runtime", self.cuda_runtime or no_cuda),
            ("cuda_driver", self.cuda_driver or no_cuda),
            ("gpu", gpu),
            ("device", ", ".join(self.devices)),
            ("seed", ", ".join(str(seed) for seed in self.seeds)),
        ]
        shown += [(name, "unset" if value is None else value) for name, value in self.variables.items()]
        return shown

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        data["devices"], data["seeds"], data["variables"] = list(self.devices), list(self.seeds), dict(self.variables)
        return data

    @classmethod
    def from_dict(cls, data: Any) -> Environment:
        """The inverse of `to_dict`, for a report read back (a file another machine wrote).

        Raises:
            ValueError: one line that says what does not fit.
        """
        if type(data) is not dict:
            raise ValueError("is not a mapping")
        known = {f.name for f in fields(cls)}
        unknown = sorted(str(key)[:40] for key in data if key not in known)
        if unknown:
            raise ValueError(f"has unknown field(s) {', '.join(unknown[:5])}")
        text: dict[str, Any] = {}
        for name in _TEXT + _OPTIONAL_TEXT:
            if name not in data:
                continue  # the dataclass's default: a report of an older layercheck lacks it
            value = data[name]
            if type(value) is not str and not (value is None and name in _OPTIONAL_TEXT):
                raise ValueError(f"field {name} is {'null' if value is None else type(value).__name__}, not a string")
            text[name] = _bounded(value)
        devices = data.get("devices", [])
        if type(devices) is not list or len(devices) > _MAX_SEEDS or any(type(d) is not str for d in devices):
            raise ValueError("field devices is not a list of strings")
        seeds = data.get("seeds", [])
        if type(seeds) is not list or len(seeds) > _MAX_SEEDS or any(type(s) is not int for s in seeds):
            raise ValueError("field seeds is not a list of integers")
        variables = data.get("variables", {})
        if type(variables) is not dict or len(variables) > _MAX_SEEDS:
            raise ValueError("field variables is not a mapping")
        for key, value in variables.items():
            if type(key) is not str or (value is not None and type(value) is not str):
                raise ValueError("field variables does not map names to strings")
        return cls(
            **text,
            devices=tuple(_bounded(d) or "" for d in devices),
            seeds=tuple(seeds),
            variables={_bounded(k) or "": _bounded(v) for k, v in variables.items()},
        )


def _bounded(value: str | None) -> str | None:
    return None if value is None else encodable(bounded(value, NAME_LIMIT))


def collect(
    seeds: Iterable[int] = (), devices: Iterable[str] = (), *, gpu_probe: Callable[[], Any] | None
) -> Environment:
    """This process's environment, for a run of targets with these seeds and --device settings.

    The GPU is asked about (`gpu_probe()`, a `devices.GpuStatus`: CuPy imported, the
    device probed) only when a device setting is not `cpu` and CuPy is installed; None for a
    run that was interrupted: it stops now, not after importing CuPy.
    """
    devices = tuple(sorted(set(devices)))
    gpu = cuda_runtime = cuda_driver = None
    if devices and all(device == "cpu" for device in devices):
        reason = "not asked for (--device cpu)"
    elif gpu_probe is None:
        reason = "not read (the run was interrupted)"
    elif not _cupy_importable():
        reason = "CuPy is not installed"
    else:
        status = gpu_probe()
        if status.usable:
            gpu, reason = status.reason, ""
            cuda_runtime, cuda_driver = _cuda_versions(status.module)
        else:
            reason = status.reason
    return Environment(
        python=f"{platform.python_version()} ({platform.python_implementation()})",
        platform=platform.platform(terse=True),
        numpy=np.__version__,
        blas=_blas(),
        cupy=_cupy_version(),
        cuda_runtime=cuda_runtime,
        cuda_driver=cuda_driver,
        gpu=_bounded(gpu),
        gpu_reason=_bounded(reason) or "",
        devices=devices,
        seeds=tuple(sorted(set(seeds))),
        variables={name: _bounded(os.environ.get(name)) for name in NUMERIC_VARIABLES},
    )


def _cupy_importable() -> bool:
    """Whether `import cupy` would find something, without importing it."""
    try:
        return importlib.util.find_spec("cupy") is not None
    except ValueError:  # a module in sys.modules without a spec (put there by hand)
        return True


def _cuda_versions(cupy: Any) -> tuple[str | None, str | None]:
    """CUDA's runtime (the one CuPy was built with) and driver versions, as `12.8`."""

    def version(read: Any) -> str | None:
        try:
            number = int(read())
        except Exception:  # a CuPy-like module without the call, or a driver that refuses it
            return None
        return f"{number // 1000}.{number % 1000 // 10}"

    runtime = getattr(getattr(getattr(cupy, "cuda", None), "runtime", None), "runtimeGetVersion", None)
    driver = getattr(getattr(getattr(cupy, "cuda", None), "runtime", None), "driverGetVersion", None)
    return version(runtime), version(driver)


def _cupy_version() -> str | None:
    """The version of the distribution that installs `cupy` (cupy-cuda12x, cupy...), read from
    its metadata without importing it; else that of a module already imported (a CuPy on the
    path that no distribution installed); None when there is no `cupy` to import."""
    if not _cupy_importable():
        return None
    try:
        found = _cupy_distribution()
        if found is not None:
            return f"{found.version} ({found.metadata['Name']})"
    except Exception:  # a broken distribution's metadata: what the module says, if imported
        pass
    module = sys.modules.get("cupy")
    version = getattr(module, "__version__", None) if module is not None else None
    return _bounded(version) if isinstance(version, str) else "unknown version (no distribution installed it)"


def _cupy_distribution() -> importlib.metadata.Distribution | None:
    """The distribution that installed the `cupy` an import would find, among those of its
    folder: the one whose `top_level.txt` names it (setuptools writes one, and CuPy's wheels
    are built with it: milliseconds), else whose list of files holds it (each one's RECORD
    read: `packages_distributions` reads them all, half a second in a large environment, on
    every run where CuPy is installed). None where no distribution installed it."""
    try:
        spec = importlib.util.find_spec("cupy")
    except ValueError:  # a module in sys.modules without a spec (put there by hand)
        return None
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    if not locations:
        return None
    folder = os.path.dirname(os.path.abspath(locations[0]))
    installed = list(importlib.metadata.distributions(path=[folder]))
    for dist in installed:
        top = dist.read_text("top_level.txt")
        if top is not None and "cupy" in top.split():
            return dist
    for dist in installed:
        if any(file.parts[:1] == ("cupy",) for file in dist.files or ()):
            return dist
    return None


def _blas() -> str | None:
    """NumPy's BLAS as its build recorded it: name and version (NumPy >= 1.26, Meson builds),
    else the library's name (the distutils builds of older NumPy)."""
    config = getattr(np, "__config__", None)
    info = getattr(config, "CONFIG", None)
    if isinstance(info, Mapping):
        blas = (info.get("Build Dependencies") or {}).get("blas") or {}
        if isinstance(blas, Mapping) and blas.get("name"):
            return " ".join(str(blas[key]) for key in ("name", "version") if blas.get(key))
    get_info = getattr(config, "get_info", None)
    if callable(get_info):
        for name in ("blas_ilp64_opt", "blas_opt"):
            libraries = (get_info(name) or {}).get("libraries")
            if libraries:
                return str(libraries[0])
    return None
