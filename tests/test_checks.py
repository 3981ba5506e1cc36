"""Every registered check can pass and can fail; checks degrade gracefully; the Python API."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from conftest import (
    CORPUS,
    FUNCTIONS,
    GRADIENTS,
    LAYERS,
    SAMPLES,
    SMALL_LAYOUT,
    declared,
    example_layout,
    layer_files,
    load_layer,
    mentions,
    not_ok,
)
from once import once_per_run

import layercheck
from layercheck import CheckFailure, Report, Status, TargetReport, UsageError
from layercheck.checks import REGISTRY
from layercheck.results import Call

DECLARED = [declared(p) for p in layer_files(CORPUS) + layer_files(LAYERS) + layer_files(FUNCTIONS)]
OWN = [d for d in DECLARED if d.path.parent == LAYERS]


@pytest.fixture(scope="module")
def reports(request):
    """The report of every declared layer at its example layout, by file name: made once in the
    test run (`once_per_run`), through the reports' own JSON codec."""

    def check_all() -> dict:
        out = {}
        for d in DECLARED:
            obj = load_layer(d.path)
            out[d.id] = layercheck.check_layer(obj, example_layout(obj)).to_dict()
        return out

    return {
        name: TargetReport.from_dict(data) for name, data in once_per_run(request.config, "checks", check_all).items()
    }


# -- the declared layers of tests/layers keep their promise --------------------------------------


@pytest.mark.parametrize("d", OWN, ids=lambda d: d.id)
def test_own_layer_keeps_its_declared_expectation(d, reports):
    assert d.correct != bool(d.must_fail)
    report = reports[d.id]
    assert report.error is None
    if d.correct:
        assert not_ok(report) == {}
        assert report.status == "passed"
    else:
        result = report.result(d.must_fail[0])
        assert result.status == "failed", result.message
        for argument in d.arguments:
            assert mentions(result.message, argument)


# -- every check can pass and can fail ------------------------------------------------------------


# The GPU checks have their own layers and a stand-in CuPy in test_gpu.py.
CPU_CHECKS = [name for name, c in REGISTRY.items() if c.family != "gpu"]


@pytest.mark.parametrize("name", CPU_CHECKS)
def test_check_has_a_layer_that_fails_it(name, reports):
    failing = [d for d in DECLARED if name in d.must_fail]
    assert failing, f"no layer in tests/corpus or tests/layers declares 'Must fail: {name}'"
    for d in failing:
        result = reports[d.id].result(name)
        assert result.status == "failed", f"{d.id}: {name} {result.status}: {result.message}"
        assert result.message


@pytest.mark.parametrize("name", CPU_CHECKS)
def test_check_has_a_correct_layer_that_passes_it(name, reports):
    passing = [d.id for d in DECLARED if d.correct and reports[d.id].result(name).status == "passed"]
    assert passing, f"no correct layer exercises {name} (it is skipped or incomplete for all of them)"


def test_registry_entries_are_described():
    assert len(REGISTRY) >= 18
    for name, check in REGISTRY.items():
        assert check.name == name
        assert name.isidentifier() and name == name.lower()
        assert check.description
        assert callable(check.run)


# -- each check calls the methods its declaration names, and no other ------------------------------

# A layer with predict only, one with forward too, one with state, two inputs, and an operation.
CALLERS = ["good_relu.py", "good_forward_predict.py", "good_recurrent_state.py", "two_inputs_good.py"]


@pytest.mark.parametrize(
    "path", [CORPUS / name for name in CALLERS] + [SAMPLES / "srelu_function.py"], ids=lambda p: p.name
)
def test_each_check_calls_only_what_its_declaration_names(path, monkeypatch):
    """`Check.calls` is what `list-checks` says each check judges: every call of the user's
    methods made while a check ran (a shared step is made by the first check that needs it)
    is one it declares; `forward` is a layer's predict where it defines none, `predict` an
    operation's forward. Constructing and initializing the layers it calls is every check's."""
    from layercheck.contract import adapter
    from layercheck.running import runner

    made: dict[str, set[str]] = {}
    running: list[str] = []

    def counting(fn, method):
        def counted(self, *args, **kwargs):
            if running:
                made.setdefault(running[-1], set()).add(method)
            return fn(self, *args, **kwargs)

        return counted

    for cls in (adapter.LayerAdapter, adapter.OperationAdapter):
        for method in ("predict", "forward", "backward", "reset_state"):
            if method in vars(cls):
                monkeypatch.setattr(cls, method, counting(vars(cls)[method], method))
    run_check = runner.run_check

    def attributed(check, session, *args, **kwargs):
        running.append(check.name)
        try:
            return run_check(check, session, *args, **kwargs)
        finally:
            running.pop()

    monkeypatch.setattr(runner, "run_check", attributed)
    obj = load_layer(path)
    report = layercheck.check_layer(obj, example_layout(obj))
    assert report.error is None
    assert made, "no call was counted"
    has_forward = callable(getattr(obj, "forward", None))
    for name, methods in made.items():
        allowed = {call.value for call in REGISTRY[name].calls}
        if "forward" in allowed and report.kind == "layer" and not has_forward:
            allowed.add("predict")
        if "predict" in allowed and report.kind == "function":
            allowed.add("forward")
        assert methods <= allowed, f"{name} calls {sorted(methods - allowed)}, which it does not declare"


