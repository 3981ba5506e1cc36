"""Every example of README.md and of the docs pages runs as shown, and every output shown is the
code's own (docs/examples.py: the convention, and the runner this test calls).

The first test runs the real pages. The others hold the runner to the convention on small
synthetic pages: it must be able to fail, naming the page and the line."""

from __future__ import annotations

import re
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from conftest import docs_examples

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"


examples = docs_examples

# The reference pages the README links to (the docs site; docs/examples.py is only its runner).
DOC_PAGES = (
    "docs/index.md",
    "docs/cli.md",
    "docs/configuration.md",
    "docs/contracts.md",
    "docs/function-pairs.md",
    "docs/keeps-gradients.md",
    "docs/checks.md",
    "docs/gradients.md",
    "docs/gpu.md",
    "docs/robustness.md",
    "docs/reports.md",
    "docs/pytest-and-ci.md",
    "docs/api.md",
    "docs/worked-failures.md",
)
DOCS_SITE_HERE = (REPO / "docs" / "index.md").exists()


@pytest.mark.docs_pages
@pytest.mark.parametrize("page", examples.pages(), ids=lambda page: str(page.relative_to(REPO)))
def test_every_example_of_the_page_runs_as_shown(page):
    result = examples.check_page(page)
    assert not result.problems, "\n\n".join(map(str, result.problems))


# -- the runner can fail, and says where ----------------------------------------------------------


