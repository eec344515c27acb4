"""User-defined derivative rules (custom_jvp, custom_vjp), rematerialization (checkpoint)
and gradients of tagged intermediates (tag, intermediate_grads).

To tell a user rule from the function's own derivative, most rules here are deliberately
*wrong* (``cube(x) = x**3`` claims the derivative ``7 cos x``): a transform that ignored the
rule and differentiated the function would give ``3 x**2`` and fail.
"""
from __future__ import annotations

import functools
import gc
import tracemalloc

import numpy as np
import pytest

import functrans as ft
import functrans.lax as lax
import functrans.numpy as fnp
from functrans.interpreters.ad import linearize_flat
from functrans.tree_util import tree_flatten, tree_leaves
from sweep import assert_close, check_grads

TOL = 1e-12
XS = np.array([0.3, -1.2, 2.0])


def assert_trees_close(actual, expected, tol=TOL, what=""):
    assert_close(actual, expected, rtol=tol, atol=tol, what=what)


def primitive_names(jaxpr: ft.Jaxpr) -> set:
    names = set()
    for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for value in eqn.params.values():
            if isinstance(value, ft.ClosedJaxpr):
                names |= primitive_names(value.jaxpr)
    return names


# ==========================================================================================
# custom_jvp
# ==========================================================================================


@ft.custom_jvp
def cube(x):
    return x ** 3


@cube.defjvp
def _cube_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return cube(x), 7.0 * fnp.cos(x) * t


def rule_d1(x):  # the derivative the rule claims
    return 7.0 * np.cos(x)


def rule_d2(x):  # the derivative of the rule's derivative
    return -7.0 * np.sin(x)


def sum_cube(x):
    return fnp.sum(cube(x))


def test_custom_jvp_plain_call_runs_the_function():
    np.testing.assert_allclose(cube(XS), XS ** 3)


def test_custom_jvp_rule_used_by_jvp_and_linearize():
    t = np.array([1.0, 2.0, -0.5])
    y, dy = ft.jvp(cube, (XS,), (t,))
    assert_trees_close((y, dy), (XS ** 3, rule_d1(XS) * t))
    y, f_jvp = ft.linearize(cube, XS)
    assert_trees_close(f_jvp(t), rule_d1(XS) * t)


def test_custom_jvp_rule_used_by_reverse_mode():
    assert_trees_close(ft.grad(sum_cube)(XS), rule_d1(XS))
    ct = np.array([2.0, -1.0, 0.5])
    y, f_vjp = ft.vjp(cube, XS)
    assert_trees_close(f_vjp(ct), (rule_d1(XS) * ct,))
    assert ft.grad(cube)(0.5) == pytest.approx(rule_d1(0.5), abs=TOL)


@pytest.mark.parametrize("jac", [ft.jacfwd, ft.jacrev])
def test_custom_jvp_rule_used_by_jacobians(jac):
    assert_trees_close(jac(cube)(XS), np.diag(rule_d1(XS)))


def test_custom_jvp_second_order_differentiates_the_rule():
    assert ft.grad(ft.grad(cube))(0.5) == pytest.approx(rule_d2(0.5), abs=TOL)
    assert_trees_close(ft.hessian(sum_cube)(XS), np.diag(rule_d2(XS)))
    assert_trees_close(ft.jacrev(ft.jacrev(sum_cube))(XS), np.diag(rule_d2(XS)))
    # forward over forward
    d2 = ft.jvp(lambda x: ft.jvp(cube, (x,), (np.ones(3),))[1], (XS,), (np.ones(3),))[1]
    assert_trees_close(d2, rule_d2(XS))


