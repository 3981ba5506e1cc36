"""The documentation site (mkdocs.yml, docs/): its pages are where the README links, every
option, check and reproducer is named on its page (derived from the code, so a new one without
docs fails here), and the site builds with `mkdocs build --strict` where mkdocs is installed.

The examples on the pages are run by tests/test_docs_examples.py."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
import yaml

from layercheck.checks import REGISTRY, SCRIPTS
from layercheck.checks.layouts import OTHER_BATCH_SIZES
from layercheck.cli import cli
from layercheck.sandbox.integrity import INTEGRITY_CHECK

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
PAGES = (
    "index.md",
    "cli.md",
    "configuration.md",
    "contracts.md",
    "function-pairs.md",
    "keeps-gradients.md",
    "checks.md",
    "gradients.md",
    "gpu.md",
    "robustness.md",
    "reports.md",
    "pytest-and-ci.md",
    "api.md",
    "worked-failures.md",
)


def _page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def _nav_pages(nav) -> list[str]:
    found = []
    for entry in nav:
        for value in entry.values() if isinstance(entry, dict) else [entry]:
            found += _nav_pages(value) if isinstance(value, list) else [value]
    return found


def _mkdocs_config() -> dict:
    # mkdocs.yml uses no !!python tags; safe_load reads it.
    return yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))


def test_every_page_exists_and_is_in_the_navigation():
    config = _mkdocs_config()
    assert config["docs_dir"] == "docs" and config["site_name"] == "layercheck"
    assert sorted(_nav_pages(config["nav"])) == sorted(PAGES)
    assert sorted(p.name for p in DOCS.glob("*.md")) == sorted(PAGES)
    assert "examples.py" in config["exclude_docs"]


def _options(command: click.Command) -> list[str]:
    names = []
    for param in command.params:
        if isinstance(param, click.Option):
            names += [*param.opts, *param.secondary_opts]
    return names


def _commands() -> dict[str, click.Command]:
    return {"layercheck": cli, **{f"layercheck {name}": command for name, command in cli.commands.items()}}


def test_every_command_and_option_is_named_on_the_cli_page():
    page = _page("cli.md")
    missing = []
    for label, command in _commands().items():
        if f"`{label}`" not in page and label != "layercheck":
            missing.append(label)
        for option in _options(command):
            # Named as a word: `--json` must not count as named by `--json-x`.
            if not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", page):
                missing.append(f"{label} {option}")
    assert not missing, f"not named on docs/cli.md: {missing}"


def test_the_option_check_can_fail():
    extra = click.Option(["--not-documented-anywhere"])
    command = click.Command("x", params=[extra])
    assert "--not-documented-anywhere" in _options(command)
    assert "--not-documented-anywhere" not in _page("cli.md")


def test_every_check_is_named_on_the_checks_page():
    page = _page("checks.md")
    missing = [name for name in (*REGISTRY, INTEGRITY_CHECK) if name not in page]
    assert not missing, f"not named on docs/checks.md: {missing}"


def test_every_check_with_a_reproducer_is_named_on_the_reports_page():
    page = _page("reports.md")
    assert "layercheck.checks import SCRIPTS" in page  # the list is printed from SCRIPTS
    missing = [name for name in SCRIPTS if name not in page[page.index("## Reproducers") :]]
    assert not missing, f"reproducers not named on docs/reports.md: {missing}"


def test_every_public_name_is_on_the_api_page():
    import layercheck

    page = _page("api.md")
    missing = [name for name in layercheck.__all__ if not re.search(rf"^::: layercheck\.[\w.]*\b{name}$", page, re.M)]
    assert not missing, f"public names without a reference entry on docs/api.md: {missing}"


def test_batch_size_check_is_described_as_it_runs():
    # The check runs at the layout's batch size and at 2 (3 when the layout's is 2: OTHER_BATCH_SIZES), never
    # "one more": its description (list-checks, docs/checks.md) says so.
    description = REGISTRY["output_batch_size_matches_input"].description
    assert "one more" not in description
    assert (
        f"at {OTHER_BATCH_SIZES[0]} ({OTHER_BATCH_SIZES[1]} when the layout's is {OTHER_BATCH_SIZES[0]})" in description
    )
    assert "one more" not in _page("checks.md")


def test_the_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    pytest.importorskip("mkdocstrings_handlers.python")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert not (tmp_path / "site" / "examples.py").exists()
    for page in PAGES:
        if page != "index.md":
            assert (tmp_path / "site" / page.removesuffix(".md") / "index.html").is_file(), page
