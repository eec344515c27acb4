"""``functrans.scipy.spatial.transform`` beyond the sweep (tests/cases_spatial_transform.py,
against SciPy): derivatives where a naive formula divides by the angle (the identity) and
of the Euler angles and Slerp, ``Rotation`` and ``Slerp`` as pytrees through ``jit``,
``vmap`` and ``grad``, the container behaviour, the argument errors, arrays staying on
their device, and JAX's values, gradients and signatures where JAX is installed.
"""
from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation as SciPyRotation
from scipy.spatial.transform import Slerp as SciPySlerp

import functrans as ft
import functrans.numpy as fnp
from functrans.scipy.spatial.transform import Rotation, Slerp
from sweep import check_grads, numerical_jvp

ROOT = Path(__file__).resolve().parent.parent
EYE_Q = np.array([0.0, 0.0, 0.0, 1.0])


def _rng(seed=0):
    return np.random.default_rng(seed)


def _quats(n=5, seed=0):
    q = _rng(seed).normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def _symmetric_difference(f, x, step=1e-6):
    """The Jacobian of ``f`` at ``x`` by central differences, column by column."""
    x = np.asarray(x, dtype=np.float64)
    columns = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = step
        columns.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * step))
    return np.stack(columns, axis=-1)


# -- derivatives at and near the identity ------------------------------------------------------


@pytest.mark.parametrize("scale", [0.0, 1e-8, 1e-4, 9e-4, 1.1e-3, 0.3])
def test_from_rotvec_derivatives_near_zero(scale):
    """Finite and equal to the symmetric difference at, below and above the 1e-3 switch to
    the series, to second order (a naive sin(angle / 2) / angle gives NaN at zero)."""
    rotvec = scale * np.array([0.6, -0.8, 0.3])
    f = lambda v: Rotation.from_rotvec(v).quat  # noqa: E731
    jac = ft.jacfwd(f)(rotvec)
    assert np.all(np.isfinite(jac))
    np.testing.assert_allclose(jac, _symmetric_difference(f, rotvec), atol=1e-9)
    np.testing.assert_allclose(ft.jacrev(f)(rotvec), jac, atol=1e-14)
    check_grads(f, [rotvec], 2, _rng(1))
    if scale == 0.0:  # q = (v / 2, 1 - |v|^2 / 8 + ...): d/dv = (I / 2, 0), d2 w/dv2 = -I / 4
        np.testing.assert_allclose(jac, np.vstack([np.eye(3) / 2, np.zeros((1, 3))]))
        np.testing.assert_allclose(ft.hessian(lambda v: f(v)[3])(rotvec), -np.eye(3) / 4,
                                   atol=1e-15)


@pytest.mark.parametrize("scale", [0.0, 1e-8, 1e-4, 9e-4, 1.1e-3, 0.3])
def test_as_rotvec_derivatives_near_the_identity(scale):
    """As a function of the four quaternion components: finite, and the symmetric
    difference's, to second order; at the identity ``2 I`` for ``(x, y, z)``, 0 for w."""
    quat = np.concatenate([scale * np.array([0.3, 0.5, -0.4]), [1.0]])
    quat = quat / np.linalg.norm(quat)
    f = lambda q: Rotation(q).as_rotvec()  # noqa: E731
    jac = ft.jacrev(f)(quat)
    assert np.all(np.isfinite(jac))
    np.testing.assert_allclose(jac, _symmetric_difference(f, quat), atol=1e-8)
    check_grads(f, [quat], 2, _rng(2))
    if scale == 0.0:
        np.testing.assert_allclose(jac, np.hstack([2 * np.eye(3), np.zeros((3, 1))]))


def test_the_round_trip_through_rotation_vectors_has_the_identity_derivative_at_zero():
    f = lambda v: Rotation.from_rotvec(v).as_rotvec()  # noqa: E731
    for v in [np.zeros(3), np.array([1e-9, 0.0, -2e-9]), np.array([0.4, 0.1, -1.2])]:
        np.testing.assert_allclose(ft.jacfwd(f)(v), np.eye(3), atol=1e-12)
        np.testing.assert_allclose(ft.jacrev(f)(v), np.eye(3), atol=1e-12)


