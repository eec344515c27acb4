"""``functrans.example_libraries.optimizers``: the optimizers of JAX's
``jax.example_libraries.optimizers``, as pure functions on pytrees of parameters.

An optimizer is a triple of functions, an :class:`Optimizer`:

* ``init_fun(params)`` makes the optimizer's state from the initial parameters (a pytree);
* ``update_fun(step, grads, opt_state)`` returns the state after one step (``step`` the
  index of the step, from 0; ``grads`` a pytree shaped as the parameters);
* ``get_params(opt_state)`` reads the parameters back out of a state.

States are :class:`OptimizerState` pytrees, so they pass through ``functrans.jit``,
``functrans.vmap`` and ``functrans.tree_util`` as any pytree does, and
:func:`unpack_optimizer_state` / :func:`pack_optimizer_state` turn one into nested Python
containers (to save) and back.  Each optimizer is written for one array and made to work on
any pytree by the :func:`optimizer` decorator.  A step size is a number or a *schedule*, a
function of the step index (:func:`exponential_decay`, :func:`piecewise_constant`, ...).

The formulas are JAX's, step for step, so the same parameters and gradients give JAX's
states up to rounding.  As everywhere in functrans, float32 parameters stay float32.

>>> import numpy as np
>>> import functrans as ft
>>> import functrans.numpy as fnp
>>> from functrans.example_libraries import optimizers
>>> opt_init, opt_update, get_params = optimizers.adam(0.1)
>>> state = opt_init({"w": np.array([1.0, -2.0])})
>>> loss = lambda p: fnp.sum(p["w"] ** 2)
>>> for i in range(3):
...     state = opt_update(i, ft.grad(loss)(get_params(state)), state)
...
>>> get_params(state)["w"]
array([ 0.70158627, -1.70062339])
"""
from __future__ import annotations

import functools
from collections import namedtuple
from typing import Any, Callable, NamedTuple

import numpy as np  # noqa: F401  (the examples' namespace)

from functrans import lax
from functrans import numpy as fnp
from functrans import tree_util

__all__ = [
    "Array", "InitFn", "JoinPoint", "Optimizer", "OptimizerState", "Params", "ParamsFn",
    "Schedule", "State", "Step", "UpdateFn", "Updates",
    "optimizer", "sgd", "momentum", "nesterov", "adagrad", "rmsprop", "rmsprop_momentum",
    "adam", "adamax", "sm3",
    "constant", "exponential_decay", "inverse_time_decay", "polynomial_decay",
    "piecewise_constant", "make_schedule",
    "l2_norm", "clip_grads", "unpack_optimizer_state", "pack_optimizer_state",
]


def __dir__() -> list:
    return sorted(__all__)


# -- the state and the triple -------------------------------------------------------------


class OptimizerState(namedtuple("OptimizerState",
                                ["packed_state", "tree_def", "subtree_defs"])):
    """The state of an optimizer over a pytree of parameters, as JAX's: a pytree whose
    leaves are the leaves of every parameter's own state, parameter after parameter.

    Attributes
    ----------
    packed_state
        One list per parameter (in the order of the parameters' leaves): the leaves of that
        parameter's state (for ``adam``, the parameter and its two moment estimates).
    tree_def
        The ``PyTreeDef`` of the parameters; static (pytree auxiliary data).
    subtree_defs
        A tuple of the ``PyTreeDef`` of each parameter's state; static.
    """

    __slots__ = ()


def _flatten_state(state: OptimizerState):
    return (state.packed_state,), (state.tree_def, state.subtree_defs)


def _unflatten_state(static, children) -> OptimizerState:
    return OptimizerState(children[0], static[0], static[1])


tree_util.register_pytree_node(OptimizerState, _flatten_state, _unflatten_state)

#: Type aliases, as JAX names them: arrays, parameter pytrees, a parameter's own state,
#: gradient pytrees, a step index, and the signatures of the triple's functions.
Array = Any
Params = Any
State = Any
Updates = Params
InitFn = Callable[[Params], OptimizerState]
Step = int
UpdateFn = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Params]
#: A step-size schedule: a function from the step index to the step size.
Schedule = Callable[[Step], float]


