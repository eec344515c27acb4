"""Polynomials and calculus on samples: polynomial coefficients (``polyval``, ``polyfit``,
``polyder``, ``polymul``, ...; highest power first, as in NumPy), Vandermonde matrices,
and sampled functions (``interp``, ``gradient``, ``trapezoid``, ``unwrap``, ``ediff1d``).

Everything is composed from the other families, so derivatives and batching come with it.
A new polynomial or sampled-calculus function goes here.
"""
from __future__ import annotations

import math

import numpy as np

from functrans import backend, core, lax
from functrans.core import ConcretizationTypeError, Tracer
from functrans.numpy import linalg
from functrans.numpy._contractions import convolve, matmul
from functrans.numpy._creation import zeros_like
from functrans.numpy._elementwise import (absolute, add, conj, floor, greater, less,
                                          less_equal, logical_and, multiply, negative, power,
                                          sqrt, subtract, true_divide)
from functrans.numpy._indexing import take, where
from functrans.numpy._reductions import cumsum, diff, sum
from functrans.numpy._shape import (concatenate, expand_dims, moveaxis, pad_constant, ravel,
                                    reshape, stack)
from functrans.numpy._util import arg, dtype_of, promote_inexact, shape_of, static_int

__all__ = ["polyval", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint", "poly",
           "roots", "polyfit", "vander", "interp", "gradient", "trapezoid", "ediff1d", "unwrap"]


def _coefficients(name: str, p, what: str = "p"):
    p = arg(p)
    if len(shape_of(p)) != 1:
        raise ValueError(f"{name}: {what} must be a 1-D array of coefficients, got shape "
                         f"{shape_of(p)}")
    return p


def polyval(p, x, *, unroll: int = 16):
    """The polynomial with coefficients ``p`` (highest power first) at ``x``, by Horner's
    rule.  ``unroll`` (JAX's loop unrolling) is accepted; the loop is always unrolled.
    Coefficients with more axes (``p[k]`` of shape ``p.shape[1:]``) broadcast against
    ``x``, as in NumPy and JAX: the result has their broadcast shape.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.polyval(np.array([1.0, 0.0, -2.0]), np.array([0.0, 2.0]))
    array([-2.,  2.])
    >>> fnp.polyval(np.array([[1.0, 2.0], [0.0, 1.0]]), 3.0)  # 3 and 2 * 3 + 1
    array([3., 7.])
    """
    p, x = arg(p), arg(x)
    if not shape_of(p):
        raise ValueError("polyval: p must be an array of coefficients along its first axis, "
                         "got a scalar")
    result = multiply(x, 0) if not shape_of(p)[0] else zeros_like(multiply(x, p[0]))
    for k in range(shape_of(p)[0]):
        result = add(multiply(result, x), p[k])
    return result


def _aligned(name: str, a1, a2):
    """Both coefficient arrays padded with leading zeros to the longer length."""
    a1, a2 = _coefficients(name, a1, "a1"), _coefficients(name, a2, "a2")
    n = max(shape_of(a1)[0], shape_of(a2)[0])
    return [pad_constant(a, [(n - shape_of(a)[0], 0)]) for a in (a1, a2)]


def polyadd(a1, a2):
    """The sum of two polynomials (coefficients highest power first).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.polyadd(np.array([1.0, 2.0]), np.array([1.0, 0.0, 0.0]))
    array([1., 1., 2.])
    """
    return add(*_aligned("polyadd", a1, a2))


def polysub(a1, a2):
    """The difference of two polynomials (coefficients highest power first).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.polysub(np.array([1.0, 2.0]), np.array([1.0, 0.0, 0.0]))
    array([-1.,  1.,  2.])
    """
    return subtract(*_aligned("polysub", a1, a2))


