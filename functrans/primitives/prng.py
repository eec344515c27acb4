"""Counter-based random numbers: the threefry2x32 generator and the samplers built on it,
bit-identical to JAX's default (``jax_threefry_partitionable=True``, JAX >= 0.5).

A key is a ``uint32`` array whose last axis has length 2 (JAX's raw key data).  Every
primitive here takes keys (and sometimes parameters) whose *leading* axes are independent
batch members: an operand has a core rank (1 for keys, ``len(shape)`` for a parameter
broadcast to the sample shape, 0 for a scalar), the axes in front of it are batch axes, and
the batch axes of the operands broadcast against each other.  The batching rule therefore
only moves each batch axis to the front (or adds a size-1 one), so ``vmap`` over keys or
parameters works at any depth.

Random bits are integers: these primitives have zero derivative.  Samplers whose values
depend smoothly on a parameter (``uniform``'s bounds, ``normal``'s scale) get their
derivative in ``functrans.random`` by composing these draws with ordinary arithmetic; the
gamma sampler's derivative in its shape is implicit (``random_gamma_grad``).

The impls are written with the array module of their operands (NumPy or CuPy).  ``erf``
and ``erfinv`` for the normal samplers are evaluated here, so sampling needs no SciPy: in
float64 by a series, a continued fraction and Newton steps; in float32 by Giles'
single-precision approximation in float32 arithmetic, as XLA evaluates it for JAX.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from functrans import backend
from functrans.core import Primitive, ShapedArray, abstract_eval_rules, impl_rules
from functrans.interpreters import ad, batching
from functrans.interpreters.batching import not_mapped
from functrans.primitives.elementwise import add, div, exp, lt, mul, neg, select, sub
from functrans.primitives.shape import expand_dims, moveaxis, ndim_of
from functrans.primitives.special import digamma, random_gamma_grad

__all__ = [
    "rng_uniform_p", "random_seed_p", "random_split_p", "random_fold_in_p", "random_bits_p",
    "random_uniform_p", "random_normal_p", "random_truncated_normal_p", "random_randint_p",
    "random_shuffle_p", "random_gamma_p", "threefry2x32",
]

_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
         64: np.dtype(np.uint64)}
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


# -- the hash ----------------------------------------------------------------------------


def _rotl(x, r: int):
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def threefry2x32(k1, k2, x1, x2):
    """The Threefry-2x32 block cipher (20 rounds) of the counters ``(x1, x2)`` under the key
    ``(k1, k2)``; ``uint32`` arrays that broadcast together, on NumPy or CuPy.

    >>> import numpy as np
    >>> u = lambda *v: np.array(v, np.uint32)
    >>> [hex(int(a[0])) for a in threefry2x32(u(0x13198a2e), u(0x03707344),
    ...                                       u(0x243f6a88), u(0x85a308d3))]
    ['0xc4923a9c', '0x483df7a0']
    """
    xp = backend.array_module(k1, k2, x1, x2)
    k1, k2, x1, x2 = (xp.asarray(v, dtype=np.uint32) for v in (k1, k2, x1, x2))
    ks = (k1, k2, k1 ^ k2 ^ np.uint32(0x1BD11BDA))
    with np.errstate(over="ignore"):  # uint32 arithmetic wraps by design
        x1, x2 = x1 + ks[0], x2 + ks[1]
        for group in range(5):
            for r in _ROTATIONS[group % 2]:
                x1 = x1 + x2
                x2 = _rotl(x2, r) ^ x1
            # Key injection after every four rounds, the round number in the second word.
            x1 = x1 + ks[(group + 1) % 3]
            x2 = x2 + ks[(group + 2) % 3] + np.uint32(group + 1)
    return x1, x2


# -- the generator's operations on batched key arrays ------------------------------------


def _key_words(keys, shape):
    """The two key words of every key, with axes of size 1 appended for ``shape``."""
    extra = (None,) * len(shape)
    return keys[(..., 0) + extra], keys[(..., 1) + extra]


def _counters(xp, shape):
    """The 64-bit counters ``0 .. prod(shape) - 1`` laid out in ``shape``, as (hi, lo)."""
    n = math.prod(shape)
    counts = xp.arange(n, dtype=np.uint64).reshape(shape)
    return (counts >> np.uint64(32)).astype(np.uint32), counts.astype(np.uint32)


def _hash_counts(keys, shape):
    xp = backend.array_module(keys)
    k1, k2 = _key_words(keys, shape)
    hi, lo = _counters(xp, shape)
    return threefry2x32(k1, k2, hi, lo)


def _split(keys, shape):
    xp = backend.array_module(keys)
    b1, b2 = _hash_counts(keys, shape)
    return xp.stack([b1, b2], axis=-1)


def _bits(keys, shape, bit_width):
    b1, b2 = _hash_counts(keys, shape)
    if bit_width == 64:
        return (b1.astype(np.uint64) << np.uint64(32)) | b2.astype(np.uint64)
    return (b1 ^ b2).astype(_UINT[bit_width])


def _unit_floats(keys, shape, dtype):
    """Floats in [0, 1): the mantissa of ``1.x`` filled with the top bits, minus 1."""
    dtype = np.dtype(dtype)
    info = np.finfo(dtype)
    bits = _bits(keys, shape, info.bits)
    utype = bits.dtype
    one = np.array(1.0, dtype).view(utype)[()]  # a NumPy scalar: CuPy refuses 0-d arrays
    mantissa = (bits >> utype.type(info.bits - info.nmant)) | one
    return mantissa.view(dtype) - dtype.type(1)


def _uniform(keys, shape, dtype, lo, hi):
    """JAX's ``uniform`` arithmetic with bounds ``lo``, ``hi`` (arrays or scalars)."""
    xp = backend.array_module(keys)
    dtype = np.dtype(dtype)
    f = _unit_floats(keys, shape, dtype)
    lo, hi = _as_dtype(lo, dtype), _as_dtype(hi, dtype)
    return xp.maximum(lo, f * (hi - lo) + lo).astype(dtype, copy=False)


