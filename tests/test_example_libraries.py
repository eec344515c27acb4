"""functrans.example_libraries (JAX's ``jax.example_libraries``): ``optimizers`` and
``stax``.

Every optimizer's update is checked over several steps against its formula written out in
NumPy, every layer's output shape and values against NumPy, and a small CNN (convolution,
ReLU, max-pool, flatten, dense, log-softmax) is trained with Adam under ``jit``.  Where JAX
is installed (CI has no JAX) the same optimizers, layers and training run against JAX's
``jax.example_libraries`` too: functrans.random has JAX's bits, so the same keys give
JAX's parameters, and float64 results agree with JAX's under ``jax_enable_x64`` to
rounding (float32 ones, with float32 initializers, to float32 rounding).
"""
from __future__ import annotations

import importlib
import math
import pickle
import subprocess
import sys

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
import functrans.random as random
from functrans import lax
from functrans.example_libraries import optimizers, stax
from functrans.nn import initializers
from functrans.tree_util import tree_flatten, tree_leaves, tree_map, tree_structure
from test_standin import assert_no_transfers, assert_on_device_and_equal

# ------------------------------------------------------------------------------------------
# Names
# ------------------------------------------------------------------------------------------

#: ``dir()`` of JAX 0.10.2's modules, without underscores (checked against an installed JAX
#: of that version by ``test_the_stored_names_are_jax_s``).
JAX_NAMES = {
    "optimizers": [
        "Any", "Array", "Callable", "InitFn", "JoinPoint", "NamedTuple", "Optimizer",
        "OptimizerState", "Params", "ParamsFn", "Schedule", "State", "Step", "UpdateFn",
        "Updates", "adagrad", "adam", "adamax", "annotations", "clip_grads", "constant",
        "exponential_decay", "functools", "inverse_time_decay", "jax", "jnp", "l2_norm",
        "make_schedule", "map", "momentum", "namedtuple", "nesterov", "optimizer",
        "pack_optimizer_state", "partial", "piecewise_constant", "polynomial_decay",
        "rmsprop", "rmsprop_momentum", "safe_map", "safe_zip", "sgd", "sm3",
        "unpack_optimizer_state", "unzip2", "zip"],
    "stax": [
        "AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense",
        "Dropout", "Elu", "Exp", "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu",
        "GeneralConv", "GeneralConvTranspose", "Identity", "LeakyRelu", "LogSoftmax",
        "MaxPool", "Relu", "Selu", "Sigmoid", "Softmax", "Softplus", "SumPool", "Tanh",
        "elementwise", "elu", "functools", "gelu", "glorot", "glorot_normal", "jnp", "lax",
        "leaky_relu", "log_softmax", "logsoftmax", "math", "normal", "ones", "parallel",
        "randn", "random", "relu", "selu", "serial", "shape_dependent", "sigmoid",
        "softmax", "softplus", "standardize", "zeros"],
}

#: JAX's names that are what its source files import for themselves, not its API.
NOT_API = {
    "optimizers": {
        "Any": "typing.Any, imported for the type aliases",
        "Callable": "collections.abc.Callable, imported for the type aliases",
        "NamedTuple": "typing.NamedTuple, Optimizer's base class",
        "namedtuple": "collections.namedtuple, OptimizerState's maker",
        "annotations": "the `from __future__ import annotations` feature",
        "functools": "the functools module",
        "partial": "functools.partial",
        "jax": "the jax module",
        "jnp": "the jax.numpy module",
        "map": "jax._src.util.safe_map, a private helper bound to the builtin's name",
        "zip": "jax._src.util.safe_zip, a private helper bound to the builtin's name",
        "safe_map": "a private helper of jax._src.util",
        "safe_zip": "a private helper of jax._src.util",
        "unzip2": "a private helper of jax._src.util",
    },
    "stax": {
        "functools": "the functools module",
        "math": "the math module",
        "jnp": "the jax.numpy module",
        "lax": "the jax.lax module",
        "random": "the jax.random module",
    },
}


@pytest.mark.parametrize("name", ["optimizers", "stax"])
def test_every_public_name_of_jax_is_here(name):
    module = importlib.import_module(f"functrans.example_libraries.{name}")
    api = [n for n in JAX_NAMES[name] if n not in NOT_API[name]]
    assert sorted(module.__all__) == sorted(api)
    assert all(n in JAX_NAMES[name] for n in NOT_API[name])
    assert dir(module) == sorted(module.__all__)


@pytest.mark.parametrize("name", ["optimizers", "stax"])
def test_the_stored_names_are_jax_s(name):
    jax = pytest.importorskip("jax")
    if jax.__version__ != "0.10.2":
        pytest.skip(f"names stored from JAX 0.10.2, {jax.__version__} here")
    module = importlib.import_module(f"jax.example_libraries.{name}")
    assert [n for n in dir(module) if not n.startswith("_")] == JAX_NAMES[name]


