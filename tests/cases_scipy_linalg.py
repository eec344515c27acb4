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
from functrans.core import get_aval
from functrans.primitives.decompositions import hessenberg, schur, sylvester
from functrans.primitives.matrix_functions import expm, expm_frechet, sqrtm
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


def _complex_like(f):
    """SciPy's result as the complex dtype of the input's precision (``sqrtm`` and ``funm``
    are complex in JAX and here; SciPy's are real where they can be, and float64 for
    float32 input in older releases)."""
    def reference(a, *rest):
        dtype = np.result_type(np.asarray(a).dtype, np.complex64)
        return np.asarray(f(a, *rest)).astype(dtype)
    return reference


def _shifted(m, x):
    """``x + 4 I``: for the sweep's draws, eigenvalues in the right half plane, away from
    the principal square root's branch cut and from each other's negatives (Sylvester)."""
    return x + 4 * _identity(m, x)


def _sylvester_inputs(m, a, b, c):
    return _shifted(m, a), _shifted(m, b), c


def _sylvester_complex_inputs(m, ar, ai, br, bi, cr, ci):
    return _shifted(m, ar + 1j * ai), _shifted(m, br + 1j * bi), cr + 1j * ci


def _real_schur_form(m, t, z):
    """A real Schur form from a draw ``t`` of shape (..., 4, 4): 2 x 2 blocks on the
    diagonal at rows 0-1 and 2-3 (complex conjugate eigenvalues: their off-diagonal
    entries of opposite signs outweigh the diagonal's difference), zero below them and
    between them; ``z`` (any matrix: rsf2csf is linear in it) as drawn."""
    def x(i, j):
        return t[..., i, j]
    zero = 0 * x(0, 0)
    rows = [[x(0, 0), 1 + m.abs(x(0, 1)), x(0, 2), x(0, 3)],
            [-(1 + m.abs(x(1, 0))), x(0, 0) + 0.2 * x(1, 1), x(1, 2), x(1, 3)],
            [zero, zero, x(2, 2), 1 + m.abs(x(2, 3))],
            [zero, zero, -(1 + m.abs(x(3, 2))), x(2, 2) - 0.2 * x(3, 3)]]
    return m.stack([m.stack(row, axis=-1) for row in rows], axis=-2), z


def _hermitian_tridiagonal(d, e):
    """The dense matrix of eigh_tridiagonal, with NumPy: ``real(d)`` on the diagonal, ``e``
    above it and ``conj(e)`` below."""
    d, e = np.asarray(d), np.asarray(e)
    n = d.shape[-1]
    matrix = np.zeros(d.shape + (n,), d.dtype)
    index = np.arange(n)
    matrix[..., index, index] = d.real
    matrix[..., index[:-1], index[1:]] = e
    matrix[..., index[1:], index[:-1]] = np.conj(e)
    return matrix


def _tridiagonal_values(d, e):
    return np.linalg.eigvalsh(_hermitian_tridiagonal(d, e))


def _tridiagonal_squared(m, w_v):
    """Eigenvalues and ``|eigenvectors|²`` (free of each column's sign or phase)."""
    w, v = w_v
    return w, _abs_squared(m, v)


def _tridiagonal_complex(m, d, er, ei):
    return d + 0j, er + 1j * ei


def _schur_complex_reference(a):
    return sl.schur(a.astype(np.result_type(a.dtype, np.complex64)), "complex")