def test_magnitude_at_the_identity_has_the_symmetric_differences_zero_derivative():
    """The angle has a cone's kink at the identity: the symmetric difference is zero there,
    and so is the derivative (not NaN); gradcheck's one-sided differences see the kink."""
    f = lambda q: Rotation(q).magnitude()  # noqa: E731
    grad = ft.grad(f)(EYE_Q)
    np.testing.assert_array_equal(grad, np.zeros(4))
    np.testing.assert_allclose(_symmetric_difference(f, EYE_Q), 0.0, atol=1e-9)
    result = ft.gradcheck(f, detect_nondifferentiable=True, raise_exception=False)(EYE_Q)
    assert not result.ok
    # away from it, the derivative is the difference's
    assert ft.gradcheck(f)(_quats(1)[0])


def test_slerp_between_equal_keys_is_differentiable():
    keys = Rotation.from_quat(np.stack([_quats(1)[0]] * 3))
    slerp = Slerp.init(np.array([0.0, 1.0, 2.0]), keys)
    assert np.allclose(slerp.rotvecs, 0.0)
    g = ft.grad(lambda q: fnp.sum(Slerp.init(np.array([0.0, 1.0, 2.0]), Rotation(q))(
        np.array([0.3, 1.5])).as_matrix()))(keys.quat)
    assert np.all(np.isfinite(g))
    check_grads(lambda q: Slerp.init(np.array([0.0, 1.0, 2.0]), Rotation(q))(
        np.array([0.3, 1.5])).quat, [keys.quat], 1, _rng(3))


# -- derivatives: gradcheck of each conversion ---------------------------------------------


GRADCHECKED = {
    "apply": (lambda q, v: Rotation.from_quat(q).apply(v), lambda: (_quats(), _rng(1).normal(
        size=(5, 3)))),
    "apply_inverse": (lambda q, v: Rotation.from_quat(q).apply(v, inverse=True),
                      lambda: (_quats(), _rng(1).normal(size=(5, 3)))),
    "as_matrix": (lambda q: Rotation(q).as_matrix(), lambda: (_rng().normal(size=(3, 4)),)),
    "from_rotvec": (lambda v: Rotation.from_rotvec(v).quat, lambda: (_rng().normal(
        size=(4, 3)),)),
    "as_rotvec": (lambda q: Rotation.from_quat(q).as_rotvec(), lambda: (_quats(),)),
    "from_matrix_of_any_matrix": (lambda m: Rotation.from_matrix(m).quat,
                                  lambda: (_rng().normal(size=(4, 3, 3)),)),
    "from_euler_intrinsic": (lambda a: Rotation.from_euler("ZYX", a).quat,
                             lambda: (_rng().normal(size=(4, 3)),)),
    "as_euler_extrinsic": (lambda q: Rotation.from_quat(q).as_euler("xzy"), lambda: (
        _quats(),)),
    "as_mrp": (lambda q: Rotation.from_quat(q).as_mrp(), lambda: (_quats(),)),
    "from_mrp": (lambda p: Rotation.from_mrp(p).quat, lambda: (_rng().normal(size=(4, 3)),)),
    "mean": (lambda q, w: Rotation(q).mean(w).as_matrix(), lambda: (
        _quats(), _rng(1).uniform(0.5, 1.5, 5))),
    "slerp_in_every_argument": (
        lambda q, key_times, t: Slerp.init(key_times, Rotation.from_quat(q))(t).quat,
        lambda: (_quats(4), np.array([0.0, 1.0, 2.5, 3.0]), np.array([0.2, 1.7, 2.9]))),
}