def test_modules_import_as_modules():
    # as JAX's: `import jax.example_libraries.stax` and `from ... import ...`, in a fresh
    # interpreter so that nothing imported before helps
    code = ("import functrans.example_libraries.stax\n"
            "import functrans.example_libraries.optimizers as o\n"
            "from functrans.example_libraries import stax, optimizers\n"
            "from functrans.example_libraries.stax import Dense, serial\n"
            "assert stax is functrans.example_libraries.stax and o is optimizers\n"
            "assert optimizers.adam.__name__ == 'adam' and Dense is stax.Dense\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_aliases_are_the_functions_jax_s_stax_reexports():
    assert stax.glorot is stax.glorot_normal is initializers.glorot_normal
    assert stax.randn is stax.normal is initializers.normal
    assert stax.logsoftmax is stax.log_softmax is ft.nn.log_softmax
    for name in ("relu", "softmax", "softplus", "sigmoid", "elu", "leaky_relu", "selu",
                 "gelu", "standardize"):
        assert getattr(stax, name) is getattr(ft.nn, name)
    assert stax.ones is initializers.ones and stax.zeros is initializers.zeros


# ------------------------------------------------------------------------------------------
# Optimizers against their formulas in NumPy
# ------------------------------------------------------------------------------------------

def _schedule(i):
    return 0.1 / (1.0 + 0.5 * i)


def _ref_sgd(lr):
    return (lambda x: [x]), (lambda i, g, s: [s[0] - lr(i) * g])


def _ref_momentum(lr, mass, nesterov=False):
    def update(i, g, s):
        x, v = s
        v = mass * v + g
        return [x - lr(i) * ((mass * v + g) if nesterov else v), v]
    return (lambda x: [x, np.zeros_like(x)]), update


def _ref_adagrad(lr, momentum):
    def update(i, g, s):
        x, ssq, m = s
        ssq = ssq + g ** 2
        scaled = np.divide(g, np.sqrt(ssq), out=np.zeros_like(g), where=ssq > 0)
        m = (1 - momentum) * scaled + momentum * m
        return [x - lr(i) * m, ssq, m]
    return (lambda x: [x, np.zeros_like(x), np.zeros_like(x)]), update


def _ref_rmsprop(lr, gamma, eps):
    def update(i, g, s):
        x, a = s
        a = gamma * a + (1 - gamma) * g ** 2
        return [x - lr(i) * g / np.sqrt(a + eps), a]
    return (lambda x: [x, np.zeros_like(x)]), update


def _ref_rmsprop_momentum(lr, gamma, eps, momentum):
    def update(i, g, s):
        x, a, m = s
        a = gamma * a + (1 - gamma) * g ** 2
        m = momentum * m + lr(i) * g / np.sqrt(a + eps)
        return [x - m, a, m]
    return (lambda x: [x, np.zeros_like(x), np.zeros_like(x)]), update


def _ref_adam(lr, b1, b2, eps):
    def update(i, g, s):
        x, m, v = s
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * g ** 2 + b2 * v
        mhat, vhat = m / (1 - b1 ** (i + 1)), v / (1 - b2 ** (i + 1))
        return [x - lr(i) * mhat / (np.sqrt(vhat) + eps), m, v]
    return (lambda x: [x, np.zeros_like(x), np.zeros_like(x)]), update


def _ref_adamax(lr, b1, b2, eps):
    def update(i, g, s):
        x, m, u = s
        m = (1 - b1) * g + b1 * m
        u = np.maximum(b2 * u, np.abs(g))
        return [x - lr(i) / (1 - b1 ** (i + 1)) * m / (u + eps), m, u]
    return (lambda x: [x, np.zeros_like(x), np.zeros_like(x)]), update


def _ref_sm3(lr, momentum):
    # one accumulator vector per axis; a scalar is a vector of length 1
    def init(x):
        x = np.atleast_1d(x)
        return [x, np.zeros_like(x)] + [np.zeros(n) for n in x.shape]

    def update(i, g, s):
        x, m, *vs = s
        g = np.reshape(g, x.shape)
        accum = np.full(x.shape, np.inf)
        for k, v in enumerate(vs):
            shape = [1] * x.ndim
            shape[k] = x.shape[k]
            accum = np.minimum(accum, v.reshape(shape))
        accum = accum + g ** 2
        scaled = np.divide(g, np.sqrt(accum), out=np.zeros_like(g), where=accum > 0)
        m = (1 - momentum) * scaled + momentum * m
        x = x - lr(i) * m
        vs = [accum.max(axis=tuple(a for a in range(x.ndim) if a != k))
              for k in range(x.ndim)]
        return [x, m] + vs
    return init, update


#: name -> (functrans optimizer, NumPy reference (init, update), JAX's optimizer's name
#: and arguments), each with the schedule ``_schedule`` or a constant step size
OPTIMIZERS = {
    "sgd": (lambda lr: optimizers.sgd(lr), lambda lr: _ref_sgd(lr), ("sgd", ())),
    "momentum": (lambda lr: optimizers.momentum(lr, 0.9),
                 lambda lr: _ref_momentum(lr, 0.9), ("momentum", (0.9,))),
    "nesterov": (lambda lr: optimizers.nesterov(lr, 0.8),
                 lambda lr: _ref_momentum(lr, 0.8, nesterov=True), ("nesterov", (0.8,))),
    "adagrad": (lambda lr: optimizers.adagrad(lr, momentum=0.7),
                lambda lr: _ref_adagrad(lr, 0.7), ("adagrad", (0.7,))),
    "rmsprop": (lambda lr: optimizers.rmsprop(lr, gamma=0.8, eps=1e-6),
                lambda lr: _ref_rmsprop(lr, 0.8, 1e-6), ("rmsprop", (0.8, 1e-6))),
    "rmsprop_momentum": (lambda lr: optimizers.rmsprop_momentum(lr, 0.8, 1e-6, 0.6),
                         lambda lr: _ref_rmsprop_momentum(lr, 0.8, 1e-6, 0.6),
                         ("rmsprop_momentum", (0.8, 1e-6, 0.6))),
    "adam": (lambda lr: optimizers.adam(lr), lambda lr: _ref_adam(lr, 0.9, 0.999, 1e-8),
             ("adam", ())),
    "adam_hyper": (lambda lr: optimizers.adam(lr, b1=0.5, b2=0.75, eps=1e-3),
                   lambda lr: _ref_adam(lr, 0.5, 0.75, 1e-3), ("adam", (0.5, 0.75, 1e-3))),
    "adamax": (lambda lr: optimizers.adamax(lr, 0.8, 0.9, 1e-4),
               lambda lr: _ref_adamax(lr, 0.8, 0.9, 1e-4), ("adamax", (0.8, 0.9, 1e-4))),
    "sm3": (lambda lr: optimizers.sm3(lr, momentum=0.5), lambda lr: _ref_sm3(lr, 0.5),
            ("sm3", (0.5,))),
}


def _params():
    rng = np.random.default_rng(0)
    return {"w": rng.normal(size=(3, 2)), "b": rng.normal(size=(2,)),
            "layers": (rng.normal(size=(2, 2, 3)), np.array(0.7))}


def _grads(step: int, like):
    rng = np.random.default_rng(100 + step)
    grads = tree_map(lambda p: rng.normal(size=np.shape(p)), like)
    grads["b"][0] = 0.0 if step == 0 else grads["b"][0]  # a zero: adagrad's and sm3's 0/0
    return grads


STEPS = 5


@pytest.mark.parametrize("schedule", ["constant", "schedule"])
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_follows_its_formula(name, schedule):
    make, reference, _ = OPTIMIZERS[name]
    lr = 0.1 if schedule == "constant" else _schedule
    ref_init, ref_update = reference(lr if callable(lr) else (lambda i: lr))
    opt_init, opt_update, get_params = make(lr)
    params = _params()
    state = opt_init(params)
    leaves, treedef = tree_flatten(params)
    ref_states = [ref_init(np.asarray(x, dtype=float)) for x in leaves]
    for i in range(STEPS):
        grads = _grads(i, params)
        state = opt_update(i, grads, state)
        ref_states = [ref_update(i, g, s) for g, s in zip(tree_leaves(grads), ref_states)]
        got = tree_leaves(get_params(state))
        for x, s, p in zip(got, ref_states, leaves):
            assert np.shape(x) == np.shape(p)
            np.testing.assert_allclose(x, np.reshape(s[0], np.shape(p)), rtol=1e-12,
                                       atol=1e-14, err_msg=f"{name}, step {i}")
    # the whole state, parameter by parameter: the reference's leaves (sm3's shape aside)
    for packed, s in zip(state.packed_state, ref_states):
        arrays = [a for a in packed if not isinstance(a, (int, np.integer))]
        assert len(arrays) == len(s)
        for a, b in zip(arrays, s):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_under_jit_and_grad(name):
    # a step of a quadratic loss compiled whole (grad, the traced step index, the update)
    # gives the eager step's state
    make, _, _ = OPTIMIZERS[name]
    opt_init, opt_update, get_params = make(_schedule)
    target = _grads(7, _params())

    def loss(params):
        return sum(fnp.sum((p - t) ** 2) for p, t in zip(tree_leaves(params),
                                                          tree_leaves(target)))

    def step(i, state):
        return opt_update(i, ft.grad(loss)(get_params(state)), state)

    eager = jitted = opt_init(_params())
    compiled = ft.jit(step)
    losses = []
    for i in range(STEPS):
        eager, jitted = step(i, eager), compiled(i, jitted)
        losses.append(float(loss(get_params(jitted))))
        assert tree_structure(jitted) == tree_structure(eager)
        for a, b in zip(tree_leaves(jitted), tree_leaves(eager)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert losses[-1] < float(loss(_params()))


@pytest.mark.parametrize("fusion", [False, True])
@pytest.mark.parametrize("name", OPTIMIZERS)
@pytest.mark.parametrize("schedule", ["constant", "exponential_decay", "piecewise_constant"])
def test_float32_parameters_stay_float32(name, schedule, fusion, monkeypatch):
    # with fusion, jit compiles the update's elementwise regions into loops of declared
    # dtypes: a float64 value where float32 was traced would not run there
    monkeypatch.setattr(ft.config, "fusion", fusion)
    lr = {"constant": 0.1, "exponential_decay": optimizers.exponential_decay(0.1, 10, 0.5),
          "piecewise_constant": optimizers.piecewise_constant([2], [0.1, 0.01])}[schedule]
    opt_init, opt_update, get_params = OPTIMIZERS[name][0](lr)
    params = tree_map(lambda p: np.asarray(p, np.float32), _params())
    grads = tree_map(lambda p: np.asarray(p, np.float32), _grads(0, params))
    state = opt_init(params)
    for update in (opt_update, ft.jit(opt_update)):  # with jit, the step index is traced
        new = update(3, grads, state)
        assert {np.asarray(x).dtype for x in tree_leaves(get_params(new))} == {
            np.dtype(np.float32)}, update


def test_sm3_keeps_the_parameters_shapes():
    opt_init, opt_update, get_params = optimizers.sm3(0.1)
    state = opt_init(np.array(2.0))
    assert state.packed_state[0][0].shape == (1,)  # kept as shape (1,), as JAX does
    for update in (opt_update, ft.jit(opt_update)):
        assert np.shape(get_params(update(0, np.array(1.0), state))) == ()
    # the shape is part of the state's leaves, traced under jit: get_params works there
    # too (JAX's reshapes to the traced shape and fails)
    state = opt_init({"a": np.ones((2, 3)), "b": np.array(1.0)})

    @ft.jit
    def step(state):
        state = opt_update(0, {"a": np.ones((2, 3)), "b": np.array(1.0)}, state)
        return get_params(state)

    assert tree_map(np.shape, step(state)) == {"a": (2, 3), "b": ()}


def test_adagrad_and_sm3_divide_no_zero_by_zero():
    # a zero gradient on a zero accumulator moves nothing, without a NumPy warning
    for opt in (optimizers.adagrad(0.1), optimizers.sm3(0.1)):
        opt_init, opt_update, get_params = opt
        with np.errstate(all="raise"):
            state = opt_update(0, np.zeros(3), opt_init(np.ones(3)))
        np.testing.assert_array_equal(get_params(state), np.ones(3))


# ------------------------------------------------------------------------------------------
# Schedules, norms and clipping
# ------------------------------------------------------------------------------------------

SCHEDULES = {
    "constant": (optimizers.constant(0.3), lambda i: 0.3),
    "exponential_decay": (optimizers.exponential_decay(0.5, 7, 0.3),
                          lambda i: 0.5 * 0.3 ** (i / 7)),
    "inverse_time_decay": (optimizers.inverse_time_decay(0.5, 4, 2.0),
                           lambda i: 0.5 / (1 + 2.0 * i / 4)),
    "inverse_time_decay_staircase": (optimizers.inverse_time_decay(0.5, 4, 2.0, True),
                                     lambda i: 0.5 / (1 + 2.0 * np.floor(i / 4))),
    "polynomial_decay": (optimizers.polynomial_decay(1.0, 10, 0.1),
                         lambda i: (1 - min(i, 10) / 10) * 0.9 + 0.1),
    "polynomial_decay_power": (optimizers.polynomial_decay(1.0, 10, 0.1, power=2.5),
                               lambda i: (1 - min(i, 10) / 10) ** 2.5 * 0.9 + 0.1),
    "piecewise_constant": (optimizers.piecewise_constant([3, 8], [1.0, 0.5, 0.25]),
                           lambda i: 1.0 if i <= 3 else 0.5 if i <= 8 else 0.25),
}


@pytest.mark.parametrize("name", SCHEDULES)
def test_schedule_follows_its_formula(name):
    schedule, formula = SCHEDULES[name]
    compiled = ft.jit(schedule)
    for i in range(15):
        want = formula(i)
        assert float(schedule(i)) == pytest.approx(want, rel=1e-14)
        assert float(compiled(i)) == pytest.approx(want, rel=1e-14)  # a traced step


def test_make_schedule_and_its_errors():
    assert optimizers.make_schedule(0.2)(5) == 0.2
    assert optimizers.make_schedule(_schedule) is _schedule
    assert optimizers.make_schedule(np.float32(0.5))(0) == np.float32(0.5)
    with pytest.raises(TypeError):
        optimizers.make_schedule([0.1, 0.2])
    with pytest.raises(TypeError):
        optimizers.sgd(np.ones(2))
    with pytest.raises(ValueError, match="sequences"):
        optimizers.piecewise_constant(3, [1.0, 2.0])
    with pytest.raises(ValueError, match="one shorter"):
        optimizers.piecewise_constant([1, 2], [1.0, 2.0])


def test_l2_norm_and_clip_grads():
    tree = _params()
    norm = np.sqrt(sum(np.sum(np.square(x)) for x in tree_leaves(tree)))
    assert float(optimizers.l2_norm(tree)) == pytest.approx(norm, rel=1e-14)
    clipped = optimizers.clip_grads(tree, 1.0)
    assert float(optimizers.l2_norm(clipped)) == pytest.approx(1.0, rel=1e-14)
    for a, b in zip(tree_leaves(clipped), tree_leaves(tree)):
        np.testing.assert_allclose(a, b / norm, rtol=1e-14)
    kept = optimizers.clip_grads(tree, 2 * norm)
    for a, b in zip(tree_leaves(kept), tree_leaves(tree)):
        np.testing.assert_array_equal(a, b)
    # differentiable, as weight decay uses it: d|x| / dx = x / |x|
    np.testing.assert_allclose(ft.grad(optimizers.l2_norm)(tree)["w"], tree["w"] / norm,
                               rtol=1e-14)


# ------------------------------------------------------------------------------------------
# The state: a pytree, through jit, unpacked and packed
# ------------------------------------------------------------------------------------------

def test_optimizer_state_is_a_pytree():
    opt_init, opt_update, get_params = optimizers.adam(0.1)
    params = _params()
    state = opt_init(params)
    assert isinstance(state, optimizers.OptimizerState)
    assert isinstance(optimizers.adam(0.1), optimizers.Optimizer)
    assert optimizers.Optimizer._fields == ("init_fn", "update_fn", "params_fn")
    leaves, treedef = tree_flatten(state)
    # each parameter's (x, m, v), parameter after parameter
    assert len(leaves) == 3 * len(tree_leaves(params))
    for x, leaf in zip(tree_leaves(params), leaves[::3]):
        np.testing.assert_array_equal(leaf, x)
    rebuilt = treedef.unflatten(leaves)
    assert isinstance(rebuilt, optimizers.OptimizerState)
    assert rebuilt.tree_def == state.tree_def and rebuilt.subtree_defs == state.subtree_defs
    # tree_map reaches the arrays, not the static structure
    doubled = tree_map(lambda x: 2 * x, state)
    np.testing.assert_array_equal(get_params(doubled)["w"], 2 * params["w"])


def test_state_round_trips_through_jit_and_vmap():
    opt_init, opt_update, get_params = optimizers.momentum(0.1, 0.9)
    state = opt_update(0, _grads(0, _params()), opt_init(_params()))
    same = ft.jit(lambda s: s)(state)
    assert isinstance(same, optimizers.OptimizerState)
    assert tree_structure(same) == tree_structure(state)
    for a, b in zip(tree_leaves(same), tree_leaves(state)):
        np.testing.assert_array_equal(a, b)
    # a batch of states: vmap over the leaves of stacked states
    stacked = tree_map(lambda *xs: np.stack(xs), state, tree_map(lambda x: -x, state))
    params = ft.vmap(get_params)(stacked)
    np.testing.assert_array_equal(params["w"][1], -get_params(state)["w"])


def test_unpack_and_pack_optimizer_state():
    opt_init, opt_update, get_params = optimizers.adam(0.1)
    params = _params()
    state = opt_update(0, _grads(0, params), opt_init(params))
    marked = optimizers.unpack_optimizer_state(state)
    # the parameters' structure, a JoinPoint holding each parameter's (x, m, v)
    assert set(marked) == {"w", "b", "layers"} and isinstance(marked["layers"], tuple)
    point = marked["w"]
    assert isinstance(point, optimizers.JoinPoint) and len(point.subtree) == 3
    assert list(point) == [point.subtree]  # iterates over its subtree, as JAX's
    np.testing.assert_array_equal(point.subtree[0], get_params(state)["w"])
    # serialized and back, then packed: the same state, usable as before
    restored = optimizers.pack_optimizer_state(pickle.loads(pickle.dumps(marked)))
    assert tree_structure(restored) == tree_structure(state)
    for a, b in zip(tree_leaves(restored), tree_leaves(state)):
        np.testing.assert_array_equal(a, b)
    grads = _grads(1, params)
    for a, b in zip(tree_leaves(opt_update(1, grads, restored)),
                    tree_leaves(opt_update(1, grads, state))):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(TypeError, match="JoinPoint"):
        optimizers.pack_optimizer_state({"w": np.ones(2)})


def test_update_checks_the_structures():
    opt_init, opt_update, _ = optimizers.sgd(0.1)
    state = opt_init({"a": np.ones(2), "b": np.ones(2)})
    with pytest.raises(TypeError, match="gradient tree that did not match"):
        opt_update(0, {"a": np.ones(2)}, state)

    @optimizers.optimizer
    def shape_shifter():
        return (lambda x: (x,)), (lambda i, g, s: (s[0], g)), (lambda s: s[0])

    opt_init, opt_update, _ = shape_shifter()
    with pytest.raises(TypeError, match="did not match its input structure"):
        opt_update(0, np.ones(2), opt_init(np.ones(2)))


def test_optimizer_decorator_keeps_the_maker_s_name_and_signature():
    import inspect
    assert optimizers.adam.__name__ == "adam"
    assert list(inspect.signature(optimizers.adam).parameters) == ["step_size", "b1", "b2",
                                                                    "eps"]
    opt_init, opt_update, get_params = optimizers.adam(0.1)
    assert (opt_init.__name__, opt_update.__name__, get_params.__name__) == (
        "init", "update", "get_params")


# ------------------------------------------------------------------------------------------
# Layers against NumPy
# ------------------------------------------------------------------------------------------

KEY = random.PRNGKey(0)


def _x(*shape, seed=1):
    return np.random.default_rng(seed).normal(size=shape)


def _conv_reference(x, w, strides, padding):
    """NHWC images, HWIO kernels: a direct convolution (cross-correlation), padding by
    ``padding`` pairs."""
    x = np.pad(x, [(0, 0)] + list(padding) + [(0, 0)])
    kh, kw, _, out = w.shape
    oh = (x.shape[1] - kh) // strides[0] + 1
    ow = (x.shape[2] - kw) // strides[1] + 1
    y = np.zeros((x.shape[0], oh, ow, out))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * strides[0]:i * strides[0] + kh, j * strides[1]:j * strides[1] + kw]
            y[:, i, j] = np.einsum("nhwc,hwco->no", patch, w)
    return y


def _same_pads(n, k, s):
    out = -(-n // s)
    total = max((out - 1) * s + k - n, 0)
    return total // 2, total - total // 2


def test_dense():
    init_fun, apply_fun = stax.Dense(4)
    out_shape, (W, b) = init_fun(KEY, (5, 3))
    assert out_shape == (5, 4) and W.shape == (3, 4) and b.shape == (4,)
    # the key is split in two, the first for W (glorot normal), the second for b (normal)
    k_w, k_b = random.split(KEY)
    np.testing.assert_array_equal(W, initializers.glorot_normal()(k_w, (3, 4)))
    np.testing.assert_array_equal(b, initializers.normal()(k_b, (4,)))
    x = _x(5, 3)
    np.testing.assert_allclose(apply_fun((W, b), x), x @ W + b, rtol=1e-14)
    # batch axes of any number, and an unknown batch size
    assert init_fun(KEY, (-1, 2, 3))[0] == (-1, 2, 4)
    assert apply_fun((W, b), _x(2, 6, 3)).shape == (2, 6, 4)


@pytest.mark.parametrize("strides,padding", [((1, 1), "VALID"), ((2, 1), "SAME"),
                                             ((2, 3), "VALID"), ((1, 1), ((1, 2), (0, 1)))])
def test_conv(strides, padding):
    init_fun, apply_fun = stax.Conv(5, (3, 2), strides, padding)
    out_shape, (W, b) = init_fun(KEY, (2, 7, 6, 3))
    assert W.shape == (3, 2, 3, 5) and b.shape == (1, 1, 1, 5)
    x = _x(2, 7, 6, 3)
    y = apply_fun((W, b), x)
    assert tuple(out_shape) == y.shape
    pads = (padding if not isinstance(padding, str) else
            [(0, 0), (0, 0)] if padding == "VALID" else
            [_same_pads(7, 3, strides[0]), _same_pads(6, 2, strides[1])])
    np.testing.assert_allclose(y, _conv_reference(x, W, strides, pads) + b, rtol=1e-12,
                               atol=1e-12)


def test_general_conv_in_nchw():
    layer = stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 4, (3, 3), padding="SAME")
    out_shape, (W, b) = layer[0](KEY, (2, 3, 5, 5))
    assert out_shape == (2, 4, 5, 5) and W.shape == (4, 3, 3, 3) and b.shape == (1, 4, 1, 1)
    x = _x(2, 3, 5, 5)
    want = _conv_reference(x.transpose(0, 2, 3, 1), W.transpose(2, 3, 1, 0), (1, 1),
                           [(1, 1), (1, 1)]).transpose(0, 3, 1, 2) + b
    np.testing.assert_allclose(layer[1]((W, b), x), want, rtol=1e-12, atol=1e-12)
    # the kernel's glorot scale is over its I and O axes, wherever the layout puts them
    fan_in, fan_out = 3 * 9, 4 * 9
    k_w, _ = random.split(KEY)
    np.testing.assert_array_equal(W, initializers.glorot_normal(1, 0)(k_w, W.shape))
    assert np.std(W) < 2 * math.sqrt(2 / (fan_in + fan_out))


def _conv_transpose_reference(x, w, strides, padding):
    """``lax.conv_transpose`` (kernel not flipped) of NHWC images and HWIO kernels: the
    input dilated by the strides, padded as JAX's ``_conv_transpose_padding`` says, then
    convolved with stride 1."""
    pads = []
    for k, s in zip(w.shape[:2], strides):
        if padding == "SAME":
            total = k + s - 2
            low = k - 1 if s > k - 1 else math.ceil(total / 2)
        else:
            total = k + s - 2 + max(k - s, 0)
            low = k - 1
        pads.append((low, total - low))
    n, h, wd, c = x.shape
    dilated = np.zeros((n, (h - 1) * strides[0] + 1, (wd - 1) * strides[1] + 1, c))
    dilated[:, ::strides[0], ::strides[1]] = x
    return _conv_reference(dilated, w, (1, 1), pads)


@pytest.mark.parametrize("strides,padding", [((1, 1), "VALID"), ((2, 2), "SAME"),
                                             ((2, 3), "VALID"), ((3, 1), "SAME")])
def test_conv_transpose(strides, padding):
    init_fun, apply_fun = stax.ConvTranspose(4, (3, 2), strides, padding)
    out_shape, (W, b) = init_fun(KEY, (2, 4, 5, 3))
    assert W.shape == (3, 2, 3, 4) and b.shape == (1, 1, 1, 4)
    x = _x(2, 4, 5, 3)
    y = apply_fun((W, b), x)
    assert tuple(out_shape) == y.shape
    if padding == "SAME":
        assert y.shape[1:3] == (4 * strides[0], 5 * strides[1])
    np.testing.assert_allclose(y, _conv_transpose_reference(x, W, strides, padding) + b,
                               rtol=1e-12, atol=1e-12)


def test_conv1d_transpose_and_general_conv_transpose():
    init_fun, apply_fun = stax.Conv1DTranspose(3, (4,), (2,), "SAME")
    out_shape, (W, b) = init_fun(KEY, (2, 5, 2))
    assert out_shape == (2, 10, 3) and W.shape == (4, 2, 3) and b.shape == (1, 1, 3)
    x = _x(2, 5, 2)
    want = _conv_transpose_reference(x[:, :, None], W[:, None], (2, 1), "SAME")[:, :, 0]
    np.testing.assert_allclose(apply_fun((W, b), x), want + b, rtol=1e-12, atol=1e-12)
    layer = stax.GeneralConvTranspose(("NCHW", "OIHW", "NCHW"), 2, (2, 2), (2, 2))
    out_shape, (W, b) = layer[0](KEY, (1, 3, 3, 3))
    assert out_shape == (1, 2, 6, 6) and W.shape == (2, 3, 2, 2) and b.shape == (1, 2, 1, 1)
    x = _x(1, 3, 3, 3)
    want = _conv_transpose_reference(x.transpose(0, 2, 3, 1), W.transpose(2, 3, 1, 0),
                                     (2, 2), "VALID").transpose(0, 3, 1, 2)
    np.testing.assert_allclose(layer[1]((W, b), x), want + b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("axis,center,scale", [((0, 1, 2), True, True), (0, True, False),
                                               ((0, 2), False, True), (0, False, False)])
def test_batch_norm(axis, center, scale):
    shape = (6, 3, 4, 2) if axis == (0, 1, 2) else (6, 3, 4) if axis == (0, 2) else (6, 5)
    init_fun, apply_fun = stax.BatchNorm(axis, epsilon=1e-3, center=center, scale=scale,
                                         beta_init=initializers.normal(1.0),
                                         gamma_init=initializers.normal(1.0))
    out_shape, (beta, gamma) = init_fun(KEY, shape)
    axes = (axis,) if isinstance(axis, int) else axis
    kept = tuple(n for i, n in enumerate(shape) if i not in axes)
    assert out_shape == shape
    assert (np.shape(beta) == kept) if center else beta == ()
    assert (np.shape(gamma) == kept) if scale else gamma == ()
    x = 3.0 + _x(*shape)
    z = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + 1e-3)
    expand = tuple(None if i in axes else slice(None) for i in range(len(shape)))
    want = (np.asarray(gamma)[expand] * z if scale else z) + (
        np.asarray(beta)[expand] if center else 0)
    np.testing.assert_allclose(apply_fun((beta, gamma), x), want, rtol=1e-10, atol=1e-12)


def test_batch_norm_defaults():
    out_shape, (beta, gamma) = stax.BatchNorm()[0](KEY, (2, 3, 3, 4))
    np.testing.assert_array_equal(beta, np.zeros(4))
    np.testing.assert_array_equal(gamma, np.ones(4))


def test_dropout():
    init_fun, apply_fun = stax.Dropout(0.75)
    assert init_fun(KEY, (4, 5)) == ((4, 5), ())
    x = _x(40, 5)
    key = random.PRNGKey(3)
    y = apply_fun((), x, rng=key)
    keep = np.asarray(random.bernoulli(key, 0.75, (40, 5)))  # rate is the keep probability
    np.testing.assert_allclose(y, np.where(keep, x / 0.75, 0.0), rtol=1e-15)
    assert 0.6 < keep.mean() < 0.9
    np.testing.assert_array_equal(stax.Dropout(0.75, mode="test")[1]((), x, rng=key), x)
    with pytest.raises(ValueError, match="PRNG key"):
        apply_fun((), x)
    with pytest.raises(ValueError, match="PRNG key"):
        stax.Dropout(0.5, mode="test")[1]((), x)  # as JAX's: the key is required in any mode


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def _log_softmax(x):
    shifted = x - x.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


ELEMENTWISE = {
    "Tanh": np.tanh, "Relu": lambda x: np.maximum(x, 0), "Exp": np.exp,
    "LogSoftmax": _log_softmax, "Softmax": lambda x: np.exp(_log_softmax(x)),
    "Softplus": lambda x: np.logaddexp(0, x), "Sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "Elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "LeakyRelu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "Selu": lambda x: 1.0507009873554804934193349852946 * np.where(
        x > 0, x, 1.6732632423543772848170429916717 * np.expm1(x)),
    "Gelu": _gelu_tanh,
}


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise_layers(name):
    init_fun, apply_fun = getattr(stax, name)
    assert init_fun(KEY, (3, 4)) == ((3, 4), ())
    x = 2 * _x(3, 4)
    np.testing.assert_allclose(apply_fun((), x, rng=KEY), ELEMENTWISE[name](x), rtol=1e-12,
                               atol=1e-15)


