"""Fusion of elementwise regions into loops compiled by LLVM (NumPy ufuncs) or numba
(codegen's "Fusion"): the jit sweep with every region fused, seeded random programs
against NumPy (broadcasting, mixed dtypes, NaN and infinities, 0-d and empty arrays), the
switch, the disk cache and what ``lower(...).as_text()`` shows.  Skipped without llvmlite
(fusion is then off).
``FUNCTRANS_FUSION_COMPILER=numba`` runs the file with every region compiled by numba."""
from __future__ import annotations

import os
import re
import warnings
import subprocess
import sys

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.interpreters import codegen

pytest.importorskip("llvmlite")
#: whether regions are compiled by LLVM (else numba)
LLVM = codegen.FUSION_COMPILER == "llvm"
#: what ``as_text()`` writes above each fused loop
FUSED = "a fused loop compiled by"

import test_jit  # noqa: E402  (the sweep, run again with every region fused)


@pytest.fixture(autouse=True)
def fusion_on(monkeypatch):
    """The suite runs unfused (tests/conftest.py); here jit fuses as it does by default."""
    monkeypatch.setattr(ft.config, "fusion", True)


@pytest.fixture
def fuse_everything(monkeypatch):
    """Fuse every region of one operation or more, whatever its size."""
    monkeypatch.setattr(ft.config, "fusion", True)
    monkeypatch.setattr(codegen, "FUSION_ALWAYS", True)
    monkeypatch.setattr(codegen, "FUSION_MIN_OPS", 1)


def _kernels(f, *args) -> int:
    return ft.jit(f).lower(*args).as_text().count(FUSED)


# ------------------------------------------------------------------------------------------
# The jit sweep with every region fused (FUNCTRANS_FUSION_SWEEP=all runs all of it; by
# default every sixteenth case, and every sixty-fourth derivative case: each compiles its
# own loops, which a fresh cache pays for, up to 10 s for a derivative case)
# ------------------------------------------------------------------------------------------

_ALL = os.environ.get("FUNCTRANS_FUSION_SWEEP") == "all"
_STRIDE = 1 if _ALL else 16
# Random programs: each seed compiles new kernels (seconds each on a cold cache), so CI runs
# a few seeds; FUNCTRANS_FUSION_SWEEP=all runs more, FUNCTRANS_FUSION_SEEDS=n runs n seeds
# of each kind.
_SEEDS = range(6) if _ALL else range(3)
_REDUCTION_SEEDS = range(2) if _ALL else range(1)
if os.environ.get("FUNCTRANS_FUSION_SEEDS"):
    _SEEDS = _REDUCTION_SEEDS = range(int(os.environ["FUNCTRANS_FUSION_SEEDS"]))
_SWEEP = test_jit.SWEEP[::_STRIDE]


@pytest.mark.usefixtures("fuse_everything")
@pytest.mark.parametrize("case", _SWEEP, ids=[c.id for c in _SWEEP])
def test_jit_sweep_fused(case):
    # A fused loop warns only of what NumPy's calls (the eager evaluation) warn of: a loop
    # raising a flag they do not (a NaN compared by a signalling instruction, an operation
    # LLVM speculated past a select) would show here.
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        test_jit.test_jit_matches_eager(case)
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    fused = {m.split(" encountered")[0] for m in messages if "encountered in fused_" in m}
    numpy = {m.split(" encountered")[0] for m in messages if "encountered in fused_" not in m}
    assert fused <= numpy, (fused, numpy)


_DIFF = test_jit.SWEEP_DIFF[::1 if _ALL else _STRIDE * 4]


@pytest.mark.usefixtures("fuse_everything")
@pytest.mark.parametrize("case", _DIFF, ids=[c.id for c in _DIFF])
def test_derivatives_fused(case):
    # the backward programs (tapes, transpositions) are compiled through the same pass
    test_jit.test_derivatives_through_and_under_jit(case)


@pytest.mark.usefixtures("fuse_everything")
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", test_jit.UNARY + test_jit.BINARY)
def test_special_values_fused(name):
    f = getattr(lax, name)
    x = test_jit.SPECIAL
    ulps = 0 if name in _CORRECTLY_ROUNDED else 2
    for dtype in (np.float64, np.float32):
        x = np.concatenate([test_jit.SPECIAL, np.random.default_rng(0).standard_normal(200) * 3])
        x = x.astype(dtype)
        if name == "logistic":  # (1 + tanh(x / 2)) / 2: tanh's last place, absolutely
            np.testing.assert_allclose(ft.jit(f)(x), f(x), rtol=0, equal_nan=True,
                                       atol=2 * np.finfo(dtype).eps)
            continue
        if name in test_jit.UNARY:
            _assert_close_bits(ft.jit(f)(x), f(x), f"{name} {dtype}", ulps)
            continue
        x, y = (v.ravel() for v in np.meshgrid(x[::4], x[::3]))
        _assert_close_bits(ft.jit(f)(x, y), f(x, y), f"{name} {dtype}", ulps)


#: operations IEEE arithmetic rounds correctly, or exact ones: bit for bit as NumPy's
_CORRECTLY_ROUNDED = {"neg", "abs", "sqrt", "floor", "ceil", "sign", "square", "reciprocal",
                      "round", "add", "sub", "mul", "div", "max", "min", "rem", "nextafter"}


@pytest.mark.usefixtures("fuse_everything")
@pytest.mark.parametrize("f", [lambda x: x * 2.0 + 1.0, lambda x: (x * 2.0) * -0.0,
                               lambda x: x - -0.0 + x * 0.0])
def test_signed_zeros_fused(f):
    test_jit.test_signed_zeros_as_numpy(f)


# ------------------------------------------------------------------------------------------
# Seeded random programs against NumPy
# ------------------------------------------------------------------------------------------

#: operations whose fused arithmetic is NumPy's exactly (bit for bit)
EXACT = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "max": fnp.maximum, "min": fnp.minimum,
    "where": lambda a, b: fnp.where(a < b, a, b), "neg": lambda a, b: -a,
    "square": lambda a, b: a * a, "abs": lambda a, b: fnp.abs(b),
    "sqrt": lambda a, b: fnp.sqrt(fnp.abs(a)),
}
#: operations numba computes with its own libm calls (within 2 ulp of NumPy's)
LIBM = {
    "exp": lambda a, b: fnp.exp(a), "tanh": lambda a, b: fnp.tanh(b),
    "log1p": lambda a, b: fnp.log1p(fnp.abs(a)), "sin": lambda a, b: fnp.sin(a),
    "pow": lambda a, b: fnp.abs(a) ** 3, "logistic": lambda a, b: ft.nn.sigmoid(a),
    "atan2": lambda a, b: fnp.arctan2(a, b),
}
SHAPES = [((7, 5), (5,)), ((7, 5), (7, 1)), ((3, 4, 5), (1, 4, 1)), ((6,), ()), ((0, 3), (3,)),
          ((), ()), ((2, 3), (2, 3))]
DTYPES = [(np.float64, np.float64), (np.float32, np.float32), (np.float32, np.float64),
          (np.float64, np.int32), (np.int32, np.int32), (np.float32, np.bool_)]


def _draw(rng, shape, dtype):
    if np.dtype(dtype) == np.bool_:
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind == "i":
        return rng.integers(-5, 6, shape).astype(dtype)
    x = rng.standard_normal(shape).astype(dtype)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], dtype)
    mask = rng.random(shape) < 0.15
    x[mask] = rng.choice(special, size=int(mask.sum()))
    return x


