"""Functions that apply functions: ``vectorize`` (a scalar or core-shaped function made to
broadcast over leading axes, built on ``vmap`` as JAX's is), ``apply_along_axis`` and
``apply_over_axes``.

The function applied is traced, not looped over in Python, so the results differentiate
and batch like everything else.  A new higher-order NumPy function goes here.
"""
from __future__ import annotations

import functools
import math
import re

import numpy as np

from functrans.api import vmap
from functrans.numpy._shape import (broadcast_to, expand_dims, moveaxis, reshape,
                                    transpose)
from functrans.numpy._util import arg, shape_of, static_int
from functrans.primitives.shape import normalize_axis

__all__ = ["vectorize", "apply_along_axis", "apply_over_axes"]

_CORE = r"\((?:\w+(?:,\w+)*)?\)"
_SIGNATURE = re.compile(rf"^{_CORE}(?:,{_CORE})*->{_CORE}(?:,{_CORE})*$")


def _parse_signature(signature: str):
    """``'(m,n),(n)->(m)'`` as ``([('m', 'n'), ('n',)], [('m',)])``."""
    signature = signature.replace(" ", "")
    if not _SIGNATURE.match(signature):
        raise ValueError(f"vectorize: signature {signature!r} is not of the form "
                         "'(m,n),(n)->(m)'")
    ins, outs = signature.split("->")
    parse = lambda side: [tuple(d for d in core.split(",") if d)  # noqa: E731
                          for core in re.findall(r"\((.*?)\)", side)]
    return parse(ins), parse(outs)


def _bind_core(sizes: dict, core: tuple, shape: tuple, what: str) -> None:
    if len(shape) < len(core):
        raise ValueError(f"vectorize: {what} needs at least {len(core)} axes for its core "
                         f"dimensions {core}, got shape {shape}")
    for name, n in zip(core, shape[len(shape) - len(core):]):
        if sizes.setdefault(name, n) != n:
            raise ValueError(f"vectorize: core dimension {name!r} has inconsistent sizes "
                             f"{sizes[name]} and {n} ({what} of shape {shape})")


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """``pyfunc`` made to broadcast over the leading axes of its arguments, like NumPy's
    ``vectorize`` but traced once with ``vmap`` rather than called per element.

    Without ``signature``, ``pyfunc`` takes and returns scalars; with one such as
    ``'(m,n),(n)->(m)'`` each argument's trailing axes are its core dimensions and the
    leading ones broadcast.  ``excluded``: positions or keyword names passed through
    unchanged (not broadcast).

    >>> import numpy as np, functrans.numpy as fnp
    >>> clipped = fnp.vectorize(lambda x, t: fnp.where(x > t, t, x))
    >>> clipped(np.array([[1.0, 5.0], [3.0, 0.0]]), np.array([2.0, 4.0]))
    array([[1., 4.],
           [2., 0.]])
    >>> matvec = fnp.vectorize(fnp.dot, signature="(m,n),(n)->(m)")
    >>> matvec(np.ones((4, 2, 3)), np.ones(3)).shape
    (4, 2)
    """
    if not callable(pyfunc):
        raise TypeError(f"vectorize: pyfunc must be callable, got {pyfunc!r}")
    excluded = frozenset(excluded)
    cores = None if signature is None else _parse_signature(signature)

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        mapped = [i for i in range(len(args)) if i not in excluded]
        mapped_kw = [k for k in kwargs if k not in excluded]
        values = [arg(args[i]) for i in mapped] + [arg(kwargs[k]) for k in mapped_kw]
        in_cores = [()] * len(values) if cores is None else cores[0]
        if len(in_cores) != len(values):
            raise TypeError(f"vectorize: the signature {signature!r} has {len(in_cores)} "
                            f"inputs, but {len(values)} arguments are broadcast (exclude "
                            "the others with excluded=)")
        sizes: dict = {}
        for k, (core, x) in enumerate(zip(in_cores, values)):
            _bind_core(sizes, core, shape_of(x), f"argument {k}")
        loops = [shape_of(x)[:len(shape_of(x)) - len(core)] for core, x in zip(in_cores,
                                                                               values)]
        try:
            loop = np.broadcast_shapes(*loops)
        except ValueError:
            raise ValueError(f"vectorize: the loop shapes {loops} of the arguments (their "
                             "shapes without core dimensions) do not broadcast") from None
        count = math.prod(loop)
        flat = [reshape(broadcast_to(x, loop + shape_of(x)[len(shape_of(x)) - len(core):]),
                        (count,) + shape_of(x)[len(shape_of(x)) - len(core):])
                for core, x in zip(in_cores, values)]

        def call(*inner):
            full = list(args)
            for i, v in zip(mapped, inner):
                full[i] = v
            named = dict(kwargs)
            named.update(zip(mapped_kw, inner[len(mapped):]))
            return pyfunc(*full, **named)

        out = vmap(call)(*flat)
        single = not isinstance(out, tuple)
        outs = [out] if single else list(out)
        if cores is not None:
            if (len(cores[1]) == 1) != single or len(outs) != len(cores[1]):
                raise ValueError(f"vectorize: the signature {signature!r} promises "
                                 f"{len(cores[1])} outputs, pyfunc returned "
                                 f"{'one' if single else len(outs)}")
            for k, (core, y) in enumerate(zip(cores[1], outs)):
                _bind_core(sizes, core, shape_of(y)[1:], f"output {k}")
                if len(shape_of(y)) - 1 != len(core):
                    raise ValueError(f"vectorize: output {k} has shape {shape_of(y)[1:]}, "
                                     f"not the core dimensions {core} of the signature")
        outs = [reshape(y, loop + shape_of(y)[1:]) for y in outs]
        return outs[0] if single else tuple(outs)
    return wrapped


