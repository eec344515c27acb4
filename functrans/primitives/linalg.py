"""dot_general: tensor contraction with batch dimensions (matmul, dot, tensordot, einsum).

``dimension_numbers = ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``; the
output axes are the batch axes, then the free axes of ``lhs``, then those of ``rhs``.
"""
from __future__ import annotations

import math

from functrans import core
from functrans.backend import array_module, coerce, is_array
from functrans.core import Primitive, ShapedArray, abstract_eval_rules, impl_rules
from functrans.interpreters import ad, batching, codegen, transpose
from functrans.interpreters.batching import not_mapped
from functrans.interpreters.transpose import is_undefined_primal
from functrans.primitives.conversion import convert_element_type
from functrans.primitives.shape import moveaxis, shape_of, transpose_axes

#: what functrans.lax re-exports from this family (other names without an underscore
#: are the package's: other families, numpy, scipy)
__all__ = ["dot_general"]

dot_general_p = Primitive("dot_general", origin="library")


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """Contract ``lhs`` and ``rhs`` over the given axes, batching over others.

    >>> import numpy as np, functrans.lax as lax
    >>> a, b = np.ones((2, 3, 4)), np.ones((2, 4, 5))
    >>> lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))).shape  # batched matmul
    (2, 3, 5)

    ``precision`` is accepted for compatibility with JAX and ignored: NumPy and CuPy compute
    in the operands' dtype, which is JAX's ``HIGHEST``.
    """
    (lc, rc), (lb, rb) = dimension_numbers
    dims = ((tuple(int(d) for d in lc), tuple(int(d) for d in rc)),
            (tuple(int(d) for d in lb), tuple(int(d) for d in rb)))
    out = dot_general_p.bind(lhs, rhs, dimension_numbers=dims)
    if preferred_element_type is not None:
        out = convert_element_type(out, preferred_element_type)
    return out


def _free_dims(ndim: int, contracting, batch) -> list:
    return [d for d in range(ndim) if d not in contracting and d not in batch]


def _dot_general_shape(ls: tuple, rs: tuple, dimension_numbers) -> tuple:
    """The output shape of dot_general on operands of shapes ``ls`` and ``rs`` (checked)."""
    (lc, rc), (lb, rb) = dimension_numbers
    for name, shape, dims in (("lhs", ls, lc + lb), ("rhs", rs, rc + rb)):
        if len(set(dims)) != len(dims) or (dims and not 0 <= min(dims) <= max(dims) < len(shape)):
            raise ValueError(f"dot_general: {name} axes {dims} are not distinct axes of its "
                             f"shape {shape}")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ValueError(f"dot_general: dimension_numbers {dimension_numbers} pair unequal "
                         "numbers of lhs and rhs axes")
    for kind, ldims, rdims in (("contracting", lc, rc), ("batch", lb, rb)):
        lsizes = [ls[d] for d in ldims]
        rsizes = [rs[d] for d in rdims]
        if lsizes != rsizes:
            raise TypeError(f"dot_general: {kind} axes of sizes {lsizes} (lhs shape "
                            f"{ls}) and {rsizes} (rhs shape {rs}) differ")
    return tuple([ls[d] for d in lb] + [ls[d] for d in _free_dims(len(ls), lc, lb)]
                 + [rs[d] for d in _free_dims(len(rs), rc, rb)])


#: (lhs shape, rhs shape, dimension_numbers) -> output shape: tracing asks the same
#: question over and over, and the checks above cost more than the lookup.
_shape_cache: dict = {}


def _dot_general_abstract_eval(lhs, rhs, *, dimension_numbers):
    key = (lhs.shape, rhs.shape, dimension_numbers)
    try:
        shape = _shape_cache.get(key)
    except TypeError:  # dimension numbers given as lists: check them, do not cache
        shape = key = None
    if shape is None:
        shape = _dot_general_shape(lhs.shape, rhs.shape, dimension_numbers)
        if key is not None:
            if len(_shape_cache) >= 4096:
                _shape_cache.clear()
            _shape_cache[key] = shape
    if lhs.dtype == rhs.dtype and lhs.weak_type == rhs.weak_type:
        return ShapedArray(shape, lhs.dtype, lhs.weak_type)
    dtype, weak = core.result_type(lhs, rhs)
    return ShapedArray(shape, dtype, weak)