@pytest.mark.parametrize("name", GRADCHECKED)
def test_gradcheck(name):
    fun, args = GRADCHECKED[name]
    assert ft.gradcheck(fun)(*args())


def test_euler_round_trips_have_the_identity_derivative_away_from_gimbal_lock():
    angles = np.array([0.4, -0.7, 1.1])
    symmetric = np.array([0.4, 1.3, -2.0])  # middle angle in (0, pi)
    for seq in ["xyz", "XYZ", "zyx", "YXZ", "zxz", "XYX", "yzy", "ZYZ"]:
        a = symmetric if seq[0].lower() == seq[2].lower() else angles
        f = lambda a, s=seq: Rotation.from_euler(s, a).as_euler(s)  # noqa: E731
        np.testing.assert_allclose(f(a), a, atol=1e-14)
        np.testing.assert_allclose(ft.jacfwd(f)(a), np.eye(3), atol=1e-12, err_msg=seq)
        np.testing.assert_allclose(ft.jacrev(f)(a), np.eye(3), atol=1e-12, err_msg=seq)
        g = lambda a, s=seq: Rotation.from_euler(s, a, degrees=True).as_euler(  # noqa: E731
            s, degrees=True)
        np.testing.assert_allclose(ft.jacfwd(g)(np.rad2deg(a)), np.eye(3), atol=1e-12)


def test_slerp_derivative_in_the_query_time_is_the_intervals_angular_rate():
    keys = Rotation.from_rotvec(np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 1.2], [0.5, 0.0, 1.2]]))
    slerp = Slerp.init(np.array([0.0, 2.0, 3.0]), keys)
    rate = ft.grad(lambda t: slerp(t).magnitude())(0.7)
    np.testing.assert_allclose(rate, 0.6, rtol=1e-12)  # 1.2 rad over 2 s
    f = lambda t: slerp(t).quat  # noqa: E731
    for t in [0.7, 2.4]:
        np.testing.assert_allclose(ft.jacfwd(f)(t), numerical_jvp(f, [t], [1.0]), atol=1e-9)


# -- values -------------------------------------------------------------------------------


def test_slerp_passes_through_the_keys_and_extrapolates_continuously():
    q = _quats(4, seed=5)
    times = np.array([0.0, 1.0, 1.5, 4.0])
    slerp = Slerp.init(times, Rotation.from_quat(q))
    at_keys = slerp(times).as_matrix()
    np.testing.assert_allclose(at_keys, Rotation.from_quat(q).as_matrix(), atol=1e-13)
    # outside the keys, the first and last intervals continue (SciPy refuses these times)
    for t in [times[0], times[-1]]:
        np.testing.assert_allclose(slerp(t + 1e-9).as_matrix(), slerp(t - 1e-9).as_matrix(),
                                   atol=1e-8)
    inside = np.array([0.25, 1.2, 3.3])
    np.testing.assert_allclose(slerp(inside).as_matrix(),
                               SciPySlerp(times, SciPyRotation.from_quat(q))(inside).as_matrix(),
                               atol=1e-13)
    single = slerp(1.2)
    assert single.single and single.quat.shape == (4,)


def test_as_euler_at_gimbal_lock_sets_the_third_angle_to_zero_as_scipy():
    cases = [("xyz", [0.3, np.pi / 2, 0.2]), ("XYZ", [0.3, -np.pi / 2, 0.2]),
             ("zxz", [0.3, 0.0, 0.2]), ("ZXZ", [0.3, 0.0, 0.2]), ("yzy", [0.3, np.pi, 0.1])]
    for seq, angles in cases:
        quat = SciPyRotation.from_euler(seq, angles).as_quat()
        with pytest.warns(UserWarning, match="Gimbal lock"):
            want = SciPyRotation.from_quat(quat).as_euler(seq)
        got = Rotation.from_quat(quat).as_euler(seq)
        # the same rotation, and where SciPy gives pi, -pi (the wrap to [-pi, pi), as JAX)
        np.testing.assert_allclose(np.mod(got - want + np.pi, 2 * np.pi) - np.pi, 0.0,
                                   atol=1e-7, err_msg=seq)
        assert got[2] == 0.0 if seq.islower() else True
        np.testing.assert_allclose(Rotation.from_euler(seq, got).as_matrix(),
                                   SciPyRotation.from_quat(quat).as_matrix(), atol=1e-7)