def _trimmed(name: str, p):
    """``p`` without leading zeros; they decide the length, so ``p`` must be concrete."""
    if isinstance(p, Tracer):
        raise ConcretizationTypeError(f"{name}: trim_leading_zeros=True needs concrete "
                                      "coefficients (the output length depends on them)")
    nonzero = np.flatnonzero(np.asarray(backend.to_host(p)))
    start = int(nonzero[0]) if nonzero.size else shape_of(p)[0] - 1
    return p[start:]


def polymul(a1, a2, *, trim_leading_zeros: bool = False):
    """The product of two polynomials (the convolution of their coefficients).  As in
    JAX, leading zeros stay unless ``trim_leading_zeros`` (concrete inputs only).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.polymul(np.array([1.0, 1.0]), np.array([1.0, -1.0]))
    array([ 1.,  0., -1.])
    """
    a1, a2 = _coefficients("polymul", a1, "a1"), _coefficients("polymul", a2, "a2")
    if trim_leading_zeros:
        a1, a2 = _trimmed("polymul", a1), _trimmed("polymul", a2)
    return convolve(a1, a2)


def polydiv(u, v, *, trim_leading_zeros: bool = False):
    """Quotient and remainder of dividing polynomial ``u`` by ``v`` (long division).  As in
    JAX the remainder keeps ``u``'s length (leading zeros included) unless
    ``trim_leading_zeros`` (concrete inputs only); ``v[0]`` must be nonzero.

    >>> import numpy as np, functrans.numpy as fnp
    >>> q, r = fnp.polydiv(np.array([1.0, 0.0, -1.0]), np.array([1.0, 1.0]))
    >>> q, r
    (array([ 1., -1.]), array([0., 0., 0.]))
    """
    u = promote_inexact(_coefficients("polydiv", u, "u"))
    v = promote_inexact(_coefficients("polydiv", v, "v"))
    if trim_leading_zeros:
        u, v = _trimmed("polydiv", u), _trimmed("polydiv", v)
    m, n = shape_of(u)[0], shape_of(v)[0]
    if n == 0:
        raise ValueError("polydiv: the divisor v has no coefficients")
    remainder = [u[k] for k in range(m)]
    lead = v[0]
    quotient = []
    for k in range(max(m - n + 1, 0)):
        d = true_divide(remainder[k], lead)
        quotient.append(d)
        for j in range(n):
            remainder[k + j] = subtract(remainder[k + j], multiply(d, v[j]))
    if not quotient:
        quotient = [multiply(u[0], 0.0)]
    return stack(quotient), stack(remainder)


def polyder(p, m: int = 1):
    """The coefficients of the ``m``-th derivative of polynomial ``p``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.polyder(np.array([1.0, 1.0, 1.0, 1.0]), 2)
    array([6., 2.])
    """
    p = _coefficients("polyder", p)
    m = static_int(m, "polyder", "m")
    if m < 0:
        raise ValueError(f"polyder: the order m must be non-negative, got {m}")
    for _ in range(m):
        n = shape_of(p)[0]
        p = multiply(p[:max(n - 1, 0)], subtract(n - 1, lax.iota(dtype_of(p), max(n - 1, 0),
                                                               like=p)))
    return p


def polyint(p, m: int = 1, k=None):
    """The coefficients of the ``m``-th antiderivative of polynomial ``p``; the
    integration constants ``k`` (one scalar used ``m`` times, or ``m`` of them, the first
    for the first integration) are zero by default.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.polyint(np.array([3.0, 2.0, 1.0]), k=5.0)
    array([1., 1., 1., 5.])
    """
    p = promote_inexact(_coefficients("polyint", p))
    m = static_int(m, "polyint", "m")
    if m < 0:
        raise ValueError(f"polyint: the order m must be non-negative, got {m}")
    k = arg(0.0 if k is None else k)
    if shape_of(k) not in ((), (m,)):
        raise ValueError(f"polyint: k must be a scalar or have m = {m} entries, got shape "
                         f"{shape_of(k)}")
    for i in range(m):
        n = shape_of(p)[0]
        constant = k if not shape_of(k) else k[i]
        scaled = true_divide(p, subtract(n, lax.iota(dtype_of(p), n, like=p)))
        # The constant joins as `0 * scaled[:1] + k`: on the device of p, in its dtype.
        constant = (add(multiply(scaled[:1], 0), constant) if n else
                    reshape(constant, (1,)))
        p = concatenate([scaled, constant])
    return p


