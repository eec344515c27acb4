"""Process-wide switches.

``check_tracer_leaks``: when true, every transform checks as it ends that none of its
tracers is still referenced (stored in a global, a closure, an attribute...) and raises
``UnexpectedTracerError`` if one is.  It costs a garbage collection per transform, so it
is off by default; when off it costs nothing.  ``checking_leaks()`` turns it on for a block.

>>> import functrans as ft
>>> leaked = []
>>> with ft.checking_leaks():  # doctest: +ELLIPSIS
...     ft.grad(lambda x: leaked.append(x) or x * x)(1.0)
Traceback (most recent call last):
    ...
functrans.core.UnexpectedTracerError: Leaked 1 tracer of JVPTrace...
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

__all__ = ["check_tracer_leaks", "checking_leaks"]

check_tracer_leaks: bool = False


@contextmanager
def checking_leaks() -> Iterator[None]:
    """Check for leaked tracers at the end of every transform inside the block (like JAX's
    ``jax.checking_leaks``).  The switch is process-wide, not per thread.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> with ft.checking_leaks():
    ...     ft.grad(fnp.sin)(0.0)
    1.0
    """
    global check_tracer_leaks
    previous = check_tracer_leaks
    check_tracer_leaks = True
    try:
        yield
    finally:
        check_tracer_leaks = previous


def __dir__() -> list[str]:
    return sorted(__all__)