def test_a_check_left_undecided_by_a_call_names_one_it_declares(reports):
    """Or initialize, which every check's layers go through."""
    blocked = {
        (file, c.name): c.blocked.call
        for file, r in reports.items()
        for c in r.checks
        if c.blocked is not None and c.blocked.call not in (*REGISTRY[c.name].calls, Call.INITIALIZE)
    }
    assert blocked == {}
    assert any(c.blocked is not None for r in reports.values() for c in r.checks), "no report names a blocking call"


def test_no_check_ever_reports_an_internal_error(reports):
    internal = {
        (file, c.name): c.message for file, r in reports.items() for c in r.checks if "internal error" in c.message
    }
    assert internal == {}


def test_every_check_ends_in_a_known_status(reports):
    for file, report in reports.items():
        assert [c.name for c in report.checks] == list(REGISTRY), file
        for c in report.checks:
            assert c.status in ("passed", "failed", "incomplete", "skipped")
            assert c.duration_s >= 0
            if c.status in ("skipped", "incomplete"):
                assert c.message, f"{file}: {c.name} is {c.status} without a reason"


# -- a check that depends on a step that failed is incomplete or skipped ------------------------

DEPENDENTS = {
    "predict_raises.py": (
        "predict_does_not_error",
        [
            "outputs_are_finite",
            "predict_is_consistent_in_type",
            "predict_does_not_modify_inputs",
            "predict_is_deterministic",
        ],
    ),
    "init_raises.py": (
        "initialize_does_not_error",
        [
            "predict_does_not_error",
            "outputs_are_finite",
            "predict_is_consistent_in_type",
            "predict_does_not_modify_inputs",
            "predict_is_deterministic",
        ],
    ),
    "forward_raises.py": (
        "forward_does_not_error",
        ["forward_predict_are_consistent_in_size", "forward_is_consistent_in_type", "forward_does_not_modify_inputs"],
    ),
    "backward_raises.py": (
        "backward_does_not_error",
        [
            "backward_is_consistent_in_size",
            "backward_is_consistent_in_type",
            GRADIENTS,
            "backward_does_not_modify_inputs",
        ],
    ),
    "wrong_arity.py": (
        "function_syntaxes_are_correct",
        ["predict_does_not_error", "outputs_are_finite", "predict_is_deterministic"],
    ),
    "backward_bad_signature.py": (
        "function_syntaxes_are_correct",
        ["backward_is_consistent_in_size", GRADIENTS, "backward_does_not_modify_inputs"],
    ),
}


@pytest.mark.parametrize("file", list(DEPENDENTS))
def test_checks_depending_on_a_failed_step_are_incomplete_not_failed(file, reports):
    failing, dependents = DEPENDENTS[file]
    report = reports[file]
    assert report.result(failing).status == "failed"
    for name in dependents:
        result = report.result(name)
        assert result.status in ("incomplete", "skipped"), f"{name}: {result.status}: {result.message}"
        assert "internal error" not in result.message
        assert result.message


def test_a_single_dependent_check_run_alone_is_incomplete():
    obj = load_layer(CORPUS / "backward_raises.py")
    report = layercheck.check_layer(obj, SMALL_LAYOUT, checks=[GRADIENTS])
    assert [c.name for c in report.checks] == [GRADIENTS]
    assert report.result(GRADIENTS).status == "incomplete"
    assert "backward" in report.result(GRADIENTS).message


