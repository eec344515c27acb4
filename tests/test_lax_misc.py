"""``functrans.lax``'s small functions beyond the primitives' own: values and errors checked
against JAX 0.10.2 (with x64) and against exact references (Python integers for ``mulhi``,
NumPy's ``view`` for ``bitcast_convert_type``, NumPy's ufunc reductions for the bitwise
reductions).  Derivatives, vmap and jit of the differentiable ones: the sweep cases in
tests/cases_elementwise.py and tests/cases_jax_names.py."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
from functrans import lax

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jlax = jax.lax
jnp = jax.numpy


# -- reduce_precision: bit for bit as XLA ---------------------------------------------------


def _grid(dtype) -> np.ndarray:
    """Special values, the halfway points of the narrow formats, and random bit patterns."""
    dtype = np.dtype(dtype)
    info = np.finfo(dtype)
    u = np.dtype(f"u{dtype.itemsize}")
    special = [0.0, 1.0, 1.5, np.pi, 65504.0, 65519.99, 65520.0, 6.1e-5, 6.0e-8, 3.0e-8,
               1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8,
               3.3895e38, 3.4e38, 1.2e-38, 1e-40, float(info.max), float(info.tiny),
               float(info.smallest_subnormal), np.inf]
    values = np.array(special + [-v for v in special], dtype=dtype)
    nans = np.array([np.nan, -np.nan], dtype).view(u)
    payload = nans | u.type(1)  # a NaN with a low payload bit: rounding must not lose it
    rng = np.random.default_rng(0)
    random = rng.integers(0, np.iinfo(u).max, 4000, dtype=u, endpoint=True)
    return np.concatenate([values.view(u), nans, payload, random]).view(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bits", [(5, 10), (8, 7), (8, 23), (11, 52), (2, 1), (4, 0),
                                  (11, 10), (1, 3)])
def test_reduce_precision_bits_match_jax(dtype, bits):
    x = _grid(dtype)
    want = np.asarray(jlax.reduce_precision(jnp.asarray(x), *bits))
    got = np.asarray(lax.reduce_precision(x, *bits))
    assert got.dtype == want.dtype == np.dtype(dtype)
    u = np.dtype(f"u{np.dtype(dtype).itemsize}")
    bad = got.view(u) != want.view(u)
    assert not bad.any(), (x[bad][:5], got[bad][:5], want[bad][:5])


@pytest.mark.parametrize("bits", [(5, 10), (4, 3), (3, 7)])
def test_reduce_precision_of_float16_bits_match_jax(bits):
    x = np.random.default_rng(3).integers(0, 2 ** 16, 3000, dtype=np.uint16).view(np.float16)
    want = np.asarray(jlax.reduce_precision(jnp.asarray(x), *bits))
    got = np.asarray(lax.reduce_precision(x, *bits))
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


def test_reduce_precision_rounds_to_float16_values():
    x = _grid(np.float32)
    x = x[np.isfinite(x) & (np.abs(x) >= np.finfo(np.float16).tiny)]
    with np.errstate(over="ignore"):
        want = x.astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(lax.reduce_precision(x, 5, 10), want)


def test_reduce_precision_derivative_rounds_the_tangent_as_jax():
    x, t = 1.2345678, 1.2345678
    want = jax.jvp(lambda v: jlax.reduce_precision(v, 5, 10), (x,), (t,))
    got = ft.jvp(lambda v: lax.reduce_precision(v, 5, 10), (x,), (t,))
    assert [float(v) for v in got] == [float(v) for v in want]
    assert float(ft.grad(lambda v: lax.reduce_precision(v, 5, 10))(x)) == 1.0


@pytest.mark.parametrize("args, error", [((np.array([1, 2]), 5, 10), TypeError),
                                         ((1.0, 0, 3), ValueError),
                                         ((1.0, 2, -1), ValueError)])
def test_reduce_precision_errors(args, error):
    with pytest.raises(error, match="reduce_precision"):
        lax.reduce_precision(*args)


# -- mulhi: exact against Python integers --------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8,
                                   np.uint16, np.uint32, np.uint64])
def test_mulhi_is_the_high_half_of_the_exact_product(dtype):
    info = np.iinfo(dtype)
    bits = info.bits
    rng = np.random.default_rng(1)
    edges = [info.min, info.min + 1, -1, 0, 1, 2, info.max - 1, info.max]
    edges = [e for e in edges if info.min <= e <= info.max]
    random = rng.integers(info.min, info.max, 300, dtype=dtype, endpoint=True).tolist()
    pairs = [(a, b) for a in edges for b in edges] + list(zip(random, random[::-1]))
    x = np.array([a for a, _ in pairs], dtype)
    y = np.array([b for _, b in pairs], dtype)
    got = lax.mulhi(x, y)
    assert got.dtype == np.dtype(dtype)
    want = [(int(a) * int(b)) >> bits for a, b in pairs]  # Python's >> floors, as wanted
    want = [w % 2 ** bits if info.min == 0 else w for w in want]
    assert got.tolist() == want
    np.testing.assert_array_equal(got, np.asarray(jlax.mulhi(jnp.asarray(x), jnp.asarray(y))))


def test_mulhi_under_vmap_and_jit_and_errors():
    x = np.array([[2 ** 62, -3], [7, -(2 ** 63)]], np.int64)
    y = np.array([8, 2 ** 62], np.int64)
    want = np.asarray(jlax.mulhi(jnp.asarray(x), jnp.asarray(np.broadcast_to(y, x.shape))))
    np.testing.assert_array_equal(ft.vmap(lax.mulhi, (0, None))(x, y), want)
    np.testing.assert_array_equal(ft.jit(lax.mulhi)(x, y), want)
    with pytest.raises(TypeError, match="mulhi"):
        lax.mulhi(np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="mulhi"):
        lax.mulhi(np.array([True]), np.array([True]))


# -- bitcast_convert_type -----------------------------------------------------------------


@pytest.mark.parametrize("x, new_dtype", [
    (np.array([1.5, -2.0], np.float64), np.int64),
    (np.float32(1.0), np.uint32),
    (np.array([0x01020304, 0xFFFF0000], np.uint32), np.uint8),
    (np.array([[1, 2], [3, 4]], np.uint8), np.uint16),
    (np.arange(8, dtype=np.uint8).reshape(2, 4), np.float32),
    (np.array([1.0, -0.0], np.float64), np.uint16),
    (np.array([3, 4], np.int16), np.float16),
    (np.array([1 + 2j], np.complex64), np.complex64),
])
def test_bitcast_convert_type_matches_jax(x, new_dtype):
    got = lax.bitcast_convert_type(x, new_dtype)
    want = np.asarray(jlax.bitcast_convert_type(jnp.asarray(x), new_dtype))
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got).reshape(-1).view(np.uint8),
                                  want.reshape(-1).view(np.uint8))


def test_bitcast_convert_type_transforms():
    x = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    want = np.stack([lax.bitcast_convert_type(x[:, i], np.uint32) for i in range(3)], 1)
    np.testing.assert_array_equal(ft.vmap(lambda v: lax.bitcast_convert_type(
        v, np.uint32), in_axes=1, out_axes=1)(x), want)
    np.testing.assert_array_equal(ft.jit(lambda v: lax.bitcast_convert_type(
        v, np.uint32))(x), x.view(np.uint32)[..., 0])
    # no derivative: the tangent is zero, as JAX's
    assert ft.jvp(lambda v: lax.bitcast_convert_type(v, np.float32) * 1.0,
                  (np.float32(1.0),), (np.float32(1.0),))[1] == 0
    assert ft.grad(lambda v: lax.bitcast_convert_type(v, np.float64))(2.0) == 0.0


@pytest.mark.parametrize("x, new_dtype, error", [
    (np.array([1, 2, 3], np.uint8), np.uint16, ValueError),
    (np.float32(1.0), np.complex64, TypeError),
    (np.array([True]), np.uint8, TypeError),
    (np.ones(2, np.uint8), np.bool_, TypeError),
])
def test_bitcast_convert_type_errors(x, new_dtype, error):
    with pytest.raises(error, match="bitcast_convert_type"):
        lax.bitcast_convert_type(x, new_dtype)


# -- reduce_and / reduce_or / reduce_xor ----------------------------------------------------


@pytest.mark.parametrize("name", ["and", "or", "xor"])
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64])
@pytest.mark.parametrize("shape, axes", [((5, 3, 4), (0,)), ((5, 3, 4), (2, 0)),
                                         ((7, 3), (0, 1)), ((0, 3), (0,)), ((2, 3), ())])
def test_bitwise_reductions_match_numpy(name, dtype, shape, axes):
    rng = np.random.default_rng(2)
    x = (rng.random(shape) > 0.3 if dtype is np.bool_ else
         rng.integers(0, 256, shape).astype(dtype) * np.array(0x0101, dtype=np.uint16).astype(
             dtype))
    got = getattr(lax, f"reduce_{name}")(x, axes)
    want = getattr(np, f"bitwise_{name}").reduce(x, axis=axes) if axes else x
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, want)
    if dtype is np.uint16 and shape == (0, 3):  # JAX agrees on the empty reductions too
        np.testing.assert_array_equal(got, getattr(jlax, f"reduce_{name}")(x, axes))


def test_bitwise_reductions_under_vmap_jit_grad():
    x = np.arange(1, 25).reshape(2, 3, 4)
    for f in (lax.reduce_and, lax.reduce_or, lax.reduce_xor):
        loop = np.stack([f(x[:, i], (1,)) for i in range(3)])
        np.testing.assert_array_equal(ft.vmap(lambda v: f(v, (1,)), in_axes=1)(x), loop)
        np.testing.assert_array_equal(ft.jit(lambda v: f(v, (0, -1)))(x), f(x, (0, 2)))
    y = np.array([True, False, True])
    assert ft.grad(lambda v: v * lax.reduce_or(y, (0,)).astype(float))(2.0) == 1.0
    with pytest.raises(TypeError, match="reduce_or"):
        lax.reduce_or(np.ones(2), (0,))


# -- the composed functions: values, dtypes and errors as JAX's ------------------------------


def test_dot_and_batch_matmul_as_jax():
    a, v = np.arange(6.0).reshape(2, 3), np.arange(3.0)
    for lhs, rhs in [(a, v), (v, v), (a, a.T), (v, a.T)]:
        np.testing.assert_allclose(lax.dot(lhs, rhs), jlax.dot(lhs, rhs), rtol=1e-15)
    i8 = np.arange(3, dtype=np.int8)
    got = lax.dot(i8, i8, preferred_element_type=np.int32)
    assert got.dtype == np.int32 and got == 5
    for lhs, rhs in [(np.ones((2, 2, 3)), v), (v, np.ones(4)), (np.ones(()), v)]:
        with pytest.raises(ValueError, match="dot: dimension_numbers"):
            lax.dot(lhs, rhs)
    b = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_allclose(lax.batch_matmul(b, b.transpose(0, 2, 1)),
                               jlax.batch_matmul(b, b.transpose(0, 2, 1)))
    for lhs, rhs in [(v, v), (b, a)]:
        with pytest.raises(ValueError, match="batch_matmul"):
            lax.batch_matmul(lhs, rhs)


def test_square_and_reciprocal_dtypes_as_jax():
    for x in [np.int8(3), np.float32(2.0), np.array([1 + 1j]), 3, 2.0]:
        got, want = lax.square(x), jlax.square(x)
        assert np.asarray(got).dtype == want.dtype and np.asarray(got) == want
    for x in [np.float32(4.0), np.complex64(2.0), np.array([0.5, -4.0])]:
        got, want = lax.reciprocal(x), jlax.reciprocal(x)
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    with pytest.raises(TypeError, match="reciprocal"):
        lax.reciprocal(np.int32(3))


def test_shape_helpers_as_jax():
    x = np.arange(6).reshape(2, 3)
    for reps in [(2, 3), (1, 1), (0, 2)]:
        np.testing.assert_array_equal(lax.tile(x, reps), jlax.tile(x, reps))
    with pytest.raises(TypeError, match="tile: reps"):
        lax.tile(x, (2,))
    for axis in (0, 1, -1, 2):
        np.testing.assert_array_equal(lax.stack([x, x + 1], axis), jlax.stack([x, x + 1], axis))
    with pytest.raises(ValueError, match="stack"):
        lax.stack([np.ones(2), np.ones(3)])
    with pytest.raises(ValueError, match="stack"):
        lax.stack([])
    for axis in (0, 1, -1):
        got, want = lax.unstack(x, axis), jlax.unstack(x, axis)
        assert type(got) is tuple and len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    y = np.zeros((2, 3, 4))
    for bounds in [(0, 2), (1, None), (-2, -1), (0, None), (2, 2)]:
        assert lax.collapse(y, *bounds).shape == jlax.collapse(y, *bounds).shape
    with pytest.raises(ValueError, match="collapse"):
        lax.collapse(y, 2, 1)
    for shapes in [((2, 1), (3,)), ((1,), (4, 1)), ((),), ((0, 1), (1, 5))]:
        assert lax.broadcast_shapes(*shapes) == jlax.broadcast_shapes(*shapes)
    with pytest.raises(ValueError, match="broadcast_shapes"):
        lax.broadcast_shapes((2, 1), (4, 3))
    for rank in (0, 2, 4):
        assert lax.broadcast_to_rank(x, rank).shape == jlax.broadcast_to_rank(x, rank).shape
    np.testing.assert_array_equal(lax.broadcast_like(np.arange(3.0)[:, None], y[0]),
                                  jlax.broadcast_like(np.arange(3.0)[:, None], y[0]))
    with pytest.raises(ValueError, match="broadcast_like"):
        lax.broadcast_like(np.ones(3), np.ones(4))


def test_empty_and_dtype_as_jax():
    for shape, dtype in [(3, np.float32), ((2, 0), np.int8), ((), np.bool_)]:
        got, want = lax.empty(shape, dtype), jlax.empty(shape, dtype)
        assert got.shape == want.shape and got.dtype == want.dtype
    for v in [1, 2.0, 1j, True, int, float, complex, bool, np.float32, "int8",
              np.dtype(np.uint16), np.zeros(2, np.float16), np.int32(3)]:
        assert lax.dtype(v) == jlax.dtype(v), v
    with pytest.raises(ValueError, match="dtype"):
        lax.dtype(None)
    for bad in [np.array(["a"]), object(), [1, 2]]:
        with pytest.raises(TypeError, match="dtype"):
            lax.dtype(bad)


# -- control and random bits ---------------------------------------------------------------


def test_platform_dependent_picks_the_operands_platform():
    x = np.ones(2)
    assert lax.platform_dependent(x, cpu=lambda v: 1, default=lambda v: 2) == 1
    assert lax.platform_dependent(x, cuda=lambda v: 1, default=lambda v: 2) == 2
    assert ft.jit(lambda v: lax.platform_dependent(v, cpu=lambda u: u + 1))(x).tolist() == [
        2.0, 2.0]
    with pytest.raises(ValueError, match="platform_dependent.*'cpu'"):
        lax.platform_dependent(x, cuda=lambda v: v)
    with pytest.raises(ValueError, match="cuda"):
        lax.platform_dependent(x, gpu=lambda v: v)
    with pytest.raises(TypeError, match="branch 'cpu' that is not callable"):
        lax.platform_dependent(x, cpu=1)


def test_composite_runs_its_decomposition_under_transforms():
    @ft.jit
    def f(x):
        return lax.composite(lambda v, *, k: lax.sin(v) * k, name="my.scaled_sin")(x, k=2.0)
    assert float(f(0.5)) == pytest.approx(2 * np.sin(0.5), rel=1e-15)
    assert float(ft.grad(f)(0.5)) == pytest.approx(2 * np.cos(0.5), rel=1e-15)
    with pytest.raises(TypeError, match="attribute 'k' is a traced value"):
        ft.grad(lambda k: lax.composite(lambda v, *, k: v * k, "m")(1.0, k=k))(2.0)


@pytest.mark.parametrize("key", [np.arange(4, dtype=np.uint32), np.arange(2, dtype=np.uint64)])
def test_rng_bit_generator_types_as_jax(key):
    shape = (3, 2)
    jax_key, jax_bits = jlax.rng_bit_generator(jnp.asarray(key), shape, np.uint8)
    for dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
        new_key, bits = lax.rng_bit_generator(key, shape, dtype)
        assert (new_key.shape, new_key.dtype) == (jax_key.shape, jax_key.dtype)
        assert (bits.shape, bits.dtype) == (jax_bits.shape, np.dtype(dtype))
        # deterministic, a new key, and new bits from it
        np.testing.assert_array_equal(lax.rng_bit_generator(key, shape, dtype)[1], bits)
        assert (new_key != key).any()
        assert (lax.rng_bit_generator(new_key, shape, dtype)[1] != bits).any()


def test_rng_bit_generator_bits_are_uniform_and_transform():
    key = np.array([1, 2, 3, 4], np.uint32)
    _, bits = lax.rng_bit_generator(key, (20000,), np.uint8)
    counts = np.bincount(bits, minlength=256)
    assert counts.min() > 40 and counts.max() < 120  # expected 78 each
    keys = np.arange(12, dtype=np.uint32).reshape(3, 4)
    loop = np.stack([lax.rng_bit_generator(k, (5,))[1] for k in keys])
    np.testing.assert_array_equal(ft.vmap(lambda k: lax.rng_bit_generator(k, (5,))[1])(keys),
                                  loop)
    np.testing.assert_array_equal(ft.jit(lambda k: lax.rng_bit_generator(k, (5,))[1])(keys[1]),
                                  loop[1])
    with pytest.raises(TypeError, match="rng_bit_generator: key"):
        lax.rng_bit_generator(np.zeros(2, np.uint32), (2,))
    with pytest.raises(TypeError, match="rng_bit_generator: dtype"):
        lax.rng_bit_generator(key, (2,), np.int32)
    assert str(lax.RandomAlgorithm.RNG_PHILOX) == str(jlax.RandomAlgorithm.RNG_PHILOX)
    assert [int(a) for a in lax.RandomAlgorithm] == [int(a) for a in jlax.RandomAlgorithm]


def test_rng_uniform_draws_anew_each_call():
    x = lax.rng_uniform(np.float32(2.0), np.float32(3.0), (1000,))
    assert x.dtype == np.float32 and x.shape == (1000,)
    assert x.min() >= 2.0 and x.max() < 3.0 and abs(x.mean() - 2.5) < 0.05
    ints = lax.rng_uniform(0, 10, (1000,))
    assert ints.dtype == np.int64 and set(np.unique(ints)) == set(range(10))
    f = ft.jit(lambda: lax.rng_uniform(0.0, 1.0, (4,)))
    assert (f() != f()).all()  # stateful: jit neither folds nor caches it
    with pytest.raises(ValueError, match="rng_uniform: a and b must be scalars"):
        lax.rng_uniform(np.zeros(2), np.ones(2), (2,))
    with pytest.raises(ValueError, match="one dtype"):
        lax.rng_uniform(0.0, np.float32(1.0), (2,))
    with pytest.raises(NotImplementedError, match="rng_uniform does not batch"):
        ft.vmap(lambda a: lax.rng_uniform(a, 1.0, (2,)))(np.zeros(3))
    with pytest.raises(NotImplementedError, match="rng_uniform has no derivative"):
        ft.grad(lambda a: lax.rng_uniform(a, 1.0, ()))(0.0)
