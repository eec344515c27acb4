"""CuPy arrays go through every transform without leaving the device.

Skipped where CuPy or a GPU is missing (CI has neither); run on a GPU machine with
``pip install cupy-cuda12x && pytest tests/test_cupy.py``.
"""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

cp = pytest.importorskip("cupy")
try:
    if cp.cuda.runtime.getDeviceCount() < 1:
        pytest.skip("no CUDA device", allow_module_level=True)
except Exception as e:  # noqa: BLE001 (no driver, no runtime: skip, don't fail)
    pytest.skip(f"CUDA unavailable: {e}", allow_module_level=True)


def mlp_loss(params, x, y):
    h = fnp.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return fnp.mean((out - y) ** 2)


def _params(xp, rng):
    return {"w1": xp.asarray(rng.standard_normal((4, 8))), "b1": xp.zeros(8),
            "w2": xp.asarray(rng.standard_normal((8, 2))), "b2": xp.zeros(2)}


def _assert_on_device(tree):
    for leaf in ft.tree_util.tree_leaves(tree):
        if getattr(leaf, "ndim", 0) > 0:
            assert isinstance(leaf, cp.ndarray), type(leaf)


def _to_numpy(tree):
    return ft.tree_util.tree_map(lambda a: cp.asnumpy(a) if isinstance(a, cp.ndarray) else a,
                                 tree)


@pytest.mark.parametrize("transform", ["grad", "vmap_grad", "jacfwd", "jacrev", "hessian"])
def test_transforms_match_numpy_and_stay_on_device(transform):
    rng = np.random.default_rng(0)
    params_np = _params(np, rng)
    x_np, y_np = rng.standard_normal((5, 4)), rng.standard_normal((5, 2))
    params_cp = ft.tree_util.tree_map(cp.asarray, params_np)
    x_cp, y_cp = cp.asarray(x_np), cp.asarray(y_np)

    def run(params, x, y):
        if transform == "grad":
            return ft.grad(mlp_loss)(params, x, y)
        if transform == "vmap_grad":
            return ft.vmap(ft.grad(mlp_loss), in_axes=(None, 0, 0))(params, x, y)
        f = lambda w: mlp_loss({**params, "w2": w}, x, y)  # noqa: E731
        return {"jacfwd": ft.jacfwd, "jacrev": ft.jacrev, "hessian": ft.hessian}[transform](
            f)(params["w2"])

    got = run(params_cp, x_cp, y_cp)
    _assert_on_device(got)
    want = run(params_np, x_np, y_np)
    for g, w in zip(ft.tree_util.tree_leaves(_to_numpy(got)), ft.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_control_flow_and_custom_rules_on_device():
    x = cp.linspace(0.1, 1.0, 6)

    def f(x):
        ys = ft.lax.scan(lambda c, v: (c * 0.5 + fnp.sin(v), c), 0.0 * x[0], x)[1]
        return fnp.sum(ft.lax.cond(fnp.sum(x) > 0, lambda y: y * 2.0, lambda y: -y, ys))

    g = ft.grad(f)(x)
    assert isinstance(g, cp.ndarray)
    np.testing.assert_allclose(cp.asnumpy(g), ft.grad(f)(cp.asnumpy(x)), rtol=1e-10)
