"""`--json FILE`: the report in the public schema of DESIGN.md section 6."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from layercheck.results import Report, plain

__all__ = ["report_json", "write_atomically", "write_json"]


def report_json(report: Report) -> str:
    return json.dumps(plain(report.to_dict()), indent=2, allow_nan=False)


def write_json(report: Report, path: str | os.PathLike) -> None:
    """Write atomically, so that an interrupted run never leaves half a file."""
    write_atomically(Path(path), report_json(report))


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
