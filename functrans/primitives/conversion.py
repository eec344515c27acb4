"""Dtype conversion, bitcast_convert_type, stop_gradient, optimization_barrier and
zeros_like."""
from __future__ import annotations

import numpy as np

from functrans import backend, core
from functrans.array_types import weak_result
from functrans.backend import array_module
from functrans.core import (Primitive, ShapedArray, abstract_eval_rules, get_aval, impl_rules,
                            is_inexact)
from functrans.interpreters import ad, batching, codegen, transpose
from functrans.interpreters.ad import Zero
from functrans.primitives.shape import bdim_to_front
from functrans.tree_util import tree_flatten, tree_unflatten

#: what functrans.lax re-exports from this family (other names without an underscore
#: are the package's: other families, numpy, scipy)
__all__ = ["bitcast_convert_type", "convert_element_type", "optimization_barrier",
           "stop_gradient", "zeros_like"]

# -- convert_element_type ------------------------------------------------------------------

convert_element_type_p = Primitive("convert_element_type", origin="library")


def convert_element_type(operand, new_dtype, weak_type: bool = False):
    """Convert ``operand`` to ``new_dtype`` (complex to real keeps the real part).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.convert_element_type(np.array([1.7, -1.7]), np.int32)
    array([ 1, -1], dtype=int32)
    """
    if type(operand) is np.ndarray and operand.dtype == new_dtype and not weak_type:
        return operand  # the common no-op, decided without building an abstract value
    new_dtype = np.dtype(new_dtype)
    aval = get_aval(operand)
    if aval.dtype == new_dtype and aval.weak_type == weak_type:
        return operand
    out = convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=weak_type)
    if weak_type and not isinstance(out, core.Tracer):  # a concrete array, weakly typed
        return weak_result(out)                          # (a Python scalar stays one)
    return out


def _convert_impl(x, *, new_dtype, weak_type):
    if core.is_python_scalar(x) or isinstance(x, np.generic):
        # A scalar stays a scalar (Python when weakly typed, else NumPy): no host array, so
        # it meets device arrays as a kernel argument rather than by a copy.
        value = np.asarray(x)
        if value.dtype.kind == "c" and new_dtype.kind != "c":
            value = value.real
        value = value.astype(new_dtype)[()]
        return value.item() if weak_type else value
    xp = array_module(x)
    x = xp.asarray(x)
    if x.dtype.kind == "c" and new_dtype.kind != "c":
        x = x.real
    return x.astype(new_dtype)


def _convert_abstract_eval(aval, *, new_dtype, weak_type):
    return aval.update(dtype=new_dtype, weak_type=weak_type)


def _convert_jvp(primals, tangents, *, new_dtype, weak_type):
    (x,), (g,) = primals, tangents
    ans = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if type(g) is Zero or not (is_inexact(get_aval(x).dtype) and is_inexact(new_dtype)):
        return ans, Zero.from_value(ans)
    return ans, convert_element_type_p.bind(g, new_dtype=new_dtype, weak_type=weak_type)


def _convert_transpose(ct, x, *, new_dtype, weak_type):
    aval = x.aval
    return [convert_element_type(ct, aval.dtype, aval.weak_type)]


impl_rules[convert_element_type_p] = _convert_impl
abstract_eval_rules[convert_element_type_p] = _convert_abstract_eval
ad.jvp_rules[convert_element_type_p] = _convert_jvp
transpose.deftranspose(convert_element_type_p, _convert_transpose)
batching.defvectorized(convert_element_type_p)



def _convert_lowering(ctx, x, *, new_dtype, weak_type):
    # A weakly typed operand may be a Python scalar at run time, which has no astype.
    if ctx.is_literal[0] or ctx.in_avals[0].weak_type or (
            ctx.in_avals[0].dtype.kind == "c" and new_dtype.kind != "c"):
        impl = ctx.bind(_convert_impl, "convert")
        return f"{impl}({x}, new_dtype={ctx.bind(new_dtype, 'dtype')}, weak_type={weak_type})"
    return f"{x}.astype({ctx.bind(new_dtype, 'dtype')})"