class Optimizer(NamedTuple):
    """The ``(init_fn, update_fn, params_fn)`` triple an optimizer is, unpacked as
    ``opt_init, opt_update, get_params = optimizers.sgd(0.1)``.

    Attributes
    ----------
    init_fn
        ``init_fn(params)``: the initial :class:`OptimizerState`.
    update_fn
        ``update_fn(step, grads, opt_state)``: the state after one step.
    params_fn
        ``params_fn(opt_state)``: the parameters the state holds.
    """

    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def _pack(states: list) -> tuple[tuple, tuple]:
    """The leaves of each per-parameter state, and their tree definitions."""
    flat = [tree_util.tree_flatten(s) for s in states]
    return tuple(leaves for leaves, _ in flat), tuple(d for _, d in flat)


def _unpack(packed, subtree_defs) -> list:
    return [tree_util.tree_unflatten(d, leaves) for d, leaves in zip(subtree_defs, packed)]


def optimizer(opt_maker: Callable[..., tuple[Callable, Callable, Callable]]
              ) -> Callable[..., Optimizer]:
    """Decorator turning an optimizer written for single arrays into one for pytrees.

    ``opt_maker(*args, **kwargs)`` returns ``(init, update, get_params)`` working on one
    array: ``init(x0)`` gives that array's state (any pytree), ``update(step, g, state)``
    the next state (with the same structure) and ``get_params(state)`` the array.  The
    decorated function returns the :class:`Optimizer` that applies them leaf by leaf to a
    pytree of parameters, with an :class:`OptimizerState` as its state.

    Parameters
    ----------
    opt_maker : callable
        The optimizer for single arrays: its arguments (step size, hyperparameters) are
        those of the decorated function.

    Returns
    -------
    callable
        A function of the same arguments returning an :class:`Optimizer`.

    Raises
    ------
    TypeError
        (from ``update_fn``) when the gradients' tree structure is not the parameters', or
        when ``update`` returns a state of another structure than it was given.

    Examples
    --------
    >>> @optimizer
    ... def halve():
    ...     return (lambda x: x), (lambda i, g, x: x / 2), (lambda x: x)
    ...
    >>> opt_init, opt_update, get_params = halve()
    >>> state = opt_init((np.array([4.0]), {"b": np.array([2.0, 8.0])}))
    >>> get_params(opt_update(0, (np.zeros(1), {"b": np.zeros(2)}), state))
    (array([2.]), {'b': array([1., 4.])})
    """
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            leaves, tree_def = tree_util.tree_flatten(x0_tree)
            packed, subtree_defs = _pack([init(x0) for x0 in leaves])
            return OptimizerState(packed, tree_def, subtree_defs)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            packed, tree_def, subtree_defs = opt_state
            grads, grad_def = tree_util.tree_flatten(grad_tree)
            if grad_def != tree_def:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not "
                    "match the parameter tree structure with which it was initialized: "
                    f"parameter tree {tree_def} and grad tree {grad_def}.")
            states = _unpack(packed, subtree_defs)
            new_packed, new_defs = _pack([update(i, g, s) for g, s in zip(grads, states)])
            for old, new in zip(subtree_defs, new_defs):
                if old != new:
                    raise TypeError(
                        "optimizer update function produced an output structure that did "
                        f"not match its input structure: input {old} and output {new}.")
            return OptimizerState(new_packed, tree_def, subtree_defs)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            packed, tree_def, subtree_defs = opt_state
            return tree_util.tree_unflatten(
                tree_def, [get_params(s) for s in _unpack(packed, subtree_defs)])

        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


# -- the optimizers -----------------------------------------------------------------------


def _first(state):
    return state[0]


_first.__name__ = _first.__qualname__ = "get_params"  # what the triple's third function is


