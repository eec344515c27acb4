"""The matrix exponential and its Fréchet derivative on the last two axes (leading axes are
batch members): the kernels of ``functrans.scipy.linalg.expm`` and ``expm_frechet``.

* ``expm(a)`` is ``exp(a)`` by scaling and squaring with a degree-13 Padé approximant:
  ``a`` is divided by ``2**s`` and the result squared ``s`` times, with ``s`` chosen as
  Al-Mohy and Higham (2009) do, from the norms of powers of ``a`` (Higham's 2005 choice
  from ``‖a‖`` alone over-scales matrices far from normal and loses accuracy).  Its JVP is
  the Fréchet derivative: ``d exp(a) = expm_frechet(a, da)``.
* ``expm_frechet(a, e) = ∫₀¹ exp(t a) e exp((1 - t) a) dt``, linear in ``e``, is the
  upper-right block of ``exp([[a, e], [0, a]])`` (the same kernel on the 2n x 2n block
  matrix, ``e`` first scaled to ``a``'s norm).  Its transpose in ``e`` is
  ``expm_frechet(aᵀ, ct)`` (a linear transpose: no conjugation), and its JVP in ``a`` is
  again a block: ``d expm_frechet(a, e)[da] = expm_frechet(B, [[da, 0], [0, da]])``'s
  upper-right block with ``B = [[a, e], [0, a]]``.  So derivatives of every order, in
  both modes, are these two primitives on larger blocks.

Why primitives rather than a composition of matrix products and a solve: the number of
squarings depends on the value of ``a``'s norm, which a traced ``a`` does not have; a
composition would have to square a fixed maximum number of times and select, and its
reverse mode would store every intermediate power.  The impl reads the norm itself.
"""
from __future__ import annotations

import math

import numpy as np

from functrans import backend
from functrans.backend import array_module, coerce
from functrans.core import Primitive, ShapedArray, abstract_eval_rules, get_aval, impl_rules
from functrans.interpreters import ad, batching, transpose
from functrans.interpreters.transpose import is_undefined_primal
from functrans.primitives.conversion import convert_element_type
from functrans.primitives.decompositions import (batch_matrix_and_operand, matrix_by_matrix,
                                                 sylvester_p)
from functrans.primitives.shape import moveaxis, shape_of, transpose_axes
from functrans.primitives.slicing import concatenate, slice

__all__ = ["expm", "expm_frechet", "sqrtm", "expm_p", "expm_frechet_p", "sqrtm_p"]

# Higham (2005), "The scaling and squaring method for the matrix exponential revisited":
# the coefficients of the degree-13 Padé approximant and the norm θ₁₃ up to which it is
# accurate to double precision.
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
           1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
           33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152
# |c₂₇| = (13!)² / (26! 27!), the leading coefficient of the degree-13 Padé error series
# (Al-Mohy and Higham, 2009, eq. (1.2) and section 3).
_C27 = math.factorial(13) ** 2 / (math.factorial(26) * math.factorial(27))
# On device arrays the squarings are not counted on the host (a synchronisation): up to
# this many are done, each kept only for the batch members that need it.  It covers
# 1-norms (of the powers, see _squarings) up to θ₁₃ 2⁴⁰ ≈ 6e12.
_DEVICE_SQUARINGS = 40


def _one_norm(xp, a):
    return xp.abs(a).sum(axis=-2).max(axis=-1)


def _scaled(a, s, real):
    return a * (2.0 ** -s).astype(real)[..., None, None]


def _squarings(xp, a, real):
    """The number of squarings ``s`` for each matrix in ``a`` (a float array), by Al-Mohy
    and Higham (2009): not from ``‖a‖`` (Higham 2005, which over-scales matrices far from
    normal) but from ``η = min(max(d6, d8), max(d8, d10))``, ``d_k = ‖aᵏ‖^(1/k) <= ‖a‖``,
    plus their correction ``ℓ`` where the Padé error bound needs it; never more than
    ``‖a‖`` asks for (also the fallback when a power overflows)."""
    norm = _one_norm(xp, a)
    tiny = np.finfo(real).tiny

    def steps(size):
        return xp.maximum(xp.ceil(xp.log2(xp.maximum(size, tiny) / _THETA13)), 0)

    by_norm = steps(norm)
    # Powers of b = a / ‖a‖ (norm at most 1: they cannot overflow); d_k = ‖a‖ ‖bᵏ‖^(1/k).
    b = a / xp.maximum(norm, tiny).astype(real)[..., None, None]
    b2 = b @ b
    b4 = b2 @ b2
    b6 = b4 @ b2
    d6, d8, d10 = (_one_norm(xp, p) ** (1.0 / k) for p, k in ((b6, 6), (b4 @ b4, 8),
                                                              (b4 @ b6, 10)))
    eta = norm * xp.minimum(xp.maximum(d6, d8), xp.maximum(d8, d10))
    s = xp.minimum(steps(eta), by_norm)
    # ℓ: enough extra squarings that |c₂₇| ‖|a_s|²⁷‖ / ‖a_s‖ <= u, for a_s = a / 2ˢ
    # (‖·‖₁ of a nonnegative matrix is the largest entry of 1ᵀ times it).
    scaled = xp.abs(_scaled(a, s, real))
    row = xp.sum(xp.ones_like(scaled), axis=-2, keepdims=True) / a.shape[-1]
    for _ in range(27):
        row = row @ scaled
    alpha = _C27 * row.max(axis=(-2, -1)) / xp.maximum(_one_norm(xp, scaled), tiny)
    ell = xp.maximum(xp.ceil(xp.log2(xp.maximum(alpha, tiny) / 2.0 ** -53) / 26), 0)
    # fmin: a nan from an overflowed power falls back to the norm's count
    return xp.fmin(s + ell, by_norm)


