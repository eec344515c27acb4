"""functrans's pytest plugin (the ``rng`` fixture, ``--functrans-seed``, the reproduction
report) run in a pytest subprocess, and the hypothesis strategies of functrans.testing."""
from __future__ import annotations

import re
from importlib.metadata import entry_points

import numpy as np
import pytest
from hypothesis import given, settings

import functrans.numpy as fnp
from functrans import GradcheckError, NondifferentiableError, lax
from functrans.testing import DOMAINS, array_shapes, arrays, check_grads

pytest_plugins = ["pytester"]

PLUGIN = "functrans.pytest_plugin"
# An installed functrans (pip install -e .[test]) registers the plugin through its pytest11
# entry point, so the inner session gets it with no option; a source tree on PYTHONPATH
# (the shared dependencies-only venv) has no entry point, so the plugin is named with -p.
ENTRY_POINT = any(ep.value == PLUGIN for ep in entry_points(group="pytest11"))
PLUGIN_ARGS = [] if ENTRY_POINT else ["-p", PLUGIN]

# A test file with no functrans import for the fixture: it draws with `rng`, prints the
# draws, and fails once through the data and once inside a gradient check.
TESTS = '''
import functrans.numpy as fnp
from functrans import lax
from functrans.testing import check_grads


def test_draws_a(rng):
    print("DRAW a", rng.integers(1 << 30))


def test_draws_b(rng):
    print("DRAW b", rng.integers(1 << 30))


def test_fails_on_data(rng):
    assert rng.standard_normal() > 100


def test_fails_without_randomness():
    assert 1 == 2


def wrong_derivative(x):  # the derivative of x * x, seen as x: half the true one
    return fnp.sin(x) + lax.stop_gradient(x) * x


def test_fails_in_check(rng):
    check_grads(wrong_derivative, (rng.standard_normal(2),), order=1)
'''


