"""Sweep cases of the arguments that match functrans's signatures to JAX's (see
tests/test_signature_parity.py): the reductions' ``where=`` masks, ``initial=`` values and
precomputed ``mean=`` (nan-skipping ones too), joins with ``dtype=``,
``ravel(order="F")``, ``array(ndmin=)``, ``take_along_axis(wrap_negative_indices=False)``,
the linear algebra options (``symmetrize_input=False``, ``slogdet(method="qr")``,
``subset_by_index``), ``preferred_element_type`` of the contractions, and ``where=`` of
``nn.softmax``, ``nn.log_softmax``, ``nn.standardize`` (with both algorithms) and
``scipy.special.logsumexp``.  tests/test_numpy.py and tests/test_primitives.py check them
(values against NumPy, derivatives in both modes and to second order, vmap against a
loop), tests/test_jit.py under ``jit`` and tests/test_standin.py on the CuPy stand-in."""
from __future__ import annotations

import numpy as np

import functrans.nn as nn
import functrans.numpy as fnp
import functrans.scipy.special as special
from functrans import lax
from sweep import F32, F64, I64, A, Case, numpy_case

ALL = (F64, F32, I64)
FLOATS = (F64, F32)
C = numpy_case


def _mask(m, x, every: int):
    """A fixed mask of ``x``'s shape, false at every ``every``-th element (so that each
    slice of these cases keeps at least two elements), made on ``x``'s device."""
    count = m.cumsum(m.ones_like(m.ravel(x)))
    return m.reshape(count % every != 1, m.shape(x))


def _spd_plus_upper(m, x, y):
    """``x xᵀ + 3 I`` plus the strict upper triangle of ``y``: a matrix whose lower
    triangle is symmetric positive definite (with ``m`` = functrans.numpy or numpy)."""
    return x @ m.swapaxes(x, -1, -2) + 3 * m.tril(m.triu(m.ones_like(x))) + m.triu(y, 1)


def _f64(x):
    """The products accumulate in the preferred dtype: the reference casts first."""
    return np.asarray(x, np.float64)


def _np_mask(x, every: int):
    """``_mask`` for the NumPy references."""
    return (np.arange(x.size) % every != 0).reshape(x.shape)


def _np_softmax(x, mask):
    e = np.where(mask, np.exp(x - np.max(np.where(mask, x, -np.inf), -1, keepdims=True)), 0)
    return e / np.sum(e, -1, keepdims=True)


def _np_standardize(x, mask, variance):
    mean = np.mean(x, -1, keepdims=True, where=mask)
    return (x - mean) / np.sqrt(variance(x, mean) + 1e-5)


def _nn_case(name, fun, reference, *args):
    return numpy_case(f"nn_{name}", lambda m, *xs: fun(*xs), *args, dtypes=FLOATS,
                      reference=reference)


def _sprinkled(m, x):
    """A "nonfinite" draw with its infinities made finite: nan at fixed places."""
    return m.where(m.isinf(x), 0.5, x)


