"""functrans on device arrays, checked in CI with the NumPy-backed CuPy stand-in
(``tests/cupy_standin.py``); ``tests/test_cupy.py`` runs the same tests on real CuPy.

Every transform, control flow, custom rules, the gradient checkers and every case of the
primitive and functrans.numpy sweeps run on device arrays: results are device arrays equal to
the NumPy results, and no array is copied between host and device on the way (the stand-in
counts copies; implicit conversions raise).  The first section tests the stand-in itself.
"""
from __future__ import annotations

import inspect
import re
import zlib
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import cupy_standin as standin
import functrans as ft
import functrans.lax as lax
import functrans.numpy as fnp
from functrans import backend
from functrans.tree_util import tree_leaves, tree_map, tree_structure
from sweep import custom_jvp_with_rule

TOL = 1e-12

# ------------------------------------------------------------------------------------------
# The stand-in behaves like CuPy where it matters
# ------------------------------------------------------------------------------------------


def test_standin_is_found_through_the_registry_not_its_module_name():
    x = standin.asarray(np.ones(3))
    assert not type(x).__module__.startswith("cupy")
    assert backend.library_of(x) is standin.LIBRARY
    assert backend.array_module(x) is standin
    assert backend.is_device_array(x) and backend.is_array(x)
    assert not backend.is_device_array(np.ones(3))


@pytest.mark.parametrize("convert", [np.asarray, np.array, lambda x: np.sin(x),
                                     lambda x: np.sum(x), lambda x: np.add(x, x),
                                     lambda x: np.concatenate([x, x]), lambda x: x + np.ones(3),
                                     lambda x: np.ones(3) * x, lambda x: standin.add(x, np.ones(3)),
                                     lambda x: standin.where(x > 0, np.ones(3), x)],
                         ids=["asarray", "array", "ufunc", "function", "ufunc_binary",
                              "function_list", "operator_right", "operator_left",
                              "standin_function", "standin_where"])
def test_implicit_conversions_and_mixing_with_numpy_arrays_raise(convert):
    x = standin.asarray(np.arange(3.0))
    with pytest.raises(TypeError):
        convert(x)


def test_scalars_mix_freely():
    x = standin.asarray(np.arange(3.0))
    for s in (2.0, 2, np.float64(2.0), np.float32(2.0)):
        for y in (s * x, x * s, standin.multiply(x, s)):
            assert type(y) is standin.ndarray
            np.testing.assert_array_equal(y.get(), 2.0 * np.arange(3.0))


def test_zero_d_numpy_arrays_are_refused_as_cupy_refuses_them():
    # CuPy's kernels take Python and NumPy scalars, not NumPy arrays, 0-d ones included
    # (CScalar raises "Unsupported type numpy.ndarray"); comparisons read a 0-d array's
    # .item() (CuPy's workaround of numpy/numpy#12142)
    x = standin.asarray(np.arange(3.0))
    for call in (lambda: x * np.array(2.0), lambda: standin.multiply(x, np.array(2.0)),
                 lambda: standin.where(x > 1, x, np.array(0.0))):
        with pytest.raises(TypeError, match=r"numpy.ndarray \(shape \(\)\)"):
            call()
    np.testing.assert_array_equal((x < np.array(1.5)).get(), [True, True, False])


def test_metadata_functions_and_sequence_protocol_work_without_copies():
    x = standin.asarray(np.arange(6.0).reshape(2, 3))
    with standin.transfers() as t:
        assert np.shape(x) == (2, 3) and np.ndim(x) == 2 and np.result_type(x) == np.float64
        assert len(x) == 2 and [type(row) for row in x] == [standin.ndarray] * 2
    assert (t.h2d, t.d2h) == (0, 0)


def test_transfers_are_counted():
    with standin.transfers() as t:
        x = standin.asarray(np.arange(4.0))       # h2d
        y = standin.asarray([1.0, 2.0, 3.0, 4.0])  # h2d
        z = standin.sin(x) * y + standin.zeros(4) + standin.asarray(x)  # device only
        assert t.h2d == 2 and t.d2h == 0
        z.get()
        standin.asnumpy(z)
        float(z[0]), int(z[1]), bool(z[2]), z.item(0), z.tolist()
    assert (t.h2d, t.d2h) == (2, 7), (t.h2d_log, t.d2h_log)


def test_functions_return_device_arrays_and_ufuncs_have_no_methods():
    x = standin.asarray(np.arange(6.0).reshape(2, 3))
    for out in (standin.sum(x), x.sum(), standin.max(x, axis=0), x.T, x.real, x.astype(np.float32),
                standin.einsum("ij->j", x), standin.matmul(x, x.T), standin.linalg.norm(x),
                standin.random.default_rng(0).standard_normal((2, 2)), standin.moveaxis(x, 0, 1)):
        assert type(out) is standin.ndarray
    assert standin.sum(x).shape == ()  # reductions give 0-d arrays, as CuPy's do
    for method in ("at", "accumulate", "reduce", "outer"):
        assert not hasattr(standin.add, method) and not hasattr(standin.maximum, method)
    assert standin.float64 is np.float64


def test_views_report_their_owner_and_have_no_writeable_flag():
    x = standin.asarray(np.arange(6.0))
    v = x[1:]
    assert x.base is None and v.base is x and v[1:].base is x and x.reshape(2, 3).base is x
    assert standin.broadcast_to(x, (2, 6)).base is x
    assert (x + 1).base is None
    assert x.flags.owndata and not v.flags.owndata
    assert not hasattr(x.flags, "writeable")
    assert backend.is_writeable(x) and backend.memory_owner(v[2:]) is x
    v[0] = 10.0  # writes go through to the owner
    assert float(x[1]) == 10.0
    b = standin.broadcast_to(x, (2, 6))
    b[0, 0] = -1.0  # CuPy's broadcasts are writeable views
    assert float(x[0]) == -1.0


