"""What is wrong with a gradient that failed, and where: every claim proven before it is said.

The diagnosis of each failed argument tries the causes of `claims` in order, then says
where the gradient is wrong (`localization`); a cause or a region is a `Finding`. Equal
findings about several arguments are grouped into one (`group`), so that a report says each
claim once.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

import numpy as np

from layercheck.numerics.arrays import namespace_of
from layercheck.numerics.gradients import claims
from layercheck.numerics.gradients.budget import TimeBudget
from layercheck.numerics.gradients.engine import ArgumentVerdict, Baseline, GradientProblem, Tolerances
from layercheck.numerics.gradients.evidence import Evidence
from layercheck.numerics.gradients.findings import Diagnosis, Finding
from layercheck.numerics.gradients.localization import Localization

__all__ = ["Diagnostician", "group"]


class Diagnostician:
    """Diagnoses the failed arguments of one gradient problem within a time budget; what
    several arguments share (the backward with a scaled dL/dY) is run once."""

    def __init__(
        self,
        problem: GradientProblem,
        base: Baseline,
        verdicts: list[ArgumentVerdict],
        tol: Tolerances,
        rng: Callable[[str], np.random.Generator],
        budget: TimeBudget | None = None,
    ):
        self.budget = TimeBudget(math.inf) if budget is None else budget
        self.budget.start()
        self.evidence = Evidence(problem, base, verdicts, tol, rng, self.budget)

    def diagnose(self, index: int) -> Diagnosis:
        evidence = self.evidence
        gradient = evidence.base.gradients[index]
        assert gradient is not None  # a failed argument has a gradient
        finding: Finding | None
        xp = namespace_of(gradient)
        finite = xp.isfinite(gradient)
        if not bool(finite.all()):
            return Diagnosis(claims.non_finite(evidence, index, finite), stopped_after_s=self._stopped())
        if not bool(xp.any(gradient)):
            return Diagnosis(claims.zero(evidence, index), stopped_after_s=self._stopped())
        for claim in claims.CLAIMS:
            finding = claim(evidence, index, gradient)
            if finding is not None:
                return Diagnosis(finding, stopped_after_s=self._stopped())
        finding, regions, examples, blocks = Localization(evidence, index).run(gradient)
        return Diagnosis(finding, regions, examples, blocks, self._stopped())

    def _stopped(self) -> float | None:
        """The budget after which the diagnosis stopped; None where it ran to the end."""
        return self.budget.seconds if self.budget.spent else None


def group(findings: Sequence[Finding]) -> list[Finding]:
    """Each claim once: a swap found from both of its arguments is one finding, a claim about
    backward as a whole is one for every argument, and the same claim about several arguments
    is one finding naming them all (in the order first found)."""
    grouped: list[Finding] = []
    for finding in findings:
        for k, seen in enumerate(grouped):
            if finding.cause is seen.cause and set(finding.arguments) == set(seen.arguments):
                same = finding.detail == seen.detail  # a swap, seen from its other argument
            else:
                same = finding.same_claim(seen)
            if same:
                merged = seen.arguments + tuple(a for a in finding.arguments if a not in seen.arguments)
                grouped[k] = dataclasses.replace(seen, arguments=merged)
                break
        else:
            grouped.append(finding)
    return grouped