def _as_dtype(x, dtype):
    """``x`` in ``dtype``; a Python or NumPy scalar stays a NumPy scalar (no device copy)."""
    return x.astype(dtype) if hasattr(x, "astype") else np.dtype(dtype).type(x)


# -- erf and erfinv in float64, for the normal samplers -----------------------------------

_SQRT_PI = math.sqrt(math.pi)


def _erf_erfc(xp, x):
    """``(erf(x), erfc(x))`` for float64 ``x >= 0``, each to a few ulps."""
    # Below 1.5 the series (erfc = 1 - erf loses at most a factor 30); above it the
    # continued fraction, so erfc keeps its relative precision in the tail.
    small = x < 1.5
    xs = xp.where(small, x, 0.0)
    # erf(x) = 2/sqrt(pi) exp(-x^2) sum_n (2 x^2)^n x / (1 3 5 ... (2n+1)): positive terms.
    term, total, step = xs.copy(), xs.copy(), 2.0 * xs * xs
    for n in range(1, 35):  # enough below 1.5 for float64
        term = term * step / (2 * n + 1)
        total = total + term
    erf_small = 2.0 / _SQRT_PI * xp.exp(-xs * xs) * total
    # erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))).
    xl = xp.where(small, 1.5, x)
    frac = xl.copy()
    for n in range(80, 0, -1):  # enough from 1.5 on for float64
        frac = xl + (n / 2.0) / frac
    erfc_large = xp.exp(-xl * xl) / (_SQRT_PI * frac)
    return (xp.where(small, erf_small, 1.0 - erfc_large),
            xp.where(small, 1.0 - erf_small, erfc_large))


def _erf(xp, x):
    x = _as_dtype(x, np.float64)
    e, _ = _erf_erfc(xp, xp.abs(x))
    return xp.where(x < 0, -e, e)


