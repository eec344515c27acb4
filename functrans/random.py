"""JAX's key-based random numbers (``jax.random``), with JAX's bits.

Keys come from ``PRNGKey(seed)`` or ``key(seed)``, are split with ``split`` and
``fold_in``, and are passed explicitly to every sampler; nothing is global.  The generator
is JAX's default, threefry2x32 in its partitionable form (the default since JAX 0.5): for
the same key, ``split``, ``fold_in`` and ``bits`` give exactly JAX's integers, and the
samplers use JAX's algorithms, so their values agree with JAX up to floating-point
rounding (see ``docs/random.md``).

Differences from JAX, all deliberate:

* A key is always its raw data, a ``uint32`` array of shape ``(2,)``: ``key(seed)`` and
  ``PRNGKey(seed)`` are the same (functrans has no key dtype), so ``split(k, 3)`` has shape
  ``(3, 2)`` with either.  ``key_data`` and ``wrap_key_data`` convert as no-ops.
* Seeds are handled as JAX does with ``jax_enable_x64``: a 64-bit seed fills both words.
* The default float dtype is float64 (functrans is float64-first), and float64 draws are
  JAX's with ``jax_enable_x64=True``; ask for ``dtype=np.float32`` to get JAX's float32
  draws.  ``bits`` defaults to ``uint32``; integer draws default to int64.

>>> import numpy as np, functrans.random as random
>>> k = random.PRNGKey(0)
>>> random.split(k)
array([[1797259609, 2579123966],
       [ 928981903, 3453687069]], dtype=uint32)
>>> random.uniform(k, (3,), dtype=np.float32)
array([0.947667  , 0.9785799 , 0.33229148], dtype=float32)
"""
from __future__ import annotations

import math
import operator
from typing import Sequence

import numpy as np

from functrans import backend, lax
from functrans import numpy as fnp
from functrans.core import Tracer, get_aval
from functrans.primitives.conversion import convert_element_type
from functrans.primitives.prng import (random_bits_p, random_fold_in_p, random_gamma_p,
                                       random_normal_p,
                                       random_randint_p, random_seed_p, random_shuffle_p,
                                       random_split_p, random_truncated_normal_p,
                                       random_uniform_p)

__all__ = [
    "PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "clone", "split", "fold_in", "bits", "uniform",
    "normal", "bernoulli", "categorical", "randint", "permutation", "choice",
    "truncated_normal", "multivariate_normal", "exponential", "laplace", "logistic",
    "gumbel", "rademacher", "orthogonal", "cauchy", "gamma", "loggamma", "beta", "dirichlet",
    "poisson", "binomial", "t", "lognormal", "weibull_min", "geometric", "multinomial",
    "chisquare", "f", "pareto", "rayleigh", "wald", "maxwell", "double_sided_maxwell",
    "generalized_normal", "triangular", "ball", "random_gamma_p",
]

_DEFAULT_FLOAT = np.dtype(np.float64)
_DEFAULT_INT = np.dtype(np.int64)


# -- keys ---------------------------------------------------------------------------------


def _as_array(x):
    """Tracers and arrays of any library stay as they are; the rest become NumPy arrays."""
    return x if isinstance(x, Tracer) or backend.is_array(x) else np.asarray(x)


def _seed_array(name: str, seed):
    if isinstance(seed, (bool, np.bool_)) or (
            not isinstance(seed, Tracer) and np.ndim(seed) == 0
            and isinstance(seed, float | np.floating)):
        raise TypeError(f"random.{name}: the seed must be an integer, got {seed!r}")
    if isinstance(seed, int):
        if -2 ** 63 <= seed < 2 ** 63:
            return np.asarray(seed, np.int64)
        if 0 <= seed < 2 ** 64:
            return np.asarray(seed, np.uint64)
        raise OverflowError(f"random.{name}: the seed {seed} does not fit in 64 bits")
    seed = _as_array(seed)
    aval = get_aval(seed)
    if aval.shape:
        raise TypeError(f"random.{name}: the seed must be a scalar, got shape {aval.shape}; "
                        "use functrans.vmap to make many keys")
    if aval.dtype.kind not in "iu":
        raise TypeError(f"random.{name}: the seed must be an integer, got {aval.dtype}")
    return seed


def _check_impl(name: str, impl) -> None:
    if impl not in (None, "threefry2x32"):
        raise ValueError(f"random.{name}: only impl='threefry2x32' exists, got {impl!r}")


def _check_key_dtype(name: str, dtype) -> None:
    if dtype is not None:
        raise NotImplementedError(
            f"random.{name}: dtype={dtype!r} names a key dtype, and functrans has none (keys "
            f"are their raw uint32[2] data); leave dtype=None")


def PRNGKey(seed, *, impl=None) -> np.ndarray:  # noqa: N802 (JAX's name)
    """A key from an integer seed: ``uint32[2]`` holding the seed's high and low 32 bits.

    >>> import functrans.random as random
    >>> random.PRNGKey(42)
    array([ 0, 42], dtype=uint32)
    >>> random.PRNGKey(2 ** 40 + 5)      # 64-bit seeds fill both words, as JAX with x64
    array([256,   5], dtype=uint32)
    """
    _check_impl("PRNGKey", impl)
    return random_seed_p.bind(_seed_array("PRNGKey", seed))


def key(seed, *, impl=None, dtype=None):
    """A key from an integer seed; in functrans the same as ``PRNGKey`` (keys are their raw
    ``uint32[2]`` data, there is no key dtype: ``dtype`` must be None).

    >>> import functrans.random as random
    >>> random.key(3)
    array([0, 3], dtype=uint32)
    """
    _check_impl("key", impl)
    _check_key_dtype("key", dtype)
    return random_seed_p.bind(_seed_array("key", seed))


def _check_key(name: str, key, batched_ok: bool = False):
    key = _as_array(key)
    aval = get_aval(key)
    if aval.dtype != np.uint32 or not aval.shape or aval.shape[-1] != 2:
        raise TypeError(f"random.{name}: key must be a key from random.key / PRNGKey / split "
                        f"(uint32 with a last axis of length 2), got "
                        f"{aval.dtype}{list(aval.shape)}")
    if aval.shape != (2,) and not batched_ok:
        raise TypeError(f"random.{name}: takes a single key (shape (2,)), got keys of shape "
                        f"{aval.shape}; use functrans.vmap to map over keys")
    return key