def test_custom_jvp_with_a_correct_rule_passes_the_numerical_check():
    @ft.custom_jvp
    def sin_cos(x, y):
        return fnp.sin(x) * fnp.cos(y)

    @sin_cos.defjvp
    def _(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return sin_cos(x, y), fnp.cos(x) * fnp.cos(y) * tx - fnp.sin(x) * fnp.sin(y) * ty

    rng = np.random.default_rng(0)
    check_grads(sin_cos, (rng.standard_normal(3), rng.standard_normal(3)), 2, rng)


def test_custom_jvp_under_vmap():
    assert_trees_close(ft.vmap(ft.grad(cube))(XS), rule_d1(XS))
    assert_trees_close(ft.grad(lambda x: fnp.sum(ft.vmap(cube)(x)))(XS), rule_d1(XS))
    t = np.array([1.0, 2.0, -0.5])
    y, dy = ft.vmap(lambda x, t: ft.jvp(cube, (x,), (t,)))(XS, t)
    assert_trees_close((y, dy), (XS ** 3, rule_d1(XS) * t))
    assert_trees_close(ft.vmap(ft.grad(ft.grad(cube)))(XS), rule_d2(XS))
    # A matrix batched over rows: the rule is applied per row.
    m = np.stack([XS, XS + 1.0])
    assert_trees_close(ft.vmap(ft.grad(sum_cube))(m), rule_d1(m))


def test_custom_jvp_under_vmap_with_an_unbatched_argument():
    @ft.custom_jvp
    def scale(x, w):
        return fnp.sin(x) * w

    scale.defjvps(lambda t, out, x, w: 10.0 * t * w, lambda t, out, x, w: 100.0 * t * x)
    w = 2.0
    # d/dw summed over the batch: 100 * sum(x)
    g = ft.grad(lambda w: fnp.sum(ft.vmap(scale, in_axes=(0, None))(XS, w)))(w)
    assert g == pytest.approx(100.0 * XS.sum(), abs=1e-10)
    gx, gw = ft.vmap(ft.grad(scale, argnums=(0, 1)), in_axes=(0, None))(XS, w)
    assert_trees_close((gx, gw), (np.full(3, 10.0 * w), 100.0 * XS))


def test_custom_jvp_inside_cond():
    def f(x):
        return lax.cond(x > 0, cube, lambda y: 2.0 * y, x)
    assert ft.grad(f)(0.5) == pytest.approx(rule_d1(0.5), abs=TOL)
    assert ft.grad(f)(-0.5) == pytest.approx(2.0, abs=TOL)
    assert ft.jvp(f, (0.5,), (3.0,))[1] == pytest.approx(3.0 * rule_d1(0.5), abs=TOL)
    assert_trees_close(ft.vmap(ft.grad(f))(XS), np.where(XS > 0, rule_d1(XS), 2.0))


def test_custom_jvp_inside_scan_and_fori_loop():
    # Two applications: d cube(cube(x)) = rule_d1(cube(x)) * rule_d1(x).
    def expected(x):
        return rule_d1(x ** 3) * rule_d1(x)

    def by_scan(x):
        return lax.scan(lambda c, _: (cube(c), None), x, None, length=2)[0]

    def by_fori(x):
        return lax.fori_loop(0, 2, lambda i, c: cube(c), x)

    for f in (by_scan, by_fori):
        assert ft.grad(f)(0.5) == pytest.approx(expected(0.5), abs=1e-10), f.__name__
        assert ft.jvp(f, (0.5,), (1.0,))[1] == pytest.approx(expected(0.5), abs=1e-10)
        assert_trees_close(ft.vmap(ft.grad(f))(XS), expected(XS), tol=1e-10,
                           what=f.__name__)


def test_custom_jvp_staged_by_make_jaxpr():
    closed = ft.make_jaxpr(cube)(XS)
    assert "custom_jvp_call" in primitive_names(closed.jaxpr)
    ft.check_jaxpr(closed.jaxpr)
    assert_trees_close(ft.eval_jaxpr(closed.jaxpr, closed.consts, XS), [XS ** 3])

    def staged(x):
        return fnp.sum(ft.eval_jaxpr(closed.jaxpr, closed.consts, x)[0])
    assert_trees_close(ft.grad(staged)(XS), rule_d1(XS))
    assert_trees_close(ft.hessian(staged)(XS), np.diag(rule_d2(XS)))


def test_custom_jvp_gradient_jaxpr_evaluates_to_the_rule():
    closed = ft.make_jaxpr(ft.grad(sum_cube))(XS)
    ft.check_jaxpr(closed.jaxpr)
    assert_trees_close(ft.eval_jaxpr(closed.jaxpr, closed.consts, XS), [rule_d1(XS)])


def test_defjvps_with_none_entries():
    @ft.custom_jvp
    def mul(x, y):
        return x * y

    mul.defjvps(lambda tx, out, x, y: 5.0 * tx * y, None)
    assert ft.grad(mul, argnums=(0, 1))(2.0, 3.0) == pytest.approx((15.0, 0.0), abs=TOL)
    assert ft.jvp(mul, (2.0, 3.0), (1.0, 1.0)) == pytest.approx((6.0, 15.0), abs=TOL)

    @ft.custom_jvp
    def mul_both(x, y):
        return x * y

    mul_both.defjvps(lambda tx, out, x, y: 5.0 * tx * y, lambda ty, out, x, y: out * ty)
    # contributions add up: 5 y tx + (x y) ty
    assert ft.jvp(mul_both, (2.0, 3.0), (1.0, 10.0))[1] == pytest.approx(15.0 + 60.0)

    @ft.custom_jvp
    def constant_rule(x, y):
        return x * y

    constant_rule.defjvps(None, None)
    x = np.array([1.0, 2.0])
    assert_trees_close(ft.jvp(constant_rule, (x, x), (x, x))[1], np.zeros(2))
    assert_trees_close(ft.grad(lambda x: fnp.sum(constant_rule(x, x)))(x), np.zeros(2))


def test_custom_jvp_nondiff_argnums_callable_passed_first_to_the_rule():
    seen = []

    @functools.partial(ft.custom_jvp, nondiff_argnums=(0,))
    def apply(fn, x):
        return fn(x)

    @apply.defjvp
    def _(fn, primals, tangents):
        seen.append(fn)
        (x,), (t,) = primals, tangents
        return apply(fn, x), 100.0 * fn(x) * t

    assert ft.grad(lambda x: apply(fnp.cos, x))(0.0) == pytest.approx(100.0)
    assert seen and all(fn is fnp.cos for fn in seen)
    assert_trees_close(ft.vmap(ft.grad(lambda x: apply(fnp.cos, x)))(XS), 100.0 * np.cos(XS))
    assert_trees_close(ft.jvp(lambda x: apply(fnp.cos, x), (XS,), (np.ones(3),))[1],
                       100.0 * np.cos(XS))


def test_custom_jvp_nondiff_argnums_static_int():
    seen = []

    @functools.partial(ft.custom_jvp, nondiff_argnums=(1,))
    def power(x, n):
        return x ** n

    @power.defjvp
    def _(n, primals, tangents):
        seen.append(n)
        (x,), (t,) = primals, tangents
        return power(x, n), 10.0 * n * t

    assert power(2.0, 3) == 8.0
    assert ft.grad(power)(2.0, 3) == pytest.approx(30.0)
    assert seen and all(type(n) is int and n == 3 for n in seen)
    # n is static: usable in Python control flow inside the function
    assert ft.grad(lambda x: power(x, 2) + power(x, 4))(1.5) == pytest.approx(60.0)


def test_custom_jvp_pytree_inputs_and_outputs():
    @ft.custom_jvp
    def tree_fun(d):
        return {"prod": d["a"] * d["b"], "pair": (d["a"], 2.0 * d["b"])}

    @tree_fun.defjvp
    def _(primals, tangents):
        (d,), (t,) = primals, tangents
        return tree_fun(d), {"prod": 9.0 * t["a"], "pair": (t["a"], t["b"])}

    d = {"a": np.array([1.0, 2.0]), "b": np.array([3.0, 4.0])}
    t = {"a": np.array([1.0, -1.0]), "b": np.array([0.5, 2.0])}
    out, t_out = ft.jvp(tree_fun, (d,), (t,))
    assert_trees_close(out, {"prod": d["a"] * d["b"], "pair": (d["a"], 2.0 * d["b"])})
    assert_trees_close(t_out, {"prod": 9.0 * t["a"], "pair": (t["a"], t["b"])})
    g = ft.grad(lambda d: fnp.sum(tree_fun(d)["prod"]) + fnp.sum(tree_fun(d)["pair"][1]))(d)
    assert_trees_close(g, {"a": np.full(2, 9.0), "b": np.ones(2)})


def test_custom_jvp_numerically_stable_softplus():
    def naive(x):
        return lax.log1p(fnp.exp(x))

    @ft.custom_jvp
    def softplus(x):
        return lax.log1p(fnp.exp(x))

    @softplus.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return softplus(x), t * (1.0 - 1.0 / (1.0 + fnp.exp(x)))

    x = np.float32(100.0)
    with np.errstate(over="ignore", invalid="ignore"):
        assert np.isnan(ft.grad(naive)(x))  # exp(100) overflows float32: inf / inf
        g = ft.grad(softplus)(x)
        assert g == 1.0 and np.asarray(g).dtype == np.float32
        assert_trees_close(ft.vmap(ft.grad(softplus))(np.array([-100.0, 0.0, 100.0],
                                                               np.float32)),
                           np.array([0.0, 0.5, 1.0], np.float32))


# ---- errors ------------------------------------------------------------------------------


def test_custom_jvp_without_a_rule_is_an_attribute_error():
    @ft.custom_jvp
    def no_rule(x):
        return x

    with pytest.raises(AttributeError, match="no_rule") as info:
        no_rule(1.0)
    message = str(info.value)
    assert "@no_rule.defjvp" in message and "{name}" not in message


@pytest.mark.parametrize("transform", ["jvp", "grad"])
def test_custom_jvp_rule_with_wrong_tangent_shape(transform):
    @ft.custom_jvp
    def double(x):
        return 2.0 * x

    double.defjvp(lambda p, t: (double(p[0]), t[0][:2]))
    with pytest.raises(TypeError, match=r"'double'.*f64\[2\].*f64\[3\]"):
        if transform == "jvp":
            ft.jvp(double, (XS,), (np.ones(3),))
        else:
            ft.grad(lambda x: fnp.sum(double(x)))(XS)


def test_custom_jvp_rule_with_wrong_tangent_dtype():
    @ft.custom_jvp
    def double(x):
        return 2.0 * x

    double.defjvp(lambda p, t: (double(p[0]), t[0].astype(np.float32)))
    with pytest.raises(TypeError, match=r"'double'.*f32\[3\]"):
        ft.jvp(double, (XS,), (np.ones(3),))


def test_custom_jvp_rule_with_wrong_structure():
    @ft.custom_jvp
    def double(x):
        return 2.0 * x

    double.defjvp(lambda p, t: (double(p[0]), (t[0], t[0])))
    with pytest.raises(TypeError, match="'double'.*structure"):
        ft.jvp(double, (XS,), (np.ones(3),))


def test_custom_jvp_rule_with_wrong_primal_shape():
    @ft.custom_jvp
    def double(x):
        return 2.0 * x

    double.defjvp(lambda p, t: (p[0][:1], t[0]))
    with pytest.raises(TypeError, match=r"'double'.*\(1,\).*\(3,\)"):
        ft.jvp(double, (XS,), (np.ones(3),))


def _closing_over(decorator, traced_argument: bool):
    def f(y):
        @decorator
        def h(x):
            return x * y

        if decorator is ft.custom_jvp:
            h.defjvp(lambda p, t: (h(p[0]), t[0]))
        else:
            h.defvjp(lambda x: (h(x), None), lambda _, g: (g,))
        return h(2.0 * y if traced_argument else 2.0)
    return f


@pytest.mark.parametrize("traced_argument", [True, False], ids=["traced_arg", "constant_arg"])
@pytest.mark.parametrize("decorator", [ft.custom_jvp, ft.custom_vjp], ids=["jvp", "vjp"])
def test_closing_over_a_differentiated_value_is_an_error(decorator, traced_argument):
    f = _closing_over(decorator, traced_argument)
    assert f(3.0) == pytest.approx(18.0 if traced_argument else 6.0)
    with pytest.raises(TypeError, match="closes over a value that is being differentiated"):
        ft.grad(f)(3.0)


@pytest.mark.parametrize("traced_argument", [True, False], ids=["traced_arg", "constant_arg"])
def test_closing_over_a_batched_value_is_fine(traced_argument):
    f = _closing_over(ft.custom_jvp, traced_argument)
    expected = [f(y) for y in XS]
    assert_trees_close(ft.vmap(f)(XS), np.array(expected))


# ==========================================================================================
# custom_vjp
# ==========================================================================================


@ft.custom_vjp
def vsin(x):
    return fnp.sin(x)


def _vsin_fwd(x):
    return fnp.sin(x), x


def _vsin_bwd(x, g):  # claims the derivative 3 x**2 (the function's own is cos x)
    return (g * 3.0 * x ** 2,)


vsin.defvjp(_vsin_fwd, _vsin_bwd)


def bwd_d1(x):
    return 3.0 * x ** 2


def bwd_d2(x):  # the derivative of bwd_d1: what differentiating bwd gives
    return 6.0 * x


def test_custom_vjp_plain_call_runs_the_function():
    assert_trees_close(vsin(XS), np.sin(XS))


def test_custom_vjp_rule_used_by_reverse_mode():
    assert_trees_close(ft.grad(lambda x: fnp.sum(vsin(x)))(XS), bwd_d1(XS))
    ct = np.array([2.0, -1.0, 0.5])
    y, f_vjp = ft.vjp(vsin, XS)
    assert_trees_close(y, np.sin(XS))
    assert_trees_close(f_vjp(ct), (bwd_d1(XS) * ct,))
    assert_trees_close(ft.jacrev(vsin)(XS), np.diag(bwd_d1(XS)))


def test_custom_vjp_second_order_differentiates_bwd():
    assert ft.grad(ft.grad(vsin))(0.5) == pytest.approx(bwd_d2(0.5), abs=TOL)
    assert_trees_close(ft.jacrev(ft.jacrev(lambda x: fnp.sum(vsin(x))))(XS),
                       np.diag(bwd_d2(XS)))
    # forward over reverse differentiates fwd and bwd, never the custom_vjp itself
    assert_trees_close(ft.hessian(lambda x: fnp.sum(vsin(x)))(XS), np.diag(bwd_d2(XS)))


def test_custom_vjp_with_a_correct_rule_passes_reverse_checks():
    @ft.custom_vjp
    def prod(x, y):
        return fnp.sin(x) * y

    # fwd computes the output itself: calling prod there would put a custom_vjp call under
    # the forward mode of hessian's jacfwd, an error (as in JAX).
    prod.defvjp(lambda x, y: (fnp.sin(x) * y, (x, y)),
                lambda r, g: (g * fnp.cos(r[0]) * r[1], g * fnp.sin(r[0])))
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(3), rng.standard_normal(3)
    ct = rng.standard_normal(3)
    got = ft.vjp(prod, x, y)[1](ct)
    expected = ft.vjp(lambda x, y: fnp.sin(x) * y, x, y)[1](ct)
    assert_trees_close(got, expected)
    got2 = ft.hessian(lambda x, y: fnp.sum(prod(x, y)), argnums=(0, 1))(x, y)
    expected2 = ft.hessian(lambda x, y: fnp.sum(fnp.sin(x) * y), argnums=(0, 1))(x, y)
    assert_trees_close(got2, expected2)


def test_custom_vjp_under_vmap():
    assert_trees_close(ft.vmap(ft.grad(vsin))(XS), bwd_d1(XS))
    assert_trees_close(ft.grad(lambda x: fnp.sum(ft.vmap(vsin)(x)))(XS), bwd_d1(XS))
    assert_trees_close(ft.vmap(ft.grad(ft.grad(vsin)))(XS), bwd_d2(XS))
    m = np.stack([XS, XS + 1.0])
    assert_trees_close(ft.vmap(ft.grad(lambda x: fnp.sum(vsin(x))))(m), bwd_d1(m))
    assert_trees_close(ft.vmap(ft.jacrev(vsin))(m), np.stack([np.diag(bwd_d1(r)) for r in m]))


def test_custom_vjp_under_vmap_with_an_unbatched_argument():
    @ft.custom_vjp
    def scale(x, w):
        return fnp.sin(x) * w

    scale.defvjp(lambda x, w: (scale(x, w), (x, w)),
                 lambda r, g: (10.0 * g * r[1], 100.0 * g * r[0]))
    w = 2.0
    g = ft.grad(lambda w: fnp.sum(ft.vmap(scale, in_axes=(0, None))(XS, w)))(w)
    assert g == pytest.approx(100.0 * XS.sum(), abs=1e-10)
    gx, gw = ft.vmap(ft.grad(scale, argnums=(0, 1)), in_axes=(0, None))(XS, w)
    assert_trees_close((gx, gw), (np.full(3, 10.0 * w), 100.0 * XS))


def test_custom_vjp_inside_cond_and_scan():
    def by_cond(x):
        return lax.cond(x > 0, vsin, lambda y: 2.0 * y, x)
    assert ft.grad(by_cond)(0.5) == pytest.approx(bwd_d1(0.5), abs=TOL)
    assert ft.grad(by_cond)(-0.5) == pytest.approx(2.0, abs=TOL)
    assert_trees_close(ft.vmap(ft.grad(by_cond))(XS), np.where(XS > 0, bwd_d1(XS), 2.0))

    def by_scan(x):
        return lax.scan(lambda c, _: (vsin(c), None), x, None, length=2)[0]
    expected = bwd_d1(np.sin(0.5)) * bwd_d1(0.5)
    assert ft.grad(by_scan)(0.5) == pytest.approx(expected, abs=TOL)
    assert_trees_close(ft.vmap(ft.grad(by_scan))(XS), bwd_d1(np.sin(XS)) * bwd_d1(XS))


@pytest.mark.parametrize("residuals", ["dict", "tuple", "none", "nested"])
def test_custom_vjp_pytree_residuals(residuals):
    @ft.custom_vjp
    def mul(x, y):
        return x * y

    def fwd(x, y):
        res = {"dict": {"x": x, "y": y}, "tuple": (x, y), "none": None,
               "nested": {"pair": (y, None), "x": [x]}}[residuals]
        return mul(x, y), res

    def bwd(res, g):
        if residuals == "dict":
            y = res["y"]
        elif residuals == "tuple":
            y = res[1]
        elif residuals == "none":
            assert res is None
            y = 1.0
        else:
            assert res["pair"][1] is None and len(res["x"]) == 1
            y = res["pair"][0]
        return 2.0 * g * y, None

    mul.defvjp(fwd, bwd)
    y_used = 1.0 if residuals == "none" else np.arange(3.0)
    gx, gy = ft.grad(lambda x, y: fnp.sum(mul(x, y)), argnums=(0, 1))(np.ones(3),
                                                                      np.arange(3.0))
    assert_trees_close((gx, gy), (2.0 * y_used * np.ones(3), np.zeros(3)))
    gx = ft.vmap(ft.grad(mul, argnums=0))(np.ones(3), np.arange(3.0))
    assert_trees_close(gx, 2.0 * y_used * np.ones(3))


def test_custom_vjp_nondiff_argnums_passed_first_to_bwd():
    seen = []

    @functools.partial(ft.custom_vjp, nondiff_argnums=(0, 2))
    def apply(fn, x, n):
        return fn(x) * n

    def fwd(fn, x, n):
        return apply(fn, x, n), x

    def bwd(fn, n, x, g):
        seen.append((fn, n))
        return (100.0 * n * g * fn(x),)

    apply.defvjp(fwd, bwd)
    assert apply(fnp.cos, 0.0, 2) == 2.0
    assert ft.grad(lambda x: apply(fnp.cos, x, 2))(0.0) == pytest.approx(200.0)
    assert seen and all(fn is fnp.cos and type(n) is int and n == 2 for fn, n in seen)
    assert_trees_close(ft.vmap(ft.grad(lambda x: apply(fnp.cos, x, 3)))(XS),
                       300.0 * np.cos(XS))


def test_custom_vjp_bwd_none_is_a_zero_cotangent():
    @ft.custom_vjp
    def mul(x, y):
        return x * y

    mul.defvjp(lambda x, y: (mul(x, y), y), lambda y, g: (g * y, None))
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    gx, gy = ft.grad(lambda x, y: fnp.sum(mul(x, y)), argnums=(0, 1))(x, y)
    assert_trees_close((gx, gy), (y, np.zeros(2)))
    assert ft.vjp(mul, x, y)[1](np.ones(2))[1].shape == (2,)
    assert_trees_close(ft.jacrev(mul, argnums=1)(x, y), np.zeros((2, 2)))


def test_custom_vjp_pytree_arguments():
    @ft.custom_vjp
    def combine(d, pair):
        return d["a"] * pair[0] + d["b"] * pair[1]

    def fwd(d, pair):
        return combine(d, pair), (d, pair)

    def bwd(res, g):
        d, pair = res
        # a None leaf inside a cotangent pytree is a zero for that leaf
        return {"a": 10.0 * g, "b": None}, (g * d["a"], 2.0 * g)

    combine.defvjp(fwd, bwd)
    d = {"a": np.array([1.0, 2.0]), "b": np.array([3.0, 4.0])}
    pair = (np.array([5.0, 6.0]), np.array([7.0, 8.0]))
    gd, gpair = ft.grad(lambda d, p: fnp.sum(combine(d, p)), argnums=(0, 1))(d, pair)
    assert_trees_close(gd, {"a": np.full(2, 10.0), "b": np.zeros(2)})
    assert_trees_close(gpair, (d["a"], np.full(2, 2.0)))


@pytest.mark.parametrize("transform", ["jvp", "jacfwd", "linearize"])
def test_custom_vjp_forward_mode_is_an_error(transform):
    with pytest.raises(TypeError, match="[Ff]orward.mode"):
        if transform == "jvp":
            ft.jvp(vsin, (XS,), (np.ones(3),))
        elif transform == "jacfwd":
            ft.jacfwd(vsin)(XS)
        else:
            ft.linearize(vsin, XS)[1](np.ones(3))


def test_custom_vjp_without_a_rule_is_an_attribute_error():
    @ft.custom_vjp
    def no_rule(x):
        return x

    with pytest.raises(AttributeError, match="no_rule.*defvjp"):
        no_rule(1.0)


def test_custom_vjp_bwd_with_wrong_number_of_cotangents():
    @ft.custom_vjp
    def mul(x, y):
        return x * y

    mul.defvjp(lambda x, y: (mul(x, y), None), lambda _, g: (g,))
    with pytest.raises(TypeError, match=r"'mul'.*\(2\).*length 1"):
        ft.grad(mul)(1.0, 2.0)


def test_custom_vjp_bwd_returning_a_bare_array():
    @ft.custom_vjp
    def double(x):
        return 2.0 * x

    double.defvjp(lambda x: (double(x), None), lambda _, g: 2.0 * g)
    with pytest.raises(TypeError, match="'double'.*tuple"):
        ft.grad(lambda x: fnp.sum(double(x)))(XS)


def test_custom_vjp_bwd_with_wrong_cotangent_shape():
    @ft.custom_vjp
    def double(x):
        return 2.0 * x

    double.defvjp(lambda x: (double(x), None), lambda _, g: (g[:2],))
    with pytest.raises(TypeError, match=r"'double'.*f64\[2\].*f64\[3\]"):
        ft.grad(lambda x: fnp.sum(double(x)))(XS)


@pytest.mark.parametrize("wrong", ["extra_leaf", "other_key"])
def test_custom_vjp_bwd_with_wrong_cotangent_structure(wrong):
    @ft.custom_vjp
    def first(d):
        return d["a"] * d["b"]

    def bwd(d, g):
        if wrong == "extra_leaf":
            return ({"a": g, "b": g, "c": g},)
        return ({"a": g * d["b"], "c": g * d["a"]},)  # same number of leaves

    first.defvjp(lambda d: (first(d), d), bwd)
    with pytest.raises(TypeError, match="'first'.*structure"):
        ft.grad(first)({"a": 2.0, "b": 3.0})


def test_custom_vjp_fwd_must_return_a_pair():
    @ft.custom_vjp
    def double(x):
        return 2.0 * x

    double.defvjp(lambda x: 2.0 * x, lambda _, g: (2.0 * g,))
    with pytest.raises(TypeError, match="'double'.*pair"):
        ft.grad(double)(1.0)


def test_custom_vjp_fwd_output_structure_must_match():
    @ft.custom_vjp
    def double(x):
        return 2.0 * x

    double.defvjp(lambda x: ((2.0 * x, x), None), lambda _, g: (2.0 * g,))
    with pytest.raises(TypeError, match="'double'.*structure"):
        ft.grad(double)(1.0)


# ==========================================================================================
# checkpoint
# ==========================================================================================


def _mlp_params(rng, sizes=(4, 6, 6, 6, 3)):
    return [(rng.standard_normal((m, n)) / np.sqrt(m), 0.1 * rng.standard_normal(n))
            for m, n in zip(sizes[:-1], sizes[1:])]


def _layer(params, h):
    w, b = params
    return fnp.tanh(fnp.dot(h, w) + b)


def _mlp(params, x, wrap=lambda f: f):
    h = x
    for p in params:
        h = wrap(_layer)(p, h)
    return fnp.sum(h ** 2)


POLICIES = {"default": None,
            "dots_saveable": ft.checkpoint_policies.dots_saveable,
            "everything_saveable": ft.checkpoint_policies.everything_saveable,
            "nothing_saveable": ft.checkpoint_policies.nothing_saveable}


def _remat(policy_name):
    return lambda f: ft.checkpoint(f, policy=POLICIES[policy_name])


@pytest.mark.parametrize("policy", POLICIES)
def test_checkpoint_mlp_gradients_unchanged(policy):
    rng = np.random.default_rng(2)
    params, x = _mlp_params(rng), rng.standard_normal((5, 4))
    expected = ft.grad(_mlp, argnums=(0, 1))(params, x)
    got = ft.grad(_mlp, argnums=(0, 1))(params, x, _remat(policy))
    assert_trees_close(got, expected)
    # the whole network as one block as well
    whole = ft.checkpoint(lambda p, x: _mlp(p, x), policy=POLICIES[policy])
    assert_trees_close(ft.grad(whole, argnums=(0, 1))(params, x), expected)
    # forward mode
    t = rng.standard_normal(x.shape)
    assert_trees_close(ft.jvp(lambda x: _mlp(params, x, _remat(policy)), (x,), (t,)),
                       ft.jvp(lambda x: _mlp(params, x), (x,), (t,)))


@pytest.mark.parametrize("policy", ["default", "dots_saveable", "everything_saveable"])
def test_checkpoint_second_order(policy):
    rng = np.random.default_rng(3)
    params, x = _mlp_params(rng, (3, 4, 4, 2)), rng.standard_normal((2, 3))
    expected = ft.hessian(lambda x: _mlp(params, x))(x)
    assert_trees_close(ft.hessian(lambda x: _mlp(params, x, _remat(policy)))(x), expected)

    def grad_of_grad(wrap):
        inner = ft.grad(lambda x: fnp.sin(_mlp(params, x * x, wrap)))
        return ft.grad(lambda x: fnp.sum(fnp.cos(inner(x))))(x)
    got = grad_of_grad(_remat(policy))
    assert got.shape == x.shape
    assert_trees_close(got, grad_of_grad(lambda f: f))


def test_checkpoint_under_vmap():
    rng = np.random.default_rng(4)
    params, xs = _mlp_params(rng), rng.standard_normal((3, 5, 4))
    per_example = np.stack([ft.grad(_mlp, argnums=1)(params, x) for x in xs])
    assert_trees_close(ft.vmap(ft.grad(_mlp, argnums=1), in_axes=(None, 0))(params, xs),
                       per_example)
    remat_grad = ft.grad(lambda p, x: _mlp(p, x, ft.checkpoint), argnums=1)
    assert_trees_close(ft.vmap(remat_grad, in_axes=(None, 0))(params, xs), per_example)
    # grad of a vmapped checkpoint: parameters get the sum over the batch
    batched = ft.vmap(lambda p, x: _mlp(p, x, ft.checkpoint), in_axes=(None, 0))
    expected = ft.grad(lambda p: fnp.sum(ft.vmap(_mlp, in_axes=(None, 0))(p, xs)))(params)
    assert_trees_close(ft.grad(lambda p: fnp.sum(batched(p, xs)))(params), expected)


def test_checkpoint_static_argnums():
    calls = []

    def block(x, n):
        calls.append(n)
        for _ in range(n):  # needs a concrete n
            x = fnp.sin(x)
        return x

    remat_block = ft.checkpoint(block, static_argnums=(1,))
    expected = ft.grad(lambda x: fnp.sum(block(x, 3)))(XS)
    assert_trees_close(ft.grad(lambda x: fnp.sum(remat_block(x, 3)))(XS), expected)
    assert all(type(n) is int for n in calls)
    remat_block = ft.checkpoint(block, static_argnums=1)
    assert_trees_close(ft.hessian(lambda x: fnp.sum(remat_block(x, 2)))(XS),
                       ft.hessian(lambda x: fnp.sum(block(x, 2)))(XS))


def test_nested_checkpoints():
    inner = ft.checkpoint(lambda x: fnp.sin(fnp.sin(x)))
    outer = ft.checkpoint(lambda x: inner(fnp.cos(inner(x))))

    def plain(x):
        return fnp.sin(fnp.sin(fnp.cos(fnp.sin(fnp.sin(x)))))

    assert_trees_close(ft.grad(lambda x: fnp.sum(outer(x)))(XS),
                       ft.grad(lambda x: fnp.sum(plain(x)))(XS))
    assert_trees_close(ft.hessian(lambda x: fnp.sum(outer(x)))(XS),
                       ft.hessian(lambda x: fnp.sum(plain(x)))(XS))
    assert_trees_close(ft.vmap(ft.grad(lambda x: fnp.sum(outer(x))))(np.stack([XS, -XS])),
                       ft.vmap(ft.grad(lambda x: fnp.sum(plain(x))))(np.stack([XS, -XS])))
    assert "checkpoint" in primitive_names(ft.make_jaxpr(outer)(XS).jaxpr)


def test_checkpoint_inside_scan_body():
    rng = np.random.default_rng(5)
    ws = rng.standard_normal((4, 3, 3)) / np.sqrt(3)
    x = rng.standard_normal((2, 3))

    def run(ws, x, wrap):
        def body(h, w):
            return wrap(lambda w, h: fnp.tanh(fnp.dot(h, w)))(w, h), fnp.sum(h)
        h, per_step = lax.scan(body, x, ws)
        return fnp.sum(h ** 2) + fnp.sum(per_step)

    expected = ft.grad(run, argnums=(0, 1))(ws, x, lambda f: f)
    for policy in POLICIES:
        assert_trees_close(ft.grad(run, argnums=(0, 1))(ws, x, _remat(policy)), expected,
                           what=policy)
    assert_trees_close(ft.hessian(lambda x: run(ws, x, ft.checkpoint))(x),
                       ft.hessian(lambda x: run(ws, x, lambda f: f))(x))


def _residual_bytes(f, x) -> int:
    """Bytes of the residuals that ``linearize`` keeps for ``f`` at ``x``: the constants of
    the linear (tangent) jaxpr.  They are exactly what the backward pass holds on to, and
    do not depend on how the linear jaxpr is printed or which equations it uses."""
    _, _, consts, _ = linearize_flat(lambda x: [f(x)], [x])
    return sum(np.asarray(c).nbytes for c in consts)


def _deep(x, wrap, depth=6):
    for _ in range(depth):
        x = wrap(lambda x: fnp.tanh(fnp.sin(fnp.exp(0.1 * x))))(x)
    return fnp.sum(x)


def test_checkpoint_stores_fewer_residuals():
    x = np.random.default_rng(6).standard_normal((20, 20))
    plain = _residual_bytes(lambda x: _deep(x, lambda f: f), x)
    remat = _residual_bytes(lambda x: _deep(x, ft.checkpoint), x)
    # per layer: one input instead of three elementwise derivatives
    assert remat < 0.5 * plain, (remat, plain)
    everything = _residual_bytes(lambda x: _deep(x, _remat("everything_saveable")), x)
    # saving everything stores exactly what no checkpoint stores: no extra block inputs
    assert everything == plain, (everything, plain)


def _residuals(f, x) -> list:
    return [np.asarray(c) for c in linearize_flat(lambda x: [f(x)], [x])[2]]


def _holds(residuals, value) -> bool:
    return any(r.shape == value.shape and np.array_equal(r, value) for r in residuals)


def test_checkpoint_policy_decides_what_is_stored():
    rng = np.random.default_rng(7)
    w, b = rng.standard_normal((5, 4)), rng.standard_normal(4)
    x = rng.standard_normal((3, 5))

    def layer(x):
        return fnp.sum(fnp.sin(fnp.tanh(fnp.dot(x, w) + b)))

    product, activation = x @ w, np.tanh(x @ w + b)
    plain = _residuals(layer, x)
    default = _residuals(ft.checkpoint(layer), x)
    dots = _residuals(ft.checkpoint(layer, policy=ft.checkpoint_policies.dots_saveable), x)
    # the default stores the block's input and recomputes from it
    assert _holds(default, x) and not _holds(default, product)
    assert not _holds(default, activation)
    # dots_saveable stores the product, recomputes the elementwise part, needs no input
    assert _holds(dots, product) and not _holds(dots, x)
    assert not _holds(dots, activation)
    # without checkpoint the elementwise derivatives are stored instead
    assert not _holds(plain, x) and not _holds(plain, product)


def _tanh_net(weights, x, segment):
    def block(ws, h):
        for w in ws:
            h = fnp.tanh(fnp.dot(h, w))
        return h

    run = block if segment is None else ft.checkpoint(block)
    step = segment or len(weights)
    for i in range(0, len(weights), step):
        x = run(weights[i:i + step], x)
    return fnp.sum(x ** 2)


def _peak_bytes(f, *args) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        f(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_checkpoint_lowers_peak_memory():
    rng = np.random.default_rng(8)
    weights = [rng.standard_normal((32, 32)) / np.sqrt(32) for _ in range(30)]
    x = rng.standard_normal((256, 32))
    grad_plain = ft.grad(lambda w: _tanh_net(w, x, None))
    grad_remat = ft.grad(lambda w: _tanh_net(w, x, 5))
    assert_trees_close(grad_remat(weights), grad_plain(weights))
    plain = _peak_bytes(grad_plain, weights)
    remat = _peak_bytes(grad_remat, weights)
    # 30 stored layer inputs and tanh derivatives versus 6 block inputs
    assert remat < 0.75 * plain, (remat, plain)


# ==========================================================================================
# tag / intermediate_grads
# ==========================================================================================


def test_intermediates_of_an_mlp_equal_perturbation_gradients():
    rng = np.random.default_rng(9)
    (w1, b1), (w2, b2) = _mlp_params(rng, (3, 4, 2))
    x = rng.standard_normal((5, 3))

    def tagged(w1, x):
        pre = ft.tag(fnp.dot(x, w1) + b1, "pre")
        act = ft.tag(fnp.tanh(pre), "act")
        return fnp.sum(fnp.tanh(fnp.dot(act, w2) + b2) ** 2)

    def perturbed(w1, x, e_pre, e_act):
        pre = fnp.dot(x, w1) + b1 + e_pre
        act = fnp.tanh(pre) + e_act
        return fnp.sum(fnp.tanh(fnp.dot(act, w2) + b2) ** 2)

    zeros = np.zeros((5, 4))
    g_w1, g_pre, g_act = ft.grad(perturbed, argnums=(0, 2, 3))(w1, x, zeros, zeros)
    grads, inter = ft.intermediate_grads(tagged)(w1, x)
    assert set(inter) == {"pre", "act"}
    assert_trees_close(grads, g_w1)
    assert_trees_close(inter["pre"], g_pre)
    assert_trees_close(inter["act"], g_act)
    assert not np.allclose(inter["pre"], inter["act"])


def test_intermediate_used_twice():
    def tagged(x):
        h = ft.tag(fnp.sin(x), "h")
        return fnp.sum(h * h + 3.0 * h)

    def perturbed(x, e):
        h = fnp.sin(x) + e
        return fnp.sum(h * h + 3.0 * h)

    grads, inter = ft.intermediate_grads(tagged)(XS)
    assert_trees_close(inter["h"], ft.grad(perturbed, argnums=1)(XS, np.zeros(3)))
    assert_trees_close(inter["h"], 2.0 * np.sin(XS) + 3.0)
    assert_trees_close(grads, ft.grad(tagged)(XS))


def test_intermediate_in_a_scan_body_sums_over_iterations():
    def tagged(x):
        def body(c, _):
            return 1.5 * ft.tag(fnp.sin(c), "s"), None
        return fnp.sum(lax.scan(body, x, None, length=3)[0])

    def perturbed(x, e):
        def body(c, _):
            return 1.5 * (fnp.sin(c) + e), None
        return fnp.sum(lax.scan(body, x, None, length=3)[0])

    grads, inter = ft.intermediate_grads(tagged)(XS)
    assert_trees_close(inter["s"], ft.grad(perturbed, argnums=1)(XS, np.zeros(3)))
    assert_trees_close(grads, ft.grad(tagged)(XS))

    # against an unrolled sum of per-iteration perturbations
    def unrolled(x, e0, e1, e2):
        for e in (e0, e1, e2):
            x = 1.5 * (fnp.sin(x) + e)
        return fnp.sum(x)
    z = np.zeros(3)
    per_iteration = ft.grad(unrolled, argnums=(1, 2, 3))(XS, z, z, z)
    assert_trees_close(inter["s"], sum(per_iteration))


def test_intermediate_grads_argnums_tuple_and_has_aux():
    def tagged(a, b, c):
        h = ft.tag(a * b, "ab")
        return fnp.sum(h * c), {"h": h}

    a, b, c = XS, XS + 1.0, np.array([2.0, -1.0, 0.5])
    (ga, gc_), inter, aux = ft.intermediate_grads(tagged, argnums=(0, 2), has_aux=True)(a, b, c)
    assert_trees_close((ga, gc_), (b * c, a * b))
    assert_trees_close(inter, {"ab": c})
    assert_trees_close(aux, {"h": a * b})
    gb, inter = ft.intermediate_grads(lambda a, b, c: tagged(a, b, c)[0], argnums=-2)(a, b, c)
    assert_trees_close((gb, inter), (a * c, {"ab": c}))


def test_intermediate_grads_with_non_array_arguments():
    def tagged(x, n, act):
        for i in range(n):  # n must stay a concrete int, as under grad
            x = ft.tag(act(x), f"layer{i}")
        return fnp.sum(x)

    assert_trees_close(ft.intermediate_grads(tagged)(XS, 2, fnp.sin)[0],
                       ft.grad(tagged)(XS, 2, fnp.sin))
    _, inter = ft.intermediate_grads(tagged)(XS, 2, fnp.sin)
    assert_trees_close(inter, {"layer0": np.cos(np.sin(XS)), "layer1": np.ones(3)})


def test_intermediate_grads_under_vmap_gives_per_example_cotangents():
    rng = np.random.default_rng(10)
    w = rng.standard_normal((4, 2))
    xs = rng.standard_normal((3, 4))

    def loss(x, w):
        h = ft.tag(fnp.tanh(x * 2.0), "h")
        return fnp.sum(fnp.dot(h, w) ** 2)

    def perturbed(x, w, e):
        return fnp.sum(fnp.dot(fnp.tanh(x * 2.0) + e, w) ** 2)

    per_example = ft.vmap(ft.intermediate_grads(loss), in_axes=(0, None))(xs, w)
    loop = [ft.grad(perturbed, argnums=(0, 2))(x, w, np.zeros(4)) for x in xs]
    assert_trees_close(per_example[0], np.stack([g for g, _ in loop]))
    assert_trees_close(per_example[1]["h"], np.stack([e for _, e in loop]))
    assert per_example[1]["h"].shape == (3, 4)
    # the batch is not summed: per-example cotangents differ
    assert not np.allclose(per_example[1]["h"][0], per_example[1]["h"][1])


def test_nested_intermediate_grads():
    def outer(x):
        inner_grad, inner = ft.intermediate_grads(lambda y: ft.tag(y * x, "in") ** 2)(x)
        return inner_grad * ft.tag(x, "out") + inner["in"]

    # inner: d/dy (y x)^2 = 2 y x^2 -> 2 x^3; tag "in" cotangent 2 y x -> 2 x^2
    # outer: F = 2 x^3 (x + e) + 2 x^2
    grads, inter = ft.intermediate_grads(outer)(2.0)
    assert set(inter) == {"out"}
    assert grads == pytest.approx(8.0 * 2.0 ** 3 + 4.0 * 2.0)
    assert inter["out"] == pytest.approx(2.0 * 2.0 ** 3)
    # differentiating through intermediate_grads
    g = ft.grad(lambda x: ft.intermediate_grads(lambda y: ft.tag(y ** 2, "a") * x)(x)[1]["a"])
    assert g(3.0) == pytest.approx(1.0)


def test_duplicate_tag_names_are_an_error():
    with pytest.raises(ValueError, match="'a'.*twice"):
        ft.intermediate_grads(lambda x: ft.tag(x, "a") + ft.tag(2.0 * x, "a"))(1.0)


def test_tag_name_must_be_a_string():
    with pytest.raises(TypeError, match="string"):
        ft.tag(1.0, 3)


def test_tag_outside_intermediate_grads_is_the_identity():
    assert ft.tag(3.0, "q") == 3.0
    x = np.array([1.0, 2.0])
    assert ft.tag(x, "q") is x

    def f(x):
        return fnp.sum(ft.tag(fnp.sin(x), "s") ** 2)

    def g(x):
        return fnp.sum(fnp.sin(x) ** 2)

    assert_trees_close(ft.grad(f)(XS), ft.grad(g)(XS))
    assert_trees_close(ft.vmap(f)(np.stack([XS, XS])), ft.vmap(g)(np.stack([XS, XS])))
    assert primitive_names(ft.make_jaxpr(f)(XS).jaxpr) == primitive_names(
        ft.make_jaxpr(g)(XS).jaxpr)


def test_untagged_function_gives_an_empty_dict():
    grads, inter = ft.intermediate_grads(lambda x: fnp.sum(x ** 2))(XS)
    assert inter == {}
    assert_trees_close(grads, 2.0 * XS)


def test_intermediate_grads_staged_by_make_jaxpr():
    f = ft.intermediate_grads(lambda x: fnp.sum(ft.tag(x ** 2, "sq") * XS))
    closed = ft.make_jaxpr(f)(XS)
    ft.check_jaxpr(closed.jaxpr)
    got = ft.eval_jaxpr(closed.jaxpr, closed.consts, XS)
    assert_trees_close(got, tree_leaves(f(XS)))
    assert_trees_close(f(XS), (2.0 * XS * XS, {"sq": XS}))


def test_a_custom_jvp_rule_gets_the_users_array_types():
    """A custom_jvp rule runs as the user's code: its primals and what it makes from them
    are Arrays with ``.at``, under grad (the rule run on concrete primals), under vmap and
    under jacfwd (the rule staged and run by the JVP of the call)."""
    seen = []

    @ft.custom_jvp
    def f(x):
        return fnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        seen.append((type(x), type(fnp.zeros_like(x))))
        return f(x), (fnp.cos(x) * t).at[..., 0].set(0.0)

    x = np.array([0.3, 0.5, 0.7])
    want = np.cos(x)
    want[0] = 0.0
    np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(f(x)))(x), want, rtol=1e-15)
    np.testing.assert_allclose(ft.vmap(ft.grad(lambda x: fnp.sum(f(x))))(np.stack([x, x])),
                               [want, want], rtol=1e-15)
    np.testing.assert_allclose(np.diag(ft.jacfwd(f)(x)), want, rtol=1e-15)
    assert seen, seen
    for primal, made in seen:  # arrays, or the tracers of an enclosing vmap
        assert made is ft.Array or issubclass(made, ft.core.Tracer), seen
        assert primal is ft.Array or issubclass(primal, ft.core.Tracer), seen
    assert (ft.Array, ft.Array) in seen


