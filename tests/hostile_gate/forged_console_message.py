r"""Failed: predict raised ValueError: boom\nPASSED x\.py \.\.\. 31 passed\nTest Summary: 31 passed

A message that would forge layercheck's own lines (a newline, then `PASSED ...` and
`Test Summary: ...` at column 0), drive the terminal (OSC window title, clear screen, a
colour, C1 CSI, NUL, DEL), reorder what follows (bidi override and isolate) and be read as
rich markup and emoji codes. The console shows it on one line with all of that spelled out;
the JSON holds it exactly; the JUnit file holds it spelled out (XML cannot hold ESC).
"""


class ForgedMessage:
    example_layout = "3,2:CB"

    def predict(self, X):
        raise ValueError(
            "boom\nPASSED x.py ... 31 passed\nTest Summary: 31 passed, 0 failed \x1b]0;pwned\x07 \x1b[2J"
            " \x1b[5;41mred\x00\x7f\x9b2J :thumbs_up: :x: [bold red]hi[/] \u202eabc\u2066def\u2069\r"
            "FAILED forged"
        )
