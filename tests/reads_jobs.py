"""A job for the tests of what a worker records of a target's reads (tests/test_reads.py). It lives
in a module of its own because a worker unpickles a job by importing its module by name."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from layercheck.running.reads import Reads


@dataclass(frozen=True)
class Reading:
    """Records what `code` reads, as a worker records a target's reads: `code` runs between
    `Reads.start` and `Reads.finish`, compiled as from the user's file `path` (the layer's side).
    Returns the inputs as plain data, whether the code ran to its end (`done`, set last), and
    whether `finish` put back what `start` replaced in `os` (`restored`)."""

    code: str
    path: str
    timeout: float = 60

    def run(self, emit: Any) -> dict[str, Any]:
        before = {name: getattr(os, name, None) for name in _REPLACED}
        reads = Reads.start()
        replaced = all(getattr(os, name, None) is not before[name] for name in _REPLACED if before[name] is not None)
        namespace = {"__name__": "users_module", "__file__": self.path}
        exec(compile(self.code, self.path, "exec"), namespace)
        inputs = reads.finish({})
        restored = replaced and all(getattr(os, name, None) is before[name] for name in _REPLACED)
        return {**inputs.to_data(), "done": namespace.get("done") is True, "restored": restored}


_REPLACED = ("environ", "environb", "stat", "lstat", "access", "readlink", "open")