def key_data(keys):
    """The raw ``uint32`` data of keys: the keys themselves in functrans.

    >>> import functrans.random as random
    >>> random.key_data(random.key(42))
    array([ 0, 42], dtype=uint32)
    """
    return _check_key("key_data", keys, batched_ok=True)


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Keys from raw ``uint32[..., 2]`` data (only threefry2x32 exists; ``dtype``, a key
    dtype in JAX, must be None).

    >>> import numpy as np, functrans.random as random
    >>> key = random.wrap_key_data(np.array([0, 42], dtype=np.uint32))
    >>> float(random.normal(key)) == float(random.normal(random.key(42)))
    True
    """
    _check_impl("wrap_key_data", impl)
    _check_key_dtype("wrap_key_data", dtype)
    return _check_key("wrap_key_data", key_bits_array, batched_ok=True)


def key_impl(keys) -> str:
    """The name of the generator that made ``keys`` (a key or an array of keys):
    ``"threefry2x32"``, the only one functrans has (JAX's default).

    >>> import functrans.random as random
    >>> random.key_impl(random.split(random.key(0), 3))
    'threefry2x32'
    """
    _check_key("key_impl", keys, batched_ok=True)
    return "threefry2x32"


def clone(key):
    """``key`` itself, for reusing it: JAX's ``clone`` matters only to its key-reuse
    checker, which functrans does not have, so the same draws follow from both.

    >>> import functrans.random as random
    >>> k = random.key(1)
    >>> bool(random.uniform(random.clone(k)) == random.uniform(k))
    True
    """
    return _check_key("clone", key, batched_ok=True)


def _shape(name: str, shape) -> tuple:
    if isinstance(shape, int | np.integer):
        shape = (shape,)
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"random.{name}: shape must be a tuple of integers, got "
                        f"{shape!r}") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"random.{name}: shape must be non-negative, got {shape}")
    return shape


def split(key, num: int | Sequence[int] = 2):
    """``num`` new keys (an integer or a shape) from ``key``; the result has shape
    ``(*num, 2)``.

    >>> import functrans.random as random
    >>> random.split(random.PRNGKey(0), (2, 3)).shape
    (2, 3, 2)
    """
    key = _check_key("split", key)
    return random_split_p.bind(key, shape=_shape("split", num))


def fold_in(key, data):
    """A new key from ``key`` and a 32-bit integer ``data`` (taken modulo 2**32 for integer
    arrays, as JAX converts them).

    >>> import functrans.random as random
    >>> random.fold_in(random.PRNGKey(0), 7)
    array([2716826189,  292468403], dtype=uint32)
    """
    key = _check_key("fold_in", key)
    if isinstance(data, int):
        if not 0 <= data < 2 ** 32:
            raise OverflowError(f"random.fold_in: data {data} does not fit in uint32")
        data = np.asarray(data, np.uint32)
    data = _as_array(data)
    aval = get_aval(data)
    if aval.shape:
        raise TypeError(f"random.fold_in: data must be a scalar, got shape {aval.shape}; use "
                        "functrans.vmap to fold in many values")
    if aval.dtype.kind not in "iu":
        raise TypeError(f"random.fold_in: data must be an integer, got {aval.dtype}")
    return random_fold_in_p.bind(key, convert_element_type(data, np.uint32))


def bits(key, shape=(), dtype=None):
    """Random bits of an unsigned integer ``dtype`` (default ``uint32``).

    >>> import numpy as np, functrans.random as random
    >>> random.bits(random.PRNGKey(0), (3,))
    array([4070199207, 4202968722, 1427181096], dtype=uint32)
    """
    key = _check_key("bits", key)
    dtype = np.dtype(np.uint32 if dtype is None else dtype)
    if dtype.kind != "u":
        raise ValueError(f"random.bits: dtype must be an unsigned integer dtype, got {dtype}")
    return random_bits_p.bind(key, shape=_shape("bits", shape), bit_width=dtype.itemsize * 8)


# -- continuous samplers ------------------------------------------------------------------


def _float_dtype(name: str, dtype) -> np.dtype:
    dtype = _DEFAULT_FLOAT if dtype is None else np.dtype(dtype)
    if dtype.kind != "f" or dtype.itemsize not in (2, 4, 8):
        raise ValueError(f"random.{name}: dtype must be float16, float32 or float64, got "
                         f"{dtype}")
    return dtype


def _param(x, dtype):
    if isinstance(x, int | float | complex | np.generic):
        return np.dtype(dtype).type(x)  # a scalar stays one: no host array meets a device one
    return convert_element_type(_as_array(x), dtype)


def _check_broadcast(name: str, shape: tuple, *params):
    pshapes = [tuple(get_aval(_as_array(p)).shape) for p in params]
    try:
        out = np.broadcast_shapes(shape, *pshapes)
    except ValueError:
        out = None
    if out != shape:
        raise ValueError(f"random.{name}: shape {shape} must be the broadcast of the shapes "
                         f"of the parameters {pshapes} with it")


def _unit(key, shape, dtype):
    return random_uniform_p.bind(key, shape=shape, dtype=dtype)


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform floats in ``[minval, maxval)`` (JAX's bits-to-mantissa construction).
    Differentiable in ``minval`` and ``maxval``.

    >>> import numpy as np, functrans.random as random
    >>> random.uniform(random.PRNGKey(0), (2,), minval=-1.0, maxval=1.0)
    array([-0.16308578, -0.56740909])
    """
    key = _check_key("uniform", key)
    dtype, shape = _float_dtype("uniform", dtype), _shape("uniform", shape)
    _check_broadcast("uniform", shape, minval, maxval)
    lo, hi = _param(minval, dtype), _param(maxval, dtype)
    u = _unit(key, shape, dtype)
    return fnp.maximum(lo, u * (hi - lo) + lo)


def normal(key, shape=(), dtype=None):
    """Standard normal draws (``sqrt(2) erfinv(u)``, ``u`` uniform in ``(-1, 1)``, as JAX);
    complex dtypes draw real and imaginary parts from two subkeys, each of variance 1/2.

    >>> import numpy as np, functrans.random as random
    >>> random.normal(random.PRNGKey(0), (3,))
    array([-0.20584214, -0.78476578,  1.81608667])
    """
    key = _check_key("normal", key)
    shape = _shape("normal", shape)
    dtype = _DEFAULT_FLOAT if dtype is None else np.dtype(dtype)
    if dtype.kind == "c":
        real = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
        k_re, k_im = split(key)
        re = random_normal_p.bind(k_re, shape=shape, dtype=real)
        im = random_normal_p.bind(k_im, shape=shape, dtype=real)
        return (lax.complex(re, im) / np.asarray(math.sqrt(2), real)).astype(dtype)
    dtype = _float_dtype("normal", dtype)
    return random_normal_p.bind(key, shape=shape, dtype=dtype)


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal draws conditioned on ``lower < x < upper`` (inverse-CDF method, as
    JAX).  No derivative in the bounds (JAX's flows through its uniform draw).

    >>> import numpy as np, functrans.random as random
    >>> x = random.truncated_normal(random.PRNGKey(0), -1.0, 1.0, (1000,))
    >>> bool((x > -1).all() and (x < 1).all())
    True
    """
    key = _check_key("truncated_normal", key)
    dtype = _float_dtype("truncated_normal", dtype)
    lower, upper = _as_array(lower), _as_array(upper)
    if shape is None:
        shape = np.broadcast_shapes(get_aval(lower).shape, get_aval(upper).shape)
    shape = _shape("truncated_normal", shape)
    _check_broadcast("truncated_normal", shape, lower, upper)
    lower = lax.stop_gradient(_param(lower, dtype))
    upper = lax.stop_gradient(_param(upper, dtype))
    return random_truncated_normal_p.bind(key, lower, upper, shape=shape, dtype=dtype)


def exponential(key, shape=(), dtype=None):
    """Exponential draws of rate 1: ``-log1p(-u)``.

    >>> import functrans.random as random
    >>> bool((random.exponential(random.PRNGKey(0), (100,)) >= 0).all())
    True
    """
    key = _check_key("exponential", key)
    dtype, shape = _float_dtype("exponential", dtype), _shape("exponential", shape)
    return -fnp.log1p(-_unit(key, shape, dtype))


def laplace(key, shape=(), dtype=None):
    """Laplace draws of scale 1: ``sign(u) log1p(-|u|)``, ``u`` uniform in ``(-1, 1)``.

    >>> import functrans.random as random
    >>> random.laplace(random.PRNGKey(0), (4,)).shape
    (4,)
    """
    key = _check_key("laplace", key)
    dtype, shape = _float_dtype("laplace", dtype), _shape("laplace", shape)
    u = uniform(key, shape, dtype, -1.0 + np.finfo(dtype).epsneg, 1.0)
    return fnp.sign(u) * fnp.log1p(-fnp.abs(u))


def logistic(key, shape=(), dtype=None):
    """Standard logistic draws: ``log(u) - log1p(-u)``.

    >>> import functrans.random as random
    >>> random.logistic(random.PRNGKey(0), (4,)).shape
    (4,)
    """
    key = _check_key("logistic", key)
    dtype, shape = _float_dtype("logistic", dtype), _shape("logistic", shape)
    u = uniform(key, shape, dtype, np.finfo(dtype).tiny, 1.0)
    return fnp.log(u) - fnp.log1p(-u)


def gumbel(key, shape=(), dtype=None, mode=None):
    """Standard Gumbel draws: ``-log(-log(u))`` (JAX's default ``mode='low'``; ``'high'``
    adds resolution near 0 from a second draw, as JAX).

    >>> import functrans.random as random
    >>> random.gumbel(random.PRNGKey(0), (4,)).shape
    (4,)
    """
    key = _check_key("gumbel", key)
    dtype, shape = _float_dtype("gumbel", dtype), _shape("gumbel", shape)
    info = np.finfo(dtype)
    if mode in (None, "low"):
        return -fnp.log(-fnp.log(uniform(key, shape, dtype, info.tiny, 1.0)))
    if mode == "high":
        both = uniform(key, (2,) + shape, dtype)
        high, low = both[0], both[1]
        x = fnp.where(high >= 0.5, high, high + 2.0 ** -info.nmant * low + info.tiny)
        return -fnp.log(-fnp.log1p(-x))
    raise ValueError(f"random.gumbel: mode must be None, 'low' or 'high', got {mode!r}")


def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy draws: ``tan(pi (u - 1/2))``.

    >>> import functrans.random as random
    >>> random.cauchy(random.PRNGKey(0), (4,)).shape
    (4,)
    """
    key = _check_key("cauchy", key)
    dtype, shape = _float_dtype("cauchy", dtype), _shape("cauchy", shape)
    u = uniform(key, shape, dtype, np.finfo(dtype).eps, 1.0)
    return fnp.tan(np.asarray(np.pi, dtype) * (u - np.asarray(0.5, dtype)))


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method: str = "cholesky"):
    """Draws of ``N(mean, cov)``: ``mean + factor @ z`` with ``factor`` the Cholesky factor
    (or ``method='eigh'``) of ``cov``.  Differentiable in ``mean`` and ``cov``.

    >>> import numpy as np, functrans.random as random
    >>> random.multivariate_normal(random.PRNGKey(0), np.zeros(2), np.eye(2), (5,)).shape
    (5, 2)
    """
    key = _check_key("multivariate_normal", key)
    dtype = _float_dtype("multivariate_normal", dtype)
    mean, cov = _param(mean, dtype), _param(cov, dtype)
    ms, cs = get_aval(mean).shape, get_aval(cov).shape
    if len(ms) < 1:
        raise ValueError(f"random.multivariate_normal: mean must have ndim >= 1, got {ms}")
    if len(cs) < 2 or cs[-2:] != (ms[-1], ms[-1]):
        raise ValueError(f"random.multivariate_normal: cov must have shape (..., n, n) with "
                         f"n = mean.shape[-1] = {ms[-1]}, got {cs}")
    if shape is None:
        shape = np.broadcast_shapes(ms[:-1], cs[:-2])
    shape = _shape("multivariate_normal", shape)
    if np.broadcast_shapes(shape, ms[:-1], cs[:-2]) != shape:
        raise ValueError(f"random.multivariate_normal: shape {shape} must be the broadcast "
                         f"of mean's batch shape {ms[:-1]} and cov's {cs[:-2]} with it")
    if method == "cholesky":
        factor = fnp.linalg.cholesky(cov)
    elif method == "eigh":
        w, v = fnp.linalg.eigh(cov)
        factor = v * fnp.sqrt(w[..., None, :])
    else:
        raise ValueError(f"random.multivariate_normal: method must be 'cholesky' or 'eigh' "
                         f"(functrans has no svd yet), got {method!r}")
    z = normal(key, shape + ms[-1:], dtype)
    return mean + fnp.einsum("...ij,...j->...i", factor, z)


def orthogonal(key, n: int, shape=(), dtype=None, m: int | None = None):
    """Haar-distributed ``n x m`` (default square) matrices with orthonormal columns or
    rows: QR of a normal matrix, columns signed by ``R``'s diagonal (as JAX).

    >>> import numpy as np, functrans.random as random
    >>> q = random.orthogonal(random.PRNGKey(0), 3)
    >>> bool(np.allclose(q @ q.T, np.eye(3)))
    True
    """
    key = _check_key("orthogonal", key)
    dtype, shape = _float_dtype("orthogonal", dtype), _shape("orthogonal", shape)
    m = n if m is None else m
    z = normal(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = fnp.linalg.qr(z)
    d = fnp.diagonal(r, 0, -2, -1)
    x = q * fnp.expand_dims(fnp.sign(d), -2)
    return fnp.swapaxes(x, -1, -2) if n < m else x


# -- discrete samplers --------------------------------------------------------------------


def bernoulli(key, p=0.5, shape=None, mode: str = "low"):
    """Booleans that are True with probability ``p``: ``uniform(dtype of p) < p``.

    >>> import functrans.random as random
    >>> random.bernoulli(random.PRNGKey(0), 0.5, (4,))
    array([ True,  True, False, False])
    """
    if mode not in ("low", "high"):
        raise ValueError(f"random.bernoulli: mode must be 'low' or 'high', got {mode!r}")
    key = _check_key("bernoulli", key)
    p = _as_array(p)
    pdtype = get_aval(p).dtype
    dtype = pdtype if pdtype.kind == "f" else _DEFAULT_FLOAT
    p = lax.stop_gradient(_param(p, dtype))
    shape = get_aval(p).shape if shape is None else _shape("bernoulli", shape)
    _check_broadcast("bernoulli", shape, p)
    if mode == "high":  # a second draw refines the first below its resolution, as JAX's
        u = _unit(key, (2, *shape), dtype)
        u1, u2 = lax.index_in_dim(u, 0, keepdims=False), lax.index_in_dim(u, 1, keepdims=False)
        u2 = lax.mul(u2, np.asarray(2.0 ** -np.finfo(dtype).nmant, dtype))
        return lax.lt(u2, lax.sub(p, u1))
    return _unit(key, shape, dtype) < p


def rademacher(key, shape=(), dtype=None):
    """Draws of +1 and -1 with equal probability.

    >>> import functrans.random as random
    >>> random.rademacher(random.PRNGKey(0), (4,))
    array([ 1,  1, -1, -1])
    """
    dtype = _DEFAULT_INT if dtype is None else np.dtype(dtype)
    b = bernoulli(key, 0.5, _shape("rademacher", shape)).astype(dtype)
    return (2 * b - 1).astype(dtype)


def _int_dtype(name: str, dtype) -> np.dtype:
    dtype = _DEFAULT_INT if dtype is None else np.dtype(dtype)
    if dtype.kind not in "iu":
        raise ValueError(f"random.{name}: dtype must be an integer dtype, got {dtype}")
    return dtype


def randint(key, shape, minval, maxval, dtype=None):
    """Integers uniform in ``[minval, maxval)`` (JAX's two-draw construction, so values
    match JAX's bit for bit).

    >>> import functrans.random as random
    >>> random.randint(random.PRNGKey(0), (5,), 0, 10)
    array([5, 1, 5, 7, 3])
    """
    key = _check_key("randint", key)
    dtype, shape = _int_dtype("randint", dtype), _shape("randint", shape)
    _check_broadcast("randint", shape, minval, maxval)

    def bound(v):
        if isinstance(v, int):
            return np.int64(v)  # a scalar, kept on no device
        v = _as_array(v)
        return v if get_aval(v).dtype.kind in "iu" else convert_element_type(v, np.int64)
    return random_randint_p.bind(key, bound(minval), bound(maxval), shape=shape, dtype=dtype)


def _shuffle_indices(key, shape, axis):
    return random_shuffle_p.bind(key, shape=shape, axis=axis)


def permutation(key, x, axis: int = 0, independent: bool = False):
    """A random permutation of ``x`` along ``axis`` (of ``arange(x)`` for an integer ``x``);
    ``independent=True`` shuffles every slice along ``axis`` on its own.

    >>> import functrans.random as random
    >>> random.permutation(random.PRNGKey(0), 5)
    array([0, 1, 4, 3, 2])
    """
    key = _check_key("permutation", key)
    if isinstance(x, int | np.integer):
        return _shuffle_indices(key, (operator.index(x),), 0)
    x = _as_array(x)
    shape = tuple(get_aval(x).shape)
    if not shape:
        raise TypeError("random.permutation: x must be an integer or an array with at least "
                        "one axis, got a 0-d array")
    axis = axis + len(shape) if axis < 0 else axis
    if not 0 <= axis < len(shape):
        raise ValueError(f"random.permutation: axis {axis} out of range for shape {shape}")
    if independent or len(shape) == 1:
        return fnp.take_along_axis(x, _shuffle_indices(key, shape, axis), axis)
    return fnp.take(x, _shuffle_indices(key, (shape[axis],), 0), axis=axis)


def _top_k_indices(g, k: int):
    """Indices of the ``k`` largest entries along the last axis of ``g``, largest first
    (first index on ties), by ``k`` argmax rounds: shape ``g.shape[:-1] + (k,)``."""
    n = get_aval(g).shape[-1]
    picks = []
    for _ in range(k):
        i = fnp.argmax(g, axis=-1)
        picks.append(i)
        g = fnp.where(fnp.arange(n) == fnp.expand_dims(i, -1), -np.inf, g)
    return fnp.stack(picks, axis=-1)


def choice(key, a, shape=(), replace: bool = True, p=None, axis: int = 0, mode=None):
    """Draws from ``a`` (or ``arange(a)`` for an integer) along ``axis``, with or without
    replacement, uniformly or with probabilities ``p``; JAX's algorithms.

    >>> import numpy as np, functrans.random as random
    >>> random.choice(random.PRNGKey(0), 5, (3,), replace=False)
    array([0, 1, 4])
    """
    key = _check_key("choice", key)
    if not isinstance(shape, tuple | list):
        raise TypeError(f"random.choice: shape must be a sequence, got {shape!r}")
    shape = _shape("choice", shape)
    a = _as_array(a)
    ashape = tuple(get_aval(a).shape)
    if not ashape:
        n_inputs = operator.index(a)
    else:
        axis = axis + len(ashape) if axis < 0 else axis
        n_inputs = ashape[axis]
    n_draws = math.prod(shape)
    out_shape = shape if not ashape else ashape[:axis] + shape + ashape[axis + 1:]
    if n_draws == 0:
        return fnp.zeros(out_shape, dtype=get_aval(a).dtype)
    if n_inputs <= 0:
        raise ValueError("random.choice: a must be positive unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"random.choice: cannot take {n_draws} samples from {n_inputs} "
                         "without replacement")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if not ashape else fnp.take(a, ind, axis=axis)
        else:
            perm = permutation(key, n_inputs if not ashape else a, axis)
            result = fnp.take(perm, np.arange(n_draws), axis=0 if not ashape else axis)
    else:
        p = _as_array(p)
        pdtype = get_aval(p).dtype
        p = lax.stop_gradient(_param(p, pdtype if pdtype.kind == "f" else _DEFAULT_FLOAT))
        if tuple(get_aval(p).shape) != (n_inputs,):
            raise ValueError(f"random.choice: p must have shape ({n_inputs},) (the size of "
                             f"a along axis), got {get_aval(p).shape}")
        if replace:
            cum = fnp.cumsum(p)
            r = cum[-1] * (1 - uniform(key, shape, get_aval(cum).dtype))
            ind = fnp.sum(cum < r[..., None], axis=-1)  # searchsorted, side='left'
        else:
            g = gumbel(key, (n_inputs,), get_aval(p).dtype, mode=mode) + fnp.log(p)
            ind = _top_k_indices(g, n_draws)
        result = ind if not ashape else fnp.take(a, ind, axis=axis)
    return fnp.reshape(result, out_shape)


def categorical(key, logits, axis: int = -1, shape=None, replace: bool = True, mode=None):
    """Category indices drawn with log-probabilities ``logits`` along ``axis`` (the Gumbel
    argmax, as JAX; ``replace=False`` takes the top ``k`` of one perturbation).

    >>> import numpy as np, functrans.random as random
    >>> random.categorical(random.PRNGKey(0), np.log(np.array([0.1, 0.2, 0.7])), shape=(5,))
    array([2, 2, 2, 1, 1])
    """
    key = _check_key("categorical", key)
    logits = _as_array(logits)
    aval = get_aval(logits)
    lshape = tuple(aval.shape)
    if not lshape:
        raise ValueError("random.categorical: logits must have at least one axis")
    axis = axis + len(lshape) if axis < 0 else axis
    if not 0 <= axis < len(lshape):
        raise ValueError(f"random.categorical: axis {axis} out of range for logits of shape "
                         f"{lshape}")
    dtype = aval.dtype if aval.dtype.kind == "f" else _DEFAULT_FLOAT
    logits = lax.stop_gradient(_param(logits, dtype))
    batch_shape = lshape[:axis] + lshape[axis + 1:]
    shape = batch_shape if shape is None else _shape("categorical", shape)
    try:
        fits = np.broadcast_shapes(shape, batch_shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"random.categorical: shape {shape} must be the broadcast of itself "
                         f"and the batch shape {batch_shape} of logits (logits' shape without axis {axis})")
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        neg_axis = axis - len(lshape)
        gshape = list(shape[len(prefix):])
        gshape.insert(axis, lshape[axis])
        g = gumbel(key, (*prefix, *gshape), dtype, mode=mode)
        return fnp.argmax(g + fnp.reshape(logits, (1,) * len(prefix) + lshape), axis=neg_axis)
    k = math.prod(prefix)
    if k > lshape[axis]:
        raise ValueError(f"random.categorical: {k} samples without replacement exceed the "
                         f"{lshape[axis]} categories")
    g = fnp.moveaxis(logits + gumbel(key, lshape, dtype, mode=mode), axis, -1)
    # k draws per batch member (the last axis), then first, as the shape's prefix; int32,
    # as the indices of JAX's top_k
    picks = fnp.moveaxis(_top_k_indices(g, k), -1, 0)
    return fnp.reshape(picks, shape).astype(np.int32)


# -- gamma family -------------------------------------------------------------------------


def _gamma_draw(name, key, a, shape, dtype, log_space):
    key = _check_key(name, key)
    dtype = _float_dtype(name, dtype)
    a = _param(a, dtype)
    shape = tuple(get_aval(a).shape) if shape is None else _shape(name, shape)
    _check_broadcast(name, shape, a)
    return random_gamma_p.bind(key, a, shape=shape, dtype=dtype, log_space=log_space)


def gamma(key, a, shape=None, dtype=None):
    """Gamma draws of shape ``a`` and scale 1 (Marsaglia and Tsang's method with JAX's
    sequence of draws).  Differentiable once in ``a``, as in JAX, by implicit
    reparameterization: each draw's level ``F(x; a)`` under the gamma CDF is held fixed,
    so ``dx/da = lax.random_gamma_grad(a, x)``; ``beta`` and ``dirichlet`` follow.

    >>> import numpy as np, functrans as ft, functrans.random as random
    >>> x = random.gamma(random.PRNGKey(0), 2.0, (2000,))
    >>> bool(abs(x.mean() - 2.0) < 0.1)
    True
    >>> g = ft.grad(lambda a: random.gamma(random.PRNGKey(0), a, (2000,)).mean())(2.0)
    >>> bool(abs(g - 1.0) < 0.05)  # d E[x] / da = 1
    True
    """
    return _gamma_draw("gamma", key, a, shape, dtype, False)


def loggamma(key, a, shape=None, dtype=None):
    """The logarithm of gamma draws, computed in log space (accurate for small ``a``).

    >>> import numpy as np, functrans.random as random
    >>> bool(np.isfinite(random.loggamma(random.PRNGKey(0), 1e-4, (5,))).all())
    True
    """
    return _gamma_draw("loggamma", key, a, shape, dtype, True)


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) draws: ``Ga / (Ga + Gb)`` from two log-space gamma draws (as JAX).

    >>> import functrans.random as random
    >>> x = random.beta(random.PRNGKey(0), 2.0, 3.0, (2000,))
    >>> bool(abs(x.mean() - 0.4) < 0.02)
    True
    """
    key = _check_key("beta", key)
    dtype = _float_dtype("beta", dtype)
    a, b = _param(a, dtype), _param(b, dtype)
    if shape is None:
        shape = np.broadcast_shapes(get_aval(a).shape, get_aval(b).shape)
    shape = _shape("beta", shape)
    _check_broadcast("beta", shape, a, b)
    key_a, key_b = split(key)
    log_a = loggamma(key_a, fnp.broadcast_to(a, shape), shape, dtype)
    log_b = loggamma(key_b, fnp.broadcast_to(b, shape), shape, dtype)
    top = fnp.maximum(log_a, log_b)
    ga, gb = fnp.exp(log_a - top), fnp.exp(log_b - top)
    return ga / (ga + gb)


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) draws over the last axis: the softmax of log-gamma draws.

    >>> import numpy as np, functrans.random as random
    >>> x = random.dirichlet(random.PRNGKey(0), np.array([1.0, 2.0, 3.0]), (4,))
    >>> x.shape, bool(np.allclose(x.sum(-1), 1.0))
    ((4, 3), True)
    """
    key = _check_key("dirichlet", key)
    dtype = _float_dtype("dirichlet", dtype)
    alpha = _param(alpha, dtype)
    ashape = tuple(get_aval(alpha).shape)
    if not ashape:
        raise ValueError("random.dirichlet: alpha must have at least one axis")
    shape = ashape[:-1] if shape is None else _shape("dirichlet", shape)
    _check_broadcast("dirichlet", shape, alpha[..., 0])
    logs = loggamma(key, alpha, shape + ashape[-1:], dtype)
    unnormalized = fnp.exp(logs - lax.stop_gradient(fnp.max(logs, axis=-1, keepdims=True)))
    return unnormalized / fnp.sum(unnormalized, axis=-1, keepdims=True)


# -- helpers of the samplers below ----------------------------------------------------------


def _sample_shape(name: str, shape, **params) -> tuple:
    """The draw's shape: ``shape`` when given (each parameter must broadcast to it), else the
    broadcast of the parameters' shapes; errors name the function and the parameter."""
    shapes = {k: tuple(get_aval(_as_array(v)).shape) for k, v in params.items()}
    if shape is None:
        try:
            return tuple(np.broadcast_shapes(*shapes.values()))
        except ValueError:
            described = ", ".join(f"{k} {s}" for k, s in shapes.items())
            raise ValueError(f"random.{name}: the shapes of the parameters ({described}) do "
                             "not broadcast together") from None
    shape = _shape(name, shape)
    for k, s in shapes.items():
        try:
            fits = np.broadcast_shapes(shape, s) == shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"random.{name}: {k} of shape {s} does not broadcast to "
                             f"shape={shape} (shape must hold the parameters' broadcast "
                             "shape)")
    return shape