def test_a_custom_vjp_backward_gets_the_users_array_types():
    """A backward function runs as the user's code: its arrays have ``.at`` (JAX's update
    syntax), on every call, whichever plan reverse mode takes."""
    @ft.custom_vjp
    def f(x):
        return fnp.sin(x)

    def bwd(cos_x, g):
        g = g * cos_x
        return (g.at[0].set(0.0) + fnp.zeros_like(g).at[1].set(1.0),)

    f.defvjp(lambda x: (fnp.sin(x), fnp.cos(x)), bwd)
    x = np.array([0.3, 0.5, 0.7])
    want = np.cos(x) * 2.0
    want[0], want[1] = 0.0, want[1] + 1.0
    loss = ft.grad(lambda x: fnp.sum(f(x) * 2.0))
    for _ in range(3):
        np.testing.assert_allclose(loss(x), want, rtol=1e-15)


# ------------------------------------------------------------------------------------------
# symbolic_zeros=True (what the rules see matches JAX 0.10.2's, checked case by case)
# ------------------------------------------------------------------------------------------


def _product_with_symbolic_jvp(seen):
    from functrans.custom_derivatives import SymbolicZero

    @ft.custom_jvp
    def f(x, y):
        return x * y

    def f_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        seen.append((isinstance(tx, SymbolicZero), isinstance(ty, SymbolicZero)))
        out = 0.0
        if not isinstance(tx, SymbolicZero):
            out = out + tx * y
        if not isinstance(ty, SymbolicZero):
            out = out + x * ty
        return x * y, out
    f.defjvp(f_jvp, symbolic_zeros=True)
    return f


