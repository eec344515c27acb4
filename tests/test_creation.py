"""The ``CREATION_CASES`` of tests/cases_*.py (see ``sweep.CreationCase``): functions with
nothing to differentiate or batch (creation from shapes and Python values, windows, index
helpers, FFT frequencies, dtype queries) against NumPy: value, shape and dtype; the same
answer under ``jit`` (array arguments traced: dtype queries must work on tracers); and,
for functions taking ``like=``, the result built on the CuPy stand-in's device without a
copy between host and device."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from sweep import (CreationCase, check_creation_jit, check_creation_value, creation_case,
                   discovered_cases, ids, same_answer)
from test_jit import assert_same_bits

CASES = discovered_cases("CREATION_CASES")
JIT_CASES = [c for c in CASES if c.jit]
LIKE_CASES = [c for c in CASES if c.like]


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_matches_numpy(case):
    check_creation_value(case)


@pytest.mark.parametrize("case", JIT_CASES, ids=ids(JIT_CASES))
def test_jit_matches_eager(case):
    check_creation_jit(case)


@pytest.mark.parametrize("case", LIKE_CASES, ids=ids(LIKE_CASES))
def test_like_builds_on_the_device(device, case):
    anchor = device.xp.asarray(np.zeros(1))
    args = device.put(case.draw(np.random.default_rng(0)))
    with device.transfers() as counted:
        out = case(*args, like=anchor)
    if counted is not None:
        assert (counted.h2d, counted.d2h) == (0, 0), (counted.h2d_log, counted.d2h_log)
    for leaf in out if isinstance(out, (tuple, list)) else [out]:
        assert isinstance(leaf, device.array_type), f"{case.name}: {type(leaf).__name__}"
    same_answer(device.get(out), case.reference(*case.draw(np.random.default_rng(0))),
                f"{case.name} on {device.name}")


def test_cases_are_creation_cases_with_distinct_names():
    assert all(isinstance(c, CreationCase) for c in CASES)
    assert len(set(ids(CASES))) == len(CASES)


@pytest.mark.parametrize("got,want", [
    (np.zeros(2, np.float32), np.zeros(2)),     # dtype
    (np.zeros(3), np.zeros(2)),                 # shape
    (np.array([1, 2]), np.array([1, 3])),       # value
    (np.float64, np.float32),                   # dtype answers
    ((2, 3), (2, 3, 1)),                        # sequences
    (True, 1),                                  # a bool is not an int
    ([np.zeros(2)], [1.0]),                     # an array where NumPy gives a number
])
def test_same_answer_tells_answers_apart(got, want):
    with pytest.raises(AssertionError):
        same_answer(got, want)


def test_a_wrong_function_fails_the_value_check():
    wrong = creation_case("eye", lambda m: m.eye(3, k=1) if m is np else m.eye(3))
    with pytest.raises(AssertionError):
        check_creation_value(wrong)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", ["linspace", "logspace"])
def test_traced_ends_give_numpys_bits(name):
    # Traced ends (jit, or a derivative in them) use NumPy's arithmetic: i * step + start,
    # the end point exactly stop, and power for logspace; also at infinities and zeros.
    ends = [(0.1, 0.7), (-3.2, 5.9), (1e-310, 2e-310), (np.inf, 1.0), (1.0, -0.0),
            (-np.inf, 2.0), (2.0, 2.0)]
    for start, stop in ends:
        for num, endpoint in [(1, True), (2, True), (7, True), (7, False)]:
            want = getattr(np, name)(start, stop, num, endpoint=endpoint)
            got = ft.jit(lambda a, b: getattr(fnp, name)(a, b, num, endpoint=endpoint))(
                np.float64(start), np.float64(stop))
            assert_same_bits(got, want, f"{name}({start}, {stop}, {num}, {endpoint})")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_traced_geomspace_ends_exactly():
    got = ft.jit(lambda a, b: fnp.geomspace(a, b, 6))(np.float64(0.5), np.float64(7.3))
    assert got[0] == 0.5 and got[-1] == 7.3
    got = ft.jit(lambda a, b: fnp.geomspace(a, b, 4))(np.float64(1.0), np.float64(np.inf))
    assert_same_bits(got, np.geomspace(1.0, np.inf, 4), "geomspace(1, inf)")


def test_arange_of_one_integer_is_an_iota_when_staged():
    """As JAX's: under jit (and make_jaxpr) ``arange(n)`` is an ``iota`` equation, not a
    constant of n elements baked into the program; eagerly it is NumPy's array."""
    text = str(ft.make_jaxpr(lambda x: x + fnp.arange(4))(np.zeros(4)))
    assert "iota[dtype=int64, size=4]" in text.replace("i64", "int64"), text
    for args, dtype in [((5,), None), ((np.int32(3),), None), ((4,), np.float32),
                        ((0,), None), ((-2,), None)]:
        want = np.arange(*args, dtype=dtype)
        got = ft.jit(lambda: fnp.arange(*args, dtype=dtype))()
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    eager = fnp.arange(3)
    assert type(eager) is ft.Array and eager.dtype == np.arange(3).dtype
    # other forms stay constants, as JAX's
    assert "iota" not in str(ft.make_jaxpr(lambda x: x + fnp.arange(1, 5))(np.zeros(4)))
