"""Everything the checks of one target share: fresh layers, inputs, and cached steps.

A step (predict, forward, backward at one dtype) runs once and is cached with its result or
the user's exception, so that a check depending on a step that failed can say so instead of
failing again, and so that the run costs one call per step however many checks read it.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from . import arrays
from .checks.registry import Incomplete
from .contract import Adapter, Gradients, Outputs, adapt, domains_per_input
from .devices import GpuStatus, gpu_status, to_device
from .errors import USER_ERRORS, ContractError, TargetError
from .layout import Layout
from .loading import exception_summary, user_traceback

DEFAULT_TOLERANCES = {
    "float32": {"rtol": 1e-4, "atol": 1e-5},
    "float64": {"rtol": 1e-9, "atol": 1e-12},
    "complex64": {"rtol": 1e-4, "atol": 1e-5},
    "complex128": {"rtol": 1e-9, "atol": 1e-12},
}


@dataclass(frozen=True)
class Options:
    dtypes: tuple[str, ...] = ("float64", "float32")
    seed: int = 0
    tolerances: dict[str, dict[str, float]] = field(default_factory=lambda: dict(DEFAULT_TOLERANCES))
    checks: tuple[str, ...] | None = None
    skip: tuple[str, ...] = ()
    inputs: tuple[Any, ...] | None = None  # fixed input values instead of random draws
    input_domains: Any = None  # overrides the layer's input_domain: (low, high) or one per input
    device: str = "auto"  # cpu | gpu | auto

    def tolerance(self, dtype: Any) -> tuple[float, float]:
        tol = self.tolerances.get(np.dtype(dtype).name) or DEFAULT_TOLERANCES[np.dtype(dtype).name]
        return float(tol["rtol"]), float(tol["atol"])


@dataclass(frozen=True)
class CallError:
    """A user method that raised, or broke the contract, during a step."""

    method: str
    exception: BaseException
    traceback: str

    @property
    def is_contract(self) -> bool:
        return isinstance(self.exception, ContractError)

    def summary(self) -> str:
        if self.is_contract:
            return str(self.exception)
        return f"{self.method} raised {exception_summary(self.exception)}"


@dataclass(frozen=True)
class Step:
    """The result of one call of a user method, or the error it raised."""

    what: str
    value: Any = None
    error: CallError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def require(self) -> Any:
        """The value, or `Incomplete` naming the step that failed."""
        if self.error is not None:
            raise Incomplete(f"not checked: {self.what} failed ({self.error.summary()})")
        return self.value


def call(what: str, method: str, fn: Callable[[], Any]) -> Step:
    try:
        return Step(what, fn())
    except ContractError as exc:
        return Step(what, error=CallError(method, exc, ""))
    except USER_ERRORS as exc:  # the user's code
        return Step(what, error=CallError(method, exc, user_traceback(exc)))


def seed_user_rngs(seed: int) -> None:
    """Layers initialize with the global RNGs; seed them so that every fresh layer is alike."""
    np.random.seed(seed % 2**32)
    random.seed(seed)


class Session:
    """One target under test: its factory, input layouts and options."""

    def __init__(self, factory: Callable[[], Any], layouts: Sequence[Layout], options: Options):
        self.factory = factory
        self.layouts = tuple(layouts)
        self.options = options
        self._cache: dict[Any, Any] = {}
        self.reference = self._build_reference()

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
        self.reference_parameters = {
            name: arrays.copy_tree(value) for name, value in adapter.parameters().items()
        }
        return adapter

    def new_layer(self, initialize: bool = True, layouts: Sequence[Layout] | None = None) -> Adapter:
        """A freshly constructed layer; initialized with the seeded global RNGs when asked."""
        seed_user_rngs(self.options.seed)
        obj = self.factory()
        try:
            adapter = adapt(obj)
        except ContractError as exc:
            raise TargetError(str(exc)) from None
        if adapter.kind == "function":
            adapter.differentiable = tuple(not integer for integer in self.integer_inputs)
        if initialize:
            seed_user_rngs(self.options.seed)
            adapter.initialize(self.layouts if layouts is None else layouts)
        return adapter

    def layer(self, dtype: Any, layouts: Sequence[Layout] | None = None) -> Adapter:
        """A fresh layer whose parameters are the reference values cast to `dtype`'s precision.

        It is initialized like the reference first: initialize may also set up what is not a
        parameter (a channel axis, say). On other `layouts` (another batch size), the states
        are the ones initialize gives there, since their shape may follow the layout.
        """
        self.initialize_step.require()
        for name, value in self.reference_parameters.items():
            if not arrays.is_array(value):
                raise Incomplete(f"not checked: {name!r} is {arrays.describe(value)}, not an array (see function_syntaxes_are_correct)")
        try:
            adapter = self.new_layer(initialize=True, layouts=layouts)
        except USER_ERRORS as exc:
            where = "" if layouts is None else f" with layouts {', '.join(map(str, layouts))}"
            raise Incomplete(f"not checked: initialize raised {type(exc).__name__} on a fresh layer{where}: {exc}") from None
        values = dict(self.reference_parameters)
        if layouts is not None:
            values.update({name: adapter.get(name) for name in adapter.state if arrays.is_array(adapter.get(name))})
        adapter.set_parameters({name: arrays.cast(value, dtype) for name, value in values.items()})
        return adapter

    def output_formats(self) -> tuple[str, ...]:
        """The declared format of each output; `Incomplete` when output_format breaks."""
        step = self._cached(
            "output formats",
            lambda: call("output_format", "output_format",
                         lambda: self.reference.output_formats([layout.format for layout in self.layouts])),
        )
        return step.require()

    # -- data ---------------------------------------------------------------------------

    def inputs(self, dtype: Any) -> tuple[Any, ...]:
        """Random inputs at `dtype` (the same values at every precision); a fresh copy each call."""
        key = ("inputs", np.dtype(dtype).name)
        if key not in self._cache:
            self._cache[key] = tuple(arrays.at_dtype(x, dtype) for x in self._input_values(np.dtype(dtype).kind == "c"))
        return tuple(x.copy() for x in self._cache[key])

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
        return tuple(
            arrays.at_dtype(arrays.random_array(layout, draw, rng, domain), dtype)
            for layout, domain in zip(layouts, self.input_domains())
        )

    def _input_values(self, is_complex: bool) -> list[np.ndarray]:
        """The user's fixed inputs (shapes checked by `check_layer`), or standard normal draws
        inside each input's domain."""
        if self.options.inputs is not None:
            return [np.asarray(arrays.to_numpy(x)) for x in self.options.inputs]
        rng = self.rng("inputs")
        dtype = np.complex128 if is_complex else np.float64
        return [
            arrays.random_array(layout, dtype, rng, domain)
            for layout, domain in zip(self.layouts, self.input_domains())
        ]

    def output_gradients(self, outputs: Outputs, purpose: str) -> tuple[tuple, tuple]:
        """Random dL/dY and dL/dS_out shaped and typed like the outputs and states."""
        rng = self.rng(purpose)

        def like(y: Any) -> Any:
            if not arrays.is_array(y):
                raise Incomplete(f"not checked: an output is {arrays.describe(y)}, not an array")
            xp = arrays.array_module(y)
            return xp.asarray(arrays.random_like(arrays.to_numpy(y), rng).astype(y.dtype))

        return tuple(like(y) for y in outputs.values), tuple(like(s) for s in outputs.states)

    # -- cached steps -----------------------------------------------------------------------

    def _cached(self, key: Any, make: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def predict(self, dtype: Any, gpu: bool = False) -> Step:
        return self._cached(("predict", np.dtype(dtype).name, gpu), lambda: self._run_pass("predict", dtype, gpu))

    def forward(self, dtype: Any, gpu: bool = False) -> Step:
        return self._cached(("forward", np.dtype(dtype).name, gpu), lambda: self._run_pass("forward", dtype, gpu))

    def step(self, method: str, dtype: Any, gpu: bool = False) -> Step:
        """The cached `predict` or `forward` step."""
        return (self.predict if method == "predict" else self.forward)(dtype, gpu)

    def _on(self, dtype: Any, gpu: bool) -> tuple[Adapter, tuple[Any, ...], str]:
        """A fresh layer and the inputs, on the GPU when asked (learnables and state too)."""
        layer = self.layer(dtype)
        xs = self.inputs(dtype)
        where = f"{np.dtype(dtype).name} inputs"
        if gpu:
            xp = self.gpu().module
            layer.set_parameters({name: to_device(value, xp) for name, value in layer.parameters().items()})
            xs = tuple(to_device(x, xp) for x in xs)
            where = f"{np.dtype(dtype).name} CuPy inputs"
        return layer, xs, where

    def _run_pass(self, method: str, dtype: Any, gpu: bool) -> Step:
        layer, xs, where = self._on(dtype, gpu)
        return call(f"{method} with {where}", method, lambda: getattr(layer, method)(xs))

    def backward(self, dtype: Any, gpu: bool = False) -> Step:
        """forward then backward at `dtype`, with random dL/dY; the value is a BackwardResult."""
        return self._cached(("backward", np.dtype(dtype).name, gpu), lambda: self._run_backward(dtype, gpu))

    def _run_backward(self, dtype: Any, gpu: bool) -> Step:
        self.forward(dtype, gpu).require()
        layer, xs, where = self._on(dtype, gpu)
        forward = call(f"forward with {where}", "forward", lambda: layer.forward(xs))
        outputs = forward.require()
        # The same purpose on both devices: the GPU gets the CPU's dL/dY values.
        dLdY, dLdS = self.output_gradients(outputs, f"dLdY {np.dtype(dtype).name}")
        what = f"backward with {where}"
        step = call(what, "backward", lambda: layer.backward(xs, outputs, dLdY, dLdS))
        if not step.ok:
            return step
        return Step(what, BackwardResult(step.value, xs, outputs, dLdY, dLdS, layer))

    def gpu(self) -> GpuStatus:
        """The GPU the checks may use; never asks CuPy with `device="cpu"`."""
        if self.options.device == "cpu":
            return GpuStatus(False, "--device cpu")
        return gpu_status()


@dataclass(frozen=True)
class BackwardResult:
    gradients: Gradients
    inputs: tuple
    outputs: Outputs
    dLdY: tuple
    dLdS: tuple
    layer: Adapter
