r"""Passed"""

# Names, formats and the example layout as members of an enum.StrEnum (a str mixin before
# Python 3.11), whose __str__ is not always the value: each is taken by its plain value.

import enum
import sys

import numpy as np

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:

    class StrEnum(str, enum.Enum):
        pass


class Names(StrEnum):
    SCALE = "scale"
    COUNT = "count"

    def __str__(self):  # an Enum's own __str__ says "Names.SCALE"
        return f"{type(self).__name__}.{self.name}"


class Formats(StrEnum):
    LAYOUT = "4,3,2:SCB"
    SCB = "SCB"


class EnumNamed:
    example_layout = Formats.LAYOUT
    learnables = (Names.SCALE,)
    state = [Names.COUNT]

    def __init__(self):
        self.scale = np.linspace(0.5, 1.5, 3)
        self.count = np.zeros(1)

    def output_format(self, fmt):
        return Formats.SCB

    def predict(self, X):
        return X * self.scale[None, :, None], self.count + 1

    def backward(self, X, Y, dLdY, dLdcount, memory):
        return dLdY * self.scale[None, :, None], (dLdY * X).sum(axis=(0, 2)), dLdcount