NUMPY_CASES = [
    # where= and initial= of the sums and products
    C("sum_where_initial", lambda m, x: m.sum(x, axis=0, where=_mask(m, x, 3),
                                              initial=2), A(3, 4), dtypes=ALL),
    C("sum_where_broadcast_keepdims", lambda m, x, w: m.sum(x, 1, None, None, True, 0, w),
      A(3, 4), A(4, kind="bool"), dtypes=ALL),
    C("prod_where_initial", lambda m, x: m.prod(x, axis=1, where=_mask(m, x, 3),
                                                initial=2), A(3, 4), dtypes=ALL),
    # extrema with a mask need initial=; initial alone is a floor (ceiling) of the result
    C("max_where_initial", lambda m, x: m.max(x, axis=0, where=_mask(m, x, 4),
                                              initial=-0.5), A(4, 3, kind="spread"),
      dtypes=FLOATS),
    C("min_initial", lambda m, x: m.min(x, axis=1, initial=0.1), A(3, 4, kind="spread"),
      dtypes=FLOATS),
    C("amax_initial_keepdims", lambda m, x: m.amax(x, 0, None, True, 0.1),
      A(3, 4, kind="spread"), dtypes=FLOATS),
    # means and variances over the masked elements, and with a given mean
    C("mean_where", lambda m, x: m.mean(x, axis=1, where=_mask(m, x, 3)), A(3, 4),
      dtypes=ALL),
    C("mean_where_all_axes", lambda m, x: m.mean(x, where=_mask(m, x, 3)), A(3, 4)),
    C("var_where_ddof", lambda m, x: m.var(x, axis=0, where=_mask(m, x, 4), ddof=1),
      A(4, 3)),
    C("std_where_keepdims", lambda m, x: m.std(x, axis=1, where=_mask(m, x, 3),
                                               keepdims=True), A(3, 4)),
    C("var_given_mean", lambda m, x, c: m.var(x, axis=0, mean=c), A(4, 3), A(1, 3)),
    C("std_given_mean_dtype_positional", lambda m, x, c: m.std(x, 1, None, None, 0, True,
                                                               mean=c), A(3, 4), A(3, 1)),
    C("all_where", lambda m, x: m.all(x > -0.5, axis=1, where=_mask(m, x, 3)),
      A(3, 4), diff=False),
    C("any_where", lambda m, x: m.any(x > 0.5, axis=0, where=_mask(m, x, 3)),
      A(3, 4), diff=False),
    # the nan-skipping reductions with the same arguments
    C("nansum_where_initial", lambda m, x: m.nansum(_sprinkled(m, x), axis=0,
                                                    where=_mask(m, x, 4), initial=1.0),
      A(4, 5, kind="nonfinite"), dtypes=FLOATS),
    C("nanprod_where", lambda m, x: m.nanprod(_sprinkled(m, x), axis=1,
                                              where=_mask(m, x, 4)),
      A(4, 5, kind="nonfinite"), dtypes=FLOATS),
    C("nanmax_where_initial", lambda m, x: m.nanmax(_sprinkled(m, x), axis=1,
                                                    where=_mask(m, x, 4), initial=-3.0),
      A(4, 5, kind="nonfinite"), dtypes=FLOATS),
    C("nanmin_initial", lambda m, x: m.nanmin(_sprinkled(m, x), axis=0, initial=3.0),
      A(4, 5, kind="nonfinite"), dtypes=FLOATS),
    C("nanmean_where", lambda m, x: m.nanmean(_sprinkled(m, x), axis=0,
                                              where=_mask(m, x, 4)),
      A(4, 5, kind="nonfinite"), dtypes=FLOATS),
    C("nanvar_where_given_mean", lambda m, x, c: m.nanvar(
        _sprinkled(m, x), axis=0, where=_mask(m, x, 4), mean=c),
      A(6, 3, kind="nonfinite"), A(1, 3), dtypes=FLOATS),
    C("nanstd_where_ddof", lambda m, x: m.nanstd(_sprinkled(m, x), axis=1, ddof=1,
                                                 where=_mask(m, x, 5)),
      A(3, 8, kind="nonfinite"), dtypes=FLOATS),
    # joining with a result dtype; column-major flattening; leading axes
    C("concatenate_dtype", lambda m, x, y: m.concatenate([x, y], axis=1, dtype=np.float64),
      A(2, 3), A(2, 1), dtypes=ALL),
    C("stack_dtype", lambda m, x, y: m.stack([x, y], 1, None, dtype=np.float64), A(2, 3), A(2, 3),
      dtypes=ALL),
    C("hstack_dtype", lambda m, x, y: m.hstack([x, y], dtype=np.complex128), A(3), A(2),
      dtypes=FLOATS),
    C("vstack_dtype", lambda m, x, y: m.vstack([x, y], dtype=np.float64), A(3), A(2, 3),
      dtypes=ALL),
    C("ravel_fortran_order", lambda m, x: m.ravel(x, order="F"), A(2, 3, 2), dtypes=ALL),
    C("array_ndmin", lambda m, x: m.array(x, ndmin=3), A(2, 3), dtypes=ALL),
    # linear algebra: the lower triangle alone (NumPy's reading), slogdet through QR,
    # contractions accumulating in a wider dtype
    C("linalg_cholesky_lower_triangle", lambda m, x, y: m.linalg.cholesky(
        _spd_plus_upper(m, x, y), symmetrize_input=False), A(3, 3), A(3, 3), dtypes=FLOATS,
      reference=lambda x, y: np.linalg.cholesky(_spd_plus_upper(np, x, y))),
    C("linalg_eigvalsh_lower_triangle", lambda m, x, y: m.linalg.eigvalsh(
        _spd_plus_upper(m, x, y), symmetrize_input=False), A(3, 3), A(3, 3), dtypes=FLOATS,
      reference=lambda x, y: np.linalg.eigvalsh(_spd_plus_upper(np, x, y))),
    C("linalg_slogdet_qr", lambda m, x: m.linalg.slogdet(x, method="qr"), A(2, 3, 3),
      dtypes=FLOATS, reference=np.linalg.slogdet),
    C("convolve_preferred_element_type", lambda m, x, y: m.convolve(
        x, y, preferred_element_type=np.float64, precision="highest"), A(4), A(3),
      dtypes=ALL, reference=lambda x, y: np.convolve(_f64(x), _f64(y))),
    C("correlate_preferred_element_type", lambda m, x, y: m.correlate(
        x, y, "same", preferred_element_type=np.float64), A(4), A(3),
      dtypes=ALL, reference=lambda x, y: np.correlate(_f64(x), _f64(y), "same")),
    C("linalg_vecdot_preferred_element_type", lambda m, x, y: m.linalg.vecdot(
        x, y, preferred_element_type=np.float64), A(2, 3), A(3), dtypes=ALL,
      reference=lambda x, y: np.linalg.vecdot(_f64(x), _f64(y))),
    # nn and scipy.special functions leaving entries out with where=
    _nn_case("softmax_where", lambda x: nn.softmax(x, where=_mask(fnp, x, 3)),
             lambda x: _np_softmax(x, _np_mask(x, 3)), A(3, 4)),
    _nn_case("log_softmax_where_kept", lambda x: fnp.where(
        _mask(fnp, x, 3), nn.log_softmax(x, axis=-1, where=_mask(fnp, x, 3)), 0.0),
             lambda x: np.where(_np_mask(x, 3), np.log(_np_softmax(x, _np_mask(x, 3))), 0.0),
             A(3, 4)),
    _nn_case("standardize_where_stable", lambda x: nn.standardize(
        x, where=_mask(fnp, x, 3), algorithm="stable"),
             lambda x: _np_standardize(x, _np_mask(x, 3), lambda x, mu: np.mean(
                 (x - mu) ** 2, -1, keepdims=True, where=_np_mask(x, 3))), A(3, 4)),
    _nn_case("standardize_fast", lambda x: nn.standardize(x, axis=-1, algorithm="fast"),
             lambda x: _np_standardize(x, True, lambda x, mu: np.mean(
                 x ** 2, -1, keepdims=True) - mu ** 2), A(3, 4)),
    _nn_case("special_logsumexp_where", lambda x: special.logsumexp(
        x, axis=1, where=_mask(fnp, x, 3)),
             lambda x: np.log(np.sum(np.exp(x), 1, where=_np_mask(x, 3))), A(3, 4)),
    # polyfit's diagnostics: residuals and singular values, the coefficients' covariance
    # (float64 only: NumPy fits float32 data in float64, functrans keeps float32)
    C("polyfit_full_diagnostics", lambda m, x, y: m.polyfit(x, y, 2, full=True)[1::2],
      A(7, kind="spread"), A(7, 2), dtypes=(F64,)),
    C("polyfit_cov", lambda m, x, y: m.polyfit(x, y, 2, cov=True), A(7, kind="spread"),
      A(7), dtypes=(F64,)),
    C("polyfit_cov_unscaled_weighted", lambda m, x, y, w: m.polyfit(
        x, y, 1, w=w, cov="unscaled")[1], A(6, kind="spread"), A(6, 2), A(6, kind="pos"),
      dtypes=(F64,)),
    # negative indices out of bounds rather than counted from the end
    C("take_along_axis_negatives_clamped", lambda m, x, i: m.take_along_axis(
        x, i, 1, mode="clip", wrap_negative_indices=False), A(2, 3), A(2, 4, kind="int"),
      dtypes=ALL, reference=lambda x, i: np.take_along_axis(x, np.clip(i, 0, 2), 1)),
    C("take_along_axis_negatives_filled", lambda m, x, i: m.take_along_axis(
        x, i, 0, mode="fill", fill_value=-1.0, wrap_negative_indices=False), A(3, 2),
      A(4, 2, kind="int"), dtypes=FLOATS, reference=lambda x, i: np.where(
          (i >= 0) & (i < 3), np.take_along_axis(x, np.clip(i, 0, 2), 0), -1.0)),
]


