"""Running targets: one target's session and checks, worker isolation, and batches of targets."""

__all__: list[str] = []  # the modules of this place are its interface