def _erfinv(xp, u, steps: int = 2):
    """``erfinv(u)`` in float64 for ``-1 <= u <= 1``: a single-precision rational guess
    refined by Newton steps on erf (or on erfc near +-1, where 1 - |u| is exact)."""
    u = xp.asarray(u, dtype=np.float64)
    a = xp.abs(u)
    inner = a < 1.0
    ai = xp.where(inner, a, 0.0)
    with np.errstate(divide="ignore"):
        w = -xp.log((1.0 - ai) * (1.0 + ai))
    central = w < 5.0
    wc = w - 2.5
    p = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
              -0.00125372503, -0.00417768164, 0.246640727, 1.50140941):
        p = c + p * wc
    wt = xp.sqrt(xp.where(central, 5.0, w)) - 3.0
    q = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
              -0.0076224613, 0.00943887047, 1.00167406, 2.83297682):
        q = c + q * wt
    x = xp.where(central, p, q) * ai
    for _ in range(steps):  # each step squares the relative error (1e-7 at first)
        e, ec = _erf_erfc(xp, x)
        residual = xp.where(ai < 0.5, e - ai, (1.0 - ai) - ec)
        x = x - residual / (2.0 / _SQRT_PI * xp.exp(-x * x))
    x = xp.where(inner, x, np.inf)
    return xp.where(u < 0, -x, x)


def _erfinv_single(xp, u):
    """``erfinv`` for float32 (and float16) as XLA evaluates it: Giles' single-precision
    rational approximation in float32 arithmetic (so draws round as JAX's do)."""
    u = u.astype(np.float32)
    f = np.float32
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -xp.log1p(-u * u)
        central = w < f(5)
        w = xp.where(central, w - f(2.5), xp.sqrt(w) - f(3))
        low = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
               0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
        high = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
        p = xp.where(central, f(low[0]), f(high[0]))
        for lo_c, hi_c in zip(low[1:], high[1:]):
            p = xp.where(central, f(lo_c), f(hi_c)) + p * w
        return xp.where(xp.abs(u) == f(1), u * f(np.inf), p * u)


def _normal(keys, shape, dtype):
    xp = backend.array_module(keys)
    dtype = np.dtype(dtype)
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = _uniform(keys, shape, dtype, lo, 1.0)
    return (dtype.type(math.sqrt(2)) * _erfinv_dtype(xp, u, dtype)).astype(dtype)


def _erfinv_dtype(xp, u, dtype):
    if dtype.itemsize < 8:
        return _erfinv_single(xp, u).astype(dtype)
    return _erfinv(xp, u).astype(dtype)


# -- primitives -------------------------------------------------------------------------


def _batch_shape(operands, core_ranks):
    return np.broadcast_shapes(*(tuple(np.shape(a)[:max(0, np.ndim(a) - r)])
                                 for a, r in zip(operands, core_ranks)))


def _check_keys(name, keys):
    if keys.dtype != np.uint32 or len(keys.shape) < 1 or keys.shape[-1] != 2:
        raise TypeError(f"{name}: keys must be uint32 arrays whose last axis has length 2 "
                        f"(JAX's raw threefry key data), got {keys.dtype}{list(keys.shape)}")


def _front_batcher(prim, core_ranks):
    """Batch axes go to the front, then every operand is padded with size-1 axes to the same
    number of batch axes (its own ones, from inner vmaps, keep their places) and to its full
    core rank, so the impl tells batch axes from core axes by rank alone.  An unbatched
    operand without batch axes is left alone (a scalar stays a scalar, on no device)."""
    def rule(vals, dims, **params):
        ranks = core_ranks(**params)
        own = [ndim_of(v) - (d is not not_mapped) for v, d in zip(vals, dims)]
        owned_batch = [max(0, n - r) for n, r in zip(own, ranks)]
        nb = max(owned_batch)
        out = []
        for v, d, n, r, ob in zip(vals, dims, own, ranks, owned_batch):
            if d is not_mapped and ob == 0:
                out.append(v)  # no batch axes: it broadcasts against the draw by rank
                continue
            v = expand_dims(v, (0,)) if d is not_mapped else moveaxis(v, d, 0)
            core = n - ob
            pads = [1 + i for i in range(ob, nb)] + [1 + nb + i for i in range(r - core)]
            out.append(expand_dims(v, pads) if pads else v)
        return prim.bind(*out, **params), 0
    return rule


