"""Contractions: sums of products over paired axes (``matmul``, ``dot``, ``tensordot``,
``einsum``, ...), each lowered to ``lax.dot_general``.

A new product of arrays goes here.
"""
from __future__ import annotations

import numpy as np

from functrans import lax
from functrans.core import get_aval
from functrans.numpy._elementwise import conj
from functrans.numpy._shape import ravel
from functrans.numpy._util import arg, shape_of
from functrans.primitives import shape as shape_ops

__all__ = ["matmul", "dot", "vdot", "inner", "outer", "tensordot", "einsum", "convolve",
           "correlate"]


def matmul(a, b):
    """Matrix product with NumPy's ``@`` semantics (1-D operands, broadcast batch axes)."""
    a, b = arg(a), arg(b)
    a_nd, b_nd = len(shape_of(a)), len(shape_of(b))
    if a_nd == 0 or b_nd == 0:
        raise ValueError("matmul: operands must have at least one axis; use multiply for "
                         "scalars")
    if a_nd <= 2 and b_nd <= 2:  # no batch axes: one dot_general, no expand/squeeze
        k_a, k_b = shape_of(a)[-1], shape_of(b)[0 if b_nd == 1 else -2]
        if k_a != k_b:
            raise ValueError(f"matmul: contracting sizes differ: operands of shapes "
                             f"{shape_of(a)} and {shape_of(b)}")
        return lax.dot_general(a, b, (((a_nd - 1,), (b_nd - 2 if b_nd == 2 else 0,)),
                                      ((), ())))
    a2 = shape_ops.expand_dims(a, (0,)) if a_nd == 1 else a
    b2 = shape_ops.expand_dims(b, (1,)) if b_nd == 1 else b
    a_batch, b_batch = shape_of(a2)[:-2], shape_of(b2)[:-2]
    try:
        batch = np.broadcast_shapes(a_batch, b_batch)
    except ValueError:
        raise ValueError(f"matmul: batch shapes {a_batch} and {b_batch} (of operands "
                         f"{shape_of(a)} and {shape_of(b)}) do not broadcast") from None
    if shape_of(a2)[-1] != shape_of(b2)[-2]:
        raise ValueError(f"matmul: contracting sizes differ: operands of shapes {shape_of(a)} "
                         f"and {shape_of(b)}")
    nb = len(batch)
    a2 = shape_ops.broadcast_to(a2, batch + shape_of(a2)[-2:])
    b2 = shape_ops.broadcast_to(b2, batch + shape_of(b2)[-2:])
    batch_dims = tuple(range(nb))
    out = lax.dot_general(a2, b2, (((nb + 1,), (nb,)), (batch_dims, batch_dims)))
    if a_nd == 1:
        out = shape_ops.squeeze(out, (-2,))
    if b_nd == 1:
        out = shape_ops.squeeze(out, (-1,))
    return out


def dot(a, b):
    """NumPy's ``dot``: a sum product over the last axis of ``a`` and the second-to-last of
    ``b`` (the last if ``b`` is 1-D); scalars multiply."""
    a, b = arg(a), arg(b)
    a_nd, b_nd = len(shape_of(a)), len(shape_of(b))
    if a_nd == 0 or b_nd == 0:
        return lax.mul(a, b)
    contract_b = 0 if b_nd == 1 else b_nd - 2
    return lax.dot_general(a, b, (((a_nd - 1,), (contract_b,)), ((), ())))


def vdot(a, b):
    """Dot product of flattened arrays, conjugating the first."""
    return dot(ravel(conj(a)), ravel(b))


def inner(a, b):
    a, b = arg(a), arg(b)
    a_nd, b_nd = len(shape_of(a)), len(shape_of(b))
    if a_nd == 0 or b_nd == 0:
        return lax.mul(a, b)
    return lax.dot_general(a, b, (((a_nd - 1,), (b_nd - 1,)), ((), ())))


def outer(a, b):
    a = ravel(a)
    return lax.mul(shape_ops.reshape(a, (get_aval(a).size, 1)), ravel(b))


