"""Contractions: sums of products over paired axes (``matmul``, ``dot``, ``tensordot``,
``einsum``, ...), each lowered to ``lax.dot_general``.

A new product of arrays goes here.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from functrans import lax
from functrans.core import get_aval
from functrans.numpy._elementwise import conj
from functrans.numpy._shape import broadcast_arrays, moveaxis, ravel, stack
from functrans.numpy._util import arg, shape_of
from functrans.primitives import shape as shape_ops

__all__ = ["matmul", "dot", "vdot", "inner", "outer", "tensordot", "einsum", "convolve",
           "correlate", "einsum_path", "matvec", "vecmat", "vecdot", "cross"]


def check_precision(name: str, precision) -> None:
    """``precision`` as JAX takes it (None, a ``lax.Precision`` or its name, or a pair of
    them); NumPy and CuPy compute at the operands' precision, so it changes nothing."""
    for p in (precision if isinstance(precision, (tuple, list)) else (precision,)):
        if p is not None and not isinstance(p, lax.Precision):
            try:
                lax.Precision(p)
            except ValueError:
                raise ValueError(f"{name}: unknown precision {p!r}; use None, a "
                                 "lax.Precision or one of 'default', 'high', 'highest', "
                                 "'bfloat16', 'tensorfloat32', 'float32'") from None


def preferred_operands(name: str, a, b, precision, preferred_element_type):
    """``a`` and ``b`` converted to ``preferred_element_type`` where that is a safe cast,
    so that their products accumulate in it (int8 operands summed in int32, as in JAX)."""
    check_precision(name, precision)
    if preferred_element_type is None:
        return a, b
    dtype = np.dtype(preferred_element_type)
    return tuple(x if get_aval(x).dtype == dtype or not np.can_cast(get_aval(x).dtype, dtype)
                 else lax.convert_element_type(x, dtype) for x in (a, b))


def preferred_result(out, preferred_element_type):
    if preferred_element_type is None or get_aval(out).dtype == preferred_element_type:
        return out
    return lax.convert_element_type(out, preferred_element_type)


def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """Matrix product with NumPy's ``@`` semantics (1-D operands, broadcast batch axes).
    ``precision`` (JAX's) is accepted and changes nothing; ``preferred_element_type`` is
    the result's dtype (operands that convert to it safely are multiplied in it).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.matmul(fnp.asarray([[1, 2], [3, 4]]), fnp.asarray([[1, 0], [0, 2]]))
    array([[1, 4],
           [3, 8]])
    >>> fnp.matmul(np.full((1, 2), 100, np.int8), np.ones((2, 1), np.int8),
    ...            preferred_element_type=np.int32, precision="highest")
    array([[200]], dtype=int32)
    """
    del out_sharding
    a, b = preferred_operands("matmul", arg(a), arg(b), precision, preferred_element_type)
    return preferred_result(_matmul(a, b), preferred_element_type)


def _matmul(a, b):
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


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """NumPy's ``dot``: a sum product over the last axis of ``a`` and the second-to-last of
    ``b`` (the last if ``b`` is 1-D); scalars multiply.  ``precision`` and
    ``preferred_element_type`` as in ``matmul``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.dot(fnp.asarray([[1, 2], [3, 4]]), fnp.asarray([1, 1]))
    array([3, 7])
    >>> fnp.dot(np.ones(2, np.float32), np.ones(2, np.float32), preferred_element_type=np.float64)
    array(2.)
    """
    del out_sharding
    a, b = preferred_operands("dot", arg(a), arg(b), precision, preferred_element_type)
    a_nd, b_nd = len(shape_of(a)), len(shape_of(b))
    if a_nd == 0 or b_nd == 0:
        return preferred_result(lax.mul(a, b), preferred_element_type)
    contract_b = 0 if b_nd == 1 else b_nd - 2
    return preferred_result(lax.dot_general(a, b, (((a_nd - 1,), (contract_b,)), ((), ()))),
                             preferred_element_type)


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """Dot product of flattened arrays, conjugating the first (``precision`` and
    ``preferred_element_type`` as in ``matmul``).

    >>> import functrans.numpy as fnp
    >>> fnp.vdot(fnp.asarray([1j, 2.0]), fnp.asarray([1j, 1.0]), precision="float32")
    array(3.+0.j)
    """
    return dot(ravel(conj(a)), ravel(b), precision=precision,
               preferred_element_type=preferred_element_type)


