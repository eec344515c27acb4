"""Gradient checking: compare functrans's derivatives with finite differences.

Type of the transform::

    gradcheck : (f, options) -> (args -> GradcheckResult)      raises GradcheckError

Two strategies, both on the *realified* function (every complex number is two real
coordinates, its real and imaginary part):

* **full mode** builds the whole numerical Jacobian from central differences, evaluating
  all perturbed points at once with ``vmap`` (in chunks), and the analytic Jacobian with
  ``vmap`` of the pullback (reverse mode) and of ``jvp`` (forward mode); every entry is
  compared.
* **fast mode** draws unit directions ``u`` (inputs) and ``v`` (outputs) and compares the
  number ``vᵀ J u``: two evaluations of ``f`` give it numerically, one pullback and one
  ``jvp`` give it analytically.

Complex convention (JAX's, which functrans follows): ``jvp`` pushes a complex tangent
through the real-linear map ``J``; the pullback is its plain transpose for the pairing
``Re(a·b)`` (no conjugation).  So for a real-valued ``f`` of ``z = x + iy`` the pullback of
``1`` is ``∂f/∂x − i ∂f/∂y = 2 ∂f/∂z``; e.g. for ``|z|²`` it is ``2·conj(z)``.  The
realified Jacobian row of an output coordinate ``c`` (``1`` for a real part, ``1j`` for an
imaginary part) is ``conj(pullback(conj(c)))``, split into real and imaginary parts.
"""
from __future__ import annotations

import functools
import inspect
import math
import os
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from typing_extensions import ParamSpec

from functrans import core
from functrans.api import vmap
from functrans.backend import array_module
from functrans.core import ConcretizationTypeError, TracerArrayConversionError, get_aval
from functrans.interpreters import ad, transpose
from functrans.primitives.conversion import convert_element_type, zeros_like
from functrans.tree_util import PyTreeDef, tree_flatten, tree_unflatten

__all__ = ["gradcheck", "GradcheckError", "NondifferentiableError", "GradcheckResult",
           "Check", "Entry", "default_tolerance", "SEED_ENV_VAR"]

#: Environment variable that sets the seed of every check whose ``seed`` is None
#: (an integer, or ``random`` for a fresh seed each time; the report prints it).
SEED_ENV_VAR = "FUNCTRANS_TEST_SEED"

# Tolerances by dtype (atol = rtol), JAX's table for gradient checks.
_TOLERANCE = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 2e-3,
              np.dtype(np.float64): 1e-5, np.dtype(np.complex64): 1e-3,
              np.dtype(np.complex128): 1e-5}
# Step of the central difference, by the dtype the numerical side is computed in.
_EPS = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-6}
# A difference quotient of values carrying a few ulps of rounding error each is uncertain
# by about NOISE_ULPS * ulp * |f| / step; that uncertainty is added to the tolerance.
_NOISE_ULPS = 64
# Perturbed points per vmap call are chunked so that the batched inputs and outputs hold
# at most this many elements (about 64 MB in float64).
_CHUNK_ELEMENTS = 1 << 23
# Largest Jacobian (entries) full mode builds; fast mode has no limit.
_MAX_JACOBIAN = 50_000_000
# Fast-mode failures on problems with at most this many Jacobian entries are re-run in
# full mode to name the worst entries.
_FULL_RECHECK = 200_000
_LOW_PRECISION = frozenset(np.dtype(d) for d in (np.float16, np.float32, np.complex64))
_MODES = ("fwd", "rev")
_MODE_WORDS = {"fwd": "forward mode (jvp)", "rev": "reverse mode (vjp)"}
P = ParamSpec("P")


def default_tolerance(dtype) -> float:
    """The default ``atol`` (and ``rtol``) gradcheck uses for values of ``dtype``.

    >>> import numpy as np
    >>> default_tolerance(np.float32), default_tolerance(np.complex128)
    (0.002, 1e-05)
    """
    dtype = np.dtype(dtype)
    if dtype in _TOLERANCE:
        return _TOLERANCE[dtype]
    return 1e-1 if dtype.itemsize <= 2 else 1e-5  # e.g. bfloat16 from ml_dtypes


def _resolve_seed(seed: int | None) -> int:
    """``seed`` itself, else the ``FUNCTRANS_TEST_SEED`` environment variable, else 0."""
    if seed is not None:
        return int(seed)
    env = os.environ.get(SEED_ENV_VAR, "").strip()
    if not env:
        return 0
    if env.lower() == "random":
        return int(np.random.SeedSequence().entropy % (2 ** 32))
    try:
        return int(env)
    except ValueError:
        raise ValueError(f"{SEED_ENV_VAR}={env!r}: expected an integer or 'random'") from None


# ------------------------------------------------------------------------------------------
# Errors and results
# ------------------------------------------------------------------------------------------


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
    >>> try:
    ...     ft.gradcheck(relu, detect_nondifferentiable=True)(np.array([0.0, 1.0]))
    ... except ft.NondifferentiableError as e:
    ...     print(str(e).splitlines()[2])
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
        return _ratio(self.error, self.tolerance)


def _ratio(error: float, tolerance: float) -> float:
    if error == 0:
        return 0.0
    return math.inf if tolerance == 0 else error / tolerance


