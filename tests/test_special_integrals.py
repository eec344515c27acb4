"""Edges, limits, conventions and errors of the integral special functions of
functrans.scipy.special (their sweep is tests/cases_special_integrals.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as ss

import functrans as ft
import functrans.scipy.special as S
from functrans import lax
from functrans.primitives import special_integrals as P

EDGES = np.array([-2.0, -0.5, 0.0, 0.5, 1.0, 2.0, 30.0, np.inf, -np.inf, np.nan])


# -- values at the edges are SciPy's -------------------------------------------------------


@pytest.mark.parametrize("name", ["erfcx", "dawsn", "exp1", "expi", "spence"])
def test_edge_values_match_scipy(name):
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(np.isnan(getattr(S, name)(EDGES)),
                                      np.isnan(getattr(ss, name)(EDGES)))
        np.testing.assert_allclose(getattr(S, name)(EDGES), getattr(ss, name)(EDGES),
                                   rtol=1e-14, equal_nan=True)


@pytest.mark.parametrize("name", ["sici", "fresnel"])
def test_pairs_match_scipy_at_the_edges_in_scipys_order(name):
    with np.errstate(all="ignore"):
        got, want = getattr(S, name)(EDGES), getattr(ss, name)(EDGES)
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-14, equal_nan=True)
    first, second = getattr(S, name)(np.float32([0.5, 1.5]))
    assert first.dtype == second.dtype == np.float32


def test_expn_orders_and_dtypes():
    n, x = np.array([0, 1, 2, 5]), np.array([0.5, 1.0, 2.0, 3.0])
    np.testing.assert_allclose(S.expn(n, x), ss.expn(n, x), rtol=1e-14)
    assert S.expn(n, x.astype(np.float32)).dtype == np.float32
    assert S.expn([1, 2], [1, 2]).dtype == np.float64
    with np.errstate(all="ignore"):
        assert np.isnan(S.expn(2, -1.0)) and np.isinf(S.expn(1, 0.0))


# -- derivatives: limits and closed forms --------------------------------------------------


def test_limits_at_zero_and_one():
    assert float(ft.grad(lambda x: S.sici(x)[0])(0.0)) == 1.0  # sin(x) / x -> 1
    assert float(ft.grad(ft.grad(lambda x: S.sici(x)[0]))(0.0)) == 0.0
    assert float(ft.grad(lambda x: S.sici(x)[1])(0.0)) == np.inf  # as JAX
    assert float(ft.grad(S.spence)(1.0)) == -1.0  # log(x) / (1 - x) -> -1
    assert float(ft.grad(S.dawsn)(0.0)) == 1.0
    np.testing.assert_allclose(ft.grad(S.erfcx)(0.0), -2 / math.sqrt(math.pi), rtol=1e-15)
    with np.errstate(divide="ignore"):
        assert float(ft.grad(S.spence)(0.0)) == -np.inf
    fresnel_s, fresnel_c = (ft.grad(lambda x, i=i: S.fresnel(x)[i]) for i in (0, 1))
    assert float(fresnel_s(0.0)) == 0.0 and float(fresnel_c(0.0)) == 1.0


def test_derivative_formulas_at_a_point():
    x = 0.7
    np.testing.assert_allclose(ft.grad(S.spence)(x), math.log(x) / (1 - x), rtol=1e-14)
    np.testing.assert_allclose(ft.grad(S.exp1)(x), -math.exp(-x) / x, rtol=1e-14)
    np.testing.assert_allclose(ft.grad(S.expi)(-x), math.exp(-x) / -x, rtol=1e-14)
    np.testing.assert_allclose(ft.grad(lambda t: S.sici(t)[1])(-x), math.cos(x) / -x,
                               rtol=1e-14)
    np.testing.assert_allclose(ft.grad(S.expn, argnums=1)(3, x), -ss.expn(2, x), rtol=1e-14)
    # E_0(x) = exp(-x) / x: its derivative has no E_{-1} in SciPy, so a formula of its own.
    np.testing.assert_allclose(ft.grad(S.expn, argnums=1)(0, x),
                               -math.exp(-x) * (x + 1) / x ** 2, rtol=1e-14)


def test_owens_t_partials():
    h, a = 0.8, -1.3
    dh, da = ft.grad(S.owens_t, argnums=(0, 1))(h, a)
    phi = math.exp(-h * h / 2) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(dh, -phi * math.erf(a * h / math.sqrt(2)) / 2, rtol=1e-14)
    np.testing.assert_allclose(da, math.exp(-h * h * (1 + a * a) / 2)
                               / (2 * math.pi * (1 + a * a)), rtol=1e-14)


def test_expn_order_derivative_is_refused():
    with pytest.raises(ValueError, match="expn: the derivative with respect to the order n"):
        ft.grad(S.expn)(1.0, 2.0)
    with pytest.raises(ValueError, match="expn: the derivative with respect to the order n"):
        ft.jvp(lambda n: P.expn(n, 2.0), (1.0,), (1.0,))


# -- wofz: complex, holomorphic ------------------------------------------------------------


def test_wofz_dtypes_and_values():
    z = np.array([1 + 1j, -0.5 + 0.2j, 0j, 3 - 2j])
    np.testing.assert_allclose(S.wofz(z), ss.wofz(z), rtol=1e-14)
    assert S.wofz(np.float32([1.0])).dtype == np.complex64
    assert S.wofz(z.astype(np.complex64)).dtype == np.complex64
    assert S.wofz(np.array([1.0])).dtype == np.complex128
    # The primitive's type rule refuses real operands (scipy.special.wofz converts them).
    with pytest.raises(TypeError, match="wofz: the operand must be complex"):
        ft.make_jaxpr(P.wofz)(np.array([1.0]))


def test_wofz_is_holomorphic_with_the_known_derivative():
    z = np.complex128(0.4 - 0.9j)
    want = -2 * z * ss.wofz(z) + 2j / math.sqrt(math.pi)
    _, tangent = ft.jvp(S.wofz, (z,), (np.complex128(1.0),))
    np.testing.assert_allclose(tangent, want, rtol=1e-14)
    # Along i the tangent is i w'(z): the Cauchy-Riemann equations.
    _, along_i = ft.jvp(S.wofz, (z,), (np.complex128(1j),))
    np.testing.assert_allclose(along_i, 1j * want, rtol=1e-14)
    np.testing.assert_allclose(ft.grad(S.wofz, holomorphic=True)(z), want, rtol=1e-14)
    # A real z: grad of the real part is Re w'(x).
    x = 0.6
    np.testing.assert_allclose(ft.grad(lambda t: lax.real(S.wofz(t)))(x),
                               (-2 * x * ss.wofz(x) + 2j / math.sqrt(math.pi)).real,
                               rtol=1e-14)


# -- rel_entr and kl_div: JAX's conventions ------------------------------------------------

P_EDGES = np.array([-1.0, 0.0, 0.0, 1.0, 1.0, 0.5, 2.0])
Q_EDGES = np.array([1.0, 0.0, 1.0, 0.0, -1.0, 0.5, 1.0])


def test_rel_entr_and_kl_div_values_match_scipy_at_the_edges():
    np.testing.assert_array_equal(S.rel_entr(P_EDGES, Q_EDGES), ss.rel_entr(P_EDGES, Q_EDGES))
    np.testing.assert_array_equal(S.kl_div(P_EDGES, Q_EDGES), ss.kl_div(P_EDGES, Q_EDGES))
    assert S.kl_div(np.float32([1.0]), np.float32([2.0])).dtype == np.float32
    assert S.rel_entr(1, 2).dtype == np.float64


def test_rel_entr_and_kl_div_derivatives_are_jaxs():
    grad = ft.vmap(ft.grad(S.rel_entr, argnums=(0, 1)))
    dp, dq = grad(P_EDGES, Q_EDGES)
    # log(p / q) + 1 and -p / q inside p, q > 0; 0 elsewhere (not nan).
    np.testing.assert_allclose(dp, [0, 0, 0, 0, 0, 1, math.log(2) + 1], rtol=1e-15)
    np.testing.assert_allclose(dq, [0, 0, 0, 0, 0, -1, -2], rtol=1e-15)
    dp, dq = ft.vmap(ft.grad(S.kl_div, argnums=(0, 1)))(P_EDGES, Q_EDGES)
    # rel_entr's minus 1 and plus 1 from -p + q.
    np.testing.assert_allclose(dp, [-1, -1, -1, -1, -1, 0, math.log(2)], rtol=1e-15)
    np.testing.assert_allclose(dq, [1, 1, 1, 1, 1, 0, -1], rtol=1e-15)


# -- sph_harm_y ----------------------------------------------------------------------------


def test_sph_harm_y_closed_forms_with_condon_shortley_phase():
    theta, phi = np.array([0.3, 1.2, 2.5]), np.array([0.4, -1.0, 3.0])
    y11 = -0.5 * math.sqrt(3 / (2 * math.pi)) * np.sin(theta) * np.exp(1j * phi)
    np.testing.assert_allclose(S.sph_harm_y(1, 1, theta, phi), y11, rtol=1e-14)
    # Y_n^-m = (-1)^m conj(Y_n^m)
    np.testing.assert_allclose(S.sph_harm_y(1, -1, theta, phi), -np.conj(y11), rtol=1e-14)
    y20 = 0.25 * math.sqrt(5 / math.pi) * (3 * np.cos(theta) ** 2 - 1)
    np.testing.assert_allclose(S.sph_harm_y(2, 0, theta, phi), y20 + 0j, rtol=1e-14)
    y33 = -0.125 * math.sqrt(35 / math.pi) * np.sin(theta) ** 3 * np.exp(3j * phi)
    np.testing.assert_allclose(S.sph_harm_y(3, 3, theta, phi), y33, rtol=1e-13)
    assert S.sph_harm_y(1, 1, np.float32(0.3), np.float32(0.4)).dtype == np.complex64


def test_sph_harm_y_matches_scipy_to_high_degree():
    if not hasattr(ss, "sph_harm_y"):
        pytest.skip("scipy.special.sph_harm_y needs SciPy 1.15")
    n = np.repeat(np.arange(13), 3)
    m = np.clip(np.tile([-7, 0, 5], 13), -n, n)
    theta = np.linspace(0.05, 3.1, n.size)
    phi = np.linspace(-3.0, 6.0, n.size)
    np.testing.assert_allclose(S.sph_harm_y(n, m, theta, phi),
                               ss.sph_harm_y(n, m, theta, phi), rtol=1e-11, atol=1e-13)


def test_sph_harm_y_n_max_clips_and_is_needed_when_traced():
    theta, phi = np.array([0.7]), np.array([0.2])
    np.testing.assert_allclose(S.sph_harm_y(np.array([5]), np.array([1]), theta, phi, n_max=2),
                               S.sph_harm_y(np.array([2]), np.array([1]), theta, phi))
    n, m = np.array([1, 2]), np.array([0, 1])
    batched = ft.vmap(lambda n, m: S.sph_harm_y(n, m, 0.7, 0.2, n_max=2))(n, m)
    np.testing.assert_allclose(batched, S.sph_harm_y(n, m, 0.7, 0.2))
    with pytest.raises(ft.ConcretizationTypeError, match="sph_harm_y: n is traced.*n_max="):
        ft.vmap(lambda n: S.sph_harm_y(n, 0, 0.7, 0.2))(n)


def test_sph_harm_y_refusals():
    with pytest.raises(NotImplementedError, match="sph_harm_y: diff_n=1"):
        S.sph_harm_y(1, 0, 0.5, 0.5, diff_n=1)
    with pytest.raises(ValueError, match="sph_harm_y: the n argument must be of integer"):
        S.sph_harm_y(1.0, 0, 0.5, 0.5)
    np.testing.assert_allclose(S.sph_harm_y(2, 1, 0.5, 0.5, diff_n=0),
                               S.sph_harm_y(2, 1, 0.5, 0.5))


def test_sph_harm_y_derivatives_in_the_angles():
    n, m = np.array([2, 3]), np.array([1, -2])

    def re(theta, phi):
        return lax.real(S.sph_harm_y(n, m, theta, phi)).sum()

    theta, phi = np.array([0.6, 1.9]), np.array([0.3, -2.0])
    d_theta, d_phi = ft.grad(re, argnums=(0, 1))(theta, phi)
    # d/dphi Re(P e^{i m phi}) = -m Im(Y); d/dtheta by a central difference.
    np.testing.assert_allclose(d_phi, -m * S.sph_harm_y(n, m, theta, phi).imag, rtol=1e-13)
    h = 1e-6
    numeric = [(float(lax.real(S.sph_harm_y(n[i], m[i], theta[i] + h, phi[i])))
                - float(lax.real(S.sph_harm_y(n[i], m[i], theta[i] - h, phi[i])))) / (2 * h)
               for i in range(2)]
    np.testing.assert_allclose(d_theta, numeric, rtol=1e-7)
