"""The Python API: check a layer from a test suite or a notebook.

Wiring only: options are parsed and validated by `settings.options.make_options` (the
validator the command line and config files use too), then the runner checks the target.

The layer runs in the caller's process, so what it does there is contained where it can be:
whatever it raises, KeyboardInterrupt and other BaseException subclasses included, is its
doing (a failed check, or the report's error); the working folder is restored when the check
ends. A Ctrl-C the user presses while the check runs still interrupts it (a KeyboardInterrupt
raised out of `check_layer`, in the main thread). What cannot be contained in-process (a
layer that hangs, crashes the interpreter or exhausts memory, or changes global state such
as environment variables or `sys.modules`) needs a worker process: `layercheck run`. NumPy's
and layercheck's functions are the exception: one the layer replaces while it is checked is
put back, and the check fails (`sandbox.integrity`).
"""

from __future__ import annotations

import copy
import inspect
import os
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from layercheck.checks import REGISTRY
from layercheck.contract.adapter import is_operation, kind_of
from layercheck.contract.layout import Layout
from layercheck.contract.loading import NO_CONVENTION, Convention, Target, adopted, constructor, load_targets
from layercheck.errors import TargetError, UsageError
from layercheck.interrupts import handling, reraise_if_interrupt
from layercheck.reporters.text import target_text
from layercheck.results import TargetReport, cause_of
from layercheck.running.runner import run_target
from layercheck.safetext import exception_text, type_name
from layercheck.sandbox import Guard, reads_run_no_code
from layercheck.settings.config import keeps_gradients_mapping
from layercheck.settings.options import make_options, parse_input_layouts

__all__ = ["check_function", "check_layer"]


# `str(report)` of every report: the console's text (see `TargetReport.text_of`).
TargetReport.text_of = target_text


def check_layer(
    layer: Any,
    layout: Any = None,
    *,
    args: Mapping[str, Any] | None = None,
    dtypes: Sequence[str] | None = None,
    seed: int | None = None,
    tolerances: Mapping[str, Mapping[str, float]] | None = None,
    checks: Sequence[str] | None = None,
    skip: Sequence[str] | None = None,
    inputs: Sequence[Any] | None = None,
    input_domains: Any = None,
    device: str | None = None,
    backward: str | None = None,
    convention: Mapping[str, Any] | None = None,
) -> TargetReport:
    """Check a layer: every check of the suite, or those named, at the given input layouts.

    Args:
        layer: a layer class (constructed with `args` for every fresh layer a check needs), a
            layer instance (deep-copied for each; never modified), or a plain function `f(X)`.
            An operation given here is checked as one (see `check_function`). Or the file
            that defines it, as `layercheck run` takes one: `"path.py"` (its one target) or
            `"path.py:Name"`, a `str` or a path; imported here, and judged from before its
            import. A module that cannot be imported is the report's `error`. A function
            pair with a cache (DESIGN.md section 11): `"path.py:NAME_forward"`, or the two
            functions `(forward, backward)`.
        layout: `"24,24,20,128:SSCB"`, a `Layout`, a `{"size": [...], "format": "SSCB"}`
            mapping, or a list with one of those per input; None: the layer's
            `example_layout`, as on the command line.
        args: keyword arguments of the constructor; of a function pair, its arguments that
            are not arrays (`{"bn_param": {"mode": "train"}}`).
        dtypes: the precisions tested, default `("float64", "float32")`; complex dtypes too.
        seed: seeds the inputs, the loss weights and the layer's own `numpy.random` draws.
        tolerances: `{dtype: {"rtol": r, "atol": a}}`, merged per key over the defaults
            (`1e-9`/`1e-12` for float64, `1e-4`/`1e-5` for float32).
        checks: run only these checks (names as `layercheck list-checks` prints them).
        skip: do not run these checks.
        inputs: arrays to check at, one per input, instead of random draws.
        input_domains: `(low, high)` for every input or one per input (None for unbounded):
            inputs are drawn and perturbed inside it; overrides the layer's `input_domain`.
        device: `"auto"` (GPU checks where a GPU is usable), `"gpu"` (every check on the GPU)
            or `"cpu"` (CuPy never imported).
        backward: the backward function's name of the pair `"path.py:NAME"` names, when it
            is not `NAME_backward`.
        convention: a class that keeps its gradients (DESIGN.md section 11): the mapping a
            config entry's `convention:` holds (`predict`, `output`, `backward`,
            `input_gradient`, `learnables`, `arguments`).

    Returns:
        The report: `status`, one `CheckResult` per check (`result(name)`), and
        `raise_on_failure()` for use in a test suite.

    Raises:
        UsageError: no layout (none given and no `example_layout`), a malformed layout or
            option, a layout too large for the memory, inputs of the wrong shapes, or
            `device="gpu"` where no GPU is usable. In pytest it reads as one line under the
            caller's test: layercheck's frames are hidden (`__tracebackhide__`).
        KeyboardInterrupt: the user pressed Ctrl-C (one the layer raises itself is reported
            as its failure instead; see the module docstring for what is contained).
    """
    __tracebackhide__ = True  # a usage error reads as the caller's, in pytest
    try:
        kept = None if convention is None else keeps_gradients_mapping(convention, "convention")
        if backward is not None and not isinstance(layer, (str, os.PathLike)):
            raise UsageError(
                "backward: names the backward of the pair a 'path.py:NAME' names; give two functions as "
                "(forward, backward)"
            )
    except UsageError as exc:
        raise _cut(exc) from None
    return _check(
        layer,
        layout,
        args,
        convention=Convention(backward, kept),
        dtypes=dtypes,
        seed=seed,
        tolerances=tolerances,
        checks=checks,
        skip=skip,
        inputs=inputs,
        input_domains=input_domains,
        device=device,
    )