@dataclass
class Check:
    """One comparison gradcheck made, and what it measured.

    ``kind`` is ``"jacobian"`` (a full-mode block), ``"directional"`` (fast mode),
    ``"nondifferentiable"``, ``"batched_grad"``, ``"batched_forward_grad"``,
    ``"undefined_grad"``, ``"grad_dtypes"``, ``"nondeterminism"`` or ``"vmap"``.
    ``function`` is what was differentiated: ``f``, or at order 2 ``jvp(f)`` / ``vjp(f)``.

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
        what = {"jacobian": "Jacobian", "directional": "directional derivative vᵀJu"}.get(
            self.kind, self.kind.replace("_", " "))
        mode = f"{_MODE_WORDS[self.mode]} " if self.mode else ""
        block = f" of {self.output} w.r.t. {self.input}" if self.output and self.input else ""
        return f"{mode}{what}{block}, function {self.function} (order {self.order})"


class GradcheckResult:
    """What a gradcheck measured.  Truthy when every check passed.

    ``checks`` lists every :class:`Check`; ``failures`` the failed ones; ``errors`` maps
    ``(mode, function, output, input)`` to the largest absolute error of each derivative
    comparison; ``max_ratio`` is the worst error-to-tolerance ratio (at most 1 passes).

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
        self.notes: list[str] = []

    @property
    def ok(self) -> bool:
        return all(c.passed for c in self.checks)

    def __bool__(self) -> bool:
        return self.ok

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]

    @property
    def max_ratio(self) -> float:
        return max((c.max_ratio for c in self.checks), default=0.0)

    @property
    def errors(self) -> dict:
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
        return _format_report(self)

    def save_heatmap(self, path) -> None:
        """Draw ``|numeric − analytic|`` for every full-mode Jacobian block as a PNG
        (needs matplotlib, an optional dependency).

        >>> import os, tempfile, numpy as np, functrans as ft, functrans.numpy as fnp
        >>> result = ft.gradcheck(fnp.tanh)(np.array([0.1, 0.2, 0.3]))
        >>> try:
        ...     import matplotlib
        ... except ImportError:
        ...     matplotlib = None
        >>> path = os.path.join(tempfile.mkdtemp(), "jacobian_errors.png")
        >>> if matplotlib is not None:
        ...     result.save_heatmap(path)
        ...     assert os.path.getsize(path) > 0
        """
        try:
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure
        except ImportError:
            raise ImportError("save_heatmap needs matplotlib (an optional dependency): "
                              "pip install matplotlib") from None
        blocks = [c for c in self.checks if c.kind == "jacobian" and c.numeric is not None]
        if not blocks:
            raise ValueError("save_heatmap: this result holds no Jacobian blocks; run the "
                             "check in full mode (fast_mode=False)")
        cols = min(3, len(blocks))
        rows = -(-len(blocks) // cols)
        fig = Figure(figsize=(4.2 * cols, 3.6 * rows))
        FigureCanvasAgg(fig)
        for k, c in enumerate(blocks):
            ax = fig.add_subplot(rows, cols, k + 1)
            diff = np.abs(c.analytic - c.numeric)
            image = ax.imshow(diff, aspect="auto", interpolation="nearest", cmap="viridis")
            fig.colorbar(image, ax=ax)
            status = "" if c.passed else " (FAILED)"
            ax.set_title(f"{c.mode} {c.function}: d {c.output} / d {c.input}{status}",
                         fontsize=8, color="black" if c.passed else "red")
            ax.set_xlabel(f"{c.input} (realified index)", fontsize=7)
            ax.set_ylabel(f"{c.output} (realified index)", fontsize=7)
        fig.suptitle(f"|numeric - analytic| for {self.function} (seed {self.seed})")
        fig.tight_layout(rect=(0, 0, 1, 1 - 0.4 / fig.get_figheight()))
        fig.savefig(path, format="png")


# ------------------------------------------------------------------------------------------
# Realification: complex values as pairs of real coordinates
# ------------------------------------------------------------------------------------------


def _host(x) -> np.ndarray:
    """A NumPy copy of an array (CuPy arrays are moved to the host)."""
    if hasattr(x, "get") and type(x).__module__.startswith("cupy"):
        return x.get()
    return np.asarray(x)


def _is_complex(dtype) -> bool:
    return np.dtype(dtype).kind == "c"


def _real_size(aval) -> int:
    return aval.size * (2 if _is_complex(aval.dtype) else 1)


def _realify(x, batch_dims: int = 0) -> np.ndarray:
    """Flatten ``x`` (after ``batch_dims`` leading axes) into float64 real coordinates: the
    real parts, then (for complex values) the imaginary parts."""
    x = _host(x)
    flat = x.reshape(x.shape[:batch_dims] + (-1,))
    if _is_complex(flat.dtype):
        return np.concatenate([flat.real, flat.imag], axis=-1).astype(np.float64)
    return flat.astype(np.float64)


def _coordinate_label(shape: tuple, is_complex: bool, j: int) -> str:
    size = math.prod(shape)
    part = ""
    if is_complex:
        part = ".real" if j < size else ".imag"
        j %= size
    if not shape:
        return part
    index = tuple(int(i) for i in np.unravel_index(j, shape))
    return f"[{', '.join(map(str, index))}]{part}"


def _pairing(a: Sequence, b: Sequence) -> float:
    """The real inner product Σ Re(conj(a)·b) of two lists of arrays."""
    total = 0.0
    for x, y in zip(a, b):
        x, y = _host(x).ravel(), _host(y).ravel()
        if _is_complex(x.dtype) or _is_complex(y.dtype):
            total += float(np.vdot(x.astype(np.complex128), y.astype(np.complex128)).real)
        else:
            total += float(np.dot(x.astype(np.float64, copy=False),
                                  y.astype(np.float64, copy=False)))
    return total


def _l1(xs: Sequence) -> float:
    return float(sum(np.sum(np.abs(_realify(x))) for x in xs))


def _unit(realified: np.ndarray, like, xp=np):
    """Inverse of _realify for one array: real coordinates back to ``like``'s dtype/shape."""
    aval = get_aval(like)
    if _is_complex(aval.dtype):
        n = aval.size
        values = realified[:n] + 1j * realified[n:]
    else:
        values = realified
    return xp.asarray(values.reshape(aval.shape).astype(aval.dtype))


def _random_direction(rng: np.random.Generator, values: Sequence, xp=np) -> list:
    """A random unit vector over all real coordinates of ``values`` in which no coordinate
    is tiny (each |component| is at least about 0.1/sqrt(N)), so no entry goes unseen."""
    sizes = [_real_size(get_aval(v)) for v in values]
    total = max(1, sum(sizes))
    r = rng.standard_normal(total)
    r /= np.linalg.norm(r) or 1.0
    floor = 0.1 / math.sqrt(total)
    small = np.abs(r) < floor
    if small.any():
        r[small] = np.copysign(floor, r[small])
        r /= np.linalg.norm(r)
    out, offset = [], 0
    for v, n in zip(values, sizes):
        out.append(_unit(r[offset:offset + n], v, xp))
        offset += n
    return out


def _random_like(rng: np.random.Generator, values: Sequence, xp=np) -> list:
    """Standard-normal arrays (complex where complex) shaped like ``values``."""
    out = []
    for v in values:
        aval = get_aval(v)
        out.append(_unit(rng.standard_normal(_real_size(aval)), v, xp))
    return out


def _numeric_dtype(dtype, override) -> np.dtype:
    """The dtype a leaf of ``dtype`` is perturbed in: 64-bit by default, ``override`` if
    given (its complex counterpart for complex leaves), or the leaf's own for "input"."""
    dtype = np.dtype(dtype)
    if isinstance(override, str) and override == "input":
        return dtype
    base = np.dtype(np.float64) if override is None else np.dtype(override)
    if base.kind not in "fc":
        raise TypeError(f"gradcheck: dtype must be a floating dtype, got {base.name}")
    if _is_complex(dtype):
        return np.result_type(base, np.complex64)
    return np.dtype(base.type(0).real.dtype)


def _zero_of(value):
    return ad.Zero(core.tangent_aval(get_aval(value)))


def _materialize(values: Sequence, likes: Sequence) -> list:
    """Symbolic Zero tangents/cotangents as zeros of their primal's type."""
    return [zeros_like(like) if type(v) is ad.Zero else v for v, like in zip(values, likes)]


# ------------------------------------------------------------------------------------------
# The problem: a function of flat checked inputs returning flat inexact outputs
# ------------------------------------------------------------------------------------------


class _Problem:
    """``fun(*leaves) -> [outputs]``, with names for reports.  Every leaf and output is
    inexact; the other inputs are closed over and the other outputs dropped."""

    def __init__(self, fun: Callable, leaves: list, in_names: list,
                 out_names: list | Callable, label: str):
        self.fun = fun
        self.leaves = leaves
        self.in_names = in_names
        self._out_names = out_names
        self.label = label
        self.in_avals = [get_aval(x) for x in leaves]
        self.in_sizes = [_real_size(a) for a in self.in_avals]
        self.xp = array_module(*leaves)
        self._outs = None
        self._pullback = None
        self._linearization = None
        self.directional_cache: dict = {}

    # The outputs come from whichever evaluation runs first (fast mode counts evaluations).
    @property
    def outs(self) -> list:
        if self._outs is None:
            self._set_outs(self.fun(*self.leaves))
        return self._outs

    def _set_outs(self, outs: list) -> None:
        if self._outs is None:
            self._outs = [_host(y) if isinstance(y, np.generic) else y for y in outs]
            self._out_avals = [get_aval(y) for y in self._outs]

    @property
    def out_avals(self) -> list:
        self.outs  # noqa: B018
        return self._out_avals

    @property
    def out_sizes(self) -> list:
        return [_real_size(a) for a in self.out_avals]

    @property
    def out_names(self) -> list:
        self.outs  # noqa: B018  (the names are known once the function has run)
        return self._out_names() if callable(self._out_names) else self._out_names

    def linearization(self) -> tuple:
        """``(jaxpr, residuals, out_tangents)`` from ``linearize_flat`` of ``fun`` at
        ``leaves``: computed once, shared by all checks of both modes."""
        if self._linearization is None:
            outs, jaxpr, consts, out_tangents = ad.linearize_flat(self.fun, self.leaves)
            self._set_outs(outs)
            self._linearization = (jaxpr, consts, out_tangents)
        return self._linearization

    def pullback(self) -> Callable:
        """The pullback of ``fun`` at ``leaves`` (the transpose of the linearization); it
        accepts symbolic Zero cotangents and returns materialized cotangents."""
        if self._pullback is None:
            pullback = transpose.linear_pullback(*self.linearization())
            self._pullback = lambda cts: _materialize(pullback(list(cts)), self.leaves)
        return self._pullback

    def push_linearized(self, tangents: Sequence) -> list:
        """``J·tangents`` from the linearization: forward mode without a second evaluation
        of ``fun`` when reverse mode has linearized it already."""
        outs_t = ad.eval_linearized(*self.linearization(), tangents)
        return _materialize(outs_t, self.outs)

    def push(self, tangents: Sequence) -> list:
        """``jvp`` of ``fun`` at ``leaves`` (tangents may be symbolic Zeros)."""
        outs_p, outs_t = ad.jvp_flat(self.fun, self.leaves, list(tangents))
        if self._outs is None and not any(isinstance(y, core.Tracer) for y in outs_p):
            self._set_outs(outs_p)
        return _materialize(outs_t, outs_p)

    @property
    def low_precision(self) -> bool:
        return any(a.dtype in _LOW_PRECISION for a in self.in_avals + self.out_avals)

    def cast(self, override) -> list:
        """The inputs in the dtype the numerical side is computed in."""
        return [x.astype(_numeric_dtype(a.dtype, override)) if hasattr(x, "astype") else
                np.asarray(x, _numeric_dtype(a.dtype, override))
                for x, a in zip(self.leaves, self.in_avals)]

    def promoted(self) -> _Problem:
        """The same function at the same point with every input promoted to 64 bits."""
        return _Problem(self.fun, self.cast(None), self.in_names, self._out_names, self.label)

    def block_tolerance(self, k: int, i: int, atol, rtol) -> tuple[float, float]:
        default = max(default_tolerance(self.out_avals[k].dtype),
                      default_tolerance(self.in_avals[i].dtype))
        return (default if atol is None else atol), (default if rtol is None else rtol)

    def derivative(self, mode: str, rng: np.random.Generator) -> _Problem:
        """The problem of checking ``jvp(f)`` (mode fwd: a function of the primals and a
        tangent) or ``vjp(f)`` (mode rev: of the primals and a cotangent)."""
        n = len(self.leaves)
        outs = self.outs
        out_names = self.out_names
        if mode == "fwd":
            extra = _random_like(rng, self.leaves, self.xp)

            def jvp_fun(*args):
                xs, ts = args[:n], args[n:]
                ts = [convert_element_type(t, get_aval(x).dtype) for t, x in zip(ts, xs)]
                outs_p, outs_t = ad.jvp_flat(self.fun, xs, ts)
                return _materialize(outs_t, outs_p)

            return _Problem(jvp_fun, self.leaves + extra,
                            self.in_names + [f"tangent of {n_}" for n_ in self.in_names],
                            [f"tangent of {n_}" for n_ in out_names],
                            f"jvp({self.label})")
        extra = _random_like(rng, outs, self.xp)

        def vjp_fun(*args):
            xs, cs = args[:n], args[n:]
            outs_p, pullback = transpose.vjp_flat(self.fun, xs)
            cs = [convert_element_type(c, get_aval(o).dtype) for c, o in zip(cs, outs_p)]
            return _materialize(pullback(cs), xs)

        return _Problem(vjp_fun, self.leaves + extra,
                        self.in_names + [f"cotangent of {n_}" for n_ in out_names],
                        [f"cotangent of {n_}" for n_ in self.in_names],
                        f"vjp({self.label})")


def _tree_paths(treedef: PyTreeDef) -> list[str]:
    """Python-like access paths (``[0]``, ``['w']``, ``.field``) of a pytree's leaves."""
    if treedef.node_type is None:
        return [""]
    children = treedef.children
    node_type, data = treedef.node_type, treedef.node_data
    if issubclass(node_type, dict) and isinstance(data, tuple) and len(data) == len(children):
        keys = [f"[{k!r}]" for k in data]
    elif hasattr(node_type, "_fields"):
        keys = [f".{name}" for name in node_type._fields]
    else:
        keys = [f"[{i}]" for i in range(len(children))]
    return [key + path for key, child in zip(keys, children) for path in _tree_paths(child)]


#: function -> the names of its positional parameters (inspect.signature is slow)
_POSITIONAL_NAMES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _positional_names(fun: Callable) -> list[str]:
    try:
        return _POSITIONAL_NAMES[fun]
    except (KeyError, TypeError):  # TypeError: not weakly referenceable or not hashable
        pass
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p.name for p in params if p.kind in kinds]
    try:
        _POSITIONAL_NAMES[fun] = names
    except TypeError:
        pass
    return names


