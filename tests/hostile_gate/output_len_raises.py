r"""Failed: predict raised RuntimeError: len of the returned tuple raises \(output_len_raises\.py:\d+ in __len__\)"""


class Pair(tuple):
    def __len__(self):
        raise RuntimeError("len of the returned tuple raises")


class OutputLenRaises:
    example_layout = "3,2:CB"
    num_outputs = 2

    def predict(self, X):
        return Pair((X, X))