def inner(a, b, *, precision=None, preferred_element_type=None):
    """Sum products over the last axes of ``a`` and ``b`` (``precision`` and
    ``preferred_element_type`` as in ``matmul``).

    >>> import functrans.numpy as fnp
    >>> fnp.inner(fnp.asarray([1.0, 2.0]), fnp.asarray([[1.0, 0.0], [3.0, 4.0]]))
    array([ 1., 11.])
    """
    a, b = preferred_operands("inner", arg(a), arg(b), precision, preferred_element_type)
    a_nd, b_nd = len(shape_of(a)), len(shape_of(b))
    if a_nd == 0 or b_nd == 0:
        return preferred_result(lax.mul(a, b), preferred_element_type)
    return preferred_result(lax.dot_general(a, b, (((a_nd - 1,), (b_nd - 1,)), ((), ()))),
                             preferred_element_type)


def outer(a, b):
    """The outer product ``a[i] * b[j]`` of the flattened ``a`` and ``b``.

    >>> import functrans.numpy as fnp
    >>> fnp.outer(fnp.asarray([1, 2]), fnp.asarray([1, 10, 100]))
    array([[  1,  10, 100],
           [  2,  20, 200]])
    """
    a = ravel(a)
    return lax.mul(shape_ops.reshape(a, (get_aval(a).size, 1)), ravel(b))


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None,
              out_sharding=None):
    """Sum products over the given axes (an int: the last ``axes`` of ``a`` and the first of
    ``b``; or a pair of axis sequences); ``precision`` and ``preferred_element_type`` as in
    ``matmul``.

    >>> import functrans.numpy as fnp
    >>> fnp.tensordot(fnp.ones((2, 3)), fnp.ones((3, 4)), axes=1).shape
    (2, 4)
    >>> fnp.tensordot(fnp.ones((2, 3)), fnp.ones((2, 3)))
    array(6.)
    """
    del out_sharding
    a, b = preferred_operands("tensordot", arg(a), arg(b), precision, preferred_element_type)
    a_nd, b_nd = len(shape_of(a)), len(shape_of(b))
    if isinstance(axes, (int, np.integer)):
        ca, cb = tuple(range(a_nd - axes, a_nd)), tuple(range(axes))
    else:
        ax_a, ax_b = axes
        ca = (ax_a,) if isinstance(ax_a, int) else tuple(ax_a)
        cb = (ax_b,) if isinstance(ax_b, int) else tuple(ax_b)
        ca = tuple(i % a_nd for i in ca)
        cb = tuple(i % b_nd for i in cb)
    return preferred_result(lax.dot_general(a, b, ((ca, cb), ((), ()))),
                             preferred_element_type)


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None):
    """Einstein summation, in every form NumPy accepts: explicit (``'ij,jk->ik'``) or
    implicit output (``'ij,jk'``: the labels used once, sorted), ellipses for broadcast
    axes (``'...ij,...jk->...ik'``; left out of the output, as in ``'...i->i'``, they are
    summed, as in JAX), repeated labels in one operand for diagonals
    (``'ii->i'``), and the sublist form (``einsum(a, [0, 1], b, [1, 2], [0, 2])``).

    Lowered to diagonals, sums, transposes and one ``dot_general`` per pair of operands, in
    the order NumPy's ``einsum_path`` picks for ``optimize`` (``'auto'``, ``True`` and
    ``'greedy'`` alike; ``'optimal'``; ``False``: left to right; or an explicit path).
    ``precision`` is accepted and ignored (NumPy computes at the operands' precision);
    ``preferred_element_type`` is the dtype of the result.

    >>> import numpy as np, functrans.numpy as fnp
    >>> a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    >>> fnp.einsum("ij,jk->ik", a, b)[0]
    array([20., 23., 26., 29.])
    >>> fnp.einsum(a, [0, 1], b, [1, 2], [0, 2])[1, 0]
    array(56.)
    >>> fnp.einsum("ii", np.eye(3))
    array(3.)
    """
    if out is not None:
        raise NotImplementedError("einsum: out= is not supported (arrays are not written in "
                                  "place); use the returned array")
    check_precision("einsum", precision)
    inputs, output, operands = _einsum_parse("einsum", subscripts, operands)
    dtype = np.result_type(*[get_aval(x).dtype for x in operands])
    if preferred_element_type is not None and np.can_cast(dtype, preferred_element_type):
        dtype = np.dtype(preferred_element_type)  # products accumulate in it
    operands = [x if get_aval(x).dtype == dtype else lax.convert_element_type(x, dtype)
                for x in operands]
    sizes = _einsum_sizes(inputs, operands)
    path = _einsum_order(inputs, output, operands, optimize)
    # Each operand first loses its repeated labels and the labels no one else needs.
    terms = []
    for k, (labels, x) in enumerate(zip(inputs, operands)):
        others = set(output).union(*[set(s) for j, s in enumerate(inputs) if j != k])
        terms.append(_einsum_reduce(labels, [c for c in dict.fromkeys(labels) if c in others],
                                    x, sizes))
    for group in path:
        picked = [terms[i] for i in group]
        terms = [t for i, t in enumerate(terms) if i not in group]
        rest = set(output).union(*[set(labels) for labels, _ in terms])
        combined = picked[0]
        for k, term in enumerate(picked[1:], 2):
            keep = rest.union(*[set(labels) for labels, _ in picked[k:]])
            combined = _einsum_pair(combined, term, keep, sizes)
        terms.append(combined)
    (labels, result), = terms
    _, result = _einsum_reduce(labels, output, result, sizes)
    if preferred_element_type is not None:
        result = lax.convert_element_type(result, preferred_element_type)
    return result