def test_broadcasting_over_several_leading_axes():
    q = _rng().normal(size=(2, 3, 4))
    v = _rng(1).normal(size=(3, 3))
    r = Rotation.from_quat(q)
    want = SciPyRotation.from_quat(q.reshape(6, 4)).apply(np.tile(v, (2, 1))).reshape(2, 3, 3)
    np.testing.assert_allclose(r.apply(v), want, atol=1e-14)
    assert r.as_matrix().shape == (2, 3, 3, 3) and r.as_euler("xyz").shape == (2, 3, 3)
    assert len(r) == 2 and r[1].quat.shape == (3, 4)
    np.testing.assert_allclose(Rotation.from_matrix(r.as_matrix()).as_quat(canonical=True),
                               r.as_quat(canonical=True), atol=1e-14)


def test_float32_stays_float32():
    q = _quats().astype(np.float32)
    r = Rotation.from_quat(q)
    for out in [r.quat, r.as_matrix(), r.apply(np.float32([1, 2, 3])), r.as_rotvec(),
                r.as_euler("zyx", degrees=True), r.as_mrp(), r.magnitude(), r.mean().quat,
                r.as_quat(canonical=True), Slerp.init(np.arange(5.0), r)(1.5).quat,
                Rotation.from_rotvec(np.float32([0.0, 0.0, 0.0])).quat,
                Rotation.from_euler("x", np.float32(30), degrees=True).quat]:
        assert out.dtype == np.float32


def test_container_behaviour():
    r = Rotation.from_quat(_quats())
    assert not r.single and len(r) == 5
    assert r[2].single and r[1:3].quat.shape == (2, 4) and r[np.array([4, 0])].quat.shape == (
        2, 4)
    single = Rotation.identity()
    assert single.single
    with pytest.raises(TypeError, match="Single rotation has no len"):
        len(single)
    with pytest.raises(TypeError, match="Single rotation is not subscriptable"):
        single[0]
    both = Rotation.concatenate([single, r, Rotation.identity(2)])
    assert both.quat.shape == (8, 4)
    np.testing.assert_array_equal(both.quat[0], EYE_Q)
    np.testing.assert_array_equal(Rotation.identity(3, dtype=np.float32).quat,
                                  np.tile(np.float32(EYE_Q), (3, 1)))
    with pytest.raises(TypeError):
        r * 2.0
    assert r.mean().single and single.mean().single
    np.testing.assert_allclose(np.abs(r[1].mean().quat), np.abs(r[1].quat), atol=1e-14)


def test_random_rotations_are_unit_reproducible_and_uniform():
    key = ft.random.key(3)
    r = Rotation.random(key, 4000)
    assert r.quat.shape == (4000, 4)
    np.testing.assert_allclose(np.linalg.norm(r.quat, axis=-1), 1.0, atol=1e-14)
    np.testing.assert_array_equal(Rotation.random(key, 4000).quat, r.quat)
    assert Rotation.random(key).single
    # Haar measure: every matrix entry has mean 0 and variance 1/3; the angle's density is
    # (1 - cos(angle)) / pi, of mean pi / 2 + 2 / pi
    m = r.as_matrix()
    np.testing.assert_allclose(m.mean(axis=0), 0.0, atol=0.05)
    np.testing.assert_allclose((m ** 2).mean(axis=0), 1 / 3, atol=0.03)
    np.testing.assert_allclose(r.magnitude().mean(), np.pi / 2 + 2 / np.pi, atol=0.03)


# -- pytrees ------------------------------------------------------------------------------


