"""Dtype conversion, stop_gradient and zeros_like."""
from __future__ import annotations

import numpy as np

from functrans import backend, core
from functrans.array_types import weak_result
from functrans.backend import array_module
from functrans.core import (Primitive, ShapedArray, abstract_eval_rules, get_aval, impl_rules,
                            is_inexact)
from functrans.interpreters import ad, batching, codegen, transpose
from functrans.interpreters.ad import Zero

#: what functrans.lax re-exports from this family (other names without an underscore
#: are the package's: other families, numpy, scipy)
__all__ = ["convert_element_type", "stop_gradient", "zeros_like"]

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