def test_elementwise_with_keyword_arguments():
    init_fun, apply_fun = stax.elementwise(ft.nn.softmax, axis=0)
    x = _x(3, 4)
    np.testing.assert_allclose(apply_fun((), x), np.exp(x) / np.exp(x).sum(0), rtol=1e-12)


def _pool_reference(x, window, strides, padding, reduce, fill):
    """Pooling of NHWC images by loops: ``reduce`` over each window, padding filled with
    ``fill``; also the number of real (unpadded) entries of each window."""
    if padding == "VALID":
        pads = [(0, 0), (0, 0)]
    else:
        pads = [_same_pads(n, k, s) for n, k, s in zip(x.shape[1:3], window, strides)]
    padded = np.pad(x, [(0, 0)] + pads + [(0, 0)], constant_values=fill)
    real = np.pad(np.ones(x.shape[1:3]), pads)
    oh = (padded.shape[1] - window[0]) // strides[0] + 1
    ow = (padded.shape[2] - window[1]) // strides[1] + 1
    out = np.zeros((x.shape[0], oh, ow, x.shape[3]))
    count = np.zeros((oh, ow))
    for i in range(oh):
        for j in range(ow):
            rows = slice(i * strides[0], i * strides[0] + window[0])
            cols = slice(j * strides[1], j * strides[1] + window[1])
            out[:, i, j] = reduce(padded[:, rows, cols], axis=(1, 2))
            count[i, j] = real[rows, cols].sum()
    return out, count[None, :, :, None]