def check_function(
    fn: Any,
    layouts: Any = None,
    *,
    args: Mapping[str, Any] | None = None,
    dtypes: Sequence[str] | None = None,
    seed: int | None = None,
    tolerances: Mapping[str, Mapping[str, float]] | None = None,
    checks: Sequence[str] | None = None,
    skip: Sequence[str] | None = None,
    inputs: Sequence[Any] | None = None,
    input_domains: Any = None,
    device: str | None = None,
) -> TargetReport:
    """Check a differentiable operation (DESIGN section 4): a class (constructed with `args`)
    or an instance with `forward` and `backward` and no `predict`.

    Args:
        fn: the operation's class or an instance of it.
        layouts: one layout per input of `forward`, each as `layout` of `check_layer`; None:
            the operation's `example_layout`.
        args, dtypes, seed, tolerances, checks, skip, inputs, input_domains, device: as for
            `check_layer`.

    Returns:
        The report, of kind "function".

    Raises:
        UsageError: `fn` is not an operation, or as for `check_layer`.
    """
    __tracebackhide__ = True
    if not isinstance(fn, (str, os.PathLike)) and not is_operation(fn):
        raise _not_an_operation(getattr(fn, "__name__", type(fn).__name__))
    return _check(
        fn,
        layouts,
        args,
        operation=True,
        dtypes=dtypes,
        seed=seed,
        tolerances=tolerances,
        checks=checks,
        skip=skip,
        inputs=inputs,
        input_domains=input_domains,
        device=device,
    )


def _not_an_operation(name: str) -> UsageError:
    return UsageError(
        f"{name} is not an operation (a class with forward and backward and no predict); check layers and "
        "plain functions with check_layer"
    )


def _check(
    layer: Any,
    layout: Any,
    args: Mapping[str, Any] | None,
    operation: bool = False,
    convention: Convention = NO_CONVENTION,
    **options: Any,
) -> TargetReport:
    """Parse the layouts, then the options (None: not given), then run the checks.

    NumPy's and layercheck's functions are recorded first: one the layer replaces while it is
    checked fails the check and is put back, so that the caller's session is left as it was
    (`sandbox.integrity`). What the caller's process did before (the layer's module, once
    imported) is what the layer is judged under: only `layercheck run`, which imports the
    module in a worker of its own, sees what a module does when it is imported.

    The first check installs the audit hook that counts writes of functions' code and
    defaults (`Guard.start`; Python has no way to remove one, and it costs a comparison per
    audit event): each look then compares the functions only after such a write, which
    halves what a check of a small layer takes.
    """
    __tracebackhide__ = True
    guard = Guard.start()
    try:
        label, target = None, None
        if isinstance(layer, (str, os.PathLike)):  # a file, as `layercheck run` takes it
            try:
                target = _loaded(os.fspath(layer), convention)
            except TargetError as exc:  # the module's own failure: the target's, as run reports it
                return TargetReport(os.fspath(layer), error=str(exc), traceback=exc.traceback, cause=cause_of(exc))
            finally:
                guard.verify()  # what the module did when it was imported here
            label, layer = target.label, target.obj
            if operation and not is_operation(layer):
                raise _not_an_operation(label)
        guard.where = "before the checks began"  # else the module was imported by the caller, before
        # The example_layout may be a property: the layer's code, run with the record taken.
        layouts = _example_layout(layer) if layout is None else layout
        adopt = _adopter(layer, target, convention, args)
        # Nothing of the layer's ran since the guard's last look where it is a plain function
        # given with its layout, or a class whose attributes, read to tell what it is, are
        # plain functions and values (`reads_run_no_code`): else they may be its own
        # descriptors or its metaclass's code; an example layout or a convention's adopter is.
        plain = type(layer) is types.FunctionType or reads_run_no_code(layer)
        looked = layout is not None and adopt is None and plain
        return _checked(layer, layouts, args, guard, label=label, adopt=adopt, looked=looked, **options)
    except UsageError as exc:
        raise _cut(exc) from None
    finally:
        guard.stop()


def _loaded(spec: str, convention: Convention) -> Target:
    """The one target of `path.py` or `path.py:Name`, imported as `layercheck run` imports it."""
    targets = load_targets(spec, convention)
    if len(targets) > 1:
        names = ", ".join(target.name for target in targets)
        raise UsageError(f"{spec} defines {len(targets)} targets ({names}): name one, as {spec}:NAME")
    return targets[0]


