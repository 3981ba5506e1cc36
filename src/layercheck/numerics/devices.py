"""The GPU probe where scripts written before it moved to `layercheck.devices` import it from:
the end-to-end GPU procedure (shared/tools/gpu-procedure.sh) among them. Its home is
`layercheck.devices`; this module only names the same objects."""

from __future__ import annotations

from layercheck.devices import GpuStatus, gpu_status

__all__ = ["GpuStatus", "gpu_status"]