POOLS = [((2, 2), None, "VALID"), ((2, 2), (2, 2), "VALID"), ((3, 2), (2, 1), "SAME"),
         ((3, 3), (2, 2), "SAME")]


@pytest.mark.parametrize("window,strides,padding", POOLS)
@pytest.mark.parametrize("name", ["MaxPool", "SumPool", "AvgPool"])
def test_pooling(name, window, strides, padding):
    init_fun, apply_fun = getattr(stax, name)(window, strides, padding)
    x = _x(2, 5, 6, 3)
    out_shape, params = init_fun(KEY, x.shape)
    y = apply_fun(params, x)
    assert params == () and tuple(out_shape) == y.shape
    reduce, fill = (np.max, -np.inf) if name == "MaxPool" else (np.sum, 0.0)
    want, count = _pool_reference(x, window, strides or (1, 1), padding, reduce, fill)
    if name == "AvgPool":
        want = want / count  # padding not counted
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["MaxPool", "AvgPool"])
def test_pooling_spec_and_explicit_padding(name):
    layer = getattr(stax, name)
    x = _x(2, 5, 6, 3)
    nhwc = layer((3, 2), (2, 1), "SAME")[1]((), x)
    nchw = layer((3, 2), (2, 1), "SAME", spec="NCHW")[1]((), x.transpose(0, 3, 1, 2))
    np.testing.assert_allclose(nchw, nhwc.transpose(0, 3, 1, 2), rtol=1e-14)
    # explicit pairs of the spatial axes, or of every axis (JAX's form), as "SAME" pads
    spatial = (_same_pads(5, 3, 2), _same_pads(6, 2, 1))
    for pads in (spatial, ((0, 0),) + spatial + ((0, 0),)):
        init_fun, apply_fun = layer((3, 2), (2, 1), pads)
        assert tuple(init_fun(KEY, x.shape)[0]) == nhwc.shape
        np.testing.assert_allclose(apply_fun((), x), nhwc, rtol=1e-14)