def _arg_names(fun: Callable, nargs: int) -> list[str]:
    positional = _positional_names(fun)
    return [positional[i] if i < len(positional) else f"args[{i}]" for i in range(nargs)]


def _function_name(fun: Callable) -> str:
    name = getattr(fun, "__name__", None) or type(fun).__name__
    return "f" if name == "<lambda>" else name


def _as_array(x):
    """Python scalars become 0-d arrays so that they can be perturbed and batched."""
    if core.is_python_scalar(x) and not isinstance(x, (bool, int)):
        return np.asarray(x)
    return x


def _is_checkable(x) -> bool:
    try:
        return core.is_inexact(get_aval(x).dtype)
    except TypeError:
        return False


def _make_problem(fun: Callable, args: tuple, kwargs: dict, argnums=None,
                  label: str | None = None) -> _Problem:
    """``fun`` at ``args`` as a :class:`_Problem` (``problem.notes()`` says what was
    skipped); the function is not called until a check needs a value."""
    label = label or _function_name(fun)
    args = tuple(args)
    if argnums is not None:
        nums = {argnums} if isinstance(argnums, int) else set(argnums)
        nums = {int(i) % len(args) for i in nums}
    else:
        nums = set(range(len(args)))
    leaves, treedef = tree_flatten(args)
    names = _arg_names(fun, len(args))
    try:
        paths = _tree_paths(treedef)
    except Exception:  # an exotic registered node: fall back to leaf numbers
        paths = [f"[leaf {i}]" for i in range(len(leaves))]
    arg_of_leaf = []
    for a, sub in enumerate(treedef.children):
        arg_of_leaf += [a] * sub.num_leaves
    leaf_names = [names[a] + p[len(f"[{a}]"):] for a, p in zip(arg_of_leaf, paths)]
    leaves = [_as_array(x) for x in leaves]
    checked, notes = [], []
    for j, x in enumerate(leaves):
        if arg_of_leaf[j] not in nums:
            continue
        if _is_checkable(x):
            checked.append(j)
        else:
            kind = getattr(x, "dtype", type(x).__name__)
            notes.append(f"input {leaf_names[j]} ({getattr(kind, 'name', kind)}) is not "
                         "floating-point: not checked")
    if not checked:
        raise ValueError(f"gradcheck of {label}: no floating-point (or complex) input to check;"
                         " integer and boolean inputs are skipped")
    info = {}

    def flat_fun(*xs):
        full = list(leaves)
        for j, x in zip(checked, xs):
            full[j] = x
        out = fun(*tree_unflatten(treedef, full), **kwargs)
        out_leaves, out_tree = tree_flatten(out)
        if "keep" not in info:
            info["keep"] = [k for k, y in enumerate(out_leaves) if _is_checkable(y)]
            info["tree"] = out_tree
            info["n"] = len(out_leaves)
        if not info["keep"]:
            raise ValueError(f"gradcheck of {label}: the function has no floating-point (or "
                             "complex) output to differentiate")
        return [_as_array(out_leaves[k]) for k in info["keep"]]

    def out_names():
        names = ["out" + p for p in _tree_paths(info["tree"])]
        return [names[k] for k in info["keep"]]

    def out_notes():
        names = ["out" + p for p in _tree_paths(info["tree"])]
        return [f"output {names[k]} is not floating-point: not checked"
                for k in range(info["n"]) if k not in info["keep"]]

    xs = [leaves[j] for j in checked]
    problem = _Problem(flat_fun, xs, [leaf_names[j] for j in checked], out_names, label)
    problem.notes = lambda: notes + out_notes()
    return problem


# ------------------------------------------------------------------------------------------
# Numerical side
# ------------------------------------------------------------------------------------------


def _batched_call(fun: Callable, args: list, in_axes: list, size: int, state: dict) -> list:
    """``vmap(fun)`` on the batched arguments, or a Python loop if ``fun`` cannot be
    vmapped (the result notes it)."""
    if not state.get("loop"):
        try:
            return [_host(y) for y in vmap(fun, in_axes=tuple(in_axes))(*args)]
        except (NotImplementedError, TracerArrayConversionError,
                ConcretizationTypeError) as e:
            state["loop"] = f"{type(e).__name__}: {str(e).splitlines()[0]}"
    rows = []
    for b in range(size):
        rows.append([_host(y) for y in fun(*[x if ax is None else x[b]
                                             for x, ax in zip(args, in_axes)])])
    return [np.stack([r[k] for r in rows]) for k in range(len(rows[0]))]


