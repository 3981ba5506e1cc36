"""The sandbox: where a user's code runs apart from layercheck, and what holds it to account.

Everything else of layercheck (the plan of a run, its batches, the cache, the checks) asks the
sandbox for two things, through the names below:

- `run_jobs`: run jobs in worker processes forked from a forkserver, each with a memory cap
  and a timeout, stopped on a signal, and give each job's `Outcome` (what the worker sent, and
  how it ended); `reaping` leaves no process of a layer's behind, and `terminal` keeps workers
  off the user's terminal;
- `Guard`: hold a layer to what layercheck computes its verdicts with (`integrity`, judged by
  effect, with `lookups` reading which names that code looks up); its findings are the
  `INTEGRITY_CHECK` result; `reads_run_no_code` tells where a look would find nothing new
  (`inert`).

What a layer can do to the process, and what layercheck guarantees against it, is written once,
in the threat model of docs/robustness.md.
"""

from layercheck.sandbox.inert import reads_run_no_code
from layercheck.sandbox.integrity import INTEGRITY_ABOUT, INTEGRITY_CHECK, Allowed, ChangeKind, Finding, Guard
from layercheck.sandbox.isolation import (
    Job,
    Outcome,
    Watch,
    default_memory_cap,
    run_jobs,
    signal_reason,
    worker_sys_path,
)

__all__ = [
    "INTEGRITY_ABOUT",
    "INTEGRITY_CHECK",
    "Allowed",
    "ChangeKind",
    "Finding",
    "Guard",
    "Job",
    "Outcome",
    "Watch",
    "default_memory_cap",
    "reads_run_no_code",
    "run_jobs",
    "signal_reason",
    "worker_sys_path",
]