def test_scatter_add_and_unsupported_dtypes():
    target = standin.zeros(3)
    backend.scatter_add(target, standin.asarray(np.array([0, 2, 0])), standin.ones(3))
    np.testing.assert_array_equal(target.get(), [2.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="Unsupported dtype"):
        standin.zeros(3, ft.float0)


def test_cumulative_extrema_without_ufunc_methods():
    x = np.array([[3.0, 1.0, 4.0, 1.0, 5.0], [9.0, 2.0, 6.0, 5.0, 3.0]])
    d = standin.asarray(x)
    np.testing.assert_array_equal(backend.cumulative_max(d, 1).get(), np.maximum.accumulate(x, 1))
    np.testing.assert_array_equal(backend.cumulative_min(d, 0).get(), np.minimum.accumulate(x, 0))


# ------------------------------------------------------------------------------------------
# Helpers
# ------------------------------------------------------------------------------------------


def assert_on_device_and_equal(device, got, want, tol=TOL, what=""):
    """``got`` (computed on device arrays) has ``want``'s structure (computed on NumPy
    arrays); where ``want`` has an array ``got`` has a device array (float0 stays NumPy, as
    CuPy has no such dtype) with the same dtype, shape and values."""
    assert tree_structure(got) == tree_structure(want), what
    for g, w in zip(tree_leaves(got), tree_leaves(want)):
        if isinstance(w, (np.ndarray, np.generic)):
            if w.dtype == ft.float0:
                assert type(g) is np.ndarray and g.dtype == ft.float0, (what, type(g))
                assert g.shape == w.shape, what
                continue
            assert isinstance(g, device.array_type), f"{what}: got {type(g).__name__}"
        g = device.get(g)
        assert np.asarray(g).dtype == np.asarray(w).dtype, (what, np.asarray(g).dtype,
                                                            np.asarray(w).dtype)
        assert np.shape(g) == np.shape(w), what
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=what)


#: Functions allowed to copy to the device: numerical gradients (functrans.testing's
#: numerical_grad, as Chainer's) are estimated on the host from finite differences and
#: handed back on the inputs' device with one explicit copy per input.
EXPLICIT_H2D = ("_gradient_from_jacobian",
                "_move_constants")  # jit: host arrays a function closes over, once per signature


def assert_no_transfers(device, counts, h2d=True, d2h=True):
    if counts is None:  # a library that cannot count (real CuPy)
        return
    if h2d:
        implicit = [entry for entry in counts.h2d_log
                    if not any(f" {name} " in f" {entry} " for name in EXPLICIT_H2D)]
        assert not implicit, f"host-to-device copies: {implicit}"
    if d2h:
        assert counts.d2h == 0, f"device-to-host synchronisations: {counts.d2h_log}"


def run_both(device, fun, host_args, tol=TOL, what="", d2h=True):
    """``fun`` on ``host_args`` and on their device copies: the device run makes no
    transfers and its result is on the device and equals the host one."""
    device_args = device.put(host_args)
    with device.transfers() as counts:
        got = fun(*device_args)
    assert_no_transfers(device, counts, d2h=d2h)
    want = fun(*host_args)
    assert_on_device_and_equal(device, got, want, tol, what)
    return got


#: the refusal of a special function whose kernel the device's library lacks
#: (special.kernel_impl's): cupyx.scipy.special has fewer kernels than scipy.special
_NO_KERNEL = re.compile(r"^(functrans\.[\w.]+): (\S+) has no (\w+) kernel for (\S+) arrays; "
                        r"compute it on NumPy arrays$")


def run_sweep_case(device, fun, host_args, what=""):
    """``run_both`` for a sweep case; where the device's special-function module (or its
    ``scipy.linalg``) lacks a kernel the case needs, the refusal is checked instead (it
    names the functrans function and the kernel, and the kernel is indeed missing from the
    module it names) and the case is an expected failure."""
    try:
        return run_both(device, fun, host_args, what=what)
    except NotImplementedError as e:
        refused = _NO_KERNEL.match(str(e))
        if refused is None:
            raise
        modules = {m.__name__: m for m in (backend.special_module(device.put(np.zeros(1))),
                                           device.xp.scipy.linalg)}
        module = modules.get(refused.group(2))
        assert module is not None, f"{what}: {e} names none of {sorted(modules)}"
        assert not hasattr(module, refused.group(3)), f"{what}: {e}"
        pytest.xfail(f"{module.__name__} has no {refused.group(3)}: {refused.group(1)} "
                     f"refuses {device.name} arrays with a clear error")


def mark_known_host_site(request, device, known: dict, key: str):
    """Strict xfail for the known sites outside tests/ that ``key`` meets (``known`` maps
    keys to site names of ``SITES``).  Real CuPy cannot count copies: there only the sites
    that convert device arrays implicitly (which CuPy refuses too) are expected to fail."""
    sites = [s for s in known.get(key, ()) if device.counts_transfers or s in FAILS_ON_CUPY]
    if sites:
        request.applymarker(pytest.mark.xfail(strict=True, reason="; ".join(
            SITES[s] for s in sites)))


def _rng(key: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(key.encode()))


# ------------------------------------------------------------------------------------------
# Transforms
# ------------------------------------------------------------------------------------------


def f_vec(x, y):
    return fnp.sin(x) * y ** 2 + fnp.sum(x * y) + 1.5 * x


def f_scalar(x, y):
    return fnp.sum(fnp.tanh(x) * y) + fnp.sum(x ** 3) / 3.0


