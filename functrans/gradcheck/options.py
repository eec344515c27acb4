"""gradcheck's options and defaults: tolerances and steps by dtype, limits on the work full
mode does, the seed, and the dtype the numerical side is computed in."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["SEED_ENV_VAR", "TOLERANCE", "DEFAULT_STEP", "NOISE_ULPS", "CHUNK_ELEMENTS",
           "MAX_JACOBIAN", "FULL_RECHECK", "LOW_PRECISION", "MODES", "MODE_WORDS",
           "INTERNAL_OPTIONS", "default_tolerance", "resolve_seed", "parse_seed",
           "set_current_test", "current_test", "seed_was_used", "reproduce_advice",
           "numeric_dtype", "Options", "default_eps"]

#: Environment variable that sets the seed of every check whose ``seed`` is None
#: (an integer, or ``random`` for a fresh seed each time; the report prints it).  The
#: pytest plugin's ``--functrans-seed N`` sets it for the session: one seed, one story.
SEED_ENV_VAR = "FUNCTRANS_TEST_SEED"

# The pytest test running now (set by functrans.pytest_plugin): the command that reruns it,
# and whether anything in it drew from the session seed (its failure report then says how
# to reproduce it).
_test: dict[str, Any] = {"command": None, "seed_used": False}

# Tolerances by dtype (atol = rtol), JAX's table for gradient checks.
TOLERANCE = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 2e-3,
             np.dtype(np.float64): 1e-5, np.dtype(np.complex64): 1e-3,
             np.dtype(np.complex128): 1e-5}
# Step of the central difference, by the dtype the numerical side is computed in.
DEFAULT_STEP = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-3,
                np.dtype(np.float64): 1e-6}
# A difference quotient of values carrying a few ulps of rounding error each is uncertain
# by about NOISE_ULPS * ulp * |f| / step; that uncertainty is added to the tolerance.
NOISE_ULPS = 64
# Perturbed points per vmap call are chunked so that the batched inputs and outputs hold
# at most this many elements (about 64 MB in float64).
CHUNK_ELEMENTS = 1 << 23
# Largest Jacobian (entries) full mode builds; fast mode has no limit.
MAX_JACOBIAN = 50_000_000
# Fast-mode failures on problems with at most this many Jacobian entries are re-run in
# full mode to name the worst entries.
FULL_RECHECK = 200_000
LOW_PRECISION = frozenset(np.dtype(d) for d in (np.float16, np.float32, np.complex64))
MODES = ("fwd", "rev")
MODE_WORDS = {"fwd": "forward mode (jvp)", "rev": "reverse mode (vjp)"}
#: Options that are bookkeeping, not something a caller passes (left out of the
#: "reproduce" line of a report).
INTERNAL_OPTIONS = frozenset({"auto_modes"})


def default_tolerance(dtype) -> float:
    """The default ``atol`` (and ``rtol``) gradcheck uses for values of ``dtype``.

    >>> import numpy as np
    >>> default_tolerance(np.float32), default_tolerance(np.complex128)
    (0.002, 1e-05)
    """
    dtype = np.dtype(dtype)
    if dtype in TOLERANCE:
        return TOLERANCE[dtype]
    return 1e-1 if dtype.itemsize <= 2 else 1e-5  # e.g. bfloat16 from ml_dtypes


def resolve_seed(seed: int | None) -> int:
    """``seed`` itself, else the ``FUNCTRANS_TEST_SEED`` environment variable, else 0.

    >>> resolve_seed(7)
    7
    """
    if seed is not None:
        return int(seed)
    _test["seed_used"] = True
    parsed = parse_seed(os.environ.get(SEED_ENV_VAR, ""), SEED_ENV_VAR)
    return 0 if parsed is None else parsed


def parse_seed(text: str, where: str) -> int | None:
    """A seed written as text (in ``where``, for the error): a non-negative integer,
    ``random`` for a fresh one, or None for an empty text.

    >>> parse_seed("42", "--functrans-seed"), parse_seed(" ", "--functrans-seed")
    (42, None)
    """
    text = text.strip()
    if not text:
        return None
    if text.lower() == "random":
        # The entropy drawn from the OS is an int (typed as int | Sequence[int] | None).
        return int(np.random.SeedSequence().entropy % (2 ** 32))  # type: ignore[operator]
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if seed < 0:
        raise ValueError(f"{where}={text!r}: expected a non-negative integer or 'random'")
    return seed


def set_current_test(command: str | None) -> None:
    """Record the command that reruns the pytest test starting now (None when it ends);
    called by ``functrans.pytest_plugin``."""
    _test["command"] = command
    _test["seed_used"] = False


def current_test() -> str | None:
    """The command that reruns the pytest test running now, or None outside one."""
    return _test["command"]


def seed_was_used() -> bool:
    """Whether the current test drew anything from the session seed (a check with
    ``seed=None``, the ``rng`` fixture, :func:`functrans.testing.seed_for`)."""
    return _test["seed_used"]


def reproduce_advice(seed: int, explicit: bool) -> str:
    """How to reproduce a check that drew its directions with ``seed`` (``explicit``: the
    caller passed it): inside a pytest test, the command that reruns that test (its
    session seed reproduces both the test's data and the check); outside, the seed.

    >>> reproduce_advice(3, explicit=False)
    'set FUNCTRANS_TEST_SEED=3 to reproduce'
    >>> reproduce_advice(3, explicit=True)
    'pass seed=3 to reproduce'
    """
    if _test["command"]:
        return f"rerun this test with: {_test['command']}"
    if explicit:
        return f"pass seed={seed} to reproduce"
    return f"set {SEED_ENV_VAR}={seed} to reproduce"


def numeric_dtype(dtype, override) -> np.dtype:
    """The dtype a leaf of ``dtype`` is perturbed in: 64-bit by default, ``override`` if
    given (its complex counterpart for complex leaves), or the leaf's own for "input"."""
    dtype = np.dtype(dtype)
    if isinstance(override, str) and override == "input":
        return dtype
    base = np.dtype(np.float64) if override is None else np.dtype(override)
    if base.kind not in "fc":
        raise TypeError(f"gradcheck: dtype must be a floating dtype, got {base.name}")
    if dtype.kind == "c":
        return np.result_type(base, np.complex64)
    return np.dtype(base.type(0).real.dtype)


@dataclass
class Options:
    """Every option of :func:`gradcheck`, with its default."""

    eps: float | None = None
    atol: float | None = None
    rtol: float | None = None
    modes: tuple = MODES
    order: int = 1
    fast_mode: bool = False
    nondet_tol: float = 0.0
    check_batched_grad: bool = False
    check_batched_forward_grad: bool = False
    check_undefined_grad: bool = True
    check_grad_dtypes: bool = False
    raise_exception: bool = True
    dtype: Any = None
    detect_nondifferentiable: bool = False
    seed: int | None = None
    argnums: Any = None
    chunk_size: int | None = None
    # False when the caller named the modes: a mode the function cannot be differentiated
    # in is then an error; True (the default modes) skips such a mode and says why.
    auto_modes: bool = True

    def eps_for(self, problem) -> float:
        if self.eps is not None:
            return float(self.eps)
        return default_eps(problem, self.dtype)


def default_eps(problem, dtype=None) -> float:
    """The default step for the numerical side of ``problem`` (its least precise leaf)."""
    dtypes = [np.finfo(numeric_dtype(a.dtype, dtype)).dtype for a in problem.in_avals]
    return max(DEFAULT_STEP.get(np.dtype(d), 1e-6) for d in dtypes)
