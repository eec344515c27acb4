"""The ``gradcheck`` transform: its options, and the order in which it runs the checks."""
from __future__ import annotations

import functools
import os
import sys
import threading
from typing import Any, Callable, Sequence

import numpy as np
from typing_extensions import ParamSpec

from functrans import backend
from functrans.gradcheck.checks import (FORWARD_REFUSALS, backend_note, batched_check,
                                         dtype_check, lazy_size_guard,
                                         fast_checks, forward_refusal, jacobian_checks,
                                         rerun_checks, skipped_check, skipped_modes,
                                         nondifferentiable_check, precision_diagnosis,
                                         undefined_grad_check, vmap_consistency_check,
                                         worst_columns)
from functrans.gradcheck.jacobians import analytic_jacobian, numeric_jacobian
from functrans.gradcheck.options import MODES, Options, resolve_seed
from functrans.gradcheck.problem import Problem, make_problem
from functrans.gradcheck.results import GradcheckError, GradcheckResult, NondifferentiableError

__all__ = ["check_problem", "gradcheck", "progress_enabled", "planned_work", "Progress"]

P = ParamSpec("P")

#: a full-mode check shows its progress bar once it has run this many seconds
PROGRESS_DELAY = 0.5
#: and redraws it at least this often (the elapsed time, the phase), even while one long
#: call runs
PROGRESS_REFRESH = 0.5


def progress_enabled(progress: bool | None, environ=None, stream=None) -> bool:
    """Whether gradcheck draws a progress bar: ``progress`` when given; by default only
    when tqdm is installed, the output is a terminal, and the ``CI`` environment variable
    is unset (so CI logs stay clean).

    >>> progress_enabled(False), progress_enabled(None, environ={"CI": "true"})
    (False, False)
    """
    if progress is not None:
        return bool(progress)
    environ = os.environ if environ is None else environ
    if environ.get("CI", "").lower() not in ("", "0", "false"):
        return False
    stream = sys.stderr if stream is None else stream
    try:
        import tqdm  # noqa: F401  (optional dependency)
    except ImportError:
        return False
    return all(getattr(s, "isatty", lambda: False)() for s in (stream, sys.stdout))


def planned_work(n_in: int, n_out: int, modes: Sequence[str], orders_left: int) -> int:
    """The units of work :class:`Progress` counts for a full-mode check of a function with
    ``n_in`` real inputs and ``n_out`` real outputs, and of its derivatives
    ``orders_left`` more times: a unit per numerical Jacobian column, per analytic row
    (reverse mode) or column (forward mode), and one for the other checks.

    >>> planned_work(3, 1, ("fwd", "rev"), 0)  # 3 numeric + 3 fwd + 1 rev + 1
    8
    """
    work = n_in + sum(n_in if m == "fwd" else n_out for m in modes) + 1
    if orders_left > 0:
        for m in modes:  # jvp(f): primals and tangents in; vjp(f): primals and cotangents
            work += (planned_work(2 * n_in, n_out, modes, orders_left - 1) if m == "fwd"
                     else planned_work(n_in + n_out, n_in, modes, orders_left - 1))
    return work


class Progress:
    """A full-mode check's progress as a tqdm bar: every numerical Jacobian column, every
    analytic row (reverse mode) or column (forward mode), and the comparisons and other
    checks, for ``f`` and each derivative checked, each phase named.  The bar appears once
    the check has run :data:`PROGRESS_DELAY` seconds and is redrawn at least every
    :data:`PROGRESS_REFRESH` seconds by a background thread.  Disabled, it does nothing.

    >>> p = Progress("f", total=3, enabled=False)
    >>> p.phase("numerical Jacobian of f"); p.advance(3); p.close()
    """

    def __init__(self, label: str, total: int, enabled: bool, stream=None):
        self.bar = None
        self.tick: Callable[[int], None] | None = None
        if not enabled:
            return
        try:
            from tqdm.auto import tqdm
        except ImportError:
            raise ImportError("gradcheck(progress=True) draws its progress bar with tqdm (an "
                              "optional dependency): pip install tqdm") from None
        self.bar = tqdm(total=total, desc=f"gradcheck of {label}", unit="col", leave=False,
                        delay=PROGRESS_DELAY, mininterval=0.1,
                        file=sys.stderr if stream is None else stream)
        self.tick = self.advance
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._redraw, name="gradcheck progress",
                                        daemon=True)
        self._thread.start()

    def _redraw(self) -> None:
        bar = self.bar
        while not self._done.wait(PROGRESS_REFRESH):
            now = bar._time()
            if now >= bar.start_t + bar.delay:
                bar.refresh()
                bar.last_print_t, bar.last_print_n = now, bar.n  # tqdm's "shown" marks

    def phase(self, what: str) -> None:
        """Name the phase starting now."""
        if self.bar is not None:
            self.bar.set_postfix_str(what, refresh=False)

    def advance(self, units: int = 1) -> None:
        """Count ``units`` of finished work."""
        if self.bar is not None:
            self.bar.update(units)

    def close(self) -> None:
        if self.bar is not None:
            self._done.set()
            self._thread.join()
            self.bar.close()


