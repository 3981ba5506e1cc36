"""Failed: the gradient of X is off by a constant factor 2/3"""


class Meta(type):
    # A class whose __name__ and __qualname__ raise (inspect.getsourcelines asks for them): it
    # is still found, in its place, and judged; it was 'importing ... raised RuntimeError'.
    def __getattribute__(cls, name):
        if name in ("__name__", "__qualname__"):
            raise RuntimeError("no name")
        return super().__getattribute__(name)


class MetaName(metaclass=Meta):
    example_layout = "4,3:CB"

    def predict(self, X):
        return 3 * X

    def backward(self, X, Z, dLdZ, memory):
        return 2 * dLdZ