def tensordot(a, b, axes=2):
    """Sum products over the given axes (an int: the last ``axes`` of ``a`` and the first of
    ``b``; or a pair of axis sequences)."""
    a, b = arg(a), arg(b)
    a_nd, b_nd = len(shape_of(a)), len(shape_of(b))
    if isinstance(axes, (int, np.integer)):
        ca, cb = tuple(range(a_nd - axes, a_nd)), tuple(range(axes))
    else:
        ax_a, ax_b = axes
        ca = (ax_a,) if isinstance(ax_a, int) else tuple(ax_a)
        cb = (ax_b,) if isinstance(ax_b, int) else tuple(ax_b)
        ca = tuple(i % a_nd for i in ca)
        cb = tuple(i % b_nd for i in cb)
    return lax.dot_general(a, b, ((ca, cb), ((), ())))


def einsum(subscripts: str, *operands):
    """Einstein summation, lowered to dot_general, transposes, reductions and (for repeated
    indices) diagonals; more than two operands are contracted left to right.  Explicit
    output (``'ij,jk->ik'``) and implicit forms are supported; ellipses are not yet."""
    if "..." in subscripts:
        raise NotImplementedError("einsum: ellipsis ('...') is not supported yet")
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        inputs, output = subscripts.split("->")
    else:
        inputs = subscripts
        counts = {}
        for c in inputs.replace(",", ""):
            counts[c] = counts.get(c, 0) + 1
        output = "".join(sorted(c for c, n in counts.items() if n == 1))
    specs = inputs.split(",")
    if len(specs) != len(operands):
        raise ValueError(f"einsum: {len(specs)} operand specs for {len(operands)} operands")
    operands = [arg(x) for x in operands]
    if len(specs) == 1:
        return _einsum_single(specs[0], output, operands[0])
    if len(specs) != 2:
        out, spec = operands[0], specs[0]
        for k in range(1, len(specs)):
            rest = set("".join(specs[k + 1:])) | set(output)
            keep = "".join(dict.fromkeys(c for c in spec + specs[k] if c in rest))
            out = einsum(f"{spec},{specs[k]}->{keep}", out, operands[k])
            spec = keep
        return _einsum_single(spec, output, out)
    (sa, sb), (a, b) = specs, operands
    # Letters used by one operand only and absent from the output are summed out first.
    a, sa = _einsum_single(sa, "".join(c for c in dict.fromkeys(sa) if c in sb or c in output),
                           a), "".join(c for c in dict.fromkeys(sa) if c in sb or c in output)
    b, sb = _einsum_single(sb, "".join(c for c in dict.fromkeys(sb) if c in sa or c in output),
                           b), "".join(c for c in dict.fromkeys(sb) if c in sa or c in output)
    batch = [c for c in sa if c in sb and c in output]
    contract = [c for c in sa if c in sb and c not in output]
    dn = ((tuple(sa.index(c) for c in contract), tuple(sb.index(c) for c in contract)),
          (tuple(sa.index(c) for c in batch), tuple(sb.index(c) for c in batch)))
    out = lax.dot_general(a, b, dn)
    out_spec = "".join(batch) + "".join(c for c in sa if c not in sb) + "".join(
        c for c in sb if c not in sa)
    return _einsum_single(out_spec, output, out)


def _einsum_single(spec: str, output: str, x):
    """One-operand einsum: take diagonals of repeated letters, sum letters not in
    ``output`` and transpose to its order."""
    for c in spec:
        while spec.count(c) > 1:
            first = spec.index(c)
            second = spec.index(c, first + 1)
            x = _diagonal(x, first, second)
            spec = spec[:second] + spec[second + 1:]
    missing = [c for c in output if c not in spec]
    if missing:
        raise ValueError(f"einsum: output index {missing[0]!r} does not occur in the inputs")
    summed = tuple(i for i, c in enumerate(spec) if c not in output)
    x = lax.reduce_sum(x, summed) if summed else x
    kept = [c for c in spec if c in output]
    return shape_ops.transpose_axes(x, [kept.index(c) for c in output])


