"""The evidence of a failed `gradients_are_numerically_correct`: what its reproducer
(`gradient_script`) needs to recompute each failing directional derivative.

For every argument whose gradient failed: the direction v and step t of its worst failing
probe (the one whose numbers the report states), so that the script computes the same
analytic side <dL/dA, v> (backward with dL/dY = W) and the same central difference
<W, Y(A + t v) - Y(A - t v)> / 2t at the same point; and a few elements to show, the wrong
ones the diagnosis measured first. With them: every argument at the compute precision and
the dtype the layer was given it in, the loss weights W, the seed, the layouts, and the
tolerance with where it comes from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from layercheck.checks.evidence import target_meta, tolerance_words
from layercheck.numerics.arrays import machine_epsilon
from layercheck.numerics.gradients.engine import ArgumentVerdict, Baseline, GradientProblem, Tolerances
from layercheck.numerics.gradients.evidence import worst_failing
from layercheck.numerics.gradients.findings import Diagnosis
from layercheck.reproducers.evidence import Evidence, ReproKind
from layercheck.results import Status

if TYPE_CHECKING:  # for annotations only
    from layercheck.checks.context import CheckContext

__all__ = ["ELEMENTS_SHOWN", "gradient_evidence"]

ELEMENTS_SHOWN = 3  # elements a reproducer measures one by one, to show where it is wrong
CHECK = "gradients_are_numerically_correct"


def gradient_evidence(
    session: CheckContext,
    problem: GradientProblem,
    baseline: Baseline,
    tol: Tolerances,
    dtype: str,
    verdicts: Sequence[ArgumentVerdict],
    diagnoses: Mapping[int, Diagnosis],
    evaluated: str,
) -> Evidence:
    """The evidence of the failing arguments of `verdicts`: see the module docstring."""
    layer = session.reference
    held = session.parameters(dtype)
    arguments = [*session.inputs(dtype, shared=True), *(held[name] for name in layer.parameter_names)]
    data: dict[str, Any] = {f"x{i}": value for i, value in enumerate(problem.values)}
    data.update({f"w{j}": weight for j, weight in enumerate(baseline.weights)})
    failures = []
    rng = session.rng("repro elements")
    for verdict in verdicts:
        probe = worst_failing(verdict) if verdict.status is Status.FAILED else None
        if probe is None or probe.argument != verdict.index:
            continue
        i = verdict.index
        data[f"v{i}"] = probe.direction
        eps = machine_epsilon(problem.coarse.get(i, tol.precision))
        failures.append(
            {
                "index": i,
                "step": probe.step,
                "analytic": probe.analytic,
                "numeric": probe.numeric,
                "tolerance": probe.tolerance,
                "masked": probe.masked,
                "terms_eps": max(eps, tol.eps),
                "elements": _elements(diagnoses.get(i), problem.values[i], rng),
            }
        )
    meta = {
        **target_meta(session, dtype, arguments),
        "evaluated": evaluated,
        "precision": str(tol.precision),
        "arguments": list(problem.names),
        "kinds": list(problem.kinds),
        "output_names": list(problem.outputs),
        "rtol": tol.rtol,
        "atol": tol.atol,
        "tolerance_source": tolerance_words(tol.rtol, tol.atol, tol.precision, dtype),
        "eps": tol.eps,
        "step_relative": tol.step,
        "resolution": tol.resolution[0],
        "rho": max(1e-3, 30 * tol.step),  # the engine's kink threshold (`_run_moves`)
        "spread": tol.measured_roundoff if tol.measured_roundoff > 16 * tol.eps else 0.0,
        "failures": failures,
    }
    return Evidence(ReproKind.GRADIENT, CHECK, meta, data)


def _elements(diagnosis: Diagnosis | None, value: Any, rng: np.random.Generator) -> list[list[int]]:
    """Elements to measure one by one: those the diagnosis found wrong (the worst first), else
    those it measured, else a few drawn at random."""
    examples = [] if diagnosis is None else list(diagnosis.examples)
    wrong = [e for e in examples if e.wrong]
    chosen = (wrong or examples)[:ELEMENTS_SHOWN]
    if chosen:
        return [list(e.index) for e in chosen]
    shape = tuple(int(n) for n in value.shape)
    size = int(np.prod(shape)) if shape else 1
    flat = rng.choice(size, size=min(ELEMENTS_SHOWN, size), replace=False)
    return [[int(i) for i in np.unravel_index(int(k), shape)] for k in flat]