def einsum_path(subscripts, /, *operands, optimize="auto"):
    """NumPy's ``einsum_path`` on the operands' shapes: the contraction order ``einsum``
    follows for ``optimize`` and a printable report.  Tracers work too (only their shapes
    are read).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.einsum_path("ij,jk,kl->il", np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5)))[0]
    ['einsum_path', (1, 2), (0, 1)]
    """
    _einsum_parse("einsum_path", subscripts, operands)  # the same errors as einsum
    return np.einsum_path(*_with_stand_ins((subscripts,) + operands),
                          optimize=_numpy_optimize("einsum_path", optimize))


def _with_stand_ins(args):
    """``args`` with arrays and tracers replaced by NumPy arrays of their shapes (strides 0,
    no memory), for NumPy's path finder."""
    out = []
    for x in args:
        if isinstance(x, str) or (isinstance(x, (list, tuple)) and
                                  all(i is Ellipsis or isinstance(i, (int, np.integer))
                                      for i in x)):
            out.append(x)
        else:
            aval = get_aval(arg(x))
            out.append(np.broadcast_to(np.zeros((), aval.dtype), aval.shape))
    return out


def _numpy_optimize(name: str, optimize):
    if optimize in ("auto", True):
        return "greedy"
    if optimize is False or optimize in ("greedy", "optimal"):
        return optimize
    if isinstance(optimize, (list, tuple)) and optimize and optimize[0] == "einsum_path":
        return list(optimize)
    raise ValueError(f"{name}: optimize must be True, False, 'auto', 'greedy', 'optimal' or "
                     f"a path ['einsum_path', (i, j), ...], got {optimize!r}")


