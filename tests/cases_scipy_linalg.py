"""Sweep cases of the rest of ``functrans.numpy.linalg`` (against NumPy), of
``functrans.scipy.linalg`` (against SciPy) and of the matrix-exponential primitives
(functrans/primitives/matrix_functions.py): checked by tests/test_primitives.py and
tests/test_numpy.py (values, both modes to second order, vmap against a loop, float32,
complex values).

Decompositions need well-posed inputs, so the cases build them from unconstrained draws
with the module they run with (``m`` is functrans.numpy or NumPy): ``_spd`` is Hermitian
positive definite, ``_general`` diagonally dominant with its rows reversed (so that LU
pivots).  SciPy's batched functions are newer than our SciPy floor (1.13), so batched
references loop over the batch."""
from __future__ import annotations

import numpy as np
import scipy.linalg as sl

import functrans.numpy as fnp
import functrans.scipy.linalg as fsl
from functrans import lax
from functrans.primitives.matrix_functions import expm, expm_frechet
from sweep import C64, C128, F32, F64, I64, A, Case, numpy_case

WITH_COMPLEX = (F64, F32, I64, C128, C64)
INEXACT = (F64, F32, C128, C64)


def _identity(m, x):
    """Identity matrices shaped like the stack ``x``, made from ``x`` (on its device)."""
    return m.tril(m.triu(m.ones_like(x)))


def _spd(m, x):
    return x @ m.conj(m.swapaxes(x, -1, -2)) + 3 * _identity(m, x)


def _general(m, x):
    return m.flip(x + 8 * _identity(m, x), -2)


def _triangular(m, x):
    """A matrix whose triangles are both far from singular (the diagonal is large)."""
    return x + 4 * _identity(m, x)


def _sym(m, x):
    return x + m.conj(m.swapaxes(x, -1, -2))


def _loop(f):
    """``f`` applied to each member of a batch (the leading axis of every argument)."""
    def batched(*xs):
        outs = [f(*[x[i] for x in xs]) for i in range(len(xs[0]))]
        if isinstance(outs[0], tuple):
            return tuple(np.stack(parts) for parts in zip(*outs))
        return np.stack(outs)
    return batched


def _abs_squared(m, v):
    return m.real(v * m.conj(v))


def _scipy(name, prep, ours, theirs, *args, dtypes=WITH_COMPLEX, diff=True, tol=1e-7,
           batched=False):
    """A case of ``functrans.scipy.linalg``: ``ours(*prep(fnp, *xs))`` against
    ``theirs(*prep(np, *xs))`` (looped over the batch if ``batched``)."""
    reference = _loop(theirs) if batched else theirs
    return numpy_case(f"scipy.linalg.{name}", lambda m, *xs: ours(*prep(m, *xs)), *args,
                      dtypes=dtypes, diff=diff, tol=tol,
                      reference=lambda *xs: reference(*prep(np, *xs)))


def _tri(m, a, b):
    return _triangular(m, a), b


def _spd_and(m, a, b):
    return _spd(m, a), b


def _general_and(m, a, b):
    return _general(m, a), b


def _one(f):
    return lambda m, a: (f(m, a),)


def _same(m, *xs):
    return xs


def _cast_like(f):
    """SciPy's ``det`` and ``expm_frechet`` give float64 (complex128) for float32
    (complex64) input; ours keep the input's precision, as NumPy and JAX."""
    def cast(x, like):
        return np.asarray(x).astype(like.dtype) if like.dtype.kind in "fc" else x

    def reference(a, *rest):
        out = f(a, *rest)
        return tuple(cast(o, a) for o in out) if isinstance(out, tuple) else cast(out, a)
    return reference


def _eigh_squared(m, w_v):
    """Eigenvalues and ``|eigenvectors|²`` (free of the per-column sign or phase)."""
    w, v = w_v
    return w, _abs_squared(m, v)


def _solve_triangular_cases():
    cases = []
    for trans in (0, 1, 2):
        for lower in (False, True):
            unit = trans == 1
            cases.append(_scipy(
                f"solve_triangular_trans{trans}_lower{int(lower)}_unit{int(unit)}", _tri,
                lambda a, b, t=trans, lo=lower, u=unit: fsl.solve_triangular(
                    a, b, trans=t, lower=lo, unit_diagonal=u),
                lambda a, b, t=trans, lo=lower, u=unit: sl.solve_triangular(
                    a, b, trans=t, lower=lo, unit_diagonal=u),
                A(3, 3), A(3, 2)))
    cases.append(_scipy("solve_triangular_vector", _tri,
                        lambda a, b: fsl.solve_triangular(a, b, lower=True),
                        lambda a, b: sl.solve_triangular(a, b, lower=True), A(3, 3), A(3)))
    cases.append(_scipy("solve_triangular_batched", _tri,
                        lambda a, b: fsl.solve_triangular(a, b, trans="C"),
                        lambda a, b: sl.solve_triangular(a, b, trans="C"),
                        A(2, 3, 3), A(2, 3, 2), batched=True))
    return cases