@pytest.mark.parametrize("transform, value, zeros", [
    (lambda f: ft.jvp(lambda x: f(x, 3.0), (2.0,), (1.0,))[1], 3.0, (False, True)),
    (lambda f: ft.grad(f)(2.0, 3.0), 3.0, (False, True)),
    (lambda f: ft.grad(f, 1)(2.0, 3.0), 2.0, (True, False)),
    (lambda f: ft.jvp(f, (2.0, 3.0), (1.0, 1.0))[1], 5.0, (False, False)),
    (lambda f: ft.jit(ft.grad(f))(2.0, 3.0), 3.0, (False, True)),
    (lambda f: ft.grad(ft.jit(f))(2.0, 3.0), 3.0, (False, True)),
    (lambda f: ft.vmap(ft.grad(f))(np.full(2, 2.0), np.full(2, 3.0)), 3.0, (False, True)),
    (lambda f: ft.jvp(ft.vmap(lambda x: f(x, 3.0)), (np.ones(2),), (np.ones(2),))[1], 3.0,
     (False, True)),
    (lambda f: ft.hessian(lambda x: f(x, x))(2.0), 2.0, (False, False)),
], ids=["jvp", "grad0", "grad1", "jvp-both", "jit-grad", "grad-jit", "vmap-grad",
        "jvp-vmap", "hessian"])
