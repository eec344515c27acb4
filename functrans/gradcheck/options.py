"""gradcheck's options and defaults: tolerances and steps by dtype, limits on the work full
mode does, the seed, and the dtype the numerical side is computed in."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["SEED_ENV_VAR", "TOLERANCE", "DEFAULT_STEP", "NOISE_ULPS", "CHUNK_ELEMENTS",
           "MAX_JACOBIAN", "FULL_RECHECK", "LOW_PRECISION", "MODES", "MODE_WORDS",
           "default_tolerance", "resolve_seed", "numeric_dtype", "Options", "default_eps"]

#: Environment variable that sets the seed of every check whose ``seed`` is None
#: (an integer, or ``random`` for a fresh seed each time; the report prints it).
SEED_ENV_VAR = "FUNCTRANS_TEST_SEED"

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
    """``seed`` itself, else the ``FUNCTRANS_TEST_SEED`` environment variable, else 0."""
    if seed is not None:
        return int(seed)
    env = os.environ.get(SEED_ENV_VAR, "").strip()
    if not env:
        return 0
    if env.lower() == "random":
        # The entropy drawn from the OS is an int (typed as int | Sequence[int] | None).
        return int(np.random.SeedSequence().entropy % (2 ** 32))  # type: ignore[operator]
    try:
        return int(env)
    except ValueError:
        raise ValueError(f"{SEED_ENV_VAR}={env!r}: expected an integer or 'random'") from None


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

    def eps_for(self, problem) -> float:
        if self.eps is not None:
            return float(self.eps)
        return default_eps(problem, self.dtype)


def default_eps(problem, dtype=None) -> float:
    """The default step for the numerical side of ``problem`` (its least precise leaf)."""
    dtypes = [np.finfo(numeric_dtype(a.dtype, dtype)).dtype for a in problem.in_avals]
    return max(DEFAULT_STEP.get(np.dtype(d), 1e-6) for d in dtypes)