TRANSFORMS = {
    "grad": lambda x, y, t, c: ft.grad(f_scalar, argnums=(0, 1))(x, y),
    "grad_of_sum": lambda x, y, t, c: ft.grad(fnp.sum)(x),
    "grad_pytree": lambda x, y, t, c: ft.grad(lambda p: f_scalar(p["x"], p["y"][0]))(
        {"x": x, "y": [y]}),
    "grad_has_aux": lambda x, y, t, c: ft.grad(lambda x: (f_scalar(x, y), x * 2.0),
                                               has_aux=True)(x),
    "value_and_grad": lambda x, y, t, c: ft.value_and_grad(f_scalar)(x, y),
    "vjp": lambda x, y, t, c: (lambda out, pullback: (out, pullback(c)))(*ft.vjp(f_vec, x, y)),
    "jvp": lambda x, y, t, c: ft.jvp(f_vec, (x, y), (t, c)),
    "linearize": lambda x, y, t, c: (lambda out, f_jvp: (out, f_jvp(t, c), f_jvp(c, t)))(
        *ft.linearize(f_vec, x, y)),
    "vmap": lambda x, y, t, c: ft.vmap(f_vec, in_axes=(None, 0))(x, fnp.stack([y, t, c])),
    "vmap_out_axes": lambda x, y, t, c: ft.vmap(lambda a: f_vec(a, y), out_axes=1)(
        fnp.stack([x, t])),
    "vmap_grad": lambda x, y, t, c: ft.vmap(ft.grad(f_scalar), in_axes=(0, None))(
        fnp.stack([x, t]), y),
    "jacfwd": lambda x, y, t, c: ft.jacfwd(f_vec, argnums=(0, 1))(x, y),
    "jacrev": lambda x, y, t, c: ft.jacrev(f_vec, argnums=(0, 1))(x, y),
    "hessian": lambda x, y, t, c: ft.hessian(f_scalar)(x, y),
    "linear_transpose": lambda x, y, t, c: ft.linear_transpose(
        lambda a, b: 2.0 * a + fnp.sum(a) * 0.5, x, y)(c),
    "jvp_python_tangent": lambda x, y, t, c: ft.jvp(
        lambda a: fnp.sin(a) * 2.0, (x.astype(np.float32)[0],), (0.5,)),
    "vjp_python_cotangent": lambda x, y, t, c: ft.vjp(
        lambda a: fnp.sin(a) * 2.0, x.astype(np.float32)[0])[1](1.5),
    "grad_of_grad": lambda x, y, t, c: ft.grad(lambda x: fnp.sum(ft.grad(f_scalar)(x, y) * t))(x),
    "jit": lambda x, y, t, c: ft.jit(f_vec)(x, y),
    "jit_of_grad": lambda x, y, t, c: ft.jit(ft.grad(f_scalar, argnums=(0, 1)))(x, y),
    "grad_of_jit": lambda x, y, t, c: ft.grad(ft.jit(f_scalar), argnums=(0, 1))(x, y),
    "jvp_of_jit": lambda x, y, t, c: ft.jvp(ft.jit(f_vec), (x, y), (t, c)),
    "vmap_of_jit": lambda x, y, t, c: ft.vmap(ft.jit(f_vec), in_axes=(None, 0))(
        x, fnp.stack([y, t, c])),
    "jit_closing_over_a_host_array": lambda x, y, t, c: ft.jit(
        lambda a: a * np.arange(4.0) + fnp.sum(a))(x),
}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_transforms(device, name):
    rng = _rng(name)
    args = [rng.standard_normal(4) for _ in range(4)]
    run_both(device, TRANSFORMS[name], args, tol=1e-11, what=name)


def test_repeated_grad_runs_its_compiled_backward_pass_on_the_device(device):
    # From the second call on, grad's backward pass is compiled code for the device's
    # library (interpreters/transpose.py): still no transfers, the same values.
    rng = _rng("compiled backward")
    x, y = rng.standard_normal(4), rng.standard_normal(4)
    g = ft.grad(f_scalar, argnums=(0, 1))
    want = g(x, y)
    dx, dy = device.put([x, y])
    for _ in range(3):
        with device.transfers() as counts:
            got = g(dx, dy)
        assert_no_transfers(device, counts)
        assert_on_device_and_equal(device, got, want, 1e-12, "compiled backward")


AT_UPDATES = {
    "set": lambda x, i, v: x.at[i].set(v),
    "add_repeated": lambda x, i, v: x.at[i[::-1] * 0 + i[0]].add(v),
    "multiply": lambda x, i, v: x.at[i].multiply(v),
    "min": lambda x, i, v: x.at[i].min(v),
    "max_slice": lambda x, i, v: x.at[1:3].max(v[:2]),
    "apply": lambda x, i, v: x.at[i].apply(fnp.sin),
    "get_fill": lambda x, i, v: x.at[i + 3].get(mode="fill", fill_value=-1.0),
    "chained_on_a_result": lambda x, i, v: fnp.cos(x).at[0].set(2.0).at[i].add(v),
}


@pytest.mark.parametrize("name", AT_UPDATES)
def test_at_updates_on_concrete_device_arrays(device, name):
    # Outside transforms functrans hands out device arrays with `.at`, as it does NumPy
    # arrays (array_types.Array): a subclass of the library's array type, computed on by it.
    update = AT_UPDATES[name]
    x, v = np.linspace(-1.0, 1.0, 6), np.array([0.5, -2.0, 3.0])
    i = np.array([4, 1, 2])

    def fun(x, i, v):
        out = update(fnp.asarray(x), i, v)
        return out, ft.grad(lambda x: fnp.sum(update(x, i, v) ** 2))(x)

    # apply reads how often a position repeats (it applies the function that many times)
    got = run_both(device, fun, [x, i, v], tol=1e-12, what=name, d2h=name != "apply")
    assert isinstance(got[0], device.array_type) and hasattr(got[0], "at"), type(got[0])


def test_weakly_typed_device_arrays_take_the_dtype_of_the_arrays_they_meet(device):
    # where(mask, 1.0, 2.0) on a device mask is weakly typed, as on the host (and in JAX):
    # times a float32 array it is float32, on the device, without transfers.
    x = np.linspace(0.5, 1.5, 3).astype(np.float32)
    mask = np.array([True, False, True])

    def fun(x, mask):
        w = fnp.where(mask, 1.0, 2.0)
        assert w.weak_type and w.dtype == np.float64
        return (w * x, x + w, fnp.maximum(w, x), fnp.full(3, 0.5, like=x) * x,
                ft.grad(lambda x: fnp.sum(w * x * x))(x))
    got = run_both(device, fun, [x, mask], tol=1e-6, what="weak arrays")
    assert all(g.dtype == np.float32 for g in got)