def _convert_kernel(operands, in_dtypes, out_dtype, *, new_dtype, weak_type):
    # Converting floats to integers (NaN, overflow) is left to NumPy.
    x, = operands
    source, target = in_dtypes[0], np.dtype(new_dtype)
    if target.kind == "b":
        return f"({x} != 0)"
    if source.kind == "f" and target.kind != "f":
        return None
    return f"np.{target.name}({x})"


codegen.deflowering(convert_element_type_p, _convert_lowering, kernel=_convert_kernel)
def _convert_numbers(n, in_avals, out_aval, facts, *, new_dtype, weak_type):
    # row numbers stay what they are in an integer type that holds them all
    kind = np.dtype(new_dtype).kind
    if kind in "iu" and np.iinfo(new_dtype).max >= n - 1 and (
            facts[0] == codegen.ROW_NUMBERS or isinstance(facts[0], frozenset)):
        return facts[0]
    return None


codegen.deflowering(convert_element_type_p, numbers=_convert_numbers)
codegen.deflowering(convert_element_type_p, simplify=(
    lambda operands, out_aval, *, new_dtype, weak_type:
    0 if type(operands[0]) is not core.Literal and operands[0].aval.dtype == new_dtype else None))

# -- stop_gradient -------------------------------------------------------------------------

stop_gradient_p = Primitive("stop_gradient", origin="library")


def stop_gradient(x):
    """The identity on values whose derivative is zero: gradients do not flow through it.

    >>> import functrans as ft
    >>> ft.grad(lambda x: x * ft.lax.stop_gradient(x))(3.0)
    3.0
    """
    return stop_gradient_p.bind(x)


impl_rules[stop_gradient_p] = lambda x: x
codegen.deflowering(stop_gradient_p, rows=codegen.rows_elementwise)
abstract_eval_rules[stop_gradient_p] = lambda aval: aval
ad.defjvp_zero(stop_gradient_p)
batching.defvectorized(stop_gradient_p)

# -- bitcast_convert_type ------------------------------------------------------------------

bitcast_convert_type_p = Primitive("bitcast_convert_type", origin="library")


def bitcast_convert_type(operand, new_dtype):
    """``operand``'s bits read as ``new_dtype`` (NumPy's ``view``, little-endian).  A
    narrower type adds a trailing axis of ``old size // new size`` pieces; a wider one
    takes the trailing axis, of ``new size // old size`` pieces, away.  Booleans and
    complex numbers only to their own type.  No derivative (its tangent is zero, as JAX's).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.bitcast_convert_type(np.uint32(0x01020304), np.uint8)
    array([4, 3, 2, 1], dtype=uint8)
    >>> lax.bitcast_convert_type(np.float32(1.0), np.int32)
    array(1065353216, dtype=int32)
    """
    new_dtype = np.dtype(new_dtype)
    _bitcast_abstract_eval(get_aval(operand), new_dtype=new_dtype)  # eager calls check too
    return bitcast_convert_type_p.bind(operand, new_dtype=new_dtype)


def _bitcast_abstract_eval(aval, *, new_dtype):
    old = aval.dtype
    if old != new_dtype and (old.kind in "bc" or new_dtype.kind in "bc"):
        raise TypeError(f"bitcast_convert_type: booleans and complex numbers convert only to "
                        f"their own type, got {old} to {new_dtype}")
    shape = aval.shape
    if new_dtype.itemsize < old.itemsize:
        shape = shape + (old.itemsize // new_dtype.itemsize,)
    elif new_dtype.itemsize > old.itemsize:
        if not shape or shape[-1] * old.itemsize != new_dtype.itemsize:
            raise ValueError(f"bitcast_convert_type: converting {old} of shape {shape} to "
                             f"{new_dtype} needs a last axis of length "
                             f"{new_dtype.itemsize // old.itemsize}")
        shape = shape[:-1]
    return ShapedArray(shape, new_dtype, False)


def _bitcast_impl(x, *, new_dtype):
    xp = array_module(x)
    x = xp.asarray(x)
    if x.ndim:  # (NumPy's ascontiguousarray makes a 0-d array 1-d)
        x = xp.ascontiguousarray(x)
    if new_dtype.itemsize < x.dtype.itemsize:  # a trailing axis to cut into, even for 0-d
        return x.reshape(x.shape + (1,)).view(new_dtype)
    out = x.view(new_dtype)
    return out[..., 0] if new_dtype.itemsize > x.dtype.itemsize else out


def _bitcast_batch(vals, dims, *, new_dtype):
    # the trailing axis is the one that may change: the batch goes first
    (x,), (bd,) = vals, dims
    x = bdim_to_front(x, bd, get_aval(x).shape[bd])
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), 0