def test_custom_jvp_symbolic_zeros_for_unperturbed_arguments(transform, value, zeros):
    seen = []
    out = transform(_product_with_symbolic_jvp(seen))
    assert_close(out, np.full(np.shape(out), value))
    assert seen[-1] == zeros


def test_custom_jvp_symbolic_zeros_rule_may_return_a_symbolic_zero():
    from functrans.custom_derivatives import SymbolicZero

    @ft.custom_jvp
    def g(x):
        return fnp.sin(x)
    g.defjvp(lambda p, t: (fnp.sin(p[0]), SymbolicZero.from_primal_value(p[0])),
             symbolic_zeros=True)
    assert ft.jvp(g, (1.0,), (1.0,))[1] == 0.0
    assert ft.grad(g)(1.0) == 0.0 and ft.jit(ft.grad(g))(1.0) == 0.0
    assert_close(ft.vmap(ft.grad(g))(np.ones(2)), np.zeros(2))


def _pair_with_symbolic_vjp(seen, bwd_returns_symbolic=False):
    from functrans.custom_derivatives import CustomVJPPrimal, SymbolicZero

    @ft.custom_vjp
    def h(x, y):
        return x * y, x + y

    def h_fwd(x, y):
        assert type(x) is CustomVJPPrimal and type(y) is CustomVJPPrimal
        seen.append(("fwd", x.perturbed, y.perturbed))
        return h(x.value, y.value), (x.value, y.value)

    def h_bwd(res, ct):
        (x, y), (c1, c2) = res, ct
        seen.append(("bwd", isinstance(c1, SymbolicZero), isinstance(c2, SymbolicZero)))
        if bwd_returns_symbolic:
            return SymbolicZero.from_primal_value(x), None
        c1 = 0.0 if isinstance(c1, SymbolicZero) else c1
        c2 = 0.0 if isinstance(c2, SymbolicZero) else c2
        return c1 * y + c2, None
    h.defvjp(h_fwd, h_bwd, symbolic_zeros=True)
    return h