def test_checks_needing_a_backward_are_skipped_without_one(reports):
    report = reports["good_no_backward.py"]
    for name in (
        "backward_does_not_error",
        "backward_is_consistent_in_size",
        "backward_is_consistent_in_type",
        "backward_does_not_modify_inputs",
    ):
        assert report.result(name).status == "skipped"
        assert report.result(name).message == "no backward defined"
    # Its learnable cannot be trained: the gradient check could not decide, and says why.
    assert report.result(GRADIENTS).status == "incomplete"
    assert report.result(GRADIENTS).message.startswith(
        "not checked: the layer has learnables (alpha) and defines no backward"
    )


# -- the Python API ---------------------------------------------------------------------------------


def test_raise_on_failure_raises_for_a_broken_layer():
    obj = load_layer(CORPUS / "grad_wrong_sign.py")
    report = layercheck.check_layer(obj, SMALL_LAYOUT)
    with pytest.raises(CheckFailure) as info:
        report.raise_on_failure()
    assert isinstance(info.value, AssertionError)
    assert GRADIENTS in str(info.value) and "wrong sign" in str(info.value)
    # pytest's short summary shows the first line alone: it names the target and what failed.
    failed = [check.name for check in report.checks if check.status == "failed"]
    assert GRADIENTS in failed
    assert str(info.value).splitlines()[0] == f"{report.target}: {', '.join(failed)} failed"


def test_raise_on_failure_is_silent_for_a_good_layer():
    obj = load_layer(CORPUS / "good_scale_bias.py")
    layercheck.check_layer(obj, SMALL_LAYOUT).raise_on_failure()


def test_raise_on_failure_raises_for_a_target_error():
    class OneInputTooMany:
        def predict(self, A, B):
            return A + B

    report = layercheck.check_layer(OneInputTooMany, SMALL_LAYOUT)
    assert report.status == "error" and "2 input(s)" in report.error
    with pytest.raises(CheckFailure, match="2 input"):
        report.raise_on_failure()


def test_report_over_several_targets_raises_for_each_problem():
    good = layercheck.check_layer(load_layer(CORPUS / "good_tanh.py"), SMALL_LAYOUT)
    bad = layercheck.check_layer(load_layer(CORPUS / "grad_scaled.py"), SMALL_LAYOUT)
    broken = TargetReport("broken.py", error="importing broken.py raised ImportError")
    Report([good]).raise_on_failure()
    with pytest.raises(CheckFailure) as info:
        Report([good, bad, broken]).raise_on_failure()
    assert "TanhScaled" in str(info.value) and "ImportError" in str(info.value)
    assert "Tanh:" not in str(info.value)
    first = str(info.value).splitlines()[0]
    assert first.startswith(f"{bad.target}: ") and first.endswith(
        "; broken.py could not be checked: importing broken.py raised ImportError"
    ), first
    summary = Report([good, bad, broken]).summary
    assert summary == {k: good.summary[k] + bad.summary[k] for k in summary}


def test_check_layer_does_not_modify_an_instance():
    cls = load_layer(CORPUS / "good_scale_bias.py")
    fresh = cls(name="fresh")
    layercheck.check_layer(fresh, SMALL_LAYOUT)
    assert (fresh.w, fresh.b, fresh.channel_axis) == (None, None, None), "initialize ran on the user's object"

    ready = cls(name="ready")
    ready.initialize(layercheck.parse_layout(SMALL_LAYOUT))
    before = copy.deepcopy(vars(ready))
    w_id, b_id = id(ready.w), id(ready.b)
    report = layercheck.check_layer(ready, SMALL_LAYOUT)
    assert report.status == "passed"
    assert (id(ready.w), id(ready.b)) == (w_id, b_id)
    assert set(vars(ready)) == set(before)
    for key, value in before.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(vars(ready)[key], value)
            assert vars(ready)[key].dtype == value.dtype
        else:
            assert vars(ready)[key] == value


def test_check_layer_checks_the_instances_own_parameters():
    cls = load_layer(CORPUS / "good_scale_bias.py")
    layer = cls()
    layer.initialize(layercheck.parse_layout(SMALL_LAYOUT))
    layer.w = np.full_like(layer.w, np.nan)
    report = layercheck.check_layer(layer, SMALL_LAYOUT)
    assert report.result("outputs_are_finite").status == "failed"
    assert np.isnan(layer.w).all()


def test_args_reach_the_constructor():
    cls = load_layer(SAMPLES / "prelu.py")
    assert layercheck.check_layer(cls, SMALL_LAYOUT, args={"num_channels": 5}).status == "passed"
    report = layercheck.check_layer(cls, SMALL_LAYOUT, args={"num_channels": 7})
    result = report.result("initialize_does_not_error")
    assert result.status == "failed" and "7 channels" in result.message


