"""Correct: a plain function target, not a class. Target: plain_function.py:square
(a layer with no learnables and no backward, like MATLAB's functionLayer).
Every check must pass; backward checks are skipped."""


def square(X):
    return X * X


# Optional default layout for batch runs (a function attribute, as a class would have).
square.example_layout = "4,3,5,6:SSCB"
