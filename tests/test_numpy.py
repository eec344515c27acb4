"""functrans.numpy against NumPy: values, shapes and dtypes on concrete inputs, numerical
derivatives to second order and vmap against a Python loop for every function; the array
methods and operators of tracers, static indexing, and NumPy's dtype rules."""
from __future__ import annotations

import operator
import zlib

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.core import Tracer
from sweep import (C64, C128, F32, F64, I64, A, assert_same_array, case_rng, check_case_grads,
                   check_grads, check_vmap_matches_loop, differentiable_part,
                   discovered_cases, numpy_case)

FLOATS = (F64, F32)
ALL = (F64, F32, I64)
WITH_COMPLEX = ALL + (C128, C64)

# ------------------------------------------------------------------------------------------
# The cases: each `fun(module, *arrays)` runs unchanged with `numpy` and `functrans.numpy`;
# the case checks it with functrans.numpy against NumPy as the reference.
# ------------------------------------------------------------------------------------------


C = numpy_case


def _integers_stay(name):
    """NumPy's ``name`` as current NumPy has it: integers in, integers out (NumPy 2.0, our
    floor, gave float64)."""
    def reference(x):
        out = getattr(np, name)(x)
        return out.astype(x.dtype) if x.dtype.kind in "iub" else out
    return reference


UNARY = {  # name -> argument kind
    "sin": "real", "cos": "real", "tan": "unit", "tanh": "real", "sinh": "real", "cosh": "real",
    "exp": "real", "expm1": "real", "log": "pos", "log1p": "pos", "log2": "pos", "log10": "pos",
    "exp2": "real", "sqrt": "pos", "arctan": "real", "negative": "real", "positive": "real",
    "abs": "away0", "absolute": "away0", "sign": "away0", "real": "real", "imag": "real",
    "conj": "real", "conjugate": "real", "square": "real", "arcsin": "unit", "arccos": "unit",
}
BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "maximum", "minimum"]
COMPARISONS = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]


def _unary(name):
    return lambda m, x: getattr(m, name)(x)


def _binary(name, scalar=None, left=False):
    if scalar is None:
        return lambda m, x, y: getattr(m, name)(x, y)
    if left:
        return lambda m, y: getattr(m, name)(scalar, y)
    return lambda m, x: getattr(m, name)(x, scalar)


def _reductions():
    cases = []
    for name in ("sum", "mean", "var", "std", "max", "min"):
        kind = "spread" if name in ("max", "min") else "real"
        for axis in (None, 0, -1, (0, 2), (-1, 0)):
            for keepdims in (False, True):
                cases.append(C(f"{name}_axis{axis}_keep{int(keepdims)}".replace(" ", ""),
                               lambda m, x, n=name, a=axis, k=keepdims: getattr(m, n)(
                                   x, axis=a, keepdims=k), A(3, 4, 5, kind=kind)))
    for name in ("argmax", "argmin"):
        for axis in (None, 0, 1, -1):
            for keepdims in (False, True):
                cases.append(C(f"{name}_axis{axis}_keep{int(keepdims)}",
                               lambda m, x, n=name, a=axis, k=keepdims: getattr(m, n)(
                                   x, axis=a, keepdims=k), A(3, 4, 5, kind="spread"),
                               diff=False))
    return cases + [
        C("sum_bool", lambda m, b: m.sum(b), A(3, 4, kind="bool"), dtypes=(F64,), diff=False),
        C("sum_bool_axis", lambda m, b: m.sum(b, axis=0), A(3, 4, kind="bool"), dtypes=(F64,),
          diff=False),
        C("sum_dtype_f32", lambda m, x: m.sum(x, axis=1, dtype=np.float32), A(3, 4),
          dtypes=(F32, I64), tol=1e-3),
        C("mean_dtype_f64", lambda m, x: m.mean(x, dtype=np.float64), A(3, 4)),
        C("mean_bool", lambda m, b: m.mean(b, axis=0), A(3, 4, kind="bool"), dtypes=(F64,),
          diff=False),
        C("var_ddof1", lambda m, x: m.var(x, axis=0, ddof=1), A(4, 3)),
        C("std_ddof1_keep", lambda m, x: m.std(x, axis=-1, ddof=1, keepdims=True), A(4, 3)),
        C("max_0d", lambda m, x: m.max(x), A()),
        C("sum_1d", lambda m, x: m.sum(x), A(5)),
        C("prod_all", lambda m, x: m.prod(x), A(3, 4)),
        C("prod_axis_keep", lambda m, x: m.prod(x, axis=(0, 2), keepdims=True), A(2, 3, 4)),
        C("prod_bool", lambda m, b: m.prod(b, axis=0), A(3, 4, kind="bool"), dtypes=(F64,),
          diff=False),
        C("cumsum_flat", lambda m, x: m.cumsum(x), A(3, 4)),
        C("cumsum_axis", lambda m, x: m.cumsum(x, axis=-1), A(2, 3, 4)),
        C("cumprod_axis", lambda m, x: m.cumprod(x, axis=0), A(4, 3)),
        C("cumprod_flat_dtype", lambda m, x: m.cumprod(x, dtype=np.float64), A(2, 3)),
    ]


EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]),
    ("ij,jk->ki", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("i,i->", [(4,), (4,)]), ("i,j->ij", [(3,), (4,)]), ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,ij->", [(3, 4), (3, 4)]), ("ijk,ikl->jl", [(2, 3, 4), (2, 4, 5)]),
    ("ij,j->i", [(3, 4), (4,)]), ("ij,k->ijk", [(2, 3), (4,)]), ("ij,jk->", [(3, 4), (4, 5)]),
    ("ij,kj->ikj", [(2, 3), (4, 3)]), ("ij, jk -> ik", [(3, 4), (4, 5)]),
    ("ij->ji", [(3, 4)]), ("ij->", [(3, 4)]), ("ij->j", [(3, 4)]), ("ijk->kj", [(2, 3, 4)]),
    ("ij", [(3, 4)]), ("ji", [(3, 4)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
    ("iij->ji", [(3, 3, 2)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,jk,kl->li", [(2, 3), (3, 4), (4, 2)]), ("i,ij,j->", [(3,), (3, 4), (4,)]),
]

CASES = [
    # elementwise, unary
    *[C(name, _unary(name), A(3, 4, kind=kind)) for name, kind in UNARY.items()],
    C("reciprocal", _unary("reciprocal"), A(3, 4, kind="away0"), dtypes=FLOATS),
    C("sin_0d", _unary("sin"), A()),
    # elementwise, binary: arrays, broadcasting, Python and NumPy scalars on either side
    *[C(name, _binary(name), A(3, 4), A(3, 4, kind="away0")) for name in BINARY],
    *[C(f"{name}_bcast", _binary(name), A(2, 1, 4), A(3, 1, kind="away0")) for name in BINARY],
    *[C(f"{name}_pyfloat", _binary(name, 1.5), A(3, 4)) for name in BINARY],
    *[C(f"{name}_pyint", _binary(name, 2), A(3, 4)) for name in BINARY],
    *[C(f"{name}_pyfloat_lhs", _binary(name, 1.5, left=True), A(3, 4, kind="away0"))
      for name in BINARY],
    *[C(f"{name}_npf64", _binary(name, np.float64(1.5)), A(3, 4)) for name in BINARY],
    *[C(f"{name}_npf32", _binary(name, np.float32(1.5)), A(3, 4)) for name in BINARY],
    C("add_mixed_f64", _binary("add"), A(3, 4), A(4, kind="f64")),
    C("multiply_int_array", _binary("multiply"), A(3, 4), A(4, kind="int")),
    C("power", _binary("power"), A(3, 4, kind="pos"), A(3, 4, kind="pos")),
    C("power_bcast", _binary("power"), A(3, 4, kind="pos"), A(4, kind="pos")),
    C("power_pyint", _binary("power", 3), A(3, 4)),
    C("power_pyint_0", _binary("power", 0), A(3, 4)),
    C("power_pyint_neg", _binary("power", -2), A(3, 4, kind="away0"), dtypes=FLOATS),
    C("power_pyfloat", _binary("power", 1.5), A(3, 4, kind="pos")),
    C("power_pyint_base", _binary("power", 2, left=True), A(3, 4, kind="pos")),
    C("power_npint", _binary("power", np.int64(2)), A(3, 4)),
    C("power_int_exponent_array", _binary("power"), A(3, 4, kind="pos"), A(4, kind="int"),
      dtypes=FLOATS),
    C("clip_pyfloat", lambda m, x: m.clip(x, -0.5, 0.5), A(3, 4)),
    C("clip_pyint", lambda m, x: m.clip(x, -1, 1), A(3, 4)),
    C("clip_upper", lambda m, x: m.clip(x, None, 0.5), A(3, 4)),
    C("clip_arrays", lambda m, x, lo: m.clip(x, lo, lo + 1.0), A(3, 4), A(4)),
    # NumPy takes min= and max= from 2.1 on; 2.0, our floor, spells them a_min and a_max.
    C("clip_keywords", lambda m, x: m.clip(x, min=-0.5, max=0.5), A(3, 4),
      reference=lambda x: np.clip(x, -0.5, 0.5)),
    *[C(name, _binary(name), A(3, 4), A(4), diff=False) for name in COMPARISONS],
    *[C(f"{name}_pyfloat", _binary(name, 0.5), A(3, 4), diff=False) for name in COMPARISONS],
    C("equal_int", _binary("equal"), A(3, 4, kind="int"), A(4, kind="int"), dtypes=(F64,),
      diff=False),
    C("logical_and", _binary("logical_and"), A(3, 4, kind="bool"), A(4, kind="bool"),
      dtypes=(F64,), diff=False),
    C("logical_or", _binary("logical_or"), A(3, 4, kind="bool"), A(3, 4, kind="bool"),
      dtypes=(F64,), diff=False),
    C("logical_not", _unary("logical_not"), A(3, 4, kind="bool"), dtypes=(F64,), diff=False),
    C("logical_and_numbers", _binary("logical_and"), A(3, 4), A(4, kind="int"), diff=False),
    C("logical_not_numbers", _unary("logical_not"), A(3, 4, kind="int"), dtypes=(F64,),
      diff=False),
    C("where", lambda m, c, x, y: m.where(c, x, y), A(3, 4, kind="bool"), A(3, 4), A(4)),
    C("where_pyfloat", lambda m, x: m.where(x > 0, x, 0.0), A(3, 4, kind="away0")),
    C("where_pyint", lambda m, c, x: m.where(c, 1, x), A(4, kind="bool"), A(3, 4)),
    C("where_int_condition", lambda m, c, x, y: m.where(c, x, y), A(3, 4, kind="int"), A(3, 4),
      A(3, 4)),
    # elementwise, new: rounding (a zero derivative away from the jumps), nan tests, arctan2,
    # logaddexp (ties included: its derivatives are exact there)
    *[C(name, _unary(name), A(3, 4, kind="quarter"), reference=_integers_stay(name))
      for name in ("floor", "ceil")],
    C("round", _unary("round"), A(3, 4, kind="quarter")),
    C("round_decimals", lambda m, x: m.round(x / 10, 1), A(3, 4, kind="quarter")),
    C("round_negative_decimals", lambda m, x: m.around(x * 100, decimals=-2),
      A(3, 4, kind="quarter"), dtypes=FLOATS),
    C("round_halves", lambda m, x: m.round(x - 0.25), A(3, 4, kind="quarter"), diff=False),
    C("round_bool", _unary("round"), A(3, 4, kind="bool"), dtypes=(F64,), diff=False),
    *[C(name, _unary(name), A(3, 4, kind="nonfinite"), diff=False)
      for name in ("isnan", "isfinite")],
    C("arctan2", _binary("arctan2"), A(3, 4), A(3, 4)),
    C("arctan2_bcast", _binary("arctan2"), A(2, 1, 4), A(3, 1)),
    C("arctan2_pyfloat_lhs", _binary("arctan2", -1.5, left=True), A(3, 4)),
    C("logaddexp", _binary("logaddexp"), A(3, 4), A(4)),
    C("logaddexp_ties", _binary("logaddexp"), A(3, 4, kind="grid"), A(3, 4, kind="grid")),
    C("logaddexp_pyint", _binary("logaddexp", 2), A(3, 4)),
    # reductions
    *_reductions(),
    *[C(f"{name}_axis{axis}_keep{int(keep)}".replace(" ", ""),
        lambda m, x, n=name, a=axis, k=keep: getattr(m, n)(x, axis=a, keepdims=k),
        A(3, 4, 2, kind="grid"), diff=False)
      for name in ("all", "any") for axis, keep in [(None, False), (0, True), ((0, 2), False),
                                                    (-1, False)]],
    C("all_bool", lambda m, b: m.all(b, axis=1), A(3, 2, kind="bool"), dtypes=(F64,),
      diff=False),
    C("any_bool", lambda m, b: m.any(b), A(3, 2, kind="bool"), dtypes=(F64,), diff=False),
    # linear algebra
    C("matmul_1d_1d", _binary("matmul"), A(4), A(4)),
    C("matmul_2d_1d", _binary("matmul"), A(3, 4), A(4)),
    C("matmul_1d_2d", _binary("matmul"), A(4), A(4, 5)),
    C("matmul_2d_2d", _binary("matmul"), A(3, 4), A(4, 5)),
    C("matmul_batched", _binary("matmul"), A(2, 3, 4), A(2, 4, 5)),
    C("matmul_batch_2d", _binary("matmul"), A(2, 3, 4), A(4, 5)),
    C("matmul_2d_batch", _binary("matmul"), A(3, 4), A(2, 4, 5)),
    C("matmul_broadcast_batch", _binary("matmul"), A(2, 1, 3, 4), A(5, 4, 2)),
    C("matmul_1d_batch", _binary("matmul"), A(4), A(2, 4, 5)),
    C("matmul_batch_1d", _binary("matmul"), A(2, 3, 4), A(4)),
    C("dot_1d", _binary("dot"), A(4), A(4)),
    C("dot_2d", _binary("dot"), A(3, 4), A(4, 5)),
    C("dot_nd_1d", _binary("dot"), A(2, 3, 4), A(4)),
    C("dot_nd_md", _binary("dot"), A(2, 3, 4), A(5, 4, 2)),
    C("dot_scalar", _binary("dot"), A(), A(3, 4)),
    C("vdot", _binary("vdot"), A(3, 4), A(3, 4)),
    C("inner_1d", _binary("inner"), A(4), A(4)),
    C("inner_nd", _binary("inner"), A(2, 4), A(3, 4)),
    C("outer", _binary("outer"), A(3), A(4)),
    C("outer_2d", _binary("outer"), A(2, 2), A(3)),
    C("tensordot_default", lambda m, a, b: m.tensordot(a, b), A(2, 3, 4), A(3, 4, 5)),
    C("tensordot_1", lambda m, a, b: m.tensordot(a, b, 1), A(2, 3, 4), A(4, 5)),
    C("tensordot_0", lambda m, a, b: m.tensordot(a, b, 0), A(2, 3), A(4)),
    C("tensordot_pairs", lambda m, a, b: m.tensordot(a, b, ([1, 0], [0, 1])), A(3, 2, 4),
      A(2, 3, 5)),
    C("tensordot_ints", lambda m, a, b: m.tensordot(a, b, (1, 0)), A(2, 3, 4), A(3, 5)),
    C("tensordot_negative", lambda m, a, b: m.tensordot(a, b, ([-1], [-2])), A(2, 3), A(4, 3, 5)),
    *[C(f"einsum_{spec.replace(' ', '')}", lambda m, *xs, s=spec: m.einsum(s, *xs),
        *[A(*shape) for shape in shapes]) for spec, shapes in EINSUM],
    # shape manipulation
    C("reshape", lambda m, x: m.reshape(x, (4, 3)), A(3, 4)),
    C("reshape_minus1", lambda m, x: m.reshape(x, (2, -1, 3)), A(3, 4)),
    C("reshape_flat", lambda m, x: m.reshape(x, -1), A(3, 4)),
    C("reshape_to_0d", lambda m, x: m.reshape(x, ()), A(1, 1)),
    C("reshape_shape_keyword", lambda m, x: m.reshape(x, shape=(2, 6)), A(3, 4),
      reference=lambda x: np.reshape(x, (2, 6))),  # NumPy 2.0 has no shape= keyword
    C("ravel", _unary("ravel"), A(2, 3, 4)),
    C("transpose", _unary("transpose"), A(2, 3, 4)),
    C("transpose_axes", lambda m, x: m.transpose(x, (2, 0, 1)), A(2, 3, 4)),
    C("transpose_negative", lambda m, x: m.transpose(x, (-1, 0, 1)), A(2, 3, 4)),
    C("swapaxes", lambda m, x: m.swapaxes(x, 0, -1), A(2, 3, 4)),
    C("moveaxis", lambda m, x: m.moveaxis(x, 0, -1), A(2, 3, 4)),
    C("moveaxis_negative", lambda m, x: m.moveaxis(x, -1, 1), A(2, 3, 4)),
    C("moveaxis_sequences", lambda m, x: m.moveaxis(x, [0, 1], [-1, 0]), A(2, 3, 4)),
    C("broadcast_to", lambda m, x: m.broadcast_to(x, (2, 3, 4)), A(3, 1)),
    C("broadcast_arrays", lambda m, x, y: m.broadcast_arrays(x, y), A(3, 1), A(4)),
    C("expand_dims", lambda m, x: m.expand_dims(x, 0), A(3, 4)),
    C("expand_dims_negative", lambda m, x: m.expand_dims(x, -1), A(3, 4)),
    C("expand_dims_tuple", lambda m, x: m.expand_dims(x, (0, 2)), A(3, 4)),
    C("expand_dims_tuple_negative", lambda m, x: m.expand_dims(x, (-1, 0)), A(3, 4)),
    C("squeeze", _unary("squeeze"), A(3, 1, 4, 1)),
    C("squeeze_axis", lambda m, x: m.squeeze(x, 1), A(3, 1, 4, 1)),
    C("squeeze_negative", lambda m, x: m.squeeze(x, -1), A(3, 1, 4, 1)),
    C("squeeze_tuple", lambda m, x: m.squeeze(x, (1, 3)), A(3, 1, 4, 1)),
    C("concatenate", lambda m, x, y: m.concatenate([x, y]), A(2, 3), A(4, 3)),
    C("concatenate_last", lambda m, x, y, z: m.concatenate((x, y, z), axis=-1), A(2, 3),
      A(2, 1), A(2, 2)),
    C("concatenate_none", lambda m, x, y: m.concatenate([x, y], axis=None), A(2, 3), A(4)),
    C("concatenate_mixed", lambda m, x, y: m.concatenate([x, y], axis=1), A(2, 3),
      A(2, 2, kind="f64")),
    C("stack", lambda m, x, y: m.stack([x, y]), A(2, 3), A(2, 3)),
    C("stack_last", lambda m, x, y, z: m.stack((x, y, z), axis=-1), A(2, 3), A(2, 3), A(2, 3)),
    C("stack_middle", lambda m, x, y: m.stack([x, y], axis=1), A(2, 3), A(2, 3)),
    C("flip", _unary("flip"), A(2, 3, 4)),
    C("flip_axis", lambda m, x: m.flip(x, 1), A(2, 3, 4)),
    C("flip_tuple", lambda m, x: m.flip(x, (0, -1)), A(2, 3, 4)),
    C("pad", lambda m, x: m.pad(x, 1), A(2, 3)),
    C("pad_pair", lambda m, x: m.pad(x, (1, 2)), A(2, 3)),
    C("pad_per_axis", lambda m, x: m.pad(x, ((0, 1), (2, 0))), A(2, 3)),
    C("pad_value", lambda m, x: m.pad(x, ((1, 1), (0, 2)), constant_values=2.5), A(2, 3)),
    C("pad_mode", lambda m, x: m.pad(x, 2, mode="constant"), A(3)),
    C("pad_traced_value", lambda m, x, v: m.pad(x, (1, 0), constant_values=v), A(2, 3), A()),
    C("hstack_1d", lambda m, x, y: m.hstack([x, y, x]), A(3), A(2)),
    C("hstack_2d", lambda m, x, y: m.hstack((x, y)), A(2, 3), A(2, 1)),
    C("hstack_scalars", lambda m, x, y: m.hstack([x, y]), A(), A(2)),
    C("vstack_1d", lambda m, x, y: m.vstack([x, y]), A(3), A(3)),
    C("vstack_mixed", lambda m, x, y, z: m.vstack((x, y, z)), A(2, 3), A(3), A(1, 3)),
    C("atleast_2d_0d", _unary("atleast_2d"), A()),
    C("atleast_2d_1d", _unary("atleast_2d"), A(3)),
    C("atleast_2d_3d", _unary("atleast_2d"), A(2, 3, 1)),
    C("atleast_2d_several", lambda m, x, y: m.atleast_2d(x, y), A(), A(3)),
    C("split_sections", lambda m, x: m.split(x, 3), A(6, 2)),
    C("split_sections_axis", lambda m, x: m.split(x, 2, axis=-1), A(3, 4)),
    C("split_indices", lambda m, x: m.split(x, [1, 3], axis=1), A(2, 5)),
    C("split_indices_negative", lambda m, x: m.split(x, [-2]), A(5, 2)),
    C("tile_int", lambda m, x: m.tile(x, 2), A(2, 3)),
    C("tile_longer_reps", lambda m, x: m.tile(x, (2, 1, 3)), A(2, 3)),
    C("tile_shorter_reps", lambda m, x: m.tile(x, (2,)), A(2, 3)),
    C("repeat_flat", lambda m, x: m.repeat(x, 2), A(2, 3)),
    C("repeat_axis", lambda m, x: m.repeat(x, 3, axis=0), A(2, 3)),
    C("repeat_last_axis", lambda m, x: m.repeat(x, 2, axis=-1), A(2, 3, 2)),
    C("roll_flat", lambda m, x: m.roll(x, 4), A(2, 3)),
    C("roll_axis", lambda m, x: m.roll(x, -1, axis=1), A(2, 3)),
    C("roll_tuple", lambda m, x: m.roll(x, (1, 5), axis=(0, -1)), A(3, 4)),
    C("roll_zero", lambda m, x: m.roll(x, 3, axis=0), A(3, 4)),
    C("diff", _unary("diff"), A(3, 4)),
    C("diff_n2_axis0", lambda m, x: m.diff(x, n=2, axis=0), A(4, 3)),
    C("diff_bool", _unary("diff"), A(5, kind="bool"), dtypes=(F64,), diff=False),
    C("diff_prepend_append", lambda m, x, y, z: m.diff(x, axis=0, prepend=y, append=z),
      A(3, 4), A(1, 4), A(2, 4)),
    C("diff_prepend_scalar_n2", lambda m, x: m.diff(x, n=2, prepend=1.5), A(3, 4),
      dtypes=(F64,)),
    C("diagonal", _unary("diagonal"), A(3, 3)),
    C("diagonal_rectangular", _unary("diagonal"), A(2, 4)),
    C("diagonal_offset", lambda m, x: m.diagonal(x, 1), A(3, 4)),
    C("diagonal_negative_offset", lambda m, x: m.diagonal(x, offset=-2), A(4, 3)),
    C("diagonal_axes", lambda m, x: m.diagonal(x, 1, axis1=2, axis2=0), A(3, 2, 4)),
    C("diagonal_empty", lambda m, x: m.diagonal(x, 5), A(3, 4), diff=False),
    C("diag_1d", _unary("diag"), A(3)),
    C("diag_1d_k", lambda m, x: m.diag(x, 2), A(3)),
    C("diag_1d_negative_k", lambda m, x: m.diag(x, k=-1), A(2)),
    C("diag_2d", _unary("diag"), A(3, 4)),
    C("diag_2d_k", lambda m, x: m.diag(x, -1), A(3, 4)),
    C("trace", _unary("trace"), A(3, 3)),
    C("trace_offset_axes", lambda m, x: m.trace(x, 1, 0, 2), A(3, 2, 4)),
    C("trace_bool", _unary("trace"), A(3, 3, kind="bool"), dtypes=(F64,), diff=False),
    *[C(f"{name}_k{k}", lambda m, x, n=name, k=k: getattr(m, n)(x, k), A(3, 4))
      for name in ("tril", "triu") for k in (0, 1, -2)],
    C("tril_batched", _unary("tril"), A(2, 3, 3)),
    C("triu_batched", _unary("triu"), A(2, 3, 2)),
    C("norm", lambda m, x: m.linalg.norm(x), A(3, 4)),
    C("norm_vector_ord2", lambda m, x: m.linalg.norm(x, 2), A(4)),
    C("norm_matrix_fro", lambda m, x: m.linalg.norm(x, "fro"), A(3, 4)),
    C("norm_axis", lambda m, x: m.linalg.norm(x, axis=-1), A(3, 4)),
    C("norm_axis_keepdims", lambda m, x: m.linalg.norm(x, axis=0, keepdims=True), A(3, 4)),
    C("norm_axes", lambda m, x: m.linalg.norm(x, None, (2, 0)), A(2, 3, 4)),
    C("zeros_like", _unary("zeros_like"), A(3, 4)),
    C("ones_like", _unary("ones_like"), A(3, 4)),
    C("zeros_like_dtype", lambda m, x: m.zeros_like(x, dtype=np.int32), A(3, 4), diff=False),
    C("full_like", lambda m, x: m.full_like(x, 2.5), A(3, 4)),
    C("full_like_dtype", lambda m, x: m.full_like(x, 3, dtype=np.float32), A(3, 4)),
    C("full_like_traced_fill", lambda m, x, v: m.full_like(x, v), A(3, 4), A()),
    C("asarray_list", lambda m, x, y: m.asarray([x, y]), A(3), A(3)),
    C("asarray_tuple", lambda m, x, y: m.asarray((x, y, x)), A(), A()),
    C("array_nested", lambda m, x, y: m.array([[x, y], [y, x]]), A(2), A(2)),
    C("array_with_pyfloat", lambda m, x: m.array([x, 1.0, x]), A()),
    C("asarray_dtype", lambda m, x, y: m.asarray([x, y], dtype=np.float32), A(3), A(3),
      tol=1e-3),
    C("astype_f32", lambda m, x: m.astype(x, np.float32), A(3, 4), tol=1e-3),
    C("astype_f64", lambda m, x: m.astype(x, np.float64), A(3, 4)),
    C("astype_int", lambda m, x: m.astype(x, np.int32), A(3, 4), diff=False),
]

ALL_NUMPY_FUNCTIONS = (set(UNARY) | set(BINARY) | set(COMPARISONS) | {
    "reciprocal", "power", "clip", "logical_and", "logical_or", "logical_not", "where", "sum",
    "mean", "var", "std", "max", "min", "argmax", "argmin", "matmul", "dot", "vdot", "inner",
    "outer", "tensordot", "einsum", "reshape", "ravel", "transpose", "swapaxes", "moveaxis",
    "broadcast_to", "broadcast_arrays", "expand_dims", "squeeze", "concatenate", "stack",
    "flip", "pad", "zeros_like", "ones_like", "full_like", "asarray", "array", "astype",
    "floor", "ceil", "round", "around", "isnan", "isfinite", "arctan2", "logaddexp", "all",
    "any", "hstack", "vstack", "atleast_2d", "split", "tile", "repeat", "roll", "diff",
    "diagonal", "diag", "trace", "tril", "triu", "linalg", "prod", "cumsum", "cumprod"})

# Also swept with complex inputs (values, dtypes and vmap; derivatives use real inputs).
CASES += discovered_cases("NUMPY_CASES")

COMPLEX_CASES = {
    "real", "imag", "conj", "conjugate", "abs", "absolute", "negative", "square", "exp", "sin",
    "sqrt", "add", "multiply", "divide", "subtract_pyfloat", "multiply_pyint", "where",
    "sum_axisNone_keep0", "mean_axis0_keep1", "var_axis-1_keep0", "std_axis(0,2)_keep0",
    "matmul_2d_2d", "matmul_batched", "dot_1d", "vdot", "inner_nd", "outer", "tensordot_pairs",
    "einsum_ij,jk->ik", "einsum_ii", "transpose_axes", "reshape_minus1", "concatenate", "stack",
    "flip", "pad_value", "asarray_list", "broadcast_to", "full_like", "arcsin", "isnan",
    "isfinite", "round", "any_axis0_keep1", "hstack_2d", "split_indices", "tile_int",
    "repeat_axis", "roll_tuple", "diff", "diagonal_offset", "diag_1d_k", "trace", "tril_k1",
    "norm", "norm_axis",
}
assert COMPLEX_CASES <= {c.name for c in CASES}, COMPLEX_CASES - {c.name for c in CASES}
for _case in CASES:
    if _case.name in COMPLEX_CASES:
        _case.dtypes = WITH_COMPLEX

PARAMS = [pytest.param(c, d, id=f"{c.name}-{d.name}") for c in CASES for d in c.dtypes]
DIFF_CASES = [pytest.param(c, id=c.name) for c in CASES if c.differentiable]


def _leaves(out) -> list:
    return list(out) if isinstance(out, (list, tuple)) else [out]


def assert_same(got, want, what=""):
    """Equal values, shapes and dtypes (exact for integers and booleans)."""
    assert_same_array(got, want, what, single_tol=1e-5)


class _Recorder:
    """Stands in for the module and records which of its functions a case calls."""

    def __init__(self):
        self.names = set()

    def __getattr__(self, name):
        self.names.add(name)
        return getattr(fnp, name)


def test_sweep_covers_the_functions():
    recorder = _Recorder()
    for case in CASES:
        case.fun.func(recorder, *case.draw(case_rng(case), case.dtypes[0]))
    assert not ALL_NUMPY_FUNCTIONS - recorder.names, ALL_NUMPY_FUNCTIONS - recorder.names


@pytest.mark.parametrize("case,dtype", PARAMS)
def test_matches_numpy(case, dtype):
    """The value, shape and dtype of NumPy's function, on concrete inputs and through a
    type-checked jaxpr."""
    args = case.draw(case_rng(case), dtype)
    want = _leaves(case.reference(*args))
    got = _leaves(case(*args))
    traced = _leaves(_traced(case, *args))
    assert len(got) == len(traced) == len(want)
    for g, t, w in zip(got, traced, want):
        assert_same(g, w, f"{case.name}, concrete")
        assert_same(t, w, f"{case.name}, traced")


@pytest.mark.parametrize("case", DIFF_CASES)
def test_derivatives_numerically(case):
    check_case_grads(case, salt=1)


@pytest.mark.parametrize("case", [p for p in DIFF_CASES if F32 in p.values[0].dtypes])
def test_float32_gradients_stay_float32(case):
    """Outputs have NumPy's dtypes under differentiation too; cotangents those of the inputs."""
    rng = case_rng(case, 2)
    args = case.draw(rng, F32)
    f, primals = differentiable_part(case, args)
    out, pullback = ft.vjp(f, *primals)
    for o, w in zip(_leaves(out), _leaves(case.reference(*args))):
        assert np.asarray(o).dtype == np.asarray(w).dtype, case.name
    cts = pullback(ft.tree_util.tree_map(fnp.ones_like, out))
    for ct, p in zip(cts, primals):
        assert np.asarray(ct).dtype == p.dtype, case.name


@pytest.mark.parametrize("case,dtype", PARAMS)
def test_vmap_matches_loop(case, dtype):
    check_vmap_matches_loop(case, case_rng(case, 3), dtype, compare=assert_same)


# ------------------------------------------------------------------------------------------
# Operators and methods of tracers
# ------------------------------------------------------------------------------------------


def _traced(fun, *args):
    """``fun(*args)`` staged into a jaxpr, where everything computed from the arguments is
    abstract: every output must be a tracer (not, say, a NumPy object array).  The jaxpr is
    type-checked and evaluated at ``args``."""
    def checked(*a):
        out = fun(*a)
        for o in ft.tree_util.tree_leaves(out):
            assert isinstance(o, Tracer), f"got {type(o).__name__}, not a tracer"
        return out
    closed, shapes = ft.make_jaxpr(checked, return_shape=True)(*args)
    ft.check_jaxpr(closed.jaxpr)
    outs = ft.eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return ft.tree_util.tree_unflatten(ft.tree_util.tree_structure(shapes), outs)


OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
             "**": operator.pow}
# The other operand, on either side of a tracer.
OTHERS = {
    "tracer": None, "array": np.array([0.5, 1.5, 2.0]), "array_f32": np.float32([0.5, 1, 2]),
    "pyfloat": 1.5, "pyint": 2, "npf64": np.float64(1.5), "npf32": np.float32(1.5),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("other", OTHERS)
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("op", OPERATORS, ids=str)
def test_binary_operators(op, side, other, dtype):
    fun = OPERATORS[op]
    rng = np.random.default_rng(0)
    x = (np.abs(rng.standard_normal(3)) + 0.5).astype(dtype)
    y = x[::-1].copy() if other == "tracer" else OTHERS[other]

    def f(x):
        z = x[::-1] if other == "tracer" else y
        return fun(x, z) if side == "left" else fun(z, x)

    want = fun(x, y) if side == "left" else fun(y, x)
    assert_same(_traced(f, x), want, f"{op} {side} {other}")
    assert ft.grad(lambda x: fnp.sum(f(x)).astype(dtype))(x).dtype == dtype
    if dtype == F64:
        check_grads(f, (x,), 2, rng)


@pytest.mark.parametrize("other", ["tracer", "array", "array_f32"], ids=str)
def test_matmul_operator(other):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    b = b.astype(np.float32) if other == "array_f32" else b
    if other == "tracer":
        assert_same(_traced(lambda a, b: a @ b, a, b), a @ b)
        assert_same(_traced(lambda v, b: v @ b, a[0], b), a[0] @ b)
    else:
        assert_same(_traced(lambda a: a @ b, a), a @ b)
        assert_same(_traced(lambda b_: a @ b_, b.astype(np.float64)), a @ b.astype(np.float64))
        assert_same(_traced(lambda a: b.T @ a.T, a), b.T @ a.T)
    gx = ft.grad(lambda a: fnp.sum(a @ b))(a)
    np.testing.assert_allclose(gx, np.broadcast_to(b.sum(1), (3, 4)), rtol=1e-6)


def test_unary_operators_and_comparisons():
    x = np.array([-1.5, 0.0, 2.0, 3.0])
    y = np.array([1.0, 0.0, -2.0, 3.0])
    unary = [operator.neg, operator.pos, abs]
    for fun in unary:
        assert_same(_traced(fun, x), fun(x), fun.__name__)
    comparisons = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]
    for fun in comparisons:
        name = fun.__name__
        assert_same(_traced(lambda x, y: fun(x, y), x, y), fun(x, y), name)
        assert_same(_traced(lambda x: fun(x, y), x), fun(x, y), name + " array rhs")
        assert_same(_traced(lambda x: fun(y, x), x), fun(y, x), name + " array lhs")
        assert_same(_traced(lambda x: fun(x, 0.0), x), fun(x, 0.0), name + " scalar rhs")
        assert_same(_traced(lambda x: fun(0.0, x), x), fun(0.0, x), name + " scalar lhs")
    g = ft.grad(lambda x: fnp.sum(abs(-x) * +x))(x + 0.25)
    np.testing.assert_allclose(g, 2 * np.abs(x + 0.25), rtol=1e-12)


def test_boolean_operators():
    x = np.array([-1.5, 0.0, 2.0, 3.0])
    b = np.array([True, True, False, False])

    def logic(x):
        p = x > 0
        return [p & (x < 2.5), p | (x < -1), ~p, b & p, p & b, b | p, p | b, p & True,
                False | p]

    for g, w in zip(_traced(logic, x), logic(x)):
        assert_same(g, w, "logical operators")
    i = np.array([1, 2, 3])  # on integers the operators are bitwise, as NumPy's
    for bitwise in (lambda i: i & 2, lambda i: 2 | i, lambda i: ~i, lambda i: (i > 1) & i):
        assert_same(_traced(bitwise, i), bitwise(i), "bitwise operators")
    with pytest.raises(TypeError, match="bitwise_and: needs integer or boolean operands"):
        _traced(lambda x: x & True, x)


def test_numpy_functions_on_tracers_run_functrans_numpy():
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])

    def f(x):
        return [np.sin(x), np.sum(x, axis=0), np.exp(x) * np.ones(3), np.maximum(x, 0.5),
                np.where(x > 0, x, 0.0), np.matmul(x, x.T), np.stack([x, x]), np.mean(x),
                np.float64(2.0) ** x, np.logical_and(x > 0, np.ones(3, bool)), np.floor(x),
                np.arctan2(x, 2.0), np.logaddexp(x, x[0]), np.isnan(x), np.round(x, 1),
                np.tril(x), np.hstack([x, x]), np.roll(x, 1), np.linalg.norm(x, axis=1),
                np.prod(x, axis=0), np.cumsum(x, axis=1), x.cumprod(), np.sort(x, axis=0),
                np.median(x, axis=1)]

    for g, w in zip(_traced(f, x), f(x)):
        assert_same(g, w)
    for unsupported in (np.isnat, lambda x: np.add(x, 1, out=np.empty(3)), np.real_if_close):
        with pytest.raises(TypeError, match="functrans"):
            _traced(unsupported, x[0])


def test_integer_operators_keep_integers():
    i = np.array([1, 2, 3])
    outs = ft.vmap(lambda i: [i + 1, i * i, -i, i ** 2, abs(i), i - 2, i * 2.5, i / 2])(
        np.stack([i, i]))
    want = [i + 1, i * i, -i, i ** 2, abs(i), i - 2, i * 2.5, i / 2]
    for g, w in zip(outs, want):
        assert_same(np.asarray(g)[1], w)


def test_power_with_python_int_uses_integer_pow():
    x = np.array([1.0, -2.0, 3.0])
    for fun, y in [(lambda x: x ** 2, 2), (lambda x: fnp.power(x, 3), 3),
                   (lambda x: fnp.square(x), 2), (lambda x: x ** -1, -1)]:
        eqns = ft.make_jaxpr(fun)(x).eqns
        assert [e.primitive.name for e in eqns] == ["integer_pow"], str(ft.make_jaxpr(fun)(x))
        assert eqns[0].params["y"] == y
    # A float exponent is a general power.
    assert "pow" in [e.primitive.name for e in ft.make_jaxpr(lambda x: x ** 2.5)(x).eqns]


def test_tracer_attributes():
    def f(x):
        assert (x.shape, x.ndim, x.size, x.dtype) == ((3, 4), 2, 12, np.float64)
        assert (x.T.shape, x.T.ndim, x.T.size, x.T.dtype) == ((4, 3), 2, 12, np.float64)
        assert x.astype(np.float32).dtype == np.float32 and (x > 0).dtype == np.bool_
        assert x.sum(axis=0).shape == (4,) and x[None].ndim == 3
        return x.T

    assert_same(_traced(f, np.ones((3, 4))), np.ones((4, 3)))
    ft.vmap(f)(np.ones((2, 3, 4)))
    ft.grad(lambda x: fnp.sum(f(x)))(np.ones((3, 4)))


METHODS = [
    "x.T", "x.T.T", "x.sum()", "x.sum(axis=0)", "x.sum(0, keepdims=True)", "x.mean()",
    "x.mean(axis=-1)", "x.reshape(4, 3)", "x.reshape((2, -1))", "x.reshape(-1)",
    "x.astype(np.float32)", "x.astype(np.int32)", "x.max()", "x.max(axis=1)",
    "x.min(axis=0, keepdims=True)", "x.var()", "x.std(axis=0)", "x.argmax()",
    "x.argmin(axis=1)", "x.transpose()", "x.transpose(1, 0)", "x.transpose((1, 0))",
    "x.ravel()", "x.flatten()", "x.reshape(3, 1, 4).squeeze()", "x.clip(-0.5, 0.5)",
    "x.swapaxes(0, 1)", "x.conj()", "x.conjugate()", "x.real", "x.dot(y)", "x.T.dot(x)",
    "x.any(axis=0)", "(x > 0).all()", "x.diagonal(1)", "x.trace()", "x.repeat(2, axis=1)",
]


@pytest.mark.parametrize("expr", METHODS)
def test_tracer_methods(expr):
    """Each method against the same method of a NumPy array, traced, batched and
    differentiated."""
    rng = np.random.default_rng(zlib.crc32(expr.encode()))
    x, y = rng.standard_normal((3, 4)), rng.standard_normal(4)
    fun = eval(f"lambda x: {expr}", {"np": np, "y": y})
    want = fun(x)
    assert_same(_traced(fun, x), want, expr)
    xs = np.stack([x, 2 * x])
    assert_same(ft.vmap(fun)(xs), np.stack([fun(x), fun(2 * x)]), expr)
    if np.asarray(want).dtype == np.float64:
        check_grads(fun, (x,), 2, rng)


X_SHAPE = (4, 5, 6)
INDICES = [
    1, -1, np.int64(2), (1, 2), (-1, -2, -3), slice(1, 3), slice(None, None, 2),
    slice(None, None, -1), slice(4, 0, -2), slice(-1, None, -3), slice(0, 3, -1),
    slice(10, None), slice(-2, None), (slice(None), slice(1, None, 2), slice(None, None, -2)),
    Ellipsis, (Ellipsis, 1), (1, Ellipsis), (Ellipsis, slice(None, None, -1)),
    (1, Ellipsis, slice(2, 4)), None, (None, 1), (Ellipsis, None), (1, None, slice(None), None),
    (None, Ellipsis, None), (1, slice(None, None, -2), None, -1), (slice(1, None), Ellipsis, 2),
    (np.newaxis, slice(None, 2), Ellipsis, np.int64(-1), None), (), np.array(3),
]


def _index_id(index) -> str:
    return repr(index).replace(" ", "")


@pytest.mark.parametrize("index", INDICES, ids=_index_id)
def test_static_indexing(index):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(X_SHAPE)
    want = x[index]
    assert_same(_traced(lambda x: x[index], x), want)
    # The tangent is the indexed tangent; the gradient of a sum is a scatter of ones.
    t = rng.standard_normal(X_SHAPE)
    assert_same(ft.jvp(lambda x: x[index], (x,), (t,))[1], t[index])
    scatter = np.zeros(X_SHAPE)
    scatter[index] = 1.0
    assert_same(ft.grad(lambda x: fnp.sum(x[index]))(x), scatter)
    check_grads(lambda x: x[index], (x,), 2, rng)
    # Under vmap, with the batch axis first and in the middle.
    xs = rng.standard_normal((2,) + X_SHAPE)
    assert_same(ft.vmap(lambda x: x[index])(xs), np.stack([xs[0][index], xs[1][index]]))
    assert_same(ft.vmap(lambda x: x[index], in_axes=2)(np.moveaxis(xs, 0, 2)),
                np.stack([xs[0][index], xs[1][index]]))


@pytest.mark.parametrize("index", [5, -5, (0, 0, 0, 0), (Ellipsis, Ellipsis)], ids=_index_id)
def test_invalid_static_indices_raise_index_error(index):
    with pytest.raises(IndexError):
        _traced(lambda x: x[index], np.zeros((4, 2, 3)))


@pytest.mark.parametrize("index", [np.array([0, 2]), [0, 1], (0, np.array([1]))],
                         ids=_index_id)
def test_advanced_indices_match_numpy(index):
    """The full sweep of index forms is in tests/test_gather.py."""
    x = np.arange(9.0).reshape(3, 3)
    assert_same(_traced(lambda x: x[index], x), x[index])


def test_boolean_scalar_indices_match_numpy_and_non_integer_ones_are_reported():
    x = np.arange(6.0).reshape(2, 3)
    for index in [True, False, (0, True), (True, 0), (np.array([0, 1]), True), (..., False),
                  np.array(True), (slice(None), False, 1)]:
        assert_same(_traced(lambda x: x[index], x), x[index], repr(index))
    with pytest.raises(TypeError, match="invalid index"):
        _traced(lambda x: x[1.0], np.ones((3, 3)))


def test_traced_integer_index_matches_numpy():
    x = np.arange(9.0).reshape(3, 3)
    assert_same(_traced(lambda x, i: x[i], x, np.int64(-1)), x[-1])


def test_len_and_iteration():
    x = np.arange(12.0).reshape(4, 3)

    def f(x):
        assert len(x) == 4
        rows = list(x)
        assert len(rows) == 4 and all(isinstance(r, Tracer) and r.shape == (3,) for r in rows)
        return sum((i + 1) * r for i, r in enumerate(x))

    assert_same(_traced(f, x), sum((i + 1) * r for i, r in enumerate(x)))
    np.testing.assert_array_equal(ft.grad(lambda x: fnp.sum(f(x)))(x),
                                  np.repeat(np.arange(1.0, 5.0)[:, None], 3, axis=1))
    assert_same(ft.vmap(lambda x: fnp.stack(list(x)[::-1]))(np.stack([x, -x])),
                np.stack([x[::-1], -x[::-1]]))
    for bad in (len, iter):
        with pytest.raises(TypeError):
            _traced(lambda s: bad(s) and s, np.float64(1.0))


# ------------------------------------------------------------------------------------------
# Dtype rules
# ------------------------------------------------------------------------------------------


# (expression of x, a float32 array, or of i, an int64 array; the dtype NumPy 2 gives)
FLOAT32_RULES = [
    ("x * 2.0", F32), ("2.0 * x", F32), ("x + 2", F32), ("x / 3", F32), ("1.0 - x", F32),
    ("x ** 0.5", F32), ("x ** 2", F32), ("2 ** x", F32), ("x + np.float32(2.0)", F32),
    ("x + np.float64(2.0)", F64), ("np.float64(2.0) * x", F64), ("x * np.ones(3)", F64),
    ("m.add(x, np.float64(2.0))", F64), ("m.power(x, np.int64(2))", F64),
    ("m.sin(x) * 2.0 + m.exp(x) / 3", F32), ("m.log2(x) + m.log10(x) + m.exp2(x)", F32),
    ("m.reciprocal(x)", F32), ("m.where(x > 1, x, 0.0)", F32), ("m.clip(x, 0.0, 1.0)", F32),
    ("m.mean(x) + m.std(x) + m.var(x, ddof=1)", F32), ("m.sum(x ** 2) / x.size", F32),
    ("m.einsum('i,i->', x, x)", F32), ("m.matmul(x, x)", F32), ("m.tensordot(x, x, 0)", F32),
    ("m.asarray([x, x * 0.5])", F32), ("m.full_like(x, 0.1)", F32),
    ("m.pad(x, 1, constant_values=0.5)", F32), ("m.maximum(x, 1)", F32),
]
INTEGER_RULES = [
    ("m.sin(i)", F64), ("m.sqrt(i)", F64), ("m.exp2(i)", F64), ("m.log2(i)", F64),
    ("m.sin(i.astype(np.int32))", F64), ("m.mean(i)", F64), ("m.var(i)", F64),
    ("m.std(i)", F64), ("m.mean(i > 1)", F64), ("m.divide(i, i)", F64), ("i / 2", F64),
    ("2 / i", F64), ("i * 2.5", F64), ("i * 2", I64), ("-i", I64), ("abs(-i)", I64),
    ("m.sum(i)", I64), ("m.sum(i > 1)", I64), ("m.sum(i.astype(np.int32))", I64),
    ("m.sum(i.astype(np.uint8))", np.dtype(np.uint64)), ("m.max(i)", I64),
    ("m.argmax(i)", I64), ("m.square(i)", I64), ("i ** 2", I64), ("m.power(i, i)", I64),
    ("i ** i", I64), ("2 ** i", I64), ("m.matmul(i, i)", I64), ("m.where(i > 1, i, 0)", I64),
    ("m.where(i > 1, i, 0.5)", F64), ("m.clip(i, 1, 2)", I64), ("m.clip(i, 1, 2.5)", F64),
    ("m.sum(m.logical_and(i > 1, i < 3))", I64), ("m.full_like(i, 2.5)", I64),
]


def _expression(expr: str, variable: str):
    return lambda m: eval(f"lambda {variable}: {expr}", {"np": np, "m": m})


def _check_dtype_rule(expr, variable, value, want):
    fun = _expression(expr, variable)
    expected = fun(np)(value)
    assert np.asarray(expected).dtype == want, "NumPy itself"
    assert_same(fun(fnp)(value), expected, "concrete")
    assert ft.eval_shape(fun(fnp), value).dtype == want, "abstract evaluation"
    assert_same(_traced(fun(fnp), value), expected, "traced")


@pytest.mark.parametrize("expr,want", FLOAT32_RULES, ids=[e for e, _ in FLOAT32_RULES])
def test_float32_rules(expr, want):
    """float32 stays float32 with Python scalars; NumPy scalars and arrays promote."""
    x = np.float32([0.5, 1.0, 2.0])
    _check_dtype_rule(expr, "x", x, want)
    f = _expression(expr, "x")(fnp)
    assert ft.grad(lambda x: fnp.sum(f(x)).astype(np.float32))(x).dtype == F32


@pytest.mark.parametrize("expr,want", INTEGER_RULES, ids=[e for e, _ in INTEGER_RULES])
def test_integer_and_bool_rules(expr, want):
    """Integers promote to float64 in inexact functions; sums of bools are int64."""
    _check_dtype_rule(expr, "i", np.array([1, 2, 3]), want)


SCALAR_EXPRESSIONS = [
    "m.sin(2.0)", "m.exp(1)", "m.add(2, 3)", "m.multiply(2, 1.5)", "m.divide(1, 2)",
    "m.power(2, 3)", "m.power(2.0, 0.5)", "m.sum(2.0)", "m.sum(True)", "m.mean(3)",
    "m.maximum(1, 2.5)", "m.where(True, 1, 2)", "m.asarray(2.0, np.float32)",
    "m.astype(np.float64(2.0), np.float32)", "m.zeros_like(2.0, dtype=np.int32)",
    "m.full_like(1.5, 2, dtype=np.float32)", "m.float32(2.0) * 2.0", "m.sin(np.float32(1))",
    "m.add(np.float32(1), 2.0)",
]


# Where NumPy 2.0, our floor, has not got the function or the signature yet.
SCALAR_REFERENCES = {"m.astype(np.float64(2.0), np.float32)": "np.float32(2.0)"}


@pytest.mark.parametrize("expr", SCALAR_EXPRESSIONS)
def test_scalar_inputs(expr):
    """Python and NumPy scalars in: NumPy's value and dtype out."""
    fun = _expression(expr, "")
    want = _expression(SCALAR_REFERENCES.get(expr, expr), "")(np)()
    assert_same(fun(fnp)(), want, expr)


def test_shape_queries():
    def f(x):
        assert fnp.shape(x) == (2, 3) and fnp.ndim(x) == 2 and fnp.size(x) == 6
        assert fnp.shape(x[0]) == (3,) and fnp.ndim(fnp.sum(x)) == 0
        return x
    f(np.ones((2, 3)))
    _traced(f, np.ones((2, 3)))
    ft.vmap(f)(np.ones((4, 2, 3)))


def test_constants_and_dtype_names_are_reexported():
    assert fnp.float32 is np.float32 and fnp.pi == np.pi and fnp.newaxis is None
    assert fnp.zeros((2, 3), fnp.float32).dtype == np.float32
    assert fnp.ones(3).dtype == np.float64 and fnp.arange(3).dtype == np.int64


# ------------------------------------------------------------------------------------------
# logaddexp at extremes, and the errors of the shape and rounding functions
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["log2", "log10", "exp2"])
def test_base_2_and_10_functions_agree_with_numpy_to_the_bit(name):
    # NumPy's own log10/log2/exp2, not log(x) / log(10): log10(1000) is 3.0, so
    # int(log10(x)) counts digits as it does with NumPy, traced or not.
    x = np.concatenate([10.0 ** np.arange(-30, 31), 2.0 ** np.arange(-60, 61),
                        np.linspace(0.01, 50.0, 997)])
    x = x if name != "exp2" else np.log2(x)
    want = getattr(np, name)(x)
    for got in (getattr(fnp, name)(x), _traced(getattr(fnp, name), x),
                ft.jit(getattr(fnp, name))(x)):
        np.testing.assert_array_equal(got, want, strict=True)


