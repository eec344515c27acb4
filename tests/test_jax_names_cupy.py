"""The device-specific JAX names on real CuPy arrays: placement, ``block_until_ready``,
callbacks and the ``shape=`` constructors keep arrays on the GPU.

Skipped where CuPy or a GPU is missing (CI has neither); tests/test_jax_names.py checks the
same on the CuPy stand-in, which also counts transfers.
"""
from __future__ import annotations

import numpy as np
import pytest

cp = pytest.importorskip("cupy")
try:
    if cp.cuda.runtime.getDeviceCount() < 1:
        pytest.skip("no CUDA device", allow_module_level=True)
except Exception as e:  # noqa: BLE001 (no driver, no runtime: skip, don't fail)
    pytest.skip(f"CUDA unavailable: {e}", allow_module_level=True)

import functrans as ft  # noqa: E402
import functrans.numpy as fnp  # noqa: E402
from functrans import lax  # noqa: E402
from functrans.flatten_util import ravel_pytree  # noqa: E402


def test_placement_on_the_gpu():
    x = cp.arange(4.0)
    (gpu, *_) = ft.devices("gpu")
    assert gpu.platform == "gpu" and ft.block_until_ready(x) is x
    assert ft.device_put(x) is x
    y = ft.device_put(np.ones(3), gpu)
    assert isinstance(y, cp.ndarray) and y.device.id == gpu.id
    assert type(ft.device_get({"x": x})["x"]) is np.ndarray


def test_callbacks_on_the_gpu(capsys):
    x = cp.arange(4.0)
    f = ft.jit(lambda v: (ft.debug.print("v={}", v), fnp.sum(v * 2.0))[1])
    assert float(f(x)) == 12.0
    f(x + 1.0)
    assert capsys.readouterr().out.splitlines() == ["v=[0. 1. 2. 3.]", "v=[1. 2. 3. 4.]"]
    seen = []
    out = ft.jit(lambda v: ft.pure_callback(lambda a: seen.append(type(a)) or cp.sin(a),
                                            ft.ShapeDtypeStruct(v.shape, v.dtype), v))(x)
    assert isinstance(out, cp.ndarray) and issubclass(seen[0], cp.ndarray)
    np.testing.assert_allclose(cp.asnumpy(out), np.sin(np.arange(4.0)))
    per_member = ft.vmap(lambda v: ft.pure_callback(
        lambda a: a * 3.0, ft.ShapeDtypeStruct((), v.dtype), v, vmap_method="sequential"))(x)
    np.testing.assert_allclose(cp.asnumpy(per_member), 3.0 * np.arange(4.0))


def test_constructors_methods_and_lax_helpers_on_the_gpu():
    x = cp.arange(4.0)
    for made in (fnp.zeros_like(x, shape=(2, 3)), fnp.full_like(x, 2.0, shape=(2, 2)),
                 fnp.empty_like(x, shape=(1,)), lax.full_like(x, 1.0, shape=(3,)),
                 lax.broadcasted_iota(np.int32, (2, 3), 1, like=x)):
        assert isinstance(made, cp.ndarray)
    assert float(fnp.full_like(x, 2.0, shape=(2, 2)).sum(axis=[0, 1])) == 8.0
    np.testing.assert_allclose(cp.asnumpy(lax.cumlogsumexp(x)),
                               np.logaddexp.accumulate(np.arange(4.0)))
    grad = ft.grad(lambda v: fnp.sum(lax.cumlogsumexp(v)))(x)
    assert isinstance(grad, cp.ndarray)
    flat, unravel = ravel_pytree({"a": x, "b": cp.ones((2, 2))})
    assert isinstance(flat, cp.ndarray) and unravel(flat)["b"].shape == (2, 2)
