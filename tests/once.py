"""What a test run makes once for all its pytest-xdist workers.

A module-scoped fixture that checks a whole corpus (10-20 s) runs in every worker that runs one
of its tests, and xdist spreads a module's tests over all of them. `once_per_run` makes such a
result once per run: the first worker to ask makes it, the others wait for it (a lock) and read
what it wrote, in the folder above their own temporary folders, which the run's workers share.
The result is JSON data: what the tests read must not depend on which worker made it.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

try:
    import fcntl
except ImportError:  # Windows: each xdist worker makes it for itself
    fcntl = None  # type: ignore[assignment]


def once_per_run(config: pytest.Config, name: str, make: Callable[[], Any]) -> Any:
    """`make()`'s result (JSON data), made once in this test run, whichever worker asks first."""
    run = getattr(config, "workerinput", {}).get("testrunuid")
    if run is None or fcntl is None:
        return make()
    folder = config._tmp_path_factory.getbasetemp().parent / f"{name}-{run}"  # type: ignore[attr-defined]
    folder.mkdir(exist_ok=True)
    shared = folder / "result.json"
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if shared.exists():
            return json.loads(shared.read_text(encoding="utf-8"))
        data = make()
        shared.write_text(json.dumps(data), encoding="utf-8")
        return data


def process_data(proc: subprocess.CompletedProcess) -> dict[str, Any]:
    """A finished process's exit status and output, as JSON data (`process_of` reads it back)."""
    return {
        "args": [str(arg) for arg in proc.args],
        "returncode": proc.returncode,
        "stdout": proc.stdout,
        "stderr": proc.stderr,
    }


def process_of(data: dict[str, Any]) -> subprocess.CompletedProcess:
    return subprocess.CompletedProcess(data["args"], data["returncode"], data["stdout"], data["stderr"])
