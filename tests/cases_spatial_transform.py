"""Sweep cases of ``functrans.scipy.spatial.transform`` (``Rotation``, ``Slerp``), each
against ``scipy.spatial.transform``: checked by tests/test_numpy.py (values in float64 and
float32, concrete and through a type-checked jaxpr; both modes to second order against
numerical differences; vmap against a loop).

Inputs are standard normal draws: quaternions (normalised by ``from_quat``), rotation
vectors and Euler angles, which keep the rotations away from the sets where a conversion
jumps or kinks (a quaternion's ``w = 0``, where ``as_rotvec`` and ``as_mrp`` switch
sign; a gimbal lock of ``as_euler``; the wrap of angles at +-pi) with the fixed seeds.
SciPy computes in float64; its results are cast to the input's dtype, which functrans
(as JAX) keeps.  Slerp's query times are drawn inside the key times, away from the keys,
where the interpolation has kinks.
"""
from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation as SciPyRotation
from scipy.spatial.transform import Slerp as SciPySlerp

from functrans.scipy.spatial.transform import Rotation, Slerp
from sweep import F32, F64, A, numpy_case

REAL = (F64, F32)

#: Slerp's key times (static) and where query times fall: a draw u in (-0.8, 0.8) maps to
#: 2 + 2.4 u, in (0.08, 3.92), through every interval.
KEY_TIMES = np.array([0.0, 1.0, 2.5, 3.0, 4.0])


def _case(name, ours, theirs, *args, tol=1e-7):
    """``ours(*xs)`` against ``theirs(*xs)`` (SciPy, in float64), cast to the inputs'
    dtype."""
    def reference(*xs):
        dtype = np.result_type(*xs)
        out = theirs(*[np.asarray(x, np.float64) for x in xs])
        return np.asarray(out).astype(dtype)
    return numpy_case(f"spatial.transform.{name}", lambda m, *xs: ours(*xs), *args,
                      dtypes=REAL, tol=tol, reference=reference)


def _scipy_canonical(quat):
    """SciPy's canonical quaternions (``as_quat(canonical=True)`` is SciPy 1.11's, and
    older SciPy lacks it, but CI's oldest is 1.13)."""
    return SciPyRotation.from_quat(quat).as_quat(canonical=True)


Q, V = A(5, 4), A(5, 3)
EULER = ["xyz", "ZYX", "zxz", "XZX", "yxz", "YZY"]

