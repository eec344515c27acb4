"""What gradcheck reports: its errors, the result object with every check it made, and the
text of the report."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from functrans.gradcheck.options import (INTERNAL_OPTIONS, MODE_WORDS, SEED_ENV_VAR, Options,
                                         current_test)
from functrans.gradcheck.pictures import draw_heatmap, draw_jacobians

__all__ = ["GradcheckError", "NondifferentiableError", "Entry", "error_ratio", "Check",
           "GradcheckResult", "format_number", "format_jacobian_check", "summary_line",
           "format_report"]


class GradcheckError(AssertionError):
    """A derivative disagrees with finite differences (or a related check failed).

    ``error.result`` is the :class:`GradcheckResult` with every measurement.

    >>> import numpy as np, functrans as ft
    >>> issubclass(ft.GradcheckError, AssertionError)
    True
    """

    def __init__(self, message: str, result: GradcheckResult | None = None):
        super().__init__(message)
        self.result = result


class NondifferentiableError(GradcheckError):
    """The function is not differentiable at the point checked (a kink such as ReLU at 0
    or a tie in ``max``), so finite differences cannot judge its derivative there.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> def relu(x):
    ...     return fnp.maximum(x, 0.0)
    ...
    >>> try:
    ...     ft.gradcheck(relu, detect_nondifferentiable=True)(np.array([0.0, 1.0]))
    ... except ft.NondifferentiableError as e:
    ...     print(str(e).splitlines()[2])
    ...
      d out[0] / d x[0] at x[0] = 0: one-sided derivatives differ: left 0, right 1
    """


@dataclass
class Entry:
    """One compared number: Jacobian entry ``d output[output_index] / d input[input_index]``
    (or, in fast mode, the directional derivative ``vᵀ J u``).

    >>> e = Entry("[0]", "[1]", numeric=1.0, analytic=1.5, tolerance=0.1)
    >>> e.error, e.ratio
    (0.5, 5.0)
    """

    output_index: str
    input_index: str
    numeric: float
    analytic: float
    tolerance: float

    @property
    def error(self) -> float:
        a, n = self.analytic, self.numeric
        if a == n or (math.isnan(a) and math.isnan(n)):
            return 0.0  # equal values, including equal infinities and two NaNs
        d = abs(a - n)
        return d if math.isfinite(d) else math.inf

    @property
    def ratio(self) -> float:
        """The error over the tolerance: above 1 fails."""
        return error_ratio(self.error, self.tolerance)


def error_ratio(error: float, tolerance: float) -> float:
    if error == 0:
        return 0.0
    return math.inf if tolerance == 0 else error / tolerance


@dataclass
class Check:
    """One comparison gradcheck made, and what it measured.

    Attributes
    ----------
    kind : str
        ``"jacobian"`` (a full-mode block), ``"directional"`` (fast mode),
        ``"nondifferentiable"``, ``"batched_grad"``, ``"batched_forward_grad"``,
        ``"undefined_grad"``, ``"zero_grad_output"``, ``"grad_dtypes"``,
        ``"nondeterminism"``, ``"linearity"`` (a deterministic pullback that is zero at zero
        but not odd in its cotangent), ``"vmap"`` or ``"skipped"`` (a mode the function has
        no rule for, say forward mode of a ``custom_vjp`` function; it passes, and
        ``message`` says why).
    mode : str or None
        ``"fwd"`` (jvp) or ``"rev"`` (vjp); None for checks of neither mode.
    function : str
        What was differentiated: ``f``, or at order 2 ``jvp(f)`` / ``vjp(f)``.
    order : int
        The derivative order of the check (1 or 2).
    passed : bool
        Whether the check passed.
    output, input : str or None
        The output and input of a Jacobian block, named by their pytree paths (``out``,
        ``x``, ``w['b']``); None for checks of a whole function.
    max_abs_error : float
        The largest absolute difference between the analytic and the numeric values.
    max_ratio : float
        The largest error-to-tolerance ratio of the compared entries (above 1 fails).
    num_failed, num_compared : int
        How many entries exceeded their tolerance, of how many compared.
    worst : list of Entry
        The worst entries (indices, both values, tolerance), worst first, as the report
        prints them.
    numeric, analytic : numpy.ndarray or None
        The two Jacobian blocks of a full-mode check (rows: output elements, columns:
        input elements, complex numbers split into real and imaginary parts).
    atol, rtol : float or None
        The tolerances used: an entry passes when ``|analytic - numeric| <= atol + rtol *
        |numeric|``.
    message : str
        What went wrong (or, for a skipped mode, why it was skipped).
    precision_only : bool
        True for a failure of low-precision inputs (float32, float16, ...) that passes with
        the inputs promoted to 64 bits: a precision issue rather than a wrong rule.
    title : str
        A one-line description, as the report heads the check with.

    Examples
    --------
    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> check = ft.gradcheck(fnp.sin, modes="rev")(np.array([0.5])).checks[0]
    >>> check.kind, check.mode, check.output, check.input, check.passed
    ('jacobian', 'rev', 'out', 'x', True)
    """

    kind: str
    mode: str | None
    function: str
    order: int
    passed: bool
    output: str | None = None
    input: str | None = None
    max_abs_error: float = 0.0
    max_ratio: float = 0.0
    num_failed: int = 0
    num_compared: int = 0
    worst: list = field(default_factory=list)
    numeric: np.ndarray | None = None
    analytic: np.ndarray | None = None
    atol: float | None = None
    rtol: float | None = None
    message: str = ""
    precision_only: bool = False

    @property
    def title(self) -> str:
        """A one-line description of the check, as the report heads it."""
        if self.kind == "skipped":
            return f"{MODE_WORDS[self.mode]} of {self.function} (order {self.order}) skipped"
        what = {"jacobian": "Jacobian", "directional": "directional derivative vᵀJu"}.get(
            self.kind, self.kind.replace("_", " "))
        mode = f"{MODE_WORDS[self.mode]} " if self.mode else ""
        block = f" of {self.output} w.r.t. {self.input}" if self.output and self.input else ""
        return f"{mode}{what}{block}, function {self.function} (order {self.order})"


class GradcheckResult:
    """What a gradcheck measured.  Truthy when every check passed.

    ``gradcheck(f, ...)(*args)`` returns it (with ``raise_exception=False`` also when a
    check failed; otherwise a failure raises :class:`GradcheckError`, whose ``result`` is
    this object).

    Attributes
    ----------
    checks : list of Check
        Every comparison made, in order: one per Jacobian block (output, input) and mode in
        full mode, one per directional derivative in fast mode, plus the extra checks
        (zero cotangents, batching, dtypes, nondeterminism) and one ``"skipped"`` entry per
        mode the function has no rule for.
    ok : bool
        True when every check passed (``bool(result)`` is the same).
    failures : list of Check
        The checks that failed, in order (empty when ``ok``).
    skipped : list of Check
        The modes not checked because the function has no rule for them (forward mode of a
        ``custom_vjp`` function, say); each is a passed check whose ``message`` says why.
    max_ratio : float
        The worst error-to-tolerance ratio over all checks: at most 1 passes, 0.0 when
        nothing was compared.
    errors : dict
        ``(mode, function, output, input)`` -> the largest absolute error of that
        derivative comparison (Jacobian and directional checks only).
    function : str
        The name of the checked function, as reports print it.
    seed : int
        The seed of the random directions and cotangents; pass it back as ``seed=`` to
        reproduce the check.
    options : dict
        The options the check ran with (tolerances, modes, order, ...).
    notes : list of str
        Remarks the report prints: what was not checked and why, which reverse-mode plan
        ran.

    Examples
    --------
    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> result = ft.gradcheck(fnp.sin)(np.array([0.5, 1.0]))
    >>> bool(result), result.max_ratio < 1
    (True, True)
    >>> sorted({c.mode for c in result.checks if c.kind == "jacobian"})
    ['fwd', 'rev']
    """

    def __init__(self, function: str, seed: int, options: dict):
        self.function = function
        self.seed = seed
        self.options = options
        self.checks: list[Check] = []
        # Free-form remarks printed with the report (what was not checked, and why; which
        # path a derivative took); checks and transforms append to it.
        self.notes: list[str] = []
        self.layouts: dict = {}  # (function, array name) -> (shape, is_complex), for pictures

    @property
    def ok(self) -> bool:
        """True when every check passed."""
        return all(c.passed for c in self.checks)

    def __bool__(self) -> bool:
        return self.ok

    @property
    def failures(self) -> list[Check]:
        """The checks that failed, in the order they ran."""
        return [c for c in self.checks if not c.passed]

    @property
    def skipped(self) -> list[Check]:
        """The modes not checked because the function has no rule for them (say forward
        mode of a ``custom_vjp`` function), each a passed :class:`Check` of kind
        ``"skipped"`` whose ``message`` says why."""
        return [c for c in self.checks if c.kind == "skipped"]

    @property
    def max_ratio(self) -> float:
        """The worst error-to-tolerance ratio of all checks (at most 1 passes)."""
        return max((c.max_ratio for c in self.checks), default=0.0)

    @property
    def errors(self) -> dict:
        """``(mode, function, output, input)`` -> the largest absolute error of that
        derivative comparison."""
        return {(c.mode, c.function, c.output, c.input): c.max_abs_error
                for c in self.checks if c.kind in ("jacobian", "directional")}

    def __repr__(self):
        status = "passed" if self.ok else f"FAILED ({len(self.failures)} failed checks)"
        return (f"<GradcheckResult {self.function}: {status}, {len(self.checks)} checks, "
                f"max error/tolerance {self.max_ratio:.3g}, seed {self.seed}>")

    def report(self) -> str:
        """A readable account of the failures (or a one-line summary when all passed).

        >>> import numpy as np, functrans as ft, functrans.numpy as fnp
        >>> print(ft.gradcheck(fnp.exp)(np.zeros(2)).report().splitlines()[0])
        gradcheck of exp passed: 2 derivative checks (full mode, order 1, modes fwd+rev, seed 0)
        """
        return format_report(self)

    def record_arrays(self, function: str, names: list, avals: list) -> None:
        """Remember the shapes of the arrays ``function`` takes or returns (by name), so
        pictures label Jacobian rows and columns with multi-indices."""
        for name, aval in zip(names, avals):
            self.layouts[(function, name)] = (tuple(aval.shape), np.dtype(aval.dtype).kind == "c")

    def save_heatmap(self, path, format: str | None = None) -> None:
        """Draw every derivative comparison as a picture (needs matplotlib, an optional
        dependency): each full-mode Jacobian block as a heat map of
        ``|numeric − analytic| / (atol + rtol·|numeric|)``, calm blue where the check
        passes and red where an entry exceeds its tolerance, its axes labelled with the
        output's and input's multi-indices (``.real`` / ``.imag`` for complex arrays);
        fast-mode checks as bars of their error-to-tolerance ratio.  ``format`` (``"png"``,
        ``"svg"``, ``"pdf"``) defaults to the file's extension.

        >>> import os, tempfile, numpy as np, functrans as ft, functrans.numpy as fnp
        >>> result = ft.gradcheck(fnp.tanh)(np.array([0.1, 0.2, 0.3]))
        >>> try:
        ...     import matplotlib
        ... except ImportError:
        ...     matplotlib = None
        ...
        >>> path = os.path.join(tempfile.mkdtemp(), "jacobian_errors.png")
        >>> if matplotlib is not None:
        ...     result.save_heatmap(path)
        ...     assert os.path.getsize(path) > 0
        ...
        """
        draw_heatmap(self, path, format)

    def save_jacobians(self, path, max_entries: int = 400, format: str | None = None) -> None:
        """Draw the numeric and the analytic Jacobian side by side (same colour scale),
        with their error-to-tolerance ratio, for every full-mode block of at most
        ``max_entries`` entries (needs matplotlib).

        >>> import os, tempfile, numpy as np, functrans as ft, functrans.numpy as fnp
        >>> result = ft.gradcheck(fnp.tanh)(np.array([0.1, 0.2, 0.3]))
        >>> try:
        ...     import matplotlib
        ... except ImportError:
        ...     matplotlib = None
        ...
        >>> if matplotlib is not None:
        ...     result.save_jacobians(os.path.join(tempfile.mkdtemp(), "jacobians.png"))
        ...
        """
        draw_jacobians(self, path, max_entries, format)


# ------------------------------------------------------------------------------------------
# Reports
# ------------------------------------------------------------------------------------------


def format_number(x: float) -> str:
    return f"{x:.6g}" if np.isfinite(x) else str(x)


def format_jacobian_check(c: Check, indent: str = "") -> str:
    lines = []
    if c.kind == "jacobian":
        lines.append(f"{c.num_failed} of {c.num_compared} entries exceed the tolerance "
                     f"(atol {c.atol:g} + rtol {c.rtol:g}·|numeric|); the worst:")
        header = ["output index", "input index", "numeric", "analytic", "|difference|",
                  "tolerance", "ratio"]
    else:
        lines.append(f"vᵀJu disagrees (atol {c.atol:g}·|u|₁|v|₁ + rtol {c.rtol:g}·|numeric|):")
        header = ["", "", "numeric", "analytic", "|difference|", "tolerance", "ratio"]
    rows = [header]
    for e in c.worst:
        if e.ratio <= 1 and c.kind == "jacobian":
            break
        rows.append([f"{c.output}{e.output_index}" if c.kind == "jacobian" else "",
                     f"{c.input}{e.input_index}" if c.kind == "jacobian" else "",
                     format_number(e.numeric), format_number(e.analytic), f"{e.error:.3g}",
                     f"{e.tolerance:.3g}", f"{e.ratio:.3g}"])
    widths = [max(len(r[j]) for r in rows) for j in range(len(header))]
    for r in rows:
        lines.append("  " + "  ".join(s.ljust(w) for s, w in zip(r, widths) if w).rstrip())
    if c.numeric is not None and c.numeric.size <= 64:
        opts: dict[str, Any] = dict(precision=6, suppress_small=True, max_line_width=100)
        lines.append(f"numeric Jacobian (rows: {c.output}, columns: {c.input}):")
        lines.extend("  " + s for s in np.array2string(c.numeric, **opts).splitlines())
        lines.append(f"analytic Jacobian ({MODE_WORDS[c.mode]}):")
        lines.extend("  " + s for s in np.array2string(c.analytic, **opts).splitlines())
    if c.message:
        lines.extend(c.message.splitlines())
    return "\n".join(indent + line for line in lines)


def summary_line(result: GradcheckResult) -> str:
    o = result.options
    mode = "fast mode" if o["fast_mode"] else "full mode"
    skipped = {c.mode for c in result.skipped}
    modes = "+".join(m for m in o["modes"] if m not in skipped)
    if skipped:
        modes += f" ({'+'.join(sorted(skipped))} skipped)"
    return f"{mode}, order {o['order']}, modes {modes}, seed {result.seed}"


def format_report(result: GradcheckResult) -> str:
    derivative = [c for c in result.checks if c.kind in ("jacobian", "directional")]
    if result.ok:
        lines = [f"gradcheck of {result.function} passed: {len(derivative)} derivative checks "
                 f"({summary_line(result)})",
                 f"  largest error/tolerance ratio {result.max_ratio:.3g}"]
        lines += [f"  {c.title}: {c.message}" for c in result.skipped]
        lines += [f"  note: {n}" for n in result.notes]
        return "\n".join(lines)
    failures = result.failures
    lines = [f"gradcheck of {result.function} failed: {len(failures)} of "
             f"{len(result.checks)} checks ({summary_line(result)})"]
    for n, c in enumerate(failures, 1):
        if c.kind == "nondifferentiable":
            lines.append(f"[{n}] {c.function} is not differentiable at the point checked:")
            lines.append(c.message)
            lines.append("    Finite differences cannot judge a derivative at a kink (ReLU at 0,"
                         " max or abs with ties, ...): move the point away from it.")
            continue
        precision = " (only a precision issue)" if c.precision_only else ""
        lines.append(f"[{n}] {c.title}{precision}")
        if c.kind in ("jacobian", "directional"):
            lines.append(format_jacobian_check(c, indent="    "))
        else:
            lines.append("    " + c.message)
    passed = [c for c in derivative if c.passed]
    if passed:
        lines.append("passed: " + "; ".join(
            f"{c.mode} {c.function} d {c.output}/d {c.input} (ratio {c.max_ratio:.2g})"
            if c.kind == "jacobian" else f"{c.mode} {c.function} (ratio {c.max_ratio:.2g})"
            for c in passed[:8]) + ("; ..." if len(passed) > 8 else ""))
    lines += [f"{c.title}: {c.message}" for c in result.skipped]
    lines += [f"note: {n}" for n in result.notes]
    if not result.options["detect_nondifferentiable"] and any(
            c.kind in ("jacobian", "directional") and not c.precision_only for c in failures):
        lines.append("hint: a kink at or near the point (ReLU at 0, ties in max, abs at 0) also "
                     "makes finite\n      differences disagree; detect_nondifferentiable=True "
                     "finds it")
    options = ", ".join(f"{k}={v!r}" for k, v in result.options.items()
                        if k not in ("seed", "raise_exception") and k not in INTERNAL_OPTIONS
                        and v != getattr(Options(), k))
    call = (f"functrans.gradcheck({result.function}, seed={result.seed}"
            f"{', ' + options if options else ''})(...)")
    explicit = result.options["seed"] is not None
    if current_test():  # the test's own rerun also reproduces its data
        lines.append(f"reproduce: {current_test()}  (the check alone: {call})")
    elif explicit:
        lines.append(f"reproduce: {call}")
    else:
        lines.append(f"reproduce: {call}  or set {SEED_ENV_VAR}={result.seed}")
    return "\n".join(lines)