Adopt = Callable[[Sequence[Layout]], tuple[Any, tuple[Layout, ...]]]


def _adopter(layer: Any, target: Target | None, convention: Convention, args: Mapping[str, Any] | None) -> Adopt | None:
    """How a target of another convention (DESIGN.md section 11) becomes the layer checked,
    once its layouts are known; None: it is checked as it is."""
    given = dict(args or {})
    if target is not None:
        if target.pair is None and target.convention.keeps_gradients is None:
            return None
        found = target

        def of_target(layouts: Sequence[Layout]) -> tuple[Any, tuple[Layout, ...]]:
            made = found.adopted(layouts, given)
            return made.obj, made.layouts

        return of_target
    is_pair = isinstance(layer, tuple) and len(layer) == 2 and all(inspect.isfunction(f) for f in layer)
    if not is_pair and convention.keeps_gradients is None:
        return None

    if not is_pair and not inspect.isclass(layer):
        raise UsageError(f"convention: {type_name(layer)} is not a class; it maps the methods of a class")
    # A namespace that holds them, as a module does (two functions may share a name: a lambda's).
    names = {"forward": layer[0], "backward": layer[1]} if is_pair else {layer.__name__: layer}
    pair = ("forward", "backward") if is_pair else None
    name = "forward" if is_pair else layer.__name__

    def made(layouts: Sequence[Layout]) -> tuple[Any, tuple[Layout, ...]]:
        made = adopted(names, name, pair, convention, layouts, given)
        return made.obj, made.layouts

    return made


def _cut(exc: UsageError) -> UsageError:
    """The error without layercheck's frames below here (where it was found in the options'
    validator, say): the caller's mistake, one line, as the command line says it."""
    return exc.with_traceback(None)


def _example_layout(layer: Any) -> Any:
    """The layer's `example_layout` (the class's, for an instance), with the command line's
    wording when there is none or it is not a layout (`running.batch._describe`)."""
    name = layer.__name__ if inspect.isclass(layer) or inspect.isfunction(layer) else type_name(layer)
    try:
        example = getattr(layer, "example_layout", None)
        if example is not None:
            return parse_input_layouts(example)
    except UsageError as exc:
        raise UsageError(f"example_layout of {name} is invalid: {exc}") from None
    except BaseException as exc:  # the user's attribute: a property that raises, say
        reraise_if_interrupt(exc)
        raise UsageError(f"example_layout of {name} is invalid: {exception_text(exc)}") from None
    raise UsageError(
        f"no layout for {name}: pass the layout (SIZES:FORMAT, a list with one per input) or set the "
        "class attribute example_layout"
    )


def _checked(
    layer: Any,
    layout: Any,
    args: Mapping[str, Any] | None,
    guard: Guard,
    label: str | None = None,
    adopt: Adopt | None = None,
    looked: bool = False,
    **options: Any,
) -> TargetReport:
    """`looked`: nothing of the layer's ran since the guard's last look (`run_target`); the
    inputs' shapes, when they are not NumPy's own arrays, run code of the caller's."""
    __tracebackhide__ = True
    layouts = parse_input_layouts(layout)
    if adopt is not None:
        try:
            layer, layouts = adopt(layouts)
        except TargetError as exc:
            raise UsageError(str(exc)) from None
        label = label or layer.__name__
    opts = make_options(**options, check_names=tuple(REGISTRY))
    if opts.inputs is not None:
        shapes = [tuple(getattr(x, "shape", np.shape(x))) for x in opts.inputs]
        if shapes != [layout.size for layout in layouts]:
            raise UsageError(f"inputs have shapes {shapes} but the layouts need {[layout.size for layout in layouts]}")
    if inspect.isclass(layer):
        factory, name = constructor(layer, dict(args or {})), layer.__name__
    elif inspect.isfunction(layer):
        factory, name = (lambda: layer), layer.__name__
    else:
        factory, name = _copier(layer), type_name(layer)
    label = name if label is None else label
    looked = looked and all(type(x) is np.ndarray for x in opts.inputs or ())
    with handling(), _working_folder_kept():
        return run_target(label, factory, layouts, opts, kind=kind_of(layer), guard=guard, looked=looked)


@contextmanager
def _working_folder_kept() -> Iterator[None]:
    """The layer runs in the caller's process: a `chdir` in it is undone when the check ends."""
    try:
        folder: str | None = os.getcwd()
    except OSError:  # the caller's folder was removed already
        folder = None
    try:
        yield
    finally:
        if folder is not None:
            try:
                if os.getcwd() != folder:
                    os.chdir(folder)
            except OSError:
                try:
                    os.chdir(folder)
                except OSError:
                    pass


def _copier(instance: Any) -> Callable[[], Any]:
    """Fresh copies of an instance; the instance itself when it cannot be copied."""
    try:
        copy.deepcopy(instance)
    except BaseException as exc:  # the instance's __deepcopy__ is the layer's code
        reraise_if_interrupt(exc)
        return lambda: instance
    return lambda: copy.deepcopy(instance)