def _page(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "page.md"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _problems(path: Path) -> list[tuple[int, str]]:
    return [(problem.line, problem.message) for problem in examples.check_page(path).problems]


def test_a_failing_command_is_reported_with_its_page_and_line(tmp_path):
    page = _page(
        tmp_path,
        """\
        # A page

        ```bash
        true
        # a comment, then a command split over two lines
        test -d sample_layers && \\
            test -d nowhere
        ```
        """,
    )
    result = examples.check_page(page)
    (problem,) = result.problems
    assert problem.line == 6 and problem.page == page
    assert "`test -d sample_layers && test -d nowhere` exited 1, expected 0" in problem.message
    assert str(problem).startswith(f"{page}:6: ")


def test_exits_n_is_the_status_expected_and_a_wrong_one_is_reported(tmp_path):
    page = _page(
        tmp_path,
        """\
        ```bash
        exit 3  # exits 3
        false  # exits 2
        ```

        ```python
        # exits 4
        raise SystemExit(4)
        ```

        ```python
        raise SystemExit(5)
        ```
        """,
    )
    assert _problems(page) == [
        (3, "`false  # exits 2` exited 1, expected 2; its output:\n"),
        (11, "the python block exited 5, expected 0 (add `# exits N` if that is intended); its output:\n"),
    ]


def test_a_stale_output_block_is_reported_and_write_rewrites_it(tmp_path):
    page = _page(
        tmp_path,
        """\
        Intro.

        <!-- output: printf 'hello\\nworld\\n'; exit 1 -->
        ```text
        hello
        word
        ```
        """,
    )
    ((line, message),) = _problems(page)
    assert line == 4 and "differs from the block" in message and "-word\n+world" in message
    result = examples.check_page(page, write=True)
    assert result.problems == [] and result.rewritten is not None
    assert "```text\nhello\nworld\n```" in result.rewritten
    page.write_text(result.rewritten, encoding="utf-8")
    assert _problems(page) == []


@pytest.mark.parametrize("cupy_installed", [False, True])
def test_output_without_cupy_is_compared_only_where_cupy_is_not_installed(tmp_path, monkeypatch, cupy_installed):
    monkeypatch.setattr(examples, "CUPY_INSTALLED", cupy_installed)
    page = _page(
        tmp_path,
        """        <!-- output-without-cupy: echo no CuPy here -->
        ```text
        stale
        ```
        """,
    )
    result = examples.check_page(page, write=True)
    if cupy_installed:  # run, said, neither compared nor written
        assert result.problems == [] and result.rewritten is None
        assert len(result.uncompared) == 1 and result.uncompared[0].endswith(":2: CuPy is installed here")
    else:
        assert result.uncompared == [] and "no CuPy here" in (result.rewritten or "")
        assert "differs from the block" in _problems(page)[0][1]


def test_write_keeps_a_block_that_differs_only_in_what_changes_between_runs(tmp_path):
    page = _page(
        tmp_path,
        f"""\
        <!-- output: echo "took 0.31 s in $PWD" -->
        ```text
        took 12.5 s in {tempfile.gettempdir()}/old-folder
        ```
        """,
    )
    assert examples.check_page(page, write=True).rewritten is None


def test_blocks_later_on_the_page_see_the_files_earlier_blocks_wrote(tmp_path):
    page = _page(
        tmp_path,
        """\
        <!-- file: pkg/answer.py -->
        ```python
        VALUE = 42
        ```

        ```python
        import sys

        sys.path.insert(0, "pkg")
        from answer import VALUE

        assert VALUE == 42
        open("made.txt", "w").write("made")
        ```

        ```bash
        test "$(cat made.txt)" = made && test -f configs/sample_layers.yaml
        ```
        """,
    )
    assert _problems(page) == []


def test_examples_run_with_the_fixed_environment_and_this_interpreter_first(tmp_path):
    bin_dir = Path(sys.executable).parent
    page = _page(
        tmp_path,
        f"""\
        ```bash
        test "$COLUMNS" = 100 && test "$NO_COLOR" = 1 && test "$TERM" = dumb
        test -z "$GITHUB_ACTIONS" && test -z "$CI"
        test "$(command -v python)" = "{bin_dir}/python"
        test "$(command -v layercheck)" = "{bin_dir}/layercheck"
        ```
        """,
    )
    assert _problems(page) == []


@pytest.mark.parametrize("reason", sorted(examples.NOT_RUN_REASONS))
def test_the_not_run_reasons_excuse_a_block(tmp_path, reason):
    page = _page(tmp_path, f"<!-- not-run: {reason} -->\n```bash\nexit 1\n```\n")
    assert _problems(page) == []


@pytest.mark.parametrize(
    "text, line, said",
    [
        ("<!-- not-run: slow -->\n```bash\nexit 1\n```\n", 1, "not-run reason 'slow' is not one of install, clone"),
        ("<!-- not-run: install -->\n\n```bash\ntrue\n```\n", 1, "not on the line right before"),
        ("```yaml\nkey: value\n```\n", 1, "a ```yaml block that is neither run nor written"),
        ("```\nanything\n```\n", 1, "a ```(no language) block that is neither run nor written"),
        ("<!-- output: echo hi -->\n```bash\nhi\n```\n", 2, "an output block is a ```text block"),
        ("<!-- outptu: echo hi -->\n```text\nhi\n```\n", 1, "unknown directive 'outptu'"),
        ("<!-- file: ../escape.py -->\n```python\nx = 1\n```\n", 2, "give a path inside the page's folder"),
        ("```bash\npython -m pip install numpy\n```\n", 2, "runs in a <!-- not-run: install --> block"),
        ("```bash\ngit clone https://example.org/x.git\n```\n", 2, "runs in a <!-- not-run: clone --> block"),
    ],
    ids=["reason", "stray", "yaml", "no language", "output language", "directive", "file outside", "pip", "git"],
)
def test_nothing_dodges_the_convention(tmp_path, text, line, said):
    ((found_line, message),) = _problems(_page(tmp_path, text))
    assert found_line == line and said in message, message


def test_the_command_line_checks_and_fails_naming_the_page(tmp_path, capsys):
    page = _page(tmp_path, "```bash\nfalse\n```\n")
    assert examples.main(["--check", str(page)]) == 1
    assert f"{page}:2: `false` exited 1" in capsys.readouterr().err
    page.write_text("```bash\ntrue\n```\n", encoding="utf-8")
    assert examples.main(["--check", str(page)]) == 0


def test_blocks_inside_list_items_keep_their_indentation_when_rewritten(tmp_path):
    page = _page(tmp_path, "- item:\n\n  <!-- output: echo fresh -->\n  ```text\n  stale\n  ```\n")
    rewritten = examples.check_page(page, write=True).rewritten
    assert rewritten == "- item:\n\n  <!-- output: echo fresh -->\n  ```text\n  fresh\n  ```\n"


# -- normalization ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "one, other",
    [
        ("PASSED a.py  18 passed in 0.19s", "PASSED a.py  18 passed in 12.07s"),
        ("Time elapsed: 1.03 s.", "Time elapsed: 3 s."),
        ("took 120 ms", "took 7 ms"),
        ('{"duration_s": 0.0123, "stopped_after_s": 2.5}', '{"duration_s": 1e-05, "stopped_after_s": 0.25}'),
        (f'File "{tempfile.gettempdir()}/layercheck-docs-ab12/x.py"', 'File "<tmp>/x.py"'),
        ("worker pid 4242 died", "worker pid 17 died"),
        ("written 2025-01-31T12:00:59Z", "written 2026-12-01T08:30:00+02:00"),
        # layercheck wraps at COLUMNS: where a line breaks depends on the durations in it
        ("PASSED b.py  18 passed, 13 skipped in\n  0.15s", "PASSED b.py  18 passed, 13 skipped in 10.15s"),
    ],
)
def test_normalize_makes_what_changes_between_runs_equal(one, other):
    assert examples.normalize(one) == examples.normalize(other)