def _on_key_device(key, x, shape, dtype):
    """``x`` broadcast to ``shape`` in ``dtype``, on the key's device even when ``x`` is a
    host scalar (loop carries built from it meet the draws there)."""
    return fnp.full_like(key, 0, dtype, shape) + _param(x, dtype)


def _inexact(x) -> np.dtype:
    """The float dtype a parameter computes in, as JAX promotes it: its own if it is a float,
    else float64."""
    dtype = get_aval(_as_array(x)).dtype
    return dtype if dtype.kind == "f" else _DEFAULT_FLOAT


def _split2(key):
    pair = split(key)
    return pair[0], pair[1]


# -- more continuous samplers ---------------------------------------------------------------


def lognormal(key, sigma=1.0, shape=None, dtype=None):
    """Log-normal draws: ``exp(sigma * z)`` with ``z`` standard normal.  Differentiable in
    ``sigma``.

    >>> import functrans.random as random
    >>> x = random.lognormal(random.PRNGKey(0), 0.5, (2000,))
    >>> bool((x > 0).all()) and bool(abs(x.mean() - 1.1331) < 0.03)
    True
    """
    key = _check_key("lognormal", key)
    dtype = _float_dtype("lognormal", dtype)
    shape = _sample_shape("lognormal", shape, sigma=sigma)
    return fnp.exp(random_normal_p.bind(key, shape=shape, dtype=dtype) * _param(sigma, dtype))