@pytest.mark.parametrize("transform, value, log", [
    (lambda h: ft.grad(lambda x: h(x, 3.0)[0])(2.0), 3.0,
     [("fwd", True, False), ("bwd", False, True)]),
    (lambda h: ft.grad(lambda x, y: h(x, y)[1], argnums=(0, 1))(2.0, 3.0), (1.0, 0.0),
     [("fwd", True, True), ("bwd", True, False)]),
    (lambda h: ft.vmap(ft.grad(lambda x: h(x, 3.0)[0]))(np.ones(2)), 3.0,
     [("fwd", True, False), ("bwd", False, True)]),
    (lambda h: ft.grad(lambda x: ft.vmap(lambda a: h(a, 3.0)[0])(x).sum())(np.ones(2)), 3.0,
     [("fwd", True, False), ("bwd", False, True)]),
    (lambda h: ft.jit(ft.grad(lambda x: h(x, 3.0)[0]))(2.0), 3.0,
     [("fwd", True, False), ("bwd", False, True)]),
    (lambda h: ft.grad(ft.jit(lambda x: h(x, 3.0)[0]))(2.0), 3.0,
     [("fwd", True, False), ("bwd", False, True)]),
    (lambda h: h(2.0, 3.0), (6.0, 5.0), []),
], ids=["grad", "grad-both", "vmap-grad", "grad-vmap", "jit-grad", "grad-jit", "plain"])
def test_custom_vjp_symbolic_zeros(transform, value, log):
    seen = []
    out = transform(_pair_with_symbolic_vjp(seen))
    if isinstance(value, tuple):
        for o, v in zip(out, value):
            assert_close(o, v)
    else:
        assert_close(out, np.full(np.shape(out), value))
    assert seen == log


