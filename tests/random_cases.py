"""The draws compared with JAX: each entry is an expression in ``random`` (either
``jax.random`` or ``functrans.random``), ``np``, the keys ``k0 = PRNGKey(0)`` and
``k1 = PRNGKey(2**40 + 123)`` and ``k2 = PRNGKey(-7)``.  Integer draws must match JAX
exactly, float draws to rounding.  ``tests/test_random.py`` holds JAX's outputs for them
and ``tests/test_crosscheck_jax_random.py`` recomputes them with JAX when it is
installed."""
from __future__ import annotations

import numpy as np

CASES = {
    "key0": "k0",
    "key64": "k1",
    "key_negative": "k2",
    "key_uint64": "random.PRNGKey(np.uint64(2**64 - 3))",
    "key_int32": "random.PRNGKey(np.int32(-5))",
    "split2": "random.split(k1)",
    "split23": "random.split(k0, (2, 3))",
    "fold_in": "random.fold_in(k1, 12345)",
    "fold_in_max": "random.fold_in(k0, 2**32 - 1)",
    "fold_in_int": "random.fold_in(k0, np.int32(-1))",
    "bits_u8": "random.bits(k1, (2, 3), np.uint8)",
    "bits_u16": "random.bits(k1, (5,), np.uint16)",
    "bits_u32": "random.bits(k2, (2, 2), np.uint32)",
    "bits_u64": "random.bits(k1, (3,), np.uint64)",
    "bits_scalar": "random.bits(k0, (), np.uint32)",
    "uniform_f16": "random.uniform(k1, (4,), np.float16)",
    "uniform_f32": "random.uniform(k1, (4,), np.float32, -2.0, 3.0)",
    "uniform_f64": "random.uniform(k1, (2, 2), np.float64, np.array([0.0, 10.0]), 20.0)",
    "normal_f32": "random.normal(k1, (5,), np.float32)",
    "normal_f64": "random.normal(k2, (5,), np.float64)",
    "normal_c128": "random.normal(k1, (2,), np.complex128)",
    "truncated_normal": "random.truncated_normal(k1, -0.5, 2.0, (4,), np.float64)",
    "bernoulli": "random.bernoulli(k1, np.array([0.1, 0.5, 0.9]), (2, 3))",
    "randint": "random.randint(k1, (6,), -5, 17)",
    "randint_u8_clip": "random.randint(k1, (6,), -5, 300, np.uint8)",
    "randint_wide": "random.randint(k2, (3,), -2**62, 2**62, np.int64)",
    "randint_bounds": "random.randint(k0, (3,), np.array([0, 10, 100]), np.array([5, 20, 90]))",
    "permutation": "random.permutation(k1, 10)",
    "permutation_axis": "random.permutation(k1, np.arange(12).reshape(3, 4), axis=1)",
    "permutation_independent": (
        "random.permutation(k1, np.arange(12).reshape(3, 4), axis=1, independent=True)"),
    "choice": "random.choice(k1, 7, (3,))",
    "choice_noreplace": "random.choice(k1, np.arange(10.0), (4,), replace=False)",
    "choice_p": "random.choice(k1, 4, (5,), p=np.array([0.1, 0.2, 0.3, 0.4]))",
    "choice_p_noreplace": (
        "random.choice(k1, 4, (3,), replace=False, p=np.array([0.1, 0.2, 0.3, 0.4]))"),
    "categorical": (
        "random.categorical(k1, np.log(np.array([[.1, .2, .7], [.5, .25, .25]])), "
        "shape=(4, 2))"),
    "categorical_axis0": (
        "random.categorical(k1, np.log(np.array([[.1, .2, .7], [.5, .25, .25]])), axis=0)"),
    "exponential": "random.exponential(k1, (4,))",
    "laplace": "random.laplace(k1, (4,))",
    "logistic": "random.logistic(k1, (4,))",
    "gumbel": "random.gumbel(k1, (4,))",
    "gumbel_high": "random.gumbel(k1, (4,), mode='high')",
    "cauchy": "random.cauchy(k1, (4,))",
    "rademacher": "random.rademacher(k1, (6,))",
    "multivariate_normal": (
        "random.multivariate_normal(k1, np.array([1., 2.]), "
        "np.array([[2., .5], [.5, 1.]]), (3,))"),
    "orthogonal": "random.orthogonal(k1, 3)",
    "gamma": "random.gamma(k1, np.array([0.3, 1.0, 2.5, 7.0]), (2, 4))",
    "gamma_f32": "random.gamma(k1, 0.7, (4,), np.float32)",
    "loggamma": "random.loggamma(k1, np.array([1e-3, 0.5, 3.0]))",
    "beta": "random.beta(k1, 2.0, np.array([0.5, 3.0]), (2, 2))",
    "dirichlet": "random.dirichlet(k1, np.array([0.2, 1.0, 4.0]), (2,))",
    "poisson": "random.poisson(k1, np.array([0.0, 0.7, 4.0, 9.9, 10.0, 35.0, 900.0]))",
    "poisson_shape_i32": "random.poisson(k2, 3.5, (2, 3), np.int32)",
    "poisson_invalid": "random.poisson(k0, np.array([np.nan, -2.0, 0.0]))",
    "binomial": "random.binomial(k1, np.array([3.0, 20.0, 80.0, 500.0]), 0.35, (2, 4))",
    "binomial_high_p": "random.binomial(k2, 60.0, np.array([0.0, 0.6, 0.95, 1.0]))",
    "binomial_f32": "random.binomial(k1, 40.0, np.float32(0.4), (4,), np.float32)",
    "binomial_invalid": (
        "random.binomial(k0, np.array([np.nan, -1.0, np.inf, 7.5, 7.0]), "
        "np.array([0.3, 0.3, 0.3, 0.3, 1.5]))"),
    "multinomial": "random.multinomial(k1, 30.0, np.array([0.1, 0.0, 0.6, 0.3]))",
    "multinomial_shape": (
        "random.multinomial(k2, np.array([5.0, 400.0]), np.array([0.5, 0.25, 0.25]), "
        "shape=(3, 2, 3))"),
    "geometric": "random.geometric(k1, np.array([0.05, 0.5, 0.95]), (2, 3))",
    "geometric_f32": "random.geometric(k2, np.float32(0.3), (4,), np.int32)",
    "t": "random.t(k1, np.array([0.5, 3.0, 30.0]))",
    "t_f32": "random.t(k2, 4.0, (3,), np.float32)",
    "chisquare": "random.chisquare(k1, np.array([0.4, 2.0, 9.0]), (2, 3))",
    "f": "random.f(k1, np.array([3.0, 0.7]), np.array([2.5, 12.0]))",
    "lognormal": "random.lognormal(k1, np.array([0.3, 1.5]), (2, 2))",
    "lognormal_default": "random.lognormal(k2, shape=(3,))",
    "pareto": "random.pareto(k1, np.array([0.8, 3.0]), (2, 2))",
    "rayleigh": "random.rayleigh(k1, 2.0, (4,))",
    "wald": "random.wald(k1, np.array([0.2, 1.0, 5.0]), (2, 3))",
    "maxwell": "random.maxwell(k1, (4,))",
    "double_sided_maxwell": "random.double_sided_maxwell(k1, np.array([0.0, 3.0]), 0.5)",
    "double_sided_maxwell_shape": "random.double_sided_maxwell(k2, -1.0, 2.0, (4,))",
    "weibull_min": "random.weibull_min(k1, 2.0, np.array([0.5, 3.0]), (2, 2))",
    "generalized_normal": "random.generalized_normal(k1, 0.8, (4,))",
    "triangular": "random.triangular(k1, -1.0, np.array([-1.0, 0.0, 2.0]), 2.0, (2, 3))",
    "ball": "random.ball(k1, 3, 1.5, (2,))",
    "ball_default": "random.ball(k2, 4)",
}


def evaluate(random, name: str) -> np.ndarray:
    env = {"random": random, "np": np, "k0": random.PRNGKey(0),
           "k1": random.PRNGKey(2 ** 40 + 123), "k2": random.PRNGKey(-7)}
    return np.asarray(eval(CASES[name], env))  # noqa: S307 (the fixed table above)