def test_rotation_and_slerp_are_pytrees_through_jit_vmap_and_grad():
    q, v = _quats(), _rng(1).normal(size=(5, 3))
    r = Rotation.from_quat(q)
    leaves, tree = ft.tree_util.tree_flatten(r)
    assert len(leaves) == 1 and leaves[0] is r.quat
    assert isinstance(ft.tree_util.tree_unflatten(tree, leaves), Rotation)

    jitted = ft.jit(lambda r, v: r.apply(v))(r, v)
    np.testing.assert_allclose(jitted, r.apply(v), atol=1e-15)
    out = ft.jit(lambda r: r.inv() * r)(r)
    assert isinstance(out, Rotation)
    np.testing.assert_allclose(out.magnitude(), 0.0, atol=1e-7)

    batched = ft.vmap(lambda r, v: r.apply(v))(r, v)
    np.testing.assert_allclose(batched, r.apply(v), atol=1e-15)
    per_rotation = ft.vmap(lambda r: r.as_euler("zyx"))(r)
    np.testing.assert_allclose(per_rotation, r.as_euler("zyx"), atol=1e-15)
    made = ft.vmap(lambda a: Rotation.from_euler("XYZ", a))(v)
    assert isinstance(made, Rotation) and made.quat.shape == (5, 4)

    grad = ft.grad(lambda r: fnp.sum(r.apply(v) ** 2 * np.arange(3.0)))(r)
    assert isinstance(grad, Rotation) and grad.quat.shape == (5, 4)
    want = ft.grad(lambda q: fnp.sum(Rotation(q).apply(v) ** 2 * np.arange(3.0)))(q)
    np.testing.assert_allclose(grad.quat, want, atol=1e-15)

    times = np.array([0.0, 1.0, 2.0, 3.5, 4.0])
    slerp = Slerp.init(times, r)
    leaves, tree = ft.tree_util.tree_flatten(slerp)
    assert len(leaves) == 4  # times, timedelta, key quaternions, rotation vectors
    query = np.array([0.5, 2.2, 3.9])
    np.testing.assert_allclose(ft.jit(lambda s, t: s(t).quat)(slerp, query),
                               slerp(query).quat, atol=1e-15)
    made = ft.jit(Slerp.init)(times, r)
    assert isinstance(made, Slerp) and isinstance(made.rotations, Rotation)
    g = ft.grad(lambda s: fnp.sum(s(query).as_matrix()))(slerp)
    assert isinstance(g, Slerp) and g.rotvecs.shape == (4, 3)
    # key times batched: one interpolator per set of key times
    stacked = np.stack([times, times * 2])
    out = ft.vmap(lambda t: Slerp.init(t, r)(1.5).quat)(stacked)
    np.testing.assert_allclose(out[1], slerp(0.75).quat, atol=1e-15)


def test_apply_and_degrees_take_array_flags_as_jax():
    r = Rotation.from_quat(_quats())
    v = _rng(1).normal(size=(5, 3))
    np.testing.assert_allclose(r.apply(v, inverse=np.array(True)), r.apply(v, inverse=True))
    np.testing.assert_allclose(r.as_rotvec(degrees=np.array(True)), r.as_rotvec(degrees=True))


# -- errors -------------------------------------------------------------------------------


