"""Error: RuntimeError at import."""

raise RuntimeError("this module refuses to be imported")
