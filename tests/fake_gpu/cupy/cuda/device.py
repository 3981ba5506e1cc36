"""The stand-in's `cupy.cuda.Device` (type in module `cupy.cuda.device`, as CuPy's)."""

from cupy.cuda import runtime as _runtime


class Device:
    """A CUDA device of the stand-in (there is one, id 0). As CuPy's: `Device()` is the current
    device, `Device(n)` can be made for any n but fails on use if there is no device n."""

    def __init__(self, device=None):
        self.id = _runtime.getDevice() if device is None else int(device)

    def __int__(self):
        return self.id

    def __enter__(self):
        self._previous = _runtime.getDevice()
        _runtime.setDevice(self.id)
        return self

    def __exit__(self, *args):
        _runtime.setDevice(self._previous)

    def __repr__(self):
        return f"<CUDA Device {self.id:d}>"

    def __eq__(self, other):
        return isinstance(other, Device) and self.id == other.id

    def __ne__(self, other):
        return not self == other

    __hash__ = None

    def use(self):
        _runtime.setDevice(self.id)
        return self

    def synchronize(self):
        _runtime._check(self.id)

    @property
    def compute_capability(self):
        properties = _runtime.getDeviceProperties(self.id)
        return f"{properties['major']:d}{properties['minor']:d}"

    @property
    def mem_info(self):
        _runtime._check(self.id)
        return _runtime.memGetInfo()


def get_device_id():
    return _runtime.getDevice()
