"""Shape primitives: broadcast_in_dim, reshape, transpose, squeeze, expand_dims, rev, and
reduce_sum.  All are linear; each transposes to another one of this family (reduce_sum is
here as the transpose of broadcast_in_dim, and the other way round).  slice, pad and
concatenate, whose rules need arithmetic, are in ``slicing.py``."""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from functrans import backend, core
from functrans.backend import array_module, is_lazy
from functrans.core import Primitive, ShapedArray, abstract_eval_rules, get_aval, impl_rules
from functrans.interpreters import batching, codegen, transpose
from functrans.interpreters.batching import not_mapped

#: what functrans.lax re-exports from this family (other names without an underscore
#: are the package's: other families, numpy, scipy)
__all__ = ["broadcast", "broadcast_in_dim", "expand_dims", "reduce_sum", "reshape", "rev",
           "squeeze"]


def shape_of(x) -> tuple:
    return x.shape if type(x) is np.ndarray else get_aval(x).shape


def ndim_of(x) -> int:
    return x.ndim if type(x) is np.ndarray else len(get_aval(x).shape)


def as_operand(x, xp=None):
    """``x`` as an array: Python and NumPy scalars become 0-d arrays of ``xp`` (default: the
    module of ``x``), filled on the device rather than copied from the host."""
    if core.is_python_scalar(x) or isinstance(x, np.generic):
        return (xp or np).full((), x)
    return x


def normalize_axis(axis: int, ndim: int, what: str = "axis") -> int:
    if not -ndim <= axis < max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        raise ValueError(f"{what} {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim if ndim else 0


# -- broadcast_in_dim ----------------------------------------------------------------------

broadcast_in_dim_p = Primitive("broadcast_in_dim", origin="library")


def broadcast_in_dim(operand, shape: Sequence[int], broadcast_dimensions: Sequence[int]):
    """Broadcast ``operand`` to ``shape``; operand axis ``i`` becomes output axis
    ``broadcast_dimensions[i]`` (size 1 or equal), the other output axes are new.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.broadcast_in_dim(np.array([1.0, 2.0]), (2, 3), (0,))
    array([[1., 1., 1.],
           [2., 2., 2.]])
    """
    shape, dims = tuple(int(d) for d in shape), tuple(int(d) for d in broadcast_dimensions)
    if shape_of(operand) == shape and dims == tuple(range(len(shape))):
        return operand
    return broadcast_in_dim_p.bind(operand, shape=shape, broadcast_dimensions=dims)


def broadcast(operand, sizes: Sequence[int]):
    """Prepend new axes of the given sizes (``lax.broadcast``).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.broadcast(np.array([1.0, 2.0]), (2,))
    array([[1., 2.],
           [1., 2.]])
    """
    sizes = tuple(sizes)
    nd = ndim_of(operand)
    return broadcast_in_dim(operand, sizes + shape_of(operand),
                            tuple(range(len(sizes), len(sizes) + nd)))


def broadcast_to(x, shape: Sequence[int]):
    """NumPy-style broadcasting of ``x`` to ``shape`` (trailing axes aligned)."""
    shape = tuple(shape)
    nd = ndim_of(x)
    if nd > len(shape):
        raise ValueError(f"cannot broadcast an array of shape {shape_of(x)} to shape {shape}")
    return broadcast_in_dim(x, shape, tuple(range(len(shape) - nd, len(shape))))


def _broadcast_in_dim_abstract_eval(aval, *, shape, broadcast_dimensions):
    dims = broadcast_dimensions
    if len(dims) != aval.ndim or any(not 0 <= d < len(shape) for d in dims) or any(
            a >= b for a, b in zip(dims, dims[1:])):
        raise ValueError(f"broadcast_in_dim: broadcast_dimensions {dims} must be increasing "
                         f"axes of the output shape {shape}, one per operand axis "
                         f"(operand shape {aval.shape})")
    for i, d in enumerate(dims):
        if aval.shape[i] not in (1, shape[d]):
            raise ValueError(f"broadcast_in_dim: operand of shape {aval.shape} cannot be "
                             f"broadcast to {shape}: its axis {i} has size {aval.shape[i]}, "
                             f"output axis {d} has size {shape[d]}")
    return ShapedArray(shape, aval.dtype, aval.weak_type)


#: broadcasts to at most this many elements are written out (an assignment into a new
#: array: a seventh of the time of ``broadcast_to``, a Python function); larger ones are
#: views, which cost no memory
_FILL_MAX_SIZE = 1 << 12


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    if core.is_python_scalar(x) or isinstance(x, np.generic):  # a host scalar (grad's seed)
        return np.full(shape, x) if math.prod(shape) <= _FILL_MAX_SIZE else (
            np.broadcast_to(np.asarray(x), shape))
    xp = array_module(x)
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    if is_lazy(x):
        # new axes in the chunks of the data being differentiated (chunk_hints)
        own = dict(zip(broadcast_dimensions, x.chunks))
        chunks = backend.broadcast_chunks(
            tuple(own.get(d, (1,)) for d in range(len(shape))), tuple(shape))
        return backend.lazy_broadcast(x, shape, broadcast_dimensions, chunks)
    if math.prod(shape) <= _FILL_MAX_SIZE:
        out = xp.empty(shape, dtype=x.dtype)
        out[...] = x.reshape(expanded)
        return out
    return xp.broadcast_to(x.reshape(expanded), shape)


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    operand_shape = x.aval.shape
    summed = [d for d in range(len(shape)) if d not in broadcast_dimensions] + [
        d for i, d in enumerate(broadcast_dimensions) if operand_shape[i] == 1 and shape[d] != 1]
    return [reshape(reduce_sum(ct, sorted(summed)), operand_shape)]


def _broadcast_in_dim_batch(vals, dims, *, shape, broadcast_dimensions):
    (x,), (bd,) = vals, dims
    x = moveaxis(x, bd, 0)
    return broadcast_in_dim_p.bind(
        x, shape=(shape_of(x)[0],) + shape,
        broadcast_dimensions=(0,) + tuple(d + 1 for d in broadcast_dimensions)), 0


impl_rules[broadcast_in_dim_p] = _broadcast_in_dim_impl
abstract_eval_rules[broadcast_in_dim_p] = _broadcast_in_dim_abstract_eval
transpose.deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)
batching.batching_rules[broadcast_in_dim_p] = _broadcast_in_dim_batch

