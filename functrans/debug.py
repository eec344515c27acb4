"""``functrans.debug``: printing and inspecting values from inside transformed functions,
as JAX's ``jax.debug``.

``debug.print`` and ``debug.callback`` run when the values exist: at once without a
transform or under ``grad``/``jvp`` (with the primal values), once per batch member under
``vmap``, and each time a ``jit``-compiled function runs (not when it is traced); inside
the bodies of ``lax.scan``, ``while_loop``, ``fori_loop``, ``cond`` and ``switch`` once per
iteration or branch taken, in JAX's order.  A Python ``print`` inside ``jit`` shows
tracers, once.

>>> import numpy as np, functrans as ft, functrans.numpy as fnp
>>> @ft.jit
... def f(x):
...     ft.debug.print("x = {}", x)
...     return fnp.sum(x * x)
...
>>> f(np.array([1.0, 2.0]))
x = [1. 2.]
array(5.)
>>> f(np.array([3.0, 4.0]))
x = [3. 4.]
array(25.)
"""
from __future__ import annotations

import builtins
import string
from typing import Any, Callable

from functrans.primitives.callbacks import debug_callback, split_values
from functrans.tree_util import tree_flatten, tree_unflatten

__all__ = ["callback", "print"]


def callback(callback: Callable[..., None], *args: Any, ordered: bool = False,
             partitioned: bool = False, **kwargs: Any) -> None:
    """Call ``callback(*args, **kwargs)`` with the values of ``args`` (pytrees of arrays and
    tracers) when they are computed: at once outside transforms and under ``grad`` (primal
    values), per batch member under ``vmap``, on every run of a ``jit``-compiled function.
    Calls happen in program order (``ordered`` is accepted for JAX's signature);
    ``partitioned`` is accepted and ignored.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> seen = []
    >>> def f(x):
    ...     ft.debug.callback(lambda v: seen.append(float(v)), fnp.sum(x))
    ...     return x * 2
    ...
    >>> _ = ft.vmap(f)(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> seen
    [3.0, 7.0]
    """
    del ordered, partitioned
    _call_back("debug.callback", callback, args, kwargs)


def _call_back(name: str, callback: Callable[..., None], args: tuple, kwargs: dict) -> None:
    if not callable(callback):
        raise TypeError(f"{name}: expected a function, got {callback!r}")
    leaves, tree = tree_flatten((args, kwargs))
    traced, static, flags = split_values(leaves)

    def run(*values):
        call_args, call_kwargs = tree_unflatten(tree, values)
        callback(*call_args, **call_kwargs)

    debug_callback(run, traced, static, flags, name)


def print(fmt: str, *args: Any, ordered: bool = False, partitioned: bool = False,  # noqa: A001
          skip_format_check: bool = False, **kwargs: Any) -> None:
    """Print ``fmt.format(*args, **kwargs)`` with the values of ``args`` when they are
    computed (see ``callback``): under ``jit`` on every run, under ``vmap`` once per batch
    member, under ``grad`` the primal values.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> def f(x):
    ...     ft.debug.print("x={x} y={}", x * 2, x=x)
    ...     return fnp.sum(x)
    ...
    >>> _ = ft.vmap(f)(np.arange(2.0))
    x=0.0 y=0.0
    x=1.0 y=2.0
    >>> _ = ft.grad(f)(np.arange(2.0))
    x=[0. 1.] y=[0. 2.]
    """
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: fmt must be a format string, got {fmt!r}")
    if not skip_format_check:
        try:
            list(string.Formatter().parse(fmt))
        except ValueError as error:
            raise ValueError(f"debug.print: invalid format string {fmt!r}: {error}") from None
    del ordered, partitioned
    _call_back("debug.print", lambda *a, **k: builtins.print(fmt.format(*a, **k)), args,
               kwargs)


def __dir__() -> list[str]:
    return sorted(__all__)
