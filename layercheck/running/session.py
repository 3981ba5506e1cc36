"""Everything the checks of one target share: fresh layers, inputs, and cached steps.

A step (predict, forward, backward at one dtype) runs once and is cached with its result or
the user's exception, so that a check depending on a step that failed can say so instead of
failing again, and so that the run costs one call per step however many checks read it.
"""

from __future__ import annotations

import dataclasses
import random
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from layercheck.checks.context import BackwardResult, CallError, Step, call
from layercheck.checks.registry import Incomplete
from layercheck.contract.adapter import Adapter, Outputs, adapt, domains_per_input
from layercheck.contract.layout import Layout
from layercheck.contract.loading import contract_collisions
from layercheck.errors import USER_ERRORS, ContractError, TargetError
from layercheck.numerics import arrays
from layercheck.numerics.devices import GpuStatus, gpu_status
from layercheck.numerics.precision import PrecisionFinding, measure_precision
from layercheck.portability import is_cuda_error, is_cupy_refusal
from layercheck.results import Kind
from layercheck.safetext import exception_text
from layercheck.settings.options import Options

__all__ = ["Session", "seed_user_rngs"]


def _error_of(run: Callable[[bool], Step], gpu: bool) -> CallError | None:
    """The error of a step, None when it ran (or when a step it needs failed: that step's
    error is the one to report, and it is asked first)."""
    try:
        return run(gpu).error
    except Incomplete:
        return None


def seed_user_rngs(seed: int) -> None:
    """Layers initialize with the global RNGs; seed them so that every fresh layer is alike."""
    np.random.seed(seed % 2**32)
    random.seed(seed)


