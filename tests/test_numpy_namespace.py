"""The public face of ``functrans.numpy``: its namespaces list exactly the public API, every
function carries its public name (so errors name what the user called), NumPy's
functions dispatch to ours through explicit tables, and creation functions keep arrays on
the device of their inputs."""
from __future__ import annotations

import inspect
import types

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import backend
from functrans.numpy import _array_methods

#: every family module of functrans.numpy (the dispatch table's list, so a new family is
#: checked here as soon as it dispatches)
FAMILIES = list(_array_methods.FAMILIES)
NAMESPACES = {"functrans.numpy": fnp, "functrans.numpy.linalg": fnp.linalg,
              "functrans.numpy.fft": fnp.fft}


@pytest.mark.parametrize("module", NAMESPACES.values(), ids=NAMESPACES.keys())
def test_dir_is_exactly_the_public_api(module):
    assert len(set(module.__all__)) == len(module.__all__), "a name is listed twice"
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert not missing, f"in __all__ but not defined: {missing}"
    assert dir(module) == sorted(module.__all__)
    modules = [n for n in dir(module) if isinstance(getattr(module, n), types.ModuleType)]
    assert modules == (["fft", "linalg"] if module is fnp else [])
    assert not [n for n in dir(module) if n.startswith("_")]


def test_every_family_export_is_public_and_every_public_name_has_a_family():
    exported = {}
    for family in FAMILIES:
        for name in family.__all__:
            assert name not in exported, f"{name} exported by {exported.get(name)} and " \
                                         f"{family.__name__}"
            exported[name] = family.__name__
            assert getattr(fnp, name) is getattr(family, name), name
    assert set(exported) == set(fnp.__all__) - {"fft", "linalg"}


def _public_callables() -> list:
    return list(_iter_public_callables())


def _iter_public_callables():
    for module_name, module in NAMESPACES.items():
        for name in module.__all__:
            value = getattr(module, name)
            if callable(value) and not isinstance(value, type):
                yield pytest.param(module_name, name, value, id=f"{module_name}.{name}")


@pytest.mark.parametrize("module_name,name,fn", _public_callables())
def test_functions_carry_their_public_name(module_name, name, fn):
    assert fn.__name__ == name
    if getattr(fn, "__module__", "").startswith("functrans"):  # ours, not NumPy's re-exports
        assert fn.__qualname__ == name
        assert fn.__module__ == module_name
        assert fn.__code__.co_name == name


@pytest.mark.parametrize("module_name,name,fn", _public_callables())
def test_argument_errors_name_the_public_function(module_name, name, fn):
    with pytest.raises(TypeError) as unexpected:
        fn(not_an_argument_of_any_function=1)
    assert str(unexpected.value).startswith(f"{name}() "), str(unexpected.value)
    try:
        params = inspect.signature(fn).parameters.values()
    except ValueError:  # a builtin without a signature
        return
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return
    with pytest.raises(TypeError) as too_many:
        fn(*[1.0] * (len(params) + 1))
    assert str(too_many.value).startswith(f"{name}() takes"), str(too_many.value)


def test_sin_with_two_arguments_names_sin():
    with pytest.raises(TypeError, match=r"^sin\(\) takes 1 positional argument but 2 were"):
        fnp.sin(1.0, 2.0)


def test_aliases_behave_like_the_functions_they_alias():
    x = np.array([-1.25, 0.5, 2.5])
    for alias, original in [(fnp.abs, fnp.absolute), (fnp.around, fnp.round),
                            (fnp.conj, fnp.conjugate), (fnp.divide, fnp.true_divide),
                            (fnp.amax, fnp.max), (fnp.amin, fnp.min)]:
        args = (x, 2.0) if original is fnp.true_divide else (x,)
        np.testing.assert_array_equal(alias(*args), original(*args))
        assert alias.__doc__.startswith(f"Alias of ``{original.__name__}``")


# ------------------------------------------------------------------------------------------
# NumPy's dispatch on tracers
# ------------------------------------------------------------------------------------------


def test_dispatch_tables_map_numpy_functions_to_ours():
    tables = {**_array_methods.NUMPY_FUNCTIONS, **_array_methods.UFUNCS}
    assert tables[np.sum] is fnp.sum and tables[np.sin] is fnp.sin
    assert tables[np.linalg.norm] is fnp.linalg.norm and tables[np.amax] is fnp.amax
    assert tables[np.fft.rfft] is fnp.fft.rfft
    assert all(isinstance(f, np.ufunc) for f in _array_methods.UFUNCS)
    assert not any(isinstance(f, np.ufunc) for f in _array_methods.NUMPY_FUNCTIONS)
    public = {id(getattr(module, n)) for module in (fnp, fnp.linalg, fnp.fft)
              for n in module.__all__}
    operators = {np.bitwise_and, np.bitwise_or, np.invert}
    for numpy_fn, ours in tables.items():
        assert numpy_fn in operators or id(ours) in public, numpy_fn
    # Every function of ours whose name NumPy has as a function (creation from shapes
    # aside) is reachable from NumPy.
    creation_from_shapes = {"asarray", "array", "zeros", "ones", "full", "empty", "arange",
                            "linspace", "eye", "identity"}
    for name in set(fnp.__all__) - creation_from_shapes:
        theirs, ours = getattr(np, name, None), getattr(fnp, name)
        if callable(theirs) and theirs is not ours and not isinstance(ours, type):
            assert theirs in tables, name


