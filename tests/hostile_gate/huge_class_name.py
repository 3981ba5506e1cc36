r"""Failed: predict raised ValueError: no

A class whose name is a million characters (made at import, so that this file stays
small): its label is cut once, visibly (`[... N of M characters cut ...]`), in the console,
the JSON and the JUnit report, which stay a few KB.
"""

NAME = "L" * 1_000_000


class _Huge:
    example_layout = "3,2:CB"

    def predict(self, X):
        raise ValueError("no")


globals()[NAME] = type(NAME, (_Huge,), {"__module__": __name__})
del _Huge