def test_checks_and_skip_options():
    cls = load_layer(CORPUS / "good_tanh.py")
    report = layercheck.check_layer(cls, SMALL_LAYOUT, checks=["predict_does_not_error", GRADIENTS])
    assert [c.name for c in report.checks] == ["predict_does_not_error", GRADIENTS]
    report = layercheck.check_layer(cls, SMALL_LAYOUT, skip=[GRADIENTS])
    assert GRADIENTS not in [c.name for c in report.checks]
    assert len(report.checks) == len(REGISTRY) - 1
    with pytest.raises(UsageError, match="no_such_check"):
        layercheck.check_layer(cls, SMALL_LAYOUT, checks=["no_such_check"])


def test_layout_forms_are_equivalent():
    cls = load_layer(CORPUS / "good_dense.py")
    forms = ["6,10:CB", {"size": [6, 10], "format": "CB"}, layercheck.parse_layout("6,10:CB"), ["6,10:CB"]]
    for form in forms:
        report = layercheck.check_layer(cls, form)
        assert report.layouts == [layercheck.parse_layout("6,10:CB")] and report.status == "passed"


def test_layer_with_two_inputs_takes_one_layout_per_input():
    class Product:
        def predict(self, A, B):
            return A * B

        def backward(self, A, B, Y, dLdY, memory):
            return dLdY * B, dLdY * A

    class ProductSwapped(Product):
        def backward(self, A, B, Y, dLdY, memory):
            return dLdY * A, dLdY * B

    assert layercheck.check_layer(Product, ["4,3:CB", "4,3:CB"]).status == "passed"
    report = layercheck.check_layer(ProductSwapped, ["4,3:CB", "4,3:CB"])
    assert "A and B" in report.result(GRADIENTS).message
    report = layercheck.check_layer(Product, "4,3:CB")
    assert report.status == "error" and "2 input(s)" in report.error


def test_inputs_option_is_used_instead_of_random_draws():
    cls = load_layer(CORPUS / "nan_output.py")  # log without an input_domain
    positive = np.random.default_rng(0).uniform(0.5, 2.0, (4, 3, 5, 6))
    report = layercheck.check_layer(cls, SMALL_LAYOUT, inputs=[positive])
    assert report.result("outputs_are_finite").status == "passed"


def test_plain_function_and_lambda_are_targets():
    assert layercheck.check_layer(lambda X: X * X, SMALL_LAYOUT).status == "passed"
    report = layercheck.check_layer(load_layer(CORPUS / "plain_function.py"), SMALL_LAYOUT)
    assert report.status == "passed" and report.kind == "layer"


# -- known defects (see the report of the test-suite author) ------------------------------------


def test_forward_without_memory_fails_function_syntaxes():
    class ForwardWithoutMemory:
        def predict(self, X):
            return 2 * X

        def forward(self, X):
            return 2 * X  # the contract: (Y, memory) when the layer defines backward

        def backward(self, X, Y, dLdY, memory):
            return 2 * dLdY

    report = layercheck.check_layer(ForwardWithoutMemory, "4,3:CB")
    assert report.result("function_syntaxes_are_correct").status == "failed"


def test_integer_outputs_give_no_internal_error():
    class IntegerOutput:
        def predict(self, X):
            return (X > 0).astype(np.int64)

    report = layercheck.check_layer(IntegerOutput, "4,3:CB")
    assert report.result("predict_is_consistent_in_type").status == "failed"
    assert not [c.message for c in report.checks if "internal error" in c.message]


def test_missing_learnable_attribute_gives_no_internal_error():
    class MissingLearnable:
        learnables = ("w",)

        def predict(self, X):
            return 2 * X

        def backward(self, X, Y, dLdY, memory):
            return 2 * dLdY, np.zeros((4, 1))

    report = layercheck.check_layer(MissingLearnable, "4,3:CB")
    assert report.result("function_syntaxes_are_correct").status == "failed"
    assert not [c.message for c in report.checks if "internal error" in c.message]


def test_inputs_of_the_wrong_shape_are_not_a_pass():
    cls = load_layer(CORPUS / "good_relu.py")
    try:
        report = layercheck.check_layer(cls, SMALL_LAYOUT, inputs=[np.zeros((2, 3, 5, 6))])
    except UsageError:
        return
    assert report.status != "passed"


