"""Error: timed out while importing (an endless loop at module level)."""

while True:
    pass