def _stencil_values(problem: _Problem, xs: list, eps: float, steps: Sequence[float],
                    start: int, stop: int, state: dict) -> np.ndarray:
    """f at ``xs + step * eps * e_j`` for each step and each real input coordinate j in
    [start, stop), as an array (len(steps), stop - start, M) of realified outputs."""
    count = stop - start
    batch = len(steps) * count
    args, in_axes = [], []
    offset = 0
    for x, n in zip(xs, problem.in_sizes):
        lo, hi = max(start, offset), min(stop, offset + n)
        if lo >= hi:
            args.append(x)
            in_axes.append(None)
            offset += n
            continue
        xp = array_module(x)
        aval = get_aval(x)
        size = aval.size
        stacked = xp.repeat(xp.reshape(x, (1, size)), batch, axis=0)
        local = np.arange(lo, hi) - offset
        position = local % size
        unit = np.where(local < size, 1.0, 1j) if _is_complex(aval.dtype) else np.ones(hi - lo)
        for s, step in enumerate(steps):
            rows = s * count + np.arange(lo - start, hi - start)
            stacked[rows, position] += xp.asarray((step * eps) * unit).astype(aval.dtype)
        args.append(xp.reshape(stacked, (batch,) + aval.shape))
        in_axes.append(0)
        offset += n
    outs = _batched_call(problem.fun, args, in_axes, batch, state)
    values = np.concatenate([_realify(y, 1) for y in outs], axis=1)
    return values.reshape(len(steps), count, -1)


def _noise(values: np.ndarray, dtype, eps: float) -> np.ndarray:
    ulp = np.finfo(dtype).eps
    return _NOISE_ULPS * ulp * values / eps