def test_api_refuses_a_layout_too_large_for_memory():
    try:
        report = layercheck.check_layer(lambda X: X, "100000,100000,1000,1000:SSCB")
    except UsageError:
        return
    assert report.status != "passed"


def test_constructor_raising_is_the_reports_error():
    class Unbuildable:
        def __init__(self):
            raise RuntimeError("no weights")

        def predict(self, X):
            return X

    report = layercheck.check_layer(Unbuildable, SMALL_LAYOUT)
    assert report.status == "error" and "no weights" in report.error


def test_layer_calling_sys_exit_is_a_failed_check():
    class Exits:
        def predict(self, X):
            raise SystemExit(3)

    report = layercheck.check_layer(Exits, "4,3:CB")
    assert report.result("predict_does_not_error").status == "failed"


# -- a call that overwrites its arguments is that failure, and only that ------------------------


@pytest.mark.parametrize(
    ("path", "calls_again"),
    [
        (CORPUS / "backward_scales_dLdY_in_place.py", "backward_is_repeatable"),
        (FUNCTIONS / "backward_scales_dLdY_in_place.py", "backward_respects_compute_gradients"),
    ],
    ids=["layer", "operation"],
)
def test_a_backward_that_overwrites_dldy_fails_only_for_that(path, calls_again):
    """Checks that call backward again give it fresh dL/dY with the first call's values: the
    overwrite is reported once, by backward_does_not_modify_inputs, never as "a value cached or
    accumulated between calls" or as a gradient that depends on the compute_gradients mask."""
    obj = load_layer(path)
    report = layercheck.check_layer(obj, example_layout(obj))
    assert set(not_ok(report)) == {"backward_does_not_modify_inputs"}, not_ok(report)
    assert report.result(calls_again).status == "passed"


def test_a_backward_that_accumulates_into_its_returned_buffer_still_fails_repeatability():
    obj = load_layer(CORPUS / "accumulates_into_returned_buffer.py")
    report = layercheck.check_layer(obj, example_layout(obj))
    result = report.result("backward_is_repeatable")
    assert result.status == "failed" and "cached or accumulated" in result.message


class _OwnGeneratorDropout:
    """Inverted dropout drawing from a generator it keeps (NumPy's recommended API), the mask
    passed as memory or cached on self: correct, and not repeatable by design."""

    def __init__(self):
        self.rng = np.random.default_rng(0)

    def predict(self, X):
        return X

    def forward(self, X):
        mask = (self.rng.random(X.shape) >= 0.2).astype(X.dtype) / X.dtype.type(0.8)
        return X * mask, mask

    def backward(self, X, Y, dLdY, memory):
        return dLdY * memory


class _CachedMaskDropout(_OwnGeneratorDropout):
    def forward(self, X):
        self.mask = (self.rng.random(X.shape) >= 0.2).astype(X.dtype) / X.dtype.type(0.8)
        return X * self.mask, None

    def backward(self, X, Y, dLdY, memory):
        return dLdY * self.mask


class _CountsSteps:
    """forward scales by how many steps it ran: a value cached between calls, not a draw."""

    def __init__(self):
        self.steps = 0

    def predict(self, X):
        return X

    def forward(self, X):
        self.steps += 1
        return X * self.steps, self.steps

    def backward(self, X, Y, dLdY, memory):
        return dLdY * memory


@pytest.mark.parametrize("layer", [_OwnGeneratorDropout, _CachedMaskDropout])
def test_dropout_drawing_from_its_own_generator_is_not_failed_for_repeatability(layer):
    report = layercheck.check_layer(layer, "4,4,3,8:SSCB", checks=["backward_is_repeatable"])
    result = report.result("backward_is_repeatable")
    assert result.status == "skipped", result.message
    assert result.message.startswith("forward is not repeatable") and "dropout" in result.message


def test_a_forward_that_changes_between_steps_is_said_so_and_not_said_to_draw_at_random():
    # A counter is state kept between calls, as a generator is: the two cannot be told apart,
    # and the words claim neither (dropout is named as an example of what does so).
    report = layercheck.check_layer(_CountsSteps, "4,4,3,8:SSCB", checks=["backward_is_repeatable"])
    result = report.result("backward_is_repeatable")
    assert result.status == "skipped", result.message
    assert result.message.startswith("forward is not repeatable (run twice on one layer object")


