"""``functrans.lax``'s grouped matrix products, ``ragged_dot`` and ``ragged_dot_general``
(with ``RaggedDotDimensionNumbers``), and JAX's types around products: the
``DotDimensionNumbers`` alias, ``DotAlgorithm`` and ``DotAlgorithmPreset``.

``group_sizes`` cuts one axis of ``lhs`` (its "ragged" axis) into consecutive groups.  Each
group is masked out of ``lhs`` in turn (a ``(groups, *lhs.shape)`` stack of masked copies)
and one ``dot_general`` multiplies the stack: with the group's own kernel (the ``rhs``
group axis, paired as a batch axis) when the ragged axis is a free axis of ``lhs``, then
summed over the groups; with the shared ``rhs`` when it is contracted, the groups giving
the result a leading axis.  The cost is ``groups`` times a plain product; the derivatives
in ``lhs`` and ``rhs`` are those of the multiplication and ``dot_general``, and
``group_sizes`` (integers) has none.
"""
from __future__ import annotations

import enum
import operator
from typing import NamedTuple, Sequence, Tuple

import numpy as np

from functrans.core import get_aval
from functrans.primitives.conversion import convert_element_type
from functrans.primitives.cumulative import cumsum
from functrans.primitives.elementwise import bitwise_and, ge, lt, mul, sub
from functrans.primitives.gather import iota
from functrans.primitives.linalg import dot_general
from functrans.primitives.shape import broadcast_in_dim, moveaxis, reduce_sum

__all__ = ["DotAlgorithm", "DotAlgorithmPreset", "DotDimensionNumbers", "ragged_dot",
           "ragged_dot_general", "RaggedDotDimensionNumbers"]

#: ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``, as JAX's type alias
DotDimensionNumbers = Tuple[Tuple[Sequence[int], Sequence[int]],
                            Tuple[Sequence[int], Sequence[int]]]


class DotAlgorithm(NamedTuple):
    """JAX's description of how an accelerator computes a matrix product (the operands'
    and the accumulator's types, how many passes).  Accepted wherever ``precision=`` is,
    as JAX accepts it; NumPy and CuPy compute in the operands' dtype, so it changes
    nothing here.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.DotAlgorithm(np.float32, np.float32, np.float32).accumulation_type
    <class 'numpy.float32'>
    """
    lhs_precision_type: object
    rhs_precision_type: object
    accumulation_type: object
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
    """JAX's named matrix-product algorithms (operand and accumulator types).  Accepted
    wherever ``precision=`` is; NumPy and CuPy compute in the operands' dtype, so it
    changes nothing here.

    >>> import functrans.lax as lax
    >>> lax.DotAlgorithmPreset.F32_F32_F32.name
    'F32_F32_F32'
    """
    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __str__(self):
        return self.name


class RaggedDotDimensionNumbers(NamedTuple):
    """The axes of a ``ragged_dot_general``: ``dot_dimension_numbers`` as
    ``dot_general``'s, ``lhs_ragged_dimensions`` the one ``lhs`` axis that ``group_sizes``
    cuts into groups, ``rhs_group_dimensions`` the ``rhs`` axis of the groups' kernels (one
    when the ragged axis is a free axis of ``lhs``, none when it is contracted).

    >>> import functrans.lax as lax
    >>> lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0]).lhs_ragged_dimensions
    [0]
    """
    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: Sequence[int]
    rhs_group_dimensions: Sequence[int]


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
    """``lhs`` ``(m, k)`` times one of the ``rhs`` ``(g, k, n)`` matrices per row: the rows
    are cut into ``g`` consecutive groups of ``group_sizes`` (integers; rows past their sum
    give zeros), and group ``j`` multiplies ``rhs[j]``.  Differentiable in ``lhs`` and
    ``rhs``.  ``precision`` and ``out_sharding`` are accepted and change nothing;
    ``group_offset`` is not supported.

    >>> import numpy as np, functrans.lax as lax
    >>> rhs = np.stack([np.eye(2), 10 * np.eye(2)])      # two groups' matrices
    >>> lax.ragged_dot(np.ones((3, 2)), rhs, np.array([1, 2]))
    array([[ 1.,  1.],
           [10., 10.],
           [10., 10.]])
    """
    lhs_aval, rhs_aval = get_aval(lhs), get_aval(rhs)
    if lhs_aval.ndim != 2 or rhs_aval.ndim != 3:
        raise ValueError(f"ragged_dot: lhs must be (m, k) and rhs (g, k, n), got shapes "
                         f"{lhs_aval.shape} and {rhs_aval.shape}")
    numbers = RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])
    return _ragged(lhs, rhs, group_sizes, numbers, precision, preferred_element_type,
                   group_offset, "ragged_dot")


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """``dot_general`` with one axis of ``lhs`` cut into consecutive groups of
    ``group_sizes`` (a 1-d integer array) by ``ragged_dot_dimension_numbers``.  When the
    ragged axis is a free axis of ``lhs`` each group multiplies its own kernel (the
    ``rhs`` group axis) and the result has ``dot_general``'s shape; when it is contracted
    each group is contracted on its own part, and the result has a leading group axis.
    (A ragged batch axis and per-batch group sizes are not supported.)

    >>> import numpy as np, functrans.lax as lax
    >>> numbers = lax.RaggedDotDimensionNumbers((([1], [0]), ([], [])), [1], [])
    >>> lax.ragged_dot_general(np.ones((1, 3)), np.ones((3, 2)), np.array([1, 2]), numbers)
    array([[[1., 1.]],
    <BLANKLINE>
           [[2., 2.]]])
    """
    return _ragged(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision,
                   preferred_element_type, group_offset, "ragged_dot_general")


