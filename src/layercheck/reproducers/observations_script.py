"""A layer that mixes observations, reproduced: written by `layercheck run --repro` for one
failed predict_is_consistent_across_observations, forward_is_consistent_across_observations or
backward_is_consistent_across_observations. A regression test to keep.

    python THIS_FILE.py    exit status 1 while an observation gives another result alone than
                           in the batch, 0 once each gives the same
    pytest THIS_FILE.py    the same, as the test `test_reproduce`

It needs NumPy (CuPy for a check that ran on the GPU) and the layer's module, nothing of
layercheck. The data is THIS_FILE.npz beside it: every input, learnable and state as layercheck
gave them, with the observations it checked and the batch axis of each input, output and state.

What it does, as layercheck did: runs predict or forward on the whole batch (a layer
initialized for the layout's size), then each checked observation alone (a layer initialized
for one), and compares each observation's results with its part of the batch's, within
rtol * |batch| + atol, atol raised to rtol times the largest value of the batch's results (the
two sum in another order). For backward: forward then backward on the batch of the checked
observations (a layer initialized for that many), with the batch's dL/dY (each observation
given its part of it); an input's gradient is compared observation by observation, a
learnable's gradient for the batch with the sum of the observations' (atol raised to rtol
times the sum of their magnitudes), each within the tolerance layercheck used for it.
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
from layercheck.reproducers.harness_script import Saved, differs, finish, index_text, largest, number  # noqa: E402 - replaced by the code

# <<< the harness


def take(saved: Saved, x: Any, indices: list[int], axis: int | None) -> Any:
    """The observations `indices` of `x` along its batch axis (all of `x` where it has none)."""
    return x.copy() if axis is None else x.take(saved.xp.asarray(indices), axis=axis)


def run(saved: Saved, indices: list[int], part: int | None = None) -> list[Any]:
    """The outputs and updated states of the method on the observations `indices`; for
    backward the gradients, with the batch's dL/dY (its observation `part` alone, if given)."""
    meta = saved.meta
    obj = saved.fresh([layout.with_batch_size(len(indices)) for layout in saved.layouts])
    arguments = saved.arguments()
    n_learn = len(meta["learnables"])
    states = [take(saved, s, indices, axis) for s, axis in zip(arguments[saved.n_in + n_learn :], meta["state_axes"])]
    saved.set_parameters(obj, arguments[saved.n_in : saved.n_in + n_learn] + states)
    xs = [take(saved, x, indices, axis) for x, axis in zip(arguments[: saved.n_in], meta["input_axes"])]
    if meta["method"] == "predict":
        ys, updated = saved.predict(obj, xs)
        return ys + updated
    if meta["method"] == "forward":
        ys, updated, _ = saved.forward(obj, xs)
        return ys + updated
    axes = meta["result_axes"][: saved.n_out] + meta["state_axes"]
    loss = [saved.array(f"w{j}") for j in range(len(axes))]
    if part is not None:
        loss = [take(saved, d, [part], axis) for d, axis in zip(loss, axes)]
    return saved.trained(obj, xs, loss[: saved.n_out], loss[saved.n_out :])


def compare_gradients(saved: Saved, indices: list[int], batch: list[Any]) -> list[str]:
    """What differs between the batch's gradients and its observations' alone."""
    meta, wrong = saved.meta, []
    sums: list[Any] = [0.0] * len(batch)
    magnitudes: list[Any] = [0.0] * len(batch)
    for k, i in enumerate(indices):
        alone = run(saved, [i], part=k)
        for j, (name, together, single, axis) in enumerate(
            zip(meta["gradient_names"], batch, alone, meta["gradient_axes"])
        ):
            if meta["integer_arguments"][j]:
                continue
            if axis is None:
                sums[j] = sums[j] + single
                magnitudes[j] = magnitudes[j] + abs(single)
                continue
            rtol, atol = meta["gradient_tolerances"][j]
            found = differs(single, take(saved, together, [k], axis), rtol, atol)
            if found is not None:
                at = list(found["index"])
                at[axis] = i
                wrong.append(
                    f"observation {i}: {meta.get('gradient_labels', {}).get(name, 'dLd' + name)}{index_text(tuple(at))} is {number(found['actual'])} alone and "
                    f"{number(found['expected'])} in the batch (|difference| {found['difference']:.6g}, allowed "
                    f"{found['allowed']:.6g}; {found['count']} of {found['size']} elements differ)"
                )
    for j, (name, together, axis) in enumerate(zip(meta["gradient_names"], batch, meta["gradient_axes"])):
        if axis is not None or meta["integer_arguments"][j]:
            continue
        rtol, atol = meta["gradient_tolerances"][j]
        found = differs(together, sums[j], rtol, max(atol, rtol * largest([magnitudes[j]])))
        if found is not None:
            wrong.append(
                f"{meta.get('gradient_labels', {}).get(name, 'dLd' + name)}{index_text(found['index'])} is {number(found['actual'])} for the batch and "
                f"{number(found['expected'])} summed over its observations alone (|difference| "
                f"{found['difference']:.6g}, allowed {found['allowed']:.6g})"
            )
    return wrong