class _ScalarGradient:
    """Y = t tanh(X), t a 0-d learnable whose gradient backward returns as a NumPy scalar (the
    0-d array it stands for: `np.sum` returns one), the same at every step."""

    learnables = ("t",)

    def initialize(self, layout):
        if getattr(self, "t", None) is None:
            self.t = np.array(1.5)

    def predict(self, X):
        return self.t * np.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        return dLdY * self.t * (1 - np.tanh(X) ** 2), np.sum(dLdY * np.tanh(X))


def test_a_0d_learnable_is_preset_as_an_array_and_its_gradient_may_be_a_numpy_scalar():
    report = layercheck.check_layer(_ScalarGradient, "4,4,3,8:SSCB")
    assert report.result("initialize_does_not_change_nonempty_learnables").status == "passed"
    assert report.result("backward_is_repeatable").status == "passed"
    assert not [(c.name, c.message) for c in report.checks if c.status not in ("passed", "skipped")]


class _FakeQuantizer:
    """Quantization-aware training's fake quantizer, in float64 throughout: its outputs are
    multiples of 2^-8 (float32 values all), constant between steps, jumping at them."""

    def predict(self, X):
        return np.round(X * 256) / 256


class _FineQuantizer:
    """A quantizer whose step, 1/1000, is no power of two: its values lie on no grid of
    float32's, and it moves only where an element crosses a step, by the step."""

    def predict(self, X):
        return np.round(X * 1000) / 1000


class _CastsToFloat32:
    def predict(self, X):
        return np.tanh(X.astype(np.float32)).astype(X.dtype)


class _MeanSquareInFloat32:
    """One value per batch, computed in float32 and cast back: a single float32 value is a
    multiple of four float32 ulps of itself one time in four (a review found the grid claimed
    of it, and the cast passed, at one seed in twelve)."""

    output_format = "C"

    def predict(self, X):
        return np.sqrt(np.mean(X.astype(np.float32) ** 2, keepdims=True)).astype(X.dtype)


def test_a_few_float32_values_are_never_taken_for_a_grid():
    for seed in range(12):
        report = layercheck.check_layer(
            _MeanSquareInFloat32, "3:B", checks=["predict_is_consistent_in_type"], seed=seed
        )
        result = report.result("predict_is_consistent_in_type")
        assert result.status == "failed", (seed, result.message)


@pytest.mark.parametrize("layout", ["16,16,8,8:SSCB", "32,8,10:CBT"])
def test_a_quantizer_is_not_said_to_compute_in_float32_and_a_cast_still_is(layout):
    """A hunt for false alarms: the quantizer's steps read as round-off of 0.007 of their size,
    and 'every output is a float32 value: it computes in float32 inside and casts back'.
    float32 rounds each value to its own ulps; the quantizer's outputs lie on one grid."""
    for seed in range(3):
        for layer in (_FakeQuantizer, _FineQuantizer):
            quantizer = layercheck.check_layer(layer, layout, checks=["predict_is_consistent_in_type"], seed=seed)
            result = quantizer.result("predict_is_consistent_in_type")
            assert result.status == "passed", (layer, result.message)
        cast = layercheck.check_layer(_CastsToFloat32, layout, checks=["predict_is_consistent_in_type"], seed=seed)
        result = cast.result("predict_is_consistent_in_type")
        assert result.status == "failed" and "computes in float32 inside and casts back" in result.message


# -- a gradient returned coarser than asked is a dtype failure, judged at its own precision -----


def test_a_gradient_returned_in_float32_fails_its_type_once_and_nothing_else():
    obj = load_layer(CORPUS / "gradient_returned_float32.py")
    report = layercheck.check_layer(obj, example_layout(obj))
    assert set(not_ok(report)) == {"backward_is_consistent_in_type"}, not_ok(report)
    for name in (GRADIENTS, "backward_is_consistent_across_observations"):
        result = report.result(name)
        assert result.status == "passed", result.message
        assert result.details["judged_at_own_precision"] == {"dLdb" if "observations" in name else "b": "float32"}


def test_a_wrong_gradient_returned_in_float32_is_still_caught_and_named():
    obj = load_layer(CORPUS / "gradient_returned_float32_wrong.py")
    report = layercheck.check_layer(obj, example_layout(obj))
    result = report.result(GRADIENTS)
    assert result.status == "failed" and mentions(result.message, "b"), result.message
    assert [a["argument"] for a in result.details["arguments"] if a["status"] == "failed"] == ["b"]
    assert report.result("backward_is_consistent_in_type").status == "failed"