def run(pytester, monkeypatch, *args, subprocess: bool = False, **env):
    """Run pytest on pytester's directory: in a subprocess (a session like a user's, the
    plugin from its entry point when installed) or in this process (faster)."""
    monkeypatch.delenv("FUNCTRANS_TEST_SEED", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    runner = pytester.runpytest_subprocess if subprocess else pytester.runpytest_inprocess
    return runner("-s", "-p", "no:cacheprovider", *PLUGIN_ARGS, *args)


def draws(result) -> dict[str, int]:
    return {m[1]: int(m[2]) for m in re.finditer(r"DRAW (\w) (\d+)", result.stdout.str())}


def test_plugin_seeds_reports_and_reproduces(pytester, monkeypatch):
    pytester.makepyfile(test_inner=TESTS)
    result = run(pytester, monkeypatch, "--functrans-seed", "5", subprocess=True)
    result.assert_outcomes(passed=2, failed=3)
    out = result.stdout.str()
    assert "functrans seed: 5" in out  # the header
    # A failing test that drew from the seed says how to rerun that test; one that did not,
    # says nothing; a failing check inside a test gives the same command.
    for name in ("test_fails_on_data", "test_fails_in_check"):
        command = f"pytest test_inner.py::{name} --functrans-seed 5"
        assert f"reproduce this test with: {command}" in out
    assert "rerun this test with: pytest test_inner.py::test_fails_in_check " \
           "--functrans-seed 5" in out
    assert "test_fails_without_randomness --functrans-seed" not in out
    assert "FUNCTRANS_TEST_SEED=" not in out  # no second, conflicting piece of advice

    # The draws depend on the seed and the test, not on which other tests run.
    alone = run(pytester, monkeypatch, "test_inner.py::test_draws_b", "--functrans-seed", "5")
    assert draws(alone) == {"b": draws(result)["b"]}
    assert draws(result)["a"] != draws(result)["b"]
    # The environment variable is the option's default; another seed draws other numbers.
    from_env = run(pytester, monkeypatch, "-k", "draws", FUNCTRANS_TEST_SEED="5")
    assert draws(from_env) == draws(result)
    other = run(pytester, monkeypatch, "-k", "draws", "--functrans-seed", "6")
    assert draws(other)["a"] != draws(result)["a"]


def test_random_seed_is_drawn_once_and_printed(pytester, monkeypatch):
    pytester.makepyfile(test_inner=TESTS)
    result = run(pytester, monkeypatch, "-k", "data or check", "--functrans-seed", "random")
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    seed = re.search(r"functrans seed: (\d+)", out)[1]
    # Both failures, and the check's message, name the one seed the session drew.
    assert len(re.findall(rf"--functrans-seed {seed}\b", out)) >= 3
    assert len(set(re.findall(r"--functrans-seed (\d+)", out))) == 1


def test_bad_seed_is_a_usage_error(pytester, monkeypatch):
    pytester.makepyfile(test_inner="def test_nothing():\n    pass\n")
    result = run(pytester, monkeypatch, "--functrans-seed", "minus-one")
    assert result.ret == pytest.ExitCode.USAGE_ERROR or result.ret != 0
    assert "--functrans-seed='minus-one': expected a non-negative integer or 'random'" \
        in result.stderr.str() + result.stdout.str()


def test_rng_fixture_in_this_session(rng, request):
    # The suite itself runs with the plugin (tests/conftest.py registers it without the
    # entry point); the fixture is a Generator seeded from the session seed and node id.
    assert isinstance(rng, np.random.Generator)
    assert request.config.getoption("functrans_seed", "absent") != "absent"


# ------------------------------------------------------------------------------------------
# hypothesis strategies and kinks
# ------------------------------------------------------------------------------------------


def relu(x):  # derivative 0 at 0, where a central difference sees 1/2
    return fnp.where(x > 0, x, 0.0)


EXAMPLES = settings(max_examples=25, deadline=None, database=None, derandomize=True)


def test_shrinking_to_a_kink_is_a_false_failure_without_detection():
    @EXAMPLES
    @given(arrays(shape=(3,), elements="real"))
    def check(x):
        check_grads(relu, (x,), order=1)

    with pytest.raises(AssertionError):
        check()


def test_detection_rejects_examples_at_a_kink():
    seen = []

    @EXAMPLES
    @given(arrays(shape=(3,), elements="real"))
    def check(x):
        seen.append(x)
        check_grads(relu, (x,), order=1, detect_nondifferentiable=True)

    check()
    assert any((x == 0).any() for x in seen)  # kinks were drawn, and rejected


def test_detection_outside_hypothesis_raises():
    with pytest.raises(NondifferentiableError, match="check_grads: relu is not differentiable"):
        check_grads(relu, (np.array([0.0, 1.0]),), order=1, detect_nondifferentiable=True)
    check_grads(relu, (np.array([0.5, 1.0]),), order=2, detect_nondifferentiable=True)


def half_square(x):  # derivative reported as x, truly 2x
    return lax.stop_gradient(x) * x


def test_detection_keeps_real_failures():
    # A wrong derivative plus a kink at 0: shrinking cannot end on the kink, so the failure
    # hypothesis reports is the real one, at a point away from it.
    @settings(max_examples=10, deadline=None, database=None, derandomize=True)
    @given(arrays(shape=(1,), elements="real"))
    def check(x):
        check_grads(lambda x: relu(x) + half_square(x), (x,), order=1,
                    detect_nondifferentiable=True)

    with pytest.raises(GradcheckError) as info:
        check()
    assert not isinstance(info.value, NondifferentiableError)
    assert "tangent output vs central difference" in str(info.value)


@pytest.mark.parametrize("domain", sorted(DOMAINS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_arrays_stay_in_their_domain(domain, dtype):
    intervals = DOMAINS[domain]

    @settings(max_examples=30, deadline=None, database=None)
    @given(arrays(shape=array_shapes(max_dims=2), dtype=dtype, elements=domain))
    def check(x):
        assert x.dtype == dtype and x.ndim <= 2
        parts = [x.real, x.imag] if x.dtype.kind == "c" else [x]
        for part in parts:
            inside = np.zeros(part.shape, bool)
            for low, high in intervals:
                inside |= (part >= low) & (part <= high)
            assert inside.all()

    check()


def test_arrays_errors_name_the_argument():
    with pytest.raises(ValueError, match="unknown elements domain 'negative'"):
        arrays(shape=(2,), elements="negative").example()
    with pytest.raises(TypeError, match="dtype must be floating or complex, got int32"):
        arrays(shape=(2,), dtype=np.int32).example()