def pareto(key, b, shape=None, dtype=None):
    """Pareto draws of shape ``b`` on ``[1, inf)``: ``exp(e / b)`` with ``e`` a standard
    exponential draw.  Differentiable in ``b``.

    >>> import functrans.random as random
    >>> x = random.pareto(random.PRNGKey(0), 3.0, (2000,))
    >>> bool(x.min() >= 1.0) and bool(abs(x.mean() - 1.5) < 0.05)
    True
    """
    key = _check_key("pareto", key)
    dtype = _float_dtype("pareto", dtype)
    shape = _sample_shape("pareto", shape, b=b)
    return fnp.exp(exponential(key, shape, dtype) / _param(b, dtype))


def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh draws: ``scale * sqrt(-2 log u)``.  Differentiable in ``scale``.

    >>> import numpy as np, functrans.random as random
    >>> x = random.rayleigh(random.PRNGKey(0), 2.0, (2000,))
    >>> bool(abs(x.mean() - 2.0 * np.sqrt(np.pi / 2)) < 0.06)
    True
    """
    key = _check_key("rayleigh", key)
    dtype = _float_dtype("rayleigh", dtype)
    shape = _sample_shape("rayleigh", shape, scale=scale)
    u = _unit(key, shape, dtype)
    return _param(scale, dtype) * fnp.sqrt(fnp.log(u) * dtype.type(-2))


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) draws of mean ``mean`` and shape 1, by Michael, Schucany and
    Haas' transform of a normal and a uniform draw (two subkeys, as JAX).  Differentiable in
    ``mean``.

    >>> import functrans.random as random
    >>> x = random.wald(random.PRNGKey(0), 2.0, (4000,))
    >>> bool(abs(x.mean() - 2.0) < 0.15)
    True
    """
    key = _check_key("wald", key)
    dtype = _float_dtype("wald", dtype)
    shape = _sample_shape("wald", shape, mean=mean)
    k1, k2 = _split2(key)
    mu = fnp.broadcast_to(_param(mean, dtype), shape)
    v = random_normal_p.bind(k1, shape=shape, dtype=dtype)
    z = _unit(k2, shape, dtype)
    y = v * v
    mu2 = mu * mu
    root = fnp.sqrt(4 * mu * y + mu2 * (y * y))
    x = mu + mu2 * y / 2 - mu / 2 * root
    return fnp.where(z <= mu / (mu + x), x, mu2 / x)


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular draws on ``[left, right]`` peaking at ``mode``, by the inverse CDF of one
    uniform draw.  Differentiable in ``left``, ``mode`` and ``right``.

    >>> import functrans.random as random
    >>> x = random.triangular(random.PRNGKey(0), 0.0, 1.0, 4.0, (2000,))
    >>> bool(x.min() >= 0 and x.max() <= 4) and bool(abs(x.mean() - 5 / 3) < 0.05)
    True
    """
    key = _check_key("triangular", key)
    dtype = _float_dtype("triangular", dtype)
    shape = _sample_shape("triangular", shape, left=left, mode=mode, right=right)
    lo, peak, hi = (fnp.broadcast_to(_param(v, dtype), shape) for v in (left, mode, right))
    u = _unit(key, shape, dtype)
    below = lo + fnp.sqrt(u * (hi - lo) * (peak - lo))
    above = hi - fnp.sqrt((1 - u) * (hi - lo) * (hi - peak))
    return fnp.where(u < (peak - lo) / (hi - lo), below, above)


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull draws ``scale * (-log1p(-u)) ** (1 / concentration)`` (the inverse CDF).
    As in JAX, ``shape`` is the shape of the uniform draw, which broadcasts against the
    parameters.  Differentiable in ``scale`` and ``concentration``.

    >>> import functrans.random as random
    >>> x = random.weibull_min(random.PRNGKey(0), 2.0, 1.0, (2000,))
    >>> bool(abs(x.mean() - 2.0) < 0.1)
    True
    """
    key = _check_key("weibull_min", key)
    dtype = _float_dtype("weibull_min", dtype)
    shape = _shape("weibull_min", shape)
    scale, concentration = _param(scale, dtype), _param(concentration, dtype)
    _broadcast_with_draw("weibull_min", shape, scale=scale, concentration=concentration)
    u = _unit(key, shape, dtype)
    return fnp.power(-fnp.log1p(-u), 1 / concentration) * scale