def test_custom_vjp_symbolic_zeros_bwd_may_return_symbolic_zeros():
    h = _pair_with_symbolic_vjp([], bwd_returns_symbolic=True)
    assert ft.grad(lambda x: h(x, 3.0)[0])(2.0) == 0.0


def test_zero_from_primal_and_primal_tree_values():
    from functrans.custom_derivatives import (CustomVJPPrimal, SymbolicZero,
                                              custom_vjp_primal_tree_values, zero_from_primal)
    zeros = zero_from_primal({"w": np.ones((2, 3), np.float32), "n": 3})
    assert zeros["w"].dtype == np.float32 and not zeros["w"].any()
    assert zeros["n"].dtype == ft.float0
    z = zero_from_primal(np.ones((2, 3), np.float32), symbolic_zeros=True)
    assert type(z) is SymbolicZero and z.shape == (2, 3) and z.dtype == np.float32
    assert z.ndim == 2 and z.size == 6 and repr(z) == "SymbolicZero"
    with pytest.raises(AttributeError, match="SymbolicZero has no attribute 'nope'"):
        z.nope
    tree = {"a": CustomVJPPrimal(1.0, True), "b": [CustomVJPPrimal(2, False)]}
    assert custom_vjp_primal_tree_values(tree) == {"a": 1.0, "b": [2]}
    with pytest.raises(TypeError, match="expected a pytree of CustomVJPPrimal"):
        custom_vjp_primal_tree_values({"a": 1.0})