def _program(rng, table, steps, last=None):
    """A random program of ``steps`` operations of ``table`` on two arrays (each reading
    two earlier values), then one operation of ``last``; its two last values."""
    names = [rng.choice(sorted(table)) for _ in range(steps)]
    if last:
        table = {**table, **last}
        names.append(rng.choice(sorted(last)))

    def f(a, b):
        values = [a, b]
        for name in names:
            i, j = rng_pick(len(values))
            out = table[name](values[i], values[j])
            if out.dtype == np.bool_:
                out = fnp.where(out, values[i], values[j])
            values.append(out)
        return values[-1], values[-2] if len(values) > 3 else values[-1]

    picks = [tuple(rng.integers(0, 2 + k, 2)) for k in range(len(names))]
    calls = iter(picks * 10)

    def rng_pick(n):
        i, j = next(calls)
        return int(i), int(j)
    return f, names


def _unfused(monkeypatch, f, *args):
    """``jit(f)(*args)`` with fusion off: the NumPy calls jit writes without it."""
    with monkeypatch.context() as m:
        m.setattr(ft.config, "fusion", False)
        return ft.jit(f)(*args)


def _ulps(got, want):
    """Distance in units in the last place (0 where both are NaN or equal)."""
    got, want = np.asarray(got), np.asarray(want)
    if want.dtype.kind != "f":
        return np.where(got == want, 0, np.iinfo(np.int64).max)
    both_nan = np.isnan(got) & np.isnan(want)
    same = (got == want) | both_nan
    spacing = np.spacing(np.maximum(np.abs(want), np.finfo(want.dtype).tiny).astype(want.dtype))
    with np.errstate(invalid="ignore", over="ignore"):
        distance = np.abs(got.astype(np.float64) - want.astype(np.float64)) / spacing
    return np.where(same, 0, np.where(np.isfinite(distance), distance, np.inf))