def _symmetric(x):
    return lax.add(x, lax.transpose(x, (1, 0)))


def _projector(v):
    """``v vᵀ``: the projector on the eigenvectors' span, free of their signs."""
    return lax.dot_general(v, v, (((1,), (1,)), ((), ())))


def _low_rank(x):
    """The product ``u diag(s) vh`` of the two smallest singular triplets: free of the
    triplets' signs."""
    u, s, vh = lax.linalg.svd(x, full_matrices=False, subset_by_index=(1, 3))
    return lax.dot_general(lax.mul(u, lax.broadcast_in_dim(s, (4, 2), (1,))), vh,
                           (((1,), (0,)), ((), ())))


PRIMITIVE_CASES = [
    Case("eigh_subset_eigenvalues", lambda x: lax.linalg.eigh(
        _symmetric(x), subset_by_index=(1, 3), sort_eigenvalues=True)[1], [A(4, 4)]),
    Case("eigh_subset_projector", lambda x: _projector(lax.linalg.eigh(
        _symmetric(x), subset_by_index=(2, 4), implementation=None)[0]), [A(4, 4)]),
    Case("svd_subset_values", lambda x: lax.linalg.svd(
        x, full_matrices=False, compute_uv=False, subset_by_index=(0, 2)), [A(4, 3)]),
    Case("svd_subset_low_rank", _low_rank, [A(4, 3)]),
]
