"""``functrans.nn``: the activation functions and helpers of JAX's ``jax.nn``, written with
``functrans.numpy``, so that every transform reaches them.

Where the plain formula has a poor derivative at an edge the function carries its own JVP
rule (``relu``'(0) = 0, as in JAX) or is written in a form that is stable on both sides
(``softplus`` at ±1000, ``logsumexp`` with ``-inf`` entries).

>>> import numpy as np, functrans as ft, functrans.nn as nn
>>> nn.relu(np.array([-1.0, 0.0, 2.0]))
array([0., 0., 2.])
>>> float(ft.grad(nn.softplus)(1000.0)), float(ft.grad(nn.softplus)(-1000.0))
(1.0, 0.0)
"""
from __future__ import annotations

import math
import sys

import numpy as np

import functrans.numpy as fnp
from functrans import lax
from functrans import nn_initializers as initializers
from functrans.primitives.custom_derivatives import library_custom_jvp

# ``import functrans.nn.initializers`` as ``import jax.nn.initializers``: found here.
sys.modules[__name__ + ".initializers"] = initializers

__all__ = [
    "celu", "dot_product_attention", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu",
    "hard_swish", "hard_tanh", "identity", "initializers", "leaky_relu", "log1mexp",
    "log_sigmoid", "log_softmax", "logmeanexp", "logsumexp", "mish", "one_hot", "relu",
    "relu6", "scaled_matmul", "selu", "sigmoid", "silu", "soft_sign", "softmax", "softplus", "sparse_plus",
    "sparse_sigmoid", "squareplus", "standardize", "swish", "tanh",
]


@library_custom_jvp
def relu(x):
    """Elementwise ``max(x, 0)``; its derivative at 0 is 0, as in JAX.

    >>> import functrans as ft
    >>> float(ft.grad(relu)(0.0)), float(ft.grad(relu)(2.0))
    (0.0, 1.0)
    """
    return fnp.maximum(x, 0)


@relu.defjvp
def _relu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return relu(x), fnp.where(x > 0, t, fnp.zeros_like(t))


@library_custom_jvp
def relu6(x):
    """Elementwise ``min(max(x, 0), 6)``; its derivative is 0 at both corners, as in JAX.

    >>> import numpy as np
    >>> relu6(np.array([-1.0, 3.0, 7.0]))
    array([0., 3., 6.])
    """
    return fnp.minimum(fnp.maximum(x, 0), 6)


@relu6.defjvp
def _relu6_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return relu6(x), fnp.where((x > 0) & (x < 6), t, fnp.zeros_like(t))


def sigmoid(x):
    """The logistic function ``1 / (1 + exp(-x))``, without overflow.

    >>> float(sigmoid(0.0))
    0.5
    """
    return lax.logistic(fnp.asarray(x))


def softplus(x):
    """``log(1 + exp(x))``, finite with the right derivative at any ``x`` (±1000 too).

    >>> float(softplus(0.0)) == float(np.log(2.0))
    True
    """
    return fnp.logaddexp(x, 0)


def log_sigmoid(x):
    """``log(sigmoid(x))`` = ``-softplus(-x)``, stable for large ``|x|``.

    >>> float(log_sigmoid(-1000.0))
    -1000.0
    """
    return -softplus(-fnp.asarray(x))


def soft_sign(x):
    """``x / (|x| + 1)``.

    >>> float(soft_sign(3.0))
    0.75
    """
    x = fnp.asarray(x)
    return x / (fnp.abs(x) + 1)


def silu(x):
    """The sigmoid linear unit ``x * sigmoid(x)`` (also called ``swish``).

    >>> float(silu(0.0))
    0.0
    """
    x = fnp.asarray(x)
    return x * sigmoid(x)


swish = silu


def _erf_series(x):
    # erf(x) = 2/sqrt(pi) exp(-x^2) sum_n 2^n x^(2n+1) / (2n+1)!!: every term positive, so
    # nothing cancels; 40 terms reach double precision for |x| <= 2.5.
    term, total, x2 = x, x, x * x
    for n in range(1, 40):
        term = term * (2 * x2 / (2 * n + 1))
        total = total + term
    return (2 / math.sqrt(math.pi)) * fnp.exp(-x2) * total