def test_flatten_identity_and_fan_layers():
    x = _x(2, 3, 4)
    assert stax.Flatten[0](KEY, (2, 3, 4)) == ((2, 12), ())
    np.testing.assert_array_equal(stax.Flatten[1]((), x), x.reshape(2, 12))
    assert stax.Identity[0](KEY, (2, 3)) == ((2, 3), ())
    assert stax.Identity[1]((), x) is x
    assert stax.FanOut(3)[0](KEY, (2, 3)) == ([(2, 3)] * 3, ())
    assert [y is x for y in stax.FanOut(3)[1]((), x)] == [True] * 3
    assert stax.FanInSum[0](KEY, [(2, 3), (2, 3)]) == ((2, 3), ())
    np.testing.assert_array_equal(stax.FanInSum[1]((), [x, 2 * x, x]), 4 * x)
    assert stax.FanInConcat(1)[0](KEY, [(2, 3, 4), (2, 1, 4)]) == ((2, 4, 4), ())
    np.testing.assert_array_equal(stax.FanInConcat(-2)[1]((), [x, x[:, :1]]),
                                  np.concatenate([x, x[:, :1]], 1))


def test_serial():
    init_fun, apply_fun = stax.serial(stax.Dense(4), stax.Tanh, stax.Dense(2))
    out_shape, params = init_fun(KEY, (3, 5))
    assert out_shape == (3, 2) and len(params) == 3 and params[1] == ()
    # the key handed down: rng, layer_rng = split(rng) before each layer
    rng, k0 = random.split(KEY)
    _, k2 = random.split(random.split(rng)[0])
    for got, want in zip(params[0], stax.Dense(4)[0](k0, (3, 5))[1]):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(params[2], stax.Dense(2)[0](k2, (3, 4))[1]):
        np.testing.assert_array_equal(got, want)
    x = _x(3, 5)
    (W1, b1), _, (W2, b2) = params
    np.testing.assert_allclose(apply_fun(params, x), np.tanh(x @ W1 + b1) @ W2 + b2,
                               rtol=1e-12)