def check_problem(problem: Problem, opts: Options, rng, order: int,
                  result: GradcheckResult, progress: Progress | None = None) -> None:
    """Run every check ``opts`` asks for on ``problem``, and on its derivatives up to
    ``opts.order``, appending them to ``result`` (and counting full-mode work on
    ``progress``)."""
    progress = Progress(problem.label, 0, False) if progress is None else progress
    try:
        _run_checks(problem, opts, rng, order, result, progress)
    except FORWARD_REFUSALS as e:
        reason = forward_refusal(e)
        if reason is None or "fwd" not in opts.modes:
            raise
        # the modes were named (else forward mode would have been skipped): say which
        # function cannot be checked, without the trace through the interpreters
        raise type(e)(f"gradcheck of {problem.label}: {problem.label} cannot be checked in "
                      f"forward mode (jvp): {reason}. Check reverse mode only with "
                      "modes='rev'; the default modes skip forward mode for such a function "
                      "and say so in the report.") from None
    # the outputs are known by now (every check evaluates f), so this costs no evaluation
    result.record_arrays(problem.label, problem.in_names, problem.in_avals)
    result.record_arrays(problem.label, problem.out_names, problem.out_avals)


def _run_checks(problem: Problem, opts: Options, rng, order: int, result: GradcheckResult,
               progress: Progress) -> None:
    checks = result.checks
    if opts.fast_mode:
        checks.extend(fast_checks(problem, opts, rng, order))
    else:
        lazy_size_guard(problem)
        progress.phase(f"numerical Jacobian of {problem.label}")
        num = numeric_jacobian(problem, opts.eps_for(problem), opts.dtype, opts.chunk_size,
                               detect=opts.detect_nondifferentiable, tick=progress.tick)
        if num.vmap_note:
            result.notes.append(f"{problem.label} could not be vmapped ({num.vmap_note}); its "
                                "numerical Jacobian was computed with a Python loop")
        # vmap is what makes full mode fast: make sure it computes what f computes.
        consistency = vmap_consistency_check(problem, num, order, [0], opts.atol, opts.rtol)
        if not consistency.passed:
            checks.append(consistency)
            return
        if opts.detect_nondifferentiable:
            nondiff = nondifferentiable_check(problem, num, order, opts.atol, opts.rtol)
            checks.append(nondiff)
            if not nondiff.passed:
                return
        failed_columns = set()
        for mode in opts.modes:
            progress.phase(f"{mode} Jacobian of {problem.label}")
            state: dict = {}
            try:
                analytic = analytic_jacobian(problem, mode, opts.chunk_size, state,
                                             progress.tick)
            except FORWARD_REFUSALS as e:
                reason = forward_refusal(e) if mode == "fwd" else None
                if reason is None or not opts.auto_modes or "rev" not in opts.modes:
                    raise
                checks.append(skipped_check(problem, mode, order, reason))
                progress.advance(sum(problem.in_sizes))  # the columns not computed
                continue
            progress.phase(f"comparing the {mode} Jacobian of {problem.label}")
            if state.get("loop"):
                what = "pullback" if mode == "rev" else "jvp"
                result.notes.append(f"the {what} of {problem.label} could not be vmapped "
                                    f"({state['loop']}); its Jacobian was computed one "
                                    f"{'row' if mode == 'rev' else 'column'} at a time")
            blocks = jacobian_checks(problem, num, analytic, mode, order, opts.atol, opts.rtol)
            precision_diagnosis(problem, num, mode, [b for b in blocks if not b.passed],
                                order, opts.atol, opts.rtol, opts.chunk_size)
            checks.extend(blocks)
            failed_columns |= worst_columns(problem, num, analytic, blocks)
        if failed_columns:  # was it the derivative rules, or vmap of f?
            consistency = vmap_consistency_check(problem, num, order, sorted(failed_columns),
                                                 opts.atol, opts.rtol)
            if not consistency.passed:
                checks.append(consistency)
    if any(c.kind == "nondifferentiable" and not c.passed for c in checks):
        return
    if not opts.fast_mode:
        progress.phase(f"other checks of {problem.label}")
    # the modes f has rules for (forward mode is skipped for a custom_vjp function)
    skipped = skipped_modes(checks, problem, order)
    modes = tuple(m for m in opts.modes if m not in skipped)
    if opts.check_batched_grad and "rev" in modes:
        checks.append(batched_check(problem, "rev", rng, order, opts.atol, opts.rtol))
    if opts.check_batched_forward_grad and "fwd" in modes:
        checks.append(batched_check(problem, "fwd", rng, order, opts.atol, opts.rtol))
    if opts.check_undefined_grad and "rev" in modes:
        checks.append(undefined_grad_check(problem, rng, order, opts.atol, opts.rtol))
    if opts.check_grad_dtypes:
        checks.append(dtype_check(problem, modes, rng, order))
    # PyTorch's zero-cotangent check (run whatever the options) and the nondeterminism check
    checks.extend(rerun_checks(problem, modes, rng, order, opts.nondet_tol))
    progress.advance()
    if order < opts.order:
        for mode in modes:
            check_problem(problem.derivative(mode, rng), opts, rng, order + 1, result,
                          progress)