# -- reshape -------------------------------------------------------------------------------

reshape_p = Primitive("reshape", origin="library")


def reshape(operand, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None):
    """Reshape ``operand`` (row-major) to ``new_sizes``; with ``dimensions`` (a permutation of its
    axes) its axes are first transposed into that order, as in JAX.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.reshape(np.arange(6.0), (2, 3))
    array([[0., 1., 2.],
           [3., 4., 5.]])
    >>> lax.reshape(np.arange(6.0).reshape(2, 3), (6,), dimensions=(1, 0))
    array([0., 3., 1., 4., 2., 5.])
    """
    if dimensions is not None:
        ndim = len(shape_of(operand))
        dims = tuple(int(d) for d in dimensions)
        if sorted(dims) != list(range(ndim)):
            raise TypeError(f"reshape: dimensions must be a permutation of the operand's axes "
                            f"(0 .. {ndim - 1}) for an operand of shape {shape_of(operand)}, got "
                            f"dimensions={tuple(dimensions)}")
        if dims != tuple(range(ndim)):
            operand = transpose_axes(operand, dims)
    new_sizes = tuple(int(d) for d in new_sizes)
    if shape_of(operand) == new_sizes:
        return operand
    return reshape_p.bind(operand, new_sizes=new_sizes)


def _reshape_abstract_eval(aval, *, new_sizes):
    if math.prod(new_sizes) != aval.size or any(d < 0 for d in new_sizes):
        raise TypeError(f"reshape: cannot reshape an array of shape {aval.shape} "
                        f"({aval.size} elements) to shape {new_sizes}")
    return ShapedArray(new_sizes, aval.dtype, aval.weak_type)


def _reshape_batch(vals, dims, *, new_sizes):
    (x,), (bd,) = vals, dims
    x = moveaxis(x, bd, 0)
    return reshape_p.bind(x, new_sizes=(shape_of(x)[0],) + new_sizes), 0