def test_results_of_functrans_numpy_on_device_arrays_have_at(device):
    x, i = device.put(np.arange(4.0)), device.put(np.array([1, 1]))
    with device.transfers() as counts:
        y = fnp.sin(x)
        z = y.at[i].add(1.0)
        w = fnp.asarray(x).at[0].set(5.0)  # the library's own arrays have no `.at`
    assert_no_transfers(device, counts)
    assert type(y) is type(z) and isinstance(z, device.array_type) and type(z) is not type(x)
    np.testing.assert_allclose(device.get(z), np.sin(np.arange(4.0)) + [0, 2, 0, 0])
    np.testing.assert_allclose(device.get(w), [5.0, 1.0, 2.0, 3.0])
    assert float(device.get(fnp.sum(z))) == pytest.approx(np.sin(np.arange(4.0)).sum() + 2)


def mlp_loss(params, x, y):
    h = fnp.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return fnp.mean((out - y) ** 2)


MLP_TRANSFORMS = {
    "grad": lambda p, x, y: ft.grad(mlp_loss)(p, x, y),
    "value_and_grad": lambda p, x, y: ft.value_and_grad(mlp_loss, argnums=(0, 1))(p, x, y),
    "vmap_grad": lambda p, x, y: ft.vmap(ft.grad(mlp_loss), in_axes=(None, 0, 0))(p, x, y),
    "jacfwd": lambda p, x, y: ft.jacfwd(lambda w: mlp_loss({**p, "w2": w}, x, y))(p["w2"]),
    "jacrev": lambda p, x, y: ft.jacrev(lambda w: mlp_loss({**p, "w2": w}, x, y))(p["w2"]),
    "hessian": lambda p, x, y: ft.hessian(lambda w: mlp_loss({**p, "w2": w}, x, y))(p["w2"]),
    "jit_grad": lambda p, x, y: ft.jit(ft.grad(mlp_loss))(p, x, y),
    "jit_vmap_grad": lambda p, x, y: ft.jit(ft.vmap(ft.grad(mlp_loss), in_axes=(None, 0, 0)))(
        p, x, y),
}


@pytest.mark.parametrize("name", MLP_TRANSFORMS)
def test_mlp(device, name):
    rng = _rng("mlp")
    params = {"w1": rng.standard_normal((4, 8)), "b1": np.zeros(8),
              "w2": rng.standard_normal((8, 2)), "b2": np.zeros(2)}
    x, y = rng.standard_normal((5, 4)), rng.standard_normal((5, 2))
    run_both(device, MLP_TRANSFORMS[name], [params, x, y], tol=1e-10, what=name)


# ------------------------------------------------------------------------------------------
# Fused regions: with fusion on, jit writes each elementwise region of a program on device
# arrays as one CuPy kernel (an ElementwiseKernel, or a ReductionKernel for a region ending
# in a reduction over trailing axes; with two reductions, or a reduction beside other
# results, an ElementwiseKernel and CuPy's reductions).  The stand-in has no kernel
# classes and runs each
# region's equations instead; on real CuPy (tests/test_cupy.py) the kernels are compiled
# and run.  On the host the same programs run NumPy's (or LLVM's) loops.
# ------------------------------------------------------------------------------------------

FUSED_PROGRAMS = {
    "arithmetic": lambda x, y, i: (x * y + 1.0) * x - y / (fnp.abs(y) + 1.0),
    "libm": lambda x, y, i: fnp.tanh(x) * fnp.exp(-y * y) + fnp.log1p(fnp.abs(x)) * 0.5,
    "compare_and_select": lambda x, y, i: fnp.where(x > y, x * 2.0, -y) + fnp.maximum(
        x, y) - fnp.minimum(x, 0.5),
    "nan_and_inf": lambda x, y, i: fnp.where(x > 1.0, np.inf, x) * fnp.where(
        y < -1.0, np.nan, y) + fnp.sqrt(x),  # a NaN where x < 0 as well
    "float32": lambda x, y, i: (x.astype(np.float32) * 2.0 - 1.0) * fnp.tanh(
        y.astype(np.float32)),
    "integers": lambda x, y, i: fnp.maximum(i * 3 - 7, i[::-1]) + (i > 2) * i,
    "convert": lambda x, y, i: (i.astype(np.float64) * x + 1.0).astype(np.float32) * 2.0,
    "sum_over_rows": lambda x, y, i: fnp.sum((x * y + 1.0) * x, axis=-1),
    "max_of_all": lambda x, y, i: fnp.max(fnp.where(x > 0, x * y, -x) - 1.0),
    "min_over_rows_of_integers": lambda x, y, i: fnp.min(i * i - 3 * i, axis=-1),
    "sum_and_its_operand": lambda x, y, i: (fnp.sum(x * y + 1.0, axis=-1), (x * y + 1.0) * x),
    "two_reductions": lambda x, y, i: (fnp.sum(fnp.tanh(x * y), axis=-1),
                                       fnp.max(fnp.tanh(x * y) - y, axis=-1)),
    "grad": lambda x, y, i: ft.grad(lambda x: fnp.sum(fnp.sin(x * y) * x + x * x))(x),
    "value_and_grad_of_softplus": lambda x, y, i: ft.value_and_grad(
        lambda x: fnp.sum(fnp.logaddexp(0.0, x * y)))(x),
}


@pytest.mark.parametrize("name", FUSED_PROGRAMS)
def test_fused_regions_on_the_device(device, monkeypatch, name):
    monkeypatch.setattr(ft.config, "fusion", True)
    rng = _rng("fused " + name)
    x, y = rng.standard_normal((6, 40)), rng.standard_normal(40)
    i = rng.integers(-5, 6, (6, 40))
    f = ft.jit(FUSED_PROGRAMS[name])
    assert "a fused CuPy kernel" in f.lower(*device.put([x, y, i])).as_text()
    with np.errstate(invalid="ignore"):  # the square roots of negative numbers
        run_both(device, f, [x, y, i], tol=1e-6 if name == "float32" else 1e-12, what=name)


