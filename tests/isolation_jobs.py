"""Jobs for the worker-process tests (tests/test_isolation.py). They live in a module of
their own because a worker unpickles a job by importing its module by name."""

from __future__ import annotations

import ctypes
import os
import time
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Sleep:
    """Sleeps, then returns its value: completion order differs from submission order."""

    seconds: float
    value: int
    timeout: float = 30

    def run(self, emit):
        emit("start", f"sleep {self.seconds}")
        time.sleep(self.seconds)
        return self.value


@dataclass(frozen=True)
class Hostile:
    """Ends its worker in one of the ways a user's layer can."""

    how: str
    timeout: float = 2

    def run(self, emit):
        emit("start", self.how)
        if self.how == "hang":
            while True:
                pass
        if self.how == "segfault":
            ctypes.string_at(0)
        if self.how == "os_exit":
            os._exit(3)
        if self.how == "raise":
            raise RuntimeError("a defect of the job itself")
        if self.how == "allocate":  # 4 GiB, over the cap the test sets
            try:
                return float(np.ones(2**29).sum())
            except MemoryError as exc:
                return f"MemoryError: {exc}"
        if self.how == "print":
            print("chatter on stdout")
            os.write(2, b"chatter on fd 2\n")
            return "quiet"
        raise ValueError(self.how)


@dataclass(frozen=True)
class Environment:
    """Returns what a worker sees of its parent: working folder and environment."""

    name: str
    timeout: float = 30

    def run(self, emit):
        return os.getcwd(), os.environ.get(self.name)


@dataclass(frozen=True)
class StartsAChild:
    """Starts a child that would sleep for long, writes its pid to `path`, and returns."""

    path: str
    timeout: float = 30

    def run(self, emit):
        import subprocess

        pid = subprocess.Popen(["sleep", "1000"], start_new_session=True).pid
        with open(self.path, "w") as f:
            f.write(str(pid))
        return pid


@dataclass(frozen=True)
class IsAlive:
    """Whether the process whose pid is in `path` still runs (a zombie does not)."""

    path: str
    timeout: float = 30

    def run(self, emit):
        with open(self.path) as f:
            pid = f.read()
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            return False
        return stat[stat.rindex(")") + 2] not in "ZX"


@dataclass(frozen=True)
class WaitFor:
    """Says it started, then waits for `path` to exist (at most `limit` seconds): a test
    releases it once it has seen what it waits for, so that nothing hangs on timing."""

    path: str
    value: int
    limit: float = 60
    timeout: float = 120

    def run(self, emit):
        emit("start", f"waiting for {os.path.basename(self.path)}")
        deadline = time.monotonic() + self.limit
        while not os.path.exists(self.path) and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.value
