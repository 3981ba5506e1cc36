"""`--json FILE`: the report in the public schema of DESIGN.md section 6."""

from __future__ import annotations

import json
import os

from layercheck.reporters.files import write_report
from layercheck.results import Report

__all__ = ["report_json", "write_json"]


def report_json(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2, allow_nan=False)


def write_json(report: Report, path: str | os.PathLike[str]) -> None:
    """Write as `reporters.files.write_report` does (atomically where `path` is a regular file)."""
    write_report(path, report_json(report))