def test_serial_hands_each_layer_its_own_key():
    layer = stax.serial(stax.Dropout(0.5), stax.Dropout(0.5))
    x = np.ones((4, 100))
    key = random.PRNGKey(5)
    k1, k2 = random.split(key, 2)
    want = stax.Dropout(0.5)[1]((), stax.Dropout(0.5)[1]((), x, rng=k1), rng=k2)
    np.testing.assert_array_equal(layer[1]([(), ()], x, rng=key), want)
    # without a key, a layer that needs none runs; Dropout refuses
    np.testing.assert_array_equal(stax.serial(stax.Relu)[1]([()], -x), 0 * x)
    with pytest.raises(ValueError, match="PRNG key"):
        layer[1]([(), ()], x)


def test_parallel():
    init_fun, apply_fun = stax.parallel(stax.Dense(3), stax.Identity, stax.Dropout(0.5))
    out_shapes, params = init_fun(KEY, [(2, 4), (2, 5), (2, 6)])
    assert out_shapes == ((2, 3), (2, 5), (2, 6))
    k0, _, _ = random.split(KEY, 3)
    for got, want in zip(params[0], stax.Dense(3)[0](k0, (2, 4))[1]):
        np.testing.assert_array_equal(got, want)
    xs = [_x(2, 4), _x(2, 5), np.ones((2, 6))]
    key = random.PRNGKey(9)
    ys = apply_fun(params, xs, rng=key)
    W, b = params[0]
    np.testing.assert_allclose(ys[0], xs[0] @ W + b, rtol=1e-14)
    assert ys[1] is xs[1]
    np.testing.assert_array_equal(
        ys[2], stax.Dropout(0.5)[1]((), xs[2], rng=random.split(key, 3)[2]))


def test_residual_block_of_fan_out_parallel_and_fan_in_sum():
    block = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(4), stax.Identity),
                        stax.FanInSum)
    out_shape, params = block[0](KEY, (3, 4))
    x = _x(3, 4)
    W, b = params[1][0]
    assert out_shape == (3, 4)
    np.testing.assert_allclose(block[1](params, x), x @ W + b + x, rtol=1e-14)


def test_shape_dependent():
    made = []

    def make_layer(shape):
        made.append(tuple(shape))
        return stax.Dense(2 * shape[-1])

    init_fun, apply_fun = stax.shape_dependent(make_layer)
    out_shape, params = init_fun(KEY, (3, 4))
    assert out_shape == (3, 8)
    assert apply_fun(params, _x(3, 4)).shape == (3, 8)
    assert made == [(3, 4), (3, 4)]


# ------------------------------------------------------------------------------------------
# A small CNN trained with Adam under jit
# ------------------------------------------------------------------------------------------

