"""Optional: functrans.random against jax.random itself (skipped without JAX; CI does not
install it).  Run it with JAX's interpreter, e.g.
``PYTHONPATH=$PWD /tmp/venv-jax/bin/python -m pytest -q tests/test_crosscheck_jax_random.py``.

Run as a script with JAX installed, it prints the ``REFERENCE`` table of
``tests/test_random.py``: ``/tmp/venv-jax/bin/python tests/test_crosscheck_jax_random.py``.
"""
from __future__ import annotations

import pprint
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


def _literal(x: np.ndarray) -> str:
    values = pprint.pformat(x.tolist(), width=80).replace("\n", "\n" + " " * 13)
    return f"np.array({values}, np.{x.dtype.name})"


if __name__ == "__main__":
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    random = _jax_random()
    print("REFERENCE = {")
    for name in CASES:
        print(f"    {name!r}: {_literal(evaluate(random, name))},")
    print("}")
