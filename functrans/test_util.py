"""``functrans.test_util``: JAX's ``jax.test_util`` module: :func:`check_grads`,
:func:`check_jvp` and :func:`check_vjp`, with JAX's signatures and verdicts (the random
directions are drawn as JAX draws them, from ``numpy.random.RandomState(0)``).

>>> import numpy as np, functrans.numpy as fnp
>>> from functrans.test_util import check_grads
>>> check_grads(fnp.tanh, (np.array([0.3, -1.2]),), order=2, modes=("fwd", "rev"))
"""
from __future__ import annotations

from typing import Callable, Sequence

from functrans import testing
from functrans.testing import check_grads

__all__ = ["check_grads", "check_jvp", "check_vjp"]


def check_jvp(f: Callable, f_jvp: Callable, args: Sequence, atol=None, rtol=None,
              eps: float = 1e-4, err_msg: str = "") -> None:
    """Check ``f_jvp``, a forward-mode derivative of ``f``, against central differences
    along one random tangent: ``f_jvp(primals, tangents)`` must return
    ``(f(*primals), J·tangents)`` (typically ``functools.partial(functrans.jvp, f)``).

    The primal outputs must agree with ``f(*args)`` in value and dtype, and the tangent
    output with ``(f(args + eps·t) - f(args - eps·t)) / (2 eps)`` within ``atol`` and
    ``rtol`` (JAX's dtype-dependent defaults when None).  ``err_msg`` starts the message.
    Raises :class:`functrans.GradcheckError`, an ``AssertionError``, on a mismatch.

    >>> import functools, numpy as np, functrans as ft, functrans.numpy as fnp
    >>> from functrans.test_util import check_jvp
    >>> check_jvp(fnp.sin, functools.partial(ft.jvp, fnp.sin), (np.array([0.5, 2.0]),))
    >>> wrong = lambda primals, tangents: (fnp.sin(*primals), 2.0 * tangents[0])
    >>> try:
    ...     check_jvp(fnp.sin, wrong, (np.array([0.5, 2.0]),))
    ... except AssertionError:
    ...     print("wrong JVP found")
    ...
    wrong JVP found
    """
    testing.check_jvp(f, f_jvp, args, atol=atol, rtol=rtol, eps=eps, err_msg=err_msg, seed=0)


def check_vjp(f: Callable, f_vjp: Callable, args: Sequence, atol=None, rtol=None,
              eps: float = 1e-4, err_msg: str = "") -> None:
    """Check ``f_vjp``, a reverse-mode derivative of ``f``, by the inner-product identity
    ``<t, vjp(c)> == <J t, c>`` for a random tangent ``t`` and cotangent ``c``, with ``J t``
    from central differences: ``f_vjp(*args)`` must return ``(f(*args), vjp_fun)``
    (typically ``functools.partial(functrans.vjp, f)``).  Complex values are conjugated as
    JAX does.  Tolerances and ``err_msg`` as :func:`check_jvp`'s.
    Raises :class:`functrans.GradcheckError`, an ``AssertionError``, on a mismatch.

    >>> import functools, numpy as np, functrans as ft, functrans.numpy as fnp
    >>> from functrans.test_util import check_vjp
    >>> f = lambda x, y: x * fnp.exp(y)
    >>> check_vjp(f, functools.partial(ft.vjp, f), (np.array([1.0, 2.0]), np.array([0.5, 0.1])))
    """
    testing.check_vjp(f, f_vjp, args, atol=atol, rtol=rtol, eps=eps, err_msg=err_msg, seed=0)


def __dir__() -> list[str]:
    return sorted(__all__)
