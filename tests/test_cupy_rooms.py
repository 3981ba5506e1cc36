"""tests/cupy_rooms.py: the stand-in's tests run in a process of their own and report here."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from cupy_rooms import STAND_IN

TESTS_DIR = STAND_IN.parent

SUITE = textwrap.dedent(
    """
    import importlib.util
    import pytest

    @pytest.mark.stand_in
    def test_sees_the_stand_in():
        import cupy
        assert "fake_gpu" in cupy.__file__

    @pytest.mark.stand_in
    def test_fails_there():
        assert 1 + 1 == 3, "arithmetic in the stand-in's process"

    @pytest.mark.stand_in
    def test_skips_there():
        pytest.skip("no such thing there")

    @pytest.mark.stand_in
    @pytest.mark.parametrize("n", [1, 2])
    def test_parametrized(n):
        assert n in (1, 2)

    def test_here_cupy_is_not_the_stand_in():
        spec = importlib.util.find_spec("cupy")
        assert spec is None or "fake_gpu" not in str(spec.origin)
    """
)


def _run(tmp_path, *args):
    (tmp_path / "test_suite.py").write_text(SUITE)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    stand_in: the stand-in's process\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAYERCHECK_TESTS_")}
    env["PYTHONPATH"] = str(TESTS_DIR)  # cupy_rooms, not the stand-in
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "cupy_rooms", "-p", "no:cacheprovider", "-rA", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_each_stand_in_test_reports_its_own_outcome_under_its_own_name(tmp_path):
    proc = _run(tmp_path)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "1 failed, 4 passed, 1 skipped" in out, out
    assert "PASSED test_suite.py::test_sees_the_stand_in" in out
    assert "PASSED test_suite.py::test_parametrized[2]" in out
    assert "SKIPPED [1] test_suite.py:14: no such thing there" in out
    assert "FAILED test_suite.py::test_fails_there" in out
    assert "arithmetic in the stand-in's process" in out  # the second process's failure text


def test_selection_reaches_the_second_process(tmp_path):
    proc = _run(tmp_path, "-k", "parametrized and 2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed, 5 deselected" in proc.stdout, proc.stdout


def test_without_stand_in_tests_no_second_process_runs(tmp_path):
    proc = _run(tmp_path, "-m", "not stand_in", "-p", "no:randomly")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed, 5 deselected" in proc.stdout, proc.stdout