NUMPY_CASES = [
    _case("from_quat", lambda q: Rotation.from_quat(q).quat,
          lambda q: SciPyRotation.from_quat(q).as_quat(), Q),
    _case("as_matrix", lambda q: Rotation.from_quat(q).as_matrix(),
          lambda q: SciPyRotation.from_quat(q).as_matrix(), Q),
    _case("as_matrix_single", lambda q: Rotation.from_quat(q).as_matrix(),
          lambda q: SciPyRotation.from_quat(q).as_matrix(), A(4)),
    _case("apply", lambda q, v: Rotation.from_quat(q).apply(v),
          lambda q, v: SciPyRotation.from_quat(q).apply(v), Q, V),
    _case("apply_inverse", lambda q, v: Rotation.from_quat(q).apply(v, inverse=True),
          lambda q, v: SciPyRotation.from_quat(q).apply(v, inverse=True), Q, V),
    _case("apply_single_to_many", lambda q, v: Rotation.from_quat(q).apply(v),
          lambda q, v: SciPyRotation.from_quat(q).apply(v), A(4), V),
    _case("apply_many_to_one", lambda q, v: Rotation.from_quat(q).apply(v),
          lambda q, v: SciPyRotation.from_quat(q).apply(v), Q, A(3)),
    _case("from_rotvec", lambda v: Rotation.from_rotvec(v).quat,
          lambda v: SciPyRotation.from_rotvec(v).as_quat(), V),
    _case("from_rotvec_degrees", lambda v: Rotation.from_rotvec(30 * v, degrees=True).quat,
          lambda v: SciPyRotation.from_rotvec(30 * v, degrees=True).as_quat(), V),
    _case("from_rotvec_small", lambda v: Rotation.from_rotvec(1e-4 * v).quat,
          lambda v: SciPyRotation.from_rotvec(1e-4 * v).as_quat(), V),
    _case("as_rotvec", lambda q: Rotation.from_quat(q).as_rotvec(),
          lambda q: SciPyRotation.from_quat(q).as_rotvec(), Q),
    _case("as_rotvec_degrees", lambda q: Rotation.from_quat(q).as_rotvec(degrees=True),
          lambda q: SciPyRotation.from_quat(q).as_rotvec(degrees=True), Q),
    _case("as_rotvec_small", lambda v: Rotation.from_rotvec(1e-4 * v).as_rotvec(),
          lambda v: SciPyRotation.from_rotvec(1e-4 * v).as_rotvec(), V),
    _case("from_matrix", lambda q: Rotation.from_matrix(
              Rotation.from_quat(q).as_matrix()).as_quat(canonical=True),
          lambda q: _scipy_canonical(SciPyRotation.from_matrix(
              SciPyRotation.from_quat(q).as_matrix()).as_quat()), Q),
    _case("as_mrp", lambda q: Rotation.from_quat(q).as_mrp(),
          lambda q: SciPyRotation.from_quat(q).as_mrp(), Q),
    _case("from_mrp", lambda v: Rotation.from_mrp(v).as_matrix(),
          lambda v: SciPyRotation.from_mrp(v).as_matrix(), V),
    _case("magnitude", lambda q: Rotation.from_quat(q).magnitude(),
          lambda q: SciPyRotation.from_quat(q).magnitude(), Q),
    _case("inv", lambda q: Rotation.from_quat(q).inv().as_matrix(),
          lambda q: SciPyRotation.from_quat(q).inv().as_matrix(), Q),
    _case("mul", lambda p, q: (Rotation.from_quat(p) * Rotation.from_quat(q)).quat,
          lambda p, q: (SciPyRotation.from_quat(p) * SciPyRotation.from_quat(q)).as_quat(),
          Q, Q),
    _case("mul_single", lambda p, q: (Rotation.from_quat(p) * Rotation.from_quat(q)).quat,
          lambda p, q: (SciPyRotation.from_quat(p) * SciPyRotation.from_quat(q)).as_quat(),
          A(4), Q),
    _case("as_quat_canonical_scalar_first",
          lambda q: Rotation.from_quat(q).as_quat(canonical=True, scalar_first=True),
          lambda q: np.roll(_scipy_canonical(q), 1, axis=-1), Q),
    _case("mean", lambda q: Rotation.from_quat(q).mean().as_matrix(),
          lambda q: SciPyRotation.from_quat(q).mean().as_matrix(), Q, tol=1e-6),
    _case("mean_weighted", lambda q, w: Rotation.from_quat(q).mean(w).as_matrix(),
          lambda q, w: SciPyRotation.from_quat(q).mean(w).as_matrix(), Q, A(5, kind="pos"),
          tol=1e-6),
    _case("slerp", lambda q, u: Slerp.init(KEY_TIMES, Rotation.from_quat(q))(
              2 + 2.4 * u).as_quat(),
          lambda q, u: SciPySlerp(KEY_TIMES, SciPyRotation.from_quat(q))(
              2 + 2.4 * u).as_quat(), Q, A(6, kind="unit")),
] + [
    _case(f"from_euler_{seq}", lambda a, s=seq: Rotation.from_euler(s, a).as_matrix(),
          lambda a, s=seq: SciPyRotation.from_euler(s, a).as_matrix(), V)
    for seq in EULER
] + [
    _case("from_euler_one_axis_degrees",
          lambda a: Rotation.from_euler("y", 40 * a, degrees=True).quat,
          lambda a: SciPyRotation.from_euler("y", 40 * a, degrees=True).as_quat(),
          A(5, 1)),
    _case("from_euler_two_axes", lambda a: Rotation.from_euler("XZ", a).quat,
          lambda a: SciPyRotation.from_euler("XZ", a).as_quat(), A(5, 2)),
] + [
    # (a draw of "zxz" has a middle angle of 0.09, near the gimbal lock at 0, where the
    # derivatives grow as 1 / sin: the numerical differences are good to 3e-6 there)
    _case(f"as_euler_{seq}", lambda q, s=seq: Rotation.from_quat(q).as_euler(s),
          lambda q, s=seq: SciPyRotation.from_quat(q).as_euler(s), Q, tol=1e-6)
    for seq in EULER
] + [
    _case("as_euler_degrees", lambda q: Rotation.from_quat(q).as_euler("zyz", degrees=True),
          lambda q: SciPyRotation.from_quat(q).as_euler("zyz", degrees=True), Q, tol=1e-5),
]