def test_logaddexp_is_stable_and_its_derivatives_are_exact_at_ties():
    big = np.array([1000.0, -1000.0, 0.0, np.inf, -np.inf, np.inf, np.nan])
    other = np.array([1000.0, 5.0, -800.0, np.inf, -np.inf, 3.0, 1.0])
    with np.errstate(invalid="ignore"):
        assert_same(fnp.logaddexp(big, other), np.logaddexp(big, other))
        assert_same(_traced(fnp.logaddexp, big, other), np.logaddexp(big, other))
    # Far apart: gradients are (1, 0) without nan from the branch not taken.
    g = ft.grad(lambda a, b: fnp.logaddexp(a, b), argnums=(0, 1))(800.0, -800.0)
    assert g == (1.0, 0.0)
    # At a tie: first derivatives 1/2, second derivatives +-1/4 (sigmoid' at 0).
    hessian = ft.hessian(lambda ab: fnp.logaddexp(ab[0], ab[1]))(np.array([0.3, 0.3]))
    np.testing.assert_allclose(hessian, [[0.25, -0.25], [-0.25, 0.25]], rtol=1e-14)
    np.testing.assert_allclose(ft.grad(lambda a: fnp.logaddexp(a, 0.3))(0.3), 0.5)


@pytest.mark.parametrize("call,error,match", [
    (lambda x: fnp.split(x, 4), ValueError, "split: 4 sections do not divide axis 0"),
    (lambda x: fnp.split(x, [1.5]), TypeError, "split: each index must be an integer"),
    (lambda x: fnp.repeat(x, [1, 2, 3]), ValueError, r"repeat: repeats of shape \(3,\) do not "
                                                      "match the 6 elements"),
    (lambda x: fnp.repeat(x, [1.0, 2.0], axis=0), TypeError, "repeat: repeats must be integ"),
    (lambda x: fnp.repeat(x, [1, -2], axis=0), ValueError, "repeat: repeats must be non-neg"),
    (lambda x: fnp.repeat(x, -1), ValueError, "repeat: repeats must be non-negative"),
    (lambda x: fnp.repeat(x, 2, axis=2), ValueError, "axis 2"),
    (lambda x: fnp.roll(x, x[0, 0]), NotImplementedError, "roll: shift must be static"),
    (lambda x: fnp.roll(x, (1, 2), axis=(0, 1, 1)), ValueError, "roll: 2 shifts for 3 axes"),
    (lambda x: fnp.tile(x, (-1, 2)), ValueError, "tile: reps must be non-negative"),
    (lambda x: fnp.diff(x, n=-1), ValueError, "diff: the order n must be non-negative"),
    (lambda x: fnp.diff(x[0, 0]), ValueError, "diff: the input must have at least one axis"),
    (lambda x: fnp.diagonal(x[0]), ValueError, r"diagonal: .* at least two axes, got shape \(3,\)"),
    (lambda x: fnp.diagonal(x, 0, 1, -1), ValueError, "diagonal: axis1 and axis2 must differ"),
    (lambda x: fnp.diag(x[None]), ValueError, r"diag: the input must be 1-D or 2-D, got shape"),
    (lambda x: fnp.tril(x[0]), ValueError, r"tril: the input must have at least two axes"),
    (lambda x: fnp.triu(x, 0.5), TypeError, "triu: k must be an integer"),
    (lambda x: fnp.hstack([]), ValueError, "hstack: need at least one array"),
    (lambda x: fnp.round(x, 1.5), TypeError, "round: decimals must be a static integer"),
    (lambda x: fnp.round(np.arange(3), -1), NotImplementedError, "round: integer arrays"),
    (lambda x: fnp.floor(x + 1j), TypeError, "floor requires a real floating-point operand"),
    (lambda x: fnp.arctan2(x, 1j), TypeError, "atan2 requires a real floating-point operand"),
    (lambda x: fnp.logaddexp(x, x + 1j), TypeError, "logaddexp: complex operands"),
    (lambda x: fnp.logaddexp(x, x[:, :2]), ValueError, r"logaddexp: operand shapes \(2, 3\) and"),
    (lambda x: fnp.linalg.norm(x, 3), ValueError, "norm: invalid order 3 for matrices"),
    (lambda x: fnp.linalg.norm(x, "fro", axis=0), ValueError, "invalid order 'fro' for vec"),
    (lambda x: fnp.linalg.norm(x[None], 2), ValueError, "norm: with ord=2 and axis=None"),
    (lambda x: fnp.linalg.norm(x, axis=(0, 0)), ValueError, "norm: axis must be one axis or"),
    (lambda x: fnp.where(x > 0, x, 0.0, size=2), ValueError, "where: size= and fill_value="),
], ids=lambda v: v if isinstance(v, str) else "")
def test_bad_arguments_are_reported(call, error, match):
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(error, match=match):
        _traced(call, x)