class Session:
    """One target under test: its factory, input layouts and options."""

    def __init__(self, factory: Callable[[], Any], layouts: Sequence[Layout], options: Options):
        self.started = time.monotonic()  # the target's time limit counts from about here
        self.factory = factory
        self.layouts = tuple(layouts)
        self.options = options
        self._cache: dict[Any, Any] = {}
        self.reference = self._build_reference()
        if self.options.device != "gpu":
            self._refuse_if_bound_to_gpu()

    # -- randomness ---------------------------------------------------------------------

    def rng(self, purpose: str) -> np.random.Generator:
        """A generator that depends only on the seed and `purpose`: checks do not disturb each other."""
        return np.random.default_rng([self.options.seed, zlib.crc32(purpose.encode())])

    # -- layers -------------------------------------------------------------------------

    def _build_reference(self) -> Adapter:
        """The layer constructed and initialized once; its parameters are the reference values."""
        adapter = self.new_layer(initialize=False)
        if adapter.num_inputs != len(self.layouts):
            names = ", ".join(adapter.input_names)
            raise TargetError(
                f"{adapter.name} takes {adapter.num_inputs} input(s) ({names}) but "
                f"{len(self.layouts)} layout(s) were given: give one --layout per input"
            )
        try:
            self.reference = adapter
            self.input_domains()
        except ContractError as exc:
            raise TargetError(str(exc)) from None
        self.initialize_step = call("initialize", "initialize", lambda: adapter.initialize(self.layouts))
        self.reference_parameters = {name: arrays.copy_tree(value) for name, value in adapter.parameters().items()}
        return adapter

    def new_layer(self, initialize: bool = True, layouts: Sequence[Layout] | None = None) -> Adapter:
        """A freshly constructed layer; initialized with the seeded global RNGs when asked."""
        seed_user_rngs(self.options.seed)
        obj = self.factory()
        try:
            adapter = adapt(obj)
        except ContractError as exc:
            raise TargetError(str(exc)) from None
        if adapter.kind == Kind.FUNCTION:
            adapter.differentiable = tuple(not integer for integer in self.integer_inputs)
        if initialize:
            seed_user_rngs(self.options.seed)
            adapter.initialize(self.layouts if layouts is None else layouts)
        return adapter

    def layer(self, dtype: Any, layouts: Sequence[Layout] | None = None, gpu: bool | None = None) -> Adapter:
        """A fresh layer whose parameters are the reference values cast to `dtype`'s precision,
        on the GPU when `gpu` (None: the session's home device).

        It is initialized like the reference first: initialize may also set up what is not a
        parameter (a channel axis, say). On other `layouts` (another batch size), the states
        are the ones initialize gives there, since their shape may follow the layout.
        """
        self.initialize_step.require()
        for name, value in self.reference_parameters.items():
            if not arrays.is_array(value):
                raise Incomplete(
                    f"not checked: {name!r} is {arrays.describe(value)}, not an array (see function_syntaxes_are_correct)"
                )
        try:
            adapter = self.new_layer(initialize=True, layouts=layouts)
        except USER_ERRORS as exc:
            where = "" if layouts is None else f" with layouts {', '.join(map(str, layouts))}"
            raise Incomplete(f"not checked: initialize raised {exception_text(exc)} on a fresh layer{where}") from None
        xp = self._module(gpu)
        values = {name: value.copy() for name, value in self.parameters(dtype, gpu).items()}
        if layouts is not None:
            values.update(
                {
                    name: arrays.to_module(arrays.cast(adapter.get(name), dtype), xp)
                    for name in adapter.state
                    if arrays.is_array(adapter.get(name))
                }
            )
        adapter.set_parameters(values)
        return adapter

    def parameters(self, dtype: Any, gpu: bool | None = None) -> dict[str, Any]:
        """The reference parameters at `dtype`'s precision, on the GPU when `gpu` (None: the
        home device): moved once per dtype. Shared: copy before handing one to a layer."""
        xp = self._module(gpu)
        key = ("parameters", np.dtype(dtype).name, xp.__name__)
        if key not in self._cache:
            self._cache[key] = {
                name: arrays.to_module(arrays.cast(value, dtype), xp)
                for name, value in self.reference_parameters.items()
            }
        return self._cache[key]

    # -- devices ------------------------------------------------------------------------

    def gpu_binding(self) -> str | None:
        """How the layer shows that it runs on the GPU whatever its inputs (an array module
        chosen once, at import), or None. Only possible once CuPy is imported."""
        if "cupy" not in sys.modules:
            return None
        if any(arrays.is_cupy_array(v) for v in self.reference_parameters.values()):
            names = [n for n, v in self.reference_parameters.items() if arrays.is_cupy_array(v)]
            return f"initialize made {', '.join(names)} CuPy arrays"
        failed = self.initialize_step.error
        if failed is not None and is_cuda_error(failed.exception):  # made its learnables with CuPy
            return f"initialize calls CuPy on the GPU ({failed.summary(hint=False)})"
        method = "predict" if self.reference.kind == Kind.LAYER else "forward"
        try:
            step = self.step(method, self.options.dtypes[0], gpu=False)
        except Incomplete:  # a step it needs failed (initialize raised): its own check says so
            return None
        if step.error is not None:
            if is_cupy_refusal(step.error.exception):
                return f"{method} refuses NumPy inputs ({step.error.summary()})"
            if is_cuda_error(step.error.exception):  # on NumPy inputs: the layer's own CuPy call
                return f"{method} calls CuPy on the GPU ({step.error.summary(hint=False)})"
            return None
        values = step.value.all if isinstance(step.value, Outputs) else ()
        if any(arrays.is_cupy_array(y) for y in values):
            return f"{method} returns CuPy arrays from NumPy inputs"
        return None

    def _refuse_if_bound_to_gpu(self) -> None:
        """One line for a layer bound to the GPU, instead of every host check failing."""
        binding = self.gpu_binding()
        if binding is None:
            return
        status = self.gpu()
        where = "check it with --device gpu" if status.usable else f"no GPU is usable here ({status.reason})"
        raise TargetError(f"{self.reference.name} runs only on the GPU: {binding}; {where}")

    def home_module(self) -> Any:
        """The module the checks run the layer in: cupy with --device gpu, else numpy; numpy
        also when the layer raises on the GPU where it runs on the CPU (`gpu_failure`), so
        that every CPU check still runs and the GPU checks report the failure."""
        return self._module(None)

    def _module(self, gpu: bool | None) -> Any:
        if gpu is None:
            gpu = self.options.device == "gpu" and self.gpu_failure() is None
        return self.gpu().module if gpu else np

    def gpu_failure(self) -> CallError | None:
        """With --device gpu: the error of the first training-time step (predict or forward,
        then backward, at the first dtype) that raises on the GPU but runs on the CPU."""
        if self.options.device != "gpu" or not self.gpu().usable:
            return None
        if "gpu failure" not in self._cache:
            self._cache["gpu failure"] = None
            dtype = self.options.dtypes[0]
            method = "predict" if self.reference.kind == Kind.LAYER else "forward"
            steps = [lambda gpu: self.step(method, dtype, gpu)]
            if self.reference.has_forward and method != "forward":
                steps.append(lambda gpu: self.step("forward", dtype, gpu))
            if self.reference.has_backward:
                steps.append(lambda gpu: self.backward(dtype, gpu))
            for run in steps:
                on_gpu = _error_of(run, True)
                if on_gpu is not None and _error_of(run, False) is None:
                    self._cache["gpu failure"] = on_gpu
                    break
        return self._cache["gpu failure"]

    def output_formats(self) -> tuple[str, ...]:
        """The declared format of each output; `Incomplete` when output_format breaks."""
        step = self._cached(
            "output formats",
            lambda: call(
                "output_format",
                "output_format",
                lambda: self.reference.output_formats([layout.format for layout in self.layouts]),
            ),
        )
        return step.require()

    # -- data ---------------------------------------------------------------------------

    def inputs(self, dtype: Any, gpu: bool | None = None, shared: bool = False) -> tuple[Any, ...]:
        """Random inputs at `dtype` (the same values at every precision and on every device),
        on the GPU when `gpu` (None: the home device); a fresh copy each call, or with `shared`
        the session's own arrays, which the caller must never write into (nor let a layer)."""
        xp = self._module(gpu)
        key = ("inputs", np.dtype(dtype).name, xp.__name__)
        if key not in self._cache:
            values = self._input_values(np.dtype(dtype).kind == "c")
            self._cache[key] = tuple(arrays.to_module(arrays.at_dtype(x, dtype), xp) for x in values)
        return self._cache[key] if shared else tuple(x.copy() for x in self._cache[key])

    def input_domains(self) -> tuple[tuple[float | None, float | None], ...]:
        """Where each input is drawn and perturbed: the options' override, else the layer's."""
        if self.options.input_domains is not None:
            return domains_per_input(self.options.input_domains, self.reference.num_inputs)
        return self.reference.input_domains()

    @property
    def integer_inputs(self) -> tuple[bool, ...]:
        """Which inputs hold integers (not differentiated; backward returns None for them)."""
        return tuple(layout.integer is not None for layout in self.layouts)

    @property
    def integer_arguments(self) -> tuple[bool, ...]:
        """`integer_inputs` for every argument in backward's return order (parameters are not)."""
        return self.integer_inputs + (False,) * len(self.reference.parameter_names)

    def random_inputs(self, layouts: Sequence[Layout], dtype: Any, purpose: str) -> tuple[Any, ...]:
        """Inputs drawn like `inputs` but for other layouts (another batch size)."""
        rng = self.rng(purpose)
        draw = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
        xp = self.home_module()
        return tuple(
            arrays.to_module(arrays.at_dtype(arrays.random_array(layout, draw, rng, domain), dtype), xp)
            for layout, domain in zip(layouts, self.input_domains())
        )

    def _input_values(self, is_complex: bool) -> list[np.ndarray]:
        """The user's fixed inputs (shapes checked by `check_layer`), or standard normal draws
        inside each input's domain."""
        if self.options.inputs is not None:
            return [arrays.to_host(x) for x in self.options.inputs]
        rng = self.rng("inputs")
        dtype = np.complex128 if is_complex else np.float64
        return [
            arrays.random_array(layout, dtype, rng, domain)
            for layout, domain in zip(self.layouts, self.input_domains())
        ]

    def output_gradients(self, outputs: Outputs, purpose: str) -> tuple[tuple, tuple]:
        """Random dL/dY and dL/dS_out shaped and typed like the outputs and states, in their
        module. Drawn on the host: a purpose gives the same values on the CPU and the GPU."""
        rng = self.rng(purpose)

        def like(y: Any) -> Any:
            if not arrays.is_array(y):
                raise Incomplete(f"not checked: an output is {arrays.describe(y)}, not an array")
            return arrays.to_module(arrays.random_host_like(y, rng).astype(y.dtype), arrays.array_module(y))

        return tuple(like(y) for y in outputs.values), tuple(like(s) for s in outputs.states)

    def training_output_gradients(self, outputs: Outputs, dtype: Any) -> tuple[tuple, tuple]:
        """The dL/dY and dL/dS_out of the training step at `dtype` (`backward`), drawn anew on
        every call: fresh arrays with the values that step's backward was given, which that
        backward may have overwritten in place (its own failure, `backward_does_not_modify_inputs`).
        The same purpose on both devices: the GPU gets the CPU's values."""
        return self.output_gradients(outputs, f"dLdY {np.dtype(dtype).name}")

    # -- cached steps -----------------------------------------------------------------------

    def _cached(self, key: Any, make: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def predict(self, dtype: Any, gpu: bool | None = None) -> Step:
        return self.step("predict", dtype, gpu)

    def forward(self, dtype: Any, gpu: bool | None = None) -> Step:
        return self.step("forward", dtype, gpu)

    def step(self, method: str, dtype: Any, gpu: bool | None = None) -> Step:
        """The cached `predict` or `forward` step, on the GPU when `gpu` (None: the home device)."""
        gpu = self._on_gpu(gpu)
        return self._cached((method, np.dtype(dtype).name, gpu), lambda: self._run_pass(method, dtype, gpu))

    def _on_gpu(self, gpu: bool | None) -> bool:
        return arrays.on_gpu(self._module(gpu))

    def _on(self, dtype: Any, gpu: bool) -> tuple[Adapter, tuple[Any, ...], str]:
        """A fresh layer and the inputs, on the GPU when asked (learnables and state too)."""
        where = f"{np.dtype(dtype).name} {'CuPy ' if gpu else ''}inputs"
        return self.layer(dtype, gpu=gpu), self.inputs(dtype, gpu), where

    def _run_pass(self, method: str, dtype: Any, gpu: bool) -> Step:
        layer, xs, where = self._on(dtype, gpu)
        name = _called(layer, method)
        return call(f"{name} with {where}", name, lambda: getattr(layer, method)(xs))

    def backward(self, dtype: Any, gpu: bool | None = None) -> Step:
        """forward then backward at `dtype`, with random dL/dY; the value is a BackwardResult."""
        gpu = self._on_gpu(gpu)
        return self._cached(("backward", np.dtype(dtype).name, gpu), lambda: self._run_backward(dtype, gpu))

    def _run_backward(self, dtype: Any, gpu: bool) -> Step:
        self.forward(dtype, gpu).require()
        layer, xs, where = self._on(dtype, gpu)
        name = _called(layer, "forward")
        forward = call(f"{name} with {where}", name, lambda: layer.forward(xs))
        outputs = forward.require()
        dLdY, dLdS = self.training_output_gradients(outputs, dtype)
        what = f"backward with {where}"
        step = call(what, "backward", lambda: layer.backward(xs, outputs, dLdY, dLdS))
        if not step.ok:
            return step
        return Step(what, BackwardResult(step.value, xs, outputs, dLdY, dLdS, layer))

    # -- precision ------------------------------------------------------------------------

    def precision(self, dtype: Any) -> PrecisionFinding:
        """The precision the layer really computes in at `dtype` (measured once, on the home
        device): a layer that rounds to float32 inside is judged at float32."""
        key = ("precision", np.dtype(dtype).name)
        if key not in self._cache:
            nominal = arrays.precision_of(dtype)
            finding = PrecisionFinding(nominal, 0.0, False)
            method = "predict" if self.reference.kind == Kind.LAYER else "forward"
            step = self.step(method, dtype)
            if step.ok and isinstance(step.value, Outputs) and nominal == np.dtype(np.float64):
                layer = self.layer(dtype)
                # The inputs and the learnables and state move together: a layer may round
                # either to float32 (float32 weights, a cast of its parameters).
                names = [n for n in layer.parameter_names if arrays.is_array(layer.get(n))]
                n_in = layer.num_inputs

                def evaluate(values: list[Any]) -> Any:
                    for name, value in zip(names, values[n_in:]):
                        layer.set(name, value)
                    return getattr(layer, method)(list(values[:n_in])).all

                arguments = list(self.inputs(dtype)) + [layer.get(n).copy() for n in names]
                inputs = [not integer for integer in self.integer_inputs]
                domains = list(self.input_domains()) + [(None, None)] * len(names)
                # Inputs first, then the parameters, each group alone: moved together, their
                # products (a weight times an input) would look like curvature.
                groups = [inputs + [False] * len(names), [False] * n_in + [True] * len(names)]
                try:
                    for movable, what in zip(groups if names else groups[:1], ("inputs", "learnables and state")):
                        found = measure_precision(
                            evaluate, arguments, movable, domains, step.value.all, nominal, self.rng("precision")
                        )
                        found = dataclasses.replace(found, moved=what)
                        if found.lost or found.roundoff > finding.roundoff:
                            finding = found
                        if finding.lost:
                            break
                except USER_ERRORS:
                    pass  # the layer raised at a moved point: no finding, as for a layer that cannot be moved
            self._cache[key] = finding
        return self._cache[key]

    def notes(self) -> list[str]:
        """What the report should say beside the results: constructor arguments that set a
        contract attribute; complex learnables or outputs checked with real dtypes only (their
        complex arithmetic, conjugates included, was never exercised)."""
        notes = contract_collisions(self.reference.obj, getattr(self.factory, "args", {}))
        if any(np.dtype(d).kind == "c" for d in self.options.dtypes):
            return notes
        layer = self.reference
        complex_parts = [
            f"learnable {n}" if n in layer.learnables else f"state {n}"
            for n in layer.parameter_names
            if arrays.is_array(layer.get(n)) and arrays.is_complex(layer.get(n))
        ]
        for key, step in list(self._cache.items()):
            value = getattr(step, "value", None)
            if isinstance(key, tuple) and key[:1] in (("predict",), ("forward",)) and isinstance(value, Outputs):
                if any(arrays.is_array(y) and arrays.is_complex(y) for y in value.all):
                    complex_parts.append("the outputs")
                    break
        if complex_parts:
            notes.append(
                f"{' and '.join(complex_parts)} are complex, but only real dtypes were tested "
                f"({', '.join(self.options.dtypes)}): add --dtype complex128 to check the complex arithmetic"
            )
        return notes

    def measured_precision(self, dtype: Any) -> PrecisionFinding | None:
        """`precision(dtype)` if some check measured it already, else None (nothing is run)."""
        return self._cache.get(("precision", np.dtype(dtype).name))

    def tolerance(self, dtype: Any) -> tuple[float, float]:
        """(rtol, atol) to judge results at `dtype` with: those of the precision the layer
        really computes in (float32's for a float64 layer that rounds to float32 inside)."""
        finding = self.precision(dtype)
        if finding.lost:
            return self.options.tolerance("complex64" if np.dtype(dtype).kind == "c" else "float32")
        return self.options.tolerance(dtype)

    def gpu(self) -> GpuStatus:
        """The GPU the checks may use; never asks CuPy with `device="cpu"`."""
        if self.options.device == "cpu":
            return GpuStatus(False, "--device cpu")
        return gpu_status()


def _called(layer: Adapter, method: str) -> str:
    """The user's method that `method` calls: a layer without forward trains with predict,
    and its failures there are predict's."""
    return "predict" if method == "forward" and layer.kind == Kind.LAYER and not layer.has_forward else method
