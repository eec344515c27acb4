"""The JAX names outside the array libraries: callbacks (``pure_callback``, ``debug.print``,
``debug.callback``) under every transform, devices and placement, the switches
(``disable_jit``, ``ensure_compile_time_eval``, ...), ``custom_gradient``,
``closure_convert``, ``flatten_util``, ``dtypes``, ``typing``, the lax helpers' errors, and
the submodules that JAX users import as modules."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.flatten_util import ravel_pytree
from sweep import assert_close


def _printing(x):
    y = fnp.sin(x)
    ft.debug.print("y={}", y)
    return fnp.sum(y * 2.0)


def _lines(capsys) -> list[str]:
    return capsys.readouterr().out.splitlines()


X = np.array([0.0, 1.0])
Y = "y=" + str(np.sin(X))


# ------------------------------------------------------------------------------------------
# debug.print and debug.callback
# ------------------------------------------------------------------------------------------


def test_debug_print_eager_formats_values(capsys):
    ft.debug.print("a={} b={b} c={}", np.arange(2), 3.5, b={"k": 1})
    assert _lines(capsys) == ["a=[0 1] b={'k': 1} c=3.5"]


def test_debug_print_under_jit_prints_at_run_time_on_each_call(capsys):
    f = ft.jit(_printing)
    lowered = f.lower(X)  # tracing and compiling print nothing
    assert _lines(capsys) == []
    f(X)
    f(X + 1.0)
    f(X)  # the cached signature: printed again
    assert _lines(capsys) == [Y, "y=" + str(np.sin(X + 1.0)), Y]
    assert "debug_callback" in str(lowered.jaxpr)
    assert lowered.compile()(X) == f(X)
    assert _lines(capsys) == [Y, Y]


def test_debug_print_under_vmap_prints_each_member(capsys):
    xs = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    want = ["y=" + str(np.sin(row)) for row in xs]
    ft.vmap(_printing)(xs)
    assert _lines(capsys) == want
    ft.jit(ft.vmap(_printing))(xs)
    assert _lines(capsys) == want
    ft.vmap(ft.jit(_printing))(xs)
    assert _lines(capsys) == want
    ft.vmap(_printing, in_axes=1)(xs.T)
    assert _lines(capsys) == want


@pytest.mark.parametrize("name,transform", [
    ("grad", ft.grad), ("jit(grad)", lambda f: ft.jit(ft.grad(f))),
    ("grad(jit)", lambda f: ft.grad(ft.jit(f))),
    ("jit(grad(jit))", lambda f: ft.jit(ft.grad(ft.jit(f)))),
    ("value_and_grad", ft.value_and_grad), ("jacfwd", ft.jacfwd), ("hessian", ft.hessian),
    ("jvp", lambda f: lambda x: ft.jvp(f, (x,), (x,))),
    ("linearize", lambda f: lambda x: ft.linearize(f, x)[0]),
    ("jit(jit)", lambda f: ft.jit(lambda x: ft.jit(f)(x) * 2.0)),
])
def test_debug_print_under_differentiation_prints_primals_once(capsys, name, transform):
    g = transform(_printing)
    for _ in range(4):  # repeated grads take the recorded (tape) path: still once per call
        g(X)
    assert _lines(capsys) == [Y] * 4, name


def test_debug_print_per_example_gradients(capsys):
    xs = np.array([[0.0, 1.0], [2.0, 3.0]])
    for _ in range(3):
        ft.vmap(ft.grad(_printing))(xs)
    assert _lines(capsys) == ["y=" + str(np.sin(r)) for r in xs] * 3


def test_debug_print_alone_and_repeated_in_jit(capsys):
    only = ft.jit(lambda x: ft.debug.print("only {}", x))
    assert only(X) is None
    twice = ft.jit(lambda x: (ft.debug.print("p {}", x), ft.debug.print("p {}", x), x)[2])
    twice(X)
    assert _lines(capsys) == ["only [0. 1.]", "p [0. 1.]", "p [0. 1.]"]


def test_debug_callback_gets_values_in_order():
    seen = []

    def f(x):
        ft.debug.callback(lambda a, b, *, c: seen.append((float(a), b, c.shape)),
                          fnp.sum(x), "tag", c=x)
        return x * 2.0

    ft.jit(f)(X)
    ft.vmap(f)(np.ones((2, 3)))
    ft.grad(lambda x: fnp.sum(f(x)))(X)
    assert seen == [(1.0, "tag", (2,)), (3.0, "tag", (3,)), (3.0, "tag", (3,)),
                    (1.0, "tag", (2,))]


def test_debug_callbacks_staged_but_not_run_by_make_jaxpr(capsys):
    # make_jaxpr and eval_shape run nothing; the equation is in the jaxpr, as in JAX
    assert "debug_callback" in str(ft.make_jaxpr(_printing)(X))
    assert ft.eval_shape(_printing, X).shape == ()
    assert "debug_callback" in str(ft.make_jaxpr(ft.jit(_printing))(X))
    assert _lines(capsys) == []


def test_debug_print_bad_format():
    with pytest.raises(ValueError, match="invalid format string"):
        ft.debug.print("{", X)
    with pytest.raises(TypeError, match="fmt must be a format string"):
        ft.debug.print(X)


# ------------------------------------------------------------------------------------------
# pure_callback
# ------------------------------------------------------------------------------------------


def _adder(calls):
    def callback(x, y):
        calls.append((np.shape(x), np.shape(y)))
        return x + y
    return callback


def _call(callback, x, y, vmap_method=None):
    shape = np.broadcast_shapes(np.shape(x), np.shape(y))
    return ft.pure_callback(callback, ft.ShapeDtypeStruct(shape, np.float64), x, y,
                            vmap_method=vmap_method)


@pytest.mark.parametrize("method,shapes", [
    ("expand_dims", [((4,), (1,))]), ("broadcast_all", [((4,), (4,))]),
    ("legacy_vectorized", [((4,), ())]), ("sequential", [((), ())] * 4),
    ("sequential_unrolled", [((), ())] * 4)])
def test_pure_callback_vmap_methods(method, shapes):
    calls: list = []
    x = np.arange(4.0)
    got = ft.vmap(lambda x, y: _call(_adder(calls), x, y, method), in_axes=(0, None))(
        x, np.float64(1.0))
    assert_close(got, x + 1.0)
    assert calls == shapes
    calls.clear()
    got = ft.jit(ft.vmap(lambda x, y: _call(_adder(calls), x, y, method), in_axes=(0, None)))(
        x, np.float64(1.0))
    assert_close(got, x + 1.0)
    assert calls == shapes


def test_pure_callback_under_jit_runs_each_call_and_may_be_skipped():
    calls: list = []
    f = ft.jit(lambda x: _call(_adder(calls), x, 1.0) * 2.0)
    f(X)
    f(X)
    assert len(calls) == 2
    calls.clear()
    unused = ft.jit(lambda x: (_call(_adder(calls), x, 1.0), x * 2.0)[1])
    assert_close(unused(X), 2.0 * X)
    assert calls == []  # pure: a result nobody reads need not be computed


def test_pure_callback_pytrees_and_kwargs():
    def callback(d, *, scale):
        return {"sum": d["a"] + d["b"], "scaled": d["a"] * scale}
    shapes = {"sum": ft.ShapeDtypeStruct((2,), np.float64),
              "scaled": ft.ShapeDtypeStruct((2,), np.float64)}
    out = ft.jit(lambda a: ft.pure_callback(callback, shapes, {"a": a, "b": a}, scale=3.0))(X)
    assert_close(out["sum"], 2 * X)
    assert_close(out["scaled"], 3 * X)


def test_pure_callback_refuses_derivatives_and_unnamed_vmap():
    with pytest.raises(ValueError, match="does not support differentiation"):
        ft.grad(lambda x: fnp.sum(_call(_adder([]), x, 1.0)))(X)
    with pytest.raises(ValueError, match="does not support differentiation"):
        ft.jvp(lambda x: _call(_adder([]), x, 1.0), (X,), (X,))
    with pytest.raises(NotImplementedError, match="needs a vmap_method"):
        ft.vmap(lambda x: _call(_adder([]), x, 1.0))(np.ones((2, 2)))
    with pytest.raises(ValueError, match="vmap_method must be one of"):
        _call(_adder([]), X, 1.0, "loop")
    # a stopped gradient is fine: the callback's result carries no derivative
    assert_close(ft.grad(lambda x: fnp.sum(_call(_adder([]), lax.stop_gradient(x), 1.0)
                                           * x))(X), X + 1.0)


def test_pure_callback_checks_what_the_callback_returns():
    bad_shape = ft.ShapeDtypeStruct((3,), np.float64)
    with pytest.raises(TypeError, match="has shape .2,. and dtype float64, but"):
        ft.pure_callback(lambda x: x, bad_shape, X)
    bad_dtype = ft.ShapeDtypeStruct((2,), np.float32)
    with pytest.raises(TypeError, match="dtype float32"):
        ft.jit(lambda x: ft.pure_callback(lambda v: v, bad_dtype, x))(X)
    with pytest.raises(TypeError, match="result_shape_dtypes must be a pytree"):
        ft.pure_callback(lambda x: x, (2,), X)


def test_callbacks_keep_device_arrays_on_the_device():
    import cupy_standin as standin
    xd = standin.asarray(X)
    seen = []
    with standin.transfers() as t:
        out = ft.jit(lambda x: ft.pure_callback(lambda v: v * 3.0, ft.ShapeDtypeStruct(
            (2,), np.float64), x) * 2.0)(xd)
        ft.jit(lambda x: ft.debug.callback(lambda v: seen.append(type(v)), x))(xd)
        ft.block_until_ready(out)
    assert (t.h2d, t.d2h) == (0, 0)
    assert issubclass(seen[0], standin.ndarray)
    assert_close(standin.asnumpy(out), 6.0 * X)


# ------------------------------------------------------------------------------------------
# Devices and placement
# ------------------------------------------------------------------------------------------


def test_devices_and_placement():
    assert ft.default_backend() == "cpu"
    (cpu,) = ft.devices()
    assert (cpu.platform, cpu.id, repr(cpu)) == ("cpu", 0, "CpuDevice(id=0)")
    assert ft.devices("cpu") == [cpu]
    with pytest.raises(RuntimeError, match="unknown backend 'tpu'"):
        ft.devices("tpu")
    put = ft.device_put({"a": [1.0, np.ones(2)], "b": 3})  # lists are pytree nodes
    assert isinstance(put["a"][1], np.ndarray) and put["a"][1].shape == (2,)
    assert put["a"][0].shape == () and put["b"].dtype == np.int64
    got = ft.device_get({"a": fnp.ones(2), "b": "text"})
    assert type(got["a"]) is np.ndarray and got["b"] == "text"
    with pytest.raises(TypeError, match="device must be a Device"):
        ft.device_put(X, "cpu")
    # under a transform device_put is the identity
    assert_close(ft.grad(lambda x: fnp.sum(ft.device_put(x) ** 2))(X), 2 * X)


def test_placement_of_device_arrays():
    import cupy_standin as standin
    xd = standin.asarray(X)
    with standin.transfers() as t:
        assert ft.device_put(xd) is xd  # already placed: no copy
        assert ft.block_until_ready({"x": xd})["x"] is xd
    assert (t.h2d, t.d2h) == (0, 0)
    with standin.transfers() as t:
        host = ft.device_put(xd, ft.devices()[0])
        got = ft.device_get([xd])
    assert t.d2h == 2 and type(got[0]) is np.ndarray and isinstance(host, np.ndarray)


# ------------------------------------------------------------------------------------------
# Switches
# ------------------------------------------------------------------------------------------


def test_disable_jit_runs_eagerly(capsys):
    f = ft.jit(lambda x: print("inside", type(x).__name__) or x * 2.0)
    with ft.disable_jit():
        assert_close(f(X), 2 * X)
        with ft.disable_jit(False):
            f(X)
        f(X)
    f(X)
    lines = _lines(capsys)
    assert lines[0] == "inside ndarray" and lines[2] == "inside ndarray"
    assert "Tracer" in lines[1] and len(lines) == 3  # traced once, then cached
    assert not ft.config.jit_disabled


def test_ensure_compile_time_eval_computes_constants_now():
    def f(x):
        with ft.ensure_compile_time_eval():
            table = fnp.cos(np.arange(3.0))
            assert isinstance(table, np.ndarray)
        return x * table
    assert [e.primitive.name for e in ft.make_jaxpr(f)(np.ones(3)).jaxpr.eqns] == ["mul"]
    assert_close(ft.jit(f)(np.ones(3)), np.cos(np.arange(3.0)))


def test_names_and_precision_are_accepted():
    with ft.named_scope("block"), ft.default_matmul_precision("tensorfloat32"):
        y = fnp.dot(X, X)
    assert y == 1.0
    with pytest.raises(TypeError):
        with ft.named_scope(3):
            pass
    with pytest.raises(ValueError, match="unknown precision"):
        with ft.default_matmul_precision("double"):
            pass
    f = ft.named_call(lambda x: x + 1.0, name="plus_one")
    assert f.__name__ == "plus_one" and ft.grad(f)(1.0) == 1.0


def test_clear_caches_forgets_compiled_signatures():
    f = ft.jit(lambda x: x * 2.0)
    f(X)
    lax.scan(lambda c, v: (c + v, None), 0.0, X)
    assert f.cache_info().size == 1
    ft.clear_caches()
    assert f.cache_info().size == 0
    assert sum(h + m for h, m in ft.jaxpr_transforms.cache_info().values()) == 0


# ------------------------------------------------------------------------------------------
# custom_gradient and closure_convert
# ------------------------------------------------------------------------------------------


def test_custom_gradient_one_and_several_arguments():
    @ft.custom_gradient
    def scaled_sin(x):
        return fnp.sin(x), lambda g: (g * 10.0 * fnp.cos(x),)

    assert_close(ft.grad(lambda x: fnp.sum(scaled_sin(x)))(X), 10 * np.cos(X))
    assert_close(ft.jit(ft.grad(lambda x: fnp.sum(scaled_sin(x))))(X), 10 * np.cos(X))
    assert_close(ft.vmap(ft.grad(lambda x: scaled_sin(x)))(X), 10 * np.cos(X))

    @ft.custom_gradient
    def product(x, y):
        return x * y, lambda g: (g * y, g * x * 2.0)
    gx, gy = ft.grad(lambda x, y: fnp.sum(product(x, y)), argnums=(0, 1))(X, X + 1.0)
    assert_close(gx, X + 1.0)
    assert_close(gy, 2 * X)

    @ft.custom_gradient
    def single_value(x):  # a bare cotangent for one argument, as in JAX
        return x * 3.0, lambda g: g
    assert ft.grad(single_value)(2.0) == 1.0
    with pytest.raises(TypeError, match="must return a pair"):
        ft.custom_gradient(lambda x: x)(1.0)


def test_closure_convert_hoists_differentiated_values():
    @ft.custom_vjp
    def apply(f, x, *consts):
        return f(x, *consts)

    apply_fwd = lambda f, x, *consts: (f(x, *consts), (x, consts))  # noqa: E731

    def apply_bwd(f, res, g):
        x, consts = res
        _, pullback = ft.vjp(f, x, *consts)
        return pullback(g)
    apply.defvjp(apply_fwd, apply_bwd)
    apply.nondiff_argnums = (0,)

    hoisted = []

    def loss(w, x):
        converted, consts = ft.closure_convert(lambda v: fnp.sin(v * w), x)
        hoisted.append(len(consts))  # w, when traced by grad, becomes an argument
        return fnp.sum(apply(converted, x, *consts))

    w = 0.7
    assert_close(ft.grad(loss)(w, X), np.sum(X * np.cos(X * w)))
    assert hoisted == [1]
    assert_close(ft.jit(ft.grad(loss))(w, X), np.sum(X * np.cos(X * w)))
    converted, consts = ft.closure_convert(lambda v: v * 2.0, X)
    assert consts == [] and converted(X) is not None
    with pytest.raises(TypeError, match="was traced for arguments of structure"):
        converted((X, X))


# ------------------------------------------------------------------------------------------
# flatten_util, dtypes, typing
# ------------------------------------------------------------------------------------------


def test_ravel_pytree_dtypes_and_errors():
    # NumPy's promotion: int8 with float32 is float32 (int32 with float32 would be float64)
    tree = {"i": np.arange(3, dtype=np.int8), "f": np.ones((2, 2), np.float32)}
    flat, unravel = ravel_pytree(tree)
    assert flat.dtype == np.float32 and flat.shape == (7,)
    back = unravel(flat)
    assert back["i"].dtype == np.int8 and back["f"].shape == (2, 2)
    with pytest.raises(ValueError, match=r"expected a vector of shape \(7,\)"):
        unravel(np.ones(6))
    empty, unravel_empty = ravel_pytree({})
    assert empty.shape == (0,) and unravel_empty(empty) == {}
    # vmap of unravel over a batch of flat vectors
    batch = ft.vmap(unravel)(np.stack([flat, 2 * flat]))
    assert batch["f"].shape == (2, 2, 2)


def test_dtypes_and_typing():
    from functrans import dtypes
    from functrans.typing import ArrayLike, DTypeLike
    assert dtypes.canonicalize_dtype(np.float32) == np.float32
    assert dtypes.result_type(np.float32(1.0), 2.0) == np.float32
    assert dtypes.result_type(2, 3.0, return_weak_type_flag=True) == (np.float64, True)
    assert dtypes.issubdtype(np.int8, np.integer)
    assert not dtypes.issubdtype(dtypes.float0, np.number)
    assert dtypes.float0 is ft.float0 and dtypes.finfo(np.float32).bits == 32
    assert dtypes.iinfo(np.int8).max == 127
    with pytest.raises(ValueError):
        dtypes.result_type()
    # JAX 0.10.2's values: bool is a byte, complex counts both parts
    assert [dtypes.itemsize_bits(d) for d in (bool, np.int8, np.uint16, np.float32,
                                              "complex128")] == [8, 8, 16, 32, 128]
    for bad in (None, "U3", dtypes.float0, "V4"):
        with pytest.raises(ValueError, match="itemsize_bits: dtype"):
            dtypes.itemsize_bits(bad)
    if "bfloat16" in dtypes.__all__:  # ml_dtypes is installed: its sub-byte types
        import ml_dtypes
        assert [dtypes.itemsize_bits(d) for d in (ml_dtypes.int4, ml_dtypes.bfloat16,
                                                  ml_dtypes.float8_e4m3fn)] == [4, 16, 8]

    def f(x: ArrayLike, dtype: DTypeLike = np.float32):
        return x
    assert ArrayLike is not None and f.__annotations__


# ------------------------------------------------------------------------------------------
# lax helpers: arguments and errors (values and derivatives: tests/cases_jax_names.py)
# ------------------------------------------------------------------------------------------


def test_lax_helpers_arguments_and_errors():
    assert lax.Precision("bfloat16") is lax.Precision.DEFAULT
    assert lax.Precision("HIGHEST") is lax.Precision.HIGHEST and str(lax.Precision.HIGH) == "HIGH"
    with pytest.raises(ValueError):
        lax.Precision("double")
    with pytest.raises(TypeError, match="min must be a scalar or of x's shape"):
        lax.clamp(np.zeros(3), np.ones(2), 1.0)
    with pytest.raises(TypeError, match="at most 2 cases"):
        lax.select_n(True, X, X, X)
    with pytest.raises(TypeError, match="boolean or integer"):
        lax.select_n(0.5, X, X)
    with pytest.raises(ValueError, match="add up to 2"):
        lax.split(X, (1, 2))
    with pytest.raises(TypeError, match="fill_value must be a scalar"):
        lax.full((2,), X)
    assert lax.full(3, 1.5).shape == (3,)
    assert lax.full_like(X, 1, shape=(2, 3), dtype=np.int8).dtype == np.int8
    assert lax.select_n(np.array([False, True]), X, X + 5.0).tolist() == [0.0, 6.0]
    assert lax.rsqrt(4.0) == 0.5


def test_cumulative_reductions_have_jax_signatures():
    x = np.array([[3.0, -1.0, 2.0], [0.5, 4.0, -2.0]])
    for name, ref in [("cumsum", np.cumsum), ("cumprod", np.cumprod),
                      ("cummax", np.maximum.accumulate), ("cummin", np.minimum.accumulate),
                      ("cumlogsumexp", np.logaddexp.accumulate)]:
        fn = getattr(lax, name)
        assert_close(fn(x, axis=1), ref(x, axis=1))
        assert_close(fn(x, 1, True), ref(x[:, ::-1], axis=1)[:, ::-1])
        assert_close(fn(x), ref(x, axis=0))
    extreme = np.array([-1000.0, 0.0, 1000.0, -1000.0])
    assert_close(lax.cumlogsumexp(extreme), np.logaddexp.accumulate(extreme))


# ------------------------------------------------------------------------------------------
# Submodules imported as modules
# ------------------------------------------------------------------------------------------

SUBMODULES = {
    "functrans.lax.linalg": "cholesky", "functrans.nn.initializers": "glorot_normal",
    "functrans.scipy.special": "gammaln", "functrans.scipy.linalg": "solve_triangular",
    "functrans.scipy.stats": "norm", "functrans.scipy.stats.norm": "logpdf",
    "functrans.numpy.linalg": "solve", "functrans.numpy.fft": "fft",
    "functrans.random": "normal", "functrans.tree_util": "tree_map",
    "functrans.tree": "map", "functrans.flatten_util": "ravel_pytree",
    "functrans.custom_derivatives": "custom_vjp", "functrans.dtypes": "float0",
    "functrans.typing": "ArrayLike", "functrans.debug": "print",
    "functrans.ad_checkpoint": "checkpoint_name", "functrans.test_util": "check_vjp",
    "functrans.core": "eval_context", "functrans.experimental": "io_callback",
    "functrans.scipy.spatial": "transform", "functrans.scipy.spatial.transform": "Rotation",
}


def test_submodules_import_as_modules_in_a_fresh_interpreter():
    lines = [f"import {m}\nfrom {m} import {n}\nassert {m}.{n} is {n}"
             for m, n in SUBMODULES.items()]
    source = "\n".join(lines) + "\nimport functrans\nassert functrans.lax.linalg is " \
        "functrans.lax_linalg and functrans.nn.initializers is functrans.nn_initializers\n"
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(source)],
                            capture_output=True, text=True, cwd=str(
                                __import__("pathlib").Path(ft.__file__).parents[1]))
    assert result.returncode == 0, result.stderr


# ------------------------------------------------------------------------------------------
# float32 pipelines stay float32
# ------------------------------------------------------------------------------------------


def _mlp_loss(params, x, labels):
    h = x
    for layer in params[:-1]:
        h = ft.nn.gelu(h @ layer["w"] + layer["b"])
        h = fnp.where(h > 0.5, h, 0.1 * h) * 2 + 1
    logits = h @ params[-1]["w"] + params[-1]["b"]
    log_p = ft.nn.log_softmax(logits)
    ce = -fnp.mean(fnp.take_along_axis(log_p, labels[:, None], axis=1))
    ce = ce - fnp.mean(fnp.sum(ft.nn.one_hot(labels, 3, dtype=x.dtype) * log_p, axis=-1))
    l2 = 1e-4 * sum(fnp.sum(layer["w"] ** 2) for layer in params)
    return ce + l2 + fnp.std(logits) / 2 + fnp.linalg.norm(logits) * 0.01


def _all_float32(tree, what):
    for path, leaf in ft.tree_util.tree_flatten_with_path(tree)[0]:
        assert np.asarray(leaf).dtype == np.float32, (what, ft.tree_util.keystr(path),
                                                      np.asarray(leaf).dtype)


@pytest.mark.parametrize("compiled", [False, True])
def test_float32_mlp_trained_with_python_float_rates_stays_float32(compiled):
    key = ft.random.PRNGKey(0)
    k1, k2, k3 = ft.random.split(key, 3)
    f32 = np.float32
    params = [{"w": ft.nn.initializers.glorot_normal()(k1, (4, 8), f32), "b": fnp.zeros(8, f32)},
              {"w": ft.nn.initializers.lecun_normal()(k2, (8, 3), f32),
               "b": ft.nn.initializers.zeros(k3, (3,), f32)}]
    x = ft.random.normal(k3, (16, 4), f32)
    labels = np.arange(16) % 3
    _all_float32((params, x), "initialisation")
    value_and_grad = ft.value_and_grad(_mlp_loss)
    if compiled:
        value_and_grad = ft.jit(value_and_grad)
    lr, momentum, velocity = 0.05, 0.9, ft.tree_util.tree_map(fnp.zeros_like, params)
    first = None
    for step in range(5):  # from the second call grad records a tape: both paths checked
        loss, grads = value_and_grad(params, x, labels)
        _all_float32((loss, grads), f"step {step}")
        velocity = ft.tree_util.tree_map(lambda v, g: momentum * v + g, velocity, grads)
        params = ft.tree_util.tree_map(lambda p, v: p - lr * v, params, velocity)
        _all_float32((velocity, params), f"update {step}")
        first = loss if first is None else first
    assert loss < first
    flat, unravel = ravel_pytree(params)
    _all_float32((flat, unravel(flat * 0.5)), "ravel_pytree")
    per_example = ft.vmap(ft.grad(_mlp_loss), in_axes=(None, 0, 0))(
        params, x[:, None], labels[:, None])
    _all_float32(per_example, "per-example gradients")


# ------------------------------------------------------------------------------------------
# Differences from JAX, fixed (values and derivatives: tests/cases_jax_names.py)
# ------------------------------------------------------------------------------------------


def test_type_predicates_work_on_tracers():
    z = np.array([1.0 + 0j, 2.0j])
    for transform in (ft.jit, ft.vmap, ft.grad):
        def f(x):
            assert not fnp.iscomplexobj(x) and fnp.isrealobj(x)
            assert fnp.isscalar(x) == (transform is not ft.jit)  # vmap: a member is 0-d
            return fnp.sum(x * fnp.isreal(x) + fnp.iscomplex(x))
        transform(f)(np.float64(1.5) if transform is ft.grad else X)
    assert ft.jit(lambda v: fnp.asarray(fnp.iscomplexobj(v)))(z)
    assert fnp.iscomplexobj([1j]) and not fnp.iscomplexobj(None) and fnp.isrealobj(2.0)
    assert ft.jit(fnp.isreal)(1.5) and not ft.jit(fnp.iscomplex)(1.5)


def test_reduction_methods_take_list_axes():
    x = fnp.ones((2, 3, 4))
    for name in ("sum", "mean", "max", "min", "prod", "any", "all", "std", "var"):
        want = getattr(np.ones((2, 3, 4)), name)(axis=(0, 2))
        assert_close(getattr(x, name)(axis=[0, 2]), want, what=name)
        assert_close(ft.jit(lambda v: getattr(v, name)(axis=[0, 2]))(np.ones((2, 3, 4))),
                     want, what=name)
    assert x.sum([1], keepdims=True).shape == (2, 1, 4)
    assert_close(x.std(axis=[0, 1], ddof=1), np.zeros(4))


def test_contractions_take_precision_and_preferred_element_type():
    a8 = np.full((2, 3), 100, np.int8)
    for fn, args in [(fnp.dot, (a8, a8.T)), (fnp.matmul, (a8, a8.T)),
                     (fnp.inner, (a8, a8)), (fnp.tensordot, (a8, a8.T, 1)),
                     (fnp.vdot, (a8, a8))]:
        out = fn(*args, precision=lax.Precision.HIGHEST, preferred_element_type=np.int32)
        want = getattr(np, fn.__name__)(*[a.astype(np.int64) if isinstance(a, np.ndarray)
                                          else a for a in args])
        assert out.dtype == np.int32 and np.all(np.asarray(out) == want), fn.__name__
        fn(*args, precision=("float32", "float32"))
        with pytest.raises(ValueError, match="unknown precision 'double'"):
            fn(*args, precision="double")
    assert fnp.einsum("ij,kj->ik", a8, a8, preferred_element_type=np.int32)[0, 0] == 30000
    with pytest.raises(ValueError, match="unknown precision"):
        fnp.einsum("ij->", a8, precision="exact")
    f32 = np.ones((2, 2), np.float32)
    assert fnp.dot(f32, f32, preferred_element_type=np.float64).dtype == np.float64
    assert_close(ft.grad(lambda a: fnp.sum(fnp.matmul(a, a, precision="high")))(f32),
                 np.full((2, 2), 4.0, np.float32))


def test_einsum_sums_broadcast_axes_left_out_of_the_output():
    a = np.arange(24.0).reshape(2, 3, 4)
    assert_close(fnp.einsum("...i->i", a), a.sum((0, 1)))
    assert_close(fnp.einsum("ij...->j", a), a.sum((0, 2)))
    assert_close(fnp.einsum("...i,...i->i", a, a[0]), (a * a[0]).sum((0, 1)))


def test_like_constructors_take_shape():
    x = np.ones(2, np.float32)
    assert fnp.zeros_like(x, shape=(2, 3)).shape == (2, 3)
    assert fnp.ones_like(x, shape=4).dtype == np.float32
    assert fnp.full_like(x, 3, shape=(1,), dtype=np.int8).tolist() == [3]
    assert fnp.empty_like(x, np.int32, (3,)).dtype == np.int32
    assert fnp.zeros_like(x, device=ft.devices()[0]).shape == (2,)
    assert_close(ft.grad(lambda v: fnp.sum(fnp.full_like(x, v, shape=(3, 2))))(2.0), 6.0)
    assert ft.vmap(lambda v: fnp.ones_like(v, shape=(3,)))(np.ones((2, 5))).shape == (2, 3)
    import cupy_standin as standin
    xd = standin.asarray(x)
    with standin.transfers() as t:
        out = [fnp.zeros_like(xd, shape=(3,)), fnp.full_like(xd, 2.0, shape=(2, 2)),
               fnp.empty_like(xd, shape=(4,)), fnp.ones_like(xd, shape=())]
    assert (t.h2d, t.d2h) == (0, 0)
    assert all(isinstance(o, standin.ndarray) for o in out)


def test_polyval_with_coefficient_arrays():
    p = np.arange(6.0).reshape(3, 2)
    x = np.arange(4.0).reshape(2, 2)
    assert_close(fnp.polyval(p, x), np.polyval(p, x))
    assert_close(ft.jit(fnp.polyval)(p, 3.0), np.polyval(p, 3.0))
    with pytest.raises(ValueError, match="got a scalar"):
        fnp.polyval(2.0, x)


def test_lax_primitive_objects_are_the_primitives_jaxprs_hold():
    from functrans import core
    jaxpr = ft.make_jaxpr(lambda x, y: lax.dot_general(lax.sin(x), y, (((1,), (0,)), ((), ())))
                          * 2.0)(np.ones((2, 3)), np.ones((3, 4)))
    held = [e.primitive for e in jaxpr.jaxpr.eqns]
    assert held == [lax.sin_p, lax.dot_general_p, lax.mul_p]
    names = [n for n in lax.__all__ if n.endswith("_p")]
    assert len(names) == 128
    for name in names:
        primitive = getattr(lax, name)
        assert isinstance(primitive, core.Primitive), name
    np.testing.assert_array_equal(lax.add_p.bind(np.ones(2), np.ones(2)), [2.0, 2.0])


def test_lax_primitive_objects_have_jaxs_names():
    jax_lax = pytest.importorskip("jax.lax")
    for name in (n for n in lax.__all__ if n.endswith("_p")):
        assert getattr(jax_lax, name).name.replace("-", "_") == getattr(lax, name).name, name


def test_lax_linalg_primitive_objects_are_the_decompositions():
    from functrans import core
    names = [n for n in lax.linalg.__all__ if n.endswith("_p")]
    assert len(names) == 11
    assert all(isinstance(getattr(lax.linalg, n), core.Primitive) for n in names)
    jaxpr = ft.make_jaxpr(lambda a: lax.linalg.cholesky(a) + lax.linalg.qr(a)[1])(np.eye(2))
    assert {lax.linalg.cholesky_p, lax.linalg.qr_p} <= {e.primitive for e in jaxpr.jaxpr.eqns}
    jax_linalg = pytest.importorskip("jax.lax.linalg")
    for name in names:
        assert getattr(jax_linalg, name).name == getattr(lax.linalg, name).name, name


# ------------------------------------------------------------------------------------------
# jax.core's public names
# ------------------------------------------------------------------------------------------


def test_core_names_user_code_imports():
    from functrans import core
    assert core.ensure_compile_time_eval is ft.ensure_compile_time_eval
    assert isinstance(core.get_aval(np.ones(2)), core.AbstractValue)
    seen = {}

    def f(x):
        with core.eval_context():
            seen["table"] = fnp.cos(np.arange(3.0))  # a value, not a tracer
            y = x * 2.0  # a tracer of the enclosing trace still goes to it
        return y * seen["table"]
    jaxpr = ft.make_jaxpr(f)(np.ones(3))
    assert isinstance(seen["table"], np.ndarray)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["mul", "mul"]
    eqn = jaxpr.jaxpr.eqns[0]
    assert all(isinstance(a, core.Atom) for a in eqn.invars)
    assert core.max_dim(2, np.int64(5)) == 5 and core.min_dim(2, 5) == 2
    with pytest.raises(TypeError):
        core.max_dim(2.5, 1)


# ------------------------------------------------------------------------------------------
# experimental.io_callback
# ------------------------------------------------------------------------------------------


def _io_recorder():
    from functrans.experimental import io_callback
    calls = []

    def cb(x):
        calls.append(np.asarray(x).copy())
        return np.asarray(x) * 2.0

    def f(x, ordered=False):
        return io_callback(cb, ft.ShapeDtypeStruct(x.shape, x.dtype), x, ordered=ordered)
    return calls, f


def test_io_callback_runs_every_time_even_when_unused():
    calls, f = _io_recorder()
    assert_close(f(np.arange(3.0)), 2.0 * np.arange(3.0))
    calls.clear()
    g = ft.jit(lambda x: (f(x), f(x), x + 1.0)[2])  # two equal calls, results unused
    g(np.ones(2))
    g(np.ones(2))
    assert len(calls) == 4
    jaxpr = ft.make_jaxpr(lambda x: (f(x), x)[1])(np.ones(2))
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["io_callback"]
    calls.clear()
    body = lambda c, x: (c + f(x), None)  # noqa: E731
    assert ft.jit(lambda xs: lax.scan(body, 0.0, xs)[0])(np.arange(3.0)) == 6.0
    assert len(calls) == 3
    calls.clear()
    assert ft.eval_shape(f, np.ones(2)).shape == (2,) and not calls


def test_io_callback_under_vmap_and_its_refusals():
    calls, f = _io_recorder()
    for vf in (ft.vmap(f), ft.jit(ft.vmap(f))):
        calls.clear()
        assert_close(vf(np.arange(3.0)), 2.0 * np.arange(3.0))
        assert [float(c) for c in calls] == [0.0, 1.0, 2.0]  # once per member, in order
    with pytest.raises(ValueError, match="vmap of an ordered io_callback"):
        ft.vmap(lambda x: f(x, ordered=True))(np.arange(3.0))
    assert_close(f(np.arange(2.0), ordered=True), np.array([0.0, 2.0]))
    for differentiate in (lambda: ft.grad(lambda x: f(x).sum())(np.arange(3.0)),
                          lambda: ft.jvp(f, (np.arange(3.0),), (np.ones(3),)),
                          lambda: ft.grad(ft.jit(lambda x: f(x).sum()))(np.arange(3.0))):
        with pytest.raises(ValueError, match="io_callback does not support differentiation"):
            differentiate()
    # its result is a constant where nothing differentiated reaches it
    assert ft.grad(lambda x: x * f(lax.stop_gradient(x)))(np.array(2.0)) == 4.0  # x * 2 x0
    from functrans.experimental import io_callback
    with pytest.raises(TypeError, match="io_callback: result 0 of the callback has shape"):
        io_callback(lambda x: np.ones(3), ft.ShapeDtypeStruct((2,), np.float64),
                                    np.ones(2))