SCALAR_ARGUMENT_PROGRAMS = {
    "elementwise": lambda x, s: (x * s + 1.0) * x - s,
    "reduction": lambda x, s: fnp.sum((x * s + 1.0) * x - s, axis=-1),
    "max": lambda x, s: fnp.max(fnp.where(x > s, x * s, -x), axis=-1),
}


@pytest.mark.parametrize("scalar", [2.5, np.float64(-1.5), np.float32(0.5)],
                         ids=["python", "float64", "float32"])
@pytest.mark.parametrize("name", SCALAR_ARGUMENT_PROGRAMS)
def test_fused_regions_take_scalar_arguments(device, monkeypatch, name, scalar):
    # a scalar argument of a jitted function is an argument of the kernel's launch: no
    # device array is made of it (a copy to the device at every call)
    monkeypatch.setattr(ft.config, "fusion", True)
    x = _rng("scalar arguments " + name).standard_normal((5, 30))
    f = ft.jit(SCALAR_ARGUMENT_PROGRAMS[name])
    assert "a fused CuPy kernel" in f.lower(device.put(x), scalar).as_text()
    run_both(device, f, [x, scalar], tol=1e-12, what=name)


# ------------------------------------------------------------------------------------------
# dask arrays of device chunks: graphs whose tasks compute on the device (the chunks' and
# the results' meta are device arrays), built without a compute and computed in one
# ------------------------------------------------------------------------------------------


def test_dask_arrays_of_device_chunks(device):
    da = pytest.importorskip("dask.array")
    import dask
    from test_dask import Computes

    rng = _rng("dask of device chunks")
    Xh, wh = rng.standard_normal((40, 3)), rng.standard_normal(3)

    def on_device(a, chunks):
        return da.from_array(device.put(a), chunks=chunks, asarray=False,
                             meta=device.put(np.empty((0,) * a.ndim)))

    X, w = on_device(Xh, (10, 3)), on_device(wh, 3)

    def example(w, x):
        return fnp.tanh(x @ w) ** 2

    def mean_loss(w, X):
        return fnp.mean(example(w, X))

    def labels_loss(w, X):  # a pick at each row's own number: in one row region
        labels = (fnp.abs(X[:, 0]) * 3).astype(int) % 3
        return -fnp.mean(ft.nn.log_softmax(X * w)[fnp.arange(X.shape[0]), labels])

    transforms = {
        "grad": ft.grad(mean_loss),
        "jvp": lambda w, X: ft.jvp(lambda w: mean_loss(w, X), (w,), (w,)),
        "vmap": ft.vmap(ft.grad(example), (None, 0)),
        "jit_grad": ft.jit(ft.grad(mean_loss)),
        "jit_labels_grad": ft.jit(ft.grad(labels_loss)),
        "labels_grad": ft.grad(labels_loss),
        "jit_elementwise": ft.jit(lambda w, X: fnp.sin(X * w) + X * 2.0),
        "jit_two_results": ft.jit(lambda w, X: (fnp.sin(X * w), fnp.cos(X * w) + 1.0)),
    }
    with device.protocols():  # dask applies NumPy's functions to chunks
        made = {"zeros": backend.zeros((40, 3), like=X), "ones": backend.ones(3, like=X),
                "full": backend.full((40, 3), 2.5, like=X),
                "eye": backend.eye(4, 3, k=-1, like=X), "tri": backend.tri(3, like=X),
                "arange": backend.arange(5, like=X)}
        want_made = {"zeros": np.zeros((40, 3)), "ones": np.ones(3),
                     "full": np.full((40, 3), 2.5), "eye": np.eye(4, 3, k=-1),
                     "tri": np.tri(3), "arange": np.arange(5)}
        with device.transfers() as moved:
            (made_values,) = dask.compute(made)
        assert_no_transfers(device, moved)
        for name, value in made.items():
            assert isinstance(value._meta, device.array_type), name
            assert isinstance(made_values[name], device.array_type), name
            np.testing.assert_array_equal(device.get(made_values[name]), want_made[name])
        assert made["zeros"].chunks == X.chunks
        for name, fn in transforms.items():
            with Computes() as during, device.transfers() as moved:
                got = fn(w, X)
                (values,) = dask.compute(got)
            assert during.count == 1, name
            assert_no_transfers(device, moved)
            want = fn(wh, Xh)
            for g, c, h in zip(tree_leaves(got), tree_leaves(values), tree_leaves(want)):
                assert type(g) is da.Array and isinstance(g._meta, device.array_type), name
                assert isinstance(c, device.array_type), (name, type(c))
                np.testing.assert_allclose(device.get(c), h, rtol=1e-12, atol=1e-12,
                                           err_msg=name)
        # checks of derivatives draw their random directions on the device, chunk by chunk
        # (dask's generator would make NumPy chunks): a fast gradcheck computes its
        # pairings once per mode
        with device.transfers() as moved:
            with Computes() as during:
                result = ft.gradcheck(mean_loss, fast_mode=True)(w, X)
            ft.testing.check_grads(mean_loss, (w, X), order=1, modes=("rev",))
        assert result.ok and during.count == 2, (result, during.count)  # forward, reverse
        assert_no_transfers(device, moved, d2h=False)  # (the checks read their results)


# ------------------------------------------------------------------------------------------
# Control flow and custom rules
# ------------------------------------------------------------------------------------------


def _cond(x):
    return fnp.sum(lax.cond(fnp.sum(x) > 0, lambda v: fnp.sin(v) * 2.0, lambda v: -v, x))


def _switch(x):
    index = lax.convert_element_type(fnp.sum(x) > 0, np.int32) + 1
    return fnp.sum(lax.switch(index, [lambda v: v, lambda v: v ** 2, lambda v: fnp.sin(v)], x))


def _while(x):
    def body(carry):
        i, v = carry
        return i + 1, fnp.sin(v) + 0.5 * v
    return fnp.sum(lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1])


def _fori(x):
    return fnp.sum(lax.fori_loop(0, 4, lambda i, v: v * 0.5 + fnp.cos(v), x))


