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
    "PRNGKey", "key", "key_data", "wrap_key_data", "split", "fold_in", "bits", "uniform",
    "normal", "bernoulli", "categorical", "randint", "permutation", "choice",
    "truncated_normal", "multivariate_normal", "exponential", "laplace", "logistic",
    "gumbel", "rademacher", "orthogonal", "cauchy", "gamma", "loggamma", "beta", "dirichlet",
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


def key(seed, *, impl=None):
    """A key from an integer seed; in functrans the same as ``PRNGKey`` (keys are their raw
    ``uint32[2]`` data, there is no key dtype).

    >>> import functrans.random as random
    >>> random.key(3)
    array([0, 3], dtype=uint32)
    """
    _check_impl("key", impl)
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


def wrap_key_data(key_bits_array, *, impl=None):
    """Keys from raw ``uint32[..., 2]`` data (only threefry2x32 exists).

    >>> import numpy as np, functrans.random as random
    >>> key = random.wrap_key_data(np.array([0, 42], dtype=np.uint32))
    >>> float(random.normal(key)) == float(random.normal(random.key(42)))
    True
    """
    _check_impl("wrap_key_data", impl)
    return _check_key("wrap_key_data", key_bits_array, batched_ok=True)


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


def __dir__() -> list[str]:
    return sorted(__all__)
