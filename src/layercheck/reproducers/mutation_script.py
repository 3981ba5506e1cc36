"""A layer that modifies its arguments, reproduced: written by `layercheck run --repro` for
one failed predict_does_not_modify_inputs, forward_does_not_modify_inputs,
backward_does_not_modify_inputs, initialize_does_not_change_nonempty_learnables,
initialize_does_not_change_nonempty_states or reset_state_does_not_error. A regression test to
keep.

    python THIS_FILE.py    exit status 1 while the call modifies what it is given, 0 once not
    pytest THIS_FILE.py    the same, as the test `test_reproduce`

It needs NumPy (CuPy for a check that ran on the GPU) and the layer's module, nothing of
layercheck. The data is THIS_FILE.npz beside it: every input, learnable and state as layercheck
gave them, and for backward the loss gradients dL/dY and dL/dS_out.

What it does: builds the layer as layercheck does, sets its learnables and state, keeps a copy
of every argument, calls the method (for backward: forward first, then backward with forward's
outputs), and compares every argument afterwards with its copy, exactly (NaN equals NaN). A
learnable or state the layer replaced by a new array of the same values is not a modification.
For initialize: constructs the layer, sets the learnables or states layercheck preset (saved
here), calls initialize on the layouts and compares each with what was set. For reset_state:
builds the layer, keeps its states, calls predict, sets the states predict returned (as a
network does between time steps), calls reset_state and compares each state with the kept one.
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
from layercheck.reproducers.harness_script import Saved, differs, finish, index_text, names_of_arguments, number  # noqa: E402 - replaced by the code

# <<< the harness


def reproduce(out: Any = None) -> int:
    """Call the method once and name every argument it left changed: 1 while one is, else 0."""
    out = out or sys.stdout
    saved = Saved(__file__, MODULE_PATH, MODULE_PATH_IS_RELATIVE, TARGET_NAME, CONSTRUCTOR_ARGS)
    meta, method = saved.meta, saved.meta["method"]
    print(f"reproducing {meta['check']} of {TARGET_LABEL}", file=out)
    if method == "initialize":
        return reproduce_initialize(saved, out)
    if method == "reset_state":
        return reproduce_reset(saved, out)
    print(f"  {method} with {meta['dtype']} inputs, seed {meta['seed']}", file=out)
    obj, xs, _ = saved.built()
    names = names_of_arguments(meta)
    if method == "backward":
        dLdY = [saved.array(f"w{j}") for j in range(saved.n_out)]
        dLdS = [saved.array(f"w{saved.n_out + j}") for j in range(len(meta["state"]))]
        ys, _, memory = saved.forward(obj, xs)
        given = [*xs, *saved.held(obj), *ys, *dLdY, *dLdS]
        names += [f"output {n}" for n in meta["outputs"]]
        names += [meta.get("gradient_labels", {}).get(n, "dLd" + n) for n in meta["outputs"]] + [
            f"dLd{s}_out" for s in meta["state"]
        ]
        copies = [value.copy() for value in given]
        saved.backward(obj, xs, ys, dLdY, dLdS, memory)
        after = [*xs, *saved.held(obj), *ys, *dLdY, *dLdS]
    else:
        given = [*xs, *saved.held(obj)]
        copies = [value.copy() for value in given]
        getattr(saved, method)(obj, xs)
        after = [*xs, *saved.held(obj)]
    # A learnable or state the layer set anew is another object; one written into, the same.
    verbs = [
        "was modified in place" if now is was else "was set to another array on the layer"
        for was, now in zip(given, after)
    ]
    wrong = changes(names, copies, after, verbs)
    for line in wrong:
        print(f"  {line}", file=out)
    return finish(wrong, f"{method} modifies its arguments", f"{method} leaves every argument as it was given", out)


def reproduce_initialize(saved: Saved, out: Any) -> int:
    """Set what layercheck preset, call initialize, and name what it changed."""
    meta = saved.meta
    layouts = ", ".join(str(layout) for layout in saved.layouts)
    print(f"  initialize on {layouts}, {meta['group']} set before: {', '.join(meta['preset'])}", file=out)
    obj = saved.fresh(initialize=False)
    preset = saved.arguments()
    for name, value in zip(meta["preset"], preset):
        setattr(obj, name, value.copy())
    obj.initialize(*saved.layouts)
    after = [getattr(obj, name, None) for name in meta["preset"]]
    names = [f"{'learnable' if meta['group'] == 'learnables' else 'state'} {name}" for name in meta["preset"]]
    wrong = changes(names, preset, after, "was changed by initialize")
    for line in wrong:
        print(f"  {line}", file=out)
    group = meta["group"]
    return finish(wrong, f"initialize changes {group} already set", f"initialize keeps the {group} already set", out)


def reproduce_reset(saved: Saved, out: Any) -> int:
    """predict, set the updated states, reset_state, and name each state not restored."""
    meta = saved.meta
    print(f"  predict with {meta['dtype']} inputs, seed {meta['seed']}, then reset_state", file=out)
    obj, xs, _ = saved.built()
    initial = [getattr(obj, name).copy() for name in meta["state"]]
    _, updated = saved.predict(obj, xs)
    for name, value in zip(meta["state"], updated):
        setattr(obj, name, value)
    returned = obj.reset_state()
    if returned is not None and returned is not obj and type(returned) is type(obj):
        obj = returned  # MATLAB's style: reset_state returns the reset layer, as layercheck takes it
    after = [getattr(obj, name, None) for name in meta["state"]]
    names = [f"state {name}" for name in meta["state"]]
    wrong = [
        f"{name} is {getattr(now, 'dtype', None)} after reset_state, {was.dtype} before"
        for name, was, now in zip(names, initial, after)
        if hasattr(now, "dtype") and getattr(now, "dtype", None) != was.dtype
    ]
    wrong += changes(names, initial, after, "is not restored by reset_state")
    for line in wrong:
        print(f"  {line}", file=out)
    return finish(wrong, "reset_state does not restore the initial state", "reset_state restores every state", out)


def changes(names: list[str], before: list[Any], after: list[Any], verb: str | list[str]) -> list[str]:
    """What changed from `before` to `after`, exactly (NaN equals NaN), one line per argument
    (`verb`: what is said of a change, or of each argument's)."""
    wrong = []
    verbs = [verb] * len(names) if isinstance(verb, str) else verb
    for name, old, now, verb in zip(names, before, after, verbs):
        if not hasattr(now, "shape") or now.shape != old.shape:
            wrong.append(f"{name} was replaced by {type(now).__name__} {getattr(now, 'shape', '')}")
            continue
        found = differs(now, old, 0.0, 0.0)
        if found is not None:
            at = index_text(found["index"])
            wrong.append(
                f"{name} {verb}: {found['count']} of {found['size']} elements changed, "
                f"the largest change at {at}: {number(found['expected'])} became {number(found['actual'])}"
            )
    return wrong


def test_reproduce() -> None:
    """For pytest: fails while the method modifies its arguments."""
    import io

    out = io.StringIO()
    assert reproduce(out) == 0, out.getvalue()


if __name__ == "__main__":
    sys.exit(reproduce())