def _scan(x):
    def step(carry, v):
        return carry * 0.5 + fnp.sin(v), carry * v
    carry, ys = lax.scan(step, 0.0 * x[0], x)
    return carry + fnp.sum(ys)


def _dynamic_slices(x):
    part = lax.dynamic_slice(x, (2,), (3,))
    return fnp.sum(lax.dynamic_update_slice(x, part ** 2, (1,)) * x)


CONTROL_FLOW = {"cond": _cond, "switch": _switch, "while_loop": _while, "fori_loop": _fori,
                "scan": _scan, "dynamic_slice": _dynamic_slices}


@ft.custom_jvp
def _softplus(x):
    return fnp.log1p(fnp.exp(x))


@_softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _softplus(x), t * lax.logistic(x)


@ft.custom_vjp
def _scaled_sin(x, w):
    return fnp.sin(x) * w


_scaled_sin.defvjp(lambda x, w: (fnp.sin(x) * w, (x, w)),
                   lambda r, g: (g * fnp.cos(r[0]) * r[1], g * fnp.sin(r[0])))

CUSTOM_RULES = {
    "custom_jvp": lambda x: fnp.sum(_softplus(x) * x),
    "custom_vjp": lambda x: fnp.sum(_scaled_sin(x, x * 0.5 + 1.0)),
    "checkpoint": lambda x: fnp.sum(ft.checkpoint(lambda v: fnp.sin(fnp.sin(v)) * v)(x)),
}

# Control decisions need their value on the host: predicates and loop conditions are read
# with bool() (a synchronisation, as in CuPy), so these runs do not assert d2h == 0.
SYNCING = {"cond", "switch", "while_loop", "fori_loop"}


MODES = ["value", "grad", "jvp", "vmap", "vmap_grad", "hessian"]
# while_loop has forward mode only; custom_vjp has reverse mode only (both as in JAX).
UNSUPPORTED = {("while_loop", m) for m in ("grad", "vmap_grad", "hessian")} | {
    ("custom_vjp", m) for m in ("jvp", "hessian")}
CONTROL_FLOW_PARAMS = [(n, m) for n in [*CONTROL_FLOW, *CUSTOM_RULES] for m in MODES
                       if (n, m) not in UNSUPPORTED]


@pytest.mark.parametrize("name,mode", CONTROL_FLOW_PARAMS,
                         ids=[f"{n}-{m}" for n, m in CONTROL_FLOW_PARAMS])
def test_control_flow_and_custom_rules(device, request, name, mode):
    mark_known_host_site(request, device, CONTROL_FLOW_HOST_SITES, f"{name}-{mode}")
    fun = CONTROL_FLOW.get(name) or CUSTOM_RULES[name]
    rng = _rng(name)
    x, t = rng.standard_normal(6), rng.standard_normal(6)
    run = {
        "value": lambda x, t: fun(x),
        "grad": lambda x, t: ft.grad(fun)(x),
        "jvp": lambda x, t: ft.jvp(fun, (x,), (t,)),
        "vmap": lambda x, t: ft.vmap(fun)(fnp.stack([x, t, -x])),
        "vmap_grad": lambda x, t: ft.vmap(ft.grad(fun))(fnp.stack([x, t, -x])),
        "hessian": lambda x, t: ft.hessian(fun)(x),
    }[mode]
    run_both(device, run, [x, t], tol=1e-10, what=f"{name} {mode}", d2h=name not in SYNCING)



# ------------------------------------------------------------------------------------------
# The gradient checkers
# ------------------------------------------------------------------------------------------


def _checked(x, w):
    return fnp.tanh(x @ w) * 2.0


def _wrong_jvp_fun(second_order: bool = False):
    """sin with a wrong rule: 10% off, or right but constant (so its own derivative, the
    second derivative of sin, comes out zero)."""
    if second_order:
        return custom_jvp_with_rule(fnp.sin, lambda x: fnp.cos(lax.stop_gradient(x)))
    return custom_jvp_with_rule(fnp.sin, fnp.cos, scale=1.1)


def _testing_checkers():
    from functrans import testing as T
    return {
        "gradcheck": lambda f, x, w, gy: ft.gradcheck(f)(x, w),
        "gradcheck_order2_batched": lambda f, x, w, gy: ft.gradcheck(
            f, order=2, check_batched_grad=True, check_batched_forward_grad=True,
            check_grad_dtypes=True)(x, w),
        "gradcheck_fast": lambda f, x, w, gy: ft.gradcheck(f, fast_mode=True)(x, w),
        "check_grads": lambda f, x, w, gy: T.check_grads(f, (x, w), order=2),
        "check_jvp": lambda f, x, w, gy: T.check_jvp(f, lambda p, t: ft.jvp(f, p, t), (x, w)),
        "check_vjp": lambda f, x, w, gy: T.check_vjp(f, lambda *p: ft.vjp(f, *p), (x, w)),
        "check_backward": lambda f, x, w, gy: T.check_backward(f, (x, w), gy),
        "check_double_backward": lambda f, x, w, gy: T.check_double_backward(
            f, (x, w), gy, (x * 0.5, w * 0.5)),
        "check_numeric_gradient": lambda f, x, w, gy: T.check_numeric_gradient(
            f, [x, w], dtype=np.float64),
        # MXNet's defaults: float32, random head gradients drawn on the device
        "check_numeric_gradient_defaults": lambda f, x, w, gy: T.check_numeric_gradient(
            f, {"x": x, "w": w}),
    }


CHECKERS = list(_testing_checkers())


@pytest.mark.parametrize("checker", CHECKERS)
def test_checkers_pass_on_device_arrays(device, request, checker):
    """Checkers compare on the host (reading values back is their job), but draw their
    directions and compute derivatives on the device: no host-to-device copies."""
    mark_known_host_site(request, device, CHECKER_HOST_SITES, checker)
    rng = _rng(checker)
    x, w, gy = device.put([rng.standard_normal((3, 4)), rng.standard_normal((4, 2)),
                           rng.standard_normal((3, 2))])
    with device.transfers() as counts:
        _testing_checkers()[checker](_checked, x, w, gy)
    assert_no_transfers(device, counts, d2h=False)