def poly(seq_of_zeros):
    """The coefficients (leading one first) of the monic polynomial with the given roots:
    a 1-D array of roots, or a square matrix, whose eigenvalues are the roots (then the
    coefficients are complex, as JAX returns them).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.poly(np.array([1.0, 2.0]))
    array([ 1., -3.,  2.])
    """
    roots = arg(seq_of_zeros)
    shape = shape_of(roots)
    if len(shape) == 2 and shape[0] == shape[1]:
        roots = linalg.eigvals(roots)
    elif len(shape) != 1:
        raise ValueError(f"poly: expected a 1-D array of roots or a square matrix, got shape "
                         f"{shape}")
    roots = promote_inexact(roots)
    if not shape_of(roots)[0]:
        return backend.ones((1,), dtype_of(roots),
                            like=None if isinstance(roots, Tracer) else roots)
    factors = [stack([add(multiply(roots[i], 0.0), 1.0), negative(roots[i])])
               for i in range(shape_of(roots)[0])]
    coefficients = factors[0]
    for factor in factors[1:]:
        coefficients = convolve(coefficients, factor)
    return coefficients


def roots(p, *, strip_zeros: bool = True):
    """The roots of the polynomial with coefficients ``p`` (leading first), as the
    eigenvalues of its companion matrix (complex, in LAPACK's order, as NumPy and JAX).
    ``strip_zeros`` drops leading zero coefficients and turns trailing ones into zero roots,
    which needs concrete coefficients; under a transform pass ``strip_zeros=False`` (a
    leading zero then gives nan roots, as in JAX).

    >>> import numpy as np, functrans.numpy as fnp
    >>> np.round(fnp.roots(np.array([1.0, -3.0, 2.0])), 12)
    array([2.+0.j, 1.+0.j])
    """
    p = promote_inexact(_coefficients("roots", p))
    trailing = 0
    if strip_zeros:
        if isinstance(p, Tracer):
            raise ConcretizationTypeError(
                "roots: strip_zeros=True needs concrete coefficients (how many zeros to "
                "strip depends on their values); pass strip_zeros=False under a transform")
        host = backend.to_host(p) if backend.is_device_array(p) else np.asarray(p)
        nonzero = np.flatnonzero(host)
        if not nonzero.size:
            return backend.zeros((0,), np.result_type(dtype_of(p), np.complex64), like=p)
        trailing = host.shape[0] - 1 - int(nonzero[-1])
        p = p[int(nonzero[0]):int(nonzero[-1]) + 1]
    n = shape_of(p)[0] - 1
    complex_dtype = np.result_type(dtype_of(p), np.complex64)
    if n < 1:
        found = backend.zeros((0,), complex_dtype, like=p)
    else:
        first_row = negative(p[1:]) / p[0]
        companion = concatenate([reshape(first_row, (1, n)),
                                 pad_constant(backend.eye(n - 1, dtype=dtype_of(p), like=p),
                                     ((0, 0), (0, 1)))], axis=0)
        found = linalg.eigvals(companion)
    return found if not trailing else concatenate(
        [found, backend.zeros((trailing,), complex_dtype, like=p)])


def vander(x, N: int | None = None, increasing: bool = False):  # noqa: N803 (NumPy's name)
    """The Vandermonde matrix of ``x``: column j is ``x ** (N - 1 - j)`` (``x ** j`` if
    ``increasing``), ``N = len(x)`` by default.  ``x ** 0`` is one, with derivative zero,
    also at ``x = 0``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.vander(np.array([1, 2, 3]), 3)
    array([[1, 1, 1],
           [4, 2, 1],
           [9, 3, 1]])
    """
    x = arg(x)
    if len(shape_of(x)) != 1:
        raise ValueError(f"vander: x must be 1-D, got shape {shape_of(x)}")
    N = shape_of(x)[0] if N is None else static_int(N, "vander", "N")  # noqa: N806
    if N < 0:
        raise ValueError(f"vander: N must be non-negative, got {N}")
    powers = range(N) if increasing else range(N - 1, -1, -1)
    columns = [power(x, k) for k in powers]
    if not columns:
        return reshape(multiply(x, 0), (shape_of(x)[0], 1))[:, :0]
    return stack(columns, axis=1)