def _lu_solve_cases():
    return [_scipy(f"lu_solve_trans{trans}", _general_and,
                   lambda a, b, t=trans: fsl.lu_solve(fsl.lu_factor(a), b, trans=t),
                   lambda a, b, t=trans: sl.lu_solve(sl.lu_factor(a), b, trans=t),
                   A(4, 4), A(4, 2)) for trans in (0, 1, 2)] + [
        _scipy("lu_solve_vector_batched", _general_and,
               lambda a, b: fsl.lu_solve(fsl.lu_factor(a), b),
               lambda a, b: sl.lu_solve(sl.lu_factor(a), b), A(2, 3, 3), A(2, 3), batched=True)]


def _solve_cases():
    cases = []
    for assume in ("gen", "sym", "her", "pos"):
        for lower in (False, True):
            # the other triangle holds junk that 'sym', 'her' and 'pos' must not read
            def prep(m, a, junk, b, k=assume, lo=lower):
                matrix = _general(m, a) if k == "gen" else _spd(m, a)
                mask = m.triu(m.ones_like(junk), 1) if lo else m.tril(m.ones_like(junk), -1)
                return (matrix if k == "gen" else matrix + junk * mask), b
            cases.append(_scipy(
                f"solve_{assume}_lower{int(lower)}", prep,
                lambda a, b, k=assume, lo=lower: fsl.solve(a, b, lower=lo, assume_a=k),
                lambda a, b, k=assume, lo=lower: sl.solve(a, b, lower=lo, assume_a=k),
                A(3, 3), A(3, 3), A(3, 2)))
    cases.append(_scipy("solve_pos_vector", _spd_and,
                        lambda a, b: fsl.solve(a, b, assume_a="pos"),
                        lambda a, b: sl.solve(a, b, assume_a="pos"), A(3, 3), A(3)))
    return cases


SCIPY_CASES = [
    *_solve_triangular_cases(),
    _scipy("cholesky_upper", _one(_spd), fsl.cholesky, sl.cholesky, A(3, 3)),
    _scipy("cholesky_lower", _one(_spd), lambda a: fsl.cholesky(a, lower=True),
           lambda a: sl.cholesky(a, lower=True), A(3, 3)),
    _scipy("cholesky_batched", _one(_spd), fsl.cholesky, sl.cholesky, A(2, 3, 3),
           batched=True),
    # Only the triangle read moves: junk in the other one has a zero derivative.
    _scipy("cholesky_reads_one_triangle", lambda m, a, junk: (
        _spd(m, a) + junk * m.tril(m.ones_like(junk), -1),),
        fsl.cholesky, sl.cholesky, A(3, 3), A(3, 3), dtypes=(F64, F32)),
    *[_scipy(f"cho_solve_lower{int(lower)}", _spd_and,
             lambda a, b, lo=lower: fsl.cho_solve(fsl.cho_factor(a, lower=lo), b),
             lambda a, b, lo=lower: sl.cho_solve(sl.cho_factor(a, lower=lo), b),
             A(3, 3), A(3, 2)) for lower in (False, True)],
    _scipy("cho_solve_vector_batched", _spd_and,
           lambda a, b: fsl.cho_solve(fsl.cho_factor(a), b),
           lambda a, b: sl.cho_solve(sl.cho_factor(a), b), A(2, 3, 3), A(2, 3), batched=True),
    _scipy("lu", _one(_general), fsl.lu, sl.lu, A(4, 4)),
    _scipy("lu_permute_l_batched", _one(_general), lambda a: fsl.lu(a, permute_l=True),
           lambda a: sl.lu(a, permute_l=True), A(2, 3, 3), batched=True),
    _scipy("lu_factor_lu", _one(_general), lambda a: fsl.lu_factor(a)[0],
           lambda a: sl.lu_factor(a)[0], A(4, 4)),
    _scipy("lu_factor_pivots", _one(_general), lambda a: fsl.lu_factor(a)[1],
           lambda a: sl.lu_factor(a)[1], A(4, 4), diff=False),
    *_lu_solve_cases(),
    *_solve_cases(),
    _scipy("inv", _one(_general), fsl.inv, sl.inv, A(3, 3)),
    _scipy("det", _one(_general), fsl.det, _cast_like(sl.det), A(3, 3)),
    _scipy("eigh", _one(_sym), lambda a: _eigh_squared(fnp, fsl.eigh(a)),
           lambda a: _eigh_squared(np, sl.eigh(a)), A(3, 3)),
    _scipy("eigh_eigvals_only_upper", _one(_sym),
           lambda a: fsl.eigh(a, lower=False, eigvals_only=True),
           lambda a: sl.eigh(a, lower=False, eigvals_only=True), A(4, 4)),
    _scipy("qr_economic", _same, lambda a: fsl.qr(a, mode="economic"),
           lambda a: sl.qr(a, mode="economic"), A(4, 3)),
    _scipy("qr_full_square", _same, fsl.qr, sl.qr, A(3, 3)),
    _scipy("qr_full_tall", _same, fsl.qr, sl.qr, A(4, 3), diff=False),
    _scipy("qr_r", _same, lambda a: fsl.qr(a, mode="r"), lambda a: sl.qr(a, mode="r"),
           A(3, 3)),
    _scipy("expm", _same, fsl.expm, sl.expm, A(3, 3)),
    # a norm of about 20: several squarings, a different number per batch member
    _scipy("expm_scaled_batched", lambda m, a: (m.concatenate([4 * a[:1], 8 * a[1:]]),),
           fsl.expm, sl.expm, A(2, 3, 3), dtypes=(F64, C128), tol=1e-6, batched=True),
    _scipy("expm_frechet", _same, fsl.expm_frechet, _cast_like(sl.expm_frechet), A(3, 3),
           A(3, 3)),
    _scipy("expm_frechet_only", _same,
           lambda a, e: fsl.expm_frechet(a, e, compute_expm=False),
           _cast_like(lambda a, e: sl.expm_frechet(a, e, compute_expm=False)), A(3, 3),
           A(3, 3)),
    _scipy("block_diag", _same, fsl.block_diag, sl.block_diag, A(2, 2), A(3), A(1, 2)),
]