def apply_along_axis(func1d, axis: int, arr, *args, **kwargs):
    """``func1d(v, *args, **kwargs)`` for every 1-D slice ``v`` of ``arr`` along ``axis``
    (traced once, with ``vmap``); the axes of its result replace ``axis``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.apply_along_axis(lambda v: v[::-1] * 2, 1, np.array([[1.0, 2.0], [3.0, 4.0]]))
    array([[4., 2.],
           [8., 6.]])
    """
    arr = arg(arr)
    shape = shape_of(arr)
    axis = normalize_axis(static_int(axis, "apply_along_axis", "axis"), len(shape))
    loop = shape[:axis] + shape[axis + 1:]
    rows = reshape(moveaxis(arr, axis, -1), (math.prod(loop), shape[axis]))
    out = vmap(lambda v: func1d(v, *args, **kwargs))(rows)
    inner = shape_of(out)[1:]
    out = reshape(out, loop + inner)
    # The result's own axes go where `axis` was.
    order = (list(range(axis)) + list(range(len(loop), len(loop) + len(inner)))
             + list(range(axis, len(loop))))
    return transpose(out, order)


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied for each axis in turn, each result feeding the next; a
    result with one axis fewer gets it back (size one), so that the number of axes stays.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.apply_over_axes(fnp.sum, np.arange(6.0).reshape(2, 3), [0, 1])
    array([[15.]])
    """
    a = arg(a)
    for axis in ((axes,) if isinstance(axes, (int, np.integer)) else axes):
        nd = len(shape_of(a))
        axis = normalize_axis(static_int(axis, "apply_over_axes", "each axis"), nd)
        out = arg(func(a, axis))
        if len(shape_of(out)) == nd - 1:
            out = expand_dims(out, axis)
        elif len(shape_of(out)) != nd:
            raise ValueError(f"apply_over_axes: func must keep the number of axes or drop "
                             f"one; it turned shape {shape_of(a)} into {shape_of(out)}")
        a = out
    return a