def _define(name, core_ranks, out_core, impl, out_dtype):
    """A primitive whose operands have the given core ranks (a function of the params) and
    whose output is ``batch + out_core(params)`` of ``out_dtype(params)``."""
    prim = Primitive(name, origin="library")

    def abstract_eval(*avals, **params):
        _check_keys(name, avals[0])
        ranks = core_ranks(**params)
        try:
            batch = _batch_shape(avals, ranks)
        except ValueError:
            raise ValueError(f"{name}: the batch axes of the operands "
                             f"{[a.shape for a in avals]} do not broadcast") from None
        return ShapedArray(batch + tuple(out_core(**params)), out_dtype(**params))

    def impl_rule(*args, **params):
        xp = backend.array_module(*args)
        ranks = core_ranks(**params)
        batch = _batch_shape(args, ranks)
        # Keys are broadcast to the batch; parameters broadcast against the draw by rank.
        keys = xp.broadcast_to(args[0], batch + (2,))
        out = impl(keys, *args[1:], **params)
        return out.astype(out_dtype(**params), copy=False)

    impl_rules[prim] = impl_rule
    abstract_eval_rules[prim] = abstract_eval
    ad.defjvp_zero(prim)
    batching.batching_rules[prim] = _front_batcher(prim, core_ranks)
    return prim


