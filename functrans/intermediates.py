"""Gradients of intermediate values, functionally (Chainer's ``retain_grad``).

Tag an intermediate inside a function with ``tag(value, name)``; ``intermediate_grads(f)``
returns the cotangents of the tagged values alongside the gradients of the arguments.

It is the perturbation formulation made automatic: the cotangent of an intermediate ``h``
is the gradient, at ``eps = 0``, of the function in which ``h`` is replaced by ``h + eps``.
``intermediate_grads`` finds the tags (by tracing ``f`` once without data), then takes an
ordinary ``grad`` with respect to one zero perturbation per tag.  So it composes with
every transform (``vmap`` over it gives per-example cotangents, ``jit``/``make_jaxpr`` stage
it, it nests), and a tag used inside a loop body gets the sum over iterations, exactly like
a perturbation shared by every iteration.

>>> import numpy as np, functrans as ft, functrans.numpy as fnp
>>> def f(x):
...     h = ft.tag(2.0 * x, "h")
...     return fnp.sum(h ** 2)
...
>>> grads, inter = ft.intermediate_grads(f)(np.array([1.0, 3.0]))
>>> grads, inter["h"]
(array([ 8., 24.]), array([ 4., 12.]))
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Callable, Sequence

import numpy as np

from functrans import api, jaxpr_transforms
from functrans.api_util import argnums_tuple, partial_over
from functrans.core import ShapedArray, get_aval
from functrans.primitives.elementwise import add

__all__ = ["tag", "intermediate_grads"]


class _Contexts(threading.local):
    def __init__(self):
        self.stack: list = []


_contexts = _Contexts()
# What tag does depends on the active contexts: traces cached while one is active are
# told apart from the others.
jaxpr_transforms.register_trace_context(lambda: tuple(map(id, _contexts.stack)))


class _Collect:
    """Records the name and type of every tag reached while tracing."""

    def __init__(self):
        self.avals: dict[str, ShapedArray] = {}

    def visit(self, value, name: str):
        if name in self.avals:
            raise ValueError(f"tag: the name {name!r} is used twice in one call; every tagged "
                             "intermediate needs its own name")
        self.avals[name] = get_aval(value)
        return value


class _Perturb:
    """Adds each tag's perturbation to its value."""

    def __init__(self, perturbations: dict):
        self.perturbations = perturbations

    def visit(self, value, name: str):
        eps = self.perturbations.get(name)
        return value if eps is None else add(value, eps)


@contextmanager
def _active(context):
    _contexts.stack.append(context)
    try:
        yield context
    finally:
        _contexts.stack.pop()


def tag(value, name: str):
    """Mark ``value`` as the intermediate ``name``: the identity, except under
    :func:`intermediate_grads`, which reports its cotangent.

    >>> import functrans as ft
    >>> ft.tag(3.0, "x")
    3.0
    """
    if not isinstance(name, str):
        raise TypeError(f"tag: the name must be a string, got {type(name).__name__}")
    stack = _contexts.stack
    return stack[-1].visit(value, name) if stack else value


def intermediate_grads(fun: Callable, argnums: int | Sequence[int] = 0,
                       has_aux: bool = False) -> Callable:
    """Like :func:`functrans.grad`, but also return the cotangents of the values tagged with
    :func:`tag` inside ``fun``, as a dict keyed by tag name.

    Returns ``(grads, intermediates)``, or ``(grads, intermediates, aux)`` with ``has_aux``.

    >>> import functrans as ft
    >>> def f(x):
    ...     h = ft.tag(3.0 * x, "h")
    ...     return h * h
    ...
    >>> ft.intermediate_grads(f)(1.0)  # d/dx = 18 x, d/dh = 2 h
    (18.0, {'h': array(6.)})
    """
    single = isinstance(argnums, int)

    def wrapped(*args):
        nums = argnums_tuple(argnums, len(args), "intermediate_grads")

        of_differentiated = partial_over(fun, args, nums)

        # Only the differentiated arguments are abstract, as under grad: the others (ints,
        # functions) stay concrete.
        with _active(_Collect()) as collected:
            api.eval_shape(of_differentiated, *[args[i] for i in nums])
        zeros = {name: np.zeros(aval.shape, aval.dtype) for name, aval in collected.avals.items()}

        def perturbed(perturbations, *args):
            with _active(_Perturb(perturbations)):
                return fun(*args)

        shifted = tuple(i + 1 for i in nums)
        out = api.grad(perturbed, argnums=(0,) + shifted, has_aux=has_aux)(zeros, *args)
        grads, aux = out if has_aux else (out, None)
        inter, arg_grads = grads[0], grads[1:]
        arg_grads = arg_grads[0] if single else arg_grads
        return (arg_grads, inter, aux) if has_aux else (arg_grads, inter)

    return wrapped