def test_errors():
    with pytest.raises(ValueError, match="expected a string of 1 to 3 axes, got seq='xyzx'"):
        Rotation.from_euler("xyzx", np.zeros(4))
    with pytest.raises(ValueError, match=r"Rotation.as_euler: expected 3 axes, got seq='xy'"):
        Rotation.identity().as_euler("xy")
    with pytest.raises(ValueError, match="not mixed, got seq='xYz'"):
        Rotation.from_euler("xYz", np.zeros(3))
    with pytest.raises(ValueError, match="consecutive axes to be different, got seq='XXY'"):
        Rotation.identity().as_euler("XXY")
    with pytest.raises(ValueError, match=r"hold 3 angle\(s\) for seq='xyz', got shape \(2,\)"):
        Rotation.from_euler("xyz", np.zeros(2))
    with pytest.raises(ValueError, match=r"from_quat: expected quaternions of shape \(\.\.\., 4\)"):
        Rotation.from_quat(np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"from_rotvec: expected rotvec of shape \(\.\.\., 3\)"):
        Rotation.from_rotvec(np.zeros(4))
    with pytest.raises(ValueError, match=r"from_matrix: expected matrices of shape"):
        Rotation.from_matrix(np.eye(4))
    with pytest.raises(ValueError, match=r"apply: expected vectors of shape"):
        Rotation.identity().apply(np.zeros(2))
    r = Rotation.from_quat(_quats())
    with pytest.raises(ValueError, match="one weight per rotation, got 3 weights and 5"):
        r.mean(np.ones(3))
    with pytest.raises(ValueError, match="expected weights to be 1-D"):
        r.mean(np.ones((5, 1)))
    with pytest.raises(TypeError, match="rotations must be a Rotation, got ndarray"):
        Slerp.init(np.arange(5.0), _quats())
    with pytest.raises(ValueError, match="a stack of at least 2 rotations"):
        Slerp.init(np.arange(1.0), r[:1])
    with pytest.raises(ValueError, match="a stack of at least 2 rotations"):
        Slerp.init(np.arange(1.0), r[0])
    with pytest.raises(ValueError, match="one time per rotation, got 4 times and 5 rotations"):
        Slerp.init(np.arange(4.0), r)
    with pytest.raises(ValueError, match="times must be at most 1-D"):
        Slerp.init(np.arange(5.0), r)(np.zeros((2, 2)))


# -- import paths ----------------------------------------------------------------------------


def test_imports_in_a_fresh_interpreter():
    source = textwrap.dedent("""
        import functrans.scipy.spatial.transform
        from functrans.scipy.spatial.transform import Rotation, Slerp
        from functrans.scipy.spatial import transform
        import functrans.scipy
        assert functrans.scipy.spatial.transform is transform
        assert transform.Rotation is Rotation and transform.Slerp is Slerp
        assert transform.__all__ == ["Rotation", "Slerp"]
    """)
    result = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                            cwd=str(ROOT))
    assert result.returncode == 0, result.stderr


# -- device arrays: no transfers -------------------------------------------------------------

DEVICE_FUNCTIONS = {
    "apply": lambda q, v, t: Rotation.from_quat(q).apply(v, inverse=True),
    "as_rotvec": lambda q, v, t: Rotation.from_quat(q).as_rotvec(degrees=True),
    "from_rotvec_small": lambda q, v, t: Rotation.from_rotvec(1e-5 * v).quat,
    "from_matrix": lambda q, v, t: Rotation.from_matrix(Rotation(q).as_matrix()).quat,
    "euler": lambda q, v, t: Rotation.from_euler("XYZ", v).as_euler("zxz", degrees=True),
    "mrp": lambda q, v, t: Rotation.from_mrp(v).as_mrp(),
    "canonical": lambda q, v, t: Rotation.from_quat(q).as_quat(canonical=True,
                                                                scalar_first=True),
    "magnitude_of_composition": lambda q, v, t: (Rotation(q) * Rotation(q).inv()).magnitude(),
    "mean": lambda q, v, t: Rotation.from_quat(q).mean(t).quat,
    "concatenate": lambda q, v, t: Rotation.concatenate([Rotation(q), Rotation(q[0])]).quat,
    "slerp": lambda q, v, t: Slerp.init(t, Rotation.from_quat(q))(t[1:] - 0.3).quat,
    "grad_apply": lambda q, v, t: ft.grad(lambda q: fnp.sum(Rotation.from_quat(q).apply(v)))(q),
    "grad_as_rotvec": lambda q, v, t: ft.grad(lambda q: fnp.sum(Rotation(q).as_rotvec()))(q),
    "grad_slerp": lambda q, v, t: ft.grad(lambda q: fnp.sum(
        Slerp.init(t, Rotation.from_quat(q))(t[1:] - 0.3).as_matrix()))(q),
    "jit_as_euler": lambda q, v, t: ft.jit(lambda q: Rotation.from_quat(q).as_euler("xyz"))(q),
    "vmap_apply": lambda q, v, t: ft.vmap(lambda q, v: Rotation.from_quat(q).apply(v))(q, v),
}


