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

``eager_tape``: when true (the default), ``grad`` of a function it has differentiated
before records the forward pass and runs compiled gradient code cached by the recording's
structure (docs/design.md, "Gradients from a tape"), which is faster for functions of many
small operations.  Results are the same; turn it off to linearize every call, e.g. to
step through JVP rules in a debugger.

``jit_disabled``: when true, ``functrans.jit`` calls the function it wraps directly, so that
it runs eagerly (prints show values, breakpoints stop in it); ``functrans.disable_jit()``
turns it on for a block.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

__all__ = ["check_tracer_leaks", "checking_leaks", "eager_tape", "jit_disabled"]

check_tracer_leaks: bool = False
eager_tape: bool = True
jit_disabled: bool = False


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