@pytest.mark.parametrize(
    "one, other",
    [
        ("18 passed, 13 skipped", "17 passed, 14 skipped"),
        ("layout 8,8,4,2:SSCB", "layout 8,8,4,3:SSCB"),
        ("off by 30.5 where 4.59e-07 is allowed", "off by 30.6 where 4.59e-07 is allowed"),
        ("the gradients of al and tr", "the gradients of tr and al"),
        ("checked with 2 and 3 observations", "checked with 2 and 4 observations"),
    ],
)
def test_normalize_keeps_what_the_code_decides(one, other):
    assert examples.normalize(one) != examples.normalize(other)


# -- what the README must be --------------------------------------------------------------------


def test_the_readme_is_short_and_reaches_writing_a_layer_early():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250
    assert lines.index("## Writing a layer") < 120


def test_the_quick_start_is_two_commands_and_ci_runs_the_second_as_written():
    quick_start = [
        block
        for block in examples.blocks(README.read_text(encoding="utf-8"))
        if block.directive is not None and "pip install -e" in block.text
    ][0]
    install_and_run, install_and_test = quick_start.text.splitlines()
    assert install_and_run.startswith("pip install -e . && layercheck run ")
    assert install_and_test == 'pip install -e ".[test]" && python -m pytest -q -n auto'
    ci = REPO / ".ci" / "run"
    if not ci.exists():
        pytest.skip(".ci/ is not part of an sdist")
    assert install_and_test.replace('"', '\\"') in ci.read_text(encoding="utf-8")  # room 1's title


# `pip install layercheck`, `pip install "layercheck[cuda12]"`: from an index that does not have
# it. A direct reference (`"layercheck @ git+https://..."`) installs from the repository: fine.
FROM_AN_INDEX = re.compile(r"""pip install\s+(?:-[-\w]+(?:=\S+)?\s+)*["']?layercheck\b(?!(?:\[[^\]]*\])?\s*@)""")


