"""Optional: functrans.random against jax.random itself (skipped without JAX; CI does not
install it).  Run it with JAX's interpreter, e.g.
``PYTHONPATH=$PWD /tmp/venv-jax/bin/python -m pytest -q tests/test_crosscheck_jax_random.py``.

Run as a script with JAX installed, it prints the ``REFERENCE`` table of
``tests/test_random.py``: ``/tmp/venv-jax/bin/python tests/test_crosscheck_jax_random.py``.
"""
from __future__ import annotations

import pprint
import re
import sys

import numpy as np
import pytest

from random_cases import CASES, evaluate


def _jax_random():
    import jax
    jax.config.update("jax_enable_x64", True)  # functrans is float64-first
    import jax.random
    assert jax.config.jax_threefry_partitionable, "the default generator changed"
    return jax.random


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name):
    pytest.importorskip("jax")
    import functrans.random as frandom
    want, got = evaluate(_jax_random(), name), evaluate(frandom, name)
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype.kind in "fc":
        tol = 4 * np.finfo(want.dtype).eps
        np.testing.assert_allclose(got, want, rtol=tol * 8, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("expr", [
    "random.normal(random.PRNGKey(3), (20000,))",
    "random.normal(random.PRNGKey(3), (20000,), np.float32)",
    # Far out, one ulp of the uniform draw moves x by ~1e-12: compared to that.
    ("random.truncated_normal(random.PRNGKey(4), 3.0, 9.0, (2000,))", 1e-11),
    "random.truncated_normal(random.PRNGKey(4), -2.0, 0.5, (2000,), np.float32)",
    "random.gamma(random.PRNGKey(5), np.linspace(0.01, 20.0, 500))",
    "random.randint(random.PRNGKey(6), (5000,), -7, 2**40 + 3)",
    # the counts: every rejection round of every element, JAX's integers
    "random.poisson(random.PRNGKey(7), np.linspace(0.0, 300.0, 3000))",
    "random.binomial(random.PRNGKey(7), np.linspace(0.0, 2000.0, 1500), 0.3)",
    "random.binomial(random.PRNGKey(8), 400.0, np.linspace(0.0, 1.0, 1500))",
    "random.multinomial(random.PRNGKey(9), 1000.0, np.array([0.05, 0.15, 0.3, 0.5]), "
    "shape=(500, 4))",
    "random.geometric(random.PRNGKey(9), np.linspace(0.001, 0.999, 3000))",
    # the transforms, and the gamma-based draws over a range of shapes
    "random.t(random.PRNGKey(10), np.linspace(0.1, 40.0, 1000))",
    "random.f(random.PRNGKey(10), np.linspace(0.5, 9.0, 1000), 4.0)",
    "random.generalized_normal(random.PRNGKey(10), 0.7, (1000,))",
    ("random.wald(random.PRNGKey(11), np.linspace(0.05, 20.0, 1000))", 1e-11),
    "random.triangular(random.PRNGKey(11), 0.0, np.linspace(0.0, 1.0, 1000), 1.0)",
])
def test_many_draws_match_jax(expr):
    """Many draws, far tails included: erfinv, the rejection loop, wide integer spans.
    In the float64 tails (|x| > 3) XLA's erfinv is off by up to ~3e-14 relative (functrans'
    agrees with SciPy's to 4e-15), hence the looser float64 tolerance here.  Float32 tails
    far out (say truncated to [-9, -5]) are ill-conditioned: one ulp of XLA's float32 erf
    moves the draw by a step of the uniform grid there, so they are not compared."""
    pytest.importorskip("jax")
    expr, tolerance = expr if isinstance(expr, tuple) else (expr, None)
    import functrans.random as frandom
    jr = _jax_random()
    want = np.asarray(eval(expr, {"random": jr, "np": np}))  # noqa: S307
    got = np.asarray(eval(expr, {"random": frandom, "np": np}))  # noqa: S307
    assert got.dtype == want.dtype
    if want.dtype.kind == "f":
        rtol = 1e-13 if want.dtype == np.float64 else 32 * np.finfo(want.dtype).eps
        rtol = tolerance or rtol
        np.testing.assert_allclose(got, want, rtol=rtol, atol=4 * np.finfo(want.dtype).eps)
    else:
        np.testing.assert_array_equal(got, want)


def _literal(x: np.ndarray) -> str:
    values = pprint.pformat(x.tolist(), width=80).replace("\n", "\n" + " " * 13)
    values = re.sub(r"\b(nan|inf)\b", r"np.\1", values)
    return f"np.array({values}, np.{x.dtype.name})"


if __name__ == "__main__":
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    random = _jax_random()
    print("REFERENCE = {")
    for name in CASES:
        print(f"    {name!r}: {_literal(evaluate(random, name))},")
    print("}")