def test_custom_call_primitives_have_jaxs_names():
    from functrans import custom_derivatives as cd
    seen = []
    jaxpr = ft.make_jaxpr(lambda x: _product_with_symbolic_jvp(seen)(x, 2.0))(1.0)
    assert jaxpr.jaxpr.eqns[0].primitive is cd.custom_jvp_call_p
    jaxpr = ft.make_jaxpr(lambda x: _pair_with_symbolic_vjp(seen)(x, 2.0))(1.0)
    assert jaxpr.jaxpr.eqns[0].primitive is cd.custom_vjp_call_p


# ------------------------------------------------------------------------------------------
# linear_call: a linear function with a transpose of the user's (values checked with JAX)
# ------------------------------------------------------------------------------------------


def _scaled_call(x):
    # fun doubles, its "transpose" triples: which one a transform used shows in the result
    from functrans.custom_derivatives import linear_call
    return linear_call(lambda r, x: 2.0 * x, lambda r, ct: 3.0 * ct, None, x)


def test_linear_call_transforms_use_the_given_transpose():
    assert _scaled_call(1.0) == 2.0
    assert ft.jvp(_scaled_call, (1.0,), (1.0,)) == (2.0, 2.0)  # forward mode: fun itself
    assert ft.grad(_scaled_call)(1.0) == 3.0  # reverse mode: fun_transpose (JAX: 3.0 too)
    assert ft.linear_transpose(_scaled_call, 1.0)(1.0) == (3.0,)
    assert ft.jit(ft.grad(_scaled_call))(1.0) == ft.grad(ft.jit(_scaled_call))(1.0) == 3.0
    assert ft.grad(lambda x: ft.grad(_scaled_call)(x) * x)(1.0) == 3.0
    assert_close(ft.vmap(ft.grad(_scaled_call))(np.ones(2)), np.full(2, 3.0))
    jaxpr = ft.make_jaxpr(_scaled_call)(1.0)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["linear_call"]


def test_linear_call_with_residuals_pytrees_closures_and_vmap():
    from functrans.custom_derivatives import linear_call
    w = np.array([[1.0, 2.0], [3.0, 4.0]])
    x = np.array([1.0, -1.0])

    def matvec(w, x):
        return linear_call(lambda w, x: w @ x, lambda w, ct: w.T @ ct, w, x)
    loss = lambda w, x: fnp.sum(matvec(w, x) ** 2)  # noqa: E731
    assert_close(ft.grad(loss, argnums=1)(w, x), 2 * w.T @ (w @ x))
    ws, xs = np.stack([w, 2 * w]), np.stack([x, 2 * x])
    expected = np.stack([2 * a.T @ (a @ b) for a, b in zip(ws, xs)])
    assert_close(ft.vmap(ft.grad(loss, argnums=1))(ws, xs), expected)
    assert_close(ft.grad(lambda xs: fnp.sum(ft.vmap(matvec)(ws, xs) ** 2))(xs), expected)

    def scale(x, s):  # closes over s: a constant of both functions
        return linear_call(lambda r, x: x * s, lambda r, ct: ct * s, None, x)
    assert ft.grad(scale)(2.0, 3.0) == ft.jit(ft.grad(scale))(2.0, 3.0) == 3.0
    assert_close(ft.vmap(ft.grad(scale))(np.ones(2), np.array([3.0, 4.0])),
                 np.array([3.0, 4.0]))
    with pytest.raises(TypeError, match="linear_call: its residual_args"):
        ft.grad(scale, 1)(2.0, 3.0)
    with pytest.raises(TypeError, match="linear_call: its residual_args"):
        ft.grad(loss, argnums=0)(w, x)

    def pair(a, b):
        return linear_call(lambda r, x: {"s": x[0] + x[1]},
                           lambda r, ct: (ct["s"], 2.0 * ct["s"]), None, (a, b))["s"]
    assert ft.grad(pair, argnums=(0, 1))(1.0, 1.0) == (1.0, 2.0)
    with pytest.raises(TypeError, match="fun_transpose must return cotangents with the "
                                        "structure of linear_args"):
        linear_call(lambda r, x: x, lambda r, c: (c, c), None, 1.0)
    with pytest.raises(TypeError, match="returned a cotangent of type f64\\[2\\]"):
        linear_call(lambda r, x: x, lambda r, c: np.ones(2), None, 1.0)