def _axes(name: str, field: str, axes) -> tuple:
    try:
        return tuple(operator.index(a) for a in axes)
    except TypeError:
        raise TypeError(f"{name}: ragged_dot_dimension_numbers.{field} must be a sequence "
                        f"of ints, got {axes!r}") from None


def _ragged(lhs, rhs, group_sizes, numbers, precision, preferred_element_type, group_offset,
            name: str):
    if group_offset is not None:
        raise NotImplementedError(f"{name}: group_offset is not supported (JAX supports it "
                                  "on TPU only); slice group_sizes and rhs instead")
    lhs_aval, rhs_aval, sizes_aval = get_aval(lhs), get_aval(rhs), get_aval(group_sizes)
    try:
        (lc, rc), (lb, rb) = numbers.dot_dimension_numbers
    except (AttributeError, TypeError, ValueError):
        raise TypeError(f"{name}: ragged_dot_dimension_numbers must be a "
                        f"RaggedDotDimensionNumbers, got {numbers!r}") from None
    lc, rc = _axes(name, "dot_dimension_numbers", lc), _axes(name, "dot_dimension_numbers", rc)
    lb, rb = _axes(name, "dot_dimension_numbers", lb), _axes(name, "dot_dimension_numbers", rb)
    ragged = _axes(name, "lhs_ragged_dimensions", numbers.lhs_ragged_dimensions)
    group_axes = _axes(name, "rhs_group_dimensions", numbers.rhs_group_dimensions)
    if len(ragged) != 1 or not 0 <= ragged[0] < lhs_aval.ndim:
        raise ValueError(f"{name}: ragged_dot_dimension_numbers.lhs_ragged_dimensions="
                         f"{ragged} must name one axis of lhs (shape {lhs_aval.shape})")
    r = ragged[0]
    if sizes_aval.dtype.kind not in "iu":
        raise TypeError(f"{name}: group_sizes must be integers, got {sizes_aval.str_short()}")
    if sizes_aval.ndim != 1:
        raise NotImplementedError(f"{name}: group_sizes must be 1-d (one size per group); "
                                  f"per-batch group sizes (shape {sizes_aval.shape}) are not "
                                  "supported")
    groups = sizes_aval.shape[0]
    if r in lb:
        raise NotImplementedError(f"{name}: a ragged batch axis (lhs axis {r}) is not "
                                  "supported")
    if r in lc:
        if group_axes:
            raise ValueError(f"{name}: the ragged axis (lhs axis {r}) is contracted, so rhs "
                             f"has no group axis; got rhs_group_dimensions={group_axes}")
    else:
        if len(group_axes) != 1 or not 0 <= group_axes[0] < rhs_aval.ndim \
                or group_axes[0] in rc or group_axes[0] in rb:
            raise ValueError(f"{name}: with a free ragged axis (lhs axis {r}) "
                             f"rhs_group_dimensions={group_axes} must name one free axis of "
                             f"rhs (shape {rhs_aval.shape})")
        if rhs_aval.shape[group_axes[0]] != groups:
            raise ValueError(f"{name}: rhs group axis {group_axes[0]} has "
                             f"{rhs_aval.shape[group_axes[0]]} kernels but group_sizes "
                             f"(shape {sizes_aval.shape}) has {groups} groups")
    # mask[j, i]: whether position i of the ragged axis is in group j
    sizes = convert_element_type(group_sizes, np.int64)
    ends = cumsum(sizes)
    starts = sub(ends, sizes)
    n = lhs_aval.shape[r]
    places = broadcast_in_dim(iota(np.int64, n, like=group_sizes), (groups, n), (1,))
    inside = bitwise_and(ge(places, broadcast_in_dim(starts, (groups, n), (0,))),
                         lt(places, broadcast_in_dim(ends, (groups, n), (0,))))
    stacked_shape = (groups,) + tuple(lhs_aval.shape)
    mask = broadcast_in_dim(convert_element_type(inside, lhs_aval.dtype), stacked_shape,
                            (0, r + 1))
    stacked = mul(broadcast_in_dim(lhs, stacked_shape, tuple(range(1, lhs_aval.ndim + 1))),
                  mask)
    shifted_lc, shifted_lb = tuple(a + 1 for a in lc), tuple(a + 1 for a in lb)
    if r in lc:  # each group's part contracted on its own: the groups lead the result
        out = dot_general(stacked, rhs, ((shifted_lc, rc), (shifted_lb, rb)),
                          precision=precision, preferred_element_type=preferred_element_type)
        return moveaxis(out, len(lb), 0)
    out = dot_general(stacked, rhs, ((shifted_lc, rc), ((0,) + shifted_lb,
                                                         (group_axes[0],) + rb)),
                      precision=precision, preferred_element_type=preferred_element_type)
    return reduce_sum(out, (0,))
