"""Sweep cases of the ``functrans.lax`` functions written with other primitives
(functrans/lax_extra.py) and of ``flatten_util.ravel_pytree``.

``clamp`` is drawn away from its bounds (kind "spread" against bounds at ±0.3 between
grid points), where it is differentiable; ``select_n``'s integer selector is not
differentiated.
"""
from __future__ import annotations

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.flatten_util import ravel_pytree
from sweep import A, C64, C128, F32, F64, I64, Case, numpy_case, tree_case


def _callback(x, vmap_method):
    """``3 x + 1`` computed by a Python function (any array library's arrays)."""
    return ft.pure_callback(lambda v: v * 3.0 + 1.0, ft.ShapeDtypeStruct(x.shape, x.dtype), x,
                            vmap_method=vmap_method)


def _logcumsumexp(x, axis=0, reverse=False):
    x = np.flip(x, axis) if reverse else x
    out = np.logaddexp.accumulate(x, axis=axis)
    return np.flip(out, axis) if reverse else out


def _select_n_reference(which, a, b, c):
    return np.choose(np.clip(which, 0, 2), [a, b, c])


PRIMITIVE_CASES = [
    Case("pure_callback_sequential", lambda x: _callback(x, "sequential"), [A(3, 2)],
         differentiable=False, reference=lambda x: 3.0 * x + 1.0),
    Case("pure_callback_expand_dims", lambda x: _callback(x, "expand_dims") * x, [A(4)],
         differentiable=False, reference=lambda x: (3.0 * x + 1.0) * x),
    Case("rsqrt", lax.rsqrt, [A(3, 4, kind="pos")], reference=lambda x: 1 / np.sqrt(x)),
    Case("clamp_scalar_bounds", lambda x: lax.clamp(-0.3, x, 0.7), [A(4, 5, kind="spread")],
         reference=lambda x: np.clip(x, -0.3, 0.7)),
    Case("clamp_array_bounds", lambda lo, x, hi: lax.clamp(lo - 1.0, x, hi + 1.0),
         [A(3, 4), A(3, 4, kind="unit"), A(3, 4)],
         reference=lambda lo, x, hi: np.clip(x, lo - 1.0, hi + 1.0)),
    Case("select_n_int", lambda w, a, b, c: lax.select_n(lax.clamp(0, w + 1, 2), a, b, c),
         [A(3, 4, kind="int"), A(3, 4), A(3, 4), A(3, 4)],
         reference=lambda w, a, b, c: _select_n_reference(w + 1, a, b, c)),
    Case("select_n_bool", lambda p, a, b: lax.select_n(p, a, b),
         [A(5, kind="bool"), A(5), A(5)], reference=lambda p, a, b: np.where(p, b, a)),
    Case("full_traced_fill", lambda v: lax.full((2, 3), v[0]) * v[1], [A(2)],
         reference=lambda v: np.full((2, 3), v[0]) * v[1]),
    Case("full_like", lambda x: lax.full_like(x, 2.5) * x, [A(3, 2)],
         reference=lambda x: np.full_like(x, 2.5) * x),
    Case("broadcasted_iota", lambda x: x * lax.broadcasted_iota(x.dtype, (2, 3), 0, like=x),
         [A(2, 3)], reference=lambda x: x * np.arange(2.0)[:, None]),
    Case("split", lambda x: lax.concatenate([p * (i + 1.0) for i, p in enumerate(
        lax.split(x, (1, 3, 0), axis=1))], 1), [A(2, 4)],
         reference=lambda x: np.concatenate([x[:, :1], 2 * x[:, 1:]], 1)),
    Case("cumlogsumexp", lambda x: lax.cumlogsumexp(x, axis=1), [A(3, 6)],
         reference=lambda x: _logcumsumexp(x, 1)),
    Case("dot_matrix_vector", lambda a, v: lax.dot(a, v), [A(3, 4), A(4)],
         reference=np.dot),
    Case("dot_dimension_numbers", lambda a, b: lax.dot(
        a, b, dimension_numbers=(((2,), (1,)), ((0,), (0,)))), [A(2, 3, 4), A(2, 4, 2)],
         reference=np.matmul),
    Case("batch_matmul", lax.batch_matmul, [A(2, 3, 4), A(2, 4, 2)], reference=np.matmul),
    Case("tile", lambda x: lax.tile(x, (2, 1, 3)), [A(2, 3, 2)],
         reference=lambda x: np.tile(x, (2, 1, 3)), linear=True),
    Case("stack", lambda a, b: lax.stack([a, b * b], axis=-1), [A(2, 3), A(2, 3)],
         reference=lambda a, b: np.stack([a, b * b], axis=-1)),
    Case("unstack", lambda x: lax.concatenate(
        [p * (i + 1.0) for i, p in enumerate(lax.unstack(x, axis=1))], 0), [A(2, 3)],
         reference=lambda x: np.concatenate([x[:, i] * (i + 1.0) for i in range(3)])),
    Case("collapse", lambda x: lax.collapse(x, 1) * x.reshape(2, -1), [A(2, 3, 2)],
         reference=lambda x: x.reshape(2, -1) ** 2),
    Case("broadcast_to_rank", lambda x: lax.broadcast_to_rank(x, 3) * 2.0, [A(2, 3)],
         reference=lambda x: x[None] * 2.0, linear=True),
    Case("broadcast_like", lambda x, y: lax.broadcast_like(x, y) * y, [A(3, 1), A(2, 3, 4)],
         reference=lambda x, y: x * y),
    Case("optimization_barrier", lambda x, y: lax.optimization_barrier((x * y, {"y": y}))[0]
         * lax.optimization_barrier(y), [A(3, 2), A(3, 2)], reference=lambda x, y: x * y * y),
    Case("platform_dependent", lambda x: lax.platform_dependent(
        x, cpu=lambda v: lax.sin(v) * v, cuda=lambda v: lax.sin(v) * v, default=lax.cos),
         [A(3, 2)], reference=lambda x: np.sin(x) * x),
    Case("composite", lambda x: lax.composite(lambda v, *, k: lax.tan(v) * k, "my.tan")(
        x, k=2.0), [A(4, kind="unit")], reference=lambda x: np.tan(x) * 2.0),
    Case("cumlogsumexp_reverse", lambda x: lax.cumlogsumexp(x, reverse=True), [A(5, 2)],
         reference=lambda x: _logcumsumexp(x, 0, True)),
]