@pytest.mark.parametrize("checker", CHECKERS)
def test_checkers_catch_a_wrong_rule_on_device_arrays(device, request, checker):
    mark_known_host_site(request, device, CHECKER_HOST_SITES, f"{checker}-wrong")
    wrong = _wrong_jvp_fun(second_order=checker == "check_double_backward")
    rng = _rng(checker)
    x, w, gy = device.put([rng.standard_normal((3, 4)), rng.standard_normal((4, 2)),
                           rng.standard_normal((3, 2))])
    with pytest.raises(AssertionError):
        _testing_checkers()[checker](lambda x, w: wrong(x @ w), x, w, gy)


@pytest.mark.parametrize("checker", CHECKERS)
def test_checkers_catch_a_wrong_rule_on_numpy_arrays(checker):
    """The wrong rules above are wrong enough for every checker (so the device tests can
    fail for the right reason)."""
    wrong = _wrong_jvp_fun(second_order=checker == "check_double_backward")
    rng = _rng(checker)
    x, w, gy = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), rng.standard_normal((3, 2))
    _testing_checkers()[checker](_checked, x, w, gy)
    with pytest.raises(AssertionError):
        _testing_checkers()[checker](lambda x, w: wrong(x @ w), x, w, gy)


def test_ft_testing_assert_allclose(device, request):
    from functrans import testing as T
    x = device.put(np.array([0.5, 1.0]))
    T.assert_allclose(x, x + 1e-12, rtol=1e-9)
    with pytest.raises(AssertionError):
        T.assert_allclose(x, x + 1.0)


@pytest.mark.parametrize("helper", ["numerical_jvp", "numerical_grad"])
def test_ft_testing_numerical_derivatives(device, request, helper):
    from functrans import testing as T
    mark_known_host_site(request, device, CHECKER_HOST_SITES, helper)
    x = device.put(np.array([0.5, 1.0]))
    ones = fnp.ones_like(x)
    with device.transfers() as counts:
        if helper == "numerical_jvp":
            d = T.numerical_jvp(fnp.exp, (x,), (ones,))
            want = np.exp([0.5, 1.0])
        else:
            (d,) = T.numerical_grad(lambda x: x ** 2, (x,), (ones,))
            want = np.array([1.0, 2.0])
    assert_no_transfers(device, counts, d2h=False)
    assert isinstance(d, device.array_type)
    np.testing.assert_allclose(device.get(d), want, rtol=1e-6)


# ------------------------------------------------------------------------------------------
# The primitive and functrans.numpy sweeps, on device arrays
# ------------------------------------------------------------------------------------------


@dataclass
class SweepCase:
    """One case of a sweep: ``fun(*args)`` with ``draw(rng)`` giving NumPy/Python arguments;
    ``diff`` says which arguments are differentiated, ``batch`` which carry a batch axis."""
    id: str
    fun: Callable
    draw: Callable
    diff: list
    batch: list
    differentiable: bool


def sweep_cases() -> list[SweepCase]:
    """The cases of the shared sweep tables (tests/sweep.py's ``Case``s of
    test_primitives.py and test_numpy.py, with the families' tests/cases_*.py, and
    test_cumulative.py)."""
    import test_cumulative
    import test_numpy
    import test_primitives

    cases = []
    for prefix, table in (("lax", test_primitives.CASES), ("numpy", test_numpy.CASES),
                          ("cumulative", test_cumulative.DERIVATIVE_CASES)):
        for c in table:
            cases.append(SweepCase(
                f"{prefix}-{c.name}", c, lambda rng, c=c: c.draw(rng, c.dtypes[0]),
                [a.differentiable for a in c.args], [a.batchable for a in c.args],
                c.differentiable and c.order > 0))
    return cases


SWEEP = sweep_cases()
SWEEP_IDS = [c.id for c in SWEEP]
SWEEP_DIFF = [c for c in SWEEP if c.differentiable and any(c.diff)]


def _on_device_split(case: SweepCase, args):
    """The case as a function of its differentiated arguments, the others fixed."""
    idx = [i for i, d in enumerate(case.diff) if d]

    def f(*dyn):
        full = list(args)
        for i, v in zip(idx, dyn):
            full[i] = v
        return case.fun(*full)
    return f, [args[i] for i in idx]


def _random_like(rng, tree):
    return tree_map(lambda v: rng.standard_normal(np.shape(v)).astype(np.asarray(v).dtype), tree)


@pytest.mark.parametrize("case", SWEEP, ids=SWEEP_IDS)
def test_sweep_evaluates_on_device(device, request, case):
    mark_known_host_site(request, device, SWEEP_HOST_SITES, f"{case.id}-eval")
    args = case.draw(_rng(case.id))
    run_sweep_case(device, case.fun, args, what=case.id)


@pytest.mark.parametrize("case", SWEEP_DIFF, ids=[c.id for c in SWEEP_DIFF])
def test_sweep_jvp_on_device(device, request, case):
    mark_known_host_site(request, device, SWEEP_HOST_SITES, f"{case.id}-jvp")
    rng = _rng(case.id + "/jvp")
    args = case.draw(rng)
    f, primals = _on_device_split(case, args)
    tangents = _random_like(rng, primals)

    def jvp(args, tangents):
        f, primals = _on_device_split(case, args)
        return ft.jvp(f, primals, tangents)
    run_sweep_case(device, jvp, [args, tangents], what=case.id)


@pytest.mark.parametrize("case", SWEEP_DIFF, ids=[c.id for c in SWEEP_DIFF])
def test_sweep_vjp_on_device(device, request, case):
    mark_known_host_site(request, device, SWEEP_HOST_SITES, f"{case.id}-vjp")
    rng = _rng(case.id + "/vjp")
    args = case.draw(rng)
    f, primals = _on_device_split(case, args)
    cts = _random_like(rng, f(*primals))

    def vjp(args, cts):
        f, primals = _on_device_split(case, args)
        out, pullback = ft.vjp(f, *primals)
        return out, pullback(cts)
    run_sweep_case(device, vjp, [args, cts], what=case.id)