def _seed(seed):
    xp = backend.array_module(seed)
    if seed.dtype.itemsize == 8:
        bits = seed.astype(np.uint64)
        hi = (bits >> np.uint64(32)).astype(np.uint32)
        lo = (bits & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    else:
        # A 32-bit (or narrower) seed: the high word is zero, the low word its bit pattern.
        lo = seed.astype(np.int64).astype(np.uint32)
        hi = xp.zeros_like(lo)
    return xp.stack([hi, lo], axis=-1)


random_seed_p = Primitive("random_seed", origin="library")


def _seed_abstract_eval(seed):
    if seed.dtype.kind not in "iu":
        raise TypeError(f"random_seed: the seed must be an integer, got {seed.dtype}")
    return ShapedArray(tuple(seed.shape) + (2,), np.dtype(np.uint32))


impl_rules[random_seed_p] = _seed
abstract_eval_rules[random_seed_p] = _seed_abstract_eval
ad.defjvp_zero(random_seed_p)
batching.defvectorized(random_seed_p)

random_split_p = _define(
    "random_split", lambda shape: (1,), lambda shape: tuple(shape) + (2,),
    lambda keys, shape: _split(keys, shape), lambda shape: np.dtype(np.uint32))


def _fold_in(keys, data):
    xp = backend.array_module(keys)
    b1, b2 = threefry2x32(keys[..., 0], keys[..., 1], xp.zeros_like(data), data)
    return xp.stack([b1, b2], axis=-1)


random_fold_in_p = _define(
    "random_fold_in", lambda: (1, 0), lambda: (2,), _fold_in,
    lambda: np.dtype(np.uint32))

random_bits_p = _define(
    "random_bits", lambda shape, bit_width: (1,), lambda shape, bit_width: shape,
    lambda keys, shape, bit_width: _bits(keys, shape, bit_width),
    lambda shape, bit_width: _UINT[bit_width])

random_uniform_p = _define(
    "random_uniform", lambda shape, dtype: (1,), lambda shape, dtype: shape,
    lambda keys, shape, dtype: _unit_floats(keys, shape, dtype),
    lambda shape, dtype: np.dtype(dtype))

random_normal_p = _define(
    "random_normal", lambda shape, dtype: (1,), lambda shape, dtype: shape,
    lambda keys, shape, dtype: _normal(keys, shape, dtype),
    lambda shape, dtype: np.dtype(dtype))


def _truncated_normal(keys, lower, upper, shape, dtype):
    xp = backend.array_module(keys)
    dtype = np.dtype(dtype)
    sqrt2 = dtype.type(math.sqrt(2))
    lower, upper = _as_dtype(lower, dtype), _as_dtype(upper, dtype)
    a = _as_dtype(_erf(xp, lower / sqrt2), dtype)
    b = _as_dtype(_erf(xp, upper / sqrt2), dtype)
    u = _uniform(keys, shape, dtype, a, b)
    out = (sqrt2 * _erfinv_dtype(xp, u, dtype)).astype(dtype)
    return xp.clip(out, xp.nextafter(lower, dtype.type(np.inf)),
                   xp.nextafter(upper, dtype.type(-np.inf)))


random_truncated_normal_p = _define(
    "random_truncated_normal", lambda shape, dtype: (1, len(shape), len(shape)),
    lambda shape, dtype: shape, _truncated_normal, lambda shape, dtype: np.dtype(dtype))


def _clip_to(xp, val, dtype):
    """``val`` converted to the integer ``dtype``, clipped to its range, not wrapped."""
    src, dst = np.iinfo(val.dtype), np.iinfo(dtype)
    return xp.clip(val, max(src.min, dst.min), min(src.max, dst.max)).astype(dtype)


def _randint(keys, minval, maxval, shape, dtype):
    xp = backend.array_module(keys)
    dtype = np.dtype(dtype)
    info = np.iinfo(dtype)
    nbits = info.bits
    utype = _UINT[nbits]
    src = np.iinfo(maxval.dtype)
    out_of_range = maxval > min(info.max, src.max)
    minval, maxval = _clip_to(xp, minval, dtype), _clip_to(xp, maxval, dtype)
    pair = _split(keys, (2,))
    higher = _bits(pair[..., 0, :], shape, nbits)
    lower = _bits(pair[..., 1, :], shape, nbits)
    with np.errstate(over="ignore"):
        span = (maxval.astype(utype) - minval.astype(utype)).astype(utype)
        span = xp.where(maxval <= minval, utype.type(1), span)
        span = xp.where(out_of_range & (maxval > minval), span + utype.type(1), span)
    # Combine two draws so the bias of ``bits % span`` is that of a double-width draw.
    # A span of 2**nbits wrapped to 0; x % 0 is x there (XLA's unsigned remainder).
    wrapped = span == 0
    divisor = xp.where(wrapped, utype.type(1), span)

    def rem(x):
        return xp.where(wrapped, x, x % divisor)
    with np.errstate(over="ignore"):
        multiplier = rem(utype.type(2 ** (nbits // 2)))
        multiplier = rem(multiplier * multiplier)
        offset = rem(rem(higher) * multiplier + rem(lower))
    return (minval + offset.astype(dtype)).astype(dtype)


random_randint_p = _define(
    "random_randint", lambda shape, dtype: (1, len(shape), len(shape)),
    lambda shape, dtype: shape, _randint, lambda shape, dtype: np.dtype(dtype))


def _shuffle(keys, shape, axis):
    """Indices that shuffle ``shape`` along ``axis`` as JAX's ``permutation`` does: a few
    rounds of a stable sort by fresh 32-bit keys (enough rounds that ties are unlikely)."""
    xp = backend.array_module(keys)
    nb = keys.ndim - 1
    size = math.prod(shape)
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    index = xp.broadcast_to(
        xp.arange(shape[axis]).reshape((-1,) + (1,) * (len(shape) - axis - 1)),
        keys.shape[:-1] + tuple(shape)).copy()
    for _ in range(rounds):
        pair = _split(keys, (2,))
        keys, sub = pair[..., 0, :], pair[..., 1, :]
        order = xp.argsort(_bits(sub, shape, 32), axis=nb + axis, kind="stable")
        index = xp.take_along_axis(index, order, axis=nb + axis)
    return index


random_shuffle_p = _define(
    "random_shuffle", lambda shape, axis: (1,), lambda shape, axis: shape,
    _shuffle, lambda shape, axis: np.dtype(np.int64))


def _gamma(keys, a, shape, log_space):
    """Marsaglia-Tsang gamma draws, one key per element (split from the operand's key), in
    the order of JAX's loop so every element sees JAX's draws; ``a < 1`` is boosted to
    ``a + 1`` and scaled by ``u ** (1 / a)`` (added in log space for ``log_space``)."""
    xp = backend.array_module(keys, a)
    dtype = a.dtype
    t = dtype.type
    out_shape = keys.shape[:-1] + tuple(shape)
    keys = _split(keys, (math.prod(shape),)).reshape(-1, 2)
    alpha_orig = xp.broadcast_to(a, out_shape).reshape(-1)
    boost_mask = alpha_orig >= t(1)
    alpha = xp.where(boost_mask, alpha_orig, alpha_orig + t(1))
    d = (alpha - t(1 / 3)).astype(dtype)
    c = (t(1 / 3) / xp.sqrt(d)).astype(dtype)
    pair = _split(keys, (2,))
    key, subkey = pair[:, 0], pair[:, 1]
    n = alpha.shape[0]
    X, V, U = xp.zeros(n, dtype=dtype), xp.ones(n, dtype=dtype), xp.full(n, 2, dtype=dtype)

    def rejected(X, V, U):
        with np.errstate(invalid="ignore", divide="ignore"):
            return (U >= t(1) - t(0.0331) * (X * X)) & (
                xp.log(U) >= X * t(0.5) + d * (t(1) - V + xp.log(V)))

    active = rejected(X, V, U)
    while bool(active.any()):
        idx = xp.nonzero(active)[0]
        three = _split(key[idx], (3,))
        key[idx], x_key, u_key = three[:, 0], three[:, 1], three[:, 2]
        # Draw normals until v = 1 + c x is positive, each element with its own key chain.
        x, v = xp.zeros(idx.shape[0], dtype=dtype), xp.full(idx.shape[0], -1, dtype=dtype)
        pending = v <= 0
        while bool(pending.any()):
            j = xp.nonzero(pending)[0]
            two = _split(x_key[j], (2,))
            x_key[j] = two[:, 0]
            x[j] = _normal(two[:, 1], (), dtype)
            v[j] = t(1) + x[j] * c[idx[j]]
            pending = v <= 0
        X[idx], V[idx] = x * x, v * v * v
        U[idx] = _unit_floats(u_key, (), dtype)
        active = rejected(X, V, U)
    if log_space:
        with np.errstate(divide="ignore"):
            log_u = -(-xp.log1p(-_unit_floats(subkey, (), dtype)))
            log_boost = xp.where(boost_mask | (log_u == 0), t(0), log_u * (t(1) / alpha_orig))
            out = xp.log(d) + xp.log(V) + log_boost
    else:
        samples = t(1) - _unit_floats(subkey, (), dtype)
        with np.errstate(divide="ignore"):
            boost = xp.where(boost_mask, t(1), samples ** (t(1) / alpha_orig))
        out = d * V * boost
    return out.astype(dtype).reshape(out_shape)


random_gamma_p = _define(
    "random_gamma", lambda shape, dtype, log_space: (1, len(shape)),
    lambda shape, dtype, log_space: shape,
    lambda keys, a, shape, dtype, log_space: _gamma(keys, _as_dtype(a, dtype), shape,
                                                   log_space),
    lambda shape, dtype, log_space: np.dtype(dtype))


def _gamma_jvp(primals, tangents, *, shape, dtype, log_space):
    # Implicit reparameterization: the draw is read as F^-1(u; a) with its quantile u held
    # fixed, so d sample/da = -(dF/da) / p at the sample (random_gamma_grad), whatever
    # Marsaglia and Tsang's accept-reject steps did to reach it.
    keys, a = primals
    ans = random_gamma_p.bind(keys, a, shape=shape, dtype=dtype, log_space=log_space)
    if type(tangents[1]) is ad.Zero:
        return ans, ad.Zero.from_value(ans)
    return ans, mul(tangents[1], _log_sample_derivative(a, ans, dtype) if log_space
                    else random_gamma_grad(a, ans))


def _log_sample_derivative(a, log_x, dtype):
    """d log(sample)/da = random_gamma_grad(a, x) / x, with ``x = exp(log_x)``; where ``x``
    underflows (small ``a``) the series behind it has reduced to its first term, which gives
    ``-(log x - digamma(a + 1)) / a`` exactly."""
    underflow = lt(log_x, float(np.log(np.finfo(dtype).tiny)))
    x = select(underflow, 1.0, exp(log_x))
    first_term = neg(div(sub(log_x, digamma(add(a, 1))), a))
    return select(underflow, first_term, div(random_gamma_grad(a, x), x))


ad.jvp_rules[random_gamma_p] = _gamma_jvp


# -- rng_uniform: lax's stateful generator ---------------------------------------------------
# Each evaluation draws from a fresh key (a process-wide counter), so the primitive is
# effectful: jit's passes neither fold nor merge it, and a compiled function draws anew on
# every call, as XLA's RngUniform does.  No derivative and no batching rule, as in JAX.

_rng_uniform_draws = itertools.count()


def _rng_uniform_impl(a, b, *, shape):
    xp = backend.array_module(a, b)
    dtype = np.result_type(a, b)
    key = np.array([0x5EED, next(_rng_uniform_draws) % 2 ** 32], np.uint32)
    if xp is not np:  # the key on the bounds' device
        key = backend.asarray(key, like=b if type(a) in (int, float, bool) else a)
    if dtype.kind == "f":
        return _uniform(key, shape, dtype, a, b)
    # integers: a + floor(u (b - a)) from float64 u in [0, 1)
    u = _unit_floats(key, shape, np.float64)
    span = (xp.asarray(b).astype(np.float64) - xp.asarray(a).astype(np.float64))
    return (xp.asarray(a) + xp.floor(u * span).astype(dtype)).astype(dtype)


def _rng_uniform_abstract_eval(a, b, *, shape):
    if a.shape or b.shape:
        raise ValueError(f"rng_uniform: a and b must be scalars, got shapes {a.shape} and "
                         f"{b.shape}")
    if a.dtype != b.dtype:
        raise ValueError(f"rng_uniform: a and b must have one dtype, got {a.dtype} and "
                         f"{b.dtype}")
    if a.dtype.kind not in "iuf":
        raise TypeError(f"rng_uniform: a and b must be real numbers, got {a.dtype}")
    return ShapedArray(tuple(shape), a.dtype, a.weak_type and b.weak_type)


rng_uniform_p = Primitive("rng_uniform", origin="library")
rng_uniform_p.effectful = True
impl_rules[rng_uniform_p] = _rng_uniform_impl
abstract_eval_rules[rng_uniform_p] = _rng_uniform_abstract_eval


def _rng_uniform_batch(vals, dims, *, shape):
    raise NotImplementedError("rng_uniform does not batch under vmap (nor does JAX's): draw "
                              "the whole batch in one call, with the batch in its shape, or "
                              "use functrans.random with a key per member")


def _rng_uniform_jvp(primals, tangents, *, shape):
    raise NotImplementedError("rng_uniform has no derivative (nor has JAX's): use "
                              "functrans.random.uniform, whose bounds are differentiable")


batching.batching_rules[rng_uniform_p] = _rng_uniform_batch
ad.jvp_rules[rng_uniform_p] = _rng_uniform_jvp
