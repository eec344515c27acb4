"""Sweep cases of the shape, creation, contraction, polynomial and functional additions to
functrans.numpy (append ... kron, meshgrid, einsum's forms, matvec/vecdot,
polyval ... unwrap, vectorize, apply_along_axis): values against NumPy, derivatives in both
modes to second order, vmap against a loop and float32, by tests/test_numpy.py.

Functions that build constants only (windows, ``tri``) have no traced output to sweep: the
``CREATION_CASES`` of tests/cases_creation.py check them; errors and documented choices are
checked in tests/test_misc.py."""
from __future__ import annotations

import numpy as np

from sweep import F32, F64, I64, A, numpy_case

ALL = (F64, F32, I64)
FLOATS = (F64, F32)
C = numpy_case

# Knots for interp, fixed so that random draws are far from them; made on the device of the
# sample points (no host constants in the sweep).
_XP = np.array([-1.5, -0.2, 0.7, 2.0])


def _knots(m, x):
    return m.concatenate([m.full_like(x.ravel()[:1], v) for v in _XP])


def _vectorize_case(m):
    return m.vectorize(lambda a, v: m.dot(a, v) * m.sin(v[0]), signature="(m,n),(n)->(m)")


NUMPY_CASES = [
    # shape
    C("append_flat", lambda m, x, y: m.append(x, y), A(2, 2), A(3)),
    C("append_axis1", lambda m, x, y: m.append(x, y, axis=1), A(2, 2), A(2, 1)),
    C("insert_int_block", lambda m, x, y: m.insert(x, 1, y, axis=1), A(2, 3), A(2)),
    C("insert_positions", lambda m, x, y: m.insert(x, [0, 2, 2], y), A(4), A(3)),
    C("delete_slice_axis1", lambda m, x: m.delete(x, slice(0, 3, 2), axis=1), A(2, 4)),
    C("resize_grow", lambda m, x: m.resize(x, (3, 3)), A(2, 2)),
    C("block_2x2", lambda m, a, b, c, d: m.block([[a, b], [c, d]]), A(2, 2), A(2, 1), A(1, 2),
      A(1, 1)),
    C("column_stack", lambda m, x, y: m.column_stack([x, y]), A(3), A(3, 2)),
    C("dstack", lambda m, x, y: m.dstack([x, y]), A(2, 3), A(2, 3)),
    C("array_split_uneven", lambda m, x: m.array_split(x, 3, axis=1), A(2, 5)),
    C("hsplit", lambda m, x: m.hsplit(x, 2), A(2, 4)),
    C("vsplit", lambda m, x: m.vsplit(x, [1]), A(3, 2)),
    C("dsplit", lambda m, x: m.dsplit(x, 2), A(1, 2, 4)),
    C("unstack_axis1", lambda m, x: m.unstack(x, axis=1), A(2, 3)),
    C("rot90_k3_axes", lambda m, x: m.rot90(x, 3, axes=(2, 0)), A(2, 3, 2)),
    C("rot90_k1", lambda m, x: m.rot90(x), A(2, 3)),
    C("fliplr", lambda m, x: m.fliplr(x), A(2, 3)),
    C("flipud", lambda m, x: m.flipud(x), A(3, 2)),
    C("rollaxis", lambda m, x: m.rollaxis(x, 2, 1), A(2, 3, 4)),
    C("matrix_transpose", lambda m, x: m.matrix_transpose(x), A(2, 3, 4)),
    C("permute_dims", lambda m, x: m.permute_dims(x, (1, 2, 0)), A(2, 3, 4)),
    C("concat", lambda m, x, y: m.concat([x, y], axis=1), A(2, 1), A(2, 3)),
    C("atleast_3d", lambda m, x, y: m.atleast_3d(x, y), A(3), A(2, 2)),
    C("kron", lambda m, x, y: m.kron(x, y), A(2, 3), A(2, 1, 2)),
    # creation next to arrays
    C("diagflat", lambda m, x: m.diagflat(x, -1), A(2, 2)),
    C("meshgrid_xy", lambda m, x, y: m.meshgrid(x, y), A(3), A(2)),
    C("meshgrid_ij_sparse", lambda m, x, y, z: m.meshgrid(x, y, z, indexing="ij", sparse=True),
      A(2), A(3), A(2)),
    # contractions
    C("einsum_ellipsis_batch", lambda m, x, y: m.einsum("...ij,...jk->...ik", x, y),
      A(2, 2, 3), A(3, 2), dtypes=FLOATS),
    C("einsum_diagonal_implicit", lambda m, x, y: m.einsum("iij,jk", x, y), A(2, 2, 3),
      A(3, 2), dtypes=FLOATS),
    C("einsum_three_operands_optimal",
      lambda m, x, y, z: m.einsum("ij,jk,kl->li", x, y, z, optimize="optimal"), A(2, 3),
      A(3, 4), A(4, 2), dtypes=FLOATS),
    C("einsum_sublists", lambda m, x, y: m.einsum(x, [0, 1], y, [1, Ellipsis], [Ellipsis, 0]),
      A(2, 3), A(3, 2), dtypes=FLOATS),
    C("matvec", lambda m, x, y: m.matvec(x, y), A(2, 3, 2), A(2), dtypes=FLOATS),
    C("vecmat", lambda m, x, y: m.vecmat(x, y), A(3), A(2, 3, 2), dtypes=FLOATS),
    C("vecdot_axis0", lambda m, x, y: m.vecdot(x, y, axis=0), A(3, 2), A(3, 1), dtypes=FLOATS),
    # polynomials
    C("polyval", lambda m, p, x: m.polyval(p, x), A(4), A(2, 3)),
    C("polyadd", lambda m, x, y: m.polyadd(x, y), A(2), A(4)),
    C("cross_3d", lambda m, x, y: m.cross(x, y), A(4, 3), A(3)),
    C("cross_axes", lambda m, x, y: m.cross(x, y, axisa=0, axisb=-1, axisc=0), A(3, 2), A(2, 3)),
    # A 2-vector is a 3-vector with z = 0, as in jax.numpy and NumPy before 2.5 (which
    # refuses 2-vectors): the reference pads it.
    C("cross_2d_with_3d", lambda m, x, y: m.cross(x, y), A(2), A(2, 3),
      reference=lambda x, y: np.cross(np.concatenate([x, np.zeros(1, x.dtype)]), y)),
    C("linalg_tensordot", lambda m, x, y: m.linalg.tensordot(x, y, axes=1), A(2, 3), A(3, 2),
      dtypes=FLOATS),
    C("packbits", lambda m, x: m.packbits(x > 0, axis=1), A(2, 11), dtypes=(F64,), diff=False),
    C("unpackbits", lambda m, x: m.unpackbits(m.packbits(x > 0), count=9), A(13), dtypes=(F64,),
      diff=False),
    # The roots of the polynomial with distinct real roots r, through the companion matrix's
    # eigenvalues (real parts; NumPy has no strip_zeros).
    C("roots_of_poly", lambda m, r: m.real(m.roots(m.poly(r), strip_zeros=False)),
      A(3, kind="spread"), dtypes=(F64,),
      reference=lambda r: np.real(np.roots(np.poly(r)))),
    C("poly_of_matrix", lambda m, a: m.real(m.poly(a + a.T)), A(3, 3), dtypes=(F64,),
      reference=lambda a: np.poly(a + a.T)),
    C("polysub", lambda m, x, y: m.polysub(x, y), A(3), A(2)),
    C("polymul", lambda m, x, y: m.polymul(x, y), A(3), A(2)),
    C("polydiv", lambda m, u, v: m.polydiv(u, v), A(4), A(2, kind="away0"), dtypes=FLOATS,
      reference=lambda u, v: (np.polydiv(u, v)[0], _full_remainder(u, v))),
    # NumPy multiplies by an int64 arange, which promotes float32; JAX (and we) keep float32.
    C("polyder", lambda m, p: m.polyder(p, 2), A(4),
      reference=lambda p: np.polyder(p, 2).astype(p.dtype)),
    # NumPy turns k into a float64 array, which promotes float32 coefficients; JAX does not.
    C("polyint", lambda m, p, k: m.polyint(p, 2, k=k), A(3), A(2), dtypes=FLOATS,
      reference=lambda p, k: np.polyint(p, 2, k=k).astype(p.dtype)),
    C("polyint_default_k", lambda m, p: m.polyint(p), A(3), dtypes=FLOATS,
      reference=lambda p: np.polyint(p).astype(p.dtype)),
    C("poly", lambda m, r: m.poly(r), A(3), dtypes=FLOATS),
    # NumPy's polyfit and vander compute float32 input in float64; JAX (and we) keep float32.
    C("polyfit", lambda m, x, y: m.polyfit(x, y, 2), A(5, kind="spread"), A(5), dtypes=FLOATS,
      tol=1e-6, reference=lambda x, y: np.polyfit(x, y, 2).astype(y.dtype)),
    C("vander", lambda m, x: m.vander(x, 4), A(3),
      reference=lambda x: np.vander(x, 4).astype(x.dtype)),
    # sampled calculus
    # NumPy's interp always returns float64; JAX (and we) keep the inputs' float32.
    C("interp", lambda m, x, fp: m.interp(x, _knots(m, x), fp), A(2, 3), A(4),
      dtypes=FLOATS, reference=lambda x, fp: np.interp(x, _XP, fp).astype(x.dtype)),
    C("interp_left_right",
      lambda m, x, fp: m.interp(x, _knots(m, x), fp, left=-3.0, right=fp[1]), A(5),
      A(4), dtypes=FLOATS,
      reference=lambda x, fp: np.interp(x, _XP, fp, left=-3.0, right=fp[1]).astype(x.dtype)),
    C("gradient_coordinates_edge2",
      lambda m, f, c: m.gradient(f, m.cumsum(m.abs(c) + 0.5), 2.0, edge_order=2),
      A(4, 3), A(4), dtypes=FLOATS),
    C("gradient_axis0", lambda m, f: m.gradient(f, axis=0), A(3, 2), dtypes=FLOATS),
    C("trapezoid_x", lambda m, y, x: m.trapezoid(y, m.cumsum(m.abs(x)), axis=0), A(4, 2), A(4),
      dtypes=FLOATS),
    C("trapezoid_dx", lambda m, y: m.trapezoid(y, dx=0.5), A(2, 4), dtypes=FLOATS),
    C("ediff1d", lambda m, x, e: m.ediff1d(x, to_end=e, to_begin=-1.0), A(2, 3), A(2),
      dtypes=FLOATS),
    C("unwrap", lambda m, p: m.unwrap(3.0 * p, axis=0), A(5, 2), dtypes=FLOATS),
    # functional
    C("vectorize_signature", lambda m, a, v: _vectorize_case(m)(a, v), A(2, 3, 2), A(3, 1, 2),
      dtypes=FLOATS),
    C("apply_along_axis", lambda m, x: m.apply_along_axis(lambda v: m.cumsum(v) * v[0], 1, x),
      A(2, 3, 2), dtypes=FLOATS),
    C("apply_over_axes", lambda m, x: m.apply_over_axes(m.sum, x, [0, 2]), A(2, 3, 2)),
]


def _full_remainder(u, v):
    """NumPy's remainder padded with leading zeros to ``u``'s length, as JAX returns it."""
    r = np.polydiv(u, v)[1]
    return np.concatenate([np.zeros(len(u) - len(r), r.dtype), r])
