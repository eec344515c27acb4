"""functrans.numpy as an array API namespace (docs/array_api.md): the namespace's own
objects, the array API attributes of tracers and results, the standard's keywords and
special cases, and array-API-generic code written elsewhere (array-api-compat,
array-api-extra, SciPy under SCIPY_ARRAY_API=1) running under grad, vmap and jit."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax

TRANSFORMS = {"grad": ft.grad, "vmap": ft.vmap, "jit": ft.jit}
X = np.linspace(0.2, 1.4, 6).reshape(2, 3)


def numerical_grad(f, x, eps=1e-6):
    """Central differences of the scalar function ``f`` at ``x``, element by element."""
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (float(f(x + step)) - float(f(x - step))) / (2 * eps)
    return grad


# -- the namespace ---------------------------------------------------------------------------

def test_version_and_inspection():
    assert fnp.__array_api_version__ == "2024.12"
    info = fnp.__array_namespace_info__()
    assert info.default_device() == "cpu" and info.devices()[0] == "cpu"
    assert info.capabilities() == {"boolean indexing": False, "data-dependent shapes": False,
                                   "max dimensions": 64}
    assert info.default_dtypes() == {"real floating": np.float64,
                                     "complex floating": np.complex128,
                                     "integral": np.int64, "indexing": np.int64}
    assert list(info.dtypes(kind="real floating")) == ["float32", "float64"]
    assert set(info.dtypes(kind=("bool", "unsigned integer"))) == {
        "bool", "uint8", "uint16", "uint32", "uint64"}
    assert len(info.dtypes()) == 13
    with pytest.raises(ValueError, match="dtypes: device='tpu' is not a device"):
        info.dtypes(device="tpu")


def test_from_dlpack_shares_or_copies():
    x = np.arange(4.0)
    shared, copied = fnp.from_dlpack(x), fnp.from_dlpack(x, copy=True)
    assert np.shares_memory(shared, x) and not np.shares_memory(copied, x)
    np.testing.assert_array_equal(copied, x)
    with pytest.raises(TypeError, match="from_dlpack: a traced value has no memory"):
        ft.grad(lambda v: fnp.sum(fnp.from_dlpack(v)))(x)


def test_asarray_copy_and_device():
    x = np.arange(3.0)
    assert np.shares_memory(fnp.asarray(x), x)
    assert np.shares_memory(fnp.asarray(x, copy=False), x)
    assert not np.shares_memory(fnp.asarray(x, copy=True), x)
    assert fnp.asarray(x, device="cpu").device == "cpu"
    with pytest.raises(ValueError, match="asarray: .*needs a new array, but copy=False"):
        fnp.asarray(x, dtype=np.float32, copy=False)
    with pytest.raises(ValueError, match="asarray: a list or tuple needs a new array"):
        fnp.asarray([1.0, 2.0], copy=False)
    with pytest.raises(ValueError, match="asarray: device='gpu:7' is not a device"):
        fnp.asarray(x, device="gpu:7")

    def f(v):  # a tracer is never copied; converting its dtype is refused with copy=False
        assert fnp.asarray(v, copy=True) is v
        with pytest.raises(ValueError, match="asarray: converting a f64.*copy=False"):
            fnp.asarray(v, dtype=np.float32, copy=False)
        return fnp.sum(fnp.asarray(v, device=v.device) ** 2)
    np.testing.assert_allclose(ft.grad(f)(x), 2 * x)


def test_astype_and_reshape_copy():
    x = np.arange(6.0)
    assert not np.shares_memory(fnp.astype(x, np.float64), x)
    assert np.shares_memory(fnp.astype(x, np.float64, copy=False), x)
    assert fnp.astype(x, np.int8, copy=False).dtype == np.int8
    assert np.shares_memory(fnp.reshape(x, (2, 3), copy=False), x)
    assert not np.shares_memory(fnp.reshape(x, (2, 3), copy=True), x)
    with pytest.raises(ValueError, match=r"reshape: .*shape \(3, 2\).*copy=False"):
        fnp.reshape(x.reshape(2, 3).T, (6,), copy=False)
    np.testing.assert_allclose(
        ft.grad(lambda v: fnp.sum(fnp.reshape(v.astype(np.float64, copy=False), (3, 2),
                                              copy=True) ** 2))(x), 2 * x)


@pytest.mark.parametrize("make", [
    lambda d: fnp.zeros(2, device=d), lambda d: fnp.ones(2, device=d),
    lambda d: fnp.full(2, 3.0, device=d), lambda d: fnp.empty(2, device=d),
    lambda d: fnp.arange(2, device=d), lambda d: fnp.linspace(0, 1, 2, device=d),
    lambda d: fnp.eye(2, device=d), lambda d: fnp.identity(2, device=d),
    lambda d: fnp.tri(2, device=d), lambda d: fnp.asarray([1, 2], device=d),
    lambda d: fnp.array([1, 2], device=d), lambda d: fnp.zeros_like(X, device=d),
    lambda d: fnp.ones_like(X, device=d), lambda d: fnp.full_like(X, 2, device=d),
    lambda d: fnp.empty_like(X, device=d), lambda d: fnp.astype(X, np.float32, device=d)])
def test_every_creation_function_takes_device(make):
    assert make("cpu").device == "cpu" and make(None).device == "cpu"
    with pytest.raises(ValueError, match="device='tpu' is not a device functrans knows"):
        make("tpu")


def test_like_functions_take_a_shape():
    np.testing.assert_array_equal(fnp.full_like(X, 2.5, shape=(3,)), np.full(3, 2.5))
    assert fnp.ones_like(X, np.int8, shape=(2, 2)).dtype == np.int8
    assert fnp.zeros_like(X, shape=4).shape == (4,)


def test_finfo_and_iinfo_of_arrays_with_python_numbers():
    for value in (np.ones(2, np.float32), np.float32, "float32", np.ones(1, np.complex64)):
        info = fnp.finfo(value)
        assert (info.bits, info.dtype) == (32, np.float32)
        for field in ("eps", "max", "min", "smallest_normal"):
            assert type(getattr(info, field)) is float, field
        assert info.eps == float(np.finfo(np.float32).eps)
        assert info.tiny == np.finfo(np.float32).tiny  # NumPy's other fields pass through
    info = fnp.iinfo(np.zeros(3, np.int16))
    assert (info.bits, info.min, info.max) == (16, -32768, 32767)
    assert type(info.max) is int and info.dtype == np.int16
    ft.grad(lambda v: v * fnp.finfo(v).eps)(1.0)  # of a tracer
    with pytest.raises(ValueError, match="finfo: int64 is not a floating-point dtype"):
        fnp.finfo(np.int64)
    with pytest.raises(ValueError, match="iinfo: float64 is not an integer dtype"):
        fnp.iinfo(X)


def test_meshgrid_and_broadcast_arrays_return_tuples():
    grids = fnp.meshgrid(np.arange(2.0), np.arange(3.0))
    assert isinstance(grids, tuple) and len(grids) == 2
    out = fnp.broadcast_arrays(np.zeros((2, 1)), np.zeros(3))
    assert isinstance(out, tuple) and [o.shape for o in out] == [(2, 3), (2, 3)]


def test_diff_prepend_and_append_match_numpy_and_differentiate():
    x = np.arange(12.0).reshape(3, 4) ** 2
    for kwargs in ({"prepend": 0.5}, {"append": np.ones((3, 2))},
                   {"prepend": np.ones((3, 1)), "append": -1.0, "n": 2}):
        np.testing.assert_array_equal(fnp.diff(x, axis=1, **kwargs),
                                      np.diff(x, axis=1, **kwargs))
    with pytest.raises(ValueError, match=r"diff: append must be a scalar or have the shape"):
        fnp.diff(x, append=np.ones((2, 1)))

    def f(p):
        return fnp.sum(fnp.diff(x, axis=0, prepend=p) ** 2)
    p = np.linspace(-1.0, 1.0, 4).reshape(1, 4)
    np.testing.assert_allclose(ft.grad(f)(p), numerical_grad(f, p), rtol=1e-6)


def test_clip_takes_the_standards_names():
    x = np.array([-2.0, 0.5, 3.0])
    np.testing.assert_array_equal(fnp.clip(a=x, a_min=0.0, a_max=1.0), [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(np.clip(fnp.asarray(x), 0.0, 1.0), [0.0, 0.5, 1.0])
    with pytest.raises(TypeError, match="clip: got both a_max and its array API name max"):
        fnp.clip(x, max=1.0, a_max=2.0)
    assert ft.grad(lambda v: fnp.sum(v.clip(max=1.0)))(x).tolist() == [1.0, 1.0, 0.0]
    np.testing.assert_array_equal(fnp.clip(x, min=0.0), [0.0, 0.5, 3.0])
    np.testing.assert_array_equal(fnp.clip(x, max=1.0), [-2.0, 0.5, 1.0])
    np.testing.assert_array_equal(fnp.clip(x, 0.0, 1.0), [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(fnp.clip(x), x)


def test_linalg_vecdot_promotes_like_the_standard_and_checks_shapes():
    a = np.arange(6, dtype=np.int8).reshape(2, 3)
    out = fnp.linalg.vecdot(a, a)
    assert out.dtype == np.int8  # not sum's int64
    np.testing.assert_array_equal(out, np.linalg.vecdot(a, a))
    with pytest.raises(ValueError, match="vecdot: the vectors along axis -1 have sizes 3 and 1"):
        fnp.linalg.vecdot(np.ones((2, 3)), np.ones((2, 1)))
    np.testing.assert_array_equal(fnp.linalg.vecdot(np.ones((2, 0)), np.ones((2, 0))), [0, 0])
    np.testing.assert_array_equal(fnp.einsum("ij,j->i", np.ones((2, 1)), np.ones(0)),
                                  np.einsum("ij,j->i", np.ones((2, 1)), np.ones(0)))


@pytest.mark.parametrize("a_shape, b_shape", [((0, 0), (0,)), ((0, 0), (0, 2)),
                                              ((3, 3), (3, 0)), ((0, 3, 3), (3, 2)),
                                              ((2, 0, 0), (2, 0, 1))])
def test_solve_and_inv_of_empty_inputs(a_shape, b_shape):
    a = np.broadcast_to(np.eye(a_shape[-1]), a_shape).copy()
    b = np.ones(b_shape)
    assert fnp.linalg.solve(a, b).shape == np.linalg.solve(a, b).shape
    assert fnp.linalg.inv(a).shape == np.linalg.inv(a).shape
    assert ft.grad(lambda a: fnp.sum(fnp.linalg.inv(a)))(a).shape == a_shape


def test_repeat_with_one_count_per_element():
    x = np.arange(6.0).reshape(2, 3)
    counts = np.array([1, 0, 2])
    np.testing.assert_array_equal(fnp.repeat(x, counts, axis=1), np.repeat(x, counts, axis=1))
    np.testing.assert_array_equal(fnp.repeat(x, np.array([2])), np.repeat(x, np.array([2])))
    np.testing.assert_array_equal(ft.vmap(lambda v: fnp.repeat(v, counts))(x),
                                  np.repeat(x, counts, axis=1))
    np.testing.assert_array_equal(ft.jit(lambda v: fnp.repeat(v, counts, axis=-1))(x),
                                  np.repeat(x, counts, axis=1))

    def f(v):
        return fnp.sum(fnp.repeat(v, counts, axis=1) ** 2)
    np.testing.assert_allclose(ft.grad(f)(x), numerical_grad(f, x), rtol=1e-6)
    with pytest.raises(ValueError, match=r"repeat: repeats of shape \(2,\) do not match"):
        fnp.repeat(x, np.array([1, 2]), axis=1)
    with pytest.raises(ft.ConcretizationTypeError, match="total_repeat_length"):
        ft.jit(lambda c: fnp.repeat(x, c, axis=1))(counts)


def test_fft_frequencies_take_device():
    np.testing.assert_array_equal(fnp.fft.fftfreq(4, device="cpu"), np.fft.fftfreq(4))
    np.testing.assert_array_equal(fnp.fft.rfftfreq(4, device="cpu"), np.fft.rfftfreq(4))


def test_floor_division_operators_of_results_follow_the_standard():
    x, y = fnp.asarray([INF, 1.0, 7.0]), np.array([2.0, -INF, 2.0])
    _same(x // y, [INF, -0.0, 3.0])
    _same(y // x, [0.0, -INF, 0.0])
    z = fnp.asarray([INF, 1.0, 7.0])
    z //= y
    _same(z, [INF, -0.0, 3.0])
    i = fnp.asarray([7, -7])
    _same(i // 2, [3, -4])
    i //= 2.5  # rebinds `i` to a new array of the promoted dtype, as JAX's //= does
    assert i.dtype == np.float64
    _same(i, [2.0, -3.0])


def test_floor_division_of_zero_dimensional_results_follows_the_standard():
    # 0-d results are Arrays too, so their // is functrans's floor_divide, not NumPy's
    x = fnp.asarray(INF)
    assert isinstance(x, ft.Array) and x.weak_type  # (a WeakArray: made from a Python float)
    _same(x // 2.0, INF)
    _same(fnp.asarray(1.0) // -INF, -0.0)
    _same(2.0 // fnp.asarray(-INF), -0.0)
    _same(fnp.sum(fnp.asarray([INF])) // 2.0, INF)
    z = fnp.asarray(-INF)
    z //= 3.0
    _same(z, -INF)


# -- the standard's special cases where NumPy differs ----------------------------------------

INF, NAN = np.inf, np.nan


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    for part in (np.real, np.imag) if np.iscomplexobj(want) else (lambda v: v,):
        g, w = part(got), part(want)
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


def test_floor_divide_with_one_infinite_operand_is_floor_of_the_quotient():
    x1 = np.array([INF, INF, -INF, -INF, 1.0, 1.0, -1.0, -1.0, 7.0, NAN])
    x2 = np.array([2.0, -2.0, 2.0, -2.0, INF, -INF, INF, -INF, 2.0, INF])
    want = [INF, -INF, -INF, INF, 0.0, -0.0, -0.0, 0.0, 3.0, NAN]
    _same(fnp.floor_divide(x1, x2), want)
    _same(ft.jit(fnp.floor_divide)(x1, x2), want)
    with np.errstate(invalid="ignore"):
        assert np.isnan(np.floor_divide(INF, 2.0))  # where NumPy follows Python instead


def test_complex_expm1_special_cases():
    z = np.array([complex(-0.0, 0.0), complex(0.0, 0.0), complex(INF, 0.0),
                  complex(-INF, INF), complex(-INF, NAN), complex(NAN, 0.0)])
    want = [0j, 0j, complex(INF, 0.0), complex(-1.0, 0.0), complex(-1.0, 0.0),
            complex(NAN, 0.0)]
    with np.errstate(invalid="ignore"):
        _same(fnp.expm1(z), want)
        _same(ft.jit(fnp.expm1)(z), want)
        for got in (fnp.expm1(np.array([complex(INF, INF), complex(INF, NAN)])),):
            assert np.all(np.real(got) == INF) and np.all(np.isnan(np.imag(got)))
    finite = np.array([0.3 + 0.2j, -1.0 + 2.0j, 1e-10 - 1e-10j])
    np.testing.assert_allclose(fnp.expm1(finite), np.expm1(finite), rtol=1e-14)
    # the derivative is untouched, at zero too (the +0 fix adds zero)
    for z0 in (0.3 + 0.2j, 0j):
        np.testing.assert_allclose(ft.grad(lambda v: fnp.real(fnp.expm1(v)))(z0),
                                   ft.grad(lambda v: fnp.real(lax.expm1(v)))(z0), rtol=1e-15)


def test_complex_tanh_of_infinite_real_part():
    z = np.array([complex(INF, 2.0), complex(INF, -1.0), complex(-INF, 2.0),
                  complex(-INF, -2.0)])
    want = [complex(1.0, 0.0), complex(1.0, -0.0), complex(-1.0, 0.0), complex(-1.0, -0.0)]
    _same(fnp.tanh(z), want)
    _same(ft.vmap(fnp.tanh)(z), want)
    assert np.signbit(np.tanh(complex(INF, 2.0)).imag)  # NumPy: the sign of sin(4)
    np.testing.assert_allclose(fnp.tanh(np.array([0.5 + 1j])), np.tanh(np.array([0.5 + 1j])))


def test_lax_complex_keeps_infinite_and_nan_parts():
    out = lax.complex(np.array([0.0, INF, 1.0]), np.array([INF, NAN, -0.0]))
    _same(out, [complex(0.0, INF), complex(INF, NAN), complex(1.0, -0.0)])
    assert lax.complex(np.float32(1.0), np.float32(2.0)).dtype == np.complex64
    assert ft.jit(lax.complex)(0.0, INF) == complex(0.0, INF)


# -- tracers and results are array API objects -----------------------------------------------

@pytest.mark.parametrize("transform", TRANSFORMS)
def test_tracers_are_array_api_objects(transform):
    seen = {}

    def f(x):
        seen["namespace"] = x.__array_namespace__()
        seen["versioned"] = x.__array_namespace__(api_version="2023.12")
        seen["device"] = x.device
        assert x.to_device(x.device) is x
        with pytest.raises(TypeError, match="__dlpack__ of a traced value"):
            x.__dlpack__()
        with pytest.raises(TypeError, match="__dlpack__ of a traced value"):
            np.from_dlpack(x)
        return fnp.sum(x.mT @ x)
    TRANSFORMS[transform](f)(np.stack([X, X]) if transform == "vmap" else X)
    assert seen == {"namespace": fnp, "versioned": fnp, "device": "cpu"}


def test_results_name_functrans_numpy_as_their_namespace():
    y = fnp.sin(X)
    assert y.__array_namespace__() is fnp and y.device == "cpu"
    with pytest.raises(ValueError, match="api_version='2019.01' is not one of"):
        y.__array_namespace__(api_version="2019.01")


def test_mt_matches_numpy():
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(ft.jit(lambda v: v.mT)(x), x.mT)


# -- generic code written elsewhere ------------------------------------------------------------

def _check_transforms(f, x, rtol=1e-6):
    """``f`` (array-API-generic, reading its namespace from its argument) on ``x`` under
    grad (against finite differences), jit and vmap (against NumPy's values)."""
    want = f(x)
    np.testing.assert_allclose(ft.jit(f)(x), want, rtol=1e-12)
    np.testing.assert_allclose(ft.vmap(f)(np.stack([x, 2 * x])),
                               np.stack([want, f(2 * x)]), rtol=1e-12)

    def scalar(v):
        return fnp.sum(f(v) ** 2)
    np.testing.assert_allclose(ft.grad(scalar)(x), numerical_grad(scalar, x), rtol=rtol,
                               atol=1e-9)


def test_array_api_compat_finds_the_namespace_of_tracers():
    compat = pytest.importorskip("array_api_compat")

    def f(x):
        xp = compat.array_namespace(x)
        assert xp is fnp or isinstance(x, np.ndarray)  # NumPy's arrays get compat's wrapper
        assert compat.is_array_api_obj(x)
        return xp.sum(xp.exp(x) * compat.size(x), axis=-1)
    _check_transforms(f, X)


def test_generic_code_runs_under_every_transform():
    def standardize(x):  # written against the standard only
        xp = x.__array_namespace__()
        mean = xp.mean(x, axis=-1, keepdims=True)
        centered = x - mean
        scale = xp.sqrt(xp.mean(centered * xp.conj(centered), axis=-1, keepdims=True))
        z = centered / scale
        return xp.concat([x * xp.tanh(z), xp.linalg.vecdot(z, x)[..., None]], axis=-1)
    _check_transforms(standardize, X)


@pytest.mark.parametrize("name", ["sinc", "cov", "atleast_nd", "kron"])
def test_array_api_extra_under_transforms(name):
    xpx = pytest.importorskip("array_api_extra")
    functions = {
        "sinc": lambda x: xpx.sinc(x),
        "cov": lambda x: xpx.cov(x),
        "atleast_nd": lambda x: xpx.atleast_nd(x, ndim=3) * 2.0,
        "kron": lambda x: xpx.kron(x, x[..., :2]),
    }
    f = functions[name]
    base = X[0]
    np.testing.assert_allclose(f(base), f(np.asarray(base)))
    _check_transforms(f, X if name != "cov" else np.linspace(0.2, 1.4, 12).reshape(3, 4))


SCIPY_SCRIPT = textwrap.dedent("""
    import numpy as np
    import scipy, scipy.special as special, scipy.stats as stats
    import functrans as ft, functrans.numpy as fnp

    NAN_CHECK_BY_VALUE = tuple(int(p) for p in scipy.__version__.split(".")[:2]) >= (1, 18)

    def numerical_grad(f, x, eps=1e-6):
        grad = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            step = np.zeros_like(x)
            step[i] = eps
            grad[i] = (float(f(x + step)) - float(f(x - step))) / (2 * eps)
        return grad

    x = np.linspace(0.2, 1.4, 6).reshape(2, 3)
    cases = {
        "special.softmax": lambda v: special.softmax(v, axis=-1),
        "stats.moment": lambda v: stats.moment(v, order=3, axis=-1),
        "stats.skew": lambda v: stats.skew(v, axis=-1),
        "stats.kurtosis": lambda v: stats.kurtosis(v, axis=-1),
        "stats.gmean": lambda v: stats.gmean(v, axis=-1),
        "stats.sem": lambda v: stats.sem(v, axis=-1),
    }
    for name, f in cases.items():
        want = f(x)
        scalar = lambda v: fnp.sum(f(v) ** 2)
        np.testing.assert_allclose(ft.grad(scalar)(x), numerical_grad(scalar, x),
                                   rtol=1e-6, atol=1e-9, err_msg=name)
        if name != "stats.moment":  # moment branches on its order's value under jit
            np.testing.assert_allclose(ft.jit(f)(x), want, rtol=1e-12, err_msg=name)
        if name.startswith("stats.") and NAN_CHECK_BY_VALUE:
            # SciPy 1.18 asks Python whether a 1-D sample holds a NaN (JAX's arrays
            # excepted): under vmap each row is one, and a batched value has no one truth
            # value, so functrans refuses by name. The 2-D call above batches instead.
            try:
                ft.vmap(f)(x)
            except ft.ConcretizationTypeError as error:
                assert "vmap" in str(error), error
            else:
                raise AssertionError(f"{name}: vmap gave a value where SciPy branches on one")
            continue
        np.testing.assert_allclose(ft.vmap(f)(x), want, rtol=1e-12, err_msg=name)
    print("checked", len(cases))
""")


def test_scipy_array_api_functions_under_transforms():
    """SciPy's array-API-generic functions (SCIPY_ARRAY_API=1 must be set before SciPy is
    imported, hence a subprocess) trace through grad, jit and vmap (from SciPy 1.18, its
    stats functions branch on a 1-D sample's NaNs, and vmap over rows refuses them)."""
    scipy = pytest.importorskip("scipy")
    pytest.importorskip("array_api_compat")
    if tuple(int(p) for p in scipy.__version__.split(".")[:2]) < (1, 17):
        # Seen: 1.13 converts to NumPy arrays, 1.15's stats branch in Python on values.
        pytest.skip(f"SciPy {scipy.__version__}: these functions are generic from 1.17 on")
    env = {**os.environ, "SCIPY_ARRAY_API": "1"}
    done = subprocess.run([sys.executable, "-c", SCIPY_SCRIPT], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "checked 6" in done.stdout