def gradcheck(fun: Callable[P, Any], *, eps: float | None = None, atol: float | None = None,
              rtol: float | None = None, modes: Sequence[str] | None = None,
              order: int = 1, fast_mode: bool = False, nondet_tol: float = 0.0,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              raise_exception: bool = True, dtype=None, detect_nondifferentiable: bool = False,
              seed: int | None = None, argnums: int | Sequence[int] | None = None,
              chunk_size: int | None = None,
              progress: bool | None = None,
              reverse_plan: str = "warm") -> Callable[P, GradcheckResult]:
    """A checker that compares ``fun``'s derivatives with finite differences.

    ``gradcheck(fun, **options)(*args, **kwargs)`` checks ``fun`` at ``args`` (pytrees of
    arrays; integer and boolean leaves, and ``kwargs``, are held fixed) and returns a
    truthy :class:`GradcheckResult`, or raises :class:`GradcheckError` with a report.

    The options have PyTorch's names where it has them.

    Parameters
    ----------
    fun : callable
        The function to check: pytrees of arrays in, pytrees of arrays out.
    eps : float, optional
        The finite-difference step (default 1e-6 when the numerical side is float64).
    atol, rtol : float, optional
        The tolerances: an entry passes when ``|analytic - numeric| <= atol + rtol *
        |numeric|``. By default per dtype (float64 1e-5, float32 2e-3, float16 1e-2,
        complex64 1e-3, complex128 1e-5).
    modes : str or sequence of str, optional
        ``"fwd"`` (jvp) and/or ``"rev"`` (vjp).  By default both, except that forward mode
        is skipped for a function that has no forward-mode rule (one that uses a
        ``custom_vjp`` function, or a primitive without a JVP rule): reverse mode is
        checked, and the result (``result.skipped``) and its report say that forward mode
        was skipped and why.  Named explicitly, ``modes=("fwd",)`` on such a function
        raises an error naming it.
    order : int, optional
        2 also checks the derivative of the derivative in every combination of ``modes``
        (forward over forward, reverse over forward, ...).
    fast_mode : bool, optional
        Compare ``vᵀ J u`` for random unit ``u``, ``v`` instead of every entry.
    nondet_tol : float, optional
        The derivative is computed twice; both must agree within this.
    check_batched_grad, check_batched_forward_grad : bool, optional
        vmap of the pullback (jvp) over a few random cotangents (tangents) must equal a
        loop.
    check_undefined_grad : bool, optional
        Zero (symbolic) cotangents must give zero gradients.  Whatever this option, reverse
        mode also checks, as PyTorch always does, that explicit zero cotangents give
        exactly zero gradients of the inputs' shapes and dtypes (a ``custom_vjp`` backward
        rule that adds a constant fails it).
    check_grad_dtypes : bool, optional
        Gradients must have their inputs' dtypes.
    raise_exception : bool, optional
        True (default): a failure raises :class:`GradcheckError` with the report; False
        returns a falsy result instead.
    dtype : dtype, optional
        The dtype of the numerical side (default float64 / complex128).
    detect_nondifferentiable : bool, optional
        Look for kinks with a 5-point stencil first and raise
        :class:`NondifferentiableError` naming the element.
    seed : int, optional
        For the random directions and cotangents (default: the ``FUNCTRANS_TEST_SEED``
        environment variable, else 0).
    argnums : int or sequence of int, optional
        Which positional arguments to check (default all floating ones).
    chunk_size : int, optional
        Perturbed points per vmapped evaluation (default: bounded memory).
    progress : bool, optional
        A progress bar (tqdm) for full-mode checks, from half a second in: every numerical
        and analytic Jacobian column (row) counted, each phase named; by default shown only
        on a terminal outside CI (the ``CI`` environment variable); True or False forces it
        on or off.
    reverse_plan : str, optional
        The reverse-mode plan checked (docs/design.md, "One front door, several plans"):
        ``"warm"`` (default), the one ``grad`` takes on a warm call, so the check covers
        the code a training loop runs (a recorded tape and its compiled gradient for a
        scalar function, compiled transposition otherwise); or ``"linearize"``,
        ``"compiled"``, ``"tape"``. The report's notes name the plan that ran.

    Notes
    -----
    As PyTorch's gradcheck, reverse mode always checks that zero output gradients give
    zero input gradients, and a pullback (jvp) that cannot be vmapped, say a
    ``custom_vjp`` rule calling NumPy, is evaluated row by row (column by column).  Where
    functrans deliberately differs: the numerical side is float64 for float32 inputs
    (PyTorch computes it in float32 and warns that the check is then unreliable), and the
    default tolerances are per dtype instead of ``atol=1e-5, rtol=1e-3``.

    Examples
    --------
    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> def f(x, y):
    ...     return fnp.sum(fnp.sin(x) * y)
    ...
    >>> bool(ft.gradcheck(f, order=2)(np.array([0.1, 0.2]), np.array([1.0, 2.0])))
    True
    """
    auto_modes = modes is None
    modes = MODES if modes is None else (modes,) if isinstance(modes, str) else tuple(modes)
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        raise ValueError(f"gradcheck: modes must be a non-empty subset of ('fwd', 'rev'), got "
                         f"{modes!r}")
    if not isinstance(order, (int, np.integer)) or order < 1:
        raise ValueError(f"gradcheck: order must be a positive integer, got {order!r}")
    if reverse_plan not in ("warm", "linearize", "compiled", "tape"):
        raise ValueError("gradcheck: reverse_plan must be 'warm', 'linearize', 'compiled' or "
                         f"'tape', got {reverse_plan!r}")
    if progress not in (None, True, False):
        raise ValueError(f"gradcheck: progress must be None, True or False, got {progress!r}")
    opts = Options(eps, atol, rtol, modes, int(order), bool(fast_mode), float(nondet_tol),
                   check_batched_grad, check_batched_forward_grad, check_undefined_grad,
                   check_grad_dtypes, raise_exception, dtype, detect_nondifferentiable, seed,
                   argnums, chunk_size, auto_modes)

    @functools.wraps(fun)
    def checker(*args: P.args, **kwargs: P.kwargs) -> GradcheckResult:
        used_seed = resolve_seed(opts.seed)
        problem = make_problem(fun, args, kwargs, opts.argnums)
        problem.reverse_plan = reverse_plan
        # Random directions are drawn where the inputs live (NumPy's generator for NumPy).
        rng = backend.default_rng(used_seed, like=problem.like)
        result = GradcheckResult(problem.label, used_seed, dict(opts.__dict__))
        enabled = not opts.fast_mode and progress_enabled(progress)
        # the outputs' sizes size the bar: one evaluation of f, only when it is drawn
        bar = Progress(problem.label, planned_work(
            sum(problem.in_sizes), sum(problem.out_sizes), opts.modes, opts.order - 1)
            if enabled else 0, enabled)
        try:
            check_problem(problem, opts, rng, 1, result, bar)
        finally:
            bar.close()
        result.notes[:0] = problem.notes()
        note = backend_note(problem)
        if note:
            result.notes.insert(0, note)
        if not result.ok and opts.raise_exception:
            kind = (NondifferentiableError if any(c.kind == "nondifferentiable"
                                                  for c in result.failures) else GradcheckError)
            raise kind(result.report(), result)
        return result

    return checker