impl_rules[reshape_p] = lambda x, *, new_sizes: array_module(x).reshape(x, new_sizes)
abstract_eval_rules[reshape_p] = _reshape_abstract_eval
transpose.deflinear(reshape_p, lambda ct, x, *, new_sizes: [reshape(ct, x.aval.shape)])
batching.batching_rules[reshape_p] = _reshape_batch

# -- transpose -----------------------------------------------------------------------------

transpose_p = Primitive("transpose", origin="library")


def transpose_axes(x, permutation: Sequence[int]):
    """Permute the axes of ``x``: output axis ``i`` is input axis ``permutation[i]``."""
    permutation = tuple(map(int, permutation))
    if permutation == tuple(range(len(permutation))):
        return x
    return transpose_p.bind(x, permutation=permutation)


def moveaxis(x, source: int, destination: int):
    if source == destination:
        return x
    perm = [i for i in range(ndim_of(x)) if i != source]
    perm.insert(destination, source)
    return transpose_axes(x, perm)


def _transpose_abstract_eval(aval, *, permutation):
    if sorted(permutation) != list(range(aval.ndim)):
        raise ValueError(f"transpose: permutation {permutation} is not a permutation of the "
                         f"axes of an array of shape {aval.shape}")
    return ShapedArray([aval.shape[p] for p in permutation], aval.dtype, aval.weak_type)


def _transpose_batch(vals, dims, *, permutation):
    (x,), (bd,) = vals, dims
    physical = [p + (p >= bd) for p in permutation]
    return transpose_p.bind(x, permutation=(bd, *physical)), 0


impl_rules[transpose_p] = lambda x, *, permutation: array_module(x).transpose(x, permutation)
abstract_eval_rules[transpose_p] = _transpose_abstract_eval
transpose.deflinear(transpose_p, lambda ct, x, *, permutation: [
    transpose_axes(ct, tuple(int(i) for i in np.argsort(permutation)))])
batching.batching_rules[transpose_p] = _transpose_batch

# -- squeeze / expand_dims -----------------------------------------------------------------

squeeze_p = Primitive("squeeze", origin="library")
expand_dims_p = Primitive("expand_dims", origin="library")


def squeeze(array, dimensions: Sequence[int]):
    """Remove the given axes, each of size 1.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.squeeze(np.zeros((1, 3, 1)), (0, 2)).shape
    (3,)
    """
    nd = ndim_of(array)
    dims = tuple(sorted({normalize_axis(d, nd) for d in dimensions}))
    return squeeze_p.bind(array, dimensions=dims) if dims else array


def expand_dims(array, dimensions: Sequence[int]):
    """Insert axes of size 1 at the given positions of the output.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.expand_dims(np.zeros((2, 3)), (0, 2)).shape
    (1, 2, 1, 3)
    """
    out_nd = ndim_of(array) + len(dimensions)
    dims = tuple(sorted({normalize_axis(d, out_nd) for d in dimensions}))
    return expand_dims_p.bind(array, dimensions=dims) if dims else array


def _squeeze_abstract_eval(aval, *, dimensions):
    for d in dimensions:
        if not 0 <= d < aval.ndim or aval.shape[d] != 1:
            raise ValueError(f"squeeze: axis {d} of an array of shape {aval.shape} is not of "
                             "size 1")
    shape = [n for i, n in enumerate(aval.shape) if i not in dimensions]
    return ShapedArray(shape, aval.dtype, aval.weak_type)


def _expand_dims_abstract_eval(aval, *, dimensions):
    shape = list(aval.shape)
    for d in dimensions:
        shape.insert(d, 1)
    return ShapedArray(shape, aval.dtype, aval.weak_type)


def _axes_batch(prim):
    def rule(vals, dims, *, dimensions):
        (x,), (bd,) = vals, dims
        x = moveaxis(x, bd, 0)
        return prim.bind(x, dimensions=tuple(d + 1 for d in dimensions)), 0
    return rule