def _assert_close_bits(got, want, what, ulps=0, zero_signs=True):
    """``got`` is ``want`` to ``ulps`` units in the last place (bit for bit with 0, the
    signs of zeros too unless ``zero_signs`` is False)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype)
    distance = _ulps(got, want)
    assert np.all(distance <= ulps), f"{what}: {np.max(distance)} ulp\n{got}\n{want}"
    if ulps == 0 and want.dtype.kind == "f" and zero_signs:
        finite = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(got[finite]), np.signbit(want[finite]), what)


@pytest.mark.usefixtures("fuse_everything")
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("last,ulps", [(None, 0), (LIBM, 2)], ids=["exact", "libm"])
@pytest.mark.parametrize("seed", _SEEDS)
def test_random_programs_against_numpy(last, ulps, seed, monkeypatch):
    # Exact operations give NumPy's bits, so a libm operation ending the program sees
    # NumPy's operands and is within 2 ulp of NumPy's result.
    rng = np.random.default_rng(seed)
    for shapes in SHAPES:
        for dtypes in DTYPES:
            if any(np.dtype(d).kind in "bi" for d in dtypes) and last:
                continue
            a, b = (_draw(rng, s, d) for s, d in zip(shapes, dtypes))
            f, names = _program(rng, EXACT, int(rng.integers(2, 7)), last)
            with np.errstate(all="ignore"):
                try:  # the NumPy calls jit writes without fusion
                    with monkeypatch.context() as m:
                        m.setattr(ft.config, "fusion", False)
                        want = ft.jit(f)(a, b)
                except TypeError:  # e.g. negating a boolean
                    continue
                got = ft.jit(f)(a, b)
            what = f"{names} on {shapes} {dtypes}"
            if names[-1] == "logistic":  # see test_special_values_fused
                np.testing.assert_allclose(got[0], want[0], rtol=0, equal_nan=True,
                                           atol=2 * np.finfo(want[0].dtype).eps)
                got, want = got[1:], want[1:]
            for g, w in zip(got, want):
                _assert_close_bits(g, w, what, ulps)


#: reductions that may end a fused region (over trailing axes)
REDUCTIONS = {"sum": fnp.sum, "max": fnp.max, "min": fnp.min}
#: shapes with at least one axis, some with broadcasting, a size-1 axis and empty kept axes
REDUCED_SHAPES = [((7, 5), (5,)), ((7, 5), (7, 1)), ((3, 4, 5), (1, 4, 1)), ((6,), ()),
                  ((0, 3), (3,)), ((2, 3), (2, 3)), ((4, 300), (300,)), ((1000,), (1,)),
                  ((5, 1), (5, 1))]


@pytest.mark.usefixtures("fuse_everything")
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("seed", _REDUCTION_SEEDS)
def test_random_programs_with_trailing_reductions(seed, monkeypatch):
    # A random program, then sum, max or min over its last axes, fused into the loop: the
    # same bits as NumPy's reductions of the unfused program (sums of floats pairwise as
    # NumPy's; max and min propagate NaN), the unreduced value beside it too.
    rng = np.random.default_rng(100 + seed)
    fused = cases = 0
    for shapes in REDUCED_SHAPES:
        for dtypes in DTYPES:
            a, b = (_draw(rng, s, d) for s, d in zip(shapes, dtypes))
            a[..., :1] = -0.0 if a.dtype.kind == "f" else a[..., :1]  # signed zeros
            program, names = _program(rng, EXACT, int(rng.integers(1, 5)))
            ndim = len(np.broadcast_shapes(a.shape, b.shape))
            reduced = int(rng.integers(1, ndim + 1))  # trailing axes
            kind = str(rng.choice(sorted(REDUCTIONS)))

            def f(a, b, program=program, kind=kind, reduced=reduced):
                last, previous = program(a, b)
                n = last.ndim
                return REDUCTIONS[kind](last, axis=tuple(range(max(n - reduced, 0), n))), previous

            with np.errstate(all="ignore"):
                try:
                    want = _unfused(monkeypatch, f, a, b)
                except (TypeError, ValueError):  # negating a boolean, max of nothing
                    continue
                jitted = ft.jit(f)
                text = jitted.lower(a, b).as_text()
                got = jitted(a, b)
            what = f"{names} then {kind} over {reduced} axes on {shapes} {dtypes}"
            fused += ("r0 = np.empty(" in text  # the reduction is in the loop
                      or "red0 = " in text)
            cases += 1
            # the sign of a zero that max or min picks among zeros of both signs is
            # NumPy's SIMD loops' (test_max_and_min_among_zeros_of_both_signs)
            _assert_close_bits(got[0], want[0], what, zero_signs=kind == "sum")
            _assert_close_bits(got[1], want[1], what)
    assert fused > cases // 3, (fused, cases)


@pytest.mark.usefixtures("fuse_everything")
def test_max_and_min_among_zeros_of_both_signs():
    # Which zero NumPy's max and min return among 0.0 and -0.0 depends on its SIMD loops
    # (the CPU's vector width, the length, where the zeros fall): the fused loop's is
    # sequential (the later of equal values), so only the value is NumPy's, not the sign.
    x = np.where(np.random.default_rng(5).random((7, 129)) < 0.5, 0.0, -0.0)
    x[2, 5] = np.nan
    x[3, :] = -0.0
    for reduce in (fnp.max, fnp.min):
        f = ft.jit(lambda x: reduce(x * 2.0, axis=-1))
        text = f.lower(x).as_text()
        assert "red0 = " in text or "r0 = np.empty(" in text  # in the loop (LLVM, numba)
        got, want = f(x), reduce(x * 2.0, axis=-1)
        _assert_close_bits(got, want, reduce.__name__, zero_signs=False)
        assert np.isnan(got[2]) and np.signbit(got[3])  # NaN wins; all -0.0: -0.0


def test_a_trailing_reduction_ends_the_loop(monkeypatch):
    monkeypatch.setattr(ft.config, "fusion", True)
    x, y = np.linspace(-2, 2, 30000).reshape(100, 300), np.linspace(0, 1, 300)
    x[3, 7] = np.nan
    for reduce in (fnp.sum, fnp.max, fnp.min):
        f = ft.jit(lambda x, y: reduce((x * y + 1.0) * x, axis=-1))
        text = f.lower(x, y).as_text()
        assert text.count(FUSED) >= 1 and ".sum(" not in text and "xp.max" not in text
        want = reduce((x * y + 1.0) * x, axis=-1)
        _assert_close_bits(f(x, y), want, reduce.__name__)
    # a reduction over leading axes, or one whose result the loop reads, is NumPy's
    text = ft.jit(lambda x, y: fnp.sum((x * y + 1.0) * x, axis=0)).lower(x, y).as_text()
    assert ".sum(axis=(0,)" in text
    g = ft.jit(lambda x, y: (x * y + 1.0) * x - fnp.max(x * y, axis=1, keepdims=True))
    want = (x * y + 1.0) * x - np.max(x * y, axis=1, keepdims=True)
    _assert_close_bits(g(x, y), want, "softmax-like")


# ------------------------------------------------------------------------------------------
# When regions are fused, the switch, the cache, introspection
# ------------------------------------------------------------------------------------------

def _arith(x, y):
    return (x * y + 1.0) * x - fnp.maximum(y, 0.5)


def _libm(x):
    return fnp.tanh(fnp.sin(x))


def test_which_regions_are_fused(monkeypatch):
    monkeypatch.setattr(ft.config, "fusion", True)
    big, small = np.ones((100, 100)), np.ones((3, 4))
    # arithmetic: the loop beats NumPy's calls at every size
    assert _kernels(_arith, big, big[0]) == _kernels(_arith, small, small[0]) == 1
    assert _kernels(lambda x: x * 2.0, big) == 0  # one operation: nothing to save
    # libm functions: NumPy's are vectorised, so only many operations on small arrays pay
    assert _kernels(_libm, big) == 0
    many = lambda x: _libm(_libm(_libm(x)) * 0.9 + 0.1)  # noqa: E731
    assert _kernels(many, np.ones(8)) == 1
    # on large arrays the libm calls stay NumPy's and the arithmetic between them is fused
    text = ft.jit(many).lower(big).as_text()
    assert text.count(FUSED) == 1 and "xp.tanh(" in text and "np.tanh(" not in text
    # one tanh among much arithmetic: NumPy's vectorised tanh beats the loop's scalar
    # calls from a few hundred elements on, the arithmetic around it is fused either way
    hvp = ft.jit(lambda x, v: ft.jvp(ft.grad(lambda x: fnp.sum(fnp.tanh(x) ** 2 * x)),
                                     (x,), (v,))[1])
    text = hvp.lower(np.ones(1000), np.ones(1000)).as_text()
    assert text.count(FUSED) >= 1 and "xp.tanh(" in text and "np.tanh(" not in text
    text = hvp.lower(np.ones(8), np.ones(8)).as_text()
    assert text.count(FUSED) == 1 and "xp.tanh(" not in text and "np.tanh(" in text


def test_the_switch_turns_fusion_off(monkeypatch):
    big = np.linspace(-2, 2, 10000).reshape(100, 100)
    monkeypatch.setattr(ft.config, "fusion", False)
    text = ft.jit(_arith).lower(big, big[0]).as_text()
    assert FUSED not in text and "xp.maximum" in text
    off = ft.jit(_arith)(big, big[0])
    monkeypatch.setattr(ft.config, "fusion", True)
    on = ft.jit(_arith)(big, big[0])
    _assert_close_bits(on, off, "fused against unfused")


def test_as_text_shows_the_kernel(monkeypatch):
    monkeypatch.setattr(ft.config, "fusion", True)
    big = np.ones((100, 100))
    text = ft.jit(_arith).lower(big, big[0]).as_text()
    if LLVM:  # the ufunc's call, and the scalar program it computes for each element
        assert re.search(r"= \(_fk\d+\(v0, v1, v2\),\)", text), text
        assert "a fused loop compiled by LLVM into a NumPy ufunc" in text
        assert "#   x1: float64\n" in text and "#   out0 = t" in text
        return
    assert re.search(r"= _fk\d+\(v0, v1, v2, \(100, 100\)\)", text)
    assert "def kernel(a0, a1, a2, shape):" in text
    assert "x1 = a1[i1]" in text  # the row broadcasts along the first axis


def test_custom_jvp_functions_are_inlined_and_fused(monkeypatch):
    """jit evaluates a custom_jvp function (relu, softplus, gelu) as its jaxpr: inlined,
    its operations join the loop of their neighbours."""
    monkeypatch.setattr(ft.config, "fusion", True)
    monkeypatch.setattr(codegen, "FUSION_ALWAYS", True)
    x = np.linspace(-3, 3, 1001)

    def f(x):
        return ft.nn.relu(x * 2.0 - 1.0) + ft.nn.softplus(x) * ft.nn.gelu(x + 0.5)
    text = ft.jit(f).lower(x).as_text()
    assert "custom_jvp" not in text and text.count(FUSED) >= 1, text
    np.testing.assert_allclose(ft.jit(f)(x), f(x), rtol=1e-14, atol=1e-15)


def test_gradients_are_fused_too(monkeypatch):
    monkeypatch.setattr(ft.config, "fusion", True)
    x, y = np.linspace(-2, 2, 10000).reshape(100, 100), np.linspace(0, 1, 100)
    g = ft.jit(ft.grad(lambda x: fnp.sum(_arith(x, y) * fnp.tanh(x))))
    assert FUSED in g.lower(x).as_text()
    monkeypatch.setattr(ft.config, "fusion", False)
    want = ft.grad(lambda x: fnp.sum(_arith(x, y) * fnp.tanh(x)))(x)
    monkeypatch.setattr(ft.config, "fusion", True)
    np.testing.assert_allclose(g(x), want, rtol=1e-13, atol=1e-14)


def test_a_new_process_loads_kernels_from_the_disk_cache(tmp_path):
    code = ("import time, numpy as np, functrans as ft, functrans.numpy as fnp\n"
            "x = np.ones((100, 100))\n"
            "f = ft.jit(lambda x: (x * 2.0 + 1.0) * x - 3.0)\n"
            "t = time.perf_counter(); f(x); print(time.perf_counter() - t)\n")
    env = dict(os.environ, FUNCTRANS_CACHE_DIR=str(tmp_path))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cold, warm = (float(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                       capture_output=True, text=True, cwd=root).stdout)
                  for _ in range(2))
    files = os.listdir(tmp_path / "kernels")
    if LLVM:
        assert any(name.startswith("lk_") and name.endswith(".o") for name in files)
    else:
        assert any(name.endswith(".py") for name in files)
        assert any(name == "__pycache__" for name in files)  # numba's machine code
    assert warm < cold


_STATS = ("import sys, numpy as np, functrans as ft\n"
          "f = ft.jit(lambda x: (x * 2.0 + 1.0) * x - 3.0)\n"
          "s = f.lower(np.ones((100, 100))).compile_stats()\n"
          "idx = np.arange(200).reshape(50, 4) % 30\n"  # a scatter-add loop: gather's transpose
          "g = ft.jit(ft.grad(lambda t: (ft.numpy.take(t, idx, axis=0) ** 2).sum()))\n"
          "assert np.array_equal(g(np.ones((30, 8))), np.bincount(idx.ravel(), minlength=30)"
          "[:, None] * 2.0 * np.ones((30, 8)))\n"
          "print(s['kernels_loaded'], s['kernels_compiled'], 'numba' in sys.modules,"
          " 'llvmlite' in sys.modules)\n")


def _stats_in_new_process(directory, **env) -> list:
    env = dict(os.environ, FUNCTRANS_CACHE_DIR=str(directory), FUNCTRANS_FUSION="1", **env)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", _STATS], env=env, check=True,
                         capture_output=True, text=True, cwd=root).stdout
    return out.split()


@pytest.mark.skipif(not LLVM, reason="the LLVM compiler's cache")
def test_object_code_cache_loaded_or_compiled_again(tmp_path):
    # a new process loads the object code (compile_stats says so) without importing numba,
    # and where the system has a linker, from shared libraries without importing LLVM;
    # a corrupt (or truncated) file, or a missing one, is compiled again
    from functrans.interpreters import llvm_kernels
    linked = llvm_kernels._linker() is not None
    assert _stats_in_new_process(tmp_path) == ["0", "1", "False", "True"]
    assert _stats_in_new_process(tmp_path) == ["1", "0", "False", str(not linked)]
    objects = sorted((tmp_path / "kernels").glob("lk_*.o"))
    libraries = sorted((tmp_path / "kernels").glob("lk_*.so"))
    assert len(libraries) == (len(objects) if linked else 0)
    paths = objects + libraries
    blobs = [path.read_bytes() for path in paths]
    for path, blob in zip(libraries, blobs[len(objects):]):  # the object code still loads
        path.write_bytes(blob[:-100] + bytes(100))
    assert _stats_in_new_process(tmp_path) == ["1", "0", "False", "True"]
    for path, blob in zip(paths, blobs):
        path.write_bytes(blob[:-100] + bytes(100))
    assert _stats_in_new_process(tmp_path) == ["0", "1", "False", "True"]
    for path, blob in zip(paths, blobs):
        path.write_bytes(blob[:len(blob) // 2])
    assert _stats_in_new_process(tmp_path) == ["0", "1", "False", "True"]
    assert [path.read_bytes() for path in objects] == blobs[:len(objects)]  # whole again
    for path in paths:
        path.unlink()
    assert _stats_in_new_process(tmp_path) == ["0", "1", "False", "True"]
    assert _stats_in_new_process(tmp_path) == ["1", "0", "False", str(not linked)]
    # a record of the host naming another engine (llvmlite upgraded): the kernels are
    # those of the engine this process has
    for path in (tmp_path / "kernels").glob("host_*"):
        path.write_text("another engine\n")
    assert _stats_in_new_process(tmp_path) == ["1", "0", "False", "True"]
    assert _stats_in_new_process(tmp_path) == ["1", "0", "False", str(not linked)]


@pytest.mark.skipif(not LLVM, reason="the LLVM compiler's cache")
def test_without_a_linker_the_engine_loads_the_object_code(tmp_path):
    assert _stats_in_new_process(tmp_path, FUNCTRANS_NO_LINKER="1") == [
        "0", "1", "False", "True"]
    assert _stats_in_new_process(tmp_path, FUNCTRANS_NO_LINKER="1") == [
        "1", "0", "False", "True"]
    assert not list((tmp_path / "kernels").glob("lk_*.so"))


_ENGINE = ("import numpy as np, functrans as ft\n"
           "from functrans.interpreters import llvm_kernels as lk\n"
           "ft.jit(lambda x: (x * 2.0 + 1.0) * x - 3.0)(np.ones((100, 100)))\n"
           "print(len(lk._engine().objects), lk._engine().machine.target_data is not None,"
           " lk._engine().identity.splitlines()[-1])\n")


@pytest.mark.skipif(not LLVM, reason="the LLVM compiler")
@pytest.mark.parametrize("linker", ["", "1"], ids=["linker", "no_linker"])
def test_compiled_loops_never_need_32_bit_offsets_between_sections(tmp_path, linker):
    """LLVM's engine maps an object's sections one by one; in a process whose address
    space has grown (this test suite on a cold cache did it) the small code model's 32-bit
    offsets from a loop's code to its constants overflow and LLVM aborts the process.
    With the system's linker a freshly compiled loop is loaded as a shared library by the
    system's loader, as a warm process loads it (the engine holds no object); without one
    the engine loads code of the large code model."""
    if linker == "" and llvm_kernels_linker() is None:
        pytest.skip("no system linker here")
    env = dict(os.environ, FUNCTRANS_CACHE_DIR=str(tmp_path), FUNCTRANS_FUSION="1",
               FUNCTRANS_NO_LINKER=linker)
    out = subprocess.run([sys.executable, "-c", _ENGINE], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    want = ["0", "True", "pic"] if linker == "" else ["1", "True", "static", "large"]
    assert out == want, out


def llvm_kernels_linker():
    from functrans.interpreters import llvm_kernels
    return llvm_kernels._linker()


@pytest.mark.skipif(not LLVM, reason="the LLVM compiler")
def test_two_threads_compile_one_kernel(tmp_path):
    import threading
    from functrans.interpreters import llvm_kernels
    # a program no other test makes: both threads get one ufunc, compiled once
    program = [("t0", np.dtype(np.float64), "(x0 * np.float64(3.25))"),
               ("t1", np.dtype(np.float64), "(t0 - x0)")]
    before = dict(llvm_kernels.counts)
    results: list = []
    barrier = threading.Barrier(2)

    def compile_it():
        barrier.wait()
        results.append(llvm_kernels.ufunc_kernel([(np.float64, False)], program,
                                                 [("t1", np.float64)], str(tmp_path)))

    threads = [threading.Thread(target=compile_it) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 2 and results[0] is results[1]
    assert llvm_kernels.counts["compiled"] - before["compiled"] == 1
    x = np.linspace(-1, 1, 11)
    np.testing.assert_array_equal(results[0].ufunc(x), x * 3.25 - x)


@pytest.mark.usefixtures("fuse_everything")
def test_long_libm_regions_compute_several_elements_at_once(monkeypatch):
    # a region of many libm calls computes four elements at a time in its contiguous loop,
    # the strided loop finishing the rest: every size, contiguous or strided, as NumPy's
    def chain(x):
        for _ in range(20):
            x = fnp.tanh(fnp.sin(x)) * 0.9 + 0.1
        return x

    x = np.linspace(-2, 2, 23)
    jitted = ft.jit(chain)
    for n in range(10):
        for operand in (x[:n], x[::2][:n]):
            with monkeypatch.context() as m:
                m.setattr(ft.config, "fusion", False)
                want = ft.jit(chain)(operand)
            _assert_close_bits(jitted(operand), want, f"{n} elements", ulps=4)
    assert FUSED in jitted.lower(x).as_text()


def test_import_loads_no_compiler():
    code = "import sys, functrans, functrans.numpy; print('numba' in sys.modules, " \
           "'llvmlite' in sys.modules)"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, cwd=root).stdout
    assert out.split() == ["False", "False"]


@pytest.mark.skipif(not LLVM, reason="numba's loops check no floating-point flags")
@pytest.mark.usefixtures("fuse_everything")
def test_floating_point_warnings_as_unfused(monkeypatch):
    # NumPy checks the flags after a ufunc's loop: log(0) and 0/0 in a fused region warn as
    # the NumPy calls do; comparisons and maximum of NaN warn of nothing (nor do NumPy's)
    import warnings

    def messages(f, *args):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            f(*args)
        return sorted({str(w.message).split(" encountered")[0] for w in caught})

    x = np.array([0.0, 1.0, 2.0, np.nan])
    cases = [(lambda x: fnp.log(x) * 2.0 + 1.0, (x,), ["divide by zero"]),
             (lambda x: (x * 0.0) / (x * 0.0) + 1.0, (x,), ["invalid value"]),
             (lambda x: fnp.log(x - 1.0) * 2.0 - x, (x,), ["divide by zero", "invalid value"]),
             (lambda x: fnp.where(x < 1.0, x * 2.0, fnp.maximum(x, 0.5) + 1.0), (x,), []),
             (lambda x: (x >= 1.0) | (x <= 0.5) | (x > 3.0) | fnp.isfinite(x * 2.0),
              (x,), []),
             (lambda x: fnp.minimum(x * 2.0, 1.0) - x, (x.astype(np.float32),), [])]
    for f, args, want in cases:
        with monkeypatch.context() as m:
            m.setattr(ft.config, "fusion", False)
            assert messages(ft.jit(f), *args) == want
        jitted = ft.jit(f)
        assert FUSED in jitted.lower(*args).as_text()
        assert messages(jitted, *args) == want, jitted.lower(*args).as_text()


def test_without_a_compiler_the_code_is_the_numpy_code(monkeypatch):
    big = np.ones((100, 100))
    monkeypatch.setattr(ft.config, "fusion", False)
    off = ft.jit(_arith).lower(big, big[0]).as_text()
    monkeypatch.setattr(ft.config, "fusion", True)
    monkeypatch.setattr(codegen, "_fusion_compilers", lambda: ())
    assert not codegen.fusion_active()
    assert ft.jit(_arith).lower(big, big[0]).as_text() == off


def test_regions_no_compiler_takes_stay_numpy(monkeypatch):
    monkeypatch.setattr(ft.config, "fusion", True)
    monkeypatch.setattr(codegen, "_compiles", lambda *args: False)
    from functrans.interpreters import llvm_kernels
    monkeypatch.setattr(llvm_kernels, "ufunc_kernel", lambda *args: None)
    big = np.linspace(0, 1, 10000).reshape(100, 100)
    f = ft.jit(lambda x, y: _arith(x, y))  # a new function: compiled afresh
    assert FUSED not in f.lower(big, big[0]).as_text()
    np.testing.assert_array_equal(f(big, big[0]), _arith(big, big[0]))


def test_views_and_read_only_operands(monkeypatch):
    monkeypatch.setattr(ft.config, "fusion", True)
    x = np.linspace(-1, 1, 20000).reshape(200, 100)
    const = np.linspace(0, 1, 100)
    const.setflags(write=False)
    def g(x):
        return (x.T[::2] * 2.0 + 1.0) * x.T[::2] - const[:50, None]
    with monkeypatch.context() as m:
        m.setattr(ft.config, "fusion", False)
        want = ft.jit(g)(x)
    f = ft.jit(g)
    assert FUSED in f.lower(x).as_text()
    _assert_close_bits(f(x), want, "strided")
    _assert_close_bits(f(np.asfortranarray(x)), want, "Fortran order")


def test_integer_index_arithmetic_is_fused(monkeypatch):
    # (i < 0) ? i + n : i, the normalisation of negative indices: comparisons and select
    # are not libm calls
    monkeypatch.setattr(ft.config, "fusion", True)
    i = np.arange(-5000, 5000)
    f = ft.jit(lambda i: fnp.where(i < 0, i + 10000, i) * 2)
    assert FUSED in f.lower(i).as_text()
    np.testing.assert_array_equal(f(i), np.where(i < 0, i + 10000, i) * 2)


# ------------------------------------------------------------------------------------------
# GPU kernels: CUDA source from the same regions (checked as text: no GPU in CI), and the
# CuPy stand-in running the regions' equations
# ------------------------------------------------------------------------------------------

def _standin(*arrays):
    import cupy_standin
    return [cupy_standin.asarray(a) for a in arrays]


def test_cuda_elementwise_kernel_source():
    x, y = _standin(np.linspace(-2, 2, 300).reshape(3, 100), np.linspace(0, 1, 100))
    text = ft.jit(lambda x, y: (x * y + 1.0) * fnp.tanh(x) - y).lower(x, y).as_text()
    assert re.search(r"v\d+, = _fk0\(v0, v1, \(3, 100\)\)", text)
    assert "cupy.ElementwiseKernel(" in text and "numba" not in text
    assert "in_params='float64 x0, float64 x1'" in text
    assert "out_params='float64 o0'" in text
    for line in ("double t0 = (x0 * x1);", "double t1 = (t0 + ((double)(1.0)));",
                 "double t2 = tanh(x0);", "double t3 = (t1 * t2);"):
        assert line in text, line
    assert re.search(r"^o0 = t\d+;$", text, re.M)
    # float32, a comparison and a select: C types and the conditional operator
    x32 = _standin(np.linspace(-1, 1, 50).astype(np.float32))[0]
    text = ft.jit(lambda x: fnp.where(x > 0, x * 2.0, -x) + 1.0).lower(x32).as_text()
    assert "in_params='float32 x0'" in text and "float t" in text
    assert re.search(r"bool t\d+ = .*\(x0 > ", text)
    assert re.search(r"\(t\d+ \? t\d+ : t\d+\)", text)


def test_cuda_reduction_kernel_source():
    x, y = _standin(np.linspace(-2, 2, 300).reshape(3, 100), np.linspace(0, 1, 100))
    text = ft.jit(lambda x, y: fnp.sum((x * y + 1.0) * x, axis=-1)).lower(x, y).as_text()
    assert "cupy.ReductionKernel(" in text
    assert "reduce_expr='a + b'" in text and "identity='0'" in text
    assert re.search(r"__device__ double functrans_fused_\w+_map\(double x0, double x1\)",
                     text)
    assert re.search(r"map_expr='functrans_fused_\w+_map\(x0, x1\)'", text)
    text = ft.jit(lambda x, y: fnp.max(x * y - 1.0, axis=1)).lower(x, y).as_text()
    assert "(a != a) ? a : ((b != b) ? b : ((a > b) ? a : b))" in text  # NaN wins
    assert "identity='-__longlong_as_double(0x7ff0000000000000LL)'" in text
    i = _standin(np.arange(12, dtype=np.int64).reshape(3, 4))[0]
    text = ft.jit(lambda i: fnp.max(i * 3 + 1, axis=1)).lower(i).as_text()
    assert "identity='(long long)(-9223372036854775807LL - 1)'" in text
    # a reduction whose operand is read elsewhere too, or two reductions: one
    # ReductionKernel computes one value, so the region's elementwise part is one
    # ElementwiseKernel and its reductions CuPy's calls after it
    for f in (lambda x, y: (fnp.sum(x * y + 1.0, axis=1), x * y + 1.0),
              lambda x, y: (fnp.sum(x * y + 1.0, axis=1), fnp.max(x * y + 1.0, axis=1))):
        text = ft.jit(f).lower(x, y).as_text()
        assert "ReductionKernel" not in text and text.count("cupy.ElementwiseKernel(") == 1
        assert ".sum(axis=(1,)" in text


def test_cuda_expression_translation():
    assert codegen.cuda_expression("(x0 if x1 > x0 or x1 != x1 else x2)") == (
        "(((x1 > x0) || (x1 != x1)) ? x0 : x2)")
    assert codegen.cuda_expression("np.float32(np.power(x0, np.float32(3.0)))") == (
        "((float)(pow(x0, ((float)(3.0)))))")
    assert codegen.cuda_expression("np.float64(np.nan)") == (
        "((double)(__longlong_as_double(0x7ff8000000000000LL)))")  # NumPy's NaN, by its bits
    assert codegen.cuda_expression("(-np.inf)") == (
        "(-__longlong_as_double(0x7ff0000000000000LL))")
    assert codegen.cuda_expression("(not x0)") == "(!x0)"
    assert codegen.cuda_expression("np.arctan2(x0, -x1)") == "atan2(x0, (-x1))"
    with pytest.raises(ValueError, match="no CUDA translation"):
        codegen.cuda_expression("np.frexp(x0)")


def _cuda_kernels(monkeypatch, every_sweep_case: int) -> list:
    """The CuPy kernels (``codegen.CudaKernel``, with their regions' ranks) of seeded random
    programs and of test_standin's fused programs on the CuPy stand-in, and of every
    ``every_sweep_case``-th case of the jit sweep and of its derivatives, compiled as for
    CuPy (their NumPy arrays run the kernels' fallback; the cases check their values)."""
    import cupy_standin
    import test_standin
    kernels = {}
    make = codegen._cuda_fused_equation

    def recording(region, uses):
        fused = make(region, uses)
        if fused is not None:
            kernels.setdefault(fused[1].source, (fused[1], len(region.shape)))
        return fused

    monkeypatch.setattr(codegen, "_cuda_fused_equation", recording)
    rng = np.random.default_rng(7)
    for shapes in REDUCED_SHAPES + SHAPES:
        for dtypes in DTYPES:
            a, b = (cupy_standin.asarray(_draw(rng, s, d)) for s, d in zip(shapes, dtypes))
            exact, _ = _program(rng, EXACT, int(rng.integers(2, 7)))
            libm, _ = _program(rng, EXACT, int(rng.integers(2, 5)), LIBM)
            reduced, _ = _program(rng, EXACT, int(rng.integers(1, 5)))
            kind = str(rng.choice(sorted(REDUCTIONS)))
            programs = [exact, libm] + ([lambda a, b, p=reduced, kind=kind: REDUCTIONS[kind](
                p(a, b)[0], axis=-1)] if a.ndim or b.ndim else [])
            for f in programs:
                with np.errstate(all="ignore"):
                    try:
                        ft.jit(f).lower(a, b)
                    except (TypeError, ValueError):  # negating a boolean, max of nothing
                        pass
    x, y = rng.standard_normal((6, 40)), rng.standard_normal(40)
    i = rng.integers(-5, 6, (6, 40))
    for f in test_standin.FUSED_PROGRAMS.values():
        ft.jit(f).lower(*[cupy_standin.asarray(a) for a in (x, y, i)])
    target = codegen._fusion_target
    monkeypatch.setattr(codegen, "_fusion_target", lambda library: (
        "cuda" if not library.lazy and ft.config.fusion else target(library)))
    _run_jit_sweep(every_sweep_case)
    return list(kernels.values())


def _run_jit_sweep(stride: int) -> None:
    """Every ``stride``-th case of the jit sweep, and every ``2 * stride``-th of its
    derivatives (their own checks against eager evaluation)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for case in test_jit.SWEEP[::stride]:
            test_jit.test_jit_matches_eager(case)
        for case in test_jit.SWEEP_DIFF[::stride * 2]:
            test_jit.test_derivatives_through_and_under_jit(case)


@pytest.mark.usefixtures("fuse_everything")
def test_cuda_kernels_compile_with_nvrtc(monkeypatch):
    # Every kernel of random programs (each dtype, broadcasting, 0-d and empty arrays, the
    # three reductions) and of a stride of the jit sweep compiles as CuPy compiles it:
    # CuPy's own kernel code around the kernel's, CuPy's headers, NVRTC (no GPU needed)
    import cuda_compile
    reason = cuda_compile.unavailable()
    if reason:
        pytest.skip(reason)
    kernels = _cuda_kernels(monkeypatch, 1 if _ALL else 2)
    kinds = [k.kind for k, _ in kernels]
    assert kinds.count("elementwise") >= 100 and kinds.count("reduction") >= 10, kinds
    failures = cuda_compile.compile_kernels([(k, max(ndim, 1)) for k, ndim in kernels])
    assert not failures, f"{len(failures)} of {len(kernels)} kernels do not compile:\n" + (
        "\n\n".join(f"{k.source}\n{str(e)[:2000]}" for k, e in failures[:3]))


def test_the_nvrtc_check_fails_on_what_nvrtc_lacks():
    # NVRTC compiles without the C library's headers: C's INFINITY and NAN (what the CUDA
    # translation wrote before it wrote their bits) are undefined there
    import cuda_compile
    reason = cuda_compile.unavailable()
    if reason:
        pytest.skip(reason)
    from cupy.cuda.compiler import CompileException

    def kernel(expression):
        return codegen.CudaKernel(kind="elementwise", name="functrans_probe",
                                  in_params="float64 x0", out_params="float64 o0",
                                  operation=f"o0 = {expression};\n",
                                  out_dtypes=[np.dtype(np.float64)])

    cuda_compile.compile_kernel(kernel(codegen.cuda_expression("(x0 if x0 > 0 else np.inf)")),
                                1)
    with pytest.raises(CompileException, match="INFINITY"):
        cuda_compile.compile_kernel(kernel("(x0 > 0 ? x0 : INFINITY)"), 1)


@pytest.fixture
def cuda_on_cpu(monkeypatch):
    """CuPy kernels on the stand-in's arrays computed by their CUDA C compiled for the CPU
    (tests/cuda_on_cpu.py), through stand-ins for CuPy's kernel classes, instead of the
    stand-in's equation-by-equation fallback."""
    import cupy_standin
    import cuda_on_cpu
    reason = cuda_on_cpu.unavailable()
    if reason:
        pytest.skip(reason)
    emulator = cuda_on_cpu.Emulator()
    elementwise, reduction = cuda_on_cpu.kernel_classes(emulator, cupy_standin.asnumpy,
                                                        cupy_standin.asarray)
    monkeypatch.setattr(cupy_standin, "ElementwiseKernel", elementwise, raising=False)
    monkeypatch.setattr(cupy_standin, "ReductionKernel", reduction, raising=False)
    yield emulator
    emulator.close()


#: shapes of the random programs run as CUDA C (each kernel costs a C++ compilation, about
#: 0.1 s): broadcasting, a 0-d operand, 0-d and empty arrays, long rows
_EMULATED_SHAPES = [((7, 5), (5,)), ((3, 4, 5), (1, 4, 1)), ((6,), ()), ((0, 3), (3,)),
                    ((), ()), ((4, 300), (300,)), ((5, 1), (5, 1))]


@pytest.mark.usefixtures("fuse_everything")
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("seed", _REDUCTION_SEEDS)
def test_cuda_kernels_compute_numpys_values(cuda_on_cpu, monkeypatch, seed):
    # What the CUDA translation computes, run: random programs (every dtype pairing,
    # broadcasting, NaN, infinities and signed zeros, 0-d and empty arrays), a libm
    # operation ending some, a trailing sum, max or min ending others, each jitted on the
    # stand-in with its fused regions' kernels computed by their CUDA C compiled for the
    # CPU, against the unfused program on NumPy: exact operations bit for bit, libm within
    # 2 ulp, sums (added in another order) to a few ulp of the values they add
    rng = np.random.default_rng(200 + seed)
    for shapes in _EMULATED_SHAPES:
        for dtypes in DTYPES:
            a, b = (_draw(rng, s, d) for s, d in zip(shapes, dtypes))
            integral = any(np.dtype(d).kind in "bi" for d in dtypes)
            endings = ["none" if integral or rng.random() < 0.5 else "libm"]
            endings += ["reduction"] if a.ndim or b.ndim else []
            for ending in endings:
                _check_cuda_c_program(rng, a, b, ending, shapes, dtypes, monkeypatch)
    assert cuda_on_cpu.ran["elementwise"] >= 20 and cuda_on_cpu.ran["reduction"] >= 8, (
        cuda_on_cpu.ran)


def _check_cuda_c_program(rng, a, b, ending, shapes, dtypes, monkeypatch):
    """A random program on ``a`` and ``b`` ending with ``ending`` ("none", "libm" or
    "reduction") jitted on the stand-in (its kernels run as CUDA C on the CPU) against the
    unfused program on NumPy."""
    program, names = _program(rng, EXACT, int(rng.integers(2, 6)),
                              LIBM if ending == "libm" else None)
    kind = str(rng.choice(sorted(REDUCTIONS)))

    def f(a, b):  # a reduction alone (a ReductionKernel computes one value)
        last, previous = program(a, b)
        if ending == "reduction":
            return (REDUCTIONS[kind](last, axis=-1),)
        return last, previous

    with np.errstate(all="ignore"):
        try:
            want = _unfused(monkeypatch, f, a, b)
        except (TypeError, ValueError):  # negating a boolean, max of nothing
            return
        got = [cupy_standin_asnumpy(g) for g in ft.jit(f)(*_standin(a, b))]
    what = f"{names} then {ending} {kind} on {shapes} {dtypes}"
    if ending == "reduction" and kind == "sum" and want[0].dtype.kind == "f":
        with np.errstate(all="ignore"):
            terms = np.asarray(_unfused(monkeypatch, lambda a, b: program(a, b)[0], a, b))
        _assert_sum_close(got[0], want[0], terms, what)
        got, want = got[1:], want[1:]
    if names[-1] == "logistic":  # (1 + tanh(x / 2)) / 2: tanh's last place, absolutely
        np.testing.assert_allclose(got[0], want[0], rtol=0, equal_nan=True,
                                   atol=2 * np.finfo(want[0].dtype).eps)
        got, want = got[1:], want[1:]
    for g, w in zip(got, want):
        _assert_close_bits(g, w, what, ulps=2 if ending == "libm" else 0,
                           zero_signs=ending != "reduction")


def _assert_sum_close(got, want, terms, what):
    """``got`` is ``want``, a sum of ``terms`` over their last axis added in another order:
    NaN and infinities where ``want`` has them, elsewhere within 8 ulp of the sum of the
    terms' magnitudes."""
    special = ~np.isfinite(want)
    np.testing.assert_array_equal(got[special], want[special], what)
    scale = np.sum(np.abs(terms), axis=-1)
    error = np.abs(got - want)[~special]
    bound = 8 * np.finfo(want.dtype).eps * scale[~special] + np.finfo(want.dtype).tiny
    assert np.all(error <= bound), (what, got, want)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_the_device_tests_fused_programs_run_as_cuda_c(cuda_on_cpu, monkeypatch):
    # test_standin's fused programs (constants NaN and inf, converts, integers, gradients),
    # their kernels' CUDA C compiled for the CPU, against the same programs on NumPy
    import test_standin
    monkeypatch.setattr(ft.config, "fusion", True)
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((6, 40)), rng.standard_normal(40)
    i = rng.integers(-5, 6, (6, 40))
    for name, f in test_standin.FUSED_PROGRAMS.items():
        got = ft.jit(f)(*_standin(x, y, i))
        want = ft.jit(f)(x, y, i)
        for g, w in zip(ft.tree_util.tree_leaves(got), ft.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(cupy_standin_asnumpy(g), w, rtol=1e-6 if
                                       name == "float32" else 1e-13, atol=1e-13,
                                       err_msg=name)  # (sums, added in another order)
    for name, f in test_standin.SCALAR_ARGUMENT_PROGRAMS.items():  # scalars in the launch
        got = ft.jit(f)(*_standin(x), 2.5)
        np.testing.assert_allclose(cupy_standin_asnumpy(got), ft.jit(f)(x, 2.5), rtol=1e-13,
                                   atol=0, err_msg=name)
    assert cuda_on_cpu.ran["elementwise"] >= 8 and cuda_on_cpu.ran["reduction"] >= 3


@pytest.mark.usefixtures("fuse_everything")
def test_cuda_kernels_of_the_jit_sweep_compute_as_eager(monkeypatch):
    # Every primitive's CUDA translation run: a stride of the jit sweep (every dtype, every
    # primitive a kernel computes: converts, integer powers, comparisons, selects, libm)
    # with each region a CUDA kernel, run as C on the CPU, against eager evaluation
    import cuda_on_cpu
    reason = cuda_on_cpu.unavailable()
    if reason:
        pytest.skip(reason)
    stride = 1 if _ALL else 4
    kernels = _cuda_kernels(monkeypatch, stride)  # (regions on NumPy arrays are CUDA's now)
    emulator = cuda_on_cpu.Emulator()
    emulator.precompile([cuda_on_cpu.kernel_spec(k) for k, _ in kernels])

    def call(kernel, *args):  # the kernel's call on NumPy arrays, run as C
        *inputs, shape = args
        spec = cuda_on_cpu.kernel_spec(kernel)
        if kernel.kind == "elementwise":
            return tuple(emulator.elementwise(spec, inputs, tuple(shape)))
        inputs = [np.broadcast_to(x, shape) if np.ndim(x) else x for x in inputs]
        return (emulator.reduction(spec, inputs, kernel.axes),)

    monkeypatch.setattr(codegen.CudaKernel, "__call__", call)
    try:
        _run_jit_sweep(stride)
    finally:
        emulator.close()
    assert emulator.ran["elementwise"] >= 200 and emulator.ran["reduction"] >= 20, emulator.ran


def cupy_standin_asnumpy(x):
    import cupy_standin
    return cupy_standin.asnumpy(x)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_the_cupy_standin_runs_the_regions_equations(monkeypatch):
    import cupy_standin
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((4, 50)), rng.standard_normal(50)
    x[1, 3] = np.nan
    programs = [lambda x, y: (x * y + 1.0) * fnp.tanh(x) - y,
                lambda x, y: fnp.sum((x * y + 1.0) * x, axis=-1),
                lambda x, y: fnp.min(fnp.where(x > 0, x * y, -x), axis=(0, 1)),
                lambda x, y: ft.grad(lambda x: fnp.sum(fnp.sin(x * y) * x))(x)]
    for f in programs:
        jitted = ft.jit(f)
        assert "fused CuPy kernel" in jitted.lower(*_standin(x, y)).as_text()
        got = jitted(*_standin(x, y))
        assert ft.backend.is_device_array(got)  # never brought to the host
        with monkeypatch.context() as m:
            m.setattr(ft.config, "fusion", False)
            want = ft.jit(f)(x, y)
        _assert_close_bits(cupy_standin.asnumpy(got), want, "stand-in")


@pytest.mark.skipif(not LLVM, reason="the page shows LLVM's loop")
def test_the_kernel_on_the_jit_page_is_generated_today(monkeypatch):
    # docs/jit.md shows the loop fused for (x * y + 1.0) * x - y: it must be today's
    monkeypatch.setattr(ft.config, "fusion", True)
    page = open(os.path.join(os.path.dirname(__file__), "..", "docs", "jit.md")).read()
    start = page.index(">>> print(text)  # doctest: +SKIP\n") + len(
        ">>> print(text)  # doctest: +SKIP\n")
    shown = page[start:page.index("\n\n", start)].replace("<BLANKLINE>", "")

    def f(x, y):
        return (x * y + 1.0) * x - y

    text = ft.jit(f).lower(np.ones((100, 100)), np.ones(100)).as_text()
    text = re.sub(r"\(\S*/lk_\w+\.o\)", "(~/.cache/functrans/kernels/lk_<hash>.o)", text)
    text = re.sub(r"\(\S*/(fk_\w+\.py)\)", r"(~/.cache/functrans/kernels/\1)", text)
    assert shown.strip() == text.strip()


# ------------------------------------------------------------------------------------------
# Scatter-add as one loop (gather's transpose)
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
@pytest.mark.parametrize("mode", [None, "drop"])
def test_scatter_add_loop_gives_numpys_bits(dtype, mode, monkeypatch):
    # float targets with many updates: NumPy sums them through bincount (a float64
    # accumulator); few updates, or integers: add.at in order.  The loop does the same.
    rng = np.random.default_rng(7)
    cases = [((500, 3), (20000, 1), 0, 500), ((10,), (40, 1), -3, 13),
             ((4, 5, 2), (7, 2), -1, 6), ((1000, 4), (5, 1), 0, 1000), ((3, 2), (0, 1), 0, 3)]
    for oshape, ishape, lo, hi in cases:
        operand = (rng.standard_normal(oshape) * 3).astype(dtype)
        operand.reshape(-1)[-2:] = -0.0  # NumPy's bincount sums make it 0.0
        indices = rng.integers(lo, hi, ishape)
        updates = (rng.standard_normal(ishape[:-1] + oshape[ishape[-1]:]) * 3).astype(dtype)

        def f(o, i, u):
            return lax.scatter_add(o, i, u, mode=mode)

        _assert_scatter_loop_bits(f, (operand, indices, updates), r"v0, v1, v2\)",
                                  monkeypatch, f"{oshape} {ishape}")
        np.testing.assert_array_equal(operand, operand.copy())  # the operand is not written


def _assert_scatter_loop_bits(f, args, call: str, monkeypatch, note: str):
    """``jit(f)`` calls the scatter-add loop (its arguments matching ``call``) and gives
    the bits of the code without fusion (NumPy's); returns the result."""
    with monkeypatch.context() as m:
        m.setattr(ft.config, "fusion", False)
        want = ft.jit(f)(*args)
    jitted = ft.jit(f)
    assert re.search(r"= _scatter_add\d+\(" + call, jitted.lower(*args).as_text())
    got = jitted(*args)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want, note)
    return got


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
@pytest.mark.parametrize("mode", [None, "drop"])
def test_scatter_add_into_zeros_gives_numpys_bits(dtype, mode, monkeypatch):
    # Into zeros the loop adds in one pass, keeping the row it adds to in registers
    # while the updates go to it (rows of one to four elements by name): runs of one
    # row (sorted indices), alternating rows, out-of-bounds and negative indices, -0.0
    # updates (NumPy's sums make +0.0), one and two indexed axes, rows of 1-6 elements.
    rng = np.random.default_rng(11)
    for columns in (1, 2, 3, 4, 6):
        for ishape, lo, hi, oshape in [((3000, 1), -2, 40, (37, columns)),
                                       ((500, 1), 0, 37, (37, columns)),
                                       ((400, 2), -1, 8, (6, 7, columns))]:
            indices = rng.integers(lo, hi, ishape)
            if ishape[0] == 500:
                indices = np.sort(indices, axis=0)  # long runs of one row
            k = ishape[1]
            updates = (rng.standard_normal(ishape[:-1] + oshape[k:]) * 3).astype(dtype)
            updates[::7] = -0.0 if np.dtype(dtype).kind == "f" else 0
            operand = np.ones(oshape, dtype)

            def f(o, i, u):
                return lax.scatter_add(fnp.zeros_like(o), i, u, mode=mode)

            got = _assert_scatter_loop_bits(f, (operand, indices, updates), "None, ",
                                            monkeypatch, f"{columns} {ishape}")
            assert not (np.signbit(got) & (got == 0)).any()  # no -0.0


def test_gradients_through_gathers_use_the_loop(monkeypatch):
    monkeypatch.setattr(ft.config, "fusion", True)
    table = np.random.default_rng(0).standard_normal((100, 8))
    idx = np.random.default_rng(1).integers(0, 100, (64, 4))
    def g(t):
        return fnp.sum(fnp.tanh(fnp.take(t, idx, axis=0)))

    f = ft.jit(ft.grad(g))
    # the table's zeros are made by the loop, which then writes only the rows it adds to
    assert re.search(r"= _scatter_add\d+\(None, ", f.lower(table).as_text())
    with monkeypatch.context() as m:
        m.setattr(ft.config, "fusion", False)
        want = ft.jit(ft.grad(g))(table)
    np.testing.assert_array_equal(f(table), want)


def test_a_loop_used_twice_is_shown_once(fuse_everything):
    # the same region on two inputs (an index normalisation of i and of j) is one loop
    def f(x, i, j):
        return fnp.sum((fnp.take(x, i) - fnp.take(x, j)) ** 2)
    x, i, j = np.arange(5.0), np.array([0, -1, 2]), np.array([1, 3, -2])
    text = ft.jit(ft.grad(f)).lower(x, i, j).as_text()
    headers = [line for line in text.splitlines() if FUSED in line]
    assert len(headers) == len(set(headers)), text


def test_a_region_of_more_operands_than_a_numpy_ufunc_takes(fuse_everything):
    # NumPy's ufuncs take at most 64 operands: such a region is numba's loop (or NumPy
    # code), never an error (the backward pass of a 50-step chain reads 100 residuals)
    xs = [np.linspace(1.0, 2.0, 5) + i / 100 for i in range(70)]

    def f(*xs):
        out = xs[0]
        for x in xs[1:]:
            out = out * x + 0.5
        return out
    np.testing.assert_allclose(ft.jit(f)(*xs), f(*xs), rtol=1e-15)


def test_a_long_region_compiles_in_pieces(fuse_everything, monkeypatch):
    # compile time grows faster than a loop's length: a region is closed at
    # FUSION_MAX_OPS operations and the next one reads its results
    monkeypatch.setattr(codegen, "FUSION_MAX_OPS", 10)

    def f(x):
        for k in range(12):
            x = x * (1.0 + k / 100) - 0.25  # 24 operations
        return x
    x = np.linspace(-1.0, 1.0, 7)
    text = ft.jit(f).lower(x).as_text()
    calls = re.findall(r"\(_fk\d+\(v", text)
    assert len(calls) == 3, text  # 10 + 10 + 3 operations (x * 1.0 is x)
    np.testing.assert_array_equal(ft.jit(f)(x), f(x))


@pytest.mark.skipif(not LLVM, reason="LLVM's loops are the ones split")
def test_parallel_loops_give_the_same_bits(monkeypatch):
    # config.fusion_parallel: a large region's leading axis is cut into a block of rows
    # per thread; elementwise results and reductions over trailing axes keep their bits,
    # operands broadcast along the leading axis are passed whole, np.errstate applies
    monkeypatch.setattr(codegen, "PARALLEL_ELEMENTS", 64)
    monkeypatch.setattr(codegen, "_threads", lambda: 3)
    x = np.random.default_rng(0).normal(size=(50, 40))
    row, column = np.linspace(0.5, 1.5, 40), np.linspace(-1.0, 1.0, 50)[:, None]

    def f(x, row, column):
        z = fnp.sin(x) * row + fnp.cos(x * 0.5) - column * x
        return z, fnp.sum(z * z, axis=1), fnp.max(fnp.log(fnp.abs(z) + 1.0))

    want = ft.jit(f)(x, row, column)
    monkeypatch.setattr(ft.config, "fusion_parallel", True)
    split = ft.jit(lambda x, row, column: f(x, row, column))
    text = split.lower(x, row, column).as_text()
    assert "_split" in text, text
    for got, expected in zip(split(x, row, column), want):
        np.testing.assert_array_equal(got, expected)
    small = ft.jit(lambda x: fnp.sin(x) * x + 1.0)
    assert "_split" not in small.lower(x[:2, :10]).as_text()  # 20 elements: one call

    def g(x):
        return fnp.log(x) * 2.0 + x
    with np.errstate(invalid="raise"):
        with pytest.raises(FloatingPointError):
            ft.jit(g)(-np.ones((60, 8)))  # every block meets log(-1)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")  # no block warns: each has the caller's errstate
        assert np.isnan(ft.jit(g)(-np.ones((60, 8)))).all()