def _at(schedule, i, x):
    """``schedule(i)``, in the floating dtype of the parameter ``x``: float32 parameters
    stay float32 whatever the schedule computes in (a traced step index, or
    ``piecewise_constant``'s float64 values, give float64 scalars), as in JAX, whose
    schedules compute in float32.  Python numbers are weak and returned as they are."""
    rate = schedule(i)
    if isinstance(rate, (np.ndarray, np.generic)) and rate.ndim == 0:
        rate = rate.item()  # a host scalar (piecewise_constant's): a Python number, weak
    dtype = getattr(x, "dtype", None)
    if isinstance(rate, (int, float)) or dtype is None or not fnp.issubdtype(
            dtype, np.inexact):
        return rate
    return lax.convert_element_type(rate, dtype)


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: ``x <- x - step_size(i) * g``.

    Parameters
    ----------
    step_size : float or callable
        The step size, or a schedule giving it for each step index.

    Returns
    -------
    Optimizer
        The ``(init_fun, update_fun, get_params)`` triple; the state of a parameter is the
        parameter itself.

    Examples
    --------
    >>> opt_init, opt_update, get_params = sgd(0.5)
    >>> get_params(opt_update(0, np.array([2.0]), opt_init(np.array([1.0]))))
    array([0.])
    """
    rate = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - _at(rate, i, x) * g

    def get_params(x):
        return x
    return Optimizer(init, update, get_params)


@optimizer
def momentum(step_size: Schedule, mass: float):
    """Gradient descent with momentum: ``v <- mass * v + g``, then
    ``x <- x - step_size(i) * v`` (``v`` starts at zero).

    Parameters
    ----------
    step_size : float or callable
        The step size, or a schedule giving it for each step index.
    mass : float
        The momentum coefficient (how much of the previous velocity is kept).

    Returns
    -------
    Optimizer
        The ``(init_fun, update_fun, get_params)`` triple; a parameter's state is
        ``(x, velocity)``.

    Examples
    --------
    >>> opt_init, opt_update, get_params = momentum(0.1, mass=0.9)
    >>> state = opt_init(np.array([1.0]))
    >>> for i in range(2):
    ...     state = opt_update(i, np.array([1.0]), state)
    ...
    >>> get_params(state)                    # 1 - 0.1 * 1 - 0.1 * (0.9 + 1)
    array([0.71])
    """
    rate = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - _at(rate, i, x) * velocity, velocity
    return init, update, _first


@optimizer
def nesterov(step_size: Schedule, mass: float):
    """Gradient descent with Nesterov momentum: ``v <- mass * v + g``, then
    ``x <- x - step_size(i) * (mass * v + g)``.

    Parameters
    ----------
    step_size : float or callable
        The step size, or a schedule giving it for each step index.
    mass : float
        The momentum coefficient.

    Returns
    -------
    Optimizer
        The ``(init_fun, update_fun, get_params)`` triple; a parameter's state is
        ``(x, velocity)``.

    Examples
    --------
    >>> opt_init, opt_update, get_params = nesterov(0.1, mass=0.5)
    >>> get_params(opt_update(0, np.array([1.0]), opt_init(np.array([1.0]))))
    array([0.85])
    """
    rate = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - _at(rate, i, x) * (mass * velocity + g), velocity
    return init, update, _first


def _inverse_sqrt_or_zero(s):
    """``1 / sqrt(s)`` where ``s > 0``, else 0 (without dividing by zero)."""
    positive = s > 0
    return fnp.where(positive, 1.0 / fnp.sqrt(fnp.where(positive, s, 1)), 0)


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi, Hazan and Singer, 2011), with momentum as JAX's: the squared
    gradients are summed, ``s <- s + g**2``, the step direction is averaged,
    ``m <- (1 - momentum) * g / sqrt(s) + momentum * m`` (``g / sqrt(s)`` taken as 0
    where ``s`` is 0), and ``x <- x - step_size(i) * m``.

    Parameters
    ----------
    step_size : float or callable
        The step size, or a schedule giving it for each step index.
    momentum : float, optional
        The weight of the previous direction in ``m`` (0: plain Adagrad).

    Returns
    -------
    Optimizer
        The ``(init_fun, update_fun, get_params)`` triple; a parameter's state is
        ``(x, sum_of_squared_gradients, m)``.

    Examples
    --------
    >>> opt_init, opt_update, get_params = adagrad(1.0, momentum=0.0)
    >>> get_params(opt_update(0, np.array([3.0, 0.0]), opt_init(np.array([1.0, 1.0]))))
    array([0., 1.])
    """
    rate = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + fnp.square(g)
        inv_sqrt = _inverse_sqrt_or_zero(g_sq)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        return x - _at(rate, i, x) * m, g_sq, m
    return init, update, _first


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: ``a <- gamma * a + (1 - gamma) * g**2``, then
    ``x <- x - step_size(i) * g / sqrt(a + eps)``.

    Parameters
    ----------
    step_size : float or callable
        The step size, or a schedule giving it for each step index.
    gamma : float, optional
        The decay of the running average of squared gradients.
    eps : float, optional
        Added to the average under the square root.

    Returns
    -------
    Optimizer
        The ``(init_fun, update_fun, get_params)`` triple; a parameter's state is
        ``(x, average_of_squared_gradients)``.

    Examples
    --------
    >>> opt_init, opt_update, get_params = rmsprop(0.1, gamma=0.75, eps=0.0)
    >>> get_params(opt_update(0, np.array([2.0]), opt_init(np.array([1.0]))))
    array([0.8])
    """
    rate = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq = state
        avg_sq = avg_sq * gamma + fnp.square(g) * (1.0 - gamma)
        return x - _at(rate, i, x) * g / fnp.sqrt(avg_sq + eps), avg_sq
    return init, update, _first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum: ``a <- gamma * a + (1 - gamma) * g**2``,
    ``m <- momentum * m + step_size(i) * g / sqrt(a + eps)`` and ``x <- x - m``.

    Parameters
    ----------
    step_size : float or callable
        The step size, or a schedule giving it for each step index.
    gamma : float, optional
        The decay of the running average of squared gradients.
    eps : float, optional
        Added to the average under the square root.
    momentum : float, optional
        The weight of the previous step in ``m``.

    Returns
    -------
    Optimizer
        The ``(init_fun, update_fun, get_params)`` triple; a parameter's state is
        ``(x, average_of_squared_gradients, m)``.

    Examples
    --------
    >>> opt_init, opt_update, get_params = rmsprop_momentum(0.1, gamma=0.75, eps=0.0)
    >>> state = opt_init(np.array([1.0]))
    >>> for i in range(2):
    ...     state = opt_update(i, np.array([2.0]), state)
    ...
    >>> get_params(state).round(6)
    array([0.468814])
    """
    rate = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq, mom = state
        avg_sq = avg_sq * gamma + fnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + _at(rate, i, x) * g / fnp.sqrt(avg_sq + eps)
        return x - mom, avg_sq, mom
    return init, update, _first


