"""What the diagnosis of a failed gradient may spend: calls of the layer, as many as the size of
the problem allows, a call on a few observations of a large batch counted for its share of one
on the whole batch, never seconds. The same seed then gives the same diagnosis on every
machine, loaded or not: a CI log and a laptop say the same thing. Time counts only as the
target's timeout, which the diagnosis never runs into: the failure, once proven, is always
reported, and the checks after it still run."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from enum import Enum

import numpy as np

from layercheck.clock import perf_counter
from layercheck.numerics.gradients.engine import EvaluationError, GradientProblem

__all__ = ["CALLS", "Limit", "OutOfBudget", "WorkBudget", "budgeted", "calls_for"]


class OutOfBudget(EvaluationError):
    """The diagnosis spent its budget. An EvaluationError, so that every claim being tested
    when it comes is left unsaid, as for a layer that raised at a perturbed point."""


class Limit(str, Enum):
    """What stopped a diagnosis before it ran to the end."""

    CALLS = "calls"  # its calls of the layer: the same on every machine
    TIMEOUT = "timeout"  # its share of the target's timeout


@dataclass(frozen=True)
class Calls:
    """How many calls of the layer a diagnosis may make: `most` for a small problem, as many as
    `work` elements of calls (a call's largest array) allow for a larger one, and never fewer
    than `fewest`, which every claim and a localization along one axis need (the diagnoses of
    every layer in tests/ took at most 145)."""

    most: int = 600
    fewest: int = 240
    work: int = 600 << 20

    def of(self, elements: int) -> int:
        return int(min(self.most, max(self.fewest, self.work // max(elements, 1))))


CALLS = Calls()


def calls_for(elements: int) -> int:
    """The calls a diagnosis may make where the problem's largest array has `elements`."""
    return CALLS.of(elements)


@dataclass
class WorkBudget:
    """The calls of the layer the diagnosis may make (`calls`, `calls_for` the problem's size),
    in calls on the whole problem: a call on part of it (a sub-batch's few observations) is
    charged its share of one (`GradientProblem.share`), so that localizing a large batch on
    its first observations has the calls it needs wherever the whole batch's size leaves few.
    At most `most` calls of any size (None: no such bound): what a call costs beside the
    arrays it computes does not shrink with them. Apart from them, the seconds it may never
    pass (`seconds`: a share of the target's timeout; None without one), counted from `start`."""

    calls: int
    seconds: float | None = None
    most: int | None = None
    made: int = 0  # the calls made, of any size
    spent: float = 0.0  # their cost in calls on the whole problem
    on_part: int = 0  # the calls made on part of it
    stopped: Limit | None = None
    deadline: float = math.inf

    def start(self) -> None:
        self.deadline = math.inf if self.seconds is None else perf_counter() + self.seconds

    def over(self) -> bool:
        """Whether the budget is spent (asked before work that costs more than a call: a
        random direction over a whole argument, a table of every element)."""
        if self.stopped is None:
            if self._run_out() is not None:
                self.stopped = Limit.CALLS
            elif perf_counter() > self.deadline:
                self.stopped = Limit.TIMEOUT
        return self.stopped is not None

    @property
    def stopped_at(self) -> int | None:
        """The calls it stopped after: `calls`, or `most` where those ran out first (None: it
        did not stop on its calls). No call is charged once it stopped: what ran out stays."""
        return self._run_out() if self.stopped is Limit.CALLS else None

    def _run_out(self) -> int | None:
        if self.spent >= self.calls:
            return self.calls
        return self.most if self.most is not None and self.made >= self.most else None

    def affords(self, calls: int, share: float = 1.0) -> bool:
        """Whether `calls` more calls of the layer, each `share` of one on the whole problem,
        fit in what is left of the budget (asked before work that is worth nothing unfinished:
        a table of every element)."""
        fits = self.spent + calls * share <= self.calls
        return not self.over() and fits and (self.most is None or self.made + calls <= self.most)

    def charge(self, share: float = 1.0) -> None:
        """Before each call of the layer (`share` of one on the whole problem): OutOfBudget
        once the budget is spent."""
        if self.over():
            raise OutOfBudget(f"the diagnosis spent its budget ({self.stopped_after()})")
        self.made += 1
        self.spent += share
        self.on_part += share < 1

    def stopped_after(self) -> str:
        """What the diagnosis had spent when it stopped, in words."""
        if self.stopped is Limit.TIMEOUT:
            return f"{self.seconds:.3g} s, its share of the timeout"
        return f"{self.stopped_at} calls of the layer"


def budgeted(problem: GradientProblem, budget: WorkBudget) -> GradientProblem:
    """`problem` whose every call of the layer is charged to `budget` first, for the problem's
    share of a call on the whole one."""
    share = problem.share

    def evaluate_many(moves: dict[int, np.ndarray]) -> list[np.ndarray]:
        budget.charge(share)
        return problem.evaluate_many(moves)

    def gradients(weights: list[np.ndarray]) -> list[np.ndarray | None]:
        budget.charge(share)
        return problem.gradients(weights)

    return dataclasses.replace(problem, evaluate_many=evaluate_many, gradients=gradients)