def test_gradients_returned_at_the_asked_precision_are_not_said_to_be_judged_at_another():
    obj = load_layer(CORPUS / "good_scale_bias.py")
    report = layercheck.check_layer(obj, example_layout(obj))
    assert "judged_at_own_precision" not in report.result(GRADIENTS).details
    assert "judged_at_own_precision" not in report.result("backward_is_consistent_across_observations").details


def test_a_layer_computing_in_float32_is_compared_at_float32_and_the_checks_say_so():
    obj = load_layer(CORPUS / "computes_in_float32.py")
    report = layercheck.check_layer(obj, example_layout(obj))
    assert set(not_ok(report)) == {"predict_is_consistent_in_type"}, not_ok(report)
    for name in ("predict_is_consistent_across_observations", "backward_is_consistent_across_observations"):
        assert report.result(name).details["judged_at_precision"] == {"float64": "float32"}, name


def test_a_layer_computing_at_the_asked_precision_is_not_said_to_be_judged_at_another():
    obj = load_layer(CORPUS / "good_tanh.py")
    report = layercheck.check_layer(obj, example_layout(obj))
    for name in ("predict_is_consistent_across_observations", "backward_is_consistent_across_observations"):
        assert "judged_at_precision" not in report.result(name).details, name


class _NoBackward:
    learnables = ("w", "b")

    def __init__(self):
        self.w = np.ones((4, 1))
        self.b = np.zeros((4, 1))

    def predict(self, X):
        return self.w * X + self.b


class _NoBackwardNoLearnables:
    def predict(self, X):
        return 2 * X


def test_learnables_without_a_backward_leave_the_gradient_check_incomplete_and_say_why():
    # NumPy differentiates nothing: such a layer cannot be trained, and no verdict was reached
    # on its gradients (issue 39); --strict fails it, as any incomplete check.
    report = layercheck.check_layer(_NoBackward, "4,3:CB")
    gradients = report.result("gradients_are_numerically_correct")
    assert gradients.status == Status.INCOMPLETE
    assert gradients.message == (
        "not checked: the layer has learnables (w, b) and defines no backward; NumPy computes no gradients, "
        "so they cannot be trained: write backward to return dLdX, dLdw, dLdb"
    )
    assert report.status == Status.INCOMPLETE and report.ok and report.fails(strict=True)


def test_a_layer_without_learnables_or_backward_skips_the_gradient_check():
    report = layercheck.check_layer(_NoBackwardNoLearnables, "4,3:CB")
    gradients = report.result("gradients_are_numerically_correct")
    assert gradients.status == Status.SKIPPED and gradients.message == "no backward defined"
    assert report.status == Status.PASSED


def test_the_api_checks_a_file_as_the_command_line_takes_it(tmp_path):
    # `check_layer("layers/conv.py")` (issue 39): the file's one target, or `path.py:Name`.
    report = layercheck.check_layer(str(SAMPLES / "prelu.py"))
    assert report.target.endswith("prelu.py") and report.status == Status.PASSED
    named = layercheck.check_layer(f"{SAMPLES / 'buggy' / 'srelu_swapped.py'}:SReLUSwapped")
    assert named.target.endswith("srelu_swapped.py:SReLUSwapped")
    assert [c.name for c in named.failures] == [GRADIENTS]
    two = tmp_path / "two.py"
    two.write_text(
        "class A:\n    example_layout = '3,2:CB'\n    def predict(self, X):\n        return X\n\n"
        "class B(A):\n    pass\n",
        encoding="utf-8",
    )
    with pytest.raises(UsageError, match=r"defines 2 targets \(A, B\): name one, as .*two.py:NAME"):
        layercheck.check_layer(two)
    assert layercheck.check_layer(f"{two}:B").status == Status.PASSED
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('no')\n", encoding="utf-8")
    failed = layercheck.check_layer(broken)
    assert failed.status == Status.ERROR and "RuntimeError" in failed.error
    with pytest.raises(UsageError, match="no such file"):
        layercheck.check_layer(tmp_path / "missing.py")


class _NormOneByD:
    """A normalization's backward returning dgamma and dbeta of shape (1, D), both transposed."""

    learnables = ("gamma", "beta")

    def __init__(self):
        self.gamma = np.ones((4, 1))
        self.beta = np.zeros((4, 1))

    def predict(self, X):
        return self.gamma * X + self.beta

    def backward(self, X, Y, dLdY, memory):
        return self.gamma * dLdY, (X * dLdY).sum(axis=1).reshape(1, 4), dLdY.sum(axis=1).reshape(1, 4)