def _broadcast_with_draw(name: str, shape: tuple, **params) -> tuple:
    """The broadcast of the draw's ``shape`` with the parameters' shapes (the samplers whose
    ``shape`` JAX broadcasts against their parameters rather than fixing the result)."""
    shapes = [shape] + [tuple(get_aval(_as_array(v)).shape) for v in params.values()]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        described = ", ".join(f"{k} {s}" for k, s in zip(params, shapes[1:]))
        raise ValueError(f"random.{name}: shape={shape} and the shapes of the parameters "
                         f"({described}) do not broadcast together") from None


def maxwell(key, shape=(), dtype=None):
    """One-sided Maxwell draws: the length of a 3-vector of standard normal draws.

    >>> import numpy as np, functrans.random as random
    >>> x = random.maxwell(random.PRNGKey(0), (2000,))
    >>> bool(abs(x.mean() - 2 * np.sqrt(2 / np.pi)) < 0.05)
    True
    """
    key = _check_key("maxwell", key)
    dtype = _float_dtype("maxwell", dtype)
    shape = _shape("maxwell", shape)
    z = random_normal_p.bind(key, shape=shape + (3,), dtype=dtype)
    return fnp.sqrt(fnp.sum(z * z, axis=-1))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell draws ``loc + scale * s * m``: ``m`` one-sided Maxwell, ``s`` a
    random sign.  As in JAX, the result has shape ``shape + broadcast(loc, scale)``, and an
    empty ``shape`` counts as that broadcast shape (so array parameters of shape ``(n,)``
    give ``(n, n)`` draws).  Differentiable in ``loc`` and ``scale``.

    >>> import functrans.random as random
    >>> x = random.double_sided_maxwell(random.PRNGKey(0), 1.0, 2.0, (4000,))
    >>> bool(abs(x.mean() - 1.0) < 0.15) and bool(abs(x.var() - 12.0) < 0.8)
    True
    """
    key = _check_key("double_sided_maxwell", key)
    dtype = _float_dtype("double_sided_maxwell", dtype)
    shape = _shape("double_sided_maxwell", shape)
    loc, scale = _param(loc, dtype), _param(scale, dtype)
    params_shape = _broadcast_with_draw("double_sided_maxwell", (), loc=loc, scale=scale)
    shape = (shape or params_shape) + params_shape
    maxwell_key, sign_key = _split2(key)
    m = maxwell(maxwell_key, shape, dtype)
    sign = rademacher(sign_key, shape, dtype)
    return sign * m * scale + loc


# -- samplers built on gamma draws -----------------------------------------------------------


def t(key, df, shape=None, dtype=None):
    """Student's t draws with ``df`` degrees of freedom: ``z * sqrt((df/2) / g)``, ``z``
    normal and ``g`` a gamma draw of shape ``df/2`` (two subkeys, as JAX).  Differentiable
    in ``df`` through the gamma draw's implicit derivative.

    >>> import functrans.random as random
    >>> x = random.t(random.PRNGKey(0), 5.0, (4000,))
    >>> bool(abs(x.var() - 5 / 3) < 0.2)
    True
    """
    key = _check_key("t", key)
    dtype = _float_dtype("t", dtype)
    shape = _sample_shape("t", shape, df=df)
    half_df = _param(df, dtype) / 2
    key_n, key_g = _split2(key)
    z = random_normal_p.bind(key_n, shape=shape, dtype=dtype)
    g = gamma(key_g, half_df, shape, dtype)
    return z * fnp.sqrt(half_df / g)


def chisquare(key, df, shape=None, dtype=None):
    """Chi-square draws with ``df`` degrees of freedom: twice a gamma draw of shape
    ``df/2``, drawn in log space.  Differentiable in ``df``.

    >>> import functrans.random as random
    >>> x = random.chisquare(random.PRNGKey(0), 4.0, (4000,))
    >>> bool(abs(x.mean() - 4.0) < 0.15)
    True
    """
    key = _check_key("chisquare", key)
    dtype = _float_dtype("chisquare", dtype)
    shape = _sample_shape("chisquare", shape, df=df)
    return _chisquare(key, _param(df, dtype), shape, dtype)


def _chisquare(key, df, shape, dtype):
    return fnp.exp(loggamma(key, df / 2, shape, dtype)) * dtype.type(2)


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F draws: the ratio of two chi-square draws, each over its degrees of freedom (the
    denominator's drawn from the first subkey, as JAX).  Differentiable in ``dfnum`` and
    ``dfden``.

    >>> import functrans.random as random
    >>> x = random.f(random.PRNGKey(0), 4.0, 10.0, (4000,))
    >>> bool(abs(x.mean() - 1.25) < 0.1)
    True
    """
    key = _check_key("f", key)
    dtype = _float_dtype("f", dtype)
    shape = _sample_shape("f", shape, dfnum=dfnum, dfden=dfden)
    dfnum, dfden = _param(dfnum, dtype), _param(dfden, dtype)
    key_den, key_num = _split2(key)
    num = _chisquare(key_num, dfnum, shape, dtype) / dfnum
    den = _chisquare(key_den, dfden, shape, dtype) / dfden
    return num / den


