"""Sweep cases of ``functrans.nn``: every activation and helper against a NumPy reference
written here (these are not NumPy functions), with derivatives in both modes to second order,
vmap against a loop and float32.  The functions ignore the module argument ``m`` that the
NumPy sweep passes (it records which ``functrans.numpy`` names the cases reach)."""
from __future__ import annotations

import math

import numpy as np

import functrans.nn as nn
from sweep import F32, F64, A, numpy_case

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softplus(x):
    return np.logaddexp(x, x.dtype.type(0))


def _elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def _logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def _standardize(x, axis=-1, epsilon=1e-5):
    mean = np.mean(x, axis=axis, keepdims=True)
    return (x - mean) / np.sqrt(np.var(x, axis=axis, keepdims=True) + epsilon)


def _sparse_plus(x):
    return np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)).astype(x.dtype)


def _logmeanexp(x, axis=None, keepdims=False):
    n = x.size if axis is None else x.shape[axis]
    return (_logsumexp(x, axis, keepdims) - np.log(n)).astype(x.dtype)


def _attention(q, k, v, bias=None, mask=None, causal=False, scale=None):
    # The plain formula, one head at a time: query head n reads key/value head n // (N / K).
    B, T, N, H = q.shape
    S, K = k.shape[1], k.shape[2]
    out = np.zeros(q.shape, np.result_type(q, k, v))
    for b in range(B):
        for n in range(N):
            kv = n // (N // K)
            logits = (q[b, :, n] @ k[b, :, kv].T) * (1 / np.sqrt(H) if scale is None else scale)
            if bias is not None:
                logits = logits + np.broadcast_to(bias, (B, N, T, S))[b, n]
            keep = np.ones((T, S), bool)
            if mask is not None:
                keep &= np.broadcast_to(mask, (B, N, T, S))[b, n]
            if causal:
                keep &= np.tri(T, S, dtype=bool)
            # JAX's large negative number: a query with every key masked averages them all
            logits = np.where(keep, logits, -0.7 * np.finfo(np.float32).max)
            p = np.exp(logits - logits.max(axis=-1, keepdims=True))
            out[b, :, n] = (p / p.sum(axis=-1, keepdims=True)) @ v[b, :, kv]
    return out.astype(q.dtype)


def _case(name, fun, reference, *args, tol=1e-7, diff=True):
    return numpy_case(f"nn_{name}", lambda m, *xs: fun(*xs), *args, dtypes=(F64, F32),
                      diff=diff, tol=tol, reference=reference)


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