def polyfit(x, y, deg: int, rcond=None, full: bool = False, w=None, cov: bool = False):
    """The least-squares polynomial of degree ``deg`` through the points ``(x, y)``
    (coefficients highest power first; one column per column of a 2-D ``y``), optionally
    weighted by ``w``.  Solved by QR of the column-scaled Vandermonde matrix, so the
    coefficients are differentiable in ``x``, ``y`` and ``w`` (which must have full column
    rank).  ``full=True`` adds the residuals, rank, singular values and ``rcond`` (the
    cutoff used for the rank), ``cov=True`` (or ``"unscaled"``) the coefficients'
    covariance, as NumPy.

    >>> import numpy as np, functrans.numpy as fnp
    >>> x = np.array([0.0, 1.0, 2.0, 3.0])
    >>> fnp.polyfit(x, 2 * x ** 2 + x - 1, 2).round(10)
    array([ 2.,  1., -1.])
    """
    deg = static_int(deg, "polyfit", "deg")
    if deg < 0:
        raise ValueError(f"polyfit: deg must be non-negative, got {deg}")
    x, y = promote_inexact(arg(x)), promote_inexact(arg(y))
    if len(shape_of(x)) != 1 or shape_of(x)[0] == 0:
        raise ValueError(f"polyfit: x must be a non-empty 1-D array, got shape {shape_of(x)}")
    if len(shape_of(y)) not in (1, 2) or shape_of(y)[0] != shape_of(x)[0]:
        raise ValueError(f"polyfit: y must have shape ({shape_of(x)[0]},) or "
                         f"({shape_of(x)[0]}, K) to match x, got {shape_of(y)}")
    if deg + 1 > shape_of(x)[0]:
        raise ValueError(f"polyfit: {shape_of(x)[0]} points cannot determine a polynomial of "
                         f"degree {deg}")
    lhs, rhs = vander(x, deg + 1), y
    if w is not None:
        w = arg(w)
        lhs = multiply(lhs, reshape(w, (-1, 1)))
        rhs = multiply(rhs, w if len(shape_of(y)) == 1 else reshape(w, (-1, 1)))
    scale = sqrt(sum(multiply(lhs, lhs), axis=0))
    scaled = true_divide(lhs, scale)
    q, r = linalg.qr(scaled)
    qt_rhs = matmul(moveaxis(conj(q), 0, 1), rhs)
    coefficients = linalg.solve(r, qt_rhs)
    vector = len(shape_of(y)) == 1
    coefficients = true_divide(coefficients, scale if vector else reshape(scale, (-1, 1)))
    if not (full or cov):
        return coefficients
    # The fit's diagnostics, as NumPy and JAX give them: from the least-squares solution
    # of the scaled system (residuals, rank and singular values) ...
    n, order = shape_of(x)[0], deg + 1
    if rcond is None:
        rcond = n * float(np.finfo(dtype_of(scaled)).eps)
    _, residuals, rank, singular = linalg.lstsq(scaled, rhs, rcond)
    if full:
        return coefficients, residuals, rank, singular, lax.convert_element_type(
            rcond, dtype_of(singular))
    # ... and the coefficients' covariance, (Aᵀ A)⁻¹ scaled by the residual variance.
    base = true_divide(linalg.inv(matmul(moveaxis(conj(scaled), 0, 1), scaled)),
                       multiply(reshape(scale, (-1, 1)), reshape(scale, (1, -1))))
    if cov == "unscaled":
        factor = lax.convert_element_type(1.0, dtype_of(base))
        return coefficients, base if vector else multiply(expand_dims(base, 2), factor)
    if n <= order:
        raise ValueError(f"polyfit: the number of data points ({n}) must exceed the order "
                         f"({order}) to scale the covariance matrix (or use cov='unscaled')")
    factor = true_divide(residuals, n - order)
    if vector:
        return coefficients, multiply(base, reshape(factor, (1, 1)))
    return coefficients, multiply(expand_dims(base, 2), reshape(factor, (1, 1, -1)))


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points ``(xp, fp)`` (``xp`` increasing) at
    ``x``; below ``xp[0]`` the value is ``left`` (default ``fp[0]``), above ``xp[-1]``
    ``right`` (default ``fp[-1]``).  With ``period`` the points repeat with that period
    (``left``/``right`` unused; ``xp`` must then be concrete, as it is sorted).
    Differentiable in ``x`` (the slope of the segment; at a knot, the segment to the
    right), ``fp``, ``left`` and ``right``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.interp(np.array([-1.0, 0.5, 1.5, 9.0]), np.array([0.0, 1.0, 2.0]),
    ...            np.array([0.0, 10.0, 0.0]))
    array([0., 5., 5., 0.])
    """
    x, xp, fp = promote_inexact(arg(x)), promote_inexact(arg(xp)), arg(fp)
    for what, a in (("xp", xp), ("fp", fp)):
        if len(shape_of(a)) != 1:
            raise ValueError(f"interp: {what} must be 1-D, got shape {shape_of(a)}")
    if shape_of(xp) != shape_of(fp) or not shape_of(xp)[0]:
        raise ValueError(f"interp: xp and fp must be non-empty and of the same length, got "
                         f"shapes {shape_of(xp)} and {shape_of(fp)}")
    if period is not None:
        if isinstance(xp, Tracer):
            raise NotImplementedError("interp: with period, xp must be concrete (it is "
                                      "sorted after reduction modulo the period)")
        period = absolute(arg(period))
        x = subtract(x, multiply(floor(true_divide(x, period)), period))
        xp_mod = np.asarray(backend.to_host(xp)) % np.asarray(backend.to_host(period))
        order = np.argsort(xp_mod, kind="stable")
        xp = take(subtract(xp, multiply(floor(true_divide(xp, period)), period)), order)
        fp = fp[order]
        n = shape_of(xp)[0]
        xp = concatenate([reshape(subtract(xp[n - 1], period), (1,)), xp,
                          reshape(add(xp[0], period), (1,))])
        fp = concatenate([fp[n - 1:], fp, fp[:1]])
        left = right = None
    n = shape_of(xp)[0]
    if n == 1:
        inside = add(multiply(x, 0), fp[0])
    else:
        # The segment of each x: how many inner knots lie at or below it.
        inner = xp[1:n - 1]
        below = sum(less_equal(inner, expand_dims(x, -1)), axis=-1)
        x0, x1 = take(xp, below), take(xp, add(below, 1))
        f0, f1 = take(fp, below), take(fp, add(below, 1))
        slope = true_divide(subtract(f1, f0), subtract(x1, x0))
        inside = add(f0, multiply(slope, subtract(x, x0)))
    first, last = xp[0], xp[n - 1]
    result = where(less(x, first), fp[0] if left is None else left, inside)
    return where(greater(x, last), fp[n - 1] if right is None else right, result)


def _along(x, axis: int, nd: int):
    """A 1-D ``x`` shaped to broadcast along ``axis`` of an ``nd``-axis array."""
    return reshape(x, [-1 if i == axis else 1 for i in range(nd)])


def _slice(a, axis: int, lo: int, hi: int | None):
    index = [slice(None)] * len(shape_of(a))
    index[axis] = slice(lo, hi)
    return a[tuple(index)]


def _axis_gradient(f, spacing, axis: int, edge_order: int):
    """NumPy's second-order differences of ``f`` along ``axis`` for one spacing (a scalar
    step or the 1-D coordinates of the samples)."""
    nd, n = len(shape_of(f)), shape_of(f)[axis]
    if n < edge_order + 1:
        raise ValueError(f"gradient: axis {axis} has {n} samples; edge_order={edge_order} "
                         f"needs at least {edge_order + 1}")

    def at(lo, hi=None):
        return _slice(f, axis, lo, hi)
    spacing = arg(spacing)
    if not shape_of(spacing):  # a uniform step h
        h = spacing
        interior = true_divide(subtract(at(2), at(0, -2)), multiply(h, 2.0))
        if edge_order == 1:
            first = true_divide(subtract(at(1, 2), at(0, 1)), h)
            last = true_divide(subtract(at(-1), at(-2, -1)), h)
        else:
            first = true_divide(add(add(multiply(at(0, 1), -1.5), multiply(at(1, 2), 2.0)),
                                    multiply(at(2, 3), -0.5)), h)
            last = true_divide(add(add(multiply(at(-3, -2), 0.5), multiply(at(-2, -1), -2.0)),
                                   multiply(at(-1), 1.5)), h)
    else:
        if shape_of(spacing) != (n,):
            raise ValueError(f"gradient: the coordinates along axis {axis} must be a scalar "
                             f"step or a 1-D array of {n} values, got shape "
                             f"{shape_of(spacing)}")
        dx = diff(spacing)
        dx = lax.convert_element_type(dx, np.result_type(dtype_of(f), dtype_of(dx)) if
                                      dtype_of(dx).kind == "c" else dtype_of(f))
        hd, hs = dx[:n - 2], dx[1:n - 1]
        a = -hs / (hd * (hd + hs))
        b = (hs - hd) / (hd * hs)
        c = hd / (hs * (hd + hs))
        interior = (multiply(_along(a, axis, nd), at(0, -2)) + multiply(_along(b, axis, nd),
                    at(1, -1)) + multiply(_along(c, axis, nd), at(2)))
        if edge_order == 1:
            first = true_divide(subtract(at(1, 2), at(0, 1)), dx[0])
            last = true_divide(subtract(at(-1), at(-2, -1)), dx[n - 2])
        else:
            d1, d2 = dx[0], dx[1]
            first = (multiply(at(0, 1), -(2.0 * d1 + d2) / (d1 * (d1 + d2)))
                     + multiply(at(1, 2), (d1 + d2) / (d1 * d2))
                     + multiply(at(2, 3), -d1 / (d2 * (d1 + d2))))
            d1, d2 = dx[n - 3], dx[n - 2]
            last = (multiply(at(-3, -2), d2 / (d1 * (d1 + d2)))
                    + multiply(at(-2, -1), -(d2 + d1) / (d1 * d2))
                    + multiply(at(-1), (2.0 * d2 + d1) / (d2 * (d1 + d2))))
    return concatenate([first, interior, last], axis)


def gradient(f, *varargs, axis=None, edge_order=None):
    """The derivative of the sampled function ``f`` along each axis: central differences
    inside, one-sided differences of order ``edge_order`` (1 by default, or 2) at the
    edges.  ``varargs`` give the spacing: nothing (1), one scalar for every axis, or one
    scalar step or 1-D coordinate array per axis.  One axis in, one array out; several in,
    a list (as in JAX).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.gradient(np.array([1.0, 2.0, 4.0, 7.0]))
    array([1. , 1.5, 2.5, 3. ])
    >>> fnp.gradient(np.array([0.0, 1.0, 4.0]), np.array([0.0, 1.0, 2.0]), edge_order=2)
    array([0., 2., 4.])
    """
    f = promote_inexact(arg(f))
    nd = len(shape_of(f))
    axes = tuple(range(nd)) if axis is None else (
        (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis))
    axes = tuple(int(a) % nd if -nd <= a < nd else _bad_axis(a, nd) for a in axes)
    edge_order = 1 if edge_order is None else edge_order
    if edge_order not in (1, 2):
        raise ValueError(f"gradient: edge_order must be 1 or 2, got {edge_order}")
    if not varargs:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and not shape_of(arg(varargs[0])):
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError(f"gradient: give no spacing, one scalar, or one spacing per axis "
                        f"({len(axes)}), got {len(varargs)}")
    outs = [_axis_gradient(f, h, a, edge_order) for a, h in zip(axes, spacings)]
    return outs[0] if len(outs) == 1 else outs


def _bad_axis(axis, nd: int):
    raise ValueError(f"gradient: axis {axis} is out of range for an array of {nd} axes")


def trapezoid(y, x=None, dx=1.0, axis: int = -1):
    """The integral of the samples ``y`` along ``axis`` by the trapezoidal rule, at the
    coordinates ``x`` (1-D, or shaped like ``y``) or with the uniform step ``dx``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.trapezoid(np.array([0.0, 1.0, 4.0]), np.array([0.0, 1.0, 3.0]))
    array(5.5)
    """
    y = promote_inexact(arg(y))
    nd = len(shape_of(y))
    if not -nd <= axis < nd:
        raise ValueError(f"trapezoid: axis {axis} is out of range for y of shape "
                         f"{shape_of(y)}")
    axis %= nd
    if x is None:
        widths = dx
    else:
        x = arg(x)
        widths = diff(x, axis=axis if len(shape_of(x)) == nd else -1)
        if len(shape_of(x)) == 1:
            widths = _along(widths, axis, nd)
    heights = add(_slice(y, axis, 1, None), _slice(y, axis, 0, -1))
    return sum(multiply(heights, widths), axis=axis) * 0.5


def ediff1d(ary, to_end=None, to_begin=None):
    """The differences of consecutive elements of the flattened ``ary``, with ``to_begin``
    and ``to_end`` (flattened) joined before and after.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.ediff1d(np.array([1, 2, 4, 7]), to_begin=-9)
    array([-9,  1,  2,  3])
    """
    differences = diff(ravel(arg(ary)))
    dtype = dtype_of(differences)

    def part(x):
        x = arg(x)
        if core.is_python_scalar(x) and shape_of(differences)[0]:
            return add(multiply(differences[:1], 0), x)  # on differences' device
        return lax.convert_element_type(ravel(x), dtype)
    parts = [differences]
    if to_begin is not None:
        parts.insert(0, part(to_begin))
    if to_end is not None:
        parts.append(part(to_end))
    return concatenate(parts)


def unwrap(p, discont=None, axis: int = -1, period=2 * math.pi):
    """``p`` with its jumps along ``axis`` larger than ``discont`` (default and minimum
    ``period / 2``) replaced by their remainder modulo ``period``: phases made continuous.
    The derivative is that of ``p`` (the corrections are piecewise constant).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.unwrap(np.array([0.0, 1.0, 2.0, -2.5]), period=6.0)
    array([0. , 1. , 2. , 3.5])
    """
    p = promote_inexact(arg(p))
    nd = len(shape_of(p))
    if not -nd <= axis < nd:
        raise ValueError(f"unwrap: axis {axis} is out of range for p of shape {shape_of(p)}")
    axis %= nd
    half = true_divide(period, 2)
    discont = half if discont is None else discont
    jumps = diff(p, axis=axis)
    shifted = add(jumps, half)
    wrapped = subtract(subtract(shifted, multiply(floor(true_divide(shifted, period)),
                                                  period)), half)
    # A jump of exactly +period/2 stays +period/2 rather than becoming -period/2.
    wrapped = where(logical_and(wrapped == -half, greater(jumps, 0)), half, wrapped)
    correction = lax.stop_gradient(where(less(absolute(jumps), discont), 0.0,
                                         subtract(wrapped, jumps)))
    corrected = add(_slice(p, axis, 1, None), cumsum(correction, axis=axis))
    return concatenate([_slice(p, axis, 0, 1), corrected], axis)