@pytest.mark.parametrize("case", SWEEP, ids=SWEEP_IDS)
def test_sweep_vmap_on_device(device, request, case):
    mark_known_host_site(request, device, SWEEP_HOST_SITES, f"{case.id}-vmap")
    rng = _rng(case.id + "/vmap")
    samples = [case.draw(rng) for _ in range(3)]
    in_axes = [0 if b else None for b in case.batch]
    batched = [np.stack([np.asarray(s[i]) for s in samples]) if b else samples[0][i]
               for i, b in enumerate(case.batch)]
    run_sweep_case(device, lambda *a: ft.vmap(case.fun, in_axes=in_axes)(*a), batched,
                   what=case.id)


# ------------------------------------------------------------------------------------------
# Known sites outside tests/ that create host arrays for device inputs (or read device values
# back), each a strict xfail on the stand-in; the report beside this branch gives the fixes.
# Delete an entry when its site is fixed (a strict xfail that passes fails the suite).
# ------------------------------------------------------------------------------------------

SITES: dict = {
    "random_gamma_loop": "random.gamma's rejection loop reads on the host whether every "
                         "element has been accepted (a synchronisation, as while_loop's)",
    "random_count_loops": "random.poisson's, binomial's and multinomial's rejection rounds "
                          "are while_loops, whose predicate is read on the host (a "
                          "synchronisation)",
    "host_index_constants": "place's concrete mask and repeat's concrete counts are NumPy "
                            "arrays in the sweep cases, which indexing a device array copies "
                            "to its device (as CuPy does)",
    "hyp_parameter_series": "the derivatives of hyp1f1/hyp2f1 in their parameters sum series "
                            "until they converge, read on the host every 64 terms (a "
                            "synchronisation, as while_loop's)",
    "traced_solver_constants": "custom_linear_solve and custom_root trace the user's solvers "
                               "to jaxprs: constants made while tracing (the pivots' iota of "
                               "linalg.solve) are host arrays, copied to the device each "
                               "time the jaxpr runs",
    "krylov_loops": "the Krylov solvers are while_loops, whose predicate is read on the host "
                    "(a synchronisation), and trace constants as custom_linear_solve does",
    "host_named_windows": "scipy.signal's spectral functions take windows other than 'hann' "
                          "by name from SciPy's get_window, on the host: one copy per call "
                          "(pass the window as an array on the device to avoid it)",
    "host_grid_constants": "the sweep's RegularGridInterpolator cases close over a NumPy grid "
                           "(SciPy's reference shares it), which each call copies to the "
                           "device; a grid passed on the device is not copied",
    "ode_steps_loop": "odeint steps in a while_loop per output interval, whose predicate is "
                      "read on the host (a synchronisation)",
    "host_key_times": "the sweep's Slerp case closes over NumPy key times (SciPy's reference "
                      "shares them), which each call copies to the device; key times passed "
                      "on the device are not copied (tests/test_spatial_transform.py)",
}


# Sites that also fail on real CuPy (not only cost a copy there); none is known now.
FAILS_ON_CUPY: set = set()


def _known_sites(sites: dict) -> dict:
    """key -> the names of the sites it meets, from site name -> keys."""
    known: dict = {}
    for site, keys in sites.items():
        for key in keys:
            known.setdefault(key, []).append(site)
    return known


SWEEP_HOST_SITES = _known_sites({
    "random_gamma_loop": [f"lax-random_{case}-{check}" for case in ("gamma", "t")
                          for check in ("eval", "vmap")],
    "random_count_loops": [f"lax-random_{case}-{check}"
                           for case in ("poisson", "binomial", "multinomial")
                           for check in ("eval", "vmap")],
    "host_index_constants": [f"numpy-{case}-{check}" for check in ("eval", "jvp", "vjp", "vmap")
                             for case in ("place", "repeat_counts_axis0", "repeat_counts_flat",
                                          "repeat_one_count_in_an_array")],
    "hyp_parameter_series": [
        *[f"lax-hyp{p}_in_parameters-{mode}" for p in ("1f1", "2f1") for mode in ("jvp", "vjp")],
        *[f"lax-hyp_parameter_derivative_{p}-{mode}" for p in ("1f1", "2f1")
          for mode in ("eval", "jvp", "vjp", "vmap")]],
    "traced_solver_constants": [
        f"lax-{case}-{mode}" for case in (
            "custom_linear_solve", "custom_linear_solve_has_aux",
            "custom_linear_solve_matrix_rhs", "custom_linear_solve_nonlinear_operator",
            "custom_linear_solve_pytree", "custom_linear_solve_symmetric", "custom_root_vector")
        for mode in ("eval", "jvp", "vjp", "vmap")],
    "krylov_loops": [
        f"lax-sparse.linalg.{case}-{mode}" for case in (
            "bicgstab", "cg", "cg_preconditioned", "gmres")
        for mode in ("eval", "jvp", "vjp", "vmap")],
    "host_named_windows": [
        f"numpy-scipy.signal.{case}-{mode}" for case in ("csd_4", "istft_2", "stft_3", "welch_4")
        for mode in ("eval", "jvp", "vjp", "vmap")],
    "host_grid_constants": [
        f"numpy-scipy.interpolate.RegularGridInterpolator_{case}-{mode}" for case in (
            "linear_fill0.5", "linear_fillNone", "linear_fillNone_trailing",
            "nearest_fill0.5")
        for mode in ("eval", "jvp", "vjp", "vmap")],
    "ode_steps_loop": ["lax-odeint-eval", "lax-odeint-vmap"],
    "host_key_times": [f"numpy-spatial.transform.slerp-{mode}"
                       for mode in ("eval", "jvp", "vjp", "vmap")],
})
CONTROL_FLOW_HOST_SITES = _known_sites({
})
CHECKER_HOST_SITES = _known_sites({
})

#: The tests that take the `device` fixture (tests/test_cupy.py runs them on CuPy).
DEVICE_TESTS = [name for name, f in list(globals().items()) if name.startswith("test_")
                and "device" in inspect.signature(f).parameters]