NUMPY_CASES = [
    _case("relu", nn.relu, lambda x: np.maximum(x, 0), A(3, 4)),
    _case("relu6", lambda x: nn.relu6(4 * x), lambda x: np.clip(4 * x, 0, 6), A(3, 4)),
    _case("sigmoid", nn.sigmoid, _sigmoid, A(3, 4)),
    _case("softplus", nn.softplus, _softplus, A(3, 4)),
    _case("log_sigmoid", nn.log_sigmoid, lambda x: -_softplus(-x), A(3, 4)),
    _case("soft_sign", nn.soft_sign, lambda x: x / (np.abs(x) + 1), A(3, 4, kind="away0")),
    _case("silu", nn.silu, lambda x: x * _sigmoid(x), A(3, 4)),
    _case("swish", nn.swish, lambda x: x * _sigmoid(x), A(5)),
    _case("gelu_tanh", nn.gelu, lambda x: 0.5 * x * (
        1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))), A(3, 4)),
    _case("gelu_exact", lambda x: nn.gelu(x, approximate=False),
          lambda x: (0.5 * x * (1 + _erf(x / math.sqrt(2)))).astype(x.dtype), A(3, 4)),
    _case("gelu_exact_wide", lambda x: nn.gelu(4 * x, approximate=False),
          lambda x: (2 * x * (1 + _erf(4 * x / math.sqrt(2)))).astype(x.dtype), A(4, 5)),
    _case("elu", nn.elu, _elu, A(3, 4)),
    _case("elu_alpha", lambda x: nn.elu(x, alpha=0.5), lambda x: _elu(x, 0.5), A(3, 4)),
    _case("selu", nn.selu, lambda x: _SELU_SCALE * _elu(x, _SELU_ALPHA), A(3, 4)),
    _case("celu", lambda x: nn.celu(x, alpha=2.0),
          lambda x: np.maximum(x, 0) + 2.0 * np.expm1(np.minimum(x, 0) / 2.0), A(3, 4)),
    _case("leaky_relu", nn.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x), A(3, 4)),
    _case("leaky_relu_slope", lambda x: nn.leaky_relu(x, negative_slope=0.3),
          lambda x: np.where(x >= 0, x, 0.3 * x), A(3, 4)),
    _case("hard_tanh", lambda x: nn.hard_tanh(2 * x), lambda x: np.clip(2 * x, -1, 1), A(3, 4)),
    _case("softmax", nn.softmax, lambda x: np.exp(x - _logsumexp(x, -1, True)), A(3, 4)),
    _case("softmax_axis0", lambda x: nn.softmax(x, axis=0),
          lambda x: np.exp(x - _logsumexp(x, 0, True)), A(3, 4)),
    _case("log_softmax", nn.log_softmax, lambda x: x - _logsumexp(x, -1, True), A(3, 4)),
    _case("log_softmax_axes", lambda x: nn.log_softmax(x, axis=(0, 2)),
          lambda x: x - _logsumexp(x, (0, 2), True), A(2, 3, 2)),
    _case("logsumexp", nn.logsumexp, _logsumexp, A(3, 4)),
    _case("logsumexp_axis", lambda x: nn.logsumexp(x, axis=1), lambda x: _logsumexp(x, 1),
          A(3, 4)),
    _case("logsumexp_keepdims", lambda x: nn.logsumexp(x, axis=0, keepdims=True),
          lambda x: _logsumexp(x, 0, True), A(3, 4)),
    _case("logsumexp_b", lambda x, b: nn.logsumexp(x, axis=-1, b=b),
          lambda x, b: np.log(np.sum(b * np.exp(x), axis=-1)), A(3, 4), A(3, 4, kind="pos")),
    _case("logsumexp_sign", lambda x, b: nn.logsumexp(x, axis=-1, b=b, return_sign=True),
          lambda x, b: (np.log(np.abs(np.sum(b * np.exp(x), axis=-1))),
                        np.sign(np.sum(b * np.exp(x), axis=-1))),
          A(3, 4), A(3, 4, kind="away0")),
    _case("standardize", nn.standardize, _standardize, A(3, 4)),
    _case("standardize_axis0", lambda x: nn.standardize(x, axis=0, epsilon=0.1),
          lambda x: _standardize(x, 0, 0.1), A(3, 4)),
    _case("glu", nn.glu, lambda x: x[..., :2] * _sigmoid(x[..., 2:]), A(3, 4)),
    _case("glu_axis0", lambda x: nn.glu(x, axis=0), lambda x: x[:2] * _sigmoid(x[2:]),
          A(4, 3)),
    _case("hard_sigmoid", lambda x: nn.hard_sigmoid(3 * x),
          lambda x: np.clip(3 * x + 3, 0, 6) / 6, A(3, 4, kind="quarter")),
    _case("hard_silu", lambda x: nn.hard_silu(3 * x),
          lambda x: 3 * x * np.clip(3 * x + 3, 0, 6) / 6, A(3, 4, kind="quarter")),
    _case("hard_swish", nn.hard_swish, lambda x: x * np.clip(x + 3, 0, 6) / 6, A(5)),
    _case("mish", lambda x: nn.mish(3 * x), lambda x: 3 * x * np.tanh(_softplus(3 * x)),
          A(3, 4)),
    _case("squareplus", nn.squareplus, lambda x: (x + np.sqrt(x * x + 4)) / 2, A(3, 4)),
    _case("squareplus_b", lambda x, b: nn.squareplus(x, b),
          lambda x, b: (x + np.sqrt(x * x + b)) / 2, A(3, 4), A(3, 4, kind="pos")),
    _case("sparse_sigmoid", lambda x: nn.sparse_sigmoid(2 * x),
          lambda x: np.clip(2 * x + 1, 0, 2) / 2, A(3, 4, kind="quarter")),
    _case("sparse_plus", lambda x: nn.sparse_plus(2 * x), lambda x: _sparse_plus(2 * x),
          A(3, 4, kind="quarter")),
    _case("log1mexp", nn.log1mexp, lambda x: np.log(-np.expm1(-x)), A(3, 4, kind="pos")),
    _case("log1mexp_small", lambda x: nn.log1mexp(x / 4),
          lambda x: np.log(-np.expm1(-x / 4)), A(3, 4, kind="pos")),
    _case("identity", nn.identity, lambda x: x, A(3, 4)),
    _case("tanh", nn.tanh, np.tanh, A(3, 4)),
    _case("logmeanexp", nn.logmeanexp, _logmeanexp, A(3, 4)),
    _case("logmeanexp_axis", lambda x: nn.logmeanexp(x, axis=1, keepdims=True),
          lambda x: _logmeanexp(x, 1, True), A(3, 4)),
    _case("logmeanexp_where", lambda x, w: nn.logmeanexp(x, axis=0, where=w),
          lambda x, w: np.log(np.sum(np.where(w, np.exp(x), 0), axis=0)
                              / np.sum(w, axis=0)).astype(x.dtype),
          A(4, 3), A(4, 3, kind="bool")),
    _case("logsumexp_where", lambda x, w: nn.logsumexp(x, axis=-1, where=w),
          lambda x, w: np.log(np.sum(np.where(w, np.exp(x), 0), axis=-1)),
          A(3, 4), A(3, 4, kind="bool")),
    _case("dot_product_attention", nn.dot_product_attention, _attention,
          A(2, 3, 2, 3), A(2, 4, 2, 3), A(2, 4, 2, 3), tol=1e-6),
    _case("dot_product_attention_gqa_bias_causal",
          lambda q, k, v, b: nn.dot_product_attention(q, k, v, b, is_causal=True, scale=0.7),
          lambda q, k, v, b: _attention(q, k, v, b, causal=True, scale=0.7),
          A(1, 4, 4, 2), A(1, 4, 2, 2), A(1, 4, 2, 2), A(1, 4, 4, 4), tol=1e-6),
    _case("dot_product_attention_mask_unbatched",
          lambda q, k, v, m: nn.dot_product_attention(q, k, v, mask=m),
          lambda q, k, v, m: _attention(q[None], k[None], v[None], mask=m)[0],
          A(3, 2, 3), A(4, 2, 3), A(4, 2, 3), A(3, 4, kind="bool"), tol=1e-6),
    _case("scaled_matmul", lambda a, b, sa, sb: nn.scaled_matmul(
              a, b, sa, sb, preferred_element_type=a.dtype),
          lambda a, b, sa, sb: np.einsum("bmk,bnk->bmn", a * np.repeat(sa, 2, -1),
                                         b * np.repeat(sb, 2, -1)),
          A(2, 3, 4), A(2, 2, 4), A(2, 3, 2), A(2, 2, 2), tol=1e-6),
    _case("one_hot", lambda x: nn.one_hot(x, 4),
          lambda x: (x[..., None] == np.arange(4)).astype(np.float64), A(3, 2, kind="int"),
          diff=False),
    _case("one_hot_axis0_f32", lambda x: nn.one_hot(x, 3, dtype=np.float32, axis=0),
          lambda x: (x[None] == np.arange(3)[:, None, None]).astype(np.float32),
          A(2, 5, kind="int"), diff=False),
]
