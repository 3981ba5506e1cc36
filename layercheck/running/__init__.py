"""Running targets: one target's session and checks, worker isolation, and batches of targets."""