def _special_matrix_cases():
    """The constructors from arrays: gathers whose derivatives, batching and jit come from
    ``take``'s rules.  Batched references loop (SciPy before 1.17 flattens N-D input)."""
    away0 = "away0"  # the leading coefficient of a polynomial is divided by
    cases = [
        _scipy("toeplitz", _same, fsl.toeplitz, sl.toeplitz, A(4)),
        _scipy("toeplitz_c_r", _same, fsl.toeplitz, sl.toeplitz, A(3), A(5)),
        _scipy("toeplitz_batched", _same, fsl.toeplitz, sl.toeplitz, A(2, 3), A(2, 4),
               batched=True),
        _scipy("toeplitz_hermitian_batched", _same, fsl.toeplitz, sl.toeplitz, A(2, 3),
               batched=True),
        _scipy("hankel", _same, fsl.hankel, sl.hankel, A(4)),
        _scipy("hankel_c_r", _same, fsl.hankel, sl.hankel, A(4), A(3)),
        _scipy("hankel_batched", _same, fsl.hankel, sl.hankel, A(2, 3), A(2, 5),
               batched=True),
        _scipy("circulant", _same, fsl.circulant, sl.circulant, A(4)),
        _scipy("circulant_batched", _same, fsl.circulant, sl.circulant, A(2, 3), batched=True),
        _scipy("companion", _same, fsl.companion, sl.companion, A(4, kind=away0)),
        _scipy("companion_batched", _same, fsl.companion, sl.companion, A(2, 3, kind=away0),
               batched=True),
        _scipy("fiedler_companion", _same, fsl.fiedler_companion, sl.fiedler_companion,
               A(6, kind=away0)),
        _scipy("fiedler_companion_batched", _same, fsl.fiedler_companion,
               sl.fiedler_companion, A(2, 5, kind=away0), batched=True),
        _scipy("fiedler", _same, fsl.fiedler, sl.fiedler, A(4)),
        _scipy("fiedler_batched", _same, fsl.fiedler, sl.fiedler, A(2, 3), batched=True),
        _scipy("leslie", _same, fsl.leslie, sl.leslie, A(4), A(3)),
        _scipy("leslie_batched", _same, fsl.leslie, sl.leslie, A(2, 3), A(2, 2), batched=True),
        _scipy("convolution_matrix_batched", _same,
               lambda a: fsl.convolution_matrix(a, 3, "same"),
               lambda a: sl.convolution_matrix(a, 3, "same"), A(2, 4), batched=True),
    ]
    for mode in ("full", "same", "valid"):
        for m, n in ((3, 5), (4, 2)):
            cases.append(_scipy(
                f"convolution_matrix_{mode}_{m}_{n}", _same,
                lambda a, n=n, mode=mode: fsl.convolution_matrix(a, n, mode),
                lambda a, n=n, mode=mode: sl.convolution_matrix(a, n, mode), A(m)))
    return cases