@pytest.mark.parametrize("name", DEVICE_FUNCTIONS)
def test_device_arrays_stay_on_the_device(device, name):
    q, v, t = _quats(), _rng(1).normal(size=(5, 3)), np.array([0.0, 1.0, 2.0, 3.5, 4.0])
    fun = DEVICE_FUNCTIONS[name]
    args = device.put((q, v, t))
    with device.transfers() as counts:
        got = fun(*args)
    if counts is not None:
        assert counts.h2d == 0, counts.h2d_log
        assert counts.d2h == 0, counts.d2h_log
    for g in ft.tree_util.tree_leaves(got):
        assert isinstance(g, device.array_type), type(g)
    np.testing.assert_allclose(device.get(got), fun(q, v, t), atol=1e-12)


# -- JAX's own, where JAX is installed -------------------------------------------------------


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax, importlib.import_module("jax.scipy.spatial.transform")


def _public(cls) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_")} | {
        n for n in ("__getitem__", "__len__", "__mul__", "__call__") if n in cls.__dict__}


def test_the_same_names_and_signatures_as_jax():
    _, jt = _jax()
    for ours, theirs in [(Rotation, jt.Rotation), (Slerp, jt.Slerp)]:
        assert _public(ours) == _public(theirs)
        for name in _public(theirs):
            want = getattr(theirs, name)
            if not callable(want):
                continue
            got = inspect.signature(getattr(ours, name))
            want = inspect.signature(want)
            assert [(p.name, p.kind, p.default) for p in got.parameters.values()] == [
                (p.name, p.kind, p.default) for p in want.parameters.values()], name
    assert Rotation._fields == jt.Rotation._fields and Slerp._fields == jt.Slerp._fields


JAX_PAIRS = {
    "from_quat": lambda R, S, q, v: R.from_quat(q).quat,
    "as_matrix": lambda R, S, q, v: R.from_quat(q).as_matrix(),
    "apply": lambda R, S, q, v: R.from_quat(q).apply(v),
    "apply_inverse_single": lambda R, S, q, v: R.from_quat(q[0]).apply(v, inverse=True),
    "from_rotvec": lambda R, S, q, v: R.from_rotvec(v).quat,
    "from_rotvec_degrees_small": lambda R, S, q, v: R.from_rotvec(v * 1e-5, degrees=True).quat,
    "as_rotvec": lambda R, S, q, v: R.from_quat(q).as_rotvec(),
    "as_rotvec_degrees_small": lambda R, S, q, v: R.from_rotvec(v * 1e-5).as_rotvec(True),
    "from_matrix": lambda R, S, q, v: R.from_matrix(R.from_quat(q).as_matrix()).quat,
    "from_mrp": lambda R, S, q, v: R.from_mrp(v).quat,
    "as_mrp": lambda R, S, q, v: R.from_quat(q).as_mrp(),
    "magnitude": lambda R, S, q, v: R.from_quat(q).magnitude(),
    "inv": lambda R, S, q, v: R.from_quat(q).inv().quat,
    "mul": lambda R, S, q, v: (R.from_quat(q) * R.from_quat(q[::-1])).quat,
    "as_quat": lambda R, S, q, v: [R.from_quat(-q).as_quat(canonical=c, scalar_first=f)
                                   for c in (False, True) for f in (False, True)],
    "identity": lambda R, S, q, v: R.identity().quat,
    "concatenate": lambda R, S, q, v: R.concatenate([R.from_quat(q), R.from_quat(q)]).quat,
    "getitem": lambda R, S, q, v: [R.from_quat(q)[1].quat, R.from_quat(q)[1:4].quat],
    "from_euler": lambda R, S, q, v: [R.from_euler(s, v[:, :len(s)], degrees=d).quat
                                      for s in ("xyz", "ZXZ", "yx", "Z", "XYX", "zyz")
                                      for d in (False, True)],
    "from_euler_scalar": lambda R, S, q, v: R.from_euler("y", 30.0, degrees=True).quat,
    "as_euler": lambda R, S, q, v: [R.from_quat(q).as_euler(s, degrees=d)
                                    for s in ("xyz", "ZXZ", "yxz", "XYX", "zyz", "XZY")
                                    for d in (False, True)],
    "mean": lambda R, S, q, v: R.from_quat(q).mean(np.arange(1.0, 6.0)).as_matrix(),
    "slerp": lambda R, S, q, v: S.init(np.array([0.0, 1.0, 2.0, 3.5, 4.0]), R.from_quat(q))(
        np.array([-0.5, 0.0, 0.3, 1.0, 2.2, 3.9, 4.0])).quat,
    "slerp_scalar": lambda R, S, q, v: S.init(np.array([0.0, 1.0, 2.0, 3.5, 4.0]),
                                              R.from_quat(q))(2.5).quat,
}


