"""Which names of a namespace code looks up (`sandbox.lookups`, issue 36): the effect a
replaced name can have, read from the bytecode. The answer may say "looked up" where a
closer reading would not; it never says "not looked up" where the code may read the name."""

from __future__ import annotations

import builtins
import types

import pytest

from layercheck.sandbox.lookups import Lookups, Reader

fakenp = types.ModuleType("fakenp")
fakenp.name = lambda: 1  # type: ignore[attr-defined]
other = types.ModuleType("other")
other.name = lambda: 2  # type: ignore[attr-defined]


def _functions(source: str) -> list[types.FunctionType]:
    """The functions `source` defines, with `np` the fake NumPy and `other` another module."""
    namespace: dict[str, object] = {"np": fakenp, "other": other, "__name__": "user", "__package__": "pkg.sub"}
    exec(compile(source, "<test>", "exec"), namespace)
    return [value for value in namespace.values() if isinstance(value, types.FunctionType)]


def _reader(source: str, name: str = "name", **kwargs) -> Reader | None:
    return Lookups(lambda: _functions(source)).reader(vars(fakenp), fakenp, name, **kwargs)


@pytest.mark.parametrize(
    "source",
    [
        "def f():\n    return np.name()",  # a global that is the module
        "def f():\n    from fakenp import name\n    return name",  # imported by name inside a function
        "def f():\n    return [np.name for _ in range(2)]",  # in a nested code object
        "def outer():\n    m = np\n    def f():\n        return m.name\n    return f\nf = outer()",  # a cell
    ],
)
def test_a_lookup_the_bytecode_places_in_the_namespace_is_certain(source):
    reader = _reader(source)
    assert reader is not None and reader.certain


@pytest.mark.parametrize(
    "source",
    [
        "def f(xp):\n    return xp.name()",  # a local: it may be the module
        "def f():\n    return make().name",  # a call's result: it may be the module
        "def f():\n    return getattr(np, 'name')",  # a lookup by a string the code holds
    ],
)
def test_a_lookup_that_may_read_the_name_counts_as_possible(source):
    reader = _reader(source)
    assert reader is not None and not reader.certain
    assert str(reader).endswith("(perhaps: it reads that name from an object it is given)")
    # Only where the namespace is handed around as a value, by code that may be handed it.
    assert _reader(source, as_value=False) is None
    functions = _functions(source)
    assert Lookups(lambda: functions, holders=lambda fn: False).reader(vars(fakenp), fakenp, "name") is None


def test_a_value_reached_from_two_places_may_be_either():
    # `.name` of what two paths reach is read of the module on one of them: Python 3.10 copies
    # the attribute read into each path (certain), later versions join them (possible).
    assert _reader("def f(c):\n    return (other if c else np).name") is not None
    assert _reader("def f(c):\n    return (np if c else other).name") is not None


def test_a_certain_reader_is_named_before_a_possible_one():
    reader = _reader("def a(xp):\n    return xp.name\n\ndef b():\n    return np.name")
    assert reader == Reader("user.b", True)


@pytest.mark.parametrize(
    "source",
    [
        "def f():\n    return other.name()",  # another module, for certain
        "def f():\n    from json import name\n    return name",  # imported from another module
        "def f():\n    return np.other_name()",  # another name
        "def f():\n    name = 3\n    return name",  # a local of that name
        "class C:\n    def f(self):\n        return self.name\nf = C.f",  # a method's instance
        "class C:\n    @classmethod\n    def f(cls):\n        return cls.name\nf = C.f.__func__",  # its class
    ],
)
def test_a_lookup_that_cannot_read_the_name_does_not_count(source):
    assert _reader(source) is None


def test_the_reader_is_named():
    assert _reader("def read_it():\n    return np.name()") == Reader("user.read_it", True)


def test_a_global_of_the_namespaces_own_functions_counts_with_globals_only():
    functions = _functions("def f():\n    return abs(-1)")
    namespace = functions[0].__globals__
    lookups = Lookups(lambda: functions)
    assert lookups.reader(namespace, None, "abs", globals_only=True) == Reader("user.f", True)
    # Another namespace's functions load their own globals, not this one's.
    assert lookups.reader(vars(other), None, "abs", globals_only=True) is None
    # An attribute of that name is no global.
    attribute = _functions("def g(x):\n    return x.abs")
    assert Lookups(lambda: attribute).reader(attribute[0].__globals__, None, "abs", globals_only=True) is None


def test_builtins_are_read_by_every_function_that_does_not_hide_them():
    functions = _functions("def f():\n    return len([])")
    lookups = Lookups(lambda: functions)
    assert lookups.reader(vars(builtins), builtins, "len") == Reader("user.f", True)
    assert lookups.reader(vars(builtins), builtins, "sorted") is None
    hidden = _functions("len = lambda x: 0\ndef f():\n    return len([])")
    assert Lookups(lambda: hidden).reader(vars(builtins), builtins, "len") is None
    # The interpreter itself looks these up: every import and class statement.
    assert Lookups(lambda: []).reader(vars(builtins), builtins, "__import__") is not None


def test_the_index_is_built_once_when_first_asked():
    asked = []

    def functions():
        asked.append(1)
        return _functions("def f():\n    return np.name()")

    lookups = Lookups(functions)
    assert asked == []
    lookups.reader(vars(fakenp), fakenp, "name")
    lookups.reader(vars(fakenp), fakenp, "other_name")
    assert asked == [1]


def test_import_a_dot_b_as_c_reads_b_from_the_package():
    # `import numpy.fft as fft` pushes numpy and reads its attribute fft: it reads numpy's
    # `fft`, and nothing of numpy.fft's.
    package = types.ModuleType("fakepkg")
    sub = types.ModuleType("fakepkg.sub")
    package.sub = sub  # type: ignore[attr-defined]
    sub.name = 1  # type: ignore[attr-defined]
    functions = _functions("def f():\n    import fakepkg.sub as s\n    return s")
    modules = {"fakepkg": package, "fakepkg.sub": sub}
    lookups = Lookups(lambda: functions, modules=lambda: modules)
    assert lookups.reader(vars(sub), sub, "sub") is None
    assert lookups.reader(vars(package), package, "sub") is not None
    # ... and what is read from the name it binds is read from the submodule.
    reading = _functions("def f():\n    import fakepkg.sub as s\n    return s.name")
    assert Lookups(lambda: reading, modules=lambda: modules).reader(vars(sub), sub, "name") is not None
