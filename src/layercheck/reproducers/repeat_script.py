"""A layer whose results change from one call to the next, reproduced: written by `layercheck
run --repro` for one failed predict_is_deterministic or backward_is_repeatable. A regression
test to keep.

    python THIS_FILE.py    exit status 1 while two calls disagree, 0 once they agree
    pytest THIS_FILE.py    the same, as the test `test_reproduce`

It needs NumPy (CuPy for a check that ran on the GPU) and the layer's module, nothing of
layercheck. The data is THIS_FILE.npz beside it: every input, learnable and state as layercheck
gave them, and for backward the loss gradients dL/dY and dL/dS_out.

What it does, on one layer object built as layercheck builds it:
  predict_is_deterministic: predict twice on the same inputs;
  backward_is_repeatable:   forward then backward, predict (for a layer), forward then backward
                            again, with the same inputs and dL/dY;
and compares the two results. They may differ by 16 units in the last place of their largest
value (sums that reorder), no more.
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
from layercheck.reproducers.harness_script import Saved, differs, finish, index_text, number, repeat_tolerance  # noqa: E402 - replaced by the code

# <<< the harness


def twice(saved: Saved) -> tuple[list[str], list[Any], list[Any]]:
    """The names of the results, and the results of the first and the second call."""
    meta = saved.meta
    obj, _, _ = saved.built()

    def fresh_inputs() -> list[Any]:  # the same values, new arrays
        return saved.arguments()[: saved.n_in]

    if meta["method"] == "predict":
        names = list(meta["outputs"]) + [f"updated {s}" for s in meta["state"]]
        first = [y.copy() for y in sum(saved.predict(obj, fresh_inputs()), [])]
        second = sum(saved.predict(obj, fresh_inputs()), [])
        return names, first, second
    names = [meta.get("gradient_labels", {}).get(n, "dLd" + n) for n in meta["gradient_names"]]

    def dLdY() -> list[Any]:
        return [saved.array(f"w{j}") for j in range(saved.n_out)]

    def dLdS() -> list[Any]:
        return [saved.array(f"w{saved.n_out + j}") for j in range(len(meta["state"]))]

    first = [None if g is None else g.copy() for g in saved.trained(obj, fresh_inputs(), dLdY(), dLdS())]
    if meta["target_kind"] == "layer":
        saved.predict(obj, fresh_inputs())
    second = saved.trained(obj, fresh_inputs(), dLdY(), dLdS())
    return names, first, second


def reproduce(out: Any = None) -> int:
    """Call twice and compare: 1 while the two calls disagree, else 0."""
    out = out or sys.stdout
    saved = Saved(__file__, MODULE_PATH, MODULE_PATH_IS_RELATIVE, TARGET_NAME, CONSTRUCTOR_ARGS)
    meta = saved.meta
    what = "predict" if meta["method"] == "predict" else "forward and backward"
    print(f"reproducing {meta['check']} of {TARGET_LABEL}", file=out)
    print(f"  {what} twice with {meta['dtype']} inputs, seed {meta['seed']}", file=out)
    names, first, second = twice(saved)
    wrong = []
    for name, a, b in zip(names, first, second):
        if a is None and b is None:
            continue
        if not hasattr(a, "shape") or not hasattr(b, "shape") or a.shape != b.shape:
            wrong.append(f"{name} is {getattr(a, 'shape', a)} the first time and {getattr(b, 'shape', b)} the second")
            continue
        found = differs(b, a, 0.0, repeat_tolerance(a))
        if found is not None:
            wrong.append(
                f"{name} differs at {found['count']} of {found['size']} elements; at {index_text(found['index'])}: "
                f"{number(found['expected'])} the first time, {number(found['actual'])} the second "
                f"(|difference| {found['difference']:.6g}, allowed {found['allowed']:.6g}: 16 ulps of the largest value)"
            )
    for line in wrong:
        print(f"  {line}", file=out)
    return finish(wrong, f"two calls of {what} disagree", f"two calls of {what} agree", out)


def test_reproduce() -> None:
    """For pytest: fails while two calls disagree."""
    import io

    out = io.StringIO()
    assert reproduce(out) == 0, out.getvalue()


if __name__ == "__main__":
    sys.exit(reproduce())