def _erfc_fraction(x):
    # erfc(x) = exp(-x^2) / sqrt(pi) / (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))),
    # evaluated from the tail; for x >= 2.5, 60 levels reach double precision.
    f = x
    for k in range(60, 0, -1):
        f = x + (k / 2) / f
    return fnp.exp(-x * x) / (math.sqrt(math.pi) * f)


@library_custom_jvp
def _erf(x):
    small = fnp.abs(x) <= 2.5
    inside = fnp.where(small, x, fnp.zeros_like(x))
    outside = fnp.where(small, fnp.full_like(x, 2.5), fnp.abs(x))
    tail = 1 - _erfc_fraction(outside)
    return fnp.where(small, _erf_series(inside), fnp.where(x < 0, -tail, tail))


@_erf.defjvp
def _erf_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _erf(x), (2 / math.sqrt(math.pi)) * fnp.exp(-x * x) * t


def gelu(x, approximate: bool = True):
    """The Gaussian error linear unit ``x * Phi(x)``, ``Phi`` the standard normal CDF; with
    ``approximate=True`` (JAX's default) its tanh approximation
    ``x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``.

    >>> round(float(gelu(1.0, approximate=False)), 6)
    0.841345
    >>> round(float(gelu(1.0)), 6)
    0.841192
    """
    x = fnp.asarray(x)
    if approximate:
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * (x * x * x))
        return 0.5 * x * (1 + fnp.tanh(inner))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def elu(x, alpha=1.0):
    """``x`` where positive, ``alpha (exp(x) - 1)`` elsewhere.

    >>> round(float(elu(-1.0)), 6)
    -0.632121
    """
    x = fnp.asarray(x)
    positive = x > 0
    # expm1 of the clamped input only: no overflow (nor inf * 0 in derivatives) for large x.
    negative_part = alpha * fnp.expm1(fnp.where(positive, fnp.zeros_like(x), x))
    return fnp.where(positive, x, negative_part)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x):
    """The scaled ELU ``scale * elu(x, alpha)`` with the self-normalising constants.

    >>> round(float(selu(1.0)), 6)
    1.050701
    """
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def celu(x, alpha=1.0):
    """``max(x, 0) + alpha * (exp(min(x, 0) / alpha) - 1)``, continuously differentiable.

    >>> round(float(celu(-1.0, alpha=2.0)), 6)
    -0.786939
    """
    x = fnp.asarray(x)
    return fnp.where(x > 0, x, alpha * fnp.expm1(fnp.minimum(x, 0) / alpha))


def leaky_relu(x, negative_slope=1e-2):
    """``x`` where ``x >= 0``, ``negative_slope * x`` elsewhere.

    >>> float(leaky_relu(-2.0))
    -0.02
    """
    x = fnp.asarray(x)
    return fnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x):
    """``x`` clipped to ``[-1, 1]``.

    >>> import numpy as np
    >>> hard_tanh(np.array([-3.0, 0.5, 2.0]))
    array([-1. ,  0.5,  1. ])
    """
    x = fnp.asarray(x)
    return fnp.where(x > 1, fnp.ones_like(x), fnp.where(x < -1, -fnp.ones_like(x), x))


def _shift(x, axis, keepdims=True):
    # The maximum along axis, zero where it is not finite (all entries -inf, say), kept out of
    # differentiation: the functions below do not depend on it, it only prevents overflow.
    m = fnp.max(x, axis=axis, keepdims=keepdims)
    return lax.stop_gradient(fnp.where(fnp.isfinite(m), m, fnp.zeros_like(m)))


