"""Reports for the HTML report's tests (tests/test_html.py, tests/test_html_browser.py): real
checks of a per-channel gradient bug, a layer whose backward raises and a correct layer, with
a target whose every text is hostile and one that could not be checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import layercheck
from layercheck.contract.loading import discover, import_module
from layercheck.environment import collect
from layercheck.numerics.gradients.findings import Cause, Finding, Region, RegionKind
from layercheck.results import CheckResult, Report, TargetReport

REPO = Path(__file__).resolve().parents[1]
CHANNEL_BUG = REPO / "tests" / "corpus_verdicts" / "channel_scale_bias_one_channel.py"
MISSING_DX = REPO / "sample_layers" / "buggy" / "srelu_missing_dx.py"
CORRECT = REPO / "sample_layers" / "prelu.py"
GRADIENTS = "gradients_are_numerically_correct"

# What a layer may put in a name or a message: markup that would run if it were not escaped
# (it sets window.__pwned), an attribute break-out, a terminal escape and a bidi override.
SCRIPT = "<script>window.__pwned = 1</script>"
BREAKOUT = '"><img src=x onerror="window.__pwned = 2">'
HOSTILE_NAME = f"evil{SCRIPT}.py:Layer{BREAKOUT}\x1b[31m\u202e"
HOSTILE_MESSAGE = f"predict raised ValueError: {SCRIPT} {BREAKOUT} \x1b[2J\u202egnp.exe\x00 </pre></li>"
HUGE = 1_000_000


def block(data: dict[str, Any]) -> dict[str, Any]:
    """A block of a diagnosis's partition, as the gradient check writes it: `data` completed."""
    return {"abs_error": 0.1, "tolerance": 1e-8, "probes": 2, "span": None, **data}


def diagnosis(partition: str, blocks: list[dict[str, Any]], argument: str = "X") -> dict[str, Any]:
    """A diagnosis as the gradient check writes it: its finding a region of `partition` (which
    the pictures then draw), and the `blocks` probed there, each completed (`block`)."""
    region = Region(RegionKind.BLOCKS, argument, partition, f"{partition}s", (blocks[0]["block"],), 1, 0.5)
    return {
        "finding": Finding(Cause.LOCALIZED, (argument,), region=region).to_dict(),
        "regions": [region.to_dict()],
        "blocks": {partition: [block(b) if isinstance(b, dict) else b for b in blocks]},
    }


def checked(path: Path, **options) -> TargetReport:
    name, layer = discover(import_module(path))[0]
    report = layercheck.check_layer(layer, layer.example_layout, **options)
    report.target = f"{path.relative_to(REPO).as_posix()}:{name}"  # labelled as `layercheck run` labels it
    return report


def hostile_target() -> TargetReport:
    return TargetReport(
        HOSTILE_NAME,
        layouts=["4,3:CB"],  # typed: a layout cannot carry text (a forged one is refused)
        checks=[
            CheckResult(
                "predict_does_not_error",
                "failed",
                HOSTILE_MESSAGE,
                {"explanation": [SCRIPT], "traceback": f'File "{SCRIPT}.py", line 1\n    {BREAKOUT}', "value": SCRIPT},
            ),
            CheckResult("outputs_are_finite", "failed", "x" * HUGE),
            CheckResult("predict_is_deterministic", "passed", duration_s=0.01),
        ],
        notes=[f"note {SCRIPT}"],
    )


def error_target() -> TargetReport:
    return TargetReport("broken/layer.py", error=f"import failed: {SCRIPT}", traceback=f"Traceback {BREAKOUT}")


def sample_report() -> Report:
    """Failures among passes, in an order that is not failures first (the correct layer first)."""
    targets = [
        checked(CORRECT),
        checked(CHANNEL_BUG, checks=[GRADIENTS, "predict_does_not_error"]),
        checked(MISSING_DX),
        hostile_target(),
        error_target(),
    ]
    return Report(targets, 1.5, environment=collect([0], ["cpu"], gpu_probe=None))