def _decomposition_cases():
    """The Schur and Hessenberg forms and what is built on them (tests/test_scipy_linalg.py
    has their errors, JAX's values and the derivatives' finer checks).  ``schur`` and
    ``funm`` have no derivative (values and vmap only); the others are swept in both modes
    to second order, complex derivatives through complex inputs made of real parts (the
    sweep differentiates real draws)."""
    parts = (F64, F32)
    return [
        _scipy("schur", _same, fsl.schur, _cast_like(sl.schur), A(4, 4), dtypes=INEXACT,
               diff=False),
        _scipy("schur_complex_output", _same, lambda a: fsl.schur(a, "complex"),
               _schur_complex_reference, A(3, 3), dtypes=WITH_COMPLEX, diff=False),
        _scipy("schur_batched", _same, fsl.schur, _cast_like(sl.schur), A(2, 3, 3),
               dtypes=INEXACT, diff=False, batched=True),
        _scipy("rsf2csf", _real_schur_form, fsl.rsf2csf, sl.rsf2csf, A(4, 4), A(4, 4),
               dtypes=parts, tol=1e-6),
        _scipy("rsf2csf_batched", _real_schur_form, fsl.rsf2csf, sl.rsf2csf, A(2, 4, 4),
               A(2, 4, 4), dtypes=parts, tol=1e-6, batched=True),
        _scipy("rsf2csf_of_schur", _same, lambda a: fsl.rsf2csf(*fsl.schur(a)),
               lambda a: sl.rsf2csf(*sl.schur(a)), A(4, 4), dtypes=parts, diff=False),
        _scipy("funm_exp", _same, lambda a: fsl.funm(a, fnp.exp),
               _complex_like(lambda a: sl.funm(a, np.exp)), A(3, 3), dtypes=INEXACT,
               diff=False),
        _scipy("funm_sin_batched", _same, lambda a: fsl.funm(a, fnp.sin),
               _complex_like(lambda a: sl.funm(a, np.sin)), A(2, 3, 3), dtypes=INEXACT,
               diff=False, batched=True),
        _scipy("hessenberg", _same, lambda a: fsl.hessenberg(a, calc_q=True),
               _cast_like(lambda a: sl.hessenberg(a, calc_q=True)), A(4, 4), dtypes=INEXACT),
        _scipy("hessenberg_h", _same, fsl.hessenberg, _cast_like(sl.hessenberg), A(5, 5),
               dtypes=INEXACT),
        _scipy("hessenberg_complex_parts", lambda m, x, y: (x + 1j * y,),
               lambda a: fsl.hessenberg(a, calc_q=True),
               _cast_like(lambda a: sl.hessenberg(a, calc_q=True)), A(4, 4), A(4, 4),
               dtypes=parts),
        _scipy("hessenberg_batched", _same, lambda a: fsl.hessenberg(a, calc_q=True),
               _cast_like(lambda a: sl.hessenberg(a, calc_q=True)), A(2, 3, 3),
               dtypes=INEXACT, batched=True),
        _scipy("sqrtm", _one(_shifted), fsl.sqrtm, _complex_like(sl.sqrtm), A(3, 3),
               tol=1e-6),
        _scipy("sqrtm_complex_parts", lambda m, x, y: (_shifted(m, x + 1j * y),), fsl.sqrtm,
               _complex_like(sl.sqrtm), A(3, 3), A(3, 3), dtypes=parts, tol=1e-6),
        _scipy("sqrtm_batched", _one(_shifted), fsl.sqrtm, _complex_like(sl.sqrtm),
               A(2, 3, 3), dtypes=INEXACT, tol=1e-6, batched=True),
        _scipy("solve_sylvester", _sylvester_inputs, fsl.solve_sylvester,
               _cast_like(sl.solve_sylvester), A(3, 3), A(2, 2), A(3, 2)),
        _scipy("solve_sylvester_complex_parts", _sylvester_complex_inputs,
               fsl.solve_sylvester, _cast_like(sl.solve_sylvester), A(2, 2), A(2, 2),
               A(3, 3), A(3, 3), A(2, 3), A(2, 3), dtypes=parts),
        _scipy("solve_sylvester_batched", _sylvester_inputs, fsl.solve_sylvester,
               _cast_like(sl.solve_sylvester), A(2, 3, 3), A(2, 2, 2), A(2, 3, 2),
               dtypes=INEXACT, batched=True),
    ]


def _tridiagonal_and_qr_multiply_cases():
    parts = (F64, F32)
    cases = [
        _scipy("eigh_tridiagonal_eigvals_only", _same,
               lambda d, e: fsl.eigh_tridiagonal(d, e, eigvals_only=True),
               _tridiagonal_values, A(5), A(4), dtypes=INEXACT),
        _scipy("eigh_tridiagonal", _same,
               lambda d, e: _tridiagonal_squared(fnp, fsl.eigh_tridiagonal(d, e)),
               lambda d, e: _tridiagonal_squared(np, np.linalg.eigh(
                   _hermitian_tridiagonal(d, e))), A(4), A(3), dtypes=INEXACT),
        _scipy("eigh_tridiagonal_complex_parts", _tridiagonal_complex,
               lambda d, e: _tridiagonal_squared(fnp, fsl.eigh_tridiagonal(d, e)),
               lambda d, e: _tridiagonal_squared(np, np.linalg.eigh(
                   _hermitian_tridiagonal(d, e))), A(4), A(3), A(3), dtypes=parts),
        _scipy("eigh_tridiagonal_select_i", _same,
               lambda d, e: fsl.eigh_tridiagonal(d, e, eigvals_only=True, select="i",
                                                 select_range=(1, 3)),
               lambda d, e: _tridiagonal_values(d, e)[..., 1:4], A(5), A(4), dtypes=INEXACT),
        _scipy("eigh_tridiagonal_batched", _same,
               lambda d, e: fsl.eigh_tridiagonal(d, e, eigvals_only=True),
               _tridiagonal_values, A(2, 4), A(2, 3), dtypes=INEXACT),
    ]
    for shape in ((4, 3), (3, 4), (3, 3)):
        m, n = shape
        k = min(m, n)
        for mode, c in (("left", (k, 2)), ("right", (2, m))):
            cases.append(_scipy(
                f"qr_multiply_{mode}_{m}x{n}", _same,
                lambda a, c, mode=mode: fsl.qr_multiply(a, c, mode),
                _cast_like(lambda a, c, mode=mode: sl.qr_multiply(a, c, mode)),
                A(*shape), A(*c)))
    cases += [
        _scipy("qr_multiply_conjugate_left", _same,
               lambda a, c: fsl.qr_multiply(a, c, "left", conjugate=True),
               _cast_like(lambda a, c: sl.qr_multiply(a, c, "left", conjugate=True)),
               A(4, 3), A(3, 2)),
        _scipy("qr_multiply_conjugate_right_parts",
               lambda m, x, y, c: (x + 1j * y, c),
               lambda a, c: fsl.qr_multiply(a, c, conjugate=True),
               _cast_like(lambda a, c: sl.qr_multiply(a, c, conjugate=True)),
               A(4, 3), A(4, 3), A(2, 4), dtypes=parts),
        _scipy("qr_multiply_vector_right", _same, fsl.qr_multiply,
               _cast_like(sl.qr_multiply), A(4, 3), A(4)),
        _scipy("qr_multiply_vector_left", _same, lambda a, c: fsl.qr_multiply(a, c, "left"),
               _cast_like(lambda a, c: sl.qr_multiply(a, c, "left")), A(3, 4), A(3)),
        _scipy("qr_multiply_right_batched", _same, fsl.qr_multiply, _cast_like(sl.qr_multiply),
               A(2, 4, 3), A(2, 2, 4), batched=True),
    ]
    return cases