def test_every_argument_whose_gradient_has_the_wrong_size_is_named():
    # Issue 39: the headline named gamma alone.
    result = layercheck.check_layer(_NormOneByD, "4,3:CB").result("backward_is_consistent_in_size")
    assert result.status == Status.FAILED
    assert result.message == (
        "the gradients of gamma and beta have shape (1, 4) but gamma and beta have shape (4, 1): each is transposed"
    )
    assert result.details["problem_arguments"] == ["gamma", "beta"] and result.details["argument"] == "gamma"


class _FirstObservationOnly:
    """numpy-ml's LSTM (a hunt): `dLdXt, _ = cell.backward(...)` unpacks the one gradient the
    cell returns, keeping the first observation's row: no sum anywhere."""

    def predict(self, X):
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        return (2 * dLdY)[:1]


class _BiasNotSummed:
    learnables = ("b",)

    def __init__(self):
        self.b = np.zeros((4, 1))

    def predict(self, X):
        return X + self.b

    def backward(self, X, Y, dLdY, memory):
        return dLdY, dLdY  # dL/db not summed over the observations


def test_a_gradient_with_an_axis_gone_is_not_said_to_be_a_sum_the_shape_cannot_show():
    result = layercheck.check_layer(_FirstObservationOnly, "2,3,4:BCT").result("backward_is_consistent_in_size")
    assert result.status == Status.FAILED
    assert result.message == (
        "the gradient of X has shape (1, 3, 4) but X has shape (2, 3, 4): it has size 1 along axis 0 (B), "
        "where the argument has 2 (summed, averaged or sliced over it?)"
    )
    kept = layercheck.check_layer(_BiasNotSummed, "4,3:CB").result("backward_is_consistent_in_size")
    assert (
        kept.message == "the gradient of b has shape (4, 3) but b has shape (4, 1): it was not summed over axis 1 (B)"
    )


class _UpcastingPredict:
    """predict returns float64 for float32 inputs; backward keeps the dtype of its dL/dY."""

    learnables = ("b",)

    def __init__(self):
        self.b = np.zeros((4, 1))

    def predict(self, X):
        return X + self.b.astype(np.float64)

    def backward(self, X, Y, dLdY, memory):
        return dLdY, dLdY.sum(axis=1, keepdims=True)


def test_a_gradient_of_the_dtype_of_a_wrong_output_says_where_its_dtype_came_from():
    # Issue 39: backward was blamed for the float64 dL/dY that predict's float64 output brought.
    report = layercheck.check_layer(_UpcastingPredict, "4,3:CB")
    assert report.result("predict_is_consistent_in_type").status == Status.FAILED
    result = report.result("backward_is_consistent_in_type")
    assert result.message == (
        "gradient dLdX with float32 inputs is float64, expected float32; the dL/dY backward was given is "
        "float64, as predict's output Y is (see predict_is_consistent_in_type)"
    )


class _UpcastingBackward(_UpcastingPredict):
    """predict keeps float32; backward upcasts on its own."""

    def predict(self, X):
        return X + self.b.astype(X.dtype)

    def backward(self, X, Y, dLdY, memory):
        return dLdY.astype(np.float64), dLdY.sum(axis=1, keepdims=True)


def test_a_gradient_upcast_by_backward_itself_is_blamed_on_backward_alone():
    result = layercheck.check_layer(_UpcastingBackward, "4,3:CB").result("backward_is_consistent_in_type")
    assert result.message == "gradient dLdX with float32 inputs is float64, expected float32"


class _RaisingFormat:
    def predict(self, X):
        return X

    def output_format(self, formats):
        raise ValueError("no format")


class _TwoFormats(_RaisingFormat):
    def output_format(self, formats):
        return ["CB", "CB"]


def test_an_output_format_that_breaks_is_the_format_checks_own_failure():
    """Said from the step's typed error, not from the words of the undecided check it would be."""
    raised = layercheck.check_layer(_RaisingFormat, "4,3:CB").result("output_format_is_consistent")
    assert raised.status == "failed"
    assert raised.message.startswith("output_format is invalid (output_format raised ValueError: no format (")
    broke = layercheck.check_layer(_TwoFormats, "4,3:CB").result("output_format_is_consistent")
    assert broke.status == "failed" and broke.message.startswith(
        "output_format is invalid (output_format('CB',) returned"
    )
