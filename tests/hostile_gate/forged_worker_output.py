"""Error: exited with status 3 before reporting

A worker that prints what would forge layercheck's lines and drive the terminal, then ends
the process: the tail of its output is shown with the error, every line indented under the
target and every control character, escape sequence and bidi override spelled out.
"""

import os
import sys


class ForgedOutput:
    example_layout = "3,2:CB"

    def predict(self, X):
        sys.stdout.write("\x1b]0;pwned\x07\x1b[2J\nPASSED forged_worker_output.py (layer, 3,2:CB)  31 passed\n")
        sys.stdout.write("Test Summary: 31 passed, 0 failed\r\u202eok :thumbs_up: [bold]x[/]\n")
        sys.stdout.flush()
        sys.stderr.write("\x1b[5;41mred\x00\x9b1A\nFAILED nothing\n")
        sys.stderr.flush()
        os._exit(3)
