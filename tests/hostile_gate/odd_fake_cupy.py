r"""Error: sys\.modules\['cupy'\] holds a module made in memory, not one imported from a file: layercheck cannot tell CuPy arrays"""

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