def _bars(n: int, seed: int = 0, dtype=np.float64):
    """Images of 8 x 8 pixels (NHWC), a horizontal (label 0) or vertical (label 1) bar in
    noise, and their one-hot labels."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    images = 0.3 * rng.normal(size=(n, 8, 8, 1))
    where = rng.integers(1, 7, n)
    for i in range(n):
        if labels[i]:
            images[i, :, where[i], 0] += 1.0
        else:
            images[i, where[i], :, 0] += 1.0
    return images.astype(dtype), np.eye(2, dtype=dtype)[labels]


def _cnn(lib, dtype=None):
    """Conv -> Relu -> MaxPool -> Flatten -> Dense -> LogSoftmax from ``lib`` (functrans's
    stax or JAX's), with initializers of ``dtype`` where given."""
    inits = {} if dtype is None else {"W_init": lib.glorot_normal(dtype=dtype),
                                      "b_init": lib.normal(1e-6, dtype=dtype)}
    dense = {} if dtype is None else {"W_init": lib.glorot_normal(dtype=dtype),
                                      "b_init": lib.normal(dtype=dtype)}
    return lib.serial(lib.Conv(4, (3, 3), padding="SAME", **inits), lib.Relu,
                      lib.MaxPool((2, 2), strides=(2, 2)), lib.Flatten,
                      lib.Dense(2, **dense), lib.LogSoftmax)


def _train(np_lib, grad, jit, random_lib, stax_lib, optimizers_lib, steps=8, dtype=None,
           step_size=0.05):
    """The losses and final parameters of ``steps`` Adam steps on the bars, written once
    for functrans and for JAX (``np_lib`` its NumPy, ``grad`` its value_and_grad, ...)."""
    init_fun, predict = _cnn(stax_lib, dtype)
    _, params = init_fun(random_lib.PRNGKey(0), (-1, 8, 8, 1))
    images, labels = _bars(32, dtype=dtype or np.float64)

    def loss(params, x, y):
        return -np_lib.mean(np_lib.sum(predict(params, x) * y, axis=1))

    opt_init, opt_update, get_params = optimizers_lib.adam(step_size)
    value_and_grad = jit(grad(loss))

    @jit
    def update(i, state, x, y):
        value, grads = value_and_grad(get_params(state), x, y)
        return value, opt_update(i, grads, state)

    state = opt_init(params)
    losses = []
    for i in range(steps):
        value, state = update(i, state, images, labels)
        losses.append(value)
    return np.asarray(losses), get_params(state)


def test_cnn_trained_with_adam_under_jit():
    losses, params = _train(fnp, ft.value_and_grad, ft.jit, random, stax, optimizers)
    assert losses[-1] < 0.7 * losses[0]
    assert np.all(np.diff(losses[:4]) < 0)
    # the same training eagerly: the same trajectory
    eager, eager_params = _train(fnp, ft.value_and_grad, lambda f: f, random, stax,
                                 optimizers)
    np.testing.assert_allclose(losses, eager, rtol=1e-10)
    for a, b in zip(tree_leaves(params), tree_leaves(eager_params)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    # the classifier learned: a fresh batch is classified better than chance
    init_fun, predict = _cnn(stax)
    images, labels = _bars(64, seed=1)
    longer, trained = _train(fnp, ft.value_and_grad, ft.jit, random, stax, optimizers,
                             steps=30)
    accuracy = np.mean(np.argmax(predict(trained, images), 1) == np.argmax(labels, 1))
    assert accuracy > 0.8, (accuracy, longer)


def test_cnn_float32_stays_float32():
    losses, params = _train(fnp, ft.value_and_grad, ft.jit, random, stax, optimizers,
                            steps=4, dtype=np.float32)
    assert losses.dtype == np.float32 and losses[-1] < losses[0]
    assert {np.asarray(p).dtype for p in tree_leaves(params)} == {np.dtype(np.float32)}


def test_cnn_step_on_device_arrays(device):
    """A training step (value_and_grad and Adam's update, under jit) on device arrays
    stays on the device, with the host's values."""
    init_fun, predict = _cnn(stax)
    _, params = init_fun(random.PRNGKey(0), (-1, 8, 8, 1))
    images, labels = _bars(8)
    opt_init, opt_update, get_params = optimizers.adam(optimizers.exponential_decay(
        0.05, 10, 0.5))

    def loss(params, x, y):
        return -fnp.mean(fnp.sum(predict(params, x) * y, axis=1))

    @ft.jit
    def update(i, state, x, y):
        value, grads = ft.value_and_grad(loss)(get_params(state), x, y)
        return value, opt_update(i, grads, state)

    host_state = opt_init(params)
    device_state = opt_init(device.put(params))
    x, y = device.put((images, labels))
    update(0, device_state, x, y)  # compiled once, then run without transfers
    for i in range(3):
        with device.transfers() as counts:
            value, device_state = update(i, device_state, x, y)
        assert_no_transfers(device, counts)
        host_value, host_state = update(i, host_state, images, labels)
        assert_on_device_and_equal(device, value, host_value, tol=1e-10)
        assert_on_device_and_equal(device, device_state, host_state, tol=1e-10)


# ------------------------------------------------------------------------------------------
# Against JAX's example_libraries (where JAX is installed)
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)  # functrans is float64-first
    return jax


def _jax_modules(jax):
    from jax.example_libraries import optimizers as jax_optimizers
    from jax.example_libraries import stax as jax_stax
    return jax_optimizers, jax_stax


@pytest.mark.parametrize("schedule", ["constant", "exponential_decay"])
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_matches_jax(jax, name, schedule):
    jax_optimizers, _ = _jax_modules(jax)
    make, _, (jax_name, jax_args) = OPTIMIZERS[name]
    lr = (0.1 if schedule == "constant" else
          optimizers.exponential_decay(0.1, 3, 0.5))
    jax_lr = (0.1 if schedule == "constant" else
              jax_optimizers.exponential_decay(0.1, 3, 0.5))
    ours, theirs = make(lr), getattr(jax_optimizers, jax_name)(jax_lr, *jax_args)
    params = _params()
    state, jax_state = ours.init_fn(params), theirs.init_fn(
        jax.tree.map(jax.numpy.asarray, params))
    jax_update = jax.jit(theirs.update_fn)
    for i in range(STEPS):
        grads = _grads(i, params)
        state = ours.update_fn(i, grads, state)
        jax_state = jax_update(i, jax.tree.map(jax.numpy.asarray, grads), jax_state)
    ours_leaves, theirs_leaves = tree_leaves(state), jax.tree.leaves(jax_state)
    assert len(ours_leaves) == len(theirs_leaves)
    for a, b in zip(ours_leaves, theirs_leaves):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-11, atol=1e-13)
    unpacked = jax_optimizers.unpack_optimizer_state(jax_state)
    assert set(unpacked) == set(optimizers.unpack_optimizer_state(state))


@pytest.mark.parametrize("name", SCHEDULES)
def test_schedule_matches_jax(jax, name):
    jax_optimizers, _ = _jax_modules(jax)
    args = {"constant": (0.3,), "exponential_decay": (0.5, 7, 0.3),
            "inverse_time_decay": (0.5, 4, 2.0), "inverse_time_decay_staircase": (
                0.5, 4, 2.0, True), "polynomial_decay": (1.0, 10, 0.1),
            "polynomial_decay_power": (1.0, 10, 0.1, 2.5),
            "piecewise_constant": ([3, 8], [1.0, 0.5, 0.25])}[name]
    theirs = getattr(jax_optimizers, name.replace("_staircase", "").replace("_power", ""))(
        *args)
    ours = SCHEDULES[name][0]
    for i in range(15):
        assert float(ours(i)) == pytest.approx(float(theirs(i)), rel=1e-14)