SCIPY_CASES += (_special_matrix_cases() + _polar_cases() + _decomposition_cases()
                + _tridiagonal_and_qr_multiply_cases())


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


def _shift(x):
    """``x + 4 I`` with lax: eigenvalues in the right half plane for the sweep's draws."""
    n = np.shape(x)[-1]
    eye = lax.broadcast_in_dim(lax.convert_element_type(lax.eq(
        lax.broadcasted_iota(np.int32, (n, n), 0, like=x),
        lax.broadcasted_iota(np.int32, (n, n), 1, like=x)), get_aval(x).dtype), np.shape(x),
        (len(np.shape(x)) - 2, len(np.shape(x)) - 1))
    return lax.add(x, lax.mul(eye, 4.0))


PRIMITIVE_CASES = [
    Case("expm", expm, [A(3, 3)]),
    Case("expm_batched", lambda a: expm(lax.mul(a, 3.0)), [A(2, 3, 3)], tol=1e-6),
    Case("expm_complex", lambda a, b: _parts(expm(lax.complex(a, b))), [A(3, 3), A(3, 3)]),
    Case("expm_frechet", expm_frechet, [A(3, 3), A(3, 3)]),
    Case("expm_frechet_batched", expm_frechet, [A(2, 3, 3), A(2, 3, 3)]),
    Case("sqrtm", lambda a: _parts(sqrtm(_shift(a))), [A(3, 3)], tol=1e-6),
    Case("sqrtm_complex", lambda a, b: _parts(sqrtm(_shift(lax.complex(a, b)))),
         [A(3, 3), A(3, 3)], tol=1e-6),
    Case("sqrtm_batched", lambda a: _parts(sqrtm(_shift(a))), [A(2, 3, 3)], tol=1e-6),
    Case("sylvester", lambda a, b, c: sylvester(_shift(a), _shift(b), c),
         [A(3, 3), A(2, 2), A(3, 2)]),
    Case("sylvester_complex", lambda ar, ai, br, bi, cr, ci: _parts(sylvester(
        _shift(lax.complex(ar, ai)), _shift(lax.complex(br, bi)), lax.complex(cr, ci))),
        [A(2, 2), A(2, 2), A(3, 3), A(3, 3), A(2, 3), A(2, 3)]),
    Case("sylvester_batched", lambda a, b, c: sylvester(_shift(a), _shift(b), c),
         [A(2, 3, 3), A(2, 2, 2), A(2, 3, 2)]),
    Case("hessenberg", lambda a: lax.concatenate(list(hessenberg(a)), 1), [A(4, 4)]),
    Case("hessenberg_complex", lambda a, b: _parts(lax.concatenate(
        list(hessenberg(lax.complex(a, b))), 1)), [A(4, 4), A(4, 4)]),
    Case("hessenberg_batched", lambda a: lax.concatenate(list(hessenberg(a)), 2),
         [A(2, 3, 3)]),
    # values and batching only: the Schur decomposition has no derivative
    Case("schur", lambda a: lax.concatenate(list(schur(a)), 1), [A(4, 4)],
         differentiable=False),
    Case("schur_complex_batched", lambda a, b: _parts(lax.concatenate(
        list(schur(lax.complex(a, b))), 2)), [A(2, 3, 3), A(2, 3, 3)], differentiable=False),
]