def generalized_normal(key, p, shape=(), dtype=None):
    """Generalized normal draws, density proportional to ``exp(-|x| ** p)``: a random sign
    times ``g ** (1/p)``, ``g`` a gamma draw of shape ``1/p``.  Differentiable in ``p``.

    >>> import functrans.random as random
    >>> x = random.generalized_normal(random.PRNGKey(0), 2.0, (4000,))
    >>> bool(abs(x.var() - 0.5) < 0.04)    # p = 2: a normal of variance 1/2
    True
    """
    key = _check_key("generalized_normal", key)
    dtype = _float_dtype("generalized_normal", dtype)
    shape = _sample_shape("generalized_normal", shape, p=p)
    return _generalized_normal(key, _param(p, dtype), shape, dtype)


def _generalized_normal(key, p, shape, dtype):
    key_g, key_sign = _split2(key)
    g = gamma(key_g, 1 / p, shape, dtype)
    return rademacher(key_sign, shape, dtype) * g ** (1 / p)


def ball(key, d: int, p=2, shape=(), dtype=None):
    """Points uniform in the unit ``p``-norm ball of dimension ``d``, shape ``shape + (d,)``
    (Barthe, Guédon, Mendelson and Naor: generalized normal coordinates over the ``p``-norm
    of themselves and an exponential draw).  Differentiable in ``p``.

    >>> import numpy as np, functrans.random as random
    >>> x = random.ball(random.PRNGKey(0), 3, shape=(1000,))
    >>> x.shape, bool((np.linalg.norm(x, axis=-1) <= 1).all())
    ((1000, 3), True)
    """
    key = _check_key("ball", key)
    dtype = _float_dtype("ball", dtype)
    shape = _shape("ball", shape)
    try:
        d = operator.index(d)
    except TypeError:
        raise TypeError(f"random.ball: d must be an integer (the dimension), got {d!r}") from None
    if d < 0:
        raise ValueError(f"random.ball: d must be non-negative, got {d}")
    full = _sample_shape("ball", shape + (d,), p=p)
    p = _param(p, dtype)
    key_g, key_e = _split2(key)
    g = _generalized_normal(key_g, p, full, dtype)
    e = exponential(key_e, shape, dtype)
    radius = (fnp.sum(fnp.abs(g) ** p, axis=-1) + e) ** (1 / p)
    return g / radius[..., None]


