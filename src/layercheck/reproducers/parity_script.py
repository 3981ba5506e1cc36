"""A layer that computes another result on the GPU than on the CPU, reproduced: written by
`layercheck run --repro` for one failed predict_is_consistent_on_gpu or
backward_is_consistent_on_gpu. A regression test to keep.

    python THIS_FILE.py    exit status 1 while the GPU and the CPU disagree, 0 once they agree
    pytest THIS_FILE.py    the same, as the test `test_reproduce`

It needs NumPy, CuPy and a GPU, and the layer's module, nothing of layercheck. The data is
THIS_FILE.npz beside it: every input, learnable and state at the dtype where the check failed,
and for backward the loss gradients dL/dY and dL/dS_out.

What it does: builds the layer twice as layercheck does, gives one NumPy arrays and the other
the same values as CuPy arrays, runs predict (forward for an operation), or forward then
backward, on both, and compares every result of the GPU with the CPU's within rtol * |CPU| +
atol, atol raised to rtol times the largest value of the CPU's result (reductions run in
another order on the GPU).
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
from layercheck.reproducers.harness_script import (  # noqa: E402 - replaced by the code
    Saved,
    differs,
    finish,
    index_text,
    largest,
    number,
)

# <<< the harness


def results(saved: Saved, xp: Any) -> tuple[list[str], list[Any]]:
    """The names and values of what the check compares, computed from arrays of module `xp`."""
    meta = saved.meta
    obj, xs, _ = saved.built(xp)
    if meta["method"] != "backward":
        ys, states = saved.predict(obj, xs)
        return [*meta["outputs"], *(f"updated {s}" for s in meta["state"])], ys + states
    loss = [saved.array(f"w{j}", xp) for j in range(saved.n_out + len(meta["state"]))]
    gradients = saved.trained(obj, xs, loss[: saved.n_out], loss[saved.n_out :])
    return [meta.get("gradient_labels", {}).get(n, "dLd" + n) for n in meta["gradient_names"]], gradients


def reproduce(out: Any = None) -> int:
    """Run on the CPU and on the GPU and compare: 1 while they disagree, else 0."""
    out = out or sys.stdout
    saved = Saved(__file__, MODULE_PATH, MODULE_PATH_IS_RELATIVE, TARGET_NAME, CONSTRUCTOR_ARGS)
    meta, cupy = saved.meta, saved.xp
    what = "forward and backward" if meta["method"] == "backward" else meta["method"]
    print(f"reproducing {meta['check']} of {TARGET_LABEL}", file=out)
    print(f"  {what} with {meta['dtype']} inputs on the CPU and on the GPU, seed {meta['seed']}", file=out)
    names, on_cpu = results(saved, np)
    _, on_gpu = results(saved, cupy)
    rtol = meta["rtol"]
    wrong = []
    for name, c, g in zip(names, on_cpu, on_gpu):
        if c is None and g is None:
            continue
        if not isinstance(g, cupy.ndarray) or tuple(g.shape) != tuple(getattr(c, "shape", ())):
            wrong.append(
                f"{name} is {type(g).__name__} {getattr(g, 'shape', '')} on the GPU, {getattr(c, 'shape', c)} on the CPU"
            )
            continue
        atol = max(meta["atol"], rtol * largest([c]))
        found = differs(g, cupy.asarray(c), rtol, atol)
        if found is not None:
            wrong.append(
                f"{name}{index_text(found['index'])} is {number(found['actual'])} on the GPU and "
                f"{number(found['expected'])} on the CPU (|difference| {found['difference']:.6g}, allowed "
                f"{found['allowed']:.6g}: rtol {rtol:g}, atol {atol:.6g}; {found['count']} of {found['size']} elements differ)"
            )
    print(f"  tolerance: {meta['tolerance_source']}; atol raised to rtol times the largest value compared", file=out)
    for line in wrong:
        print(f"  {line}", file=out)
    return finish(wrong, "the GPU and the CPU disagree", "the GPU gives what the CPU gives, within the tolerance", out)


def test_reproduce() -> None:
    """For pytest: fails while the GPU and the CPU disagree."""
    import io

    out = io.StringIO()
    assert reproduce(out) == 0, out.getvalue()


if __name__ == "__main__":
    sys.exit(reproduce())