def _dot_general_impl(lhs, rhs, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    xp = array_module(lhs, rhs)
    lhs, rhs = (a if is_array(a) else xp.asarray(a)
                for a in coerce(xp, lhs, rhs))
    if not lc:  # no contraction: a broadcast product (an outer product, or vmap of one)
        lf, rf = _free_dims(lhs.ndim, lc, lb), _free_dims(rhs.ndim, rc, rb)
        a = xp.reshape(xp.transpose(lhs, (*lb, *lf)),
                       [lhs.shape[d] for d in (*lb, *lf)] + [1] * len(rf))
        c = xp.reshape(xp.transpose(rhs, (*rb, *rf)), [rhs.shape[d] for d in rb]
                       + [1] * len(lf) + [rhs.shape[d] for d in rf])
        out = a * c
        return out if is_array(out) else xp.asarray(out)
    if not lb and len(lc) == 1 and lhs.ndim <= 2 and rhs.ndim <= 2:
        # The common case (vectors and matrices, one contracted axis) straight to BLAS:
        # transposed operands are strided views, which matmul handles without a copy.
        a = lhs if lc[0] == lhs.ndim - 1 else lhs.T
        c = rhs if rc[0] == 0 else rhs.T
        out = xp.matmul(a, c)
        return out if is_array(out) else xp.asarray(out)
    # Otherwise transpose to (batch, free, contract) @ (batch, contract, free) and matmul.
    lf, rf = _free_dims(lhs.ndim, lc, lb), _free_dims(rhs.ndim, rc, rb)
    batch_shape = [lhs.shape[d] for d in lb]
    lf_shape, rf_shape = [lhs.shape[d] for d in lf], [rhs.shape[d] for d in rf]
    k = math.prod(lhs.shape[d] for d in lc)
    m, n = math.prod(lf_shape), math.prod(rf_shape)
    if not lb:
        a = xp.transpose(lhs, (*lf, *lc)).reshape(m, k)
        c = xp.transpose(rhs, (*rc, *rf)).reshape(k, n)
        return xp.matmul(a, c).reshape(lf_shape + rf_shape)
    b = math.prod(batch_shape)
    a = xp.transpose(lhs, (*lb, *lf, *lc)).reshape(b, m, k)
    c = xp.transpose(rhs, (*rb, *rc, *rf)).reshape(b, k, n)
    return xp.matmul(a, c).reshape(batch_shape + lf_shape + rf_shape)


def _dot_general_jvp_lhs(g, ans, lhs, rhs, *, dimension_numbers):
    return dot_general_p.bind(g, rhs, dimension_numbers=dimension_numbers)


def _dot_general_jvp_rhs(g, ans, lhs, rhs, *, dimension_numbers):
    return dot_general_p.bind(lhs, g, dimension_numbers=dimension_numbers)


def _transpose_operand(ct, other, aval, contract, batch, other_contract, other_batch,
                       operand_is_lhs: bool):
    """Cotangent of one operand of dot_general, the other being the residual ``other``."""
    nb = len(batch)
    free = _free_dims(aval.ndim, contract, batch)
    other_ndim = len(shape_of(other))
    other_free = _free_dims(other_ndim, other_contract, other_batch)
    first_other_free = nb + (len(free) if operand_is_lhs else 0)
    ct_other_free = tuple(range(first_other_free, first_other_free + len(other_free)))
    # Contract ct with `other` over other's free axes; batch over the batch axes.  The result
    # has axes (batch, this operand's free axes, other's contracting axes in other's order).
    res = dot_general_p.bind(ct, other, dimension_numbers=(
        (ct_other_free, tuple(other_free)), (tuple(range(nb)), tuple(other_batch))))
    other_rest = sorted(other_contract)
    position = {}
    for i, d in enumerate(batch):
        position[d] = i
    for j, d in enumerate(free):
        position[d] = nb + j
    for d, od in zip(contract, other_contract):
        position[d] = nb + len(free) + other_rest.index(od)
    out = transpose_axes(res, [position[d] for d in range(aval.ndim)])
    return convert_element_type(out, core.tangent_dtype(aval.dtype), aval.weak_type)


def _dot_general_transpose(ct, lhs, rhs, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    assert not (is_undefined_primal(lhs) and is_undefined_primal(rhs)), (
        "dot_general is not linear in both operands at once")
    if is_undefined_primal(lhs):
        return [_transpose_operand(ct, rhs, lhs.aval, lc, lb, rc, rb, True), None]
    return [None, _transpose_operand(ct, lhs, rhs.aval, rc, rb, lc, lb, False)]


def _dot_general_batch(vals, dims, *, dimension_numbers):
    (lhs, rhs), (lbd, rbd) = vals, dims
    (lc, rc), (lb, rb) = dimension_numbers

    def shift(ds, bd):
        return tuple(d + (d >= bd) for d in ds)

    if lbd is not not_mapped and rbd is not not_mapped:
        lhs, rhs = moveaxis(lhs, lbd, 0), moveaxis(rhs, rbd, 0)
        dn = ((shift(lc, 0), shift(rc, 0)), ((0,) + shift(lb, 0), (0,) + shift(rb, 0)))
        return dot_general_p.bind(lhs, rhs, dimension_numbers=dn), 0
    if lbd is not not_mapped:
        dn = ((shift(lc, lbd), rc), (shift(lb, lbd), rb))
        lf = _free_dims(len(shape_of(lhs)), dn[0][0], dn[1][0])
        return dot_general_p.bind(lhs, rhs, dimension_numbers=dn), len(lb) + lf.index(lbd)
    dn = ((lc, shift(rc, rbd)), (lb, shift(rb, rbd)))
    rf = _free_dims(len(shape_of(rhs)), dn[0][1], dn[1][1])
    n_lhs_free = len(_free_dims(len(shape_of(lhs)), lc, lb))
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn), len(lb) + n_lhs_free + rf.index(rbd)




def _dot_general_lowering(ctx, lhs, rhs, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    l_nd, r_nd = ctx.in_avals[0].ndim, ctx.in_avals[1].ndim
    if (not lb and len(lc) == 1 and l_nd <= 2 and r_nd <= 2 and l_nd + r_nd > 2
            and not any(ctx.is_literal)
            and ctx.in_avals[0].dtype == ctx.in_avals[1].dtype):
        # Matrices and vectors, as the impl computes them: transposes are free views.
        a = lhs if lc[0] == l_nd - 1 else f"{lhs}.T"
        b = rhs if rc[0] == 0 else f"{rhs}.T"
        return f"({a} @ {b})"
    if (not lc and tuple(lb) == tuple(rb) == tuple(range(len(lb))) and not any(ctx.is_literal)
            and ctx.in_avals[0].dtype == ctx.in_avals[1].dtype):
        # No contraction, leading batch axes (vmap of an outer product): a broadcast product.
        l_shape, r_shape = ctx.in_avals[0].shape, ctx.in_avals[1].shape
        r_free = r_nd - len(rb)
        a = lhs if r_free == 0 else f"{lhs}.reshape({l_shape + (1,) * r_free!r})"
        l_free = l_nd - len(lb)
        b = rhs if l_free == 0 else (
            f"{rhs}.reshape({r_shape[:len(rb)] + (1,) * l_free + r_shape[len(rb):]!r})")
        return f"({a} * {b})"
    impl = ctx.bind(_dot_general_impl, "dot_general")
    return f"{impl}({lhs}, {rhs}, dimension_numbers={dimension_numbers!r})"




def _dot_general_rows(n, in_avals, out_aval, *, dimension_numbers, **params):
    """On chunks of rows (codegen's "Row regions"): a product of rowed operands over the
    rows is the sum of the chunks' products; rows as a batch axis of both, or a rowed
    operand's rows left free against a whole operand, give a rowed result."""
    (lc, rc), (lb, rb) = dimension_numbers
    lhs, rhs = (codegen.rowed(a, n) for a in in_avals)
    if lhs and rhs:
        if 0 in lc and 0 in rc and lc.index(0) == rc.index(0) and not lb:
            return "sum", ()
        return ("rows", ()) if lb and lb[0] == 0 and rb[0] == 0 else None
    if lhs:
        return None if 0 in lc or lb else ("rows", ())
    if rhs:  # its rows come first only when the lhs has no free axis
        free = len(in_avals[0].shape) - len(lc) - len(lb)
        return None if 0 in rc or rb or free else ("rows", ())
    return None


codegen.deflowering(dot_general_p, _dot_general_lowering, rows=_dot_general_rows)
impl_rules[dot_general_p] = _dot_general_impl
abstract_eval_rules[dot_general_p] = _dot_general_abstract_eval
ad.defjvp(dot_general_p, _dot_general_jvp_lhs, _dot_general_jvp_rhs)
transpose.deftranspose(dot_general_p, _dot_general_transpose)
batching.batching_rules[dot_general_p] = _dot_general_batch


