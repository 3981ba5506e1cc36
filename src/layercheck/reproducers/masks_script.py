"""An operation whose backward does not respect compute_gradients, reproduced: written by
`layercheck run --repro` for one failed backward_respects_compute_gradients. A regression test
to keep.

    python THIS_FILE.py    exit status 1 while a masked backward is wrong, 0 once none is
    pytest THIS_FILE.py    the same, as the test `test_reproduce`

It needs NumPy (CuPy for a check that ran on the GPU) and the operation's module, nothing of
layercheck. The data is THIS_FILE.npz beside it: the inputs and the loss gradients dL/dY as
layercheck gave them.

What it does: forward then backward with every differentiable input's gradient requested
(the reference), then, on a fresh operation each, with one differentiable input requested at a
time and with every one again. Each call must return a gradient for exactly the requested
inputs (None for the others), equal to the reference's within 16 ulps of its largest value.
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


def gradients(saved: Saved, mask: tuple[bool, ...] | None) -> list[Any]:
    """forward, then backward asked for the gradients of `mask`, on a fresh operation."""
    obj, xs, _ = saved.built()
    ys, _, memory = saved.forward(obj, xs)
    dLdY = [
        saved.array(f"w{j}").astype(y.dtype) if hasattr(y, "dtype") else saved.array(f"w{j}") for j, y in enumerate(ys)
    ]
    return saved.backward(obj, xs, ys, dLdY, [], memory, mask)


def problems(names: list[str], mask: tuple[bool, ...], got: list[Any], reference: list[Any]) -> list[str]:
    wrong = []
    for name, wanted, g, full in zip(names, mask, got, reference):
        if not wanted and g is not None:
            wrong.append(f"returned a gradient for {name}, which was not requested (it must return None there)")
        elif wanted and g is None:
            wrong.append(f"returned None for {name}, which was requested")
        elif wanted and (not hasattr(g, "shape") or not hasattr(full, "shape") or g.shape != full.shape):
            wrong.append(
                f"returned {getattr(g, 'shape', type(g).__name__)} for {name}; with every gradient requested "
                f"it returns {getattr(full, 'shape', type(full).__name__)}"
            )
        elif wanted:
            found = differs(g, full, 0.0, repeat_tolerance(full))
            if found is not None:
                wrong.append(
                    f"returned a gradient for {name} that differs from the one with every gradient requested at "
                    f"{found['count']} of {found['size']} elements; at {index_text(found['index'])}: "
                    f"{number(found['actual'])} instead of {number(found['expected'])}"
                )
    return wrong


def reproduce(out: Any = None) -> int:
    """Call backward with each mask and compare: 1 while a call is wrong, else 0."""
    out = out or sys.stdout
    saved = Saved(__file__, MODULE_PATH, MODULE_PATH_IS_RELATIVE, TARGET_NAME, CONSTRUCTOR_ARGS)
    meta = saved.meta
    names, differentiable = list(meta["names"]), tuple(meta["differentiable"])
    print(f"reproducing {meta['check']} of {TARGET_LABEL}", file=out)
    print(f"  forward and backward with {meta['dtype']} inputs, seed {meta['seed']}", file=out)
    reference = gradients(saved, differentiable)
    wrong = [
        f"with compute_gradients={differentiable}, backward returned no gradient for {name}"
        for name, g, d in zip(names, reference, differentiable)
        if d and not hasattr(g, "shape")
    ]
    if not wrong:
        n = len(names)
        masks = [tuple(j == i for j in range(n)) for i in range(n) if differentiable[i]] + [differentiable]
        for mask in masks:
            wrong += [
                f"with compute_gradients={mask}, backward {p}"
                for p in problems(names, mask, gradients(saved, mask), reference)
            ]
    for line in wrong:
        print(f"  {line}", file=out)
    return finish(
        wrong,
        "backward does not respect compute_gradients",
        "backward returns exactly the requested gradients, equal to those of the all-True call",
        out,
    )


def test_reproduce() -> None:
    """For pytest: fails while a masked backward is wrong."""
    import io

    out = io.StringIO()
    assert reproduce(out) == 0, out.getvalue()


if __name__ == "__main__":
    sys.exit(reproduce())