@pytest.mark.parametrize(
    "text, offered",
    [
        ('pip install "layercheck[cuda12]"', True),
        ("pip install layercheck", True),
        ("pip install -U layercheck", True),
        ('pip install -e ".[cuda12]"', False),
        ("pip install -e .", False),
        ('pip install "cupy-cuda12x[ctk]"', False),
        ('pip install "layercheck @ git+https://github.com/OWNER/layercheck"', False),
        ('pip install "layercheck[cuda12] @ git+https://github.com/OWNER/layercheck"', False),
    ],
)
def test_an_install_from_an_index_is_recognized(text, offered):
    assert bool(FROM_AN_INDEX.search(text)) is offered


@pytest.mark.parametrize("page", examples.pages(), ids=lambda page: str(page.relative_to(REPO)))
def test_no_page_installs_layercheck_from_an_index(page):
    """layercheck is installed from a checkout (`pip install -e .`); it is not on PyPI."""
    offers = [line for line in page.read_text(encoding="utf-8").splitlines() if FROM_AN_INDEX.search(line)]
    assert offers == []


def test_the_readme_links_every_reference_page_and_every_link_resolves():
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    assert set(DOC_PAGES) <= set(links)
    local = [link for link in links if "://" not in link]
    if not DOCS_SITE_HERE:  # the docs site is written beside this README; its runner is already here
        local = [link for link in local if link not in DOC_PAGES]
    assert [link for link in local if not (REPO / link).exists()] == []


@pytest.mark.parametrize(
    "shown, fresh, same",
    [
        ("off by 30.5 where 1.61e-07 is allowed", "off by 30.5 where 1.64e-07 is allowed", True),
        ("off by 0.169 where 3.32e-07 is allowed", "off by 0.169 where 3.6e-07 is allowed", True),  # another CPU
        ("off by 30.5 where 1.61e-07 is allowed", "off by 30.5 where 2.01e-07 is allowed", False),
        ("17 passed, 1 failed", "18 passed, 1 failed", False),  # integers are exact
        ("at index (0, 2, 1, 5)", "at index (0, 2, 1, 4)", False),
        ("Python 3.13.0", "Python 3.13.1", False),  # a version is not a float
        ("relative error 0.287", "relative error 0.287 (factor 2)", False),
        ("in 0.59 s\nTest Summary", "in 1.2 s Test Summary", True),  # durations and wrapping
    ],
)
def test_same_output_allows_round_off_in_floats_and_nothing_else(shown, fresh, same):
    assert examples.same_output(shown, fresh) is same


def test_normalize_drops_the_carets_python_3_11_prints_under_a_traceback_line():
    with_carets = '  File "x.py", line 3, in f\n    return dLdX\n           ^^^^\nNameError: x\n'
    assert examples.normalize(with_carets) == examples.normalize(with_carets.replace("           ^^^^\n", ""))
    assert examples.normalize("a ^ b") != examples.normalize("a b")  # a caret in a line is kept


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        (
            "layercheck run sample_layers/prelu.py --layout 24,24,20,128:SSCB",
            ["run", "sample_layers/prelu.py", "--layout", "24,24,20,128:SSCB"],
        ),
        (
            'layercheck run sample_layers/ -q -k "prelu and not gradients"  # exits 1',
            ["run", "sample_layers/", "-q", "-k", "prelu and not gradients"],
        ),
        ("layercheck --help", ["--help"]),
        ("layercheck run sample_layers/ | tail -1", None),
        ("layercheck run sample_layers/ > out.txt", None),
        ("layercheck run $HOME/x.py", None),
        ("layercheck run *.py", None),
        ("GITHUB_ACTIONS=true layercheck run x.py", None),
        ("layercheck run a.py && layercheck run b.py", None),
        ('layercheck run "$(pwd)/x.py"', None),
        ("python -m layercheck run x.py", None),
    ],
)
def test_only_a_plain_layercheck_command_runs_in_the_pages_process(command, argv):
    # Anything bash would read otherwise (a pipe, a redirection, a variable, a pattern) is bash's.
    assert examples._plain_layercheck(["bash", "-c", command]) == (None if examples.CUPY_INSTALLED else argv)