def _einsum_order(inputs, output, operands, optimize):
    """The groups of operand positions to contract in turn (each result goes last)."""
    n = len(operands)
    optimize = _numpy_optimize("einsum", optimize)
    if n == 1:
        return []
    if optimize is False:
        return [(0, 1)] * (n - 1)
    letters = {}
    for c in [c for labels in inputs for c in labels]:
        letters.setdefault(c, _LETTERS[len(letters)])
    spec = ",".join("".join(letters[c] for c in labels) for labels in inputs)
    spec += "->" + "".join(letters[c] for c in output)
    stand_ins = [np.broadcast_to(np.zeros(()), shape_of(x)) for x in operands]
    path = np.einsum_path(spec, *stand_ins, optimize=optimize)[0]
    return [tuple(sorted(g)) for g in path[1:]]


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum_parse(name: str, subscripts, operands):
    """The labels of each operand and of the output (letters, sublist ints, or
    ``("...", i)`` for the i-th broadcast axis), and the operands as arrays."""
    spec: Any  # a string, then lists of labels
    c: Any  # a label
    if isinstance(subscripts, str):
        operands = [arg(x) for x in operands]
        spec = subscripts.replace(" ", "")
        if "->" in spec:
            spec_in, spec_out = spec.split("->", 1)
        else:
            spec_in, spec_out = spec, None
        specs = [_split_letters(name, s) for s in spec_in.split(",")]
        out_spec = None if spec_out is None else _split_letters(name, spec_out)
    else:
        args = (subscripts,) + tuple(operands)
        n = len(args) // 2
        operands = [arg(x) for x in args[0:2 * n:2]]
        specs = [_sublist(name, s) for s in args[1:2 * n:2]]
        out_spec = _sublist(name, args[-1]) if len(args) % 2 else None
    if len(specs) != len(operands):
        raise ValueError(f"{name}: {len(specs)} operand subscripts for {len(operands)} "
                         "operands")
    if not operands:
        raise ValueError(f"{name}: needs at least one operand")
    broadcast_ndim = 0
    for spec, x in zip(specs, operands):
        named = len([c for c in spec if c is not Ellipsis])
        nd = len(shape_of(x))
        if (Ellipsis in spec and nd < named) or (Ellipsis not in spec and nd != named):
            raise ValueError(f"{name}: subscripts {_show(spec)} do not match an operand of "
                             f"shape {shape_of(x)}")
        if Ellipsis in spec:
            broadcast_ndim = max(broadcast_ndim, nd - named)
    ellipsis = [("...", i) for i in range(broadcast_ndim)]
    inputs = []
    for spec, x in zip(specs, operands):
        own = len(shape_of(x)) - len([c for c in spec if c is not Ellipsis])
        labels: list = []
        for c in spec:
            labels += ellipsis[broadcast_ndim - own:] if c is Ellipsis else [c]
        inputs.append(labels)
    if out_spec is None:
        counts: dict = {}
        for c in [c for labels in inputs for c in labels if not isinstance(c, tuple)]:
            counts[c] = counts.get(c, 0) + 1
        output = ellipsis + sorted(c for c, n in counts.items() if n == 1)
    else:
        # Broadcast axes left out of the output are summed, as in JAX (NumPy refuses).
        output = []
        for c in out_spec:
            output += ellipsis if c is Ellipsis else [c]
        seen = set()
        for c in output:
            if c in seen:
                raise ValueError(f"{name}: the output subscript {c!r} appears more than once")
            seen.add(c)
            if not any(c in labels for labels in inputs):
                raise ValueError(f"{name}: the output subscript {c!r} does not occur in the "
                                 "inputs")
    return inputs, output, operands


def _split_letters(name: str, spec: str) -> list:
    labels: list = []
    rest = spec
    while rest:
        if rest.startswith("..."):
            labels.append(Ellipsis)
            rest = rest[3:]
        elif rest[0].isalpha() and rest[0].isascii():
            labels.append(rest[0])
            rest = rest[1:]
        else:
            raise ValueError(f"{name}: invalid subscript character {rest[0]!r} in {spec!r} "
                             "(use letters a-z, A-Z and '...')")
    if labels.count(Ellipsis) > 1:
        raise ValueError(f"{name}: more than one '...' in {spec!r}")
    return labels


def _sublist(name: str, spec) -> list:
    labels = []
    for c in spec:
        if c is Ellipsis:
            labels.append(Ellipsis)
        elif isinstance(c, (int, np.integer)) and 0 <= c < len(_LETTERS):
            labels.append(int(c))
        else:
            raise ValueError(f"{name}: sublist subscripts must be integers in [0, 52) or "
                             f"Ellipsis, got {c!r}")
    if labels.count(Ellipsis) > 1:
        raise ValueError(f"{name}: more than one Ellipsis in the sublist {spec!r}")
    return labels


def _show(spec) -> str:
    return "".join("..." if c is Ellipsis else str(c) for c in spec)