impl_rules[squeeze_p] = lambda x, *, dimensions: array_module(x).squeeze(x, axis=dimensions)
impl_rules[expand_dims_p] = lambda x, *, dimensions: array_module(x).expand_dims(x, dimensions)
abstract_eval_rules[squeeze_p] = _squeeze_abstract_eval
abstract_eval_rules[expand_dims_p] = _expand_dims_abstract_eval
for _p in (squeeze_p, expand_dims_p):
    transpose.deflinear(_p, lambda ct, x, **_: [reshape(ct, x.aval.shape)])
    batching.batching_rules[_p] = _axes_batch(_p)

# -- rev -----------------------------------------------------------------------------------

rev_p = Primitive("rev", origin="library")


def rev(operand, dimensions: Sequence[int]):
    """Reverse the order of elements along the given axes.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.rev(np.array([[1, 2], [3, 4]]), (1,))
    array([[2, 1],
           [4, 3]])
    """
    dims = tuple(sorted({normalize_axis(d, ndim_of(operand)) for d in dimensions}))
    return rev_p.bind(operand, dimensions=dims) if dims else operand


impl_rules[rev_p] = lambda x, *, dimensions: array_module(x).flip(x, axis=dimensions)
abstract_eval_rules[rev_p] = lambda aval, *, dimensions: aval
transpose.deflinear(rev_p, lambda ct, x, *, dimensions: [rev(ct, dimensions)])
batching.batching_rules[rev_p] = lambda vals, dims, *, dimensions: (
    rev_p.bind(vals[0], dimensions=tuple(d + (d >= dims[0]) for d in dimensions)), dims[0])


# -- reduce_sum (the transpose of broadcast_in_dim) ---------------------------------------

def normalize_axes(axes: Sequence[int], ndim: int) -> tuple:
    """``axes`` as sorted, distinct, non-negative axes of an array of rank ``ndim``."""
    return tuple(sorted({normalize_axis(a, ndim) for a in axes}))


def reduced_aval(name: str, aval: ShapedArray, axes) -> ShapedArray:
    """The abstract value of a reduction of ``aval`` over ``axes`` (checked)."""
    shape = aval.shape
    ndim = len(shape)
    if any(not 0 <= a < ndim for a in axes) or len(set(axes)) != len(axes):
        raise ValueError(f"{name}: axes {axes} are not distinct axes of an array of shape "
                         f"{shape}")
    return ShapedArray(tuple([n for i, n in enumerate(shape) if i not in axes]), aval.dtype,
                       aval.weak_type)


def kept_dims(ndim: int, axes) -> tuple:
    """The axes of a rank-``ndim`` array that a reduction over ``axes`` keeps."""
    return tuple(i for i in range(ndim) if i not in axes)


def reduction_batcher(prim: Primitive):
    """Batching rule of a reduction over static ``axes``: shift the axes past the batch
    axis and reduce the whole batch at once."""
    def rule(vals, dims, *, axes, **params):
        (x,), (bd,) = vals, dims
        physical = tuple(a + (a >= bd) for a in axes)
        return prim.bind(x, axes=physical, **params), bd - sum(a < bd for a in axes)
    return rule


reduce_sum_p = Primitive("reduce_sum", origin="library")


def reduce_sum(operand, axes: Sequence[int]):
    """Sum of ``operand`` over the given axes (the dtype is kept).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.reduce_sum(np.array([[1.0, 7.0], [4.0, 2.0]]), (1,))
    array([8., 6.])
    """
    axes = normalize_axes(axes, len(shape_of(operand)))
    return reduce_sum_p.bind(operand, axes=axes) if axes else operand


def _reduce_sum_impl(x, *, axes):
    dtype = get_aval(x).dtype
    if isinstance(x, np.ndarray) or backend.is_device_array(x):  # the method: no wrapper
        return x.sum(axis=axes, dtype=dtype)
    return array_module(x).sum(x, axis=axes, dtype=dtype)


def _reduce_sum_transpose(ct, x, *, axes):
    shape = x.aval.shape
    return [broadcast_in_dim(ct, shape, kept_dims(len(shape), axes))]


impl_rules[reduce_sum_p] = _reduce_sum_impl
abstract_eval_rules[reduce_sum_p] = lambda aval, *, axes: reduced_aval("reduce_sum", aval, axes)
transpose.deflinear(reduce_sum_p, _reduce_sum_transpose)
batching.batching_rules[reduce_sum_p] = reduction_batcher(reduce_sum_p)