# -- more discrete samplers ------------------------------------------------------------------


def geometric(key, p, shape=None, dtype=None):
    """Geometric draws (trials up to the first success, from 1): ``floor(log u / log1p(-p))
    + 1``, computed in ``p``'s float dtype (float64 for Python numbers), so integers equal
    JAX's.  No derivative in ``p``.

    >>> import functrans.random as random
    >>> random.geometric(random.PRNGKey(0), 0.3, (6,))
    array([3, 5, 1, 2, 2, 3])
    """
    key = _check_key("geometric", key)
    dtype = _int_dtype("geometric", dtype)
    shape = _sample_shape("geometric", shape, p=p)
    pdtype = _inexact(p)
    p = lax.stop_gradient(_param(p, pdtype))
    u = _unit(key, shape, pdtype)
    u = fnp.where(u == 0, pdtype.type(1), u)  # JAX's guard against log(0)
    g = fnp.floor(fnp.log(u) / fnp.log1p(-p)) + 1
    return g.astype(dtype)


def _log_factorial(k):
    """``lgamma(k + 1)`` for integer-valued float32 ``k >= 0`` (Stirling's series after
    eight upward steps, in float64, then rounded): no SciPy needed."""
    x = k.astype(np.float64) + 1
    y = x + 8
    inv = 1 / y
    inv2 = inv * inv
    series = inv * (1 / 12 - inv2 * (1 / 360 - inv2 * (1 / 1260 - inv2 / 1680)))
    out = (y - 0.5) * fnp.log(y) - y + 0.5 * math.log(2 * math.pi) + series
    for i in range(8):
        out = out - fnp.log(x + i)
    return out.astype(k.dtype)


def _poisson_knuth(key, lam, shape, dtype):
    """Knuth's method: count uniform factors until their product falls below exp(-lam);
    one key chain for the whole draw (each round splits it), as JAX."""
    f32 = np.dtype(np.float32)

    def cond(carry):
        return fnp.any(carry[2] > -lam)

    def body(carry):
        k, rng, log_prod = carry
        rng, sub = _split2(rng)
        k = fnp.where(log_prod > -lam, k + 1, k)
        return k, rng, log_prod + fnp.log(_unit(sub, shape, f32))

    init = (fnp.zeros_like(lam, dtype), key, fnp.zeros_like(lam))
    k = lax.while_loop(cond, body, init)[0]
    return (k - 1).astype(dtype)


def _poisson_rejection(key, lam, shape, dtype):
    """Hörmann's transformed rejection (PTRS) for ``lam >= 10``, in float32 as JAX's; every
    round draws for the whole array and a later acceptance replaces an earlier one (JAX's
    loop), so the rounds run until every element has been accepted once."""
    f = np.float32
    log_lam = fnp.log(lam)
    b = f(0.931) + f(2.53) * fnp.sqrt(lam)
    a = f(-0.059) + f(0.02483) * b
    inv_alpha = f(1.1239) + f(1.1328) / (b - f(3.4))
    v_r = f(0.9277) - f(3.6224) / (b - f(2))

    def cond(carry):
        return fnp.any(~carry[1])

    def body(carry):
        k_out, accepted, rng = carry
        three = split(rng, 3)
        rng, k0, k1 = three[0], three[1], three[2]
        u = _unit(k0, shape, np.dtype(f)) - f(0.5)
        v = _unit(k1, shape, np.dtype(f))
        us = f(0.5) - fnp.abs(u)
        k = fnp.floor((f(2) * a / us + b) * u + lam + f(0.43))
        s = fnp.log(v * inv_alpha / (a / (us * us) + b))
        t = -lam + k * log_lam - _log_factorial(fnp.maximum(k, f(0)))
        accept1 = (us >= f(0.07)) & (v <= v_r)
        reject = (k < 0) | ((us < f(0.013)) & (v > us))
        accept = accept1 | (~reject & (s <= t))
        return fnp.where(accept, k, k_out), accepted | accept, rng

    init = (fnp.full_like(lam, -1), fnp.zeros_like(lam, bool), key)
    return lax.while_loop(cond, body, init)[0].astype(dtype)


def poisson(key, lam, shape=None, dtype=None):
    """Poisson draws of rate ``lam``, computed in float32 as JAX does: Knuth's
    multiplication method below ``lam = 10``, Hörmann's transformed rejection from there on
    (both with ``lax.while_loop``), so the integers equal JAX's.  ``lam = 0`` gives 0, a
    negative or NaN rate -1 (JAX's values).  No derivative in ``lam``.

    >>> import numpy as np, functrans.random as random
    >>> random.poisson(random.PRNGKey(0), np.array([0.5, 3.0, 40.0]))
    array([ 0,  0, 32])
    """
    key = _check_key("poisson", key)
    dtype = _int_dtype("poisson", dtype)
    shape = _sample_shape("poisson", shape, lam=lam)
    f32 = np.dtype(np.float32)
    lam = lax.stop_gradient(_on_key_device(key, lam, shape, f32))
    use_knuth = fnp.isnan(lam) | (lam < 10)
    lam_knuth = fnp.where(use_knuth, lam, f32.type(0))
    lam_rejection = fnp.where(use_knuth, f32.type(1e5), lam)
    k = fnp.where(use_knuth, _poisson_knuth(key, lam_knuth, shape, dtype),
                  _poisson_rejection(key, lam_rejection, shape, dtype))
    return fnp.where(lam == 0, fnp.zeros_like(k), k)


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)  # lgamma(k + 1) - Stirling's formula, k = 0 .. 9


