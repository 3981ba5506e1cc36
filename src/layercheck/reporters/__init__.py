"""Reporters turn results into console text, JSON and JUnit XML; checks never import them."""

__all__: list[str] = []  # the modules of this place are its interface