@pytest.mark.parametrize("name", JAX_PAIRS)
def test_matches_jax(name):
    """JAX's values, shapes and dtypes (with 64-bit types; float32 input keeps float32)."""
    jax, jt = _jax()
    q, v = _quats(), _rng(1).normal(size=(5, 3))
    for dtype in (np.float64, np.float32):
        tol = 1e-12 if dtype == np.float64 else 2e-5
        args = (q.astype(dtype), v.astype(dtype))
        got = ft.tree_util.tree_leaves(JAX_PAIRS[name](Rotation, Slerp, *args))
        want = jax.tree_util.tree_leaves(jax.jit(  # (JAX's vectorized functions are slow eagerly)
            lambda q, v: JAX_PAIRS[name](jt.Rotation, jt.Slerp, q, v))(*args))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            g, w = np.asarray(g), np.asarray(w)
            assert g.shape == w.shape, (g.shape, w.shape)
            assert name == "identity" or g.dtype == w.dtype, (g.dtype, w.dtype)
            np.testing.assert_allclose(g, w, atol=tol, rtol=tol, err_msg=name)


def test_gradients_match_jax_away_from_the_identity_and_are_finite_at_it():
    jax, jt = _jax()
    q, v = _quats(), _rng(1).normal(size=(5, 3))
    times = np.array([0.0, 1.0, 2.0, 3.5, 4.0])
    for f in [lambda R, S, m, q: m.sum(R.from_quat(q).apply(v) * v[::-1]),
              lambda R, S, m, q: m.sum(R.from_quat(q).as_rotvec() * v),
              lambda R, S, m, q: m.sum(R.from_quat(q).as_euler("zxy") * v),
              lambda R, S, m, q: m.sum(R.from_matrix(R(q).as_matrix()).quat * q),
              lambda R, S, m, q: m.sum(S.init(times, R.from_quat(q))(
                  np.array([0.5, 2.9])).as_matrix())]:
        got = ft.grad(lambda q: f(Rotation, Slerp, fnp, q))(q)
        want = jax.jit(jax.grad(lambda q: f(jt.Rotation, jt.Slerp, jax.numpy, q)))(q)
        np.testing.assert_allclose(got, np.asarray(want), atol=1e-12)
    # at the identity JAX's as_rotvec and from_rotvec give NaN; functrans the derivative
    assert np.all(np.isnan(np.asarray(jax.grad(lambda q: jt.Rotation(q).as_rotvec()[0])(
        EYE_Q))))
    assert np.all(np.isfinite(ft.grad(lambda q: Rotation(q).as_rotvec()[0])(EYE_Q)))