def _bias_correction(beta, i, moment):
    """``1 - beta ** (i + 1)`` in the dtype of the moment estimate ``moment``, and where it
    is (a device array's constants are made on its device).  A traced (or array) step
    index is converted to that dtype first: a float32 power of a float32 base (not one
    with a 64-bit integer exponent, which NumPy would compute in float64)."""
    exponent = i + 1
    if not isinstance(exponent, int):
        exponent = lax.convert_element_type(exponent, moment.dtype)
    return 1 - fnp.full_like(moment, beta, shape=()) ** exponent


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba, 2015): ``m <- (1 - b1) * g + b1 * m``,
    ``v <- (1 - b2) * g**2 + b2 * v``, then with the bias corrections
    ``mhat = m / (1 - b1**(i + 1))`` and ``vhat = v / (1 - b2**(i + 1))``,
    ``x <- x - step_size(i) * mhat / (sqrt(vhat) + eps)``.

    Parameters
    ----------
    step_size : float or callable
        The step size, or a schedule giving it for each step index.
    b1 : float, optional
        The decay rate of the first moment estimate.
    b2 : float, optional
        The decay rate of the second moment estimate.
    eps : float, optional
        Added to ``sqrt(vhat)`` in the denominator.

    Returns
    -------
    Optimizer
        The ``(init_fun, update_fun, get_params)`` triple; a parameter's state is
        ``(x, m, v)``.

    Examples
    --------
    >>> opt_init, opt_update, get_params = adam(0.1)
    >>> get_params(opt_update(0, np.array([5.0, -0.5]), opt_init(np.zeros(2))))
    array([-0.1,  0.1])
    """
    rate = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * fnp.square(g) + b2 * v
        mhat = m / _bias_correction(b1, i, m)
        vhat = v / _bias_correction(b2, i, m)
        return x - _at(rate, i, x) * mhat / (fnp.sqrt(vhat) + eps), m, v
    return init, update, _first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax, Adam with the infinity norm: ``m <- (1 - b1) * g + b1 * m``,
    ``u <- max(b2 * u, |g|)``, then
    ``x <- x - step_size(i) / (1 - b1**(i + 1)) * m / (u + eps)``.

    Parameters
    ----------
    step_size : float or callable
        The step size, or a schedule giving it for each step index.
    b1 : float, optional
        The decay rate of the first moment estimate.
    b2 : float, optional
        The decay of the infinity norm ``u``.
    eps : float, optional
        Added to ``u`` in the denominator.

    Returns
    -------
    Optimizer
        The ``(init_fun, update_fun, get_params)`` triple; a parameter's state is
        ``(x, m, u)``.

    Examples
    --------
    >>> opt_init, opt_update, get_params = adamax(0.1)
    >>> get_params(opt_update(0, np.array([5.0, -0.5]), opt_init(np.zeros(2))))
    array([-0.1,  0.1])
    """
    rate = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = fnp.maximum(b2 * u, fnp.abs(g))
        step = _at(rate, i, x) / _bias_correction(b1, i, m)
        return x - step * m / (u + eps), m, u
    return init, update, _first


