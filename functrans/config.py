"""Process-wide switches.

``check_tracer_leaks``: when true, every transform checks as it ends that none of its
tracers is still referenced (stored in a global, a closure, an attribute...) and raises
``UnexpectedTracerError`` if one is.  It costs a garbage collection per transform, so it
is off by default; when off it costs nothing.  ``checking_leaks()`` turns it on for a block.

>>> import functrans as ft
>>> leaked = []
>>> with ft.checking_leaks():  # doctest: +ELLIPSIS
...     ft.grad(lambda x: leaked.append(x) or x * x)(1.0)
...
Traceback (most recent call last):
    ...
functrans.core.UnexpectedTracerError: Leaked 1 tracer of JVPTrace...

``reverse_mode``: how ``grad``, ``value_and_grad``, ``vjp``, ``jacrev`` and ``gradcheck``
compute reverse-mode derivatives (``functrans.reverse_mode`` says how each plan works):

* ``"auto"`` (the default): the planner chooses the fastest plan by what it has seen: a
  function differentiated before is recorded on a tape and its gradient runs as compiled
  code; a linear program seen before is transposed by compiled code.
* ``"linearize"``: linearize every call and interpret the transpose rules, e.g. to step
  through JVP and transpose rules in a debugger.
* ``"compiled"``: linearize every call and run the transposition as compiled code, from
  the first call on.
* ``"tape"``: record every call that can be recorded on a tape and run its compiled
  gradient, from the first call on (per-example gradients under ``vmap`` too).

Every plan gives the same derivatives (the test suite runs each primitive through each);
forcing one is for debugging and testing.  ``gradcheck`` checks the plan ``grad`` takes on
a warm call unless told otherwise.

>>> import functrans as ft
>>> ft.config.reverse_mode
'auto'
>>> with ft.config.reverse_mode_set("linearize"):
...     ft.grad(lambda x: x * x)(3.0)
...
6.0

``fusion`` and ``fusion_parallel``: whether ``jit`` fuses elementwise regions into
compiled loops, and whether such a loop over a large array runs on several threads
(docs/jit.md, "Fusion").

>>> ft.config.fusion_parallel  # off unless FUNCTRANS_FUSION_PARALLEL=1
False

``jit_disabled``: when true, ``functrans.jit`` calls the function it wraps directly, so that
it runs eagerly (prints show values, breakpoints stop in it); ``functrans.disable_jit()``
turns it on for a block.
"""
from __future__ import annotations

import importlib.util
import os
from contextlib import contextmanager
from typing import Iterator

__all__ = ["check_tracer_leaks", "checking_leaks", "fusion", "fusion_parallel", "fusion_set",
           "jit_disabled", "reverse_mode", "reverse_mode_set"]

check_tracer_leaks: bool = False
reverse_mode: str = "auto"
jit_disabled: bool = False
#: ``jit`` fuses elementwise regions into loops compiled by LLVM or numba (on when llvmlite
#: or numba is installed, ``pip install functrans[fast]``, unless the environment variable
#: ``FUNCTRANS_FUSION`` is ``0``; docs/jit.md, "Fusion")
fusion: bool = (os.environ.get("FUNCTRANS_FUSION", "1") != "0"
                and (importlib.util.find_spec("llvmlite") is not None
                     or importlib.util.find_spec("numba") is not None))
#: a fused loop LLVM compiled over a large array (``codegen.PARALLEL_ELEMENTS`` elements or
#: more) runs on every core, its leading axis cut into one block of rows per thread (the
#: same bits as on one thread); off by default, so that a process's cores stay its
#: caller's to use and benchmarks compare single-threaded code.  Read when ``jit`` first
#: sees a signature; the environment variable ``FUNCTRANS_FUSION_PARALLEL=1`` turns it on.
fusion_parallel: bool = os.environ.get("FUNCTRANS_FUSION_PARALLEL", "0") == "1"


@contextmanager
def checking_leaks() -> Iterator[None]:
    """Check for leaked tracers at the end of every transform inside the block (like JAX's
    ``jax.checking_leaks``).  The switch is process-wide, not per thread.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> with ft.checking_leaks():
    ...     ft.grad(fnp.sin)(0.0)
    ...
    1.0
    """
    global check_tracer_leaks
    previous = check_tracer_leaks
    check_tracer_leaks = True
    try:
        yield
    finally:
        check_tracer_leaks = previous


@contextmanager
def reverse_mode_set(mode: str) -> Iterator[None]:
    """Set ``reverse_mode`` (``"auto"``, ``"linearize"``, ``"compiled"`` or ``"tape"``) for
    the block.  The switch is process-wide, not per thread.

    >>> import functrans as ft
    >>> with ft.config.reverse_mode_set("tape"):
    ...     ft.grad(lambda x: x ** 3)(2.0)
    ...
    12.0
    """
    global reverse_mode
    if mode not in ("auto", "linearize", "compiled", "tape"):
        raise ValueError("functrans.config.reverse_mode_set: mode must be 'auto', "
                         f"'linearize', 'compiled' or 'tape', got {mode!r}")
    previous = reverse_mode
    reverse_mode = mode
    try:
        yield
    finally:
        reverse_mode = previous


@contextmanager
def fusion_set(on: bool) -> Iterator[None]:
    """Turn ``fusion`` on or off for the block: code ``jit`` compiles inside it is written
    so (a jitted function keeps the code it compiled for a signature; the switch matters
    when a signature is first seen).  The switch is process-wide, not per thread.  Turning
    it on without llvmlite or numba installed changes nothing.

    >>> import numpy as np, functrans as ft
    >>> with ft.config.fusion_set(False):
    ...     "fused loop" in ft.jit(lambda x: x * 2.0 + 1.0).lower(np.ones(3)).as_text()
    ...
    False
    """
    global fusion
    previous = fusion
    fusion = bool(on)
    try:
        yield
    finally:
        fusion = previous


def __dir__() -> list[str]:
    return sorted(__all__)
