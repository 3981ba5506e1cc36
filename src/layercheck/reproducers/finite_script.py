"""A layer that returns NaN or infinite values, reproduced: written by `layercheck run --repro`
for one failed outputs_are_finite. A regression test to keep.

    python THIS_FILE.py    exit status 1 while an output holds a NaN or an infinity, 0 once not
    pytest THIS_FILE.py    the same, as the test `test_reproduce`

It needs NumPy (CuPy for a check that ran on the GPU) and the layer's module, nothing of
layercheck. The data is THIS_FILE.npz beside it: every input (inside the layer's declared
input_domain), learnable and state at the dtype where the check failed.
"""

from __future__ import annotations

import sys
from typing import Any

# >>> the target (written by layercheck)
MODULE_PATH = "layer.py"
MODULE_PATH_IS_RELATIVE = True
TARGET_NAME = "Layer"
CONSTRUCTOR_ARGS = "{}"
TARGET_LABEL = "layer.py"
# <<< the target

# >>> the harness (written by layercheck)
from layercheck.reproducers.harness_script import Saved, finish, index_text, module_of, number  # noqa: E402 - replaced by the code

# <<< the harness


def reproduce(out: Any = None) -> int:
    """Call the method and look for non-finite outputs: 1 while there is one, else 0."""
    out = out or sys.stdout
    saved = Saved(__file__, MODULE_PATH, MODULE_PATH_IS_RELATIVE, TARGET_NAME, CONSTRUCTOR_ARGS)
    meta, method = saved.meta, saved.meta["method"]
    print(f"reproducing {meta['check']} of {TARGET_LABEL}", file=out)
    print(f"  {method} with {meta['dtype']} inputs, seed {meta['seed']}", file=out)
    obj, xs, _ = saved.built()
    ys, states = saved.predict(obj, xs) if method == "predict" else saved.forward(obj, xs)[:2]
    wrong = []
    for name, y in zip(list(meta["outputs"]) + list(meta["state"]), ys + states):
        if not hasattr(y, "dtype") or y.dtype.kind not in "fc":
            continue
        xp = module_of(y)
        bad = ~xp.isfinite(y)
        if bool(bad.any()):
            first = tuple(int(i) for i in xp.argwhere(bad)[0].tolist())
            n_nan, n_inf = int(xp.count_nonzero(xp.isnan(y))), int(xp.count_nonzero(xp.isinf(y)))
            at = ", ".join(
                f"{n}{index_text(first)} = {number(x[first])}" for n, x in zip(meta["names"], xs) if x.shape == y.shape
            )
            wrong.append(
                f"output {name} has {n_nan} NaN and {n_inf} infinite value(s) of {y.size}; the first at "
                f"{index_text(first)} is {number(y[first])}" + (f" (where {at})" if at else "")
            )
    for line in wrong:
        print(f"  {line}", file=out)
    return finish(wrong, f"{method} returns values that are not finite", f"every output of {method} is finite", out)


def test_reproduce() -> None:
    """For pytest: fails while an output is not finite."""
    import io

    out = io.StringIO()
    assert reproduce(out) == 0, out.getvalue()


if __name__ == "__main__":
    sys.exit(reproduce())
