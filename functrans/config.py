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

``debug_nans`` and ``debug_infs``: when true, an operation that makes a NaN (an infinity)
from operands without one raises ``FloatingPointError`` naming it (docs/jax_names.md,
"JAX's options"); ``functrans.debug_nans(True)`` turns it on for a block.  ``log_compiles``:
``jit`` logs each signature it compiles (logger ``"functrans"``, level WARNING).

JAX's options by JAX's names: ``update("jax_debug_nans", True)`` sets one and
``config.jax_debug_nans`` reads it, so that scripts written for ``jax.config`` run.  Each
option either works as in JAX, is a hint without effect on results here (accepted), or
refuses the values functrans cannot honour with an error saying why.

>>> ft.config.update("jax_enable_x64", True)  # functrans's dtypes are JAX's x64 mode's
>>> ft.config.jax_enable_x64
True
>>> ft.config.update("jax_debug_nans", True)
>>> ft.config.debug_nans
True
>>> ft.config.update("jax_debug_nans", False)
"""
from __future__ import annotations

import importlib.util
import os
import sys
import types
from contextlib import contextmanager
from typing import Any, Callable, Iterator

__all__ = ["check_tracer_leaks", "checking_leaks", "debug_infs", "debug_nans", "fusion",
           "fusion_parallel", "fusion_set", "jit_disabled", "log_compiles", "on_change",
           "option_values", "reverse_mode", "reverse_mode_set", "update", "values"]

check_tracer_leaks: bool = False
reverse_mode: str = "auto"
jit_disabled: bool = False
#: an operation that makes a NaN from operands without one raises FloatingPointError
debug_nans: bool = False
#: an operation that makes an infinity from finite operands raises FloatingPointError
debug_infs: bool = False
#: ``jit`` logs each signature it compiles (logger "functrans", level WARNING)
log_compiles: bool = False
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


# ------------------------------------------------------------------------------------------
# JAX's options by JAX's names
# ------------------------------------------------------------------------------------------

#: switch name -> functions called (without arguments) after it is set, e.g. to install a
#: checking interpreter only while ``debug_nans`` is on, so that it costs nothing when off
_watchers: dict[str, list[Callable[[], None]]] = {}


def on_change(name: str, watcher: Callable[[], None]) -> None:
    """Call ``watcher()`` after each assignment to the switch ``name`` of this module (by
    ``update``, a context manager, or ``config.name = value``)."""
    _watchers.setdefault(name, []).append(watcher)


class _ConfigModule(types.ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        for watcher in _watchers.get(name, ()):
            watcher()


sys.modules[__name__].__class__ = _ConfigModule


def _boolean(option: str, value) -> bool:
    if isinstance(value, (bool, int)) or type(value).__name__ == "bool_":
        return bool(value)
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
        return value.lower() in ("true", "1")
    raise ValueError(f"functrans.config.update: {option} takes True or False, got "
                     f"{value!r}")


def _one_of(option: str, value, allowed: tuple, supported: tuple, why: str):
    name = getattr(value, "value", value)  # JAX's enums (NumpyDtypePromotion.STANDARD)
    if name not in allowed:
        raise ValueError(f"functrans.config.update: {option} must be one of "
                         f"{', '.join(map(repr, allowed))}, got {value!r}")
    if name not in supported:
        raise NotImplementedError(f"functrans.config.update: {option}={value!r} is not "
                                  f"supported: {why}")
    return name


def _set_switch(name: str) -> Callable[[str, Any], None]:
    def set_switch(option: str, value) -> None:
        setattr(sys.modules[__name__], name, _boolean(option, value))
    return set_switch


def _set_x64(option: str, value) -> None:
    if not _boolean(option, value):
        raise NotImplementedError(
            f"functrans.config.update: {option}=False is not supported: functrans's dtypes "
            "are always those of JAX with jax_enable_x64=True (Python floats and NumPy's "
            "defaults are 64-bit). For float32, pass float32 arrays (np.float32(...), "
            "x.astype(np.float32)) or ask for it with dtype=np.float32; operations keep it.")


def _set_platforms(option: str, value) -> None:
    names = [] if value is None else [p.strip().lower() for p in str(value).split(",")]
    if any(p not in ("", "cpu") for p in names):
        raise NotImplementedError(
            f"functrans.config.update: {option}={value!r} is not supported: functrans puts "
            "the arrays it makes from Python values on the host ('cpu', NumPy). To compute "
            "on a GPU, pass CuPy arrays (or functrans.device_put(x, "
            "functrans.devices('gpu')[0])): operations stay on their device.")


def _set_choice(allowed: tuple, supported: tuple, why: str) -> Callable[[str, Any], None]:
    def set_choice(option: str, value) -> None:
        _one_of(option, value, allowed, supported, why)
    return set_choice


def _set_partitionable(option: str, value) -> None:
    if not _boolean(option, value):
        raise NotImplementedError(
            f"functrans.config.update: {option}=False is not supported: functrans.random "
            "draws the bits of JAX's partitionable threefry (JAX's default since 0.5), "
            "not the older stream")


def _accept(option: str, value) -> None:
    """A hint without effect on results in functrans (documented as such)."""


_RANK_WHY = ("functrans.numpy broadcasts operands of any ranks together, as NumPy does "
             "(jax_numpy_rank_promotion='allow')")
_DTYPE_WHY = ("functrans promotes dtypes one way, 'standard' (arrays as NumPy promotes "
              "them, Python scalars and weakly typed arrays taking the arrays' dtype as in "
              "JAX; docs/array_api.md), and has no strict mode")

#: JAX option -> (how to read its value, how to set it: checks the value and applies it)
_OPTIONS: dict[str, tuple[Callable[[], Any], Callable[[str, Any], None]]] = {
    "jax_enable_x64": (lambda: True, _set_x64),
    "jax_disable_jit": (lambda: jit_disabled, _set_switch("jit_disabled")),
    "jax_check_tracer_leaks": (lambda: check_tracer_leaks, _set_switch("check_tracer_leaks")),
    "jax_debug_nans": (lambda: debug_nans, _set_switch("debug_nans")),
    "jax_debug_infs": (lambda: debug_infs, _set_switch("debug_infs")),
    "jax_log_compiles": (lambda: log_compiles, _set_switch("log_compiles")),
    "jax_platforms": (lambda: None, _set_platforms),
    "jax_platform_name": (lambda: "", _set_platforms),
    "jax_default_prng_impl": (lambda: "threefry2x32", _set_choice(
        ("threefry2x32", "rbg", "unsafe_rbg"), ("threefry2x32",),
        "functrans.random implements threefry2x32 alone")),
    "jax_threefry_partitionable": (lambda: True, _set_partitionable),
    "jax_numpy_rank_promotion": (lambda: "allow", _set_choice(
        ("allow", "warn", "raise"), ("allow",), _RANK_WHY)),
    "jax_numpy_dtype_promotion": (lambda: "standard", _set_choice(
        ("standard", "strict"), ("standard",), _DTYPE_WHY)),
    # hints: no effect on results in functrans
    "jax_traceback_filtering": (lambda: _hints["jax_traceback_filtering"], _accept),
    "jax_default_matmul_precision": (lambda: _hints["jax_default_matmul_precision"], _accept),
    "jax_compilation_cache_dir": (lambda: _hints["jax_compilation_cache_dir"], _accept),
    "jax_persistent_cache_min_compile_time_secs": (
        lambda: _hints["jax_persistent_cache_min_compile_time_secs"], _accept),
    "jax_persistent_cache_min_entry_size_bytes": (
        lambda: _hints["jax_persistent_cache_min_entry_size_bytes"], _accept),
    "jax_enable_checks": (lambda: _hints["jax_enable_checks"], _accept),
    "jax_explain_cache_misses": (lambda: _hints["jax_explain_cache_misses"], _accept),
    "jax_softmax_custom_jvp": (lambda: _hints["jax_softmax_custom_jvp"], _accept),
}

#: the hints' values as last set (JAX's defaults until then)
_hints: dict[str, Any] = {
    "jax_traceback_filtering": "auto", "jax_default_matmul_precision": None,
    "jax_compilation_cache_dir": None, "jax_persistent_cache_min_compile_time_secs": 1.0,
    "jax_persistent_cache_min_entry_size_bytes": 0, "jax_enable_checks": False,
    "jax_explain_cache_misses": False, "jax_softmax_custom_jvp": False,
}


def _option(name: str):
    try:
        return _OPTIONS[name]
    except KeyError:
        raise AttributeError(f"Unrecognized config option: {name} (functrans knows "
                             f"{', '.join(sorted(_OPTIONS))})") from None


def update(name: str, val: Any) -> None:
    """Set JAX's option ``name`` (``"jax_enable_x64"``, ``"jax_debug_nans"``, ...) to
    ``val``, as ``jax.config.update`` does.  Options that change what functrans computes
    work as in JAX; hints without effect on results here (``jax_traceback_filtering``,
    ``jax_default_matmul_precision``, ``jax_compilation_cache_dir``, ...) are accepted;
    values functrans cannot honour (``jax_enable_x64=False``, a GPU platform, an
    ``rbg`` PRNG, rank or dtype promotion other than JAX's defaults) raise
    ``NotImplementedError`` saying why.  An unknown name raises ``AttributeError``.

    >>> import functrans as ft
    >>> ft.config.update("jax_enable_x64", True)
    >>> ft.config.update("jax_check_tracer_leaks", True)
    >>> ft.config.check_tracer_leaks
    True
    >>> ft.config.update("jax_check_tracer_leaks", False)
    """
    _option(name)[1](name, val)
    if _OPTIONS[name][1] is _accept:
        _hints[name] = val


def option_values() -> dict[str, Any]:
    """Every JAX option functrans knows, by name, with its value (``config.values``).

    >>> import functrans as ft
    >>> ft.config.option_values()["jax_enable_x64"]
    True
    """
    return {name: read() for name, (read, _) in _OPTIONS.items()}


def __getattr__(name: str):
    if name == "values":
        return option_values()
    if name.startswith("jax_"):
        return _option(name)[0]()
    raise AttributeError(f"module 'functrans.config' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
