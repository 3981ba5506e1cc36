"""A layer that changes the dtype or the array type, reproduced: written by `layercheck run
--repro` for one failed predict_is_consistent_in_type, forward_is_consistent_in_type,
backward_is_consistent_in_type or outputs_stay_on_device (on the GPU). A regression test to keep.

    python THIS_FILE.py    exit status 1 while a result has another dtype, 0 once none has
    pytest THIS_FILE.py    the same, as the test `test_reproduce`

It needs NumPy (CuPy for a check that ran on the GPU) and the layer's module, nothing of
layercheck. The data is THIS_FILE.npz beside it: every input, learnable and state at the dtype
where the check failed, and for backward the loss gradients dL/dY and dL/dS_out.

What it checks: each output of predict or forward is an array of the inputs' array module at
the tested precision (complex of that precision only where an input or a learnable is
complex); each gradient from backward has its argument's dtype and array module (its array
module alone for outputs_stay_on_device, which leaves dtypes of gradients to the CPU's check).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

# >>> the target (written by layercheck)
MODULE_PATH = "layer.py"
MODULE_PATH_IS_RELATIVE = True
TARGET_NAME = "Layer"
CONSTRUCTOR_ARGS = "{}"
TARGET_LABEL = "layer.py"
# <<< the target

# >>> the harness (written by layercheck)
from layercheck.reproducers.harness_script import Saved, finish  # noqa: E402 - replaced by the code

# <<< the harness


def problem(name: str, value: Any, expected: np.dtype[Any] | None, module: Any) -> str | None:
    """What is wrong with the type of `value`, or None."""
    if not hasattr(value, "dtype") or not hasattr(value, "shape"):
        return f"{name} is {type(value).__name__}, not an array"
    if not isinstance(value, module.ndarray):
        return (
            f"{name} is a {type(value).__module__}.{type(value).__name__} but the inputs were {module.__name__} arrays"
        )
    if expected is not None and np.dtype(value.dtype) != expected:
        return f"{name} is {value.dtype}, expected {expected}"
    return None


def reproduce(out: Any = None) -> int:
    """Call the method and check the type of what it returns: 1 while one is wrong, else 0."""
    out = out or sys.stdout
    saved = Saved(__file__, MODULE_PATH, MODULE_PATH_IS_RELATIVE, TARGET_NAME, CONSTRUCTOR_ARGS)
    meta, method = saved.meta, saved.meta["method"]
    precision = np.dtype(meta["precision"])
    print(f"reproducing {meta['check']} of {TARGET_LABEL}", file=out)
    print(f"  {method} with {meta['dtype']} inputs, seed {meta['seed']}", file=out)
    obj, xs, arguments = saved.built()
    checked: list[tuple[str, Any, np.dtype[Any] | None]] = []
    if method == "backward":
        dLdY = [saved.array(f"w{j}") for j in range(saved.n_out)]
        dLdS = [saved.array(f"w{saved.n_out + j}") for j in range(len(meta["state"]))]
        gradients = saved.trained(obj, xs, dLdY, dLdS)
        for name, g, argument, integer in zip(meta["gradient_names"], gradients, arguments, meta["integer_arguments"]):
            if g is not None and not integer:
                expected = np.dtype(argument.dtype) if meta.get("check_dtypes", True) else None
                checked.append((f"gradient {meta.get('gradient_labels', {}).get(name, 'dLd' + name)}", g, expected))
    else:
        ys, states = saved.predict(obj, xs) if method == "predict" else saved.forward(obj, xs)[:2]
        names = list(meta["outputs"]) + list(meta["state"])
        for name, y in zip(names, ys + states):
            complex_ok = meta["complex_allowed"] and hasattr(y, "dtype") and np.dtype(y.dtype).kind == "c"
            checked.append(
                (f"{method} output {name}", y, np.result_type(precision, np.complex64) if complex_ok else precision)
            )
    wrong = [p for name, value, dtype in checked if (p := problem(name, value, dtype, saved.xp))]
    for line in wrong:
        print(f"  {line}", file=out)
    return finish(
        wrong, "a result has another type", f"every result of {method} keeps the tested dtype and array type", out
    )


def test_reproduce() -> None:
    """For pytest: fails while a result has another dtype or array type."""
    import io

    out = io.StringIO()
    assert reproduce(out) == 0, out.getvalue()


if __name__ == "__main__":
    sys.exit(reproduce())
