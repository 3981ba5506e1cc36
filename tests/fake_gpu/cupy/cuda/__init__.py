"""The stand-in's `cupy.cuda`: one device (`Device`, `runtime`) and the memory pools."""

from cupy.cuda import device, memory, runtime  # noqa: F401
from cupy.cuda.device import Device, get_device_id  # noqa: F401
from cupy.cuda.memory import MemoryPool, PinnedMemoryPool  # noqa: F401


def is_available():
    return runtime.getDeviceCount() > 0