def _polar_cases():
    """Both sides for square, tall and wide matrices.  SciPy's polar gives float64 for
    float32 input; ours keeps float32."""
    cases = []
    for side in ("right", "left"):
        for shape in ((3, 3), (4, 3), (3, 4)):
            cases.append(_scipy(
                f"polar_{side}_{shape[0]}x{shape[1]}", _same,
                lambda a, side=side: fsl.polar(a, side),
                _cast_like(lambda a, side=side: sl.polar(a, side)), A(*shape), tol=1e-6))
    cases.append(_scipy("polar_svd_batched", _same, lambda a: fsl.polar(a, method="svd"),
                        _cast_like(sl.polar), A(2, 3, 3), tol=1e-6, batched=True))
    return cases


SCIPY_CASES += _special_matrix_cases() + _polar_cases()


NUMPY_LINALG_CASES = [
    numpy_case("linalg.matrix_power_3", lambda m, a: m.linalg.matrix_power(a, 3), A(3, 3),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.matrix_power_0", lambda m, a: m.linalg.matrix_power(a, 0), A(2, 3, 3),
               dtypes=WITH_COMPLEX, diff=False),
    numpy_case("linalg.matrix_power_negative_batched",
               lambda m, a: m.linalg.matrix_power(_general(m, a), -2), A(2, 3, 3),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.multi_dot_vectors", lambda m, a, b, c, d: m.linalg.multi_dot(
        [a, b, c, d]), A(4), A(4, 3), A(3, 5), A(5), dtypes=WITH_COMPLEX),
    numpy_case("linalg.multi_dot_matrices", lambda m, a, b, c: m.linalg.multi_dot([a, b, c]),
               A(2, 6), A(6, 3), A(3, 4)),
    numpy_case("linalg.cross", lambda m, a, b: m.linalg.cross(a, b), A(4, 3), A(3),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.cross_axis0", lambda m, a, b: m.linalg.cross(a, b, axis=0), A(3, 2),
               A(3, 2)),
    numpy_case("linalg.outer", lambda m, a, b: m.linalg.outer(a, b), A(3), A(4),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.tensorinv", lambda m, a: m.linalg.tensorinv(
        m.reshape(_general(m, m.reshape(a, (6, 6))), (6, 2, 3)), ind=1), A(6, 6)),
    numpy_case("linalg.tensorsolve", lambda m, a, b: m.linalg.tensorsolve(
        m.reshape(_general(m, a), (2, 3, 6)), b), A(6, 6), A(2, 3), dtypes=WITH_COMPLEX),
    numpy_case("linalg.tensorsolve_axes", lambda m, a, b: m.linalg.tensorsolve(
        m.reshape(_general(m, a), (2, 6, 3)), b, axes=(1,)), A(6, 6), A(2, 3)),
    numpy_case("linalg.vecdot", lambda m, a, b: m.linalg.vecdot(a, b), A(3, 4), A(4),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.vecdot_axis0", lambda m, a, b: m.linalg.vecdot(a, b, axis=0),
               A(3, 4), A(3, 4), dtypes=WITH_COMPLEX),
    numpy_case("linalg.trace_offset", lambda m, a: m.linalg.trace(a, offset=1), A(2, 3, 4),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.diagonal_offset", lambda m, a: m.linalg.diagonal(a, offset=-1),
               A(2, 3, 4), dtypes=WITH_COMPLEX),
    numpy_case("linalg.matmul", lambda m, a, b: m.linalg.matmul(a, b), A(2, 3, 4), A(4, 2),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.matrix_transpose", lambda m, a: m.linalg.matrix_transpose(a),
               A(2, 3, 4), dtypes=WITH_COMPLEX),
    numpy_case("linalg.matrix_norm", lambda m, a: m.linalg.matrix_norm(a, keepdims=True),
               A(2, 3, 4), dtypes=WITH_COMPLEX),
    numpy_case("linalg.vector_norm", lambda m, a: m.linalg.vector_norm(a), A(2, 3, 4),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.vector_norm_axes_keepdims",
               lambda m, a: m.linalg.vector_norm(a, axis=(0, 2), keepdims=True), A(2, 3, 4)),
]

NUMPY_CASES = NUMPY_LINALG_CASES + SCIPY_CASES


def _parts(z):
    return lax.concatenate([lax.real(z), lax.imag(z)], len(np.shape(z)) - 1)


PRIMITIVE_CASES = [
    Case("expm", expm, [A(3, 3)]),
    Case("expm_batched", lambda a: expm(lax.mul(a, 3.0)), [A(2, 3, 3)], tol=1e-6),
    Case("expm_complex", lambda a, b: _parts(expm(lax.complex(a, b))), [A(3, 3), A(3, 3)]),
    Case("expm_frechet", expm_frechet, [A(3, 3), A(3, 3)]),
    Case("expm_frechet_batched", expm_frechet, [A(2, 3, 3), A(2, 3, 3)]),
]