def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False,
              where=None):
    """``log(sum(b * exp(a), axis))``, without overflow and with ``-inf`` entries allowed
    (they contribute nothing, to the value and to the derivative).  With
    ``return_sign=True`` it returns ``(log|s|, sign(s))`` for ``s = sum(b * exp(a))``, which
    may then be negative.  ``where`` (booleans broadcast against ``a``) leaves entries out,
    as if they were ``-inf``.

    >>> import numpy as np
    >>> float(logsumexp(np.array([1000.0, 1000.0]))) == 1000.0 + float(np.log(2.0))
    True
    >>> float(logsumexp(np.array([0.0, -np.inf])))
    0.0
    """
    a = fnp.asarray(a)
    if where is not None:
        where = fnp.broadcast_to(fnp.asarray(where), a.shape)
        a = fnp.where(where, a, fnp.full_like(a, -np.inf))
    m = _shift(a, axis)
    e = fnp.exp(a - m)
    if b is not None:
        e = fnp.asarray(b) * e
    s = fnp.sum(e, axis=axis, keepdims=keepdims)
    m = m if keepdims else fnp.squeeze(m, axis=axis) if axis is not None else fnp.reshape(m, ())
    if return_sign:
        return fnp.log(fnp.abs(s)) + m, fnp.sign(s)
    return fnp.log(s) + m


