"""The time the diagnosis of a failed gradient may spend: localization and naming cost time,
not a number of probes, so that a failure once proven is reported in a bounded time whatever
the layer's size."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from layercheck.clock import perf_counter
from layercheck.numerics.gradients.engine import EvaluationError, GradientProblem

__all__ = ["OutOfTime", "TimeBudget", "budgeted"]


class OutOfTime(EvaluationError):
    """The diagnosis spent its time budget. An EvaluationError, so that every claim being
    tested when it comes is left unsaid, as for a layer that raised at a perturbed point."""


@dataclass
class TimeBudget:
    """Seconds the diagnosis may spend on calls of the layer, counted from `start`."""

    seconds: float
    deadline: float = math.inf
    spent: bool = False

    def start(self) -> None:
        self.deadline = perf_counter() + self.seconds

    def over(self) -> bool:
        """Whether the budget is spent (checked before work that costs more than a call: a
        random direction over a whole argument, a table of every element)."""
        if not self.spent and perf_counter() > self.deadline:
            self.spent = True
        return self.spent

    def charge(self) -> None:
        """Before each call of the layer: OutOfTime once the budget is spent."""
        if self.over():
            raise OutOfTime(f"the diagnosis spent its budget of {self.seconds:.3g} s")


def budgeted(problem: GradientProblem, budget: TimeBudget) -> GradientProblem:
    """`problem` whose every call of the layer is charged to `budget` first."""

    def evaluate_many(moves: dict[int, np.ndarray]) -> list[np.ndarray]:
        budget.charge()
        return problem.evaluate_many(moves)

    def gradients(weights: list[np.ndarray]) -> list[np.ndarray | None]:
        budget.charge()
        return problem.gradients(weights)

    return dataclasses.replace(problem, evaluate_many=evaluate_many, gradients=gradients)