def _expm_array(xp, a):
    """``exp(a)`` for a stack of square arrays of the module ``xp``."""
    real = np.finfo(a.dtype).dtype
    s = _squarings(xp, a, real)
    if xp is np:
        rounds = int(s.max()) if s.size else 0
    else:
        rounds = _DEVICE_SQUARINGS
        s = xp.minimum(s, rounds)
    a = _scaled(a, s, real)
    b = _PADE13
    eye = xp.eye(a.shape[-1], dtype=a.dtype)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
             + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * eye
    r = xp.linalg.solve(v - u, v + u)
    keep = s[..., None, None]
    for i in range(rounds):
        r = xp.where(keep > i, r @ r, r)
    return r


def _check(name: str, what: str, aval: ShapedArray) -> None:
    if aval.dtype.kind not in "fc":
        raise TypeError(f"{name}: {what} must be float or complex, got {aval.dtype} (convert "
                        "it first, e.g. with functrans.numpy.asarray(x, float))")
    if aval.ndim < 2 or aval.shape[-1] != aval.shape[-2]:
        raise ValueError(f"{name}: {what} must be a stack of square matrices (..., n, n), "
                         f"got shape {aval.shape}")


def _swap_last(x):
    nd = len(shape_of(x))
    return transpose_axes(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _block(top_left, top_right, bottom_left, bottom_right):
    nd = len(shape_of(top_left))
    return concatenate([concatenate([top_left, top_right], nd - 1),
                        concatenate([bottom_left, bottom_right], nd - 1)], nd - 2)


def _upper_right(x, n: int):
    shape = shape_of(x)
    return slice(x, (0,) * (len(shape) - 2) + (0, n), shape[:-2] + (n, 2 * n))


def _zeros_like(x):
    # x * 0 would turn inf or nan entries into nan; a broadcast zero keeps the block exact.
    aval = get_aval(x)
    return backend.zeros(aval.shape, aval.dtype, like=x)


# -- expm ----------------------------------------------------------------------------------

expm_p = Primitive("expm", origin="library")


def _expm_impl(a):
    xp = array_module(a)
    (a,) = coerce(xp, a)
    return _expm_array(xp, a)


def _expm_abstract_eval(a):
    _check("expm", "the operand", a)
    return ShapedArray(a.shape, a.dtype)


def _expm_jvp(g, ans, a):
    return expm_frechet_p.bind(a, g)


impl_rules[expm_p] = _expm_impl
abstract_eval_rules[expm_p] = _expm_abstract_eval
ad.defjvp(expm_p, _expm_jvp)
batching.defleading_dims(expm_p, moveaxis)


def expm(x):
    """``exp(x)`` of each square matrix in ``x`` (shape ``(..., n, n)``), by scaling and
    squaring with a degree-13 Padé approximant.

    >>> import numpy as np
    >>> from functrans.primitives.matrix_functions import expm
    >>> expm(np.array([[0.0, 1.0], [0.0, 0.0]]))
    array([[1., 1.],
           [0., 1.]])
    """
    _expm_abstract_eval(get_aval(x))
    return expm_p.bind(x)


# -- expm_frechet --------------------------------------------------------------------------

expm_frechet_p = Primitive("expm_frechet", origin="library")


def _expm_frechet_impl(a, e):
    xp = array_module(a, e)
    a, e = coerce(xp, a, e)
    n = a.shape[-1]
    # L(a, e) = c L(a, e / c): with e scaled to a's norm the block's norm, and so the
    # number of squarings, is set by a.
    norm_a, norm_e = _one_norm(xp, a), _one_norm(xp, e)
    scale = xp.where(norm_e == 0, 1, norm_e / xp.maximum(norm_a, 1))[..., None, None]
    block = xp.concatenate([xp.concatenate([a, e / scale], axis=-1),
                            xp.concatenate([xp.zeros_like(a), a], axis=-1)], axis=-2)
    return _expm_array(xp, block)[..., :n, n:] * scale


def _expm_frechet_abstract_eval(a, e):
    _check("expm_frechet", "a", a)
    if e.shape != a.shape or e.dtype != a.dtype:
        raise TypeError(f"expm_frechet: e must have a's shape and dtype {a.shape} {a.dtype}, "
                        f"got {e.shape} {e.dtype}")
    return ShapedArray(a.shape, a.dtype)


def _expm_frechet_jvp_a(g, ans, a, e):
    zero = _zeros_like(g)
    n = shape_of(a)[-1]
    big = _block(a, e, _zeros_like(a), a)
    return _upper_right(expm_frechet_p.bind(big, _block(g, zero, zero, g)), n)


def _expm_frechet_jvp_e(g, ans, a, e):
    return expm_frechet_p.bind(a, g)


def _expm_frechet_transpose(ct, a, e):
    assert not is_undefined_primal(a), "expm_frechet is linear in e only"
    return [None, expm_frechet_p.bind(_swap_last(a), ct)]


impl_rules[expm_frechet_p] = _expm_frechet_impl
abstract_eval_rules[expm_frechet_p] = _expm_frechet_abstract_eval
ad.defjvp(expm_frechet_p, _expm_frechet_jvp_a, _expm_frechet_jvp_e)
transpose.deftranspose(expm_frechet_p, _expm_frechet_transpose)
batching.batching_rules[expm_frechet_p] = batch_matrix_and_operand(expm_frechet_p)


def expm_frechet(a, e):
    """The Fréchet derivative of the matrix exponential at each matrix in ``a`` in the
    direction ``e`` (same shape and dtype, ``(..., n, n)``): linear in ``e``.

    >>> import numpy as np
    >>> from functrans.primitives.matrix_functions import expm_frechet
    >>> expm_frechet(np.zeros((2, 2)), np.array([[1.0, 2.0], [3.0, 4.0]]))  # at 0: e
    array([[1., 2.],
           [3., 4.]])
    """
    _expm_frechet_abstract_eval(get_aval(a), get_aval(e))
    return expm_frechet_p.bind(a, e)


# -- sqrtm ---------------------------------------------------------------------------------
# The principal square root x of a (x x = a, the eigenvalues of x in the right half plane),
# complex as JAX's: from the complex Schur form a = z t zᴴ (SciPy's, on the host), the
# upper triangular u with u u = t column by column (Björck and Hammarling, 1983, JAX's
# recurrence), then x = z u zᴴ.  Its derivative solves x dx + dx x = da, a Sylvester
# equation in x, whose own rules give every higher order.

sqrtm_p = Primitive("sqrtm", origin="library")


def _complex_dtype(dtype) -> np.dtype:
    return np.result_type(dtype, np.complex64)


def _triangular_sqrt(xp, t):
    """The upper triangular ``u`` with ``u u = t`` and ``diag(u) = sqrt(diag(t))`` for a
    stack of upper triangular ``t``: JAX's recurrence, an entry ``(t[i, j] - s) / (u[i, i]
    + u[j, j])`` set to 0 where ``t[i, j] == s`` (the singular 0 / 0)."""
    n = t.shape[-1]
    diagonal = xp.sqrt(xp.diagonal(t, axis1=-2, axis2=-1))
    u = xp.zeros_like(t)
    index = xp.arange(n)
    u[..., index, index] = diagonal
    for j in range(1, n):
        for i in range(j - 1, -1, -1):
            s = (u[..., i, i + 1:j] * u[..., i + 1:j, j]).sum(axis=-1)
            numerator = t[..., i, j] - s
            value = numerator / (diagonal[..., i] + diagonal[..., j])
            u[..., i, j] = xp.where(numerator == 0, 0, value)
    return u


def _sqrtm_impl(a):
    xp = array_module(a)
    (a,) = coerce(xp, a)
    a = a.astype(_complex_dtype(a.dtype), copy=False)
    kernel = backend.linalg_kernel("schur", a, what="functrans.scipy.linalg.sqrtm")
    if not a.size:
        return xp.zeros_like(a)
    t, z = matrix_by_matrix(
        lambda m: tuple(kernel(m, output="complex", check_finite=False)), a)
    with np.errstate(divide="ignore", invalid="ignore"):
        u = _triangular_sqrt(xp, t.astype(a.dtype, copy=False))
    return (z @ u @ xp.conj(xp.swapaxes(z, -1, -2))).astype(a.dtype, copy=False)


def _sqrtm_abstract_eval(a):
    _check("sqrtm", "the operand", a)
    return ShapedArray(a.shape, _complex_dtype(a.dtype))


def _sqrtm_jvp(g, x, a):
    g = convert_element_type(g, get_aval(x).dtype)
    return sylvester_p.bind(x, x, g, tol=0.0)


impl_rules[sqrtm_p] = _sqrtm_impl
abstract_eval_rules[sqrtm_p] = _sqrtm_abstract_eval
ad.defjvp(sqrtm_p, _sqrtm_jvp)
batching.defleading_dims(sqrtm_p, moveaxis)


def sqrtm(x):
    """The principal square root of each square matrix in ``x`` (shape ``(..., n, n)``),
    complex (``complex64`` for ``float32`` or ``complex64`` input, else ``complex128``).

    >>> import numpy as np
    >>> from functrans.primitives.matrix_functions import sqrtm
    >>> sqrtm(np.array([[4.0, 0.0], [0.0, 9.0]]))
    array([[2.+0.j, 0.+0.j],
           [0.+0.j, 3.+0.j]])
    """
    _sqrtm_abstract_eval(get_aval(x))
    return sqrtm_p.bind(x)