def logmeanexp(x, axis=None, where=None, keepdims: bool = False):
    """``log(mean(exp(x), axis))`` = ``logsumexp(x, axis) - log(n)``, ``n`` the number of
    entries reduced (those where ``where`` is true, if given), without overflow.

    >>> import numpy as np
    >>> float(logmeanexp(np.array([1000.0, 1000.0])))
    1000.0
    >>> float(logmeanexp(np.array([0.0, 5.0]), where=np.array([True, False])))
    0.0
    """
    x = fnp.asarray(x)
    lse = logsumexp(x, axis=axis, keepdims=keepdims, where=where)
    if where is None:
        axes = range(x.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
        count = math.prod(x.shape[ax] for ax in axes)
        return lse - math.log(count) if count else lse - fnp.log(fnp.zeros_like(lse))
    mask = fnp.broadcast_to(fnp.asarray(where), x.shape)
    count = fnp.sum(fnp.astype(mask, lse.dtype), axis=axis, keepdims=keepdims)
    return lse - fnp.log(count)


def _masked_input(x, where, fill):
    """``x`` with ``fill`` where ``where`` (broadcast against ``x``) is false, and the mask
    of ``x``'s shape (None without ``where``)."""
    if where is None:
        return x, None
    mask = fnp.broadcast_to(fnp.asarray(where), x.shape)
    return fnp.where(mask, x, fnp.full_like(x, fill)), mask


def softmax(x, axis=-1, where=None):
    """``exp(x) / sum(exp(x), axis)``, without overflow.

    >>> import numpy as np
    >>> softmax(np.array([0.0, np.log(3.0)]))
    array([0.25, 0.75])
    """
    x, mask = _masked_input(fnp.asarray(x), where, -np.inf)
    e = fnp.exp(x - _shift(x, axis))
    out = e / fnp.sum(e, axis=axis, keepdims=True)
    # Left-out entries are 0 (and an all-left-out slice all 0, not nan), as JAX.
    return out if mask is None else fnp.where(mask, out, fnp.zeros_like(out))


def log_softmax(x, axis=-1, where=None):
    """``x - logsumexp(x, axis)``, without overflow.

    >>> import numpy as np
    >>> np.exp(log_softmax(np.array([0.0, np.log(3.0)])))
    array([0.25, 0.75])
    """
    x, mask = _masked_input(fnp.asarray(x), where, -np.inf)
    shifted = x - _shift(x, axis)
    out = shifted - fnp.log(fnp.sum(fnp.exp(shifted), axis=axis, keepdims=True))
    # Left-out entries are -inf, as JAX.
    return out if mask is None else fnp.where(mask, out, fnp.full_like(out, -np.inf))


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm: str = "stable"):
    """``(x - mean) / sqrt(variance + epsilon)``, the mean and variance taken along ``axis``
    unless given.

    >>> import numpy as np
    >>> standardize(np.array([1.0, 3.0]), epsilon=0.0)
    array([-1.,  1.])
    """
    if algorithm not in ("fast", "stable"):
        raise ValueError(f"standardize: algorithm must be 'fast' or 'stable', got "
                         f"{algorithm!r}")
    x = fnp.asarray(x)
    if mean is None:
        mean = fnp.mean(x, axis=axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":  # centred before squaring: no cancellation
            variance = fnp.mean(fnp.square(x - mean), axis=axis, keepdims=True, where=where)
        else:  # one pass (JAX's default); rounding can make it negative: clipped at 0
            variance = fnp.maximum(fnp.mean(fnp.square(x), axis=axis, keepdims=True,
                                            where=where) - fnp.square(mean), 0)
    return (x - mean) / fnp.sqrt(variance + epsilon)


def one_hot(x, num_classes: int, dtype=None, axis=-1):
    """Integer class labels ``x`` as one-hot vectors of length ``num_classes`` (a Python
    int), along a new axis ``axis``; labels outside ``[0, num_classes)`` give all zeros.

    >>> import numpy as np
    >>> one_hot(np.array([0, 2]), 3)
    array([[1., 0., 0.],
           [0., 0., 1.]])
    """
    if not isinstance(num_classes, (int, np.integer)):
        raise TypeError(f"one_hot: num_classes must be a concrete Python int (it sets the "
                        f"output's shape), got {type(num_classes).__name__}")
    x = fnp.asarray(x)
    labels = fnp.expand_dims(x, axis)
    out_ndim = x.ndim + 1
    axis = axis % out_ndim
    shape = [1] * out_ndim
    shape[axis] = int(num_classes)
    # iota on x's device: the classes never start on the host.
    classes = fnp.reshape(lax.iota(x.dtype, int(num_classes), like=x), tuple(shape))
    return fnp.astype(labels == classes, np.float64 if dtype is None else dtype)


def glu(x, axis=-1):
    """The gated linear unit: ``x`` split in two halves ``a, b`` along ``axis``, then
    ``a * sigmoid(b)``.

    >>> import numpy as np
    >>> glu(np.array([2.0, 0.0]))
    array([1.])
    """
    x = fnp.asarray(x)
    if x.shape[axis] % 2:
        raise ValueError(f"glu: axis {axis} has odd length {x.shape[axis]}; it must split "
                         f"into two halves")
    a, b = fnp.split(x, 2, axis=axis)
    return a * sigmoid(b)


def identity(x):
    """``x`` itself, as an array (JAX's ``identity`` activation).

    >>> identity(2.5)
    array(2.5)
    """
    return fnp.asarray(x)


tanh = fnp.tanh


def hard_sigmoid(x):
    """``relu6(x + 3) / 6``: 0 below -3, 1 above 3, linear between.  Its derivative at -3
    and 3 is 0, as ``relu6``'s at its corners (JAX's choice).

    >>> import numpy as np
    >>> hard_sigmoid(np.array([-4.0, 0.0, 1.5, 4.0]))
    array([0.  , 0.5 , 0.75, 1.  ])
    """
    return relu6(fnp.asarray(x) + 3.0) / 6.0


def hard_silu(x):
    """``x * hard_sigmoid(x)`` (also called ``hard_swish``).

    >>> float(hard_silu(1.5))
    1.125
    """
    x = fnp.asarray(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def mish(x):
    """``x * tanh(softplus(x))``, finite with its derivatives for large ``|x|``.

    >>> round(float(mish(1.0)), 6)
    0.865098
    """
    x = fnp.asarray(x)
    return x * fnp.tanh(softplus(x))


def squareplus(x, b=4):
    """``(x + sqrt(x**2 + b)) / 2``, a smooth ``relu`` (``b`` sets how smooth).

    >>> float(squareplus(0.0)), float(squareplus(0.0, b=16))
    (1.0, 2.0)
    """
    x = fnp.asarray(x)
    return (x + fnp.sqrt(fnp.square(x) + b)) / 2


def sparse_sigmoid(x):
    """``clip(x + 1, 0, 2) / 2``: 0 below -1, 1 above 1, linear between; the derivative
    of ``sparse_plus``.  At -1 and 1 its derivative is 1/4, the mean of the two one-sided
    values (as JAX's).

    >>> import numpy as np
    >>> sparse_sigmoid(np.array([-2.0, 0.0, 0.5, 2.0]))
    array([0.  , 0.5 , 0.75, 1.  ])
    """
    return 0.5 * fnp.clip(fnp.asarray(x) + 1.0, 0.0, 2.0)


def sparse_plus(x):
    """0 for ``x <= -1``, ``(x + 1)**2 / 4`` for ``-1 < x < 1``, ``x`` for ``x >= 1``: a
    ``softplus`` that is exactly 0 and exactly linear outside ``[-1, 1]``; continuously
    differentiable (its derivative is ``sparse_sigmoid``).

    >>> import numpy as np
    >>> sparse_plus(np.array([-2.0, 0.0, 2.0]))
    array([0.  , 0.25, 2.  ])
    """
    x = fnp.asarray(x)
    inside = fnp.clip(x, -1.0, 1.0)  # keeps the unused branches finite in derivatives
    quadratic = fnp.square(inside + 1.0) / 4
    return fnp.where(x <= -1.0, fnp.zeros_like(x), fnp.where(x >= 1.0, x, quadratic))


_LOG2 = math.log(2.0)


def log1mexp(x):
    """``log(1 - exp(-x))`` for ``x >= 0``, accurate over the whole range: through
    ``log(-expm1(-x))`` below ``log 2`` and ``log1p(-exp(-x))`` above (Maechler's split).
    ``log1mexp(0)`` is ``-inf``; negative ``x`` gives nan.

    >>> import numpy as np
    >>> log1mexp(np.array([1e-10, 50.0]))
    array([-2.30258509e+01, -1.92874985e-22])
    """
    x = fnp.asarray(x)
    small = x < _LOG2
    # Each branch sees only inputs where it is finite (the other side's get log 2), so no
    # inf or nan from the unused branch reaches a derivative.
    near = fnp.where(small, x, fnp.full_like(x, _LOG2))
    far = fnp.where(small, fnp.full_like(x, _LOG2), x)
    return fnp.where(small, fnp.log(-fnp.expm1(-near)), fnp.log1p(-fnp.exp(-far)))


def _as_4d(name, x):
    x = fnp.asarray(x)
    if x.ndim > 4:
        raise ValueError(f"dot_product_attention: {name} must have at most 4 dimensions "
                         f"(batch, sequence, heads, features), got shape {x.shape}")
    return fnp.reshape(x, (1,) * (4 - x.ndim) + x.shape)


def _positions(n, like):
    # Positions 0..n-1 on like's device (masks never start on the host).
    return lax.iota(np.int64, n, like=like)


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal: bool = False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual: bool = False):
    """Scaled dot-product attention, ``softmax(scale * q k^T + bias, masked) v``, with JAX's
    layout and options: ``query`` is ``(B, T, N, H)`` (batch, query length, heads,
    features), ``key`` and ``value`` ``(B, S, K, H)``, ``K`` dividing ``N`` (grouped-query
    attention: query head ``n`` uses key/value head ``n // (N // K)``); the batch axis may
    be left out of all three.  The result has ``query``'s shape.

    ``scale`` defaults to ``1 / sqrt(H)``; ``bias`` is added to the logits and ``mask``
    (booleans, False = left out) masks them, both broadcast against ``(B, N, T, S)``;
    ``is_causal`` keeps key ``s <= t`` for query ``t``; ``local_window_size=(left, right)``
    (or an int for both) keeps keys ``t - left <= s <= t + right``;
    ``query_seq_lengths`` / ``key_value_seq_lengths`` (integers of shape ``(B,)``) leave
    out the padding at the end of each sequence (padded query rows give zeros).  Masked
    logits are set to a large negative number, as JAX does, so a query with every key
    masked averages all the values rather than giving nan.  ``return_residual=True`` also
    returns the logsumexp of the logits, shape ``(B, T, N)``, without gradient.

    Only JAX's reference implementation exists here (``implementation=None`` or
    ``"xla"``).  The softmax runs in the logits' dtype (the query's, at least float32),
    not always in float32 as in JAX, so float64 inputs keep float64 accuracy.

    >>> import numpy as np
    >>> q = np.array([[[1.0, 0.0]], [[0.0, 1.0]]])          # (T=2, N=1, H=2)
    >>> k = np.array([[[1.0, 0.0]], [[0.0, 1.0]]]) * 100.0  # (S=2, K=1, H=2)
    >>> v = np.array([[[1.0, 10.0]], [[2.0, 20.0]]])       # each query picks its key's row
    >>> np.round(dot_product_attention(q, k, v, scale=1.0), 6)
    array([[[ 1., 10.]],
    <BLANKLINE>
           [[ 2., 20.]]])
    >>> dot_product_attention(q, k, v, scale=1.0, is_causal=True)[0]  # t=0 sees key 0 only
    array([[ 1., 10.]])
    """
    if implementation not in (None, "xla"):
        raise NotImplementedError(
            f"dot_product_attention: implementation={implementation!r} is not available; "
            f"functrans has only the reference implementation (None or 'xla')")
    out_shape = fnp.asarray(query).shape
    q, k, v = _as_4d("query", query), _as_4d("key", key), _as_4d("value", value)
    B, S, K, H = k.shape
    if v.shape != k.shape or v.dtype != k.dtype:
        raise ValueError(f"dot_product_attention: value must have key's shape and dtype "
                         f"{k.shape} {k.dtype}, got {v.shape} {v.dtype}")
    if q.shape[0] != B or q.shape[3] != H or q.dtype != k.dtype:
        raise ValueError(f"dot_product_attention: query must be (B={B}, T, N, H={H}) of "
                         f"key's dtype {k.dtype}, got {q.shape} {q.dtype}")
    T, N = q.shape[1], q.shape[2]
    if N % K:
        raise ValueError(f"dot_product_attention: the number of query heads ({N}) must be "
                         f"a multiple of the number of key/value heads ({K})")
    if N != K:
        k, v = fnp.repeat(k, N // K, axis=2), fnp.repeat(v, N // K, axis=2)
    logits_dtype = fnp.promote_types(q.dtype, np.float32)
    scale = 1.0 / math.sqrt(H) if scale is None else scale
    logits = fnp.astype(fnp.einsum("btnh,bsnh->bnts", q, k), logits_dtype) * scale
    if bias is not None:
        logits = logits + fnp.astype(_as_4d("bias", bias), logits_dtype)

    keep = None
    def restrict(more):
        return more if keep is None else keep & more
    if mask is not None:
        mask = _as_4d("mask", mask)
        if mask.dtype != np.bool_:
            raise ValueError(f"dot_product_attention: mask must be boolean (True = keep), "
                             f"got {mask.dtype}")
        keep = restrict(mask)
    t_pos = fnp.reshape(_positions(T, q), (T, 1))
    s_pos = fnp.reshape(_positions(S, q), (1, S))
    if is_causal:
        keep = restrict(s_pos <= t_pos)
    if local_window_size is not None:
        left, right = ((local_window_size, local_window_size)
                       if isinstance(local_window_size, int) else local_window_size)
        keep = restrict((s_pos >= t_pos - left) & (s_pos <= t_pos + right))
    if query_seq_lengths is not None:
        q_len = fnp.reshape(fnp.asarray(query_seq_lengths), (-1, 1, 1, 1))
        keep = restrict(t_pos < q_len)
    if key_value_seq_lengths is not None:
        kv_len = fnp.reshape(fnp.asarray(key_value_seq_lengths), (-1, 1, 1, 1))
        keep = restrict(s_pos < kv_len)
    if keep is not None:
        big = min(float(np.finfo(logits_dtype).max), float(np.finfo(np.float32).max))
        logits = fnp.where(keep, logits, fnp.full_like(logits, -0.7 * big))

    probs = fnp.astype(softmax(logits, axis=-1), v.dtype)
    out = fnp.einsum("bnts,bsnh->btnh", probs, v)
    if query_seq_lengths is not None:
        padded = fnp.reshape(_positions(T, q), (1, T, 1, 1)) >= fnp.reshape(
            fnp.asarray(query_seq_lengths), (-1, 1, 1, 1))
        out = fnp.where(padded, fnp.zeros_like(out), out)
    out = fnp.reshape(out, out_shape)
    if not return_residual:
        return out
    lse = fnp.astype(logsumexp(logits, axis=-1), v.dtype)          # (B, N, T)
    lse = lax.stop_gradient(fnp.transpose(lse, (0, 2, 1)))
    return out, fnp.reshape(lse, out_shape[:-1])


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=np.float32):
    """Block-scaled batched matmul ``einsum("BMK,BNK->BMN", lhs * ls, rhs * rs)``, where
    ``ls`` repeats each of ``lhs_scales``' ``K_s`` entries (shape ``(B, M, K_s)``) over a
    block of ``K // K_s`` consecutive ``K`` entries, ``rs`` likewise for ``rhs_scales``
    ``(B, N, K_s)``.  The result has dtype ``preferred_element_type`` (float32 by default,
    as in JAX); it is computed in the inputs' dtype (at least float32).  JAX runs it only
    through cuDNN for low-precision formats; here it is the plain formula, differentiable.

    >>> import numpy as np
    >>> a, b = np.array([[[1.0, 2.0, 3.0]]]), np.array([[[4.0, 5.0, 6.0]]])
    >>> scaled_matmul(a, b, np.full((1, 1, 1), 0.5), np.full((1, 1, 1), 0.5))
    array([[[8.]]], dtype=float32)
    """
    a, b = fnp.asarray(lhs), fnp.asarray(rhs)
    sa, sb = fnp.asarray(lhs_scales), fnp.asarray(rhs_scales)
    if not all(x.ndim == 3 for x in (a, b, sa, sb)):
        raise ValueError(f"scaled_matmul: every input must be 3-dimensional (B, M|N, K), got "
                         f"shapes {a.shape}, {b.shape}, {sa.shape}, {sb.shape}")
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[2]:
        raise ValueError(f"scaled_matmul: lhs {a.shape} and rhs {b.shape} must agree in the "
                         f"batch (first) and contracted (last) dimensions")
    if sa.shape[0] != sb.shape[0] or sa.shape[2] != sb.shape[2] or sa.shape[0] != a.shape[0]:
        raise ValueError(f"scaled_matmul: lhs_scales {sa.shape} and rhs_scales {sb.shape} "
                         f"must agree with each other and lhs in the batch dimension and "
                         f"with each other in the last")
    if sa.shape[1] != a.shape[1] or sb.shape[1] != b.shape[1]:
        raise ValueError(f"scaled_matmul: lhs_scales {sa.shape} and rhs_scales {sb.shape} "
                         f"must match the middle dimension of lhs {a.shape} and rhs {b.shape}")
    K, Ks = a.shape[2], sa.shape[2]
    if Ks == 0 or K % Ks:
        raise ValueError(f"scaled_matmul: the scales' last dimension {Ks} must divide the "
                         f"contracted dimension {K}")
    dtype = fnp.result_type(a, b, sa, sb, np.float32)
    a = fnp.astype(a, dtype) * fnp.repeat(fnp.astype(sa, dtype), K // Ks, axis=-1)
    b = fnp.astype(b, dtype) * fnp.repeat(fnp.astype(sb, dtype), K // Ks, axis=-1)
    return fnp.astype(fnp.einsum("bmk,bnk->bmn", a, b), preferred_element_type)


def __dir__() -> list[str]:
    return sorted(__all__)
