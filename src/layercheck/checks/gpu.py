"""CPU/GPU parity and device hygiene, with CuPy.

The same inputs, learnables and dL/dY move to the GPU; outputs and gradients must agree with
the CPU's within the tested dtype's tolerance (rtol, and an atol of rtol times the largest
value compared: reductions run in another order on the GPU), and every array the layer
returns from CuPy inputs must be a CuPy array of the tested precision.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from typing import Any

from layercheck.checks.common import dtype_name, named_outputs, require_backward, widened
from layercheck.checks.context import CallError, CheckContext, Step
from layercheck.checks.evidence import call_evidence, session_tolerance_words
from layercheck.checks.registry import Incomplete, Outcome, Skip, check, failed, passed
from layercheck.checks.types import complex_allowed, expected_dtype, type_problem
from layercheck.devices import GpuStatus
from layercheck.findings.problems import Parity, RaisedWhen, TypeFault, TypeProblem
from layercheck.numerics import arrays
from layercheck.numerics.compare import largest_magnitude, mismatch, scaled_atol
from layercheck.reproducers.evidence import Evidence, LazyEvidence, ReproKind
from layercheck.results import Call, Kind

__all__ = ["backward_is_consistent_on_gpu", "outputs_stay_on_device", "predict_is_consistent_on_gpu", "require_gpu"]


def require_gpu(session: CheckContext) -> GpuStatus:
    if session.options.device == "cpu":
        raise Skip("--device cpu: GPU checks not run")
    status = session.gpu()
    if not status.usable:
        raise Skip(f"no GPU: {status.reason}")
    return status


def _gpu_step(session: CheckContext, step: Step, owner: str, dtype: str) -> tuple[Any, Outcome | None]:
    """The GPU step's value; its error is this check's failure (the CPU step ran) when this
    check is `owner`, the check that reports that step, else the reason it was not checked:
    one cause, one failure."""
    if step.error is None:
        return step.value, None
    _defer_to_owner(session, owner)
    problem = step.error.raised(RaisedWhen.GPU, dtype=dtype_name(dtype))
    return None, failed(cause=step.error.cause, **problem.to_details())


def _defer_to_owner(session: CheckContext, owner: str) -> None:
    """Incomplete, naming the check that reports it, when a step raised on the GPU (and ran
    on the CPU) and this check is not the one that reports that step."""
    failure = session.gpu_failure()
    if failure is not None and _owner(session, failure) != owner:
        raise Incomplete(f"not checked: {failure.summary()} on the GPU (see {_owner(session, failure)})")


def _owner(session: CheckContext, error: CallError) -> str:
    """The GPU check that reports a step that raised on the GPU."""
    if error.method == "backward" and session.reference.has_backward:
        return "backward_is_consistent_on_gpu"
    return "predict_is_consistent_on_gpu"


def _require_cpu_run(session: CheckContext) -> None:
    """A layer bound to the GPU has no CPU result to compare with: parity is skipped."""
    binding = session.gpu_binding()
    if binding is not None:
        raise Skip(f"the layer runs only on the GPU ({binding}): no CPU result to compare with")


def _parity(session: CheckContext, name: str, cpu: Any, gpu: Any, dtype: str) -> tuple[Parity | None, float]:
    """A problem with the GPU's result, or None, and the largest difference: what was returned
    is checked first, then the values, on the device (the CPU's result is uploaded)."""
    rtol, atol = session.tolerance(dtype)
    if not arrays.is_cupy_array(gpu) or tuple(gpu.shape) != tuple(cpu.shape):
        return Parity(name, dtype_name(dtype), gpu=arrays.describe(gpu), cpu=arrays.describe(cpu)), math.inf
    expected = arrays.to_module(cpu, arrays.array_module(gpu))
    diff = mismatch(gpu, expected, rtol, scaled_atol(rtol, atol, [expected]))
    if diff is None:
        return None, largest_magnitude(gpu - expected)
    return Parity(name, dtype_name(dtype), diff), diff.abs_diff


def _parity_evidence(session: CheckContext, check: str, method: str, dtype: str, loss: Any = ()) -> LazyEvidence:
    """For --repro: the arguments (and dL/dY) both devices were given, and the tolerance."""

    def build() -> Evidence:
        rtol, atol = session.tolerance(dtype)
        words = session_tolerance_words(session, dtype)
        return call_evidence(
            session,
            ReproKind.PARITY,
            check,
            method,
            dtype,
            loss=loss,
            device="gpu",
            rtol=rtol,
            atol=atol,
            tolerance_source=words,
        )

    return build


@check(
    "predict_is_consistent_on_gpu",
    "predict (forward for an operation) on CuPy arrays agrees with the CPU within the dtype's tolerance",
    repro=ReproKind.PARITY,
    calls=(Call.PREDICT,),
)
def predict_is_consistent_on_gpu(session: CheckContext) -> Outcome:
    require_gpu(session)
    _require_cpu_run(session)
    layer = session.reference
    method = "predict" if layer.kind == Kind.LAYER else "forward"
    worst = 0.0
    for dtype in session.options.dtypes:
        cpu = session.step(method, dtype, gpu=False).require()
        value, error = _gpu_step(session, session.step(method, dtype, gpu=True), "predict_is_consistent_on_gpu", dtype)
        if error:
            return error
        for (name, c), (_, g) in zip(named_outputs(layer, cpu), named_outputs(layer, value)):
            problem, difference = _parity(session, f"{method} output {name}", c, g, dtype)
            if problem:
                evidence = _parity_evidence(session, "predict_is_consistent_on_gpu", method, dtype)
                return failed(evidence=evidence, output=name, **widened(session, [dtype]), **problem.to_details())
            worst = max(worst, difference)
    return passed(f"largest difference {worst:.2g}", **widened(session, session.options.dtypes))


@check(
    "backward_is_consistent_on_gpu",
    "forward and backward on CuPy arrays give every gradient the CPU gives, within the dtype's tolerance",
    repro=ReproKind.PARITY,
    calls=(Call.FORWARD, Call.BACKWARD),
)
def backward_is_consistent_on_gpu(session: CheckContext) -> Outcome:
    require_gpu(session)
    layer = session.reference
    require_backward(layer)
    _require_cpu_run(session)
    _defer_to_owner(session, "backward_is_consistent_on_gpu")
    for dtype in session.options.dtypes:
        cpu = session.backward(dtype, gpu=False).require()
        value, error = _gpu_step(session, session.backward(dtype, gpu=True), "backward_is_consistent_on_gpu", dtype)
        if error:
            return error
        for name, c, g in zip(layer.gradient_names(), cpu.gradients.all, value.gradients.all):
            if c is None and g is None:
                continue
            if not arrays.is_array(c):
                raise Incomplete(f"not checked: the CPU gradient of {name} is {arrays.describe(c)}")
            problem, _ = _parity(session, f"gradient {layer.d(name)}", c, g, dtype)
            if problem:
                loss = sum(session.training_output_gradients(cpu.outputs, dtype), ())
                evidence = _parity_evidence(session, "backward_is_consistent_on_gpu", "backward", dtype, loss)
                return failed(evidence=evidence, argument=name, **widened(session, [dtype]), **problem.to_details())
    return passed(**widened(session, session.options.dtypes))


class _GpuStepFailed(Exception):
    """A GPU step raised: `outcome` is the check's failure."""

    def __init__(self, outcome: Outcome):
        super().__init__(outcome.message)
        self.outcome = outcome


def _returned(session: CheckContext, dtype: str) -> Iterator[tuple[str, str, Any]]:
    """(what, name, value) for every array the layer returns from CuPy inputs at `dtype`;
    raises _GpuStepFailed when a step raised on the GPU."""
    layer = session.reference
    methods = (["predict"] if layer.kind == Kind.LAYER else []) + (["forward"] if layer.has_forward else [])
    for method in methods:
        value, error = _gpu_step(session, session.step(method, dtype, gpu=True), "outputs_stay_on_device", dtype)
        if error:
            raise _GpuStepFailed(error)
        for name, y in named_outputs(layer, value):
            yield f"{method} output", name, y
    if layer.has_backward:
        value, error = _gpu_step(session, session.backward(dtype, gpu=True), "outputs_stay_on_device", dtype)
        if error:
            raise _GpuStepFailed(error)
        for name, grad in zip(layer.gradient_names(), value.gradients.all):
            if grad is not None:
                yield "gradient", layer.d(name), grad


@check(
    "outputs_stay_on_device",
    "from CuPy inputs, outputs, states and gradients are CuPy arrays of the tested precision "
    "(no silent round trip through host memory)",
    repro=ReproKind.TYPES,
    calls=(Call.PREDICT, Call.FORWARD, Call.BACKWARD),
)
def outputs_stay_on_device(session: CheckContext) -> Outcome:
    status = require_gpu(session)
    _defer_to_owner(session, "outputs_stay_on_device")
    try:
        return _stay_on_device(session, status)
    except _GpuStepFailed as exc:
        return exc.outcome


def _device_evidence(session: CheckContext, what: str, dtype: str, allowed: bool) -> LazyEvidence:
    """For --repro: the call that returned `what` ("predict output", "forward output" or
    "gradient"), made on the GPU; for a gradient, its array module alone is checked."""
    method = {"predict output": "predict", "forward output": "forward"}.get(what, "backward")

    def build() -> Evidence:
        loss: tuple[Any, ...] = ()
        if method == "backward":
            loss = sum(session.training_output_gradients(session.backward(dtype).require().outputs, dtype), ())
        return call_evidence(
            session,
            ReproKind.TYPES,
            "outputs_stay_on_device",
            method,
            dtype,
            loss=loss,
            device="gpu",
            complex_allowed=allowed,
            check_dtypes=method != "backward",
        )

    return build


def _stay_on_device(session: CheckContext, status: GpuStatus) -> Outcome:
    cupy = status.module
    for dtype in session.options.dtypes:
        allowed = complex_allowed(session, dtype)
        for what, name, value in _returned(session, dtype):
            evidence = _device_evidence(session, what, dtype, allowed)
            if arrays.is_array(value) and not arrays.is_cupy_array(value):
                moved = TypeProblem(f"{what} {name}", dtype_name(dtype), TypeFault.ON_HOST, arrays.describe(value))
                return failed(evidence=evidence, output=name, dtype=dtype_name(dtype), **moved.to_details())
            if what == "gradient":
                continue  # dtypes of gradients: backward_is_consistent_in_type's rule, checked on the CPU
            expected = expected_dtype(dtype, allowed, value) if arrays.is_array(value) else None
            problem = type_problem(f"{what} {name}", value, expected, dtype, cupy)
            if problem:
                on_gpu = dataclasses.replace(problem, on_gpu=True)
                return failed(evidence=evidence, output=name, dtype=dtype_name(dtype), **on_gpu.to_details())
    return passed(status.reason)