def _stirling_tail(k):
    """The remainder of Stirling's formula for ``log k!``: tabulated for ``k <= 9``, else
    JAX's series, which JAX evaluates at ``k`` clamped to 9 (kept, for JAX's draws)."""
    kc = fnp.clip(k, 0, 9)
    kp1sq = (kc + 1) * (kc + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (kc + 1)
    whole = fnp.floor(kc)
    table = fnp.zeros_like(k)
    for i, value in enumerate(_STIRLING_TAIL):
        table = fnp.where(whole == i, get_aval(k).dtype.type(value), table)
    return fnp.where(k <= 9, table, approx)


def _binomial_inversion(key, count, q, shape, dtype):
    """Sums of geometric draws until they pass ``count`` (for ``count * q <= 10``)."""
    log1m_q = fnp.log1p(-q)
    certain = log1m_q == 0  # q = 0: the first geometric draw is infinite (no divide warning)
    log1m_q = fnp.where(certain, get_aval(q).dtype.type(-1), log1m_q)

    def cond(carry):
        return fnp.any(carry[1] <= count)

    def body(carry):
        num_geom, geom_sum, rng = carry
        sub, rng = _split2(rng)
        num_geom = fnp.where(geom_sum <= count, num_geom + 1, num_geom)
        geom = fnp.ceil(fnp.log(_unit(sub, shape, get_aval(q).dtype)) / log1m_q)
        geom = fnp.where(certain, get_aval(q).dtype.type(np.inf), geom)
        return num_geom, geom_sum + geom, rng

    init = (fnp.zeros_like(q), fnp.zeros_like(q), key)
    return (lax.while_loop(cond, body, init)[0] - 1).astype(dtype)


def _btrs(key, count, q, shape, dtype):
    """Hörmann's BTRS transformed rejection (for ``count * q > 10``), JAX's rounds."""
    pdtype = get_aval(q).dtype
    stddev = fnp.sqrt(count * q * (1 - q))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * q
    c = count * q + 0.5
    v_r = 0.92 - 4.2 / b
    r = q / (1 - q)
    alpha = (2.83 + 5.1 / b) * stddev
    m = fnp.floor((count + 1) * q)

    def cond(carry):
        return fnp.any(~carry[1])

    def body(carry):
        k_out, accepted, rng = carry
        three = split(rng, 3)
        rng, k0, k1 = three[0], three[1], three[2]
        u = _unit(k0, shape, pdtype) - 0.5
        v = _unit(k1, shape, pdtype)
        us = 0.5 - fnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = fnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        ks = fnp.clip(k, 0, count)  # rejected draws: any k keeps the logs finite
        log_v = fnp.log(v * alpha / (a / (us * us) + b))
        bound = (((m + 0.5) * fnp.log((m + 1) / (r * (count - m + 1)))
                  + (count + 1) * fnp.log((count - m + 1) / (count - ks + 1)))
                 + (ks + 0.5) * fnp.log(r * (count - ks + 1) / (ks + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(ks) - _stirling_tail(count - ks))
        accept = accept1 | (~reject & (log_v <= bound))
        return fnp.where(accept, k, k_out), accepted | accept, rng

    init = (fnp.full_like(q, -1), fnp.zeros_like(q, bool), key)
    return lax.while_loop(cond, body, init)[0].astype(dtype)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial draws of ``n`` trials of success probability ``p``, as floats (JAX's
    algorithms: sums of geometric draws where ``n min(p, 1-p) <= 10``, else Hörmann's BTRS
    rejection, both with ``lax.while_loop``), computed in ``p``'s float dtype, so the counts
    equal JAX's.  ``n`` is floored; a negative or NaN ``n``, or ``p`` outside [0, 1], gives
    NaN, an infinite ``n`` infinity.  No derivative in ``n`` or ``p``.

    >>> import numpy as np, functrans.random as random
    >>> random.binomial(random.PRNGKey(0), np.array([5.0, 100.0, 1000.0]), 0.3)
    array([  2.,  34., 272.])
    """
    key = _check_key("binomial", key)
    dtype = _float_dtype("binomial", dtype)
    shape = _sample_shape("binomial", shape, n=n, p=p)
    pdtype = _inexact(p)
    prob = lax.stop_gradient(_on_key_device(key, p, shape, pdtype))
    count = lax.stop_gradient(_on_key_device(key, n, shape, pdtype))
    return _binomial(key, count, prob, shape, dtype)


def _binomial(key, count, prob, shape, dtype):
    pdtype = get_aval(prob).dtype
    t = pdtype.type
    p_lt_half = prob < 0.5
    q = fnp.where(p_lt_half, prob, 1 - prob)
    count_nan_or_neg = fnp.isnan(count) | (count < 0)
    count_inf = fnp.isinf(count)
    q_is_nan = fnp.isnan(q)
    q_negative = q < 0
    q = fnp.where(q_is_nan | q_negative, t(0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10)
    count = fnp.floor(count)
    count_inv = fnp.where(use_inversion, count, t(0))
    count_btrs = fnp.where(use_inversion, t(1e4), count)
    q_btrs = fnp.where(use_inversion, t(0.5), q)
    samples = fnp.where(use_inversion, _binomial_inversion(key, count_inv, q, shape, dtype),
                        _btrs(key, count_btrs, q_btrs, shape, dtype))
    invalid = q_negative | q_is_nan | count_nan_or_neg
    samples = fnp.where(invalid, dtype.type(np.nan), samples)
    samples = fnp.where(count_inf & ~invalid, dtype.type(np.inf), samples)
    keep = p_lt_half | count_nan_or_neg | q_is_nan | count_inf
    return fnp.where(keep, samples, count.astype(dtype) - samples)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial counts of ``n`` trials over the outcomes along ``p``'s last axis: one
    binomial draw per outcome of the trials left over, with the outcome's share of the
    probability left (one subkey each, in a ``lax.scan``, as JAX).  ``shape`` is the
    result's shape, outcomes axis included (default ``p.shape``); floats (float64 unless
    ``dtype``).  ``unroll`` is accepted for JAX's signature.  No derivative in ``n`` or
    ``p``.

    >>> import numpy as np, functrans.random as random
    >>> random.multinomial(random.PRNGKey(0), 10.0, np.array([0.2, 0.3, 0.5]))
    array([1., 4., 5.])
    """
    del unroll  # scan's unrolling changes no value
    key = _check_key("multinomial", key)
    dtype = _float_dtype("multinomial", dtype)
    pshape = tuple(get_aval(_as_array(p)).shape)
    if not pshape:
        raise ValueError("random.multinomial: p must have at least one axis (the outcomes)")
    shape = pshape if shape is None else _shape("multinomial", shape)
    if not shape:
        raise ValueError("random.multinomial: shape must have at least one axis (the "
                         "outcomes, last)")
    _sample_shape("multinomial", shape, p=p)
    _sample_shape("multinomial", shape[:-1], n=n)
    pdtype = np.result_type(_inexact(n), _inexact(p))
    trials = lax.stop_gradient(_on_key_device(key, n, shape[:-1], pdtype))
    probs = lax.stop_gradient(_on_key_device(key, p, shape, pdtype))
    probs = fnp.moveaxis(probs, -1, 0)
    left = fnp.flip(fnp.cumsum(fnp.flip(probs, 0), axis=0), 0)
    ratios = probs / fnp.where(left == 0, pdtype.type(1), left)
    keys = split(key, shape[-1])

    def step(remainder, ratio_and_key):
        ratio, k = ratio_and_key
        count = _binomial(k, remainder, fnp.clip(ratio, 0, 1), shape[:-1], pdtype)
        return remainder - count, count

    _, counts = lax.scan(step, trials, (ratios, keys))
    return fnp.moveaxis(counts, 0, -1).astype(dtype)


def __dir__() -> list[str]:
    return sorted(__all__)