def _all_axes_but(ndim: int, axis: int) -> tuple:
    return tuple(a for a in range(ndim) if a != axis)


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil, Gupta, Koren and Singer, 2019), the memory-efficient Adagrad: instead
    of one accumulator per entry, a parameter of shape ``(n1, n2, ...)`` keeps one vector
    per axis, ``v_k`` of length ``n_k``.  Each step takes the accumulator
    ``a = min_k v_k (broadcast) + g**2``, moves along
    ``m <- (1 - momentum) * g / sqrt(a) + momentum * m`` (``g / sqrt(a)`` taken as 0 where
    ``a`` is 0), ``x <- x - step_size(i) * m``, and keeps ``v_k`` = the maximum of ``a``
    over every axis but ``k``.  A scalar parameter is treated as of shape ``(1,)``.

    Parameters
    ----------
    step_size : float or callable
        The step size, or a schedule giving it for each step index.
    momentum : float, optional
        The weight of the previous direction in ``m``.

    Returns
    -------
    Optimizer
        The ``(init_fun, update_fun, get_params)`` triple; a parameter's state is
        ``(x, m, [v_1, v_2, ...], shape)``, ``x`` at least one-dimensional and ``shape``
        the parameter's own.

    Examples
    --------
    >>> opt_init, opt_update, get_params = sm3(1.0, momentum=0.0)
    >>> state = opt_update(0, np.array([[3.0, 4.0]]), opt_init(np.ones((1, 2))))
    >>> get_params(state)
    array([[0., 0.]])
    >>> state.packed_state[0][2:4]           # the accumulators of the two axes
    [array([16.]), array([ 9., 16.])]
    """
    rate = make_schedule(step_size)

    def init(x0):
        shape = fnp.shape(x0)
        x0 = fnp.atleast_1d(x0)
        accumulators = [fnp.zeros_like(x0, shape=(n,)) for n in x0.shape]
        return x0, fnp.zeros_like(x0), accumulators, shape

    def update(i, g, state):
        x, m, accumulators, shape = state
        ndim = fnp.ndim(g)
        broadcast = [fnp.expand_dims(v, _all_axes_but(ndim, k))
                     for k, v in enumerate(accumulators)]
        accum = functools.reduce(fnp.minimum, broadcast) + fnp.square(g)
        inv_sqrt = _inverse_sqrt_or_zero(accum)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        x = x - _at(rate, i, x) * m
        accumulators = [fnp.max(accum, axis=_all_axes_but(fnp.ndim(x), k))
                        for k in range(fnp.ndim(x))]
        return x, m, accumulators, shape

    def get_params(state):
        x, _, _, shape = state
        # a scalar parameter was kept as shape (1,); any other keeps its shape (so that
        # the shape's entries, pytree leaves, may be traced under jit)
        return fnp.reshape(x, ()) if len(shape) == 0 else x
    return init, update, get_params


# -- step-size schedules ------------------------------------------------------------------


def constant(step_size) -> Schedule:
    """The schedule of a constant step size.

    Parameters
    ----------
    step_size : float
        The step size at every step.

    Returns
    -------
    callable
        ``schedule(i) = step_size``.

    Examples
    --------
    >>> constant(0.1)(1000)
    0.1
    """
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size, decay_steps, decay_rate) -> Schedule:
    """The schedule ``step_size * decay_rate ** (i / decay_steps)``.

    Parameters
    ----------
    step_size : float
        The step size at step 0.
    decay_steps : int or float
        The number of steps over which the step size is multiplied by ``decay_rate``.
    decay_rate : float
        The factor per ``decay_steps`` steps.

    Returns
    -------
    callable
        The schedule, a function of the step index ``i`` (which may be traced).

    Examples
    --------
    >>> exponential_decay(1.0, decay_steps=10, decay_rate=0.5)(20)
    0.25
    """
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False) -> Schedule:
    """The schedule ``step_size / (1 + decay_rate * i / decay_steps)``, or with
    ``staircase``, ``step_size / (1 + decay_rate * floor(i / decay_steps))``.

    Parameters
    ----------
    step_size : float
        The step size at step 0.
    decay_steps : int or float
        The number of steps per unit of decay.
    decay_rate : float
        How fast the step size decays.
    staircase : bool, optional
        Decay in whole units of ``decay_steps`` (a staircase) instead of continuously.

    Returns
    -------
    callable
        The schedule, a function of the step index ``i`` (which may be traced).

    Examples
    --------
    >>> inverse_time_decay(1.0, decay_steps=10, decay_rate=1.0)(15)
    0.4
    >>> float(inverse_time_decay(1.0, 10, 1.0, staircase=True)(15))
    0.5
    """
    if staircase:
        def schedule(i):
            return step_size / (1 + decay_rate * fnp.floor(i / decay_steps))
    else:
        def schedule(i):
            return step_size / (1 + decay_rate * i / decay_steps)
    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0) -> Schedule:
    """The schedule going from ``step_size`` to ``final_step_size`` in ``decay_steps``
    steps along ``(1 - i / decay_steps) ** power``, then staying at ``final_step_size``.

    Parameters
    ----------
    step_size : float
        The step size at step 0.
    decay_steps : int
        The step from which the step size is ``final_step_size``.
    final_step_size : float
        The step size from step ``decay_steps`` on.
    power : float, optional
        The power of the polynomial (1: linear decay).

    Returns
    -------
    callable
        The schedule, a function of the step index ``i`` (which may be traced).

    Examples
    --------
    >>> schedule = polynomial_decay(1.0, decay_steps=10, final_step_size=0.0)
    >>> float(schedule(5)), float(schedule(50))
    (0.5, 0.0)
    """
    def schedule(step_num):
        step_num = fnp.minimum(step_num, decay_steps)
        fraction = (1 - step_num / decay_steps) ** power
        return fraction * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """The schedule that is ``values[0]`` up to step ``boundaries[0]`` (included),
    ``values[1]`` up to ``boundaries[1]``, ..., and ``values[-1]`` after the last boundary.

    Parameters
    ----------
    boundaries : sequence of int
        The steps where the value changes (increasing), one fewer than ``values``.
    values : sequence of float
        The step size on each piece.

    Returns
    -------
    callable
        The schedule, a function of the step index ``i`` (which may be traced).

    Raises
    ------
    ValueError
        When ``boundaries`` and ``values`` are not sequences, or ``values`` does not have
        one more entry than ``boundaries``.

    Examples
    --------
    >>> schedule = piecewise_constant([10, 20], [1.0, 0.5, 0.1])
    >>> [float(schedule(i)) for i in (0, 10, 11, 20, 21)]
    [1.0, 1.0, 0.5, 0.5, 0.1]
    """
    boundaries = fnp.array(boundaries)
    values = fnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i):
        return values[fnp.sum(i > boundaries)]
    return schedule


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A schedule from a step size: a callable is returned as it is, a scalar becomes
    :func:`constant`.

    Parameters
    ----------
    scalar_or_schedule : float or callable
        A step size or a schedule.

    Returns
    -------
    callable
        The schedule.

    Raises
    ------
    TypeError
        When ``scalar_or_schedule`` is neither callable nor a scalar.

    Examples
    --------
    >>> make_schedule(0.1)(7)
    0.1
    """
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if fnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# -- utilities ----------------------------------------------------------------------------