def _einsum_sizes(inputs, operands) -> dict:
    """Label -> size; a label of size 1 somewhere broadcasts against a larger size."""
    sizes: dict = {}
    for labels, x in zip(inputs, operands):
        for c, n in zip(labels, shape_of(x)):
            if sizes.get(c, 1) not in (1, n) and n != 1:
                what = "broadcast axes" if isinstance(c, tuple) else f"subscript {c!r}"
                raise ValueError(f"einsum: {what} label axes of sizes {sizes[c]} and {n}")
            if sizes.get(c, 1) == 1:  # a size-1 axis takes any size, 0 included
                sizes[c] = n
    return sizes


def _einsum_reduce(labels, keep, x, sizes):
    """One operand with labels ``labels``: diagonals of repeated labels taken, labels not
    in ``keep`` summed, size-1 axes broadcast to their label's size, and the axes put in
    the order of ``keep``.  Returns ``(keep, array)``."""
    labels = list(labels)
    for c in list(dict.fromkeys(labels)):
        while labels.count(c) > 1:
            first = labels.index(c)
            second = labels.index(c, first + 1)
            x = _diagonal(x, first, second)
            del labels[second]
    summed = tuple(i for i, c in enumerate(labels) if c not in keep)
    if summed:
        x = lax.reduce_sum(x, summed)
        labels = [c for c in labels if c in keep]
    keep = [c for c in keep if c in labels]
    x = shape_ops.transpose_axes(x, [labels.index(c) for c in keep])
    target = tuple(sizes[c] for c in keep)
    if shape_of(x) != target:
        x = shape_ops.broadcast_to(x, target)
    return keep, x


def _einsum_pair(a_term, b_term, keep, sizes):
    """Two operands (labels, array) contracted by one dot_general: labels in both and in
    ``keep`` are batch axes, labels in both and not kept are summed."""
    (la, a), (lb, b) = a_term, b_term
    la, a = _einsum_reduce(la, [c for c in la if c in keep or c in lb], a, sizes)
    lb, b = _einsum_reduce(lb, [c for c in lb if c in keep or c in la], b, sizes)
    batch = [c for c in la if c in lb and c in keep]
    contract = [c for c in la if c in lb and c not in keep]
    dims = ((tuple(la.index(c) for c in contract), tuple(lb.index(c) for c in contract)),
            (tuple(la.index(c) for c in batch), tuple(lb.index(c) for c in batch)))
    out = lax.dot_general(a, b, dims)
    return batch + [c for c in la if c not in lb] + [c for c in lb if c not in la], out