def reproduce(out: Any = None) -> int:
    """Compare the batch with its observations one at a time: 1 while one differs, else 0."""
    out = out or sys.stdout
    saved = Saved(__file__, MODULE_PATH, MODULE_PATH_IS_RELATIVE, TARGET_NAME, CONSTRUCTOR_ARGS)
    meta, method = saved.meta, saved.meta["method"]
    indices = meta["observations"]
    names = list(meta["outputs"]) + [f"updated {s}" for s in meta["state"]]
    print(f"reproducing {meta['check']} of {TARGET_LABEL}", file=out)
    if method == "backward":
        print(
            f"  {method} with {meta['dtype']} inputs, seed {meta['seed']}: a batch of observations {indices}", file=out
        )
        batch = run(saved, indices)
        each = ", ".join(
            f"{meta.get('gradient_labels', {}).get(name, 'dLd' + name)}: rtol {rtol:g}, atol {atol:.6g}"
            for name, (rtol, atol) in zip(meta["gradient_names"], meta["gradient_tolerances"])
        )
        print(
            f"  tolerance: {each} ({meta['tolerance_source']}; atol raised to rtol times the largest gradient)",
            file=out,
        )
        wrong = compare_gradients(saved, indices, batch)
        for line in wrong:
            print(f"  {line}", file=out)
        return finish(
            wrong,
            "the gradients of the batch are not those of its observations alone",
            "each observation's gradients alone are its part of the batch's, within the tolerance",
            out,
        )
    whole = list(range(meta["batch"]))
    print(
        f"  {method} with {meta['dtype']} inputs, seed {meta['seed']}: the batch of {len(whole)}, and observations "
        f"{indices} alone",
        file=out,
    )
    batch = run(saved, whole)
    rtol = meta["rtol"]
    atol = max(meta["atol"], rtol * largest(batch))
    print(
        f"  tolerance: rtol {rtol:g} ({meta['tolerance_source']}), atol {atol:.6g} (atol {meta['atol']:g} raised to "
        "rtol times the largest value of the batch's results)",
        file=out,
    )
    wrong = []
    for i in indices:
        alone = run(saved, [i])
        for name, together, single, axis in zip(names, batch, alone, meta["result_axes"]):
            if axis is None:
                continue
            part = take(saved, together, [i], axis)
            if not hasattr(single, "shape") or single.shape != part.shape:
                wrong.append(
                    f"observation {i} alone returns {name} of shape {getattr(single, 'shape', None)}, its part of the batch {part.shape}"
                )
                continue
            found = differs(single, part, rtol, atol)
            if found is not None:
                at = list(found["index"])
                at[axis] = i  # the element's index in the whole batch
                wrong.append(
                    f"observation {i}: {name}{index_text(tuple(at))} is {number(found['actual'])} alone and "
                    f"{number(found['expected'])} in the batch (|difference| {found['difference']:.6g}, allowed "
                    f"{found['allowed']:.6g}; {found['count']} of {found['size']} elements differ)"
                )
    for line in wrong:
        print(f"  {line}", file=out)
    return finish(
        wrong,
        f"{method} of an observation alone differs from its part of the batch",
        "each observation gives alone what it gives in the batch, within the tolerance",
        out,
    )


def test_reproduce() -> None:
    """For pytest: fails while observations mix."""
    import io

    out = io.StringIO()
    assert reproduce(out) == 0, out.getvalue()


if __name__ == "__main__":
    sys.exit(reproduce())
