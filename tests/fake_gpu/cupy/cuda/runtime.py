"""The stand-in's CUDA runtime: one device, "Stand-in GPU", with the memory of an H100 (80 GB)."""

from cupy.cuda import memory as _memory

is_hip = False

_TOTAL_MEMORY = 80 * 1024**3
_PROPERTIES = {
    "name": b"Stand-in GPU",
    "totalGlobalMem": _TOTAL_MEMORY,
    "major": 9,
    "minor": 0,
    "multiProcessorCount": 132,
    "warpSize": 32,
    "maxThreadsPerBlock": 1024,
    "sharedMemPerBlock": 49152,
    "pciBusID": 0,
    "pciDeviceID": 0,
    "pciDomainID": 0,
}
_current = 0


class CUDARuntimeError(RuntimeError):
    def __init__(self, status, message):
        self.status = status
        super().__init__(message)


def _check(device):
    if not isinstance(device, int) or not 0 <= device < getDeviceCount():
        raise CUDARuntimeError(101, "cudaErrorInvalidDevice: invalid device ordinal")


def getDeviceCount():
    return 1


def getDevice():
    return _current


def setDevice(device):
    global _current
    _check(device)
    _current = device


def getDeviceProperties(device):
    _check(device)
    return dict(_PROPERTIES)


def memGetInfo():
    return _TOTAL_MEMORY - _memory._default_pool.total_bytes(), _TOTAL_MEMORY


def deviceSynchronize():
    pass


def runtimeGetVersion():
    return 13000


def driverGetVersion():
    return 13000
