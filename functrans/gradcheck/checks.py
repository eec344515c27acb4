"""The individual checks: Jacobian comparison (full mode), the directional derivative (fast
mode), non-differentiability, batched derivatives, undefined gradients, gradient dtypes,
zero cotangents, nondeterminism and the consistency of vmap with plain calls.  Each returns a
:class:`Check`; the numbers they compare are copied to the host explicitly."""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from functrans import backend
from functrans.api import vmap
from functrans.core import get_aval
from functrans.gradcheck.jacobians import (NumericJacobian, analytic_jacobian, direct_column,
                                            numeric_jacobian, rounding_noise)
from functrans.gradcheck.options import FULL_RECHECK, LOW_PRECISION, Options, default_tolerance
from functrans.gradcheck.problem import Problem
from functrans.gradcheck.realify import (coordinate_label, is_complex, l1_norm,
                                          lazy_direction, lazy_l1_norm, lazy_pairing, pairing,
                                          random_direction, random_like, realify,
                                          symbolic_zero)
from functrans.gradcheck.results import Check, Entry, error_ratio, format_jacobian_check
from functrans.interpreters.ad import Zero
from functrans.primitives.control_flow_dask import any_lazy
from functrans.primitives.conversion import zeros_like

__all__ = ["compare", "largest", "block_comparison", "jacobian_blocks", "jacobian_checks",
           "worst_columns", "precision_diagnosis", "kinks", "nondifferentiable_check",
           "evaluate", "shifted", "fast_tolerance", "fast_checks", "directional",
           "explain_fast_failure", "fast_nondifferentiable", "worst_mismatch", "batched_check",
           "undefined_grad_check", "zero_grad_output_check", "dtype_check", "nondeterminism_check",
           "rerun_checks", "vmap_consistency_check", "FORWARD_REFUSALS", "forward_refusal",
           "skipped_check", "skipped_modes", "lazy_fast_checks", "backend_note",
           "lazy_size_guard", "MAX_LAZY_JACOBIAN"]


#: The errors with which forward mode refuses a function it has no rule for: a
#: ``custom_vjp`` function (only a reverse-mode rule) or a primitive without a JVP rule.
FORWARD_REFUSALS = (TypeError, NotImplementedError)


def forward_refusal(error: BaseException) -> str | None:
    """Why forward mode cannot differentiate the function, if ``error`` (raised computing a
    jvp) is such a refusal rather than a bug; else None.

    >>> forward_refusal(NotImplementedError("Differentiation rule for 'p' not implemented"))
    "NotImplementedError: Differentiation rule for 'p' not implemented"
    >>> forward_refusal(TypeError("unsupported operand")) is None
    True
    """
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    if isinstance(error, TypeError) and text.startswith("Forward-mode differentiation"):
        # the custom_vjp refusal: its first sentence says all
        return "it uses a custom_vjp function, which defines only a reverse-mode rule"
    if isinstance(error, NotImplementedError) and text.startswith("Differentiation rule for"):
        return f"{type(error).__name__}: {text}"
    return None


def skipped_check(problem: Problem, mode: str, order: int, reason: str) -> Check:
    """The record that ``mode`` was not checked for ``problem`` (a passed check whose
    message says why)."""
    return Check("skipped", mode, problem.label, order, True, message=reason)


def skipped_modes(checks: Sequence[Check], problem: Problem, order: int) -> set:
    return {c.mode for c in checks
            if c.kind == "skipped" and c.function == problem.label and c.order == order}


def compare(numeric: np.ndarray, analytic: np.ndarray, tol: np.ndarray):
    """Elementwise |analytic - numeric| against ``tol``; equal non-finite values agree."""
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(analytic - numeric)
    same = (numeric == analytic) | (np.isnan(numeric) & np.isnan(analytic))
    diff = np.where(same, 0.0, np.where(np.isnan(diff), np.inf, diff))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(diff == 0, 0.0, diff / tol)
    return diff, ratio


def jacobian_blocks(problem: Problem):
    """(k, i, row slice, column slice) for every output/input pair."""
    row = 0
    for k, m in enumerate(problem.out_sizes):
        col = 0
        for i, n in enumerate(problem.in_sizes):
            yield k, i, slice(row, row + m), slice(col, col + n)
            col += n
        row += m