# -- jit: direct lowerings and simplifications ------------------------------------------


def _trailing_aligned(shape, broadcast_dimensions, operand_shape) -> bool:
    """Whether NumPy broadcasting of the operand against ``shape`` is this broadcast."""
    lead = len(shape) - len(operand_shape)
    return (tuple(broadcast_dimensions) == tuple(range(lead, len(shape)))
            and all(n in (1, shape[lead + i]) for i, n in enumerate(operand_shape)))


def _broadcast_in_dim_lowering(ctx, x, *, shape, broadcast_dimensions):
    operand = ctx.in_avals[0]
    if not ctx.is_literal[0] and _trailing_aligned(shape, broadcast_dimensions, operand.shape):
        return f"{ctx.xp}.broadcast_to({x}, {shape!r})"
    if (ctx.is_literal[0] and not operand.shape and ctx.xp_module is not np
            and not ctx.library.lazy):
        # a constant spread over a device array is made there: the impl would make it on
        # the host (its operand is no device array), and the first device operation
        # reading it would copy it over (in a dask task of CuPy chunks: once per chunk)
        dtype = ctx.bind(np.dtype(ctx.out_avals[0].dtype), "dtype")
        return f"{ctx.xp}.full({shape!r}, {x}, dtype={dtype})"
    impl = ctx.bind(_broadcast_in_dim_impl, "broadcast_in_dim")
    return (f"{impl}({x}, shape={shape!r}, "
            f"broadcast_dimensions={tuple(broadcast_dimensions)!r})")


def _same_type(operands, out_aval, **params):
    x = operands[0]
    if type(x) is core.Literal:
        return None
    return 0 if x.aval.shape == out_aval.shape and x.aval.dtype == out_aval.dtype else None


def _transpose_lowering(ctx, x, *, permutation):
    if tuple(permutation) == (1, 0):
        return f"{x}.T"
    if ctx.is_literal[0]:
        return f"{ctx.xp}.transpose({x}, {tuple(permutation)!r})"
    return f"{x}.transpose({tuple(permutation)!r})"


def _reduce_sum_lowering(ctx, x, *, axes):
    dtype = ctx.bind(ctx.out_avals[0].dtype, "dtype")
    if ctx.is_literal[0]:
        return f"{ctx.xp}.sum({x}, axis={tuple(axes)!r}, dtype={dtype})"
    return f"{x}.sum(axis={tuple(axes)!r}, dtype={dtype})"


def _reshape_lowering(ctx, x, **params):
    # reshape, squeeze and expand_dims all give the output's shape; the array method is
    # several times cheaper than the module functions, which are Python wrappers.
    shape = tuple(ctx.out_avals[0].shape)
    if ctx.is_literal[0]:  # a scalar constant: an array of the library first (dask's
        # reshape takes dask arrays only)
        return f"{ctx.xp}.reshape({ctx.xp}.asarray({x}), {shape!r})"
    return f"{x}.reshape({shape!r})"


codegen.deflowering(broadcast_in_dim_p, _broadcast_in_dim_lowering, fresh=False)
codegen.deflowering(broadcast_in_dim_p, numpy_broadcast=(
    lambda operand, out, *, shape, broadcast_dimensions:
    _trailing_aligned(shape, broadcast_dimensions, operand.shape)),
    splat=lambda shape: dict(shape=shape, broadcast_dimensions=()))
codegen.deflowering(transpose_p, _transpose_lowering, fresh=False)
for _p in (reshape_p, squeeze_p, expand_dims_p):
    codegen.deflowering(_p, _reshape_lowering, fresh=False)
codegen.deflowering(reduce_sum_p, _reduce_sum_lowering, reduction="sum")
for _p in (broadcast_in_dim_p, reshape_p, squeeze_p, expand_dims_p):
    codegen.deflowering(_p, simplify=_same_type)  # same shape: these are the identity
codegen.deflowering(transpose_p, simplify=lambda operands, out_aval, *, permutation: (
    0 if tuple(permutation) == tuple(range(len(permutation))) else None))


# -- jit on dask: how each acts on chunks of rows (codegen's "Row regions") ----------------