#: layers built from functrans's stax or JAX's (``lib``), with an input shape
LAYERS = {
    "Dense": (lambda lib: lib.Dense(5), (3, 4)),
    "Conv_same": (lambda lib: lib.Conv(4, (3, 3), (2, 1), "SAME"), (2, 7, 6, 3)),
    "GeneralConv": (lambda lib: lib.GeneralConv(("NCHW", "OIHW", "NCHW"), 4, (3, 2)),
                    (2, 3, 7, 6)),
    "ConvTranspose": (lambda lib: lib.ConvTranspose(4, (3, 3), (2, 2), "SAME"),
                      (2, 5, 4, 3)),
    "ConvTranspose_valid": (lambda lib: lib.ConvTranspose(4, (3, 2), (2, 3)), (2, 5, 4, 3)),
    "Conv1DTranspose": (lambda lib: lib.Conv1DTranspose(4, (3,), (2,), "SAME"), (2, 5, 3)),
    "GeneralConvTranspose": (lambda lib: lib.GeneralConvTranspose(
        ("NCHW", "OIHW", "NCHW"), 2, (2, 3), (1, 2)), (1, 3, 4, 4)),
    "BatchNorm": (lambda lib: lib.BatchNorm(), (4, 3, 3, 2)),
    "BatchNorm_options": (lambda lib: lib.BatchNorm(axis=(0, 2), scale=False,
                                                    beta_init=lib.normal(1.0)), (4, 3, 5)),
    "Dropout": (lambda lib: lib.Dropout(0.7), (4, 5)),
    **{name: ((lambda name: lambda lib: getattr(lib, name))(name), (3, 4))
       for name in ELEMENTWISE},
    **{f"{pool}_{padding}": ((lambda pool, padding: lambda lib: getattr(lib, pool)(
        (3, 2), (2, 2), padding))(pool, padding), (2, 5, 6, 3))
       for pool in ("MaxPool", "SumPool", "AvgPool") for padding in ("VALID", "SAME")},
    "AvgPool_spec": (lambda lib: lib.AvgPool((3, 2), (2, 2), "SAME", spec="NCHW"),
                     (2, 3, 5, 6)),
    "Flatten": (lambda lib: lib.Flatten, (2, 3, 4)),
    "serial": (lambda lib: lib.serial(lib.Dense(4), lib.Relu, lib.Dropout(0.5),
                                      lib.Dense(2)), (3, 5)),
    "parallel_concat": (lambda lib: lib.serial(lib.FanOut(3), lib.parallel(
        lib.Dense(4), lib.Identity, lib.Dropout(0.5)), lib.FanInConcat()), (3, 5)),
    "parallel_sum": (lambda lib: lib.serial(lib.FanOut(2), lib.parallel(
        lib.Dense(5), lib.Dense(5)), lib.FanInSum), (3, 5)),
    "shape_dependent": (lambda lib: lib.shape_dependent(lambda s: lib.Dense(2 * s[-1])),
                        (3, 4)),
}


@pytest.mark.parametrize("name", LAYERS)
def test_layer_matches_jax(jax, name):
    _, jax_stax = _jax_modules(jax)
    make, shape = LAYERS[name]
    (init_fun, apply_fun), (jax_init, jax_apply) = make(stax), make(jax_stax)
    out_shape, params = init_fun(random.PRNGKey(3), shape)
    jax_out_shape, jax_params = jax_init(jax.random.PRNGKey(3), shape)
    assert tuple(out_shape) == tuple(int(n) for n in jax_out_shape)
    ours, theirs = tree_leaves(params), jax.tree.leaves(jax_params)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):  # the same draws from the same keys
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-15)
    x = _x(*shape)
    y = apply_fun(params, x, rng=random.PRNGKey(7))
    jax_y = jax_apply(jax_params, jax.numpy.asarray(x), rng=jax.random.PRNGKey(7))
    np.testing.assert_allclose(np.asarray(y), np.asarray(jax_y), rtol=1e-10, atol=1e-12)


def test_cnn_training_matches_jax(jax):
    jax_optimizers, jax_stax = _jax_modules(jax)
    losses, params = _train(fnp, ft.value_and_grad, ft.jit, random, stax, optimizers)
    jax_losses, jax_params = _train(jax.numpy, jax.value_and_grad, jax.jit, jax.random,
                                    jax_stax, jax_optimizers)
    np.testing.assert_allclose(losses, jax_losses, rtol=1e-10)
    for a, b in zip(tree_leaves(params), jax.tree.leaves(jax_params)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-8, atol=1e-11)


def test_cnn_training_matches_jax_in_float32(jax):
    jax_optimizers, jax_stax = _jax_modules(jax)
    losses, params = _train(fnp, ft.value_and_grad, ft.jit, random, stax, optimizers,
                            dtype=np.float32)
    jax_losses, jax_params = _train(jax.numpy, jax.value_and_grad, jax.jit, jax.random,
                                    jax_stax, jax_optimizers, dtype=np.float32)
    assert jax_losses.dtype == losses.dtype == np.float32
    np.testing.assert_allclose(losses, jax_losses, rtol=1e-5)
    for a, b in zip(tree_leaves(params), jax.tree.leaves(jax_params)):
        assert np.asarray(a).dtype == np.asarray(b).dtype == np.float32
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------------------------------------
# On device arrays (the CuPy stand-in here; tests/test_cupy.py runs these on CuPy)
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_on_device_arrays(device, name):
    # eager steps on device arrays, with a schedule of host values: no transfers, and the
    # host's results, on the device
    schedule = optimizers.piecewise_constant([1], [0.1, 0.05])
    opt_init, opt_update, get_params = OPTIMIZERS[name][0](schedule)
    params = _params()
    host, on_device = opt_init(params), opt_init(device.put(params))
    for i in range(3):
        grads = _grads(i, params)
        device_grads = device.put(grads)
        with device.transfers() as counts:
            on_device = opt_update(i, device_grads, on_device)
            new_params = get_params(on_device)
        assert_no_transfers(device, counts)
        host = opt_update(i, grads, host)
        assert_on_device_and_equal(device, new_params, get_params(host), tol=1e-12,
                                   what=f"{name}, step {i}")


@pytest.mark.parametrize("name", LAYERS)
def test_layer_on_device_arrays(device, name):
    make, shape = LAYERS[name]
    init_fun, apply_fun = make(stax)
    _, params = init_fun(random.PRNGKey(3), shape)
    x, key = _x(*shape), random.PRNGKey(7)
    device_params, device_x, device_key = device.put((params, x, np.asarray(key)))
    with device.transfers() as counts:
        y = apply_fun(device_params, device_x, rng=device_key)
    assert_no_transfers(device, counts)
    assert_on_device_and_equal(device, y, apply_fun(params, x, rng=key), tol=1e-12, what=name)


#: the tests that take ``device``: tests/test_cupy.py runs them on real CuPy too
DEVICE_TESTS = ["test_cnn_step_on_device_arrays", "test_optimizer_on_device_arrays",
                "test_layer_on_device_arrays"]
