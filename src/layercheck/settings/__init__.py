"""Settings: every option parsed and validated once (command line, YAML and API alike), and the
YAML configuration files."""

__all__: list[str] = []  # the modules of this place are its interface
