"""What is wrong with a gradient that failed, and where: every claim proven before it is said.

The diagnosis of each failed argument tries the causes of `claims` in order, then says
where the gradient is wrong (`localization`); a cause or a region is a `Finding`. Equal
findings about several arguments are grouped into one (`group`), so that a report says each
claim once.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from layercheck.numerics.arrays import namespace_of
from layercheck.numerics.gradients import claims
from layercheck.numerics.gradients.budget import Limit, WorkBudget
from layercheck.numerics.gradients.engine import ArgumentVerdict, Baseline, GradientProblem, Tolerances
from layercheck.numerics.gradients.evidence import Evidence
from layercheck.numerics.gradients.findings import BlockError, Diagnosis, ElementExample, Finding, Region
from layercheck.numerics.gradients.localization import Localization

__all__ = ["Diagnostician", "group"]


class Diagnostician:
    """Diagnoses the failed arguments of one gradient problem within a budget of calls of the
    layer; what several arguments share (the backward with a scaled dL/dY) is run once."""

    def __init__(
        self,
        problem: GradientProblem,
        base: Baseline,
        verdicts: list[ArgumentVerdict],
        tol: Tolerances,
        rng: Callable[[str], np.random.Generator],
        budget: WorkBudget | None = None,
    ):
        self.budget = WorkBudget(sys.maxsize) if budget is None else budget
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
            return self._diagnosis(claims.non_finite(evidence, index, finite))
        if not bool(xp.any(gradient)):
            return self._diagnosis(claims.zero(evidence, index))
        for claim in claims.CLAIMS:
            finding = claim(evidence, index, gradient)
            if finding is not None:
                return self._diagnosis(finding)
        finding, regions, examples, blocks = Localization(evidence, index).run(gradient)
        return self._diagnosis(finding, regions, examples, blocks)

    def _diagnosis(
        self,
        finding: Finding,
        regions: tuple[Region, ...] = (),
        examples: tuple[ElementExample, ...] = (),
        blocks: Mapping[str, tuple[BlockError, ...]] | None = None,
    ) -> Diagnosis:
        """The diagnosis, with the budget after which it stopped, where it did."""
        stopped = self.budget.stopped
        return Diagnosis(
            finding,
            regions,
            examples,
            {} if blocks is None else blocks,
            stopped_after_s=self.budget.seconds if stopped is Limit.TIMEOUT else None,
            stopped_after_calls=self.budget.calls if stopped is Limit.CALLS else None,
        )


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