def _diagonal(x, axis1: int, axis2: int):
    """The diagonal over ``axis1 < axis2`` (of equal size n), left at ``axis1``: the two
    axes are merged into one of size n * n and every (n + 1)-th element is kept."""
    shape = shape_of(x)
    n = shape[axis1]
    if shape[axis2] != n:
        raise ValueError(f"einsum: a repeated subscript labels axes of sizes {n} and "
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


def convolve(a, v, mode: str = "full", *, precision=None, preferred_element_type=None):
    """The discrete linear convolution of two 1-D arrays, ``out[k] = sum_i a[i] v[k - i]``;
    ``mode`` keeps all ``len(a) + len(v) - 1`` values ("full"), the central
    ``max(len(a), len(v))`` ("same") or those where the arrays overlap fully ("valid").

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    array([0. , 1. , 2.5, 4. , 1.5])
    """
    a, v = _vectors("convolve", a, v)
    a, v = preferred_operands("convolve", a, v, precision, preferred_element_type)
    return preferred_result(_convolve("convolve", a, v, mode), preferred_element_type)


def correlate(a, v, mode: str = "valid", *, precision=None, preferred_element_type=None):
    """The cross-correlation of two 1-D arrays, ``out[k] = sum_n a[n + k] conj(v[n])``
    (NumPy's definition), with ``convolve``'s modes ("valid" by default).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]), "full")
    array([0.5, 2. , 3.5, 3. , 0. ])
    """
    a, v = _vectors("correlate", a, v)
    a, v = preferred_operands("correlate", a, v, precision, preferred_element_type)
    if get_aval(v).dtype.kind == "c":
        v = conj(v)
    return preferred_result(_convolve("correlate", a, shape_ops.rev(v, (0,)), mode,
                                       mirrored=shape_of(v)[0] > shape_of(a)[0]),
                             preferred_element_type)


def matvec(x1, x2, /):
    """Matrix-vector products over broadcast stacks: ``x1`` of shape ``(..., m, n)`` times
    ``x2`` of shape ``(..., n)`` gives ``(..., m)``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.matvec(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1.0, 1.0]))
    array([3., 7.])
    """
    x1, x2 = arg(x1), arg(x2)
    _need_axes("matvec", x1, 2, "x1")
    _need_axes("matvec", x2, 1, "x2")
    return einsum("...ij,...j->...i", x1, x2)


def vecmat(x1, x2, /):
    """Vector-matrix products over broadcast stacks, conjugating the vector: ``conj(x1)``
    of shape ``(..., n)`` times ``x2`` of shape ``(..., n, m)`` gives ``(..., m)``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.vecmat(np.array([1.0, 1.0]), np.array([[1.0, 2.0], [3.0, 4.0]]))
    array([4., 6.])
    """
    x1, x2 = arg(x1), arg(x2)
    _need_axes("vecmat", x1, 1, "x1")
    _need_axes("vecmat", x2, 2, "x2")
    return einsum("...i,...ij->...j", conj(x1), x2)


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """Dot products of the vectors along ``axis`` of the broadcast ``x1`` and ``x2``,
    conjugating ``x1``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.vecdot(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1.0, 1.0]))
    array([3., 7.])
    """
    x1, x2 = arg(x1), arg(x2)
    _need_axes("vecdot", x1, 1, "x1")
    _need_axes("vecdot", x2, 1, "x2")
    nd = max(len(shape_of(x1)), len(shape_of(x2)))
    if not -nd <= axis < nd:
        raise ValueError(f"vecdot: axis {axis} is out of range for operands of shapes "
                         f"{shape_of(x1)} and {shape_of(x2)}")
    axis = axis - nd if axis >= 0 else axis
    x1, x2 = (shape_ops.moveaxis(shape_ops.reshape(x, (1,) * (nd - len(shape_of(x)))
                                                   + shape_of(x)), nd + axis, nd - 1)
              for x in (x1, x2))
    if shape_of(x1)[-1] != shape_of(x2)[-1]:
        raise ValueError(f"vecdot: the vectors along axis {axis} have sizes "
                         f"{shape_of(x1)[-1]} and {shape_of(x2)[-1]}")
    return einsum("...i,...i->...", conj(x1), x2,
                  preferred_element_type=preferred_element_type)


def _need_axes(name: str, x, n: int, what: str) -> None:
    if len(shape_of(x)) < n:
        raise ValueError(f"{name}: {what} needs at least {n} axes, got shape {shape_of(x)}")


def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None):
    """The cross product of 2- or 3-element vectors along ``axisa``/``axisb`` (``axis`` sets
    all three axes), as ``jax.numpy.cross`` and ``numpy.cross`` before NumPy 2.5 (which
    refuses 2-vectors): two 2-vectors give the z component alone; a 2-vector with a
    3-vector is taken as having z = 0.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.cross(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
    array([0., 0., 1.])
    >>> float(fnp.cross(np.array([1.0, 2.0]), np.array([3.0, 4.0])))
    -2.0
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = moveaxis(arg(a), axisa, -1), moveaxis(arg(b), axisb, -1)
    na, nb = shape_of(a)[-1], shape_of(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(f"cross: the vectors must have 2 or 3 elements along the axis, got "
                         f"{na} and {nb}")
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    z = a0 * b1 - a1 * b0
    if na == 2 and nb == 2:
        return z
    if na == 3 and nb == 3:
        a2, b2 = a[..., 2], b[..., 2]
        x, y = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2
    elif na == 3:  # b has z = 0
        a2 = a[..., 2]
        x, y = -(a2 * b1), a2 * b0
    else:  # a has z = 0
        b2 = b[..., 2]
        x, y = a1 * b2, -(a0 * b2)
    return moveaxis(stack(broadcast_arrays(x, y, z), axis=-1), -1, axisc)