impl_rules[bitcast_convert_type_p] = _bitcast_impl
abstract_eval_rules[bitcast_convert_type_p] = _bitcast_abstract_eval
ad.defjvp_zero(bitcast_convert_type_p)
batching.batching_rules[bitcast_convert_type_p] = _bitcast_batch

# -- optimization_barrier ------------------------------------------------------------------
# XLA keeps computations from moving across it; functrans's jit neither reorders nor merges
# work across primitives it cannot fuse, so here it is the identity under every transform
# (linear: the tangent and the cotangent pass through a barrier of their own).

optimization_barrier_p = Primitive("optimization_barrier", origin="library")


def optimization_barrier(operand, /):
    """``operand`` (a pytree of arrays) unchanged: the identity under every transform.

    >>> import functrans as ft, functrans.lax as lax
    >>> ft.grad(lambda x: lax.optimization_barrier((x, 2.0 * x))[1] * x)(3.0)
    12.0
    """
    leaves, treedef = tree_flatten(operand)
    return tree_unflatten(treedef, [optimization_barrier_p.bind(x) for x in leaves])


impl_rules[optimization_barrier_p] = lambda x: x
abstract_eval_rules[optimization_barrier_p] = lambda aval: aval
transpose.deflinear(optimization_barrier_p, lambda ct, x: [optimization_barrier_p.bind(ct)])
batching.defvectorized(optimization_barrier_p)

# -- zeros_like ----------------------------------------------------------------------------
# The primitive belongs to the AD system (``ad.zeros_like_p``, the value of a symbolic zero);
# its rules live here.  Its result has the given shape and dtype, on the device of its
# operand, whose values do not matter: zeros are the same for every batch member.

zeros_like_p = ad.zeros_like_p


def zeros_like(x, dtype=None):
    """Zeros of the shape, dtype (unless given) and array module (NumPy or CuPy) of ``x``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.zeros_like(np.array([1, 2], dtype=np.int8))
    array([0, 0], dtype=int8)
    """
    aval = get_aval(x)
    return zeros_like_p.bind(x, shape=aval.shape,
                             dtype=aval.dtype if dtype is None else np.dtype(dtype),
                             weak_type=aval.weak_type if dtype is None else False)


def _zeros_like_impl(x, *, shape, dtype, weak_type):
    if core.is_python_scalar(x) or isinstance(x, np.generic):
        if shape == ():  # a scalar stays one (Python when weakly typed): no host array
            zero = np.zeros((), dtype)[()]
            return zero.item() if weak_type else zero
        return np.zeros(shape, dtype)
    return backend.zeros(shape, dtype, like=x)


def _zeros_like_batch(vals, dims, **params):
    return zeros_like_p.bind(vals[0], **params), batching.not_mapped


impl_rules[zeros_like_p] = _zeros_like_impl
abstract_eval_rules[zeros_like_p] = lambda aval, *, shape, dtype, weak_type: ShapedArray(
    shape, dtype, weak_type)
ad.defjvp_zero(zeros_like_p)
transpose.deftranspose(zeros_like_p, lambda ct, x, **params: [None])
batching.batching_rules[zeros_like_p] = _zeros_like_batch
# on chunks of rows (codegen's "Row regions"): a chunk's zeros, beside a chunk of the
# operand; zeros of another shape, the same in every chunk
codegen.deflowering(zeros_like_p, rows=lambda n, in_avals, out_aval, **params: (
    ("same", ()) if not codegen.rowed(out_aval, n)
    else ("rows", ("shape",)) if codegen.rowed(in_avals[0], n) else None))
