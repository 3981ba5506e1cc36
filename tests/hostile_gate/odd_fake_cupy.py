r"""Error|Passed: sys\.modules\[.cupy.\]"""

# Without CuPy installed: an error, since the module in memory is not CuPy ("sys.modules['cupy'] holds a
# module made in memory ..."). With the real CuPy, which layercheck imports before the module:
# the layer is checked with the CuPy layercheck imported, the original put back in sys.modules
# (a note with -v: judged by effect, issue 36), and its right layer passes.

import sys
import types

import numpy as np

# A stand-in whose arrays are NumPy's: layercheck must not take NumPy arrays for CuPy's (and
# call `.get()` on them), nor run its GPU checks on it.
fake = types.ModuleType("cupy")
fake.ndarray = np.ndarray
fake.get_array_module = lambda *arrays: np
fake.asarray = np.asarray
sys.modules["cupy"] = fake


class FakeCupy:
    example_layout = "4,3,2:SCB"

    def predict(self, X):
        return 2 * X