def _chunk_size(problem: _Problem, steps: int, chunk_size: int | None) -> int:
    if chunk_size is not None:
        return max(1, int(chunk_size))
    per_point = sum(a.size for a in problem.in_avals) + sum(a.size for a in problem.out_avals)
    return max(1, _CHUNK_ELEMENTS // (steps * max(1, per_point)))


@dataclass
class _Numeric:
    jacobian: np.ndarray  # (M, N) realified
    noise: np.ndarray
    kink: np.ndarray | None = None  # |right - left| one-sided derivative estimates
    kink_tol_noise: np.ndarray | None = None
    left: np.ndarray | None = None
    right: np.ndarray | None = None
    nonfinite_change: np.ndarray | None = None
    vmap_note: str | None = None
    xs: list | None = None  # the inputs in the numerical side's dtype
    eps: float = 0.0


def _numeric_jacobian(problem: _Problem, eps: float, dtype=None, chunk_size=None,
                      detect: bool = False) -> _Numeric:
    """The realified numerical Jacobian of ``problem`` by central differences, all
    perturbed points of a chunk evaluated in one vmapped call.  With ``detect`` the 5-point
    stencil (±eps, ±eps/2, 0) also estimates one-sided derivatives at every coordinate."""
    xs = problem.cast(dtype)
    n_in, n_out = sum(problem.in_sizes), sum(problem.out_sizes)
    if n_in * n_out > _MAX_JACOBIAN:
        raise ValueError(f"gradcheck: the Jacobian of {problem.label} has {n_out} x {n_in} "
                         "real entries, too many for full mode; use fast_mode=True")
    steps = (1.0, -1.0, 0.5, -0.5) if detect else (1.0, -1.0)
    real_dtype = max((np.finfo(_numeric_dtype(a.dtype, dtype)).dtype for a in problem.in_avals),
                     key=lambda d: np.finfo(d).eps)
    chunk = _chunk_size(problem, len(steps), chunk_size)
    jac = np.empty((n_out, n_in))
    noise = np.empty((n_out, n_in))
    out = _Numeric(jac, noise)
    if detect:
        f0 = np.concatenate([_realify(y) for y in problem.fun(*xs)])
        out.left, out.right = np.empty((n_out, n_in)), np.empty((n_out, n_in))
        out.kink_tol_noise = np.empty((n_out, n_in))
        out.nonfinite_change = np.zeros((n_out, n_in), bool)
    state: dict = {}
    for start in range(0, n_in, chunk):
        stop = min(n_in, start + chunk)
        vals = _stencil_values(problem, xs, eps, steps, start, stop, state)
        plus, minus = vals[0], vals[1]
        jac[:, start:stop] = ((plus - minus) / (2 * eps)).T
        noise[:, start:stop] = _noise(np.abs(plus) + np.abs(minus), real_dtype, 2 * eps).T
        if detect:
            half_plus, half_minus = vals[2], vals[3]
            right = (4 * half_plus - 3 * f0 - plus) / eps
            left = (3 * f0 - 4 * half_minus + minus) / eps
            out.right[:, start:stop], out.left[:, start:stop] = right.T, left.T
            scale = (np.abs(plus) + 4 * np.abs(half_plus) + 6 * np.abs(f0)
                     + 4 * np.abs(half_minus) + np.abs(minus))
            out.kink_tol_noise[:, start:stop] = _noise(scale, real_dtype, eps).T
            finite = [np.isfinite(v) for v in (plus, minus, half_plus, half_minus)]
            change = np.zeros_like(finite[0])
            for fin in finite:
                change |= fin != np.isfinite(f0)
            out.nonfinite_change[:, start:stop] = change.T
    out.vmap_note = state.get("loop")
    out.xs, out.eps = xs, eps
    return out


def _direct_column(problem: _Problem, num: _Numeric, j: int) -> np.ndarray:
    """Column ``j`` of the numerical Jacobian from two plain (unbatched) calls of f."""
    values = []
    for sign in (1.0, -1.0):
        shifted, offset = [], 0
        for x, n in zip(num.xs, problem.in_sizes):
            if offset <= j < offset + n:
                local = j - offset
                size = get_aval(x).size
                step = (sign * num.eps) * (1j if local >= size else 1.0)
                x = x.copy()
                x.reshape(-1)[local % size] += step
            shifted.append(x)
            offset += n
        values.append(np.concatenate([_realify(y) for y in problem.fun(*shifted)]))
    return (values[0] - values[1]) / (2 * num.eps)


# ------------------------------------------------------------------------------------------
# Analytic side
# ------------------------------------------------------------------------------------------


def _unit_chunk(values, sizes, start: int, stop: int, imaginary_unit, xp):
    """Unit vectors for the realified coordinates ``start:stop`` of ``values`` (``sizes``
    coordinates each: a complex value has its real parts, then its imaginary parts, which
    get ``imaginary_unit``).  Returns, for each value the chunk touches, an array of shape
    ``(stop - start, *value.shape)``, and the positions of those values."""
    count = stop - start
    batched, positions, offset = [], [], 0
    for k, (v, n) in enumerate(zip(values, sizes)):
        lo, hi = max(start, offset), min(stop, offset + n)
        if lo < hi:
            aval = get_aval(v)
            local = np.arange(lo, hi) - offset
            units = np.zeros((count, aval.size), aval.dtype)
            unit = np.where(local < aval.size, 1.0, imaginary_unit) if _is_complex(
                aval.dtype) else 1.0
            units[np.arange(lo - start, hi - start), local % aval.size] = unit
            batched.append(xp.asarray(units.reshape((count,) + aval.shape)))
            positions.append(k)
        offset += n
    return batched, positions


def _map_units(fun: Callable, batched: list) -> list:
    """``vmap(fun)(*batched)``; a batch of one unit vector (a scalar output's only row) is
    a plain call, which costs a fraction of tracing ``fun`` under vmap."""
    if batched[0].shape[0] == 1:
        return [_host(y)[None] for y in fun(*[b[0] for b in batched])]
    return vmap(fun)(*batched)


def _reverse_jacobian(problem: _Problem, chunk_size=None) -> np.ndarray:
    """The realified Jacobian from ``vmap`` of the pullback over unit output coordinates.
    Row of a coordinate c (1 for a real part, 1j for an imaginary one) is
    ``conj(pullback(conj(c)))`` in real coordinates."""
    outs, pullback = problem.outs, problem.pullback()
    n_in, n_out = sum(problem.in_sizes), sum(problem.out_sizes)
    jac = np.empty((n_out, n_in))
    chunk = _chunk_size(problem, 1, chunk_size)
    xp = problem.xp
    for start in range(0, n_out, chunk):
        stop = min(n_out, start + chunk)
        batched, positions = _unit_chunk(outs, problem.out_sizes, start, stop, -1j, xp)

        def pull(*cts, positions=tuple(positions)):
            full = [_zero_of(y) for y in outs]
            for k, c in zip(positions, cts):
                full[k] = c
            grads = pullback(full)
            if not any(isinstance(c, core.Tracer) for c in cts):  # a plain call (one row):
                problem.directional_cache.setdefault("rev", (full, grads))  # nondet reuses it
            return grads

        rows = _map_units(pull, batched)
        jac[start:stop] = np.concatenate([_realify(np.conj(_host(r)), 1) for r in rows], axis=1)
    return jac


def _forward_jacobian(problem: _Problem, chunk_size=None) -> np.ndarray:
    """The realified Jacobian from ``vmap`` of ``jvp`` over unit input coordinates
    (1 for a real part, 1j for an imaginary part)."""
    n_in, n_out = sum(problem.in_sizes), sum(problem.out_sizes)
    jac = np.empty((n_out, n_in))
    chunk = _chunk_size(problem, 1, chunk_size)
    xp = problem.xp
    for start in range(0, n_in, chunk):
        stop = min(n_in, start + chunk)
        batched, positions = _unit_chunk(problem.leaves, problem.in_sizes, start, stop, 1j, xp)

        def push(*ts, positions=tuple(positions)):
            full = [_zero_of(x) for x in problem.leaves]
            for i, t in zip(positions, ts):
                full[i] = t
            return problem.push(full)

        cols = _map_units(push, batched)
        jac[:, start:stop] = np.concatenate([_realify(c, 1) for c in cols], axis=1).T
    return jac


# ------------------------------------------------------------------------------------------
# Comparisons
# ------------------------------------------------------------------------------------------


def _compare(numeric: np.ndarray, analytic: np.ndarray, tol: np.ndarray):
    """Elementwise |analytic - numeric| against ``tol``; equal non-finite values agree."""
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(analytic - numeric)
    same = (numeric == analytic) | (np.isnan(numeric) & np.isnan(analytic))
    diff = np.where(same, 0.0, np.where(np.isnan(diff), np.inf, diff))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(diff == 0, 0.0, diff / tol)
    return diff, ratio


def _blocks(problem: _Problem):
    """(k, i, row slice, column slice) for every output/input pair."""
    row = 0
    for k, m in enumerate(problem.out_sizes):
        col = 0
        for i, n in enumerate(problem.in_sizes):
            yield k, i, slice(row, row + m), slice(col, col + n)
            col += n
        row += m


def _jacobian_checks(problem: _Problem, num: _Numeric, analytic: np.ndarray, mode: str,
                     order: int, atol, rtol, keep_matrices: bool = True) -> list[Check]:
    checks = []
    for k, i, rows, cols in _blocks(problem):
        a_tol, r_tol = problem.block_tolerance(k, i, atol, rtol)
        n_block, a_block = num.jacobian[rows, cols], analytic[rows, cols]
        tol = a_tol + r_tol * np.abs(n_block) + num.noise[rows, cols]
        diff, ratio = _compare(n_block, a_block, tol)
        failed = ratio > 1
        worst = []
        order_idx = np.argsort(ratio, axis=None)[::-1][:5]
        for flat in order_idx:
            r, c = np.unravel_index(flat, ratio.shape)
            if ratio[r, c] == 0:
                break
            worst.append(Entry(
                _coordinate_label(problem.out_avals[k].shape,
                                  _is_complex(problem.out_avals[k].dtype), int(r)),
                _coordinate_label(problem.in_avals[i].shape,
                                  _is_complex(problem.in_avals[i].dtype), int(c)),
                float(n_block[r, c]), float(a_block[r, c]), float(tol[r, c])))
        checks.append(Check(
            "jacobian", mode, problem.label, order, not failed.any(),
            problem.out_names[k], problem.in_names[i],
            max_abs_error=float(diff.max(initial=0.0)), max_ratio=float(ratio.max(initial=0.0)),
            num_failed=int(failed.sum()), num_compared=int(diff.size), worst=worst,
            numeric=n_block if keep_matrices else None,
            analytic=a_block if keep_matrices else None, atol=a_tol, rtol=r_tol))
    return checks


def _worst_columns(problem: _Problem, num: _Numeric, analytic: np.ndarray, blocks,
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
        diff = np.where(np.isnan(diff), np.inf, diff)
        for flat in np.argsort(diff, axis=None)[::-1][:count]:
            out.add(int(starts[i] + np.unravel_index(flat, diff.shape)[1]))
    return set(sorted(out)[:count])


def _analytic_jacobian(problem: _Problem, mode: str, chunk_size) -> np.ndarray:
    if mode == "rev":
        return _reverse_jacobian(problem, chunk_size)
    return _forward_jacobian(problem, chunk_size)


def _precision_diagnosis(problem: _Problem, num: _Numeric, mode: str, failed: list[Check],
                         order: int, atol, rtol, chunk_size) -> None:
    """If a low-precision problem fails but its 64-bit version passes, say so."""
    if not failed or not problem.low_precision:
        return
    promoted = problem.promoted()
    again = _jacobian_checks(promoted, num, _analytic_jacobian(promoted, mode, chunk_size),
                             mode, order, atol, rtol, keep_matrices=False)
    by_block = {(c.output, c.input): c for c in again}
    for c in failed:
        redo = by_block.get((c.output, c.input))
        if redo is not None and redo.passed:
            c.precision_only = True
            dtypes = sorted({a.dtype.name for a in problem.in_avals + problem.out_avals
                             if a.dtype in _LOW_PRECISION})
            c.message = (f"Only a precision issue: with the inputs promoted to 64 bits the "
                         f"analytic derivative agrees (max error/tolerance "
                         f"{redo.max_ratio:.3g}); the mismatch is {'/'.join(dtypes)} rounding, "
                         "not a wrong rule. Loosen atol/rtol or check in float64.")


# ------------------------------------------------------------------------------------------
# Non-differentiability
# ------------------------------------------------------------------------------------------


def _kinks(problem: _Problem, num: _Numeric, atol, rtol) -> tuple[np.ndarray, np.ndarray]:
    jump = np.abs(num.right - num.left)
    jump = np.where(np.isnan(jump), np.inf, jump)
    tol = np.empty_like(jump)
    for k, i, rows, cols in _blocks(problem):
        a_tol, r_tol = problem.block_tolerance(k, i, atol, rtol)
        scale = np.maximum(np.abs(num.left[rows, cols]), np.abs(num.right[rows, cols]))
        tol[rows, cols] = a_tol + r_tol * np.nan_to_num(scale) + num.kink_tol_noise[rows, cols]
    bad = (jump > tol) | num.nonfinite_change
    return bad, jump / tol


def _nondifferentiable_check(problem: _Problem, num: _Numeric, order: int, atol,
                             rtol) -> Check:
    bad, ratio = _kinks(problem, num, atol, rtol)
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
        in_label = _coordinate_label(in_aval.shape, _is_complex(in_aval.dtype),
                                     int(c - starts_in[i]))
        out_label = _coordinate_label(problem.out_avals[k].shape,
                                      _is_complex(problem.out_avals[k].dtype),
                                      int(r - starts_out[k]))
        value = _realify(problem.leaves[i])[c - starts_in[i]]
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


def _evaluate(problem: _Problem, xs: list) -> list:
    return [_host(y) for y in problem.fun(*xs)]


def _shifted(xs: list, direction: list, scale: float) -> list:
    return [x + scale * d.astype(x.dtype) for x, d in zip(xs, direction)]


def _fast_checks(problem: _Problem, opts: _Options, rng: np.random.Generator,
                 order: int) -> list[Check]:
    xp = problem.xp
    u = _random_direction(rng, problem.leaves, xp)
    # Run the analytic side first: its primal outputs give v's shapes without an extra call.
    # With both modes, J·u comes from the linearization that reverse mode transposes
    # (linearize is jvp plus partial evaluation: the same JVP rules), so f is evaluated once.
    pushed = {}
    if "rev" not in opts.modes:
        pushed["fwd"] = problem.push(u)
    else:
        problem.linearization()
        if "fwd" in opts.modes:
            pushed["fwd"] = problem.push_linearized(u)
    v = _random_direction(rng, problem.outs, xp)
    xs = problem.cast(opts.dtype)
    eps = opts.eps_for(problem)
    real_dtype = max((np.finfo(x.dtype).dtype for x in xs), key=lambda d: np.finfo(d).eps)
    if opts.detect_nondifferentiable:
        check = _fast_nondifferentiable(problem, opts, xs, u, eps, order, real_dtype)
        if check is not None:
            return [check]
    plus = _evaluate(problem, _shifted(xs, u, eps))
    minus = _evaluate(problem, _shifted(xs, u, -eps))
    numeric = _pairing(v, [(p - m) / (2 * eps) for p, m in zip(plus, minus)])
    magnitude = _pairing([np.abs(_host(t)) for t in v],
                         [np.abs(p) + np.abs(m) for p, m in zip(plus, minus)])
    noise = float(_noise(magnitude, real_dtype, 2 * eps))
    a_tol = max(problem.block_tolerance(k, i, opts.atol, opts.rtol)[0]
                for k, i, _, _ in _blocks(problem))
    r_tol = max(problem.block_tolerance(k, i, opts.atol, opts.rtol)[1]
                for k, i, _, _ in _blocks(problem))
    tol = a_tol * _l1(u) * _l1(v) + r_tol * abs(numeric) + noise
    checks = []
    for mode in opts.modes:
        analytic = _directional(problem, mode, u, v, pushed.get(mode))
        entry = Entry("", "", numeric, analytic, tol)
        passed = entry.ratio <= 1
        check = Check("directional", mode, problem.label, order, passed,
                      ", ".join(problem.out_names), ", ".join(problem.in_names),
                      max_abs_error=entry.error, max_ratio=entry.ratio, num_failed=int(not passed),
                      num_compared=1, worst=[entry], atol=a_tol, rtol=r_tol)
        if not passed:
            _explain_fast_failure(problem, opts, mode, check, order)
        checks.append(check)
    return checks


def _directional(problem: _Problem, mode: str, u: list, v: list, tangents=None) -> float:
    if mode == "rev":
        cts = [c.conj() if _is_complex(get_aval(c).dtype) else c for c in v]
        grads = problem.pullback()(cts)
        problem.directional_cache[mode] = (cts, grads)
        return _pairing([np.conj(_host(g)) for g in grads], u)
    tangents = problem.push(u) if tangents is None else tangents
    problem.directional_cache[mode] = (u, tangents)
    return _pairing(v, tangents)


def _explain_fast_failure(problem: _Problem, opts: _Options, mode: str, check: Check,
                          order: int) -> None:
    """Re-run a failed fast check in full mode (small problems) to name the entries."""
    n = sum(problem.in_sizes) * sum(problem.out_sizes)
    if n > _FULL_RECHECK:
        check.message = ("The problem is too large to re-run in full mode automatically; run "
                         "gradcheck with fast_mode=False on a smaller input to see which "
                         "entries are wrong.")
        return
    num = _numeric_jacobian(problem, opts.eps_for(problem), opts.dtype, opts.chunk_size)
    blocks = _jacobian_checks(problem, num, _analytic_jacobian(problem, mode, opts.chunk_size),
                              mode, order, opts.atol, opts.rtol)
    bad = [b for b in blocks if not b.passed]
    if bad:
        lines = ["Full mode (every entry) agrees that the derivative is wrong:"]
        for b in bad:
            lines.append(_format_jacobian_check(b, indent="  "))
        check.message = "\n".join(lines)
    else:
        check.message = ("Full mode (every entry) would pass at these tolerances (max "
                         f"error/tolerance {max(b.max_ratio for b in blocks):.3g}); the fast "
                         "check's tolerance may be too tight for this function.")
    _precision_diagnosis(problem, num, mode, bad, order, opts.atol, opts.rtol, opts.chunk_size)
    if bad and all(b.precision_only for b in bad):
        check.precision_only = True
        check.message += "\n" + bad[0].message


def _fast_nondifferentiable(problem, opts, xs, u, eps, order, real_dtype):
    """The 5-point stencil along u; if f is not smooth along u, name the coordinates."""
    values = [np.concatenate([_realify(y) for y in _evaluate(problem, _shifted(xs, u, s * eps))])
              for s in (1.0, -1.0, 0.5, -0.5, 0.0)]
    plus, minus, half_plus, half_minus, f0 = values
    right = (4 * half_plus - 3 * f0 - plus) / eps
    left = (3 * f0 - 4 * half_minus + minus) / eps
    scale = (np.abs(plus) + 4 * np.abs(half_plus) + 6 * np.abs(f0) + 4 * np.abs(half_minus)
             + np.abs(minus))
    a_tol = max(problem.block_tolerance(k, i, opts.atol, opts.rtol)[0]
                for k, i, _, _ in _blocks(problem))
    r_tol = max(problem.block_tolerance(k, i, opts.atol, opts.rtol)[1]
                for k, i, _, _ in _blocks(problem))
    tol = a_tol + r_tol * np.maximum(np.abs(left), np.abs(right)) + _noise(scale, real_dtype, eps)
    finite = np.isfinite(f0)
    changed = np.zeros_like(finite)
    for val in values[:4]:
        changed |= np.isfinite(val) != finite
    if not ((np.abs(right - left) > tol) | changed).any():
        return None
    # Not smooth along u: find which coordinates are responsible.
    if sum(problem.in_sizes) * sum(problem.out_sizes) <= _FULL_RECHECK:
        num = _numeric_jacobian(problem, eps, opts.dtype, opts.chunk_size, detect=True)
        check = _nondifferentiable_check(problem, num, order, opts.atol, opts.rtol)
        if not check.passed:
            return check
    return Check("nondifferentiable", None, problem.label, order, False, num_failed=1,
                 num_compared=1, max_ratio=math.inf,
                 message="  the function is not smooth along the random direction u "
                         "(one-sided directional derivatives differ)")


# ------------------------------------------------------------------------------------------
# The other checks
# ------------------------------------------------------------------------------------------


def _max_ratio(a_list, b_list, atol, rtol) -> tuple[float, float, str]:
    worst, worst_err, where = 0.0, 0.0, ""
    for idx, (a, b) in enumerate(zip(a_list, b_list)):
        a, b = _realify(a), _realify(b)
        if a.shape != b.shape:
            return math.inf, math.inf, f"item {idx}: shapes differ"
        diff, ratio = _compare(b, a, atol + rtol * np.abs(b))
        if ratio.size and ratio.max() > worst:
            j = int(ratio.argmax())
            worst, worst_err, where = float(ratio[j]), float(diff[j]), f"item {idx}, coordinate {j}"
    return worst, worst_err, where


def _batched_check(problem: _Problem, mode: str, rng, order: int, atol, rtol,
                   batch: int = 3) -> Check:
    kind = "batched_grad" if mode == "rev" else "batched_forward_grad"
    xp = problem.xp
    if mode == "rev":
        draws = [_random_like(rng, problem.outs, xp) for _ in range(batch)]
        pullback = problem.pullback()

        def one(*cts):
            return pullback(cts)
    else:
        draws = [_random_like(rng, problem.leaves, xp) for _ in range(batch)]

        def one(*ts):
            return problem.push(ts)
    stacked = [xp.stack([d[j] for d in draws]) for j in range(len(draws[0]))]
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
        r, e, w = _max_ratio([_host(x)[b] for x in batched], loop[b], a_tol, r_tol)
        if r > ratio:
            ratio, err, where = r, e, f"batch member {b}, {w}"
    what = "pullback (vjp)" if mode == "rev" else "jvp"
    return Check(kind, mode, problem.label, order, ratio <= 1, max_abs_error=err,
                 max_ratio=ratio, num_compared=batch, atol=a_tol, rtol=r_tol,
                 message="" if ratio <= 1 else
                 f"vmap of the {what} over {batch} random "
                 f"{'cotangents' if mode == 'rev' else 'tangents'} differs from a Python loop "
                 f"({where}, error {err:.3g}): a batching rule is wrong")


def _undefined_grad_check(problem: _Problem, rng, order: int, atol, rtol) -> Check:
    outs, pullback = problem.outs, problem.pullback()
    problems = []
    grads = pullback([_zero_of(y) for y in outs])
    for name, g, x in zip(problem.in_names, grads, problem.leaves):
        g_aval, x_aval = get_aval(g), get_aval(x)
        if g_aval.shape != x_aval.shape or g_aval.dtype != x_aval.dtype:
            problems.append(f"for {name}: got {g_aval.str_short()}, expected "
                            f"{x_aval.str_short()}")
        elif np.any(_host(g) != 0):
            problems.append(f"for {name}: nonzero values from zero cotangents")
    if len(outs) > 1:
        cts = _random_like(rng, outs, problem.xp)
        for k in range(len(outs)):
            symbolic = list(cts)
            symbolic[k] = _zero_of(outs[k])
            explicit = list(cts)
            explicit[k] = zeros_like(outs[k])
            a, b = pullback(symbolic), pullback(explicit)
            ratio, err, where = _max_ratio(a, b, 1e-12 if atol is None else atol,
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


def _dtype_check(problem: _Problem, modes: Sequence[str], rng, order: int) -> Check:
    problems = []
    if "rev" in modes:
        grads = problem.pullback()(_random_like(rng, problem.outs, problem.xp))
        for name, g, x in zip(problem.in_names, grads, problem.leaves):
            ga, xa = get_aval(g), get_aval(x)
            if ga.dtype != xa.dtype or ga.shape != xa.shape:
                problems.append(f"gradient of {name} is {ga.str_short()}, the input is "
                                f"{xa.str_short()}")
    if "fwd" in modes:
        outs_t = problem.push(_random_like(rng, problem.leaves, problem.xp))
        for name, t, y in zip(problem.out_names, outs_t, problem.outs):
            ta, ya = get_aval(t), get_aval(y)
            if ta.dtype != ya.dtype or ta.shape != ya.shape:
                problems.append(f"tangent of {name} is {ta.str_short()}, the output is "
                                f"{ya.str_short()}")
    return Check("grad_dtypes", None, problem.label, order, not problems,
                 num_failed=len(problems), max_ratio=math.inf if problems else 0.0,
                 message="; ".join(problems))


def _nondeterminism_check(problem: _Problem, modes, rng, order: int, tol: float) -> Check:
    problems, worst = [], 0.0
    # Fast mode already computed each derivative once; reuse that as the first run.
    cache = problem.directional_cache
    if "rev" in modes:
        cts, first = cache.get("rev") or (_random_like(rng, problem.outs, problem.xp), None)
        first = problem.pullback()(cts) if first is None else first
        second = problem.pullback()(cts)
        diff = max(float(np.max(np.abs(_realify(a) - _realify(b)), initial=0.0))
                   for a, b in zip(first, second))
        worst = max(worst, diff)
        if not diff <= tol:
            problems.append(f"the pullback run twice on one cotangent differs by {diff:.3g}")
    if "fwd" in modes and "rev" not in modes:  # like PyTorch: rerun the backward pass
        ts, first = cache.get("fwd") or (_random_like(rng, problem.leaves, problem.xp), None)
        first = problem.push(ts) if first is None else first
        second = problem.push(ts)
        diff = max(float(np.max(np.abs(_realify(a) - _realify(b)), initial=0.0))
                   for a, b in zip(first, second))
        worst = max(worst, diff)
        if not diff <= tol:
            problems.append(f"jvp run twice on one tangent differs by {diff:.3g}")
    return Check("nondeterminism", None, problem.label, order, not problems,
                 max_abs_error=worst, max_ratio=_ratio(worst, tol), num_failed=len(problems),
                 message="; ".join(problems) + f" (nondet_tol={tol})" if problems else "")


def _vmap_consistency_check(problem: _Problem, num: _Numeric, order: int, columns, atol,
                            rtol) -> Check:
    """Numerical Jacobian columns from vmap against the same columns from plain calls."""
    a_tols = np.zeros(num.jacobian.shape[0])
    r_tols = np.zeros(num.jacobian.shape[0])
    for k, i, rows, _ in _blocks(problem):
        a_tol, r_tol = problem.block_tolerance(k, i, atol, rtol)
        a_tols[rows] = np.maximum(a_tols[rows], a_tol)
        r_tols[rows] = np.maximum(r_tols[rows], r_tol)
    worst, where = 0.0, None
    columns = [j for j in columns if j < num.jacobian.shape[1]]
    for j in columns:
        direct = _direct_column(problem, num, j)
        batched = num.jacobian[:, j]
        limit = a_tols + r_tols * np.abs(direct) + 2 * num.noise[:, j]
        diff, ratio = _compare(direct, batched, limit)
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


# ------------------------------------------------------------------------------------------
# The transform
# ------------------------------------------------------------------------------------------


@dataclass
class _Options:
    eps: float | None = None
    atol: float | None = None
    rtol: float | None = None
    modes: tuple = _MODES
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

    def eps_for(self, problem: _Problem) -> float:
        if self.eps is not None:
            return float(self.eps)
        return _default_eps(problem, self.dtype)


def _default_eps(problem: _Problem, dtype=None) -> float:
    """The default step for the numerical side of ``problem`` (its least precise leaf)."""
    dtypes = [np.finfo(_numeric_dtype(a.dtype, dtype)).dtype for a in problem.in_avals]
    return max(_EPS.get(np.dtype(d), 1e-6) for d in dtypes)


def _check_problem(problem: _Problem, opts: _Options, rng, order: int,
                   result: GradcheckResult) -> None:
    checks = result.checks
    if opts.fast_mode:
        checks.extend(_fast_checks(problem, opts, rng, order))
    else:
        num = _numeric_jacobian(problem, opts.eps_for(problem), opts.dtype, opts.chunk_size,
                                detect=opts.detect_nondifferentiable)
        if num.vmap_note:
            result.notes.append(f"{problem.label} could not be vmapped ({num.vmap_note}); its "
                                "numerical Jacobian was computed with a Python loop")
        # vmap is what makes full mode fast: make sure it computes what f computes.
        consistency = _vmap_consistency_check(problem, num, order, [0], opts.atol, opts.rtol)
        if not consistency.passed:
            checks.append(consistency)
            return
        if opts.detect_nondifferentiable:
            nondiff = _nondifferentiable_check(problem, num, order, opts.atol, opts.rtol)
            checks.append(nondiff)
            if not nondiff.passed:
                return
        failed_columns = set()
        for mode in opts.modes:
            analytic = _analytic_jacobian(problem, mode, opts.chunk_size)
            blocks = _jacobian_checks(problem, num, analytic, mode, order, opts.atol, opts.rtol)
            _precision_diagnosis(problem, num, mode, [b for b in blocks if not b.passed],
                                 order, opts.atol, opts.rtol, opts.chunk_size)
            checks.extend(blocks)
            failed_columns |= _worst_columns(problem, num, analytic, blocks)
        if failed_columns:  # was it the derivative rules, or vmap of f?
            consistency = _vmap_consistency_check(problem, num, order, sorted(failed_columns),
                                                  opts.atol, opts.rtol)
            if not consistency.passed:
                checks.append(consistency)
    if any(c.kind == "nondifferentiable" and not c.passed for c in checks):
        return
    if opts.check_batched_grad and "rev" in opts.modes:
        checks.append(_batched_check(problem, "rev", rng, order, opts.atol, opts.rtol))
    if opts.check_batched_forward_grad and "fwd" in opts.modes:
        checks.append(_batched_check(problem, "fwd", rng, order, opts.atol, opts.rtol))
    if opts.check_undefined_grad and "rev" in opts.modes:
        checks.append(_undefined_grad_check(problem, rng, order, opts.atol, opts.rtol))
    if opts.check_grad_dtypes:
        checks.append(_dtype_check(problem, opts.modes, rng, order))
    checks.append(_nondeterminism_check(problem, opts.modes, rng, order, opts.nondet_tol))
    if order < opts.order:
        for mode in opts.modes:
            _check_problem(problem.derivative(mode, rng), opts, rng, order + 1, result)


def gradcheck(fun: Callable[P, Any], *, eps: float | None = None, atol: float | None = None,
              rtol: float | None = None, modes: Sequence[str] = ("fwd", "rev"),
              order: int = 1, fast_mode: bool = False, nondet_tol: float = 0.0,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              raise_exception: bool = True, dtype=None, detect_nondifferentiable: bool = False,
              seed: int | None = None, argnums: int | Sequence[int] | None = None,
              chunk_size: int | None = None) -> Callable[P, GradcheckResult]:
    """A checker that compares ``fun``'s derivatives with finite differences.

    ``gradcheck(fun, **options)(*args, **kwargs)`` checks ``fun`` at ``args`` (pytrees of
    arrays; integer and boolean leaves, and ``kwargs``, are held fixed) and returns a
    truthy :class:`GradcheckResult`, or raises :class:`GradcheckError` with a report.

    Options (PyTorch's names where it has them):

    * ``eps``: finite-difference step (default 1e-6 when the numerical side is float64).
    * ``atol``, ``rtol``: tolerances; by default per dtype (float64 1e-5, float32 2e-3,
      float16 1e-2, complex64 1e-3, complex128 1e-5).
    * ``modes``: ``"fwd"`` (jvp) and/or ``"rev"`` (vjp).
    * ``order``: 2 also checks the derivative of the derivative in every combination of
      ``modes`` (forward over forward, reverse over forward, ...).
    * ``fast_mode``: compare ``vᵀ J u`` for random unit ``u``, ``v`` instead of every entry.
    * ``nondet_tol``: the derivative is computed twice; both must agree within this.
    * ``check_batched_grad`` / ``check_batched_forward_grad``: vmap of the pullback (jvp)
      over a few random cotangents (tangents) must equal a loop.
    * ``check_undefined_grad``: zero (symbolic) cotangents must give zero gradients.
    * ``check_grad_dtypes``: gradients must have their inputs' dtypes.
    * ``raise_exception``: False returns a falsy result instead of raising.
    * ``dtype``: the dtype of the numerical side (default float64 / complex128).
    * ``detect_nondifferentiable``: look for kinks with a 5-point stencil first and raise
      :class:`NondifferentiableError` naming the element.
    * ``seed``: for the random directions and cotangents (default: the
      ``FUNCTRANS_TEST_SEED`` environment variable, else 0).
    * ``argnums``: which positional arguments to check (default all floating ones).
    * ``chunk_size``: perturbed points per vmapped evaluation (default: bounded memory).

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> def f(x, y):
    ...     return fnp.sum(fnp.sin(x) * y)
    >>> bool(ft.gradcheck(f, order=2)(np.array([0.1, 0.2]), np.array([1.0, 2.0])))
    True
    """
    modes = (modes,) if isinstance(modes, str) else tuple(modes)
    unknown = [m for m in modes if m not in _MODES]
    if unknown or not modes:
        raise ValueError(f"gradcheck: modes must be a non-empty subset of ('fwd', 'rev'), got "
                         f"{modes!r}")
    if not isinstance(order, (int, np.integer)) or order < 1:
        raise ValueError(f"gradcheck: order must be a positive integer, got {order!r}")
    opts = _Options(eps, atol, rtol, modes, int(order), bool(fast_mode), float(nondet_tol),
                    check_batched_grad, check_batched_forward_grad, check_undefined_grad,
                    check_grad_dtypes, raise_exception, dtype, detect_nondifferentiable, seed,
                    argnums, chunk_size)

    @functools.wraps(fun)
    def checker(*args: P.args, **kwargs: P.kwargs) -> GradcheckResult:
        used_seed = _resolve_seed(opts.seed)
        rng = np.random.default_rng(used_seed)
        problem = _make_problem(fun, args, kwargs, opts.argnums)
        result = GradcheckResult(problem.label, used_seed, dict(opts.__dict__))
        _check_problem(problem, opts, rng, 1, result)
        result.notes[:0] = problem.notes()
        if not result.ok and opts.raise_exception:
            kind = (NondifferentiableError if any(c.kind == "nondifferentiable"
                                                  for c in result.failures) else GradcheckError)
            raise kind(result.report(), result)
        return result

    return checker


# ------------------------------------------------------------------------------------------
# Reports
# ------------------------------------------------------------------------------------------


def _fmt(x: float) -> str:
    return f"{x:.6g}" if np.isfinite(x) else str(x)


def _format_jacobian_check(c: Check, indent: str = "") -> str:
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
                     _fmt(e.numeric), _fmt(e.analytic), f"{e.error:.3g}",
                     f"{e.tolerance:.3g}", f"{e.ratio:.3g}"])
    widths = [max(len(r[j]) for r in rows) for j in range(len(header))]
    for r in rows:
        lines.append("  " + "  ".join(s.ljust(w) for s, w in zip(r, widths) if w).rstrip())
    if c.numeric is not None and c.numeric.size <= 64:
        opts = dict(precision=6, suppress_small=True, max_line_width=100)
        lines.append(f"numeric Jacobian (rows: {c.output}, columns: {c.input}):")
        lines.extend("  " + s for s in np.array2string(c.numeric, **opts).splitlines())
        lines.append(f"analytic Jacobian ({_MODE_WORDS[c.mode]}):")
        lines.extend("  " + s for s in np.array2string(c.analytic, **opts).splitlines())
    if c.message:
        lines.extend(c.message.splitlines())
    return "\n".join(indent + line for line in lines)


def _summary_line(result: GradcheckResult) -> str:
    o = result.options
    mode = "fast mode" if o["fast_mode"] else "full mode"
    return (f"{mode}, order {o['order']}, modes {'+'.join(o['modes'])}, seed {result.seed}")


def _format_report(result: GradcheckResult) -> str:
    derivative = [c for c in result.checks if c.kind in ("jacobian", "directional")]
    if result.ok:
        lines = [f"gradcheck of {result.function} passed: {len(derivative)} derivative checks "
                 f"({_summary_line(result)})",
                 f"  largest error/tolerance ratio {result.max_ratio:.3g}"]
        lines += [f"  note: {n}" for n in result.notes]
        return "\n".join(lines)
    failures = result.failures
    lines = [f"gradcheck of {result.function} failed: {len(failures)} of "
             f"{len(result.checks)} checks ({_summary_line(result)})"]
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
            lines.append(_format_jacobian_check(c, indent="    "))
        else:
            lines.append("    " + c.message)
    passed = [c for c in derivative if c.passed]
    if passed:
        lines.append("passed: " + "; ".join(
            f"{c.mode} {c.function} d {c.output}/d {c.input} (ratio {c.max_ratio:.2g})"
            if c.kind == "jacobian" else f"{c.mode} {c.function} (ratio {c.max_ratio:.2g})"
            for c in passed[:8]) + ("; ..." if len(passed) > 8 else ""))
    lines += [f"note: {n}" for n in result.notes]
    if not result.options["detect_nondifferentiable"] and any(
            c.kind in ("jacobian", "directional") and not c.precision_only for c in failures):
        lines.append("hint: a kink at or near the point (ReLU at 0, ties in max, abs at 0) also "
                     "makes finite\n      differences disagree; detect_nondifferentiable=True "
                     "finds it")
    options = ", ".join(f"{k}={v!r}" for k, v in result.options.items()
                        if k not in ("seed", "raise_exception") and v != getattr(_Options(), k))
    lines.append(f"reproduce: functrans.gradcheck({result.function}, seed={result.seed}"
                 f"{', ' + options if options else ''})(...)  or set {SEED_ENV_VAR}="
                 f"{result.seed}")
    return "\n".join(lines)