def _diagonal(x, axis1: int, axis2: int):
    """The diagonal over ``axis1 < axis2`` (of equal size n), left at ``axis1``: the two
    axes are merged into one of size n * n and every (n + 1)-th element is kept."""
    shape = shape_of(x)
    n = shape[axis1]
    if shape[axis2] != n:
        raise ValueError(f"einsum: a repeated index labels axes of sizes {n} and "
                         f"{shape[axis2]} (operand shape {shape})")
    x = shape_ops.moveaxis(x, axis2, axis1 + 1)
    merged = shape[:axis1] + (n * n,) + tuple(d for i, d in enumerate(shape)
                                              if i > axis1 and i != axis2)
    x = shape_ops.reshape(x, merged)
    strides = [1] * len(merged)
    strides[axis1] = n + 1
    return lax.slice(x, [0] * len(merged), merged, strides)


# -- 1-D convolution and correlation -------------------------------------------------------


def _vectors(name: str, a, v):
    a, v = arg(a), arg(v)
    for what, x in (("a", a), ("v", v)):
        shape = shape_of(x)
        if len(shape) != 1 or shape[0] == 0:
            raise ValueError(f"{name}: {what} must be a non-empty 1-D array, got shape {shape}")
    dtype = np.result_type(get_aval(a).dtype, get_aval(v).dtype)
    return tuple(x if get_aval(x).dtype == dtype else lax.convert_element_type(x, dtype)
                 for x in (a, v))


def _shifted_rows(a, rows: int, length: int):
    """The matrix ``M[i, c] = a[c - i]`` (zero outside ``a``) of shape ``(rows, length)``,
    for ``length = len(a) + rows - 1``, in a fixed number of primitives: ``a`` padded
    with zeros to ``length + 1`` and repeated ``rows`` times reads, in rows of
    ``length``, one place further back on each row."""
    n = shape_of(a)[0]
    padded = lax.pad(a, get_aval(a).dtype.type(0), [(0, length + 1 - n, 0)])
    tiled = shape_ops.reshape(shape_ops.broadcast_in_dim(padded, (rows, length + 1), (1,)),
                              (rows * (length + 1),))
    return shape_ops.reshape(lax.slice(tiled, (0,), (rows * length,)), (rows, length))


def _convolve(name: str, a, v, mode: str, mirrored: bool = False):
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"{name}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    n, m = shape_of(a)[0], shape_of(v)[0]
    long, short = (a, v) if n >= m else (v, a)  # convolution commutes: the short one rows
    rows, length = min(n, m), n + m - 1
    full = lax.dot_general(short, _shifted_rows(long, rows, length), (((0,), (0,)), ((), ())))
    if mode == "full":
        return full
    # "same" centres the window; with even overlap NumPy's correlate, which swaps a longer
    # v to the front and reverses, leans the other way (``mirrored``).
    same_start = rows // 2 if mirrored else (rows - 1) // 2
    start, size = (same_start, max(n, m)) if mode == "same" else (rows - 1, abs(n - m) + 1)
    return lax.slice(full, (start,), (start + size,))


def convolve(a, v, mode: str = "full"):
    """The discrete linear convolution of two 1-D arrays, ``out[k] = sum_i a[i] v[k - i]``;
    ``mode`` keeps all ``len(a) + len(v) - 1`` values ("full"), the central
    ``max(len(a), len(v))`` ("same") or those where the arrays overlap fully ("valid").

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    array([0. , 1. , 2.5, 4. , 1.5])
    """
    a, v = _vectors("convolve", a, v)
    return _convolve("convolve", a, v, mode)


def correlate(a, v, mode: str = "valid"):
    """The cross-correlation of two 1-D arrays, ``out[k] = sum_n a[n + k] conj(v[n])``
    (NumPy's definition), with ``convolve``'s modes ("valid" by default).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]), "full")
    array([0.5, 2. , 3.5, 3. , 0. ])
    """
    a, v = _vectors("correlate", a, v)
    if get_aval(v).dtype.kind == "c":
        v = conj(v)
    return _convolve("correlate", a, shape_ops.rev(v, (0,)), mode,
                     mirrored=shape_of(v)[0] > shape_of(a)[0])
