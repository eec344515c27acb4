"""functrans on dask arrays: the registration of ``dask.array`` as a lazy backend, where
dask differs from NumPy (creation, chunks, scatters, cumulative ops, special functions, the
chunked fallback), bad input, and the primitive and functrans.numpy sweeps on dask arrays.

Every check counts dask computes with a scheduler callback: transforms and evaluation
build graphs and compute nothing; one compute afterwards gives NumPy's answer.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
from dask.callbacks import Callback  # noqa: E402

import functrans as ft  # noqa: E402
import functrans.numpy as fnp  # noqa: E402
from functrans import backend  # noqa: E402


class Computes(Callback):
    """Counts the dask computes started inside the ``with`` block."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def _start(self, dsk):
        self.count += 1


def compute(x):
    """One compute of every dask array in the pytree ``x`` (NumPy values pass through)."""
    import dask
    return dask.compute(x)[0]


# ------------------------------------------------------------------------------------------
# Registration
# ------------------------------------------------------------------------------------------


def test_importing_functrans_does_not_import_dask():
    code = "import functrans, functrans.numpy, sys; print('dask' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_dask_arrays_are_a_lazy_library():
    x = da.ones((4, 3), chunks=2)
    library = backend.library_of(x)
    assert library.xp is da and library.lazy and not library.has_ufunc_methods
    assert backend.array_module(x) is da and backend.array_module(np.ones(2), x) is da
    assert backend.is_array(x) and backend.is_device_array(x) and not backend.is_mutable(x)
    assert backend.memory_owner(x) is x and backend.owned([x], [x])[0] is not None
    np.testing.assert_array_equal(backend.to_host(x), np.ones((4, 3)))


def loss(w, X, y):
    return fnp.mean((fnp.tanh(X @ w) - y) ** 2)


@pytest.fixture
def regression():
    rng = np.random.default_rng(0)
    Xn, yn, wn = rng.standard_normal((64, 5)), rng.standard_normal(64), rng.standard_normal(5)
    return (wn, Xn, yn), (da.from_array(wn), da.from_array(Xn, chunks=(16, 5)),
                          da.from_array(yn, chunks=16))


TRANSFORMS = {
    "grad": lambda w, X, y: ft.grad(loss)(w, X, y),
    "grad_wrt_data": lambda w, X, y: ft.grad(loss, argnums=(0, 1, 2))(w, X, y),
    "value_and_grad": lambda w, X, y: ft.value_and_grad(loss)(w, X, y),
    "jvp": lambda w, X, y: ft.jvp(lambda w: loss(w, X, y), (w,), (w * 0.5,)),
    "vjp": lambda w, X, y: ft.vjp(lambda w: loss(w, X, y), w)[1](1.5),
    "vmap_grad": lambda w, X, y: ft.vmap(ft.grad(loss), in_axes=(None, 0, 0))(
        w, X[:, None, :], y[:, None]),
    "jit_grad": lambda w, X, y: ft.jit(ft.grad(loss))(w, X, y),
    "hessian_vector": lambda w, X, y: ft.jvp(ft.grad(lambda w: loss(w, X, y)), (w,), (w,))[1],
    "eager": lambda w, X, y: fnp.tanh(X @ w) - y,
}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_transforms_stay_lazy_and_match_numpy(regression, name):
    host, lazy = regression
    with Computes() as c:
        got = TRANSFORMS[name](*lazy)
    assert c.count == 0
    leaves = ft.tree_util.tree_leaves(got)
    assert leaves and all(type(v) is da.Array for v in leaves), [type(v) for v in leaves]
    want = TRANSFORMS[name](*host)
    for g, w in zip(ft.tree_util.tree_leaves(compute(got)), ft.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