def _einsum_summing_broadcast_axes(a, b):
    """JAX's ``einsum("...i,i->i", a, b)`` (NumPy refuses it): the broadcast axes summed."""
    return (a * b).reshape(-1, b.shape[-1]).sum(0)


NUMPY_CASES = [
    numpy_case("iscomplexobj", lambda m, x: x * (2 if m.iscomplexobj(x) else 3), A(2, 3),
               dtypes=(F64, F32, I64, C128, C64)),
    numpy_case("polyval_matrix_coefficients", lambda m, p, x: m.polyval(p, x), A(3, 2),
               A(4, 2)),
    numpy_case("polyval_matrix_coefficients_scalar_x", lambda m, p, x: m.polyval(p, x),
               A(4, 3), A()),
    numpy_case("einsum_ellipsis_summed", lambda m, a, b: m.einsum("...i,i->i", a, b),
               A(2, 3, 4), A(4), reference=_einsum_summing_broadcast_axes),
    numpy_case("einsum_ellipsis_summed_alone", lambda m, a: m.einsum("i...->i", a),
               A(3, 2, 2), reference=lambda a: a.reshape(3, -1).sum(1)),
    numpy_case("zeros_like_shape", lambda m, a: m.zeros_like(a, shape=(2, 3)) + a[0], A(3),
               diff=False),
    numpy_case("full_like_shape", lambda m, a: m.full_like(a, 2, shape=(4, 3)) * a, A(3)),
    numpy_case("ones_like_shape", lambda m, a: m.ones_like(a, shape=(2, 1)) * a, A(3)),
    numpy_case("matmul_preferred_element_type",
               lambda m, a, b: m.matmul(a, b) if m is np else m.matmul(
                   a, b, precision=lax.Precision.HIGHEST), A(2, 3), A(3, 4)),
]


def _make(rng):
    return {"b": rng.standard_normal(3), "w": rng.standard_normal((2, 3)),
            "s": rng.standard_normal(())}


def _ravel_round_trip(t):
    flat, unravel = ravel_pytree(t)
    return unravel(fnp.sin(flat) * flat)


def _by_hand(t):
    return {k: fnp.sin(v) * v for k, v in t.items()}


def _ravel_only(t):
    return ravel_pytree(t)[0] * 2.0


def _ravel_by_hand(t):
    return fnp.concatenate([fnp.ravel(t["b"]), fnp.ravel(t["s"]), fnp.ravel(t["w"])]) * 2.0


TREE_CASES = [
    tree_case("ravel_pytree_round_trip", _ravel_round_trip, _make, _by_hand),
    tree_case("ravel_pytree", _ravel_only, _make, _ravel_by_hand),
]