def largest(values: np.ndarray, count: int) -> np.ndarray:
    """Flat indices of the ``count`` largest entries of ``values`` (no NaN), largest first,
    ties in index order.  A partial selection: the five worst of a million entries cost
    two passes over them, not a sort."""
    flat = values.reshape(-1)
    if flat.size <= 4 * count:
        return np.argsort(-flat, kind="stable")[:count]
    # The count-th largest of a strided sample is at most the count-th largest of all, so
    # the entries at or above it include the answer (a few hundred for typical data).
    sample = flat[::max(1, flat.size // 4096)]
    threshold = np.partition(sample, sample.size - count)[sample.size - count]
    candidates = np.flatnonzero(flat >= threshold)
    if candidates.size > 4096:  # many ties at the threshold: narrow down exactly
        kth = np.partition(flat[candidates], candidates.size - count)[candidates.size - count]
        candidates = candidates[flat[candidates] >= kth]
    order = np.argsort(-flat[candidates], kind="stable")[:count]
    return candidates[order]


def block_comparison(n_block: np.ndarray, a_block: np.ndarray, noise: np.ndarray, a_tol,
                     r_tol, worst: int = 5):
    """Compare one Jacobian block: (tolerance, error/tolerance ratios, max |error|, number
    failed, flat indices of the ``worst`` largest nonzero ratios, largest first).

    The common case (finite errors, positive tolerances) runs in place in two buffers; NaN
    errors or zero tolerances go through :func:`compare`, whose rules it follows."""
    tol = np.abs(n_block)
    tol *= r_tol
    tol += a_tol
    tol += noise
    with np.errstate(invalid="ignore", over="ignore"):
        ratio = np.subtract(a_block, n_block)
    np.abs(ratio, out=ratio)
    max_error = float(ratio.max(initial=0.0))
    if ratio.size and (math.isnan(max_error) or not tol.min() > 0):
        diff, ratio = compare(n_block, a_block, tol)
        failed = int(np.count_nonzero(ratio > 1))
        top = np.argsort(ratio, axis=None)[::-1][:worst]
        return tol, ratio, float(diff.max(initial=0.0)), failed, top
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio /= tol
    failed = int(np.count_nonzero(ratio > 1))
    return tol, ratio, max_error, failed, largest(ratio, min(worst, ratio.size))


def jacobian_checks(problem: Problem, num: NumericJacobian, analytic: np.ndarray, mode: str,
                    order: int, atol, rtol, keep_matrices: bool = True) -> list[Check]:
    checks = []
    for k, i, rows, cols in jacobian_blocks(problem):
        a_tol, r_tol = problem.block_tolerance(k, i, atol, rtol)
        n_block, a_block = num.jacobian[rows, cols], analytic[rows, cols]
        tol, ratio, max_error, num_failed, top = block_comparison(
            n_block, a_block, num.noise[rows, cols], a_tol, r_tol)
        worst = []
        for flat in top:
            r, c = np.unravel_index(flat, ratio.shape)
            if ratio[r, c] == 0:
                break
            worst.append(Entry(
                coordinate_label(problem.out_avals[k].shape,
                                 is_complex(problem.out_avals[k].dtype), int(r)),
                coordinate_label(problem.in_avals[i].shape,
                                 is_complex(problem.in_avals[i].dtype), int(c)),
                float(n_block[r, c]), float(a_block[r, c]), float(tol[r, c])))
        checks.append(Check(
            "jacobian", mode, problem.label, order, num_failed == 0,
            problem.out_names[k], problem.in_names[i],
            max_abs_error=max_error, max_ratio=float(ratio.max(initial=0.0)),
            num_failed=num_failed, num_compared=int(ratio.size), worst=worst,
            numeric=n_block if keep_matrices else None,
            analytic=a_block if keep_matrices else None, atol=a_tol, rtol=r_tol))
    return checks


def worst_columns(problem: Problem, num: NumericJacobian, analytic: np.ndarray, blocks,
                  count: int = 4) -> set:
    """Global column indices of the worst entries of the failed blocks."""
    out = set()
    starts = np.cumsum([0] + problem.in_sizes)
    for b in blocks:
        if b.passed:
            continue
        i = problem.in_names.index(b.input)
        k = problem.out_names.index(b.output)
        rows = slice(int(np.cumsum([0] + problem.out_sizes)[k]),
                     int(np.cumsum([0] + problem.out_sizes)[k + 1]))
        cols = slice(int(starts[i]), int(starts[i + 1]))
        diff = np.abs(analytic[rows, cols] - num.jacobian[rows, cols])
        diff[np.isnan(diff)] = np.inf
        for flat in largest(diff, min(count, diff.size)):
            out.add(int(starts[i] + np.unravel_index(flat, diff.shape)[1]))
    return set(sorted(out)[:count])


def precision_diagnosis(problem: Problem, num: NumericJacobian, mode: str, failed: list[Check],
                        order: int, atol, rtol, chunk_size) -> None:
    """If a low-precision problem fails but its 64-bit version passes, say so."""
    if not failed or not problem.low_precision:
        return
    promoted = problem.promoted()
    again = jacobian_checks(promoted, num, analytic_jacobian(promoted, mode, chunk_size),
                            mode, order, atol, rtol, keep_matrices=False)
    by_block = {(c.output, c.input): c for c in again}
    for c in failed:
        redo = by_block.get((c.output, c.input))
        if redo is not None and redo.passed:
            c.precision_only = True
            dtypes = sorted({a.dtype.name for a in problem.in_avals + problem.out_avals
                             if a.dtype in LOW_PRECISION})
            c.message = (f"Only a precision issue: with the inputs promoted to 64 bits the "
                         f"analytic derivative agrees (max error/tolerance "
                         f"{redo.max_ratio:.3g}); the mismatch is {'/'.join(dtypes)} rounding, "
                         "not a wrong rule. Loosen atol/rtol or check in float64.")


# ------------------------------------------------------------------------------------------
# Non-differentiability
# ------------------------------------------------------------------------------------------


def kinks(problem: Problem, num: NumericJacobian, atol, rtol) -> tuple[np.ndarray, np.ndarray]:
    jump = np.abs(num.right - num.left)
    jump = np.where(np.isnan(jump), np.inf, jump)
    tol = np.empty_like(jump)
    for k, i, rows, cols in jacobian_blocks(problem):
        a_tol, r_tol = problem.block_tolerance(k, i, atol, rtol)
        scale = np.maximum(np.abs(num.left[rows, cols]), np.abs(num.right[rows, cols]))
        tol[rows, cols] = a_tol + r_tol * np.nan_to_num(scale) + num.kink_tol_noise[rows, cols]
    bad = (jump > tol) | num.nonfinite_change
    return bad, jump / tol


def nondifferentiable_check(problem: Problem, num: NumericJacobian, order: int, atol,
                            rtol) -> Check:
    bad, ratio = kinks(problem, num, atol, rtol)
    if not bad.any():
        return Check("nondifferentiable", None, problem.label, order, True,
                     max_ratio=0.0, num_compared=int(bad.size))
    lines = []
    ratio = np.where(num.nonfinite_change, np.inf, ratio)
    flats = np.argsort(np.where(bad, ratio, -1), axis=None)[::-1][:5]
    starts_out = np.cumsum([0] + problem.out_sizes)
    starts_in = np.cumsum([0] + problem.in_sizes)
    for flat in flats:
        r, c = np.unravel_index(flat, bad.shape)
        if not bad[r, c]:
            break
        k = int(np.searchsorted(starts_out, r, side="right") - 1)
        i = int(np.searchsorted(starts_in, c, side="right") - 1)
        in_aval = problem.in_avals[i]
        in_label = coordinate_label(in_aval.shape, is_complex(in_aval.dtype),
                                    int(c - starts_in[i]))
        out_label = coordinate_label(problem.out_avals[k].shape,
                                     is_complex(problem.out_avals[k].dtype),
                                     int(r - starts_out[k]))
        value = realify(problem.leaves[i])[c - starts_in[i]]
        what = ("the function changes between finite and non-finite values"
                if num.nonfinite_change[r, c] else
                f"one-sided derivatives differ: left {num.left[r, c]:.6g}, "
                f"right {num.right[r, c]:.6g}")
        lines.append(f"  d {problem.out_names[k]}{out_label} / d {problem.in_names[i]}"
                     f"{in_label} at {problem.in_names[i]}{in_label} = {value:.6g}: {what}")
    message = "\n".join(lines)
    return Check("nondifferentiable", None, problem.label, order, False,
                 max_ratio=float(np.nanmax(np.where(bad, ratio, 0.0))),
                 num_failed=int(bad.sum()), num_compared=int(bad.size), message=message)


# ------------------------------------------------------------------------------------------
# Fast mode
# ------------------------------------------------------------------------------------------


def evaluate(problem: Problem, xs: list) -> list:
    return [backend.to_host(y) for y in problem.fun(*xs)]


def shifted(xs: list, direction: list, scale: float) -> list:
    return [x + scale * d.astype(x.dtype, copy=False) for x, d in zip(xs, direction)]


def fast_tolerance(problem: Problem, opts: Options) -> tuple[float, float]:
    """Fast mode's (atol, rtol): the loosest over the Jacobian blocks (one number checks
    them all at once)."""
    tols = [problem.block_tolerance(k, i, opts.atol, opts.rtol)
            for k, i, _, _ in jacobian_blocks(problem)]
    return max(t[0] for t in tols), max(t[1] for t in tols)


def fast_checks(problem: Problem, opts: Options, rng,
                order: int) -> list[Check]:
    if any_lazy(problem.leaves):
        return lazy_fast_checks(problem, opts, rng, order)
    u = random_direction(rng, problem.leaves)
    # Run the analytic side first: its primal outputs give v's shapes without an extra call.
    # With both modes, J·u comes from the linearization that reverse mode transposes
    # (linearize is jvp plus partial evaluation: the same JVP rules), so f is evaluated once.
    pushed: dict = {}
    skipped: list[Check] = []  # forward mode, when f has no forward-mode rule
    if "rev" not in opts.modes:
        pushed["fwd"] = problem.push(u)
    else:
        problem.linearization()
        if any_lazy(problem.outs):
            return lazy_fast_checks(problem, opts, rng, order)  # dask data closed over
        if "fwd" in opts.modes:
            _push_forward(problem, opts, u, order, pushed, skipped)
    v = random_direction(rng, problem.outs)
    xs = problem.cast(opts.dtype)
    eps = opts.eps_for(problem)
    real_dtype = max((np.finfo(x.dtype).dtype for x in xs), key=lambda d: np.finfo(d).eps)
    if opts.detect_nondifferentiable:
        check = fast_nondifferentiable(problem, opts, xs, u, eps, order, real_dtype)
        if check is not None:
            return [check]
    plus = evaluate(problem, shifted(xs, u, eps))
    minus = evaluate(problem, shifted(xs, u, -eps))
    numeric = pairing(v, [(p - m) / (2 * eps) for p, m in zip(plus, minus)])
    magnitude = pairing([np.abs(backend.to_host(t)) for t in v],
                        [np.abs(p) + np.abs(m) for p, m in zip(plus, minus)])
    # rounding_noise is written for arrays; a scalar magnitude works as well.
    noise = float(rounding_noise(magnitude, real_dtype, 2 * eps))  # type: ignore[arg-type]
    a_tol, r_tol = fast_tolerance(problem, opts)
    tol = a_tol * l1_norm(u) * l1_norm(v) + r_tol * abs(numeric) + noise
    checks = list(skipped)
    for mode in opts.modes:
        if skipped and mode == "fwd":
            continue
        analytic = directional(problem, mode, u, v, pushed.get(mode))
        entry = Entry("", "", numeric, analytic, tol)
        passed = entry.ratio <= 1
        check = Check("directional", mode, problem.label, order, passed,
                      ", ".join(problem.out_names), ", ".join(problem.in_names),
                      max_abs_error=entry.error, max_ratio=entry.ratio, num_failed=int(not passed),
                      num_compared=1, worst=[entry], atol=a_tol, rtol=r_tol)
        if not passed:
            explain_fast_failure(problem, opts, mode, check, order)
        checks.append(check)
    return checks


def _push_forward(problem: Problem, opts: Options, u, order: int, pushed: dict,
                  skipped: list) -> bool:
    """``u`` pushed forward through the linearization into ``pushed["fwd"]``; where the
    function has no forward-mode rule (and the modes were not asked for explicitly), a
    skipped check saying why goes into ``skipped`` instead, and the result is False."""
    try:
        pushed["fwd"] = problem.push_linearized(u)
    except FORWARD_REFUSALS as e:
        reason = forward_refusal(e)
        if reason is None or not opts.auto_modes:
            raise
        skipped.append(skipped_check(problem, "fwd", order, reason))
        return False
    return True


def lazy_fast_checks(problem: Problem, opts: Options, rng, order: int) -> list[Check]:
    """Fast mode on dask inputs: ``vᵀ J u`` numerically (two evaluations of f) and
    analytically (a pullback and a linearized jvp), with the tolerance's norms, all built as
    one dask graph and computed together: one compute, however large the inputs, and
    nothing gathered on the client but a handful of scalars.  With
    ``detect_nondifferentiable``, the 5-point smoothness test along ``u`` joins the graph
    as one more scalar (three more evaluations of f); only when it fails are more computes
    spent, naming the coordinates as on NumPy."""
    import dask
    u = lazy_direction(rng, problem.leaves)
    modes = [m for m in opts.modes]
    pushed: dict = {}
    skipped: list[Check] = []
    problem.linearization()
    if "fwd" in modes and not _push_forward(problem, opts, u, order, pushed, skipped):
        modes.remove("fwd")
    v = lazy_direction(rng, problem.outs)
    xs = problem.cast(opts.dtype)
    eps = opts.eps_for(problem)
    real_dtype = max((np.finfo(x.dtype).dtype for x in xs), key=lambda d: np.finfo(d).eps)
    plus = problem.fun(*shifted(xs, u, eps))
    minus = problem.fun(*shifted(xs, u, -eps))
    lazy = {"numeric": lazy_pairing(v, [(p - m) / (2 * eps) for p, m in zip(plus, minus)]),
            "magnitude": lazy_pairing([abs(t) for t in v],
                                      [abs(p) + abs(m) for p, m in zip(plus, minus)]),
            "norms": lazy_l1_norm(u) * lazy_l1_norm(v)}
    if opts.detect_nondifferentiable:
        lazy["kinked"] = lazy_not_smooth(problem, opts, xs, u, eps, plus, minus, real_dtype)
    if "rev" in modes:
        cts = [c.conj() if is_complex(get_aval(c).dtype) else c for c in v]
        grads = problem.pullback()(cts)
        lazy["rev"] = lazy_pairing([g.conj() if is_complex(get_aval(g).dtype) else g
                                    for g in grads], u)
    if "fwd" in modes:
        lazy["fwd"] = lazy_pairing(v, pushed["fwd"])
    (values,) = dask.compute(lazy)
    if opts.detect_nondifferentiable and bool(values["kinked"]):
        return [not_smooth_check(problem, opts, eps, order)]
    numeric = float(values["numeric"])
    noise = float(rounding_noise(float(values["magnitude"]), real_dtype,  # type: ignore[arg-type]
                                 2 * eps))
    a_tol, r_tol = fast_tolerance(problem, opts)
    tol = a_tol * float(values["norms"]) + r_tol * abs(numeric) + noise
    checks = list(skipped)
    for mode in modes:
        entry = Entry("", "", numeric, float(values[mode]), tol)
        passed = entry.ratio <= 1
        check = Check("directional", mode, problem.label, order, passed,
                      ", ".join(problem.out_names), ", ".join(problem.in_names),
                      max_abs_error=entry.error, max_ratio=entry.ratio, num_failed=int(not passed),
                      num_compared=1, worst=[entry], atol=a_tol, rtol=r_tol)
        if not passed:
            check.message = ("The inputs are dask arrays: run gradcheck with fast_mode=False on "
                             "a small NumPy slice of them to see which entries are wrong.")
        checks.append(check)
    return checks


def backend_note(problem: Problem) -> str | None:
    """The report's line naming the array library of dask inputs and their chunks, None
    when no input is a dask array."""
    lazy = [(name, x) for name, x in zip(problem.in_names, problem.leaves) if any_lazy([x])]
    if not lazy:
        return None
    parts = []
    for name, x in lazy:
        blocks = " x ".join(map(str, x.numblocks))
        largest = ", ".join(str(max(c, default=0)) for c in x.chunks)
        parts.append(f"{name} in {blocks} chunks of up to ({largest})")
    meta = type(lazy[0][1]._meta).__module__.split(".")[0]
    return f"inputs on dask.array, chunks backed by {meta}: " + "; ".join(parts)


#: Largest Jacobian (entries) full mode builds from dask inputs: every group of columns is
#: a computation of the whole graph, so beyond this fast mode is the check to run.
MAX_LAZY_JACOBIAN = 100_000


def lazy_size_guard(problem: Problem) -> None:
    """Refuse full mode on dask inputs whose Jacobian has more than ``MAX_LAZY_JACOBIAN``
    entries, with the count and what to do instead."""
    if not any_lazy(problem.leaves):
        return
    n_in, n_out = sum(problem.in_sizes), sum(problem.out_sizes)
    if n_in * n_out > MAX_LAZY_JACOBIAN:
        raise ValueError(
            f"gradcheck of {problem.label}: full mode on dask arrays would compute a Jacobian "
            f"of {n_out} x {n_in} = {n_in * n_out:,} real entries (the limit for dask inputs "
            f"is {MAX_LAZY_JACOBIAN:,}), computing the graph once per group of columns; "
            f"use fast_mode=True, which checks vᵀJu with one compute ({backend_note(problem)})")


def directional(problem: Problem, mode: str, u: list, v: list, tangents=None) -> float:
    if mode == "rev":
        cts = [c.conj() if is_complex(get_aval(c).dtype) else c for c in v]
        grads = problem.pullback()(cts)
        problem.directional_cache[mode] = (cts, grads)
        return pairing([np.conj(g) if is_complex(g.dtype) else g
                        for g in map(backend.to_host, grads)], u)
    tangents = problem.push(u) if tangents is None else tangents
    problem.directional_cache[mode] = (u, tangents)
    return pairing(v, tangents)


def explain_fast_failure(problem: Problem, opts: Options, mode: str, check: Check,
                         order: int) -> None:
    """Re-run a failed fast check in full mode (small problems) to name the entries."""
    n = sum(problem.in_sizes) * sum(problem.out_sizes)
    if n > FULL_RECHECK:
        check.message = ("The problem is too large to re-run in full mode automatically; run "
                         "gradcheck with fast_mode=False on a smaller input to see which "
                         "entries are wrong.")
        return
    num = numeric_jacobian(problem, opts.eps_for(problem), opts.dtype, opts.chunk_size)
    blocks = jacobian_checks(problem, num, analytic_jacobian(problem, mode, opts.chunk_size),
                             mode, order, opts.atol, opts.rtol)
    bad = [b for b in blocks if not b.passed]
    if bad:
        lines = ["Full mode (every entry) agrees that the derivative is wrong:"]
        for b in bad:
            lines.append(format_jacobian_check(b, indent="  "))
        check.message = "\n".join(lines)
    else:
        check.message = ("Full mode (every entry) would pass at these tolerances (max "
                         f"error/tolerance {max(b.max_ratio for b in blocks):.3g}); the fast "
                         "check's tolerance may be too tight for this function.")
    precision_diagnosis(problem, num, mode, bad, order, opts.atol, opts.rtol, opts.chunk_size)
    if bad and all(b.precision_only for b in bad):
        check.precision_only = True
        check.message += "\n" + bad[0].message


def fast_nondifferentiable(problem, opts, xs, u, eps, order, real_dtype):
    """The 5-point stencil along u; if f is not smooth along u, name the coordinates."""
    values = [np.concatenate([realify(y) for y in evaluate(problem, shifted(xs, u, s * eps))])
              for s in (1.0, -1.0, 0.5, -0.5, 0.0)]
    plus, minus, half_plus, half_minus, f0 = values
    right = (4 * half_plus - 3 * f0 - plus) / eps
    left = (3 * f0 - 4 * half_minus + minus) / eps
    scale = (np.abs(plus) + 4 * np.abs(half_plus) + 6 * np.abs(f0) + 4 * np.abs(half_minus)
             + np.abs(minus))
    a_tol, r_tol = fast_tolerance(problem, opts)
    tol = (a_tol + r_tol * np.maximum(np.abs(left), np.abs(right))
           + rounding_noise(scale, real_dtype, eps))
    finite = np.isfinite(f0)
    changed = np.zeros_like(finite)
    for val in values[:4]:
        changed |= np.isfinite(val) != finite
    if not ((np.abs(right - left) > tol) | changed).any():
        return None
    return not_smooth_check(problem, opts, eps, order)


def lazy_not_smooth(problem, opts, xs, u, eps, plus, minus, real_dtype):
    """``fast_nondifferentiable``'s test on dask values, uncomputed: a 0-d dask boolean,
    whether f is not smooth along ``u`` somewhere (``plus``, ``minus``: f at ``xs ± eps
    u``; the stencil's other three points are built here)."""
    import dask.array as da
    half_plus = problem.fun(*shifted(xs, u, 0.5 * eps))
    half_minus = problem.fun(*shifted(xs, u, -0.5 * eps))
    f0 = problem.fun(*xs)
    a_tol, r_tol = fast_tolerance(problem, opts)
    kinked = None  # (no zero of dask's: its NumPy chunk would not mix with CuPy chunks)
    for point in zip(plus, minus, half_plus, half_minus, f0):
        point = [da.asarray(y) for y in point]
        parts = ([[y.real for y in point], [y.imag for y in point]]
                 if is_complex(point[0].dtype) else [point])
        for p, m, hp, hm, z in parts:
            right = (4 * hp - 3 * z - p) / eps
            left = (3 * z - 4 * hm + m) / eps
            scale = abs(p) + 4 * abs(hp) + 6 * abs(z) + 4 * abs(hm) + abs(m)
            tol = (a_tol + r_tol * da.maximum(abs(left), abs(right))
                   + rounding_noise(scale, real_dtype, eps))
            finite = da.isfinite(z)
            changed = ((da.isfinite(p) != finite) | (da.isfinite(m) != finite)
                       | (da.isfinite(hp) != finite) | (da.isfinite(hm) != finite))
            found = ((abs(right - left) > tol) | changed).any()
            kinked = found if kinked is None else kinked | found
    return kinked if kinked is not None else da.zeros((), dtype=bool)


def not_smooth_check(problem, opts, eps, order) -> Check:
    """The failed check for f not smooth along the fast check's direction: the coordinates
    responsible where the Jacobian is small enough to recheck in full, else a note."""
    if sum(problem.in_sizes) * sum(problem.out_sizes) <= FULL_RECHECK:
        num = numeric_jacobian(problem, eps, opts.dtype, opts.chunk_size, detect=True)
        check = nondifferentiable_check(problem, num, order, opts.atol, opts.rtol)
        if not check.passed:
            return check
    return Check("nondifferentiable", None, problem.label, order, False, num_failed=1,
                 num_compared=1, max_ratio=math.inf,
                 message="  the function is not smooth along the random direction u "
                         "(one-sided directional derivatives differ)")


# ------------------------------------------------------------------------------------------
# The other checks
# ------------------------------------------------------------------------------------------


def worst_mismatch(a_list, b_list, atol, rtol) -> tuple[float, float, str]:
    worst, worst_err, where = 0.0, 0.0, ""
    for idx, (a, b) in enumerate(zip(a_list, b_list)):
        a, b = realify(a), realify(b)
        if a.shape != b.shape:
            return math.inf, math.inf, f"item {idx}: shapes differ"
        diff, ratio = compare(b, a, atol + rtol * np.abs(b))
        if ratio.size and ratio.max() > worst:
            j = int(ratio.argmax())
            worst, worst_err, where = float(ratio[j]), float(diff[j]), f"item {idx}, coordinate {j}"
    return worst, worst_err, where


def batched_check(problem: Problem, mode: str, rng, order: int, atol, rtol,
                  batch: int = 3) -> Check:
    kind = "batched_grad" if mode == "rev" else "batched_forward_grad"
    if mode == "rev":
        draws = [random_like(rng, problem.outs) for _ in range(batch)]
        pullback = problem.pullback()

        def one(*cts):
            return pullback(cts)
    else:
        draws = [random_like(rng, problem.leaves) for _ in range(batch)]

        def one(*ts):
            return problem.push(ts)
    stacked = [backend.array_module(draws[0][j]).stack([d[j] for d in draws])
               for j in range(len(draws[0]))]
    a_tol = atol if atol is not None else max(default_tolerance(a.dtype)
                                              for a in problem.in_avals + problem.out_avals)
    r_tol = rtol if rtol is not None else a_tol
    try:
        batched = vmap(one)(*stacked)
    except Exception as e:  # the point of the check is to report any failure of vmap
        return Check(kind, mode, problem.label, order, False,
                     message=f"vmap of the {'pullback' if mode == 'rev' else 'jvp'} raised "
                             f"{type(e).__name__}: {e}")
    loop = [one(*d) for d in draws]
    ratio, err, where = 0.0, 0.0, ""
    for b in range(batch):
        r, e, w = worst_mismatch(  # type: ignore[misc]  # `e` is free after the except
            [backend.to_host(x)[b] for x in batched], loop[b], a_tol, r_tol)
        if r > ratio:
            ratio, err, where = r, e, f"batch member {b}, {w}"  # type: ignore[misc]
    what = "pullback (vjp)" if mode == "rev" else "jvp"
    return Check(kind, mode, problem.label, order, ratio <= 1, max_abs_error=err,
                 max_ratio=ratio, num_compared=batch, atol=a_tol, rtol=r_tol,
                 message="" if ratio <= 1 else
                 f"vmap of the {what} over {batch} random "
                 f"{'cotangents' if mode == 'rev' else 'tangents'} differs from a Python loop "
                 f"({where}, error {err:.3g}): a batching rule is wrong")


def undefined_grad_check(problem: Problem, rng, order: int, atol, rtol) -> Check:
    outs, pullback = problem.outs, problem.pullback()
    problems = []
    grads = problem.symbolic_pullback()([symbolic_zero(y) for y in outs])
    for name, g, x in zip(problem.in_names, grads, problem.leaves):
        if type(g) is Zero:  # nothing flowed back: zeros of the input's type, as required
            continue
        g_aval, x_aval = get_aval(g), get_aval(x)
        if g_aval.shape != x_aval.shape or g_aval.dtype != x_aval.dtype:
            problems.append(f"for {name}: got {g_aval.str_short()}, expected "
                            f"{x_aval.str_short()}")
        elif bool(backend.array_module(g).any(g != 0)):
            problems.append(f"for {name}: nonzero values from zero cotangents")
    if len(outs) > 1:
        cts = random_like(rng, outs)
        for k in range(len(outs)):
            symbolic = list(cts)
            symbolic[k] = symbolic_zero(outs[k])
            explicit = list(cts)
            explicit[k] = zeros_like(outs[k])
            a, b = pullback(symbolic), pullback(explicit)
            ratio, err, where = worst_mismatch(a, b, 1e-12 if atol is None else atol,
                                               1e-12 if rtol is None else rtol)
            if ratio > 1:
                problems.append(f"a symbolic zero cotangent for {problem.out_names[k]} gives "
                                f"a different result from explicit zeros ({where}, error "
                                f"{err:.3g})")
    return Check("undefined_grad", "rev", problem.label, order, not problems,
                 num_compared=len(outs), num_failed=len(problems),
                 max_ratio=math.inf if problems else 0.0,
                 message="zero (undefined) cotangents must give zero gradients of the "
                         "inputs' shapes and dtypes; " + "; ".join(problems) if problems else "")


def zero_grad_output_check(problem: Problem, order: int) -> Check:
    """PyTorch's "backward not multiplied by grad_output": the pullback of explicit zero
    cotangents (arrays, not symbolic zeros, so they reach every ``custom_vjp`` backward
    rule) must be exactly zero, with the inputs' shapes and dtypes."""
    grads = problem.pullback()([zeros_like(y) for y in problem.outs])
    problems = []
    for name, g, x in zip(problem.in_names, grads, problem.leaves):
        g_aval, x_aval = get_aval(g), get_aval(x)
        if g_aval.shape != x_aval.shape or g_aval.dtype != x_aval.dtype:
            problems.append(f"for {name}: got {g_aval.str_short()}, expected "
                            f"{x_aval.str_short()}")
            continue
        nonzero = backend.to_host(backend.array_module(g).abs(g)).max(initial=0.0)
        if nonzero != 0:
            problems.append(f"for {name}: largest |gradient| {float(nonzero):.3g}")
    return Check("zero_grad_output", "rev", problem.label, order, not problems,
                 num_compared=len(grads), num_failed=len(problems),
                 max_ratio=math.inf if problems else 0.0,
                 message="backward not multiplied by grad_output: zero cotangents must give "
                         "exactly zero gradients of the inputs' shapes and dtypes; "
                         + "; ".join(problems) if problems else "")


def dtype_check(problem: Problem, modes: Sequence[str], rng, order: int) -> Check:
    problems = []
    if "rev" in modes:
        grads = problem.pullback()(random_like(rng, problem.outs))
        for name, g, x in zip(problem.in_names, grads, problem.leaves):
            ga, xa = get_aval(g), get_aval(x)
            if ga.dtype != xa.dtype or ga.shape != xa.shape:
                problems.append(f"gradient of {name} is {ga.str_short()}, the input is "
                                f"{xa.str_short()}")
    if "fwd" in modes:
        outs_t = problem.push(random_like(rng, problem.leaves))
        for name, t, y in zip(problem.out_names, outs_t, problem.outs):
            ta, ya = get_aval(t), get_aval(y)
            if ta.dtype != ya.dtype or ta.shape != ya.shape:
                problems.append(f"tangent of {name} is {ta.str_short()}, the output is "
                                f"{ya.str_short()}")
    return Check("grad_dtypes", None, problem.label, order, not problems,
                 num_failed=len(problems), max_ratio=math.inf if problems else 0.0,
                 message="; ".join(problems))


def nondeterminism_check(problem: Problem, modes, rng, order: int, tol: float) -> Check:
    problems, worst = [], 0.0
    # Fast mode already computed each derivative once; reuse that as the first run.
    cache = problem.directional_cache
    if "rev" in modes:
        cts, first = cache.get("rev") or (random_like(rng, problem.outs), None)
        first = problem.pullback()(cts) if first is None else first
        second = problem.pullback()(cts)
        diff = _mismatch(first, second, 1.0)
        worst = max(worst, diff)
        if not diff <= tol:
            problems.append(f"the pullback run twice on one cotangent differs by {diff:.3g}")
    if "fwd" in modes and "rev" not in modes:  # like PyTorch: rerun the backward pass
        ts, first = cache.get("fwd") or (random_like(rng, problem.leaves), None)
        first = problem.push(ts) if first is None else first
        second = problem.push(ts)
        diff = _mismatch(first, second, 1.0)
        worst = max(worst, diff)
        if not diff <= tol:
            problems.append(f"jvp run twice on one tangent differs by {diff:.3g}")
    return Check("nondeterminism", None, problem.label, order, not problems,
                 max_abs_error=worst, max_ratio=error_ratio(worst, tol), num_failed=len(problems),
                 message="; ".join(problems) + f" (nondet_tol={tol})" if problems else "")


def _mismatch(first: Sequence, second: Sequence, sign: float) -> float:
    """max |first - sign·second| over a list of arrays (on the host; for dask arrays one
    compute of the maxima, nothing else gathered)."""
    if any_lazy([*first, *second]):
        import dask
        maxima = []
        for a, b in zip(first, second):
            xp = backend.array_module(a, b)
            d = a - sign * b
            maxima += [xp.max(abs(d.real)), xp.max(abs(d.imag))] if is_complex(d.dtype) else \
                [xp.max(abs(d))]
        return max((float(m) for m in dask.compute(*maxima)), default=0.0)
    return max((float(np.max(np.abs(realify(a) - sign * realify(b)), initial=0.0))
                for a, b in zip(first, second)), default=0.0)


def rerun_checks(problem: Problem, modes, rng, order: int, tol: float) -> list[Check]:
    """The zero-cotangent and nondeterminism checks; with reverse mode, both in one more
    backward pass.

    The pullback of ``-v`` must be exactly ``-(pullback of v)`` (within ``nondet_tol``).
    Negation is exact in floating point and every rounding is symmetric, so a deterministic
    linear pullback passes bit for bit, while one that differs from run to run, adds a
    constant (is nonzero at zero cotangents) or ignores its cotangent fails. The pass is a
    true re-run: it executes every transpose rule and ``custom_vjp`` backward again. Only
    when it fails are the two checks run separately, to say which failed (or, when both
    pass, that the pullback is not linear in its cotangent)."""
    if "rev" not in modes:
        return [nondeterminism_check(problem, modes, rng, order, tol)]
    cts, first = problem.directional_cache.get("rev") or (random_like(rng, problem.outs), None)
    pullback = problem.pullback()
    first = pullback(cts) if first is None else first
    second = pullback([-c for c in cts])
    typed = all(get_aval(g).shape == get_aval(x).shape and get_aval(g).dtype == get_aval(x).dtype
                for g, x in zip(second, problem.leaves))
    diff = _mismatch(first, second, -1.0) if typed else math.inf
    if diff <= tol:
        return [Check("zero_grad_output", "rev", problem.label, order, True,
                      num_compared=len(second)),
                Check("nondeterminism", None, problem.label, order, True,
                      max_abs_error=diff, max_ratio=error_ratio(diff, tol))]
    checks = [zero_grad_output_check(problem, order),
              nondeterminism_check(problem, modes, rng, order, tol)]
    if all(c.passed for c in checks):
        checks.append(Check(
            "linearity", "rev", problem.label, order, False, max_abs_error=diff,
            max_ratio=error_ratio(diff, tol), num_failed=1, num_compared=1,
            message=f"the pullback is not linear in its cotangent: the pullback of -v differs "
                    f"from minus the pullback of v by {diff:.3g} (nondet_tol={tol}), though "
                    f"it is deterministic and zero at zero cotangents"))
    return checks


def vmap_consistency_check(problem: Problem, num: NumericJacobian, order: int, columns, atol,
                           rtol) -> Check:
    """Numerical Jacobian columns from vmap against the same columns from plain calls."""
    a_tols = np.zeros(num.jacobian.shape[0])
    r_tols = np.zeros(num.jacobian.shape[0])
    for k, i, rows, _ in jacobian_blocks(problem):
        a_tol, r_tol = problem.block_tolerance(k, i, atol, rtol)
        a_tols[rows] = np.maximum(a_tols[rows], a_tol)
        r_tols[rows] = np.maximum(r_tols[rows], r_tol)
    worst, where = 0.0, None
    columns = [j for j in columns if j < num.jacobian.shape[1]]
    for j in columns:
        direct = direct_column(problem, num, j)
        batched = num.jacobian[:, j]
        limit = a_tols + r_tols * np.abs(direct) + 2 * num.noise[:, j]
        diff, ratio = compare(direct, batched, limit)
        if ratio.size and ratio.max() > worst:
            worst, where = float(ratio.max()), (j, int(ratio.argmax()), float(diff.max()))
    message = ""
    if worst > 1:
        j, r, err = where
        message = (f"the numerical derivative from vmap({problem.label}) differs from the one "
                   f"from plain calls of {problem.label} (column {j}, row {r}, error "
                   f"{err:.3g}): a batching rule is wrong (or {problem.label} is not "
                   "deterministic), so full mode's numerical Jacobian (computed with vmap) "
                   "cannot be trusted; check_batched_grad and check_batched_forward_grad help "
                   "find the rule")
    return Check("vmap", None, problem.label, order, worst <= 1, max_ratio=worst,
                 num_compared=len(columns), message=message)
