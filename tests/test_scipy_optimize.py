"""functrans.scipy.optimize.minimize (BFGS and JAX's L-BFGS) against scipy.optimize, the
line search's strong Wolfe conditions, vmap against a loop, jit against eager, and the
errors."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
import functrans.scipy.optimize as fso
from functrans.scipy.optimize import OptimizeResults, minimize

so = pytest.importorskip("scipy.optimize")

LBFGS = "l-bfgs-experimental-do-not-rely-on-this"
METHODS = ["BFGS", LBFGS]


def rosenbrock(x):
    return fnp.sum((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2)


def himmelblau(x):
    return (x[0] ** 2 + x[1] - 11) ** 2 + (x[0] + x[1] ** 2 - 7) ** 2


_Q = np.random.default_rng(3).standard_normal((5, 5))
HESSIAN = _Q @ _Q.T + np.eye(5)
LINEAR = np.random.default_rng(4).standard_normal(5)


def quadratic(x, h, c):
    return 0.5 * x @ (h @ x) - c @ x


def test_names_match_jax():
    assert fso.__all__ == ["OptimizeResults", "minimize"]
    assert OptimizeResults._fields == ("x", "success", "status", "fun", "jac", "hess_inv",
                                       "nfev", "njev", "nit")


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("fun,x0", [
    (rosenbrock, np.zeros(2)), (rosenbrock, np.array([-1.2, 1.0])),
    (rosenbrock, np.linspace(-1, 1, 6)), (himmelblau, np.array([1.0, 1.0])),
], ids=["rosen2", "rosen_classic", "rosen6", "himmelblau"])
def test_minima_agree_with_scipy(method, fun, x0):
    # JAX's L-BFGS counts a stop on a small decrease of f (ftol) as a failure: switched off
    options = {"gtol": 1e-9} if method == "BFGS" else {"gtol": 1e-9, "ftol": 0.0}
    ours = minimize(fun, x0, method=method, options=options)
    # SciPy's BFGS is the reference for both (its L-BFGS-B stops farther from the minimum)
    theirs = so.minimize(lambda x: float(fun(x)), x0, jac=lambda x: np.asarray(
        ft.grad(fun)(x)), method="BFGS", options={"gtol": 1e-10})
    assert bool(ours.success), ours
    np.testing.assert_allclose(ours.x, theirs.x, rtol=1e-5, atol=1e-6)
    assert float(ours.fun) == pytest.approx(float(fun(ours.x)), abs=1e-12)
    np.testing.assert_allclose(ours.jac, ft.grad(fun)(ours.x), rtol=1e-10, atol=1e-12)
    assert np.linalg.norm(np.asarray(ours.jac), np.inf) < 1e-9
    assert int(ours.status) == 0 and int(ours.nit) > 0 and int(ours.nfev) >= int(ours.nit)
    assert int(ours.njev) == int(ours.nfev)


@pytest.mark.parametrize("method", METHODS)
def test_quadratic_with_args(method):
    options = {} if method == "BFGS" else {"ftol": 0.0}
    result = minimize(quadratic, np.zeros(5), (HESSIAN, LINEAR), method=method, tol=1e-10,
                      options=options)
    np.testing.assert_allclose(result.x, np.linalg.solve(HESSIAN, LINEAR), rtol=1e-8)
    scipy_result = so.minimize(quadratic, np.zeros(5), (HESSIAN, LINEAR), method="BFGS",
                               jac=lambda x, h, c: h @ x - c)
    np.testing.assert_allclose(result.x, scipy_result.x, rtol=1e-5)


def test_bfgs_inverse_hessian_estimate():
    result = minimize(quadratic, np.zeros(5), (HESSIAN, LINEAR), method="BFGS", tol=1e-12)
    h = np.asarray(result.hess_inv)
    np.testing.assert_allclose(h, h.T, rtol=1e-12, atol=1e-14)
    assert np.linalg.eigvalsh(h).min() > 0
    inverse = np.linalg.inv(HESSIAN)  # not exact: the line search is not
    assert np.linalg.norm(h - inverse) < 0.05 * np.linalg.norm(inverse)
    assert minimize(quadratic, np.zeros(5), (HESSIAN, LINEAR), method=LBFGS).hess_inv is None


def test_bfgs_converges_in_as_many_iterations_as_scipy_on_a_quadratic():
    ours = minimize(quadratic, np.zeros(5), (HESSIAN, LINEAR), method="BFGS")
    theirs = so.minimize(quadratic, np.zeros(5), (HESSIAN, LINEAR), method="BFGS",
                         jac=lambda x, h, c: h @ x - c)
    assert abs(int(ours.nit) - theirs.nit) <= 2


def test_start_at_the_minimum_takes_no_step():
    result = minimize(rosenbrock, np.ones(3), method="BFGS")
    assert bool(result.success) and int(result.nit) == 0 and int(result.nfev) == 1


@pytest.mark.parametrize("method", METHODS)
def test_maxiter_is_reported(method):
    result = minimize(rosenbrock, np.zeros(4), method=method, options={"maxiter": 3})
    assert int(result.nit) == 3 and int(result.status) == 1 and not bool(result.success)


def test_lbfgs_stops_on_a_small_decrease_as_jax_does():
    result = minimize(rosenbrock, np.zeros(2), method=LBFGS, options={"ftol": 1e-3})
    assert int(result.status) == 4 and not bool(result.success)


def test_lbfgs_options():
    result = minimize(rosenbrock, np.zeros(4), method=LBFGS,
                      options={"maxcor": 3, "gtol": 1e-8, "maxls": 30, "ftol": 0.0})
    assert bool(result.success)
    np.testing.assert_allclose(result.x, np.ones(4), atol=1e-7)
    stopped = minimize(rosenbrock, np.zeros(4), method=LBFGS, options={"maxfun": 5})
    assert int(stopped.status) == 2 and int(stopped.nfev) >= 5


def test_method_names_are_case_insensitive_as_in_jax():
    a = minimize(rosenbrock, np.zeros(2), method="bfgs")
    b = minimize(rosenbrock, np.zeros(2), method="BFGS")
    np.testing.assert_array_equal(a.x, b.x)


def test_float32():
    result = minimize(rosenbrock, np.zeros(2, np.float32), method="BFGS",
                      options={"gtol": 1e-3})
    assert np.asarray(result.x).dtype == np.float32
    np.testing.assert_allclose(result.x, np.ones(2), atol=1e-2)


def test_line_search_steps_satisfy_the_strong_wolfe_conditions():
    value_and_gradient = ft.value_and_grad(rosenbrock)
    rng = np.random.default_rng(5)
    for _ in range(5):
        x = rng.standard_normal(3)
        f0, g0 = value_and_gradient(x)
        p = -g0 / np.linalg.norm(g0)
        result = fso._line_search(value_and_gradient, x, p, f0, g0)
        assert not bool(result.failed)
        a = float(result.step)
        f, g = value_and_gradient(x + a * p)
        assert float(f) <= float(f0) + 1e-4 * a * float(g0 @ p)
        assert abs(float(g @ p)) <= 0.9 * abs(float(g0 @ p))
        assert float(result.f) == pytest.approx(float(f))


@pytest.mark.parametrize("method", METHODS)
def test_vmap_matches_a_loop(method):
    starts = np.array([[0.0, 0.0], [-1.2, 1.0], [2.0, 2.0]])
    batched = ft.vmap(lambda x0: minimize(rosenbrock, x0, method=method))(starts)
    for i, x0 in enumerate(starts):
        single = minimize(rosenbrock, x0, method=method)
        for field in ("x", "fun", "jac", "nit", "nfev", "status", "success"):
            np.testing.assert_allclose(np.asarray(getattr(batched, field))[i],
                                       np.asarray(getattr(single, field)), rtol=1e-12,
                                       atol=1e-14, err_msg=field)


def test_vmap_over_args():
    cs = np.stack([LINEAR, -LINEAR, 2 * LINEAR])
    xs = ft.vmap(lambda c: minimize(quadratic, np.zeros(5), (HESSIAN, c), method="BFGS",
                                    tol=1e-10).x)(cs)
    np.testing.assert_allclose(xs, np.linalg.solve(HESSIAN, cs.T).T, rtol=1e-7)


@pytest.mark.parametrize("method", METHODS)
def test_jit_equals_eager(method):
    run = lambda x0: minimize(rosenbrock, x0, method=method)  # noqa: E731
    x0 = np.array([-1.2, 1.0])
    jitted, eager = ft.jit(run)(x0), run(x0)
    np.testing.assert_allclose(jitted.x, eager.x, rtol=1e-13)
    assert int(jitted.nit) == int(eager.nit)


@pytest.mark.parametrize("call,error,match", [
    (lambda: minimize(rosenbrock, np.zeros(2), method="L-BFGS-B"), ValueError,
     "minimize: method 'L-BFGS-B' not recognized"),
    (lambda: minimize(rosenbrock, np.zeros(2), method="Nelder-Mead"), ValueError,
     "minimize: method 'Nelder-Mead' not recognized"),
    (lambda: minimize(rosenbrock, np.zeros((2, 2)), method="BFGS"), ValueError,
     r"minimize: x0 must be a 1-D array, got shape \(2, 2\)"),
    (lambda: minimize(quadratic, np.zeros(5), [HESSIAN, LINEAR], method="BFGS"), TypeError,
     "minimize: args must be a tuple, got list"),
    (lambda: minimize(rosenbrock, np.zeros(2), method="BFGS", options={"maxcor": 3}),
     TypeError, r"minimize: method 'BFGS' has no options \['maxcor'\]; its options are "
                r"\['maxiter', 'norm', 'gtol', 'line_search_maxiter'\]"),
    (lambda: minimize(rosenbrock, np.zeros(2, complex), method="BFGS"), TypeError,
     "minimize: x0 must be real"),
    (lambda: minimize(lambda x: x ** 2, np.zeros(2), method="BFGS"), TypeError,
     r"minimize: fun must return a real scalar, got float64\[2\]"),
    (lambda: minimize(lambda x: fnp.sum(x) * 1j, np.zeros(2), method="BFGS"), TypeError,
     r"minimize: fun must return a real scalar, got complex128\[\]"),
])
def test_bad_arguments_are_reported(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_minimize_is_not_differentiable_and_says_so():
    with pytest.raises(TypeError, match="while_loop"):
        ft.grad(lambda c: minimize(quadratic, np.zeros(5), (HESSIAN, c), method="BFGS").fun)(
            LINEAR)