@pytest.mark.parametrize("call", [lambda x: np.linspace(x, 1.0, 3),
                                  lambda x: np.zeros(3, like=x)])
def test_numpy_functions_without_a_tracer_version_refuse_tracers(call):
    with pytest.raises(TypeError, match="functrans"):
        ft.grad(lambda x: call(x).sum())(0.5)


# ------------------------------------------------------------------------------------------
# Creation on the device of the inputs (a registered stand-in plays the device)
# ------------------------------------------------------------------------------------------


class StandInArray:
    """A host array in a box that, like a device array, refuses implicit conversion."""

    def __init__(self, data):
        self.data = np.asarray(data)

    def __array__(self, *args, **kwargs):
        raise TypeError("implicit conversion of a stand-in device array")

    @property
    def dtype(self):
        return self.data.dtype


def _unbox(x):
    return x.data if isinstance(x, StandInArray) else x


def _boxed(numpy_fn):
    return lambda *args, **kwargs: StandInArray(numpy_fn(*[_unbox(a) for a in args],
                                                         **kwargs))


STAND_IN_MODULE = types.SimpleNamespace(
    __name__="stand_in", ndim=lambda x: np.ndim(_unbox(x)),
    **{name: _boxed(getattr(np, name)) for name in (
        "asarray", "array", "zeros", "ones", "full", "empty", "arange", "linspace", "eye",
        "tri")})

backend.register_array_library(StandInArray, backend.ArrayLibrary(
    STAND_IN_MODULE, scatter_add=None, to_host=lambda x: _unbox(x).copy(),
    default_rng=None, has_ufunc_methods=False))


def test_asarray_and_array_keep_device_arrays_on_their_device():
    x = StandInArray([1.0, 2.0])
    assert fnp.asarray(x) is x
    converted = fnp.asarray(x, dtype=np.float32)
    assert isinstance(converted, StandInArray) and converted.dtype == np.float32
    copied = fnp.array(x)
    assert isinstance(copied, StandInArray) and copied is not x
    np.testing.assert_array_equal(copied.data, x.data)


@pytest.mark.parametrize("make", [lambda like: fnp.zeros(3, like=like),
                                  lambda like: fnp.ones((2, 2), fnp.float32, like=like),
                                  lambda like: fnp.full(2, 7.0, like=like),
                                  lambda like: fnp.empty(2, like=like),
                                  lambda like: fnp.arange(1, 7, 2, like=like),
                                  lambda like: fnp.linspace(0.0, 1.0, 5, like=like),
                                  lambda like: fnp.eye(2, 3, 1, like=like),
                                  lambda like: fnp.identity(2, like=like)])
def test_creation_from_shapes_is_numpy_unless_like_a_device_array(make):
    on_host = make(None)
    assert isinstance(on_host, np.ndarray)  # a functrans.array_types.Array: an ndarray with `.at`
    on_device = make(StandInArray([0.0]))
    assert isinstance(on_device, StandInArray)
    np.testing.assert_array_equal(on_device.data, on_host)
    assert on_device.dtype == on_host.dtype


def test_creation_from_shapes_matches_numpy_defaults():
    pairs = [(fnp.zeros(3), np.zeros(3)), (fnp.ones((2, 1), np.int32), np.ones((2, 1), np.int32)),
             (fnp.full(2, 7), np.full(2, 7)), (fnp.arange(5), np.arange(5)),
             (fnp.arange(5.0), np.arange(5.0)), (fnp.arange(1, 2, 0.25), np.arange(1, 2, 0.25)),
             (fnp.linspace(0, 1, 4, endpoint=False), np.linspace(0, 1, 4, endpoint=False)),
             (fnp.eye(3, k=-1, dtype=bool), np.eye(3, k=-1, dtype=bool)),
             (fnp.identity(3), np.identity(3)), (fnp.empty((2, 2)), np.zeros((2, 2)))]
    for ours, theirs in pairs:
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)


def test_pad_reads_device_widths_on_the_host():
    out = fnp.pad(np.ones((2, 2)), StandInArray([[1, 0], [0, 2]]))
    np.testing.assert_array_equal(out, np.pad(np.ones((2, 2)), [[1, 0], [0, 2]]))


def test_creation_accepts_jax_device_keyword_for_the_host_only():
    np.testing.assert_array_equal(fnp.zeros(2, device="cpu"), np.zeros(2))
    with pytest.raises(ValueError, match="zeros: device='gpu:0' is not a device functrans knows"):
        fnp.zeros(2, device="gpu:0")