def _broadcast_in_dim_rows(n, in_avals, out_aval, *, shape, broadcast_dimensions):
    # the operand's rows are the result's, or it reaches the result's rows by broadcasting
    operand = in_avals[0]
    if not codegen.rowed(out_aval, n):
        return None
    for axis, d in enumerate(broadcast_dimensions):
        if axis == 0 and codegen.rowed(operand, n):
            if d != 0:
                return None
        elif d == 0 and operand.shape[axis] != 1:
            return None
    return "rows", ("shape",)


def _reshape_rows(n, in_avals, out_aval, *, new_sizes):
    # within each row: the rows stay apart
    operand = in_avals[0]
    if not (codegen.rowed(operand, n) and codegen.rowed(out_aval, n)):
        return None
    return ("rows", ("new_sizes",)) if operand.shape[0] == new_sizes[0] else None


def _keeps_axis_zero(of_result: bool):
    # squeeze (``dimensions``: axes of the operand) and expand_dims (axes of the result)
    # of other axes than the first
    def rule(n, in_avals, out_aval, *, dimensions):
        ok = (codegen.rowed(in_avals[0], n) and codegen.rowed(out_aval, n) and not
              codegen.along(0, dimensions, out_aval if of_result else in_avals[0]))
        return ("rows", ()) if ok else None
    return rule


def _broadcast_in_dim_numbers(n, in_avals, out_aval, facts, *, shape, broadcast_dimensions):
    # the operand's rows are the result's; its last axis may be the result's
    operand = in_avals[0]
    if facts[0] is None or not operand.shape or broadcast_dimensions[0] != 0:
        return None
    last = broadcast_dimensions[-1] == len(shape) - 1 and operand.shape[-1] == shape[-1]
    return codegen.numbers_kept(facts[0], operand, out_aval, n, last)


def _reshape_numbers(n, in_avals, out_aval, facts, *, new_sizes):
    # rows of the same length: each row's elements stay in it, in order
    operand = in_avals[0]
    last = (len(operand.shape) >= 2 and len(out_aval.shape) >= 2
            and operand.shape[-1] == out_aval.shape[-1])
    return codegen.numbers_kept(facts[0], operand, out_aval, n, last)


def _axes_numbers(of_result: bool):
    # squeeze and expand_dims of other axes than the first (and maybe than the last)
    def rule(n, in_avals, out_aval, facts, *, dimensions):
        aval = out_aval if of_result else in_avals[0]
        if facts[0] is None or not aval.shape or codegen.along(0, dimensions, aval):
            return None
        last = not codegen.along(len(aval.shape) - 1, dimensions, aval)
        return codegen.numbers_kept(facts[0], in_avals[0], out_aval, n, last)
    return rule


codegen.deflowering(broadcast_in_dim_p, rows=_broadcast_in_dim_rows,
                    numbers=_broadcast_in_dim_numbers)
codegen.deflowering(reshape_p, rows=_reshape_rows, numbers=_reshape_numbers)
codegen.deflowering(squeeze_p, rows=_keeps_axis_zero(of_result=False),
                    numbers=_axes_numbers(of_result=False))
codegen.deflowering(expand_dims_p, rows=_keeps_axis_zero(of_result=True),
                    numbers=_axes_numbers(of_result=True))
codegen.deflowering(transpose_p, rows=lambda n, in_avals, out_aval, *, permutation: (
    ("rows", ()) if codegen.rowed(in_avals[0], n) and permutation[0] == 0 else None))
codegen.deflowering(reduce_sum_p, rows=codegen.rows_reduction("sum"))
codegen.deflowering(rev_p, rows=lambda n, in_avals, out_aval, *, dimensions: (
    ("rows", ()) if codegen.rowed(in_avals[0], n)
    and not codegen.along(0, dimensions, in_avals[0]) else None))

# -- batching helpers ----------------------------------------------------------------------


def bdim_to_front(x, bdim, size: int):
    """``x`` with its batch axis first; an unbatched ``x`` is broadcast to ``size`` copies."""
    if bdim is not_mapped:
        return broadcast(x, (size,))
    return moveaxis(x, bdim, 0)