def l2_norm(tree):
    """The l2 norm of a pytree of arrays: the square root of the sum of every leaf's
    squared entries (useful for weight decay and gradient clipping).

    Parameters
    ----------
    tree : pytree
        Arrays (any pytree of them).

    Returns
    -------
    array
        A scalar.

    Examples
    --------
    >>> l2_norm({"a": np.array([3.0]), "b": np.array([[4.0]])})
    array(5.)
    """
    leaves = tree_util.tree_leaves(tree)
    return fnp.sqrt(sum(fnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """A pytree of gradients scaled down so that its :func:`l2_norm` is at most
    ``max_norm`` (unchanged where it already is).

    Parameters
    ----------
    grad_tree : pytree
        The gradients (any pytree of arrays).
    max_norm : float
        The largest norm allowed.

    Returns
    -------
    pytree
        ``grad_tree``'s structure, each leaf multiplied by ``max_norm / norm`` when the
        norm is ``max_norm`` or more.

    Examples
    --------
    >>> clip_grads([np.array([3.0, 4.0])], 1.0)
    [array([0.6, 0.8])]
    """
    norm = l2_norm(grad_tree)

    def clip(g):
        return fnp.where(norm < max_norm, g, g * (max_norm / norm))
    return tree_util.tree_map(clip, grad_tree)


# -- serialization ------------------------------------------------------------------------


class JoinPoint:
    """Marks, in :func:`unpack_optimizer_state`'s result, where a parameter's own state
    (a pytree) hangs from the parameters' tree.  It is a leaf of ``functrans.tree_util``
    (so the outer tree flattens to the join points) and iterates over its one subtree, as
    JAX's does.

    Attributes
    ----------
    subtree
        The state of one parameter (for ``adam``, the tuple ``(x, m, v)``).
    """

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree

    def __repr__(self):
        return f"JoinPoint({self.subtree!r})"


def unpack_optimizer_state(opt_state):
    """An :class:`OptimizerState` as nested Python containers: the parameters' tree with
    a :class:`JoinPoint` holding each parameter's state in place of the parameter (to
    save with ``pickle`` or any serializer of containers and arrays).

    Parameters
    ----------
    opt_state : OptimizerState
        The state to unpack.

    Returns
    -------
    pytree
        The parameters' structure with :class:`JoinPoint` leaves.

    Examples
    --------
    >>> opt_init, _, _ = momentum(0.1, 0.9)
    >>> unpack_optimizer_state(opt_init({"w": np.array([1.0])}))
    {'w': JoinPoint((array([1.]), array([0.])))}
    """
    packed, tree_def, subtree_defs = opt_state
    return tree_util.tree_unflatten(
        tree_def, [JoinPoint(s) for s in _unpack(packed, subtree_defs)])


def pack_optimizer_state(marked_pytree):
    """The :class:`OptimizerState` that :func:`unpack_optimizer_state` unpacked: the
    inverse of that function.

    Parameters
    ----------
    marked_pytree : pytree
        A tree whose leaves are :class:`JoinPoint` objects holding each parameter's state.

    Returns
    -------
    OptimizerState
        The state, with the structures of the tree and of each parameter's state.

    Raises
    ------
    TypeError
        When a leaf of ``marked_pytree`` is not a :class:`JoinPoint`.

    Examples
    --------
    >>> opt_init, _, get_params = momentum(0.1, 0.9)
    >>> state = opt_init({"w": np.array([1.0])})
    >>> get_params(pack_optimizer_state(unpack_optimizer_state(state)))
    {'w': array([1.])}
    """
    join_points, tree_def = tree_util.tree_flatten(marked_pytree)
    strays = [type(s).__name__ for s in join_points if not isinstance(s, JoinPoint)]
    if strays:
        raise TypeError("pack_optimizer_state: every leaf must be a JoinPoint (as "
                        f"unpack_optimizer_state makes them), got {', '.join(strays)}")
    packed, subtree_defs = _pack([s.subtree for s in join_points])
    return OptimizerState(packed, tree_def, subtree_defs)

