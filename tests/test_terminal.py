"""A layer cannot write to the user's terminal (issue 27): workers have no controlling
terminal, so `/dev/tty` cannot be opened there, while the run itself keeps its terminal.

The run is started on a pseudo-terminal of its own, as a developer's shell would start it.
"""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="a pseudo-terminal as controlling terminal"
)

_WRITES_TO_TTY = """\
import os


class {name}:
    example_layout = "4,3:CB"

    def predict(self, X):
        fd = os.open("/dev/tty", os.O_WRONLY)  # ENXIO without a controlling terminal
        os.write(fd, b"\\x1b]0;pwned\\x07\\rFORGED PASSED x.py  31 passed\\nTest Summary: 31 passed, 0 failed\\n")
        os.close(fd)
        return 3 * X

    def backward(self, X, Z, dLdZ, memory):
        return 3 * dLdZ
"""


def _run_on_a_terminal(*args: str, cwd: Path, timeout: float = 120) -> tuple[int, str]:
    """`python -m layercheck ARGS` with a new pseudo-terminal as its controlling terminal; its
    exit status and everything that reached the terminal."""
    master, slave = pty.openpty()

    def own_terminal() -> None:  # a session leader opening a terminal makes it its own
        os.setsid()
        os.close(os.open(os.ttyname(slave), os.O_RDWR))
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    proc = subprocess.Popen(
        [sys.executable, "-m", "layercheck", *args],
        cwd=cwd,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        preexec_fn=own_terminal,
        env={**os.environ, "COLUMNS": "200"},
    )
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every writer closed the terminal
                    break
                if not chunk:
                    break
                seen += chunk
            elif proc.poll() is not None:
                break
        code = proc.wait(timeout=max(deadline - time.monotonic(), 1))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        os.close(master)
    return code, seen.decode("utf-8", errors="replace")


def _text(screen: str) -> str:
    """The screen without layercheck's own colours and cursor moves (CSI sequences)."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen)


def test_a_layer_cannot_write_to_the_terminal_the_run_is_on(tmp_path):
    (tmp_path / "tty_writer.py").write_text(_WRITES_TO_TTY.format(name="TtyWriter"))
    code, screen = _run_on_a_terminal("run", "tty_writer.py", cwd=tmp_path)
    assert "FORGED" not in screen and "pwned" not in screen, screen
    # what the layer tried is its failure, named (predict raised), and the run still reports
    assert code == 1, screen
    text = _text(screen)
    assert "FAILED tty_writer.py" in text and "predict raised OSError" in text and "Test Summary:" in text, text


def test_the_run_itself_keeps_its_terminal(tmp_path):
    # the lookalike: a correct layer on the same terminal passes, and the terminal shows it
    code, screen = _run_on_a_terminal("run", str(REPO / "sample_layers" / "prelu.py"), cwd=tmp_path)
    assert code == 0, screen
    assert "PASSED" in _text(screen) and "Test Summary:" in _text(screen), screen
