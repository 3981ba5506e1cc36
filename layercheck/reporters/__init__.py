"""Reporters turn results into console text, JSON and (later) JUnit; checks never import them."""
