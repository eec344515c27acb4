"""Optional: functrans.testing.check_grads gives JAX's own verdict on the same functions,
points and options (skipped when JAX is not installed; CI does not install it).

Both draw their random directions with ``numpy.random.RandomState(0)``, so they compare
the same numbers; the rules below are wrong by amounts on either side of JAX's
size-scaled tolerances."""
from __future__ import annotations

import numpy as np
import pytest

import functrans.numpy as fnp
from functrans.testing import check_grads
from sweep import custom_jvp_with_rule

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = pytest.importorskip("jax.numpy")
from jax.test_util import check_grads as jax_check_grads  # noqa: E402


def _jax_sin(scale, offset):
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return jnp.sin(x), scale * jnp.cos(x) * t + offset
    return f


def _functrans_sin(scale, offset):
    return custom_jvp_with_rule(fnp.sin, fnp.cos, scale, offset)


def _verdict(check, *args, **kwargs) -> bool:
    try:
        check(*args, **kwargs)
    except AssertionError:
        return False
    return True


# (scale, offset, size, dtype, modes, options): offsets only in forward mode (an affine
# tangent map has no transpose).
CASES = [
    (1.0, 0.0, 1, np.float64, ("fwd", "rev"), {}),
    (1.0, 0.0, 10, np.float64, ("fwd", "rev"), {}),
    (1.0, 5e-5, 1, np.float64, ("fwd",), {}),          # fails: 5e-5 > 1e-5
    (1.0, 5e-5, 10, np.float64, ("fwd",), {}),         # passes: 5e-5 < 1e-5 · 10
    (1.0, 5e-5, 4, np.float64, ("fwd",), {}),          # fails: 5e-5 > 1e-5 · 4 + rtol
    (1.0 + 3e-5, 0.0, 1, np.float64, ("fwd", "rev"), {}),
    (1.0 + 3e-5, 0.0, 8, np.float64, ("fwd", "rev"), {}),
    (1.0 + 1e-3, 0.0, 8, np.float64, ("fwd", "rev"), {}),
    (1.0, 5e-5, 1, np.float64, ("fwd",), {"atol": {np.float64: 1e-4}}),
    (1.0, 5e-5, 1, np.float64, ("fwd",), {"atol": {np.float32: 1e-4}}),
    (1.0, 1e-9, 1, np.float64, ("fwd",), {"atol": 0.0, "rtol": 0.0}),
    (1.0, 1e-6, 1, np.float64, ("fwd",), {"atol": 0.0, "rtol": 0.0}),
    (1.0 + 1e-2, 0.0, 3, np.float32, ("fwd", "rev"), {}),
    (1.0 + 2e-4, 0.0, 3, np.float32, ("fwd", "rev"), {}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"s{c[0]}-o{c[1]}-n{c[2]}-"
                         f"{np.dtype(c[3]).name}-{'+'.join(c[4])}-{sorted(c[5])}")
def test_check_grads_verdict_matches_jax(case):
    scale, offset, size, dtype, modes, options = case
    x = np.linspace(-1.0, 1.0, size).astype(dtype) + 0.1
    ours = _verdict(check_grads, _functrans_sin(scale, offset), (x,), 1, modes=modes,
                    **options)
    theirs = _verdict(jax_check_grads, _jax_sin(scale, offset), (jnp.asarray(x),), 1,
                      modes=modes, **options)
    assert ours == theirs, f"functrans {'passes' if ours else 'fails'}, JAX " \
                           f"{'passes' if theirs else 'fails'}"


def test_second_order_verdict_matches_jax():
    x = np.array([0.3, -0.8])
    for scale in (1.0, 1.01):
        ours = _verdict(check_grads, _functrans_sin(scale, 0.0), (x,), 2)
        theirs = _verdict(jax_check_grads, _jax_sin(scale, 0.0), (jnp.asarray(x),), 2)
        assert ours == theirs


# ------------------------------------------------------------------------------------------
# test_util.check_jvp / check_vjp: the same verdicts as JAX's on custom rules
# ------------------------------------------------------------------------------------------


def _jax_sin_vjp(scale):
    @jax.custom_vjp
    def f(x):
        return jnp.sin(x)

    f.defvjp(lambda x: (jnp.sin(x), x), lambda x, g: (scale * jnp.cos(x) * g,))
    return f


def _functrans_sin_vjp(scale):
    import functrans as ft

    @ft.custom_vjp
    def f(x):
        return fnp.sin(x)

    f.defvjp(lambda x: (fnp.sin(x), x), lambda x, g: (scale * fnp.cos(x) * g,))
    return f


@pytest.mark.parametrize("scale, offset", [(1.0, 0.0), (1.0 + 1e-3, 0.0), (1.0, 5e-5),
                                           (1.0 + 3e-6, 0.0)])
def test_test_util_check_jvp_verdict_matches_jax(scale, offset):
    import functools
    import functrans as ft
    from functrans.test_util import check_jvp
    from jax.test_util import check_jvp as jax_check_jvp
    x = np.array([0.1, 0.7, -0.4])
    f, g = _functrans_sin(scale, offset), _jax_sin(scale, offset)
    ours = _verdict(check_jvp, f, functools.partial(ft.jvp, f), (x,))
    theirs = _verdict(jax_check_jvp, g, functools.partial(jax.jvp, g), (jnp.asarray(x),))
    assert ours == theirs
    assert ours == (scale == 1.0 and offset == 0.0 or scale == 1.0 + 3e-6)


@pytest.mark.parametrize("scale", [1.0, 1.0 + 1e-3, -1.0])
def test_test_util_check_vjp_verdict_matches_jax(scale):
    import functools
    import functrans as ft
    from functrans.test_util import check_vjp
    from jax.test_util import check_vjp as jax_check_vjp
    x = np.array([0.1, 0.7, -0.4])
    f, g = _functrans_sin_vjp(scale), _jax_sin_vjp(scale)
    ours = _verdict(check_vjp, f, functools.partial(ft.vjp, f), (x,))
    theirs = _verdict(jax_check_vjp, g, functools.partial(jax.vjp, g), (jnp.asarray(x),))
    assert ours == theirs == (scale == 1.0)


def test_signatures_of_smaller_modules_match_jax():
    import inspect
    import functrans.test_util as ours
    import jax.test_util as theirs
    def params(fun):
        return [(p.name, p.kind, p.default) for p in inspect.signature(fun).parameters.values()]
    for name in ("check_jvp", "check_vjp"):
        assert params(getattr(ours, name)) == params(getattr(theirs, name))
    import functrans.experimental
    import jax.experimental
    assert params(functrans.experimental.io_callback) == params(jax.experimental.io_callback)
    import functrans.dtypes
    import jax.dtypes
    assert params(functrans.dtypes.itemsize_bits) == params(jax.dtypes.itemsize_bits)
    import functrans.core
    import jax.core
    for name in ("ensure_compile_time_eval", "eval_context", "max_dim", "min_dim"):
        assert params(getattr(functrans.core, name)) == params(getattr(jax.core, name))
