"""Testing helpers in the conventions people bring from other libraries.

* JAX: :func:`check_grads`, :func:`check_jvp`, :func:`check_vjp`, :func:`numerical_jvp`.
* Chainer, for pure functions: :func:`check_backward`, :func:`check_double_backward`,
  :func:`numerical_grad`.
* MXNet, for pure functions: :func:`check_symbolic_backward`,
  :func:`check_numeric_gradient`.
* :func:`assert_allclose`, which names the worst element; pytest helpers: reproducible
  seeds (:func:`seed_for`, :func:`make_rng`; the ``rng`` fixture and ``--functrans-seed``
  come from the pytest plugin, ``functrans.pytest_plugin``) and
  :func:`parametrize_dtypes_shapes`.
* hypothesis strategies (hypothesis is a test extra): :func:`arrays` with value domains
  suited to derivative checks (:data:`DOMAINS`), :func:`array_shapes`.

Every checker raises :class:`functrans.GradcheckError` (an ``AssertionError``) on a wrong
derivative and :class:`functrans.NondifferentiableError` when asked to look for kinks.
Complex numbers follow the library's (JAX's) convention, described in ``docs/gradcheck.md``.

>>> import numpy as np, functrans.numpy as fnp
>>> from functrans.testing import check_grads
>>> check_grads(lambda x: fnp.sin(x) * x, (np.array([0.5, 1.0]),), order=2)
"""
from __future__ import annotations

import functools
import sys
import warnings
import zlib
from typing import Any, Callable, Sequence

import numpy as np

from functrans import api, backend
from functrans import numpy as fnp
from functrans.api_util import partial_over, positional_names
from functrans.core import float0, get_aval, is_inexact
from functrans.gradcheck import (SEED_ENV_VAR, GradcheckError, NondifferentiableError,
                                 default_tolerance)
from functrans.gradcheck.checks import (FORWARD_REFUSALS, forward_refusal,
                                         nondifferentiable_check, vmap_consistency_check)
from functrans.gradcheck.jacobians import numeric_jacobian
from functrans.gradcheck.options import numeric_dtype, reproduce_advice, resolve_seed
from functrans.gradcheck.problem import make_problem
from functrans.gradcheck.realify import (is_complex, placement, random_direction, random_like,
                                          realify)
from functrans.tree_util import tree_flatten, tree_leaves, tree_map, tree_unflatten

__all__ = [
    "check_grads", "check_jvp", "check_vjp", "numerical_jvp", "ForwardModeSkipped",
    "check_backward", "check_double_backward", "numerical_grad",
    "check_symbolic_backward", "check_numeric_gradient",
    "assert_allclose", "seed_for", "make_rng", "random_array", "parametrize_dtypes_shapes",
    "FLOAT_DTYPES", "INEXACT_DTYPES", "SEED_ENV_VAR", "arrays", "array_shapes", "DOMAINS",
]

#: The float dtypes a typical derivative test is parametrized over.
FLOAT_DTYPES = (np.float32, np.float64)
#: Float and complex dtypes.
INEXACT_DTYPES = (np.float32, np.float64, np.complex64, np.complex128)

# JAX's finite-difference step for check_grads.
_JAX_EPS = 1e-4


# ------------------------------------------------------------------------------------------
# assert_allclose
# ------------------------------------------------------------------------------------------


def _leaf_label(path: str) -> str:
    return f" (leaf {path})" if path else ""


def assert_allclose(actual, desired, *, rtol: float = 1e-7, atol: float = 0.0,
                    equal_nan: bool = True, err_msg: str = "",
                    names: tuple[str, str] = ("actual", "desired")) -> None:
    """Assert ``|actual - desired| <= atol + rtol * |desired|`` elementwise, and on failure
    say where the worst violation is: its index, both values, the tolerance there and the
    ratio of the error to it, and how many elements fail.

    Arrays broadcast as in NumPy; pytrees are compared leaf by leaf.  ``atol`` and ``rtol``
    are keyword-only (NumPy and Chainer order them differently).

    >>> import numpy as np
    >>> assert_allclose(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]), rtol=1e-6)
    >>> try:
    ...     assert_allclose(np.array([[1.0, 2.0], [3.0, 4.0]]),
    ...                     np.array([[1.0, 2.0], [3.0, 4.5]]), atol=1e-3, rtol=0)
    ... except AssertionError as e:
    ...     print(str(e).splitlines()[2])  # doctest: +NORMALIZE_WHITESPACE
    ...
    worst violation at index (1, 1): actual 4, desired 4.5,
    |difference| 0.5 > tolerance 0.001 (ratio 500)
    """
    a_leaves, a_tree = tree_flatten(actual)
    d_leaves, d_tree = tree_flatten(desired)
    if a_tree != d_tree:
        raise AssertionError(f"{err_msg + ': ' if err_msg else ''}{names[0]} and {names[1]} "
                             f"have different structures: {a_tree} vs {d_tree}")
    paths = [""] if len(a_leaves) == 1 else [f"[{i}]" for i in range(len(a_leaves))]
    for path, a, d in zip(paths, a_leaves, d_leaves):
        message = _allclose_message(backend.to_host(a), backend.to_host(d), rtol, atol,
                                    equal_nan, names)
        if message:
            head = f"Not equal to tolerance rtol={rtol:g}, atol={atol:g}{_leaf_label(path)}"
            if err_msg:
                head = f"{err_msg}\n{head}"
            raise AssertionError(f"{head}\n{message}")


def _allclose_message(a: np.ndarray, d: np.ndarray, rtol, atol, equal_nan, names) -> str:
    try:
        shape = np.broadcast_shapes(a.shape, d.shape)
    except ValueError:
        return f"shapes differ: {names[0]} {a.shape}, {names[1]} {d.shape}"
    a, d = np.broadcast_to(a, shape), np.broadcast_to(d, shape)
    if a.dtype.kind not in "fciub" or d.dtype.kind not in "fciub":
        equal = np.array_equal(a, d)
        return "" if equal else f"{names[0]} {a!r} differs from {names[1]} {d!r}"
    a64 = a.astype(np.complex128 if is_complex(a.dtype) else np.float64)
    d64 = d.astype(np.complex128 if is_complex(d.dtype) else np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a64 - d64)
        tol = np.nan_to_num(atol + rtol * np.abs(d64), nan=0.0, posinf=np.inf)
    both_nan = np.isnan(a64) & np.isnan(d64) if equal_nan else np.zeros(shape, bool)
    same = (a64 == d64) | both_nan
    diff = np.where(same, 0.0, np.where(np.isnan(diff), np.inf, diff))
    bad = diff > tol
    if not bad.any():
        return ""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(bad, np.where(tol > 0, diff / np.where(tol > 0, tol, 1), np.inf), 0)
    worst = np.unravel_index(int(np.argmax(ratio)), shape) if shape else ()
    index = tuple(int(i) for i in worst)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(bad & (np.abs(d64) > 0), diff / np.abs(d64), 0)
    lines = [
        f"mismatched elements: {int(bad.sum())} / {bad.size} ({100 * bad.mean():.3g}%)",
        f"worst violation at index {index}: {names[0]} {_fmt(a[index])}, {names[1]} "
        f"{_fmt(d[index])}, |difference| {_fmt(diff[index])} > tolerance {_fmt(tol[index])} "
        f"(ratio {_fmt(ratio[index])})",
        f"max absolute difference among violations: {_fmt(np.max(np.where(bad, diff, 0)))}",
        f"max relative difference among violations: {_fmt(np.max(rel))}",
    ]
    if a.size <= 20:
        lines.append(f"{names[0]}: {np.array2string(a, precision=8)}")
        lines.append(f"{names[1]}: {np.array2string(d, precision=8)}")
    return "\n".join(lines)


def _fmt(x) -> str:
    x = complex(x) if np.iscomplexobj(x) else float(x)
    if isinstance(x, complex):
        return f"{x.real:.6g}{x.imag:+.6g}j"
    return f"{x:.6g}"


# ------------------------------------------------------------------------------------------
# Shared numerics
# ------------------------------------------------------------------------------------------


def _tree_add_scaled(primals, direction, scale: float, dtype=None):
    """``primals + scale * direction`` leafwise (in ``dtype``'s precision if given)."""
    def one(p, t):
        if not is_inexact(get_aval(p).dtype):
            return p
        p = backend.asarray(p, like=t) if not hasattr(p, "astype") else p
        if dtype is not None:
            p = p.astype(numeric_dtype(p.dtype, dtype))
        return p + scale * backend.asarray(t, like=p).astype(p.dtype)
    return tree_map(one, primals, direction)


def _real_inner(xs, ys) -> float:
    """Σ Re(conj(x)·y) over the leaves of two pytrees, in float64."""
    x_leaves, y_leaves = tree_flatten(xs)[0], tree_flatten(ys)[0]
    return float(sum(np.sum(realify(x) * realify(y)) for x, y in zip(x_leaves, y_leaves)
                     if is_inexact(get_aval(x).dtype) and is_inexact(get_aval(y).dtype)))


def _jax_tolerance(tol, dtype) -> float:
    """JAX's rule: a number is used as is; a dict by dtype (or None) is merged into its
    gradient-check table; integer, boolean and float0 values get 0 (exact)."""
    if tol is not None and not isinstance(tol, dict):
        return tol
    dtype = np.dtype(dtype)
    chosen = {np.dtype(k): v for k, v in (tol or {}).items()}
    if dtype in chosen:
        return chosen[dtype]
    return default_tolerance(dtype) if is_inexact(dtype) else 0


def _jax_check_close(actual, desired, atol, rtol, message) -> None:
    """JAX's ``check_close``, leaf by leaf: shapes must agree; the tolerances are the larger
    of the two leaves' dtypes' (see :func:`_jax_tolerance`) times the leaf's size; a zero
    ``rtol`` means NumPy's default 1e-7; NaN equals NaN."""
    a_leaves, a_tree = tree_flatten(actual)
    d_leaves, d_tree = tree_flatten(desired)
    if a_tree != d_tree:
        raise GradcheckError(f"{message}: structures differ: {a_tree} vs {d_tree}")
    for a, d in zip(a_leaves, d_leaves):
        a, d = np.asarray(backend.to_host(a)), np.asarray(backend.to_host(d))
        if a.shape != d.shape:
            raise GradcheckError(f"{message}: shapes differ: {a.shape} vs {d.shape}")
        a_tol = max(_jax_tolerance(atol, a.dtype), _jax_tolerance(atol, d.dtype)) * a.size
        r_tol = max(_jax_tolerance(rtol, a.dtype), _jax_tolerance(rtol, d.dtype)) * d.size
        _raise_if_far(a, d, a_tol or 0.0, r_tol or 1e-7, message)


def _jax_rand_like(rs: np.random.RandomState, tree):
    """JAX's random directions: ``rs.randn`` per leaf in tree order (real then imaginary
    part for complex leaves), in the leaf's dtype; float0 zeros (the tangent type of
    integers and booleans) for the other leaves.  A device leaf gets its direction drawn on
    its device, from a generator seeded by ``rs`` (JAX's numbers are drawn on the host)."""
    leaves, treedef = tree_flatten(tree)
    out = []
    for x in leaves:
        aval = get_aval(x)
        if backend.is_device_array(x):
            out.append(_device_direction(rs, aval, x))
            continue
        draw = rs.randn(*aval.shape)
        if not is_inexact(aval.dtype):
            out.append(np.zeros(aval.shape, float0))
            continue
        if is_complex(aval.dtype):
            draw = draw + 1j * rs.randn(*aval.shape)
        out.append(np.asarray(draw).astype(aval.dtype))
    return tree_unflatten(treedef, out)


def _device_direction(rs: np.random.RandomState, aval, like):
    if not is_inexact(aval.dtype):
        return np.zeros(aval.shape, float0)  # float0 holds no data: no device
    rng = backend.default_rng(int(rs.randint(2 ** 31)), like=like)
    real = np.dtype(aval.dtype).type(0).real.dtype
    draw = rng.standard_normal(aval.shape, dtype=real)
    if is_complex(aval.dtype):
        draw = draw + 1j * rng.standard_normal(aval.shape, dtype=real)
    return draw.astype(aval.dtype)


def _check_dtypes_match(xs, ys, message) -> None:
    for x, y in zip(tree_leaves(xs), tree_leaves(ys)):
        dx, dy = get_aval(x).dtype, get_aval(y).dtype
        if is_inexact(dx) and dx != dy:
            raise GradcheckError(f"{message}: dtype {dy.name} where {dx.name} was expected")


def _inner_dtype(xs, ys) -> np.dtype:
    """The dtype of JAX's inner product Σ Re(conj(x)·y) of two pytrees' leaves."""
    dtypes = [np.result_type(get_aval(x).dtype, get_aval(y).dtype)
              for x, y in zip(tree_leaves(xs), tree_leaves(ys))
              if is_inexact(get_aval(x).dtype) and is_inexact(get_aval(y).dtype)]
    if not dtypes:
        return np.dtype(np.float64)
    return np.dtype(np.result_type(*dtypes).type(0).real.dtype)


# ------------------------------------------------------------------------------------------
# JAX's conventions
# ------------------------------------------------------------------------------------------


def numerical_jvp(f: Callable, primals: Sequence, tangents: Sequence, eps: float | None = None):
    """The central difference ``(f(p + eps·t) - f(p - eps·t)) / (2 eps)``, leafwise over
    the output pytree, as JAX's ``numerical_jvp`` (``eps`` defaults to 1e-4).

    >>> import numpy as np, functrans.numpy as fnp
    >>> out = numerical_jvp(fnp.exp, (np.array([0.0]),), (np.array([1.0]),))
    >>> bool(abs(out[0] - 1.0) < 1e-8)
    True
    """
    return _numerical_jvp(f, primals, tangents, _JAX_EPS if eps is None else eps, None)


def _numerical_jvp(f, primals, tangents, eps, dtype):
    """The central difference; in ``dtype``'s precision if given (the result then stays
    in it), else in the primals' dtypes with the result in the outputs' dtypes."""
    plus = f(*_tree_add_scaled(tuple(primals), tuple(tangents), eps, dtype))
    minus = f(*_tree_add_scaled(tuple(primals), tuple(tangents), -eps, dtype))

    def quotient(p, m):  # on the outputs' device
        aval = get_aval(p)
        if not is_inexact(aval.dtype):
            return backend.zeros(aval.shape, aval.dtype, like=p)
        wide = np.complex128 if is_complex(aval.dtype) else np.float64
        xp = backend.array_module(p, m)
        q = (xp.asarray(p).astype(wide) - xp.asarray(m).astype(wide)) / (2 * eps)
        return q if dtype is not None else q.astype(aval.dtype)
    return tree_map(quotient, plus, minus)


def _raise_if_far(actual, desired, atol, rtol, message):
    try:
        assert_allclose(tree_map(backend.to_host, actual), tree_map(backend.to_host, desired),
                        atol=atol, rtol=rtol, err_msg=message, names=("analytic", "numeric"))
    except AssertionError as e:
        raise GradcheckError(str(e)) from None


def check_jvp(f: Callable, f_jvp: Callable, args: Sequence, atol=None, rtol=None,
              eps: float | None = None, err_msg: str = "", seed: int | None = None) -> None:
    """Check a JVP function against finite differences along one random tangent (JAX's
    semantics).  ``f_jvp(primals, tangents)`` returns ``(f(*primals), J·tangents)``, e.g.
    ``functools.partial(functrans.jvp, f)``.  Raises :class:`functrans.GradcheckError`.
    Semantics: JAX's, listed under :func:`check_grads`.

    >>> import functools, numpy as np, functrans as ft, functrans.numpy as fnp
    >>> check_jvp(fnp.tanh, functools.partial(ft.jvp, fnp.tanh), (np.array([0.3, -1.0]),))
    """
    explicit, seed = seed is not None, resolve_seed(seed)
    args = tuple(args)
    tangent = _jax_rand_like(np.random.RandomState(seed), args)
    out, out_tangent = f_jvp(args, tangent)
    where = (f"{err_msg + ': ' if err_msg else ''}jvp check (seed {seed}; "
             f"{reproduce_advice(seed, explicit)})")
    _check_dtypes_match(out, out_tangent, f"{where}: tangent output of f_jvp")
    expected_out = f(*args)
    _check_dtypes_match(out, expected_out, f"{where}: primal output of f_jvp vs f")
    eps = _JAX_EPS if eps is None else eps
    expected = _numerical_jvp(f, args, tangent, eps, np.float64)
    _jax_check_close(out, expected_out, atol, rtol, f"{where}: primal output of f_jvp vs f")
    _jax_check_close(out_tangent, expected, atol, rtol,
                     f"{where}: tangent output vs central difference (eps={eps})")


def check_vjp(f: Callable, f_vjp: Callable, args: Sequence, atol=None, rtol=None,
              eps: float | None = None, err_msg: str = "", seed: int | None = None) -> None:
    """Check a VJP function against finite differences (JAX's semantics): for a random
    tangent ``t`` and cotangent ``c``, ``Re⟨t, conj(vjp(conj(c)))⟩`` must equal
    ``Re⟨(numerical J t), c⟩``.  ``f_vjp(*args)`` returns ``(f(*args), vjp_fun)``, e.g.
    ``functools.partial(functrans.vjp, f)``.  Raises :class:`functrans.GradcheckError`.
    Semantics: JAX's, listed under :func:`check_grads`.
    The two inner products are compared as one number whose dtype is what JAX's would
    have (float32 when every leaf is float32 or complex64).

    >>> import functools, numpy as np, functrans as ft, functrans.numpy as fnp
    >>> f = lambda x, y: fnp.sum(x * fnp.sin(y))
    >>> check_vjp(f, functools.partial(ft.vjp, f), (np.array([1.0, 2.0]), np.array([0.5, 0.1])))
    """
    explicit, seed = seed is not None, resolve_seed(seed)
    args = tuple(args)
    rs = np.random.RandomState(seed)
    out, vjp_fun = f_vjp(*args)
    where = (f"{err_msg + ': ' if err_msg else ''}vjp check (seed {seed}; "
             f"{reproduce_advice(seed, explicit)})")
    _jax_check_close(out, f(*args), atol, rtol, f"{where}: primal output of f_vjp vs f")
    eps = _JAX_EPS if eps is None else eps
    tangent = _jax_rand_like(rs, args)
    tangent_out = _numerical_jvp(f, args, tangent, eps, np.float64)
    cotangent = _jax_rand_like(rs, out)
    conj = functools.partial(tree_map, lambda x: fnp.conj(x) if is_complex(
        get_aval(x).dtype) else x)
    cotangent_in = conj(vjp_fun(conj(cotangent)))
    analytic = np.asarray(_real_inner(tangent, cotangent_in), _inner_dtype(tangent, cotangent_in))
    numeric = np.asarray(_real_inner(tangent_out, cotangent), _inner_dtype(out, cotangent))
    message = (f"{where}: <t, conj(vjp(conj(c)))> vs <numerical J t, c> for a random t and c "
               f"(eps={eps})")
    _jax_check_close(analytic, numeric, atol, rtol, message)


class ForwardModeSkipped(UserWarning):
    """:func:`check_grads` checked only reverse mode: the function has no forward-mode rule
    (it uses a ``custom_vjp`` function) and the modes were left to their default.

    >>> issubclass(ForwardModeSkipped, UserWarning)
    True
    """


def check_grads(f: Callable, args: Sequence, order: int, modes: Sequence[str] | None = None,
                atol: float | None = None, rtol: float | None = None,
                eps: float | None = None, *, detect_nondifferentiable: bool = False) -> None:
    """Check forward and/or reverse derivatives of ``f`` at ``args`` up to ``order``
    against finite differences along random directions, with :func:`check_jvp` and
    :func:`check_vjp`.  Order ``k`` recurses on the JVP function
    ``(primals, tangents) -> jvp(f, primals, tangents)`` (the primals double as tangents)
    and on ``x -> vjp(f, x)(f(x))``.  Raises :class:`functrans.GradcheckError`.

    Semantics, as JAX's (``jax.test_util``):

    * one random direction per check, drawn with ``numpy.random.RandomState(seed)``
      (seed 0 by default, as JAX) in the arguments' dtypes;
    * finite-difference step ``eps`` (1e-4), central: ``(f(x + eps·t) - f(x - eps·t)) /
      2 eps``;
    * tolerances: ``atol`` and ``rtol`` are numbers or dicts by dtype merged into JAX's
      table (float16 1e-2, bfloat16 1e-1, float32 2e-3, float64 1e-5, complex64 1e-3,
      complex128 1e-5; integer and boolean 0); for each output leaf the larger of the two
      compared values' dtypes is used, **multiplied by the leaf's size**; a zero ``rtol``
      means NumPy's default 1e-7; NaN equals NaN;
    * the primal output of ``f_jvp``/``f_vjp`` must be close to ``f(*args)``, and (in
      ``check_jvp``) the primal and tangent outputs must have the same dtypes;
    * ``eps=None`` (or 0) in ``check_grads`` means 1e-4.

    ``modes`` defaults to both; a function with no forward-mode rule (it uses a
    ``custom_vjp`` function) is then checked in reverse mode only, with a
    :class:`ForwardModeSkipped` warning saying so (JAX raises).  Named explicitly,
    ``modes=("fwd",)`` on such a function raises an error naming it.

    Where functrans differs: the finite difference is computed in float64 whatever the
    arguments' precision (JAX computes it in the arguments' dtype, which for float32 can
    exceed the float32 tolerance on correct rules); integer arguments get float0 tangents
    (JAX draws random integers, which its ``jvp`` refuses); ``seed`` (or
    ``FUNCTRANS_TEST_SEED``) picks the draws.

    ``detect_nondifferentiable=True`` (a functrans addition, keyword-only) first looks for
    a kink of ``f`` itself within ``eps`` of ``args`` (one-sided differences of every
    coordinate, gradcheck's 5-point stencil, in float64, at the default tolerance of each
    dtype).  Finite differences cannot judge a derivative there, so instead of a false
    failure: inside a hypothesis example the example is rejected (as ``assume(False)``,
    so shrinking towards 0 cannot end on ``abs`` at 0); elsewhere
    :class:`functrans.NondifferentiableError` is raised.

    >>> import numpy as np, functrans.numpy as fnp
    >>> check_grads(lambda x, y: fnp.exp(x) * y, (np.array([0.1, 0.2]), 3.0), order=2)
    >>> try:
    ...     check_grads(fnp.abs, (np.array([0.0, 1.0]),), order=1,
    ...                 detect_nondifferentiable=True)
    ... except NondifferentiableError as e:
    ...     print(str(e).splitlines()[1])
    ...
      d out[0] / d x[0] at x[0] = 0: one-sided derivatives differ: left -1, right 1
    """
    auto_modes = modes is None
    modes = ("fwd", "rev") if modes is None else (modes,) if isinstance(modes, str) else tuple(
        modes)
    for m in modes:
        if m not in ("fwd", "rev"):
            raise ValueError(f"check_grads: unknown mode {m!r}; use 'fwd' and/or 'rev'")
    name = getattr(f, "__name__", None) or type(f).__name__
    like = placement(tree_leaves(args))
    args = tuple(backend.asarray(a, like=like) if isinstance(a, (float, complex)) else a
                 for a in args)

    eps = eps or _JAX_EPS
    if detect_nondifferentiable:
        # The checks step eps along random normal directions, so a coordinate moves by up to
        # about 5 eps: look for kinks that far.
        _refuse_kinks(f, args, eps * _KINK_REACH, "check_grads")

    skipped: list[str] = []

    def forward(fun, fun_args, msg) -> bool:
        """check_jvp of ``fun``; False when forward mode was skipped."""
        try:
            check_jvp(fun, functools.partial(api.jvp, fun), fun_args, atol, rtol, eps, msg)
            return True
        except FORWARD_REFUSALS as e:
            reason = forward_refusal(e)
            if reason is None:
                raise
            if not auto_modes or "rev" not in modes:
                raise type(e)(f"check_grads of {name}: {name} cannot be checked in forward "
                              f"mode ({msg}): {reason}. Check reverse mode only with "
                              "modes=('rev',).") from None
            skipped.append(f"{msg}: {reason}")
            return False

    def recurse(fun, fun_args, k, msg):
        if "fwd" in modes:
            fwd_msg = f"{msg}JVP of order {order - k + 1}"
            # the primals double as tangents (float0 for integer ones)
            if forward(fun, fun_args, fwd_msg) and k > 1:
                tangents = tree_map(lambda x: x if is_inexact(get_aval(x).dtype) else np.zeros(
                    get_aval(x).shape, float0), fun_args)
                recurse(functools.partial(api.jvp, fun), (fun_args, tangents), k - 1,
                        fwd_msg + " of ")
        if "rev" in modes:
            rev_msg = f"{msg}VJP of order {order - k + 1}"
            check_vjp(fun, functools.partial(api.vjp, fun), fun_args, atol, rtol, eps,
                      rev_msg)
            if k > 1:
                def fun_vjp(*xs):
                    out, vjp_fun = api.vjp(fun, *xs)
                    return vjp_fun(out)
                recurse(fun_vjp, fun_args, k - 1, rev_msg + " of ")

    try:
        recurse(f, args, order, "")
    finally:  # also when a reverse-mode check fails: the failure checked one mode only
        if skipped:
            warnings.warn(f"check_grads of {name}: forward mode skipped "
                          f"({'; '.join(skipped)}); reverse mode was checked",
                          ForwardModeSkipped, stacklevel=2)


#: how far, in units of eps, the random-direction checks of check_grads move a coordinate
#: (the largest entry of a normal direction rarely exceeds 5)
_KINK_REACH = 5.0


def _refuse_kinks(f: Callable, args: tuple, eps: float, name: str) -> None:
    """Reject the hypothesis example, or raise NondifferentiableError, when ``f`` has a kink
    within ``eps`` of ``args``."""
    problem = make_problem(f, args, {}, label=getattr(f, "__name__", None))
    check = nondifferentiable_check(problem, numeric_jacobian(problem, eps, None, detect=True),
                                    1, None, None)
    if check.passed:
        return
    hypothesis = sys.modules.get("hypothesis")  # imported by the test if it uses hypothesis
    in_example = getattr(hypothesis, "currently_in_test_context", lambda: False)
    if hypothesis is not None and in_example():
        hypothesis.reject()  # not a counterexample: finite differences cannot judge a kink
    raise NondifferentiableError(f"{name}: {problem.label} is not differentiable at the point "
                                 f"checked (eps={eps}):\n{check.message}\nFinite differences "
                                 "cannot judge a derivative at a kink: move the point away")


# ------------------------------------------------------------------------------------------
# Chainer's conventions, for pure functions
# ------------------------------------------------------------------------------------------


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _scalar_objective(func: Callable, grad_outputs: tuple):
    """``(*args) -> Re Σ_k grad_outputs[k] · func(*args)[k]`` as a traceable function: the
    library's pairing of a cotangent with a value (no conjugation), so that its gradient is
    what the pullback of ``grad_outputs`` computes."""

    def objective(*args):
        ys = func(*args)
        ys = ys if isinstance(ys, (tuple, list)) else (ys,)
        total = 0.0
        for y, gy in zip(ys, grad_outputs):
            if gy is None or not is_inexact(get_aval(y).dtype):
                continue
            term = fnp.sum(backend.asarray(gy, like=gy) * y)
            total = total + (fnp.real(term) if is_complex(get_aval(term).dtype) else term)
        return total
    return objective


def _gradient_from_jacobian(row: np.ndarray, like) -> np.ndarray:
    """A realified gradient row back to a cotangent in the library's convention (for a
    complex input z = x + iy: ∂L/∂x − i ∂L/∂y)."""
    aval = get_aval(like)
    if is_complex(aval.dtype):
        n = aval.size
        values = row[:n] - 1j * row[n:]
    else:
        values = row
    return backend.asarray(values.reshape(aval.shape).astype(aval.dtype), like=like)


def numerical_grad(f: Callable, inputs: Sequence, grad_outputs, eps: float = 1e-3,
                   detect_nondifferentiable: bool = False, diff_atol: float = 0.0,
                   diff_rtol: float = 1e-2) -> tuple:
    """Chainer's ``numerical_grad`` for a pure function: the gradient of
    ``Re Σ_k grad_outputs[k] · f(*inputs)[k]`` with respect to each input, by central
    differences of every element (all evaluated at once with vmap), computed in the inputs'
    dtypes, accumulated in float64 and returned in the inputs' dtypes.

    Semantics, as Chainer's:

    * a ``None`` in ``grad_outputs`` drops that output;
    * the step is ``eps`` on each side: ``(f(x + eps) - f(x - eps)) / 2 eps``;
    * with ``detect_nondifferentiable=True``, ``f`` is also evaluated at ``x ± eps/2``,
      a kink raises :class:`functrans.NondifferentiableError`, and the gradient returned
      is the 5-point estimate ``(8 (f(x + eps/2) - f(x - eps/2)) - (f(x + eps) -
      f(x - eps))) / 6 eps``, accurate to fourth order in ``eps``.

    Where functrans differs: kinks are found by comparing one-sided derivatives (with
    tolerance ``diff_atol + diff_rtol · max(|left|, |right|)`` plus rounding noise) where
    Chainer fits a parabola to the five values; complex inputs follow the library's
    convention (Chainer has none).

    >>> import numpy as np, functrans.numpy as fnp
    >>> (g,) = numerical_grad(lambda x: x ** 2, (np.array([1.0, 3.0]),), (np.ones(2),))
    >>> np.round(g, 6)
    array([2., 6.])
    """
    like = placement(inputs)
    inputs = tuple(backend.asarray(x, like=like) if not hasattr(x, "shape") else x
                   for x in inputs)
    grad_outputs = _as_tuple(grad_outputs)
    objective = _scalar_objective(f, grad_outputs)
    problem = make_problem(objective, inputs, {}, label=getattr(f, "__name__", "f"))
    num = numeric_jacobian(problem, eps, "input", detect=detect_nondifferentiable)
    consistency = vmap_consistency_check(problem, num, 1, [0], None, None)
    if not consistency.passed:
        raise GradcheckError(f"numerical_grad: {consistency.message}")
    jacobian = num.jacobian
    if detect_nondifferentiable:
        check = nondifferentiable_check(problem, num, 1, diff_atol, diff_rtol)
        if not check.passed:
            raise NondifferentiableError(f"numerical_grad: the function is not "
                                         f"differentiable at the inputs:\n{check.message}")
        jacobian = num.five_point
    grads: list = []
    col = 0
    checked = iter(zip(problem.leaves, problem.in_sizes))
    for x in inputs:
        if not is_inexact(get_aval(x).dtype):
            grads.append(None)
            continue
        leaf, n = next(checked)
        grads.append(_gradient_from_jacobian(jacobian[0, col:col + n], x))
        col += n
    return tuple(grads)


def _chainer_inputs(x_data, params, no_grads, name):
    xs = _as_tuple(x_data)
    params = _as_tuple(params)
    if no_grads is None:
        no_grads = [not is_inexact(get_aval(x).dtype) for x in xs]
    elif len(no_grads) != len(xs):
        raise ValueError(f"{name}: no_grads has {len(no_grads)} entries for {len(xs)} inputs")
    for i, (x, skip) in enumerate(zip(xs, no_grads)):
        if not skip and not is_inexact(get_aval(x).dtype):
            raise TypeError(f"{name}: input {i} has dtype {get_aval(x).dtype.name}; integer "
                            "and boolean inputs cannot be checked, set no_grads[{i}]=True")
    for j, p in enumerate(params):
        if not is_inexact(get_aval(p).dtype):
            raise TypeError(f"{name}: params[{j}] has dtype {get_aval(p).dtype.name}; "
                            "parameters must be floating-point")
    return xs, params, list(no_grads)


def _output_grads(func, all_inputs, y_grad, name):
    ys = func(*all_inputs)
    ys_tuple = ys if isinstance(ys, (tuple, list)) else (ys,)
    if y_grad is None:
        if len(ys_tuple) != 1 or get_aval(ys_tuple[0]).shape != ():
            shapes = [get_aval(y).shape for y in ys_tuple]
            raise ValueError(f"{name}: y_grad=None is only for a loss: a function with one "
                             f"scalar output of shape (); this one returns shapes {shapes}. "
                             "Pass the output gradients as y_grad")
        y = ys_tuple[0]
        gys = (backend.ones(get_aval(y).shape, get_aval(y).dtype, like=y),)
    else:
        gys = _as_tuple(y_grad)
        if len(gys) != len(ys_tuple):
            raise ValueError(f"{name}: y_grad has {len(gys)} entries for {len(ys_tuple)} "
                             "outputs")
        for k, (y, gy) in enumerate(zip(ys_tuple, gys)):
            if gy is not None and np.shape(gy) != get_aval(y).shape:
                raise ValueError(f"{name}: y_grad[{k}] has shape {np.shape(gy)}, output {k} "
                                 f"has shape {get_aval(y).shape}")
    return ys, ys_tuple, gys


def check_backward(func: Callable, x_data, y_grad, params=(), eps: float = 1e-3,
                   atol: float = 1e-5, rtol: float = 1e-4, no_grads=None, dtype=None,
                   detect_nondifferentiable: bool = False, seed: int | None = None) -> None:
    """Chainer's ``check_backward`` for a pure function ``func(*x_data, *params)``.

    ``x_data``: an array or a tuple of arrays; ``y_grad``: the output gradient(s) (an
    array, a tuple with one entry per output, or ``None`` for a loss); ``params``: extra
    arrays passed after the inputs whose gradients are checked too; ``no_grads``: one flag
    per input to skip it.  Raises :class:`functrans.GradcheckError`.

    Semantics, as Chainer's:

    * ``y_grad=None`` only for a single output of shape ``()`` (a loss), which gets 1;
    * ``no_grads`` defaults to "not floating-point" for each input; it must have one
      entry per input; an input flagged in it that the function does differentiate
      through (its gradient is not a symbolic zero: Chainer's "not None") is an error;
    * one random direction ``r`` over all checked inputs and ``params`` (unit norm, no
      component below about ``0.1/sqrt(N)``): the analytic ``Σ⟨grad_i, r_i⟩`` must match
      the central difference of ``⟨y_grad, func⟩`` along ``r`` with step ``eps``, within
      ``atol + rtol·|numeric|``;
    * ``dtype`` casts the inputs and ``y_grad`` for the numerical side;
    * ``detect_nondifferentiable=True`` evaluates ``func`` at ``±eps`` and ``±eps/2`` along
      ``r``, raises :class:`functrans.NondifferentiableError` at a kink, and compares with
      the 5-point estimate (fourth order in ``eps``).

    Where functrans differs: the numerical side is computed in the inputs' dtypes with
    the differences accumulated in float64 (Chainer perturbs in float64 and casts back);
    kinks are found from one-sided derivatives (Chainer fits a parabola); a failure names
    the worst input elements; complex inputs follow the library's convention.

    >>> import numpy as np, functrans.numpy as fnp
    >>> x = np.array([[0.5, -1.0], [2.0, 0.1]])
    >>> check_backward(fnp.tanh, x, np.ones((2, 2)))
    >>> check_backward(lambda x, w: fnp.sum((x @ w) ** 2), x, None, params=np.eye(2))
    """
    name = "check_backward"
    xs, params, no_grads = _chainer_inputs(x_data, params, no_grads, name)
    all_inputs = xs + params
    checked = [i for i, skip in enumerate(no_grads) if not skip] + [
        len(xs) + j for j in range(len(params))]
    ys, ys_tuple, gys = _output_grads(func, all_inputs, y_grad, name)
    explicit, seed = seed is not None, resolve_seed(seed)
    partial_fun = partial_over(func, all_inputs, checked)
    checked_values = [all_inputs[i] for i in checked]
    rng = backend.default_rng(seed, like=placement(checked_values))
    out, vjp_fun = api.vjp(partial_fun, *checked_values)
    cts = tuple(backend.zeros(get_aval(y).shape, get_aval(y).dtype, like=y) if gy is None else
                backend.asarray(gy, like=y).astype(get_aval(y).dtype)
                for y, gy in zip(ys_tuple, gys))
    grads = vjp_fun(cts if isinstance(out, (tuple, list)) else cts[0])
    _forbid_flagged_gradients(func, all_inputs, no_grads, gys, name)
    direction = random_direction(rng, checked_values)
    if detect_nondifferentiable:
        _chainer_nondifferentiable(partial_fun, checked_values, gys, direction, eps, dtype,
                                   atol, rtol, name)
    analytic = sum(float(np.sum(realify(np.conj(backend.to_host(g))) * realify(r)))
                   for g, r in zip(grads, direction))
    # The numerical side: in `dtype` if given, differences accumulated in float64.
    numeric_values = _cast_location(list(checked_values), dtype)
    numeric_gys = [None if g is None else _cast_location([g], dtype)[0] for g in gys]

    def along(scale):
        moved = [v + scale * r.astype(v.dtype) for v, r in zip(numeric_values, direction)]
        y = partial_fun(*moved)
        return y if isinstance(y, (tuple, list)) else (y,)

    plus, minus = along(eps), along(-eps)
    if detect_nondifferentiable:  # Chainer's 5-point estimate, fourth order in eps
        half_plus, half_minus = along(eps / 2), along(-eps / 2)
        slopes = [(8 * (_wide(hp) - _wide(hm)) - (_wide(p) - _wide(m))) / (6 * eps)
                  for p, m, hp, hm in zip(plus, minus, half_plus, half_minus)]
    else:
        slopes = [(_wide(p) - _wide(m)) / (2 * eps) for p, m in zip(plus, minus)]
    # Re(y_grad · dy): the library's pairing of a cotangent with a tangent.
    numeric = sum(_real_inner(fnp.conj(g), slope)
                  for g, slope in zip(numeric_gys, slopes) if g is not None)
    message = (f"{name}: <analytic gradient, r> vs the central difference of <y_grad, func> "
               f"along a random direction r (eps={eps}; seed {seed}; "
               f"{reproduce_advice(seed, explicit)})")
    try:
        assert_allclose(analytic, numeric, atol=atol, rtol=rtol, err_msg=message,
                        names=("analytic", "numeric"))
    except AssertionError as e:
        detail = _localize(partial_fun, checked_values, gys, grads, eps, atol, rtol)
        raise GradcheckError(f"{e}\n{detail}" if detail else str(e)) from None


def _forbid_flagged_gradients(func, all_inputs, no_grads, gys, name) -> None:
    """Chainer's rule: an input flagged in ``no_grads`` must receive no gradient."""
    flagged = [i for i, skip in enumerate(no_grads)
               if skip and is_inexact(get_aval(all_inputs[i]).dtype)]
    ys = func(*all_inputs)
    ys = ys if isinstance(ys, (tuple, list)) else (ys,)
    used = [k for k, (y, g) in enumerate(zip(ys, gys))
            if g is not None and is_inexact(get_aval(y).dtype)]
    if not flagged or not used:
        return

    def used_outputs(*args):
        outs = func(*args)
        outs = outs if isinstance(outs, (tuple, list)) else (outs,)
        return [outs[k] for k in used]

    problem = make_problem(used_outputs, tuple(all_inputs), {}, argnums=flagged, label=name)
    reached = [i for i, hit in zip(flagged, problem.reached_inputs()) if hit]
    if reached:
        raise GradcheckError(f"{name}: input(s) {reached} are flagged in no_grads but receive "
                             "a gradient (the function differentiates through them); as in "
                             "Chainer, set no_grads[i]=False to check them, or detach them "
                             "with functrans.lax.stop_gradient")


def _wide(x) -> np.ndarray:
    x = backend.to_host(x)
    return x.astype(np.complex128 if is_complex(x.dtype) else np.float64)


def _localize(fun, values, gys, grads, eps, atol, rtol) -> str:
    """After a directional failure, name the worst input elements (small problems only)."""
    if sum(get_aval(v).size for v in values) > 20_000:
        return ""
    try:
        numeric = numerical_grad(fun, values, gys, eps)
    except Exception:  # the report stays useful without the localization
        return ""
    lines = ["per-element numerical gradients (all elements perturbed, evaluated with vmap):"]
    for i, (g, n) in enumerate(zip(grads, numeric)):
        g = backend.to_host(g)
        n = backend.to_host(n).astype(np.result_type(g.dtype, np.float64))
        diff = np.abs(g - n)
        tol = atol + rtol * np.abs(n)
        if np.any(diff > tol):
            worst = np.unravel_index(int(np.argmax(diff / tol)), diff.shape) if diff.shape else ()
            lines.append(f"  input {i}: {int((diff > tol).sum())} of {diff.size} elements off; "
                         f"worst at {tuple(int(k) for k in worst)}: analytic {_fmt(g[worst])}, "
                         f"numeric {_fmt(n[worst])}")
    return "\n".join(lines) if len(lines) > 1 else ""


def _chainer_nondifferentiable(fun, values, gys, direction, eps, dtype, atol, rtol, name):
    def along(scale):
        moved = [v + scale * r.astype(get_aval(v).dtype) for v, r in zip(values, direction)]
        y = fun(*moved)
        y = y if isinstance(y, (tuple, list)) else (y,)
        return np.concatenate([realify(t) for t, g in zip(y, gys) if g is not None])
    plus, minus, half_plus, half_minus, f0 = (along(s * eps) for s in (1, -1, .5, -.5, 0))
    right = (4 * half_plus - 3 * f0 - plus) / eps
    left = (3 * f0 - 4 * half_minus + minus) / eps
    finite = [np.isfinite(v) for v in (plus, minus, half_plus, half_minus)]
    changed = np.zeros(f0.shape, bool)
    for fin in finite:
        changed |= fin != np.isfinite(f0)
    ulp = max(np.finfo(get_aval(v).dtype).eps if is_inexact(get_aval(v).dtype) else 0
              for v in values)
    noise = 64 * ulp * (np.abs(plus) + 4 * np.abs(half_plus) + 6 * np.abs(f0)
                        + 4 * np.abs(half_minus) + np.abs(minus)) / eps
    bad = (np.abs(right - left) > atol + rtol * np.maximum(np.abs(left), np.abs(right)) + noise)
    if not (bad | changed).any():
        return
    problem = make_problem(lambda *v: fun(*v), tuple(values), {}, label=name)
    num = numeric_jacobian(problem, eps, "input", detect=True)
    check = nondifferentiable_check(problem, num, 1, atol, rtol)
    detail = check.message if not check.passed else (
        "  the function is not smooth along the random direction r")
    raise NondifferentiableError(f"{name}: the function is not differentiable at the point "
                                 f"checked:\n{detail}")


def check_double_backward(func: Callable, x_data, y_grad, x_grad_grad, params=(),
                          params_grad_grad=(), eps: float = 1e-3, atol: float = 1e-4,
                          rtol: float = 1e-3, no_grads=None, dtype=None,
                          detect_nondifferentiable: bool = False,
                          seed: int | None = None) -> None:
    """Chainer's ``check_double_backward`` for a pure function: checks the first-order
    gradient function ``(*x_data, *y_grad) -> (gradients of the floating x and of params)``
    with :func:`check_backward`, ``x_grad_grad`` (one per floating input) and
    ``params_grad_grad`` playing its output gradients.

    Semantics, as Chainer's:

    * the first-order gradients are those of every floating-point input in ``x_data``
      (whatever ``no_grads`` says) and of ``params``;
    * ``y_grad`` entries are inputs of that function too, so ``no_grads`` has one flag
      per entry of ``x_data`` *and* of ``y_grad`` (default: "not floating-point"); a
      flagged entry that receives a second-order gradient is an error;
    * ``y_grad=None`` only for a single output of shape ``()`` (it then is not an input);
    * the rest (``eps``, ``atol`` 1e-4, ``rtol`` 1e-3, ``dtype``, kinks) as in
      :func:`check_backward`.  Like Chainer's, this does not check the first-order
      gradients themselves: check them with :func:`check_backward`.

    Where functrans differs: a floating input flagged in ``no_grads`` that receives no
    second-order gradient (say ``x`` in ``2·x``) passes; Chainer's numerical side drops
    its first-order gradient and fails on a bare ``assert``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> x = np.array([0.3, -0.7])
    >>> check_double_backward(lambda x: x ** 3, x, np.ones(2), np.array([1.0, 0.5]))
    """
    name = "check_double_backward"
    xs, params, first_no_grads = _chainer_inputs(x_data, params, None, name)
    _, ys_tuple, gys = _output_grads(func, xs + params, y_grad, name)
    checked = [i for i, skip in enumerate(first_no_grads) if not skip]
    n_x, n_gy, n_p = len(xs), len(gys), len(params)
    single_output = not isinstance(func(*xs, *params), (tuple, list))
    gy_inputs = () if y_grad is None else tuple(backend.asarray(g, like=g) for g in gys)
    if no_grads is not None and len(no_grads) != n_x + len(gy_inputs):
        raise ValueError(f"{name}: no_grads needs one flag per entry of x_data ({n_x}) and "
                         f"of y_grad ({len(gy_inputs)}), as in Chainer; got {len(no_grads)}")

    def first_order(*args):
        x_vals, rest = args[:n_x], args[n_x:]
        gy_vals, p_vals = (rest[:n_gy], rest[n_gy:]) if y_grad is not None else ((), rest)
        gy_vals = gy_vals if y_grad is not None else gys

        of_checked = partial_over(func, list(x_vals) + list(p_vals),
                                  checked + [n_x + j for j in range(n_p)])

        values = [x_vals[i] for i in checked] + list(p_vals)
        _, vjp_fun = api.vjp(of_checked, *values)
        cts = tuple(gy_vals)
        grads = vjp_fun(cts[0] if single_output else cts)
        return tuple(grads)

    x_grad_grad = _as_tuple(x_grad_grad)
    if len(x_grad_grad) == len(xs) and len(checked) != len(xs):
        x_grad_grad = tuple(x_grad_grad[i] for i in checked)
    if len(x_grad_grad) != len(checked):
        raise ValueError(f"{name}: x_grad_grad needs one entry per floating-point input "
                         f"({len(checked)}), got {len(x_grad_grad)}")
    params_grad_grad = _as_tuple(params_grad_grad)
    if len(params_grad_grad) != n_p:
        raise ValueError(f"{name}: params_grad_grad needs one entry per parameter ({n_p}), "
                         f"got {len(params_grad_grad)}")
    inputs = xs + gy_inputs
    try:
        check_backward(first_order, inputs, x_grad_grad + params_grad_grad, params=params,
                       eps=eps, atol=atol, rtol=rtol, no_grads=no_grads, dtype=dtype,
                       detect_nondifferentiable=detect_nondifferentiable, seed=seed)
    except GradcheckError as e:
        raise type(e)(f"{name}: the gradient of the first-order gradients is wrong\n{e}"
                      ) from None


# ------------------------------------------------------------------------------------------
# MXNet's conventions, for pure functions
# ------------------------------------------------------------------------------------------

_MX_RTOL = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-5}
_MX_ATOL = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-20}
_MX_EPS = {np.dtype(np.float16): 2.0 ** -6, np.dtype(np.float32): 2.0 ** -9,
           np.dtype(np.float64): 2.0 ** -14}


def _parameter_names(fun: Callable, count: int | None = None) -> list[str]:
    names = positional_names(fun)
    if count is not None and len(names) < count:
        names += [f"arg{i}" for i in range(len(names), count)]
    return names


def _located(fun: Callable, location, what: str) -> tuple[list[str], list]:
    """``location`` (a list in argument order, or a dict by parameter name) as names and
    values in argument order."""
    if isinstance(location, dict):
        names = _parameter_names(fun)
        missing = [n for n in names if n not in location]
        extra = [k for k in location if k not in names]
        if missing or extra:
            raise ValueError(f"{what}: location keys must match the function's parameters "
                             f"{names}; missing {missing}, unexpected {extra}")
        return names, [location[n] for n in names]
    values = list(location)
    return _parameter_names(fun, len(values))[:len(values)], values


def _per_argument(value, names: list[str], what: str, default=None) -> dict:
    if isinstance(value, dict):
        unknown = [k for k in value if k not in names]
        if unknown:
            raise ValueError(f"{what}: unknown argument names {unknown}; expected some of "
                             f"{names}")
        return {n: value.get(n, default) for n in names}
    if isinstance(value, (list, tuple)):
        if len(value) != len(names):
            raise ValueError(f"{what}: {len(value)} entries for {len(names)} arguments")
        return dict(zip(names, value))
    return {n: value for n in names}


def _cast_location(values: list, dtype) -> list:
    like = placement(values)
    out = []
    for v in values:
        v = backend.asarray(v, like=like) if not hasattr(v, "dtype") else v
        if dtype is not None and is_inexact(v.dtype):
            v = v.astype(numeric_dtype(v.dtype, dtype))
        out.append(v)
    return out


def check_symbolic_backward(fun: Callable, location, out_grads, expected, rtol: float = 1e-5,
                            atol: float | None = None, grad_req="write", equal_nan: bool = False,
                            dtype=np.float32, grad_buffers=None, seed: int | None = None) -> dict:
    """MXNet's ``check_symbolic_backward`` for a pure function: its gradients at
    ``location`` for the output gradients ``out_grads`` must equal ``expected``.

    ``location``: a list in argument order, or a dict keyed by ``fun``'s parameter names
    (the keys must match them exactly); ``out_grads``: an array, a list (one per output) or
    ``None`` (ones); ``expected``: a list or dict of expected gradients.  ``grad_req``
    (one for all, or a list / dict per argument): ``"write"`` overwrites the gradient
    buffer, ``"add"`` adds to it (``grad_buffers`` gives the buffers to accumulate into,
    updated in place; otherwise they start random) and the increment is compared,
    ``"null"`` leaves it untouched.  ``dtype`` (default float32, as in MXNet; None keeps
    the arrays' dtypes) is what ``location`` is cast to.  Returns the gradient buffers by
    argument name.

    >>> import numpy as np, functrans.numpy as fnp
    >>> lhs, rhs = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[5.0, 6.0], [7.0, 8.0]])
    >>> grads = check_symbolic_backward(lambda lhs, rhs: lhs * rhs, {"lhs": lhs, "rhs": rhs},
    ...                                 np.ones((2, 2)), {"lhs": rhs, "rhs": lhs})
    >>> sorted(grads), grads["lhs"].dtype
    (['lhs', 'rhs'], dtype('float32'))
    """
    what = "check_symbolic_backward"
    names, values = _located(fun, location, what)
    values = _cast_location(values, dtype)
    reqs = _per_argument(grad_req, names, what + " grad_req", default="null")
    for n, r in reqs.items():
        if r not in ("write", "add", "null"):
            raise ValueError(f"{what}: grad_req for {n!r} must be 'write', 'add' or 'null', "
                             f"got {r!r}")
    expected = _per_argument(expected, names, what + " expected")
    buffers = _per_argument(grad_buffers, names, what + " grad_buffers") if (
        grad_buffers is not None) else {n: None for n in names}
    active = [i for i, n in enumerate(names) if reqs[n] != "null"
              and is_inexact(get_aval(values[i]).dtype)]

    partial_fun = partial_over(fun, values, active)

    out, vjp_fun = api.vjp(partial_fun, *[values[i] for i in active])
    outs = out if isinstance(out, (tuple, list)) else (out,)
    if out_grads is None:
        cts = tuple(backend.ones(get_aval(y).shape, get_aval(y).dtype, like=y) for y in outs)
    else:
        cts = tuple(backend.asarray(g, like=y).astype(get_aval(y).dtype)
                    for g, y in zip(_as_tuple(out_grads), outs))
        if len(cts) != len(outs):
            raise ValueError(f"{what}: {len(cts)} out_grads for {len(outs)} outputs")
    grads = dict(zip([names[i] for i in active],
                     vjp_fun(cts if isinstance(out, (tuple, list)) else cts[0])))
    rng = backend.default_rng(resolve_seed(seed), like=placement(values))
    tol = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3}
    result = {}
    for i, n in enumerate(names):
        x = values[i]
        buffer = buffers[n]
        if buffer is None:
            buffer = random_like(rng, [x])[0] if is_inexact(
                get_aval(x).dtype) else backend.zeros(get_aval(x).shape, like=x)
        before = buffer.copy()
        if reqs[n] == "write":
            buffer[...] = grads[n]
        elif reqs[n] == "add":
            buffer += grads[n].astype(buffer.dtype)
        result[n] = buffer
        if reqs[n] == "null":
            if not bool(backend.array_module(buffer).array_equal(before, buffer)):
                raise GradcheckError(f"{what}: grad_req='null' but the buffer of {n!r} changed")
            continue
        got = buffer - before if reqs[n] == "add" else buffer
        want = expected[n]
        if want is None:
            continue
        a_tol = atol if atol is not None else tol.get(np.dtype(got.dtype), 1e-20)
        try:
            assert_allclose(got, backend.asarray(want, like=want), rtol=rtol, atol=a_tol,
                            equal_nan=equal_nan,
                            err_msg=f"{what}: gradient of {n!r} (grad_req={reqs[n]!r})",
                            names=("computed", "expected"))
        except AssertionError as e:
            raise GradcheckError(str(e)) from None
    return result


def _mx_tolerance(value, dtype, table: dict) -> float:
    """MXNet's rule: a number is used as is; a dict by dtype (or None) falls back to the
    per-dtype default."""
    if value is not None and not isinstance(value, dict):
        return float(value)
    chosen = {np.dtype(k): v for k, v in (value or {}).items()}
    return float(chosen.get(np.dtype(dtype), table.get(np.dtype(dtype), table[np.dtype(
        np.float64)])))


def check_numeric_gradient(fun: Callable, location, numeric_eps=None, rtol=None, atol=None,
                           grad_nodes=None, dtype=np.float32, equal_nan: bool = False,
                           seed: int | None = None) -> None:
    """MXNet's ``check_numeric_gradient`` (1.9) for a pure function.

    Semantics, as MXNet's:

    * ``location`` (a list in argument order, or a dict by parameter name) is cast to
      ``dtype`` (float32 by default; None keeps the arrays' dtypes);
    * the outputs are projected on a random positive vector and the gradient of that
      projection with respect to every element of every argument in ``grad_nodes`` is
      compared with finite differences; ``grad_nodes`` is a list of names (default: all
      floating arguments) or a dict ``name -> grad_req``, where ``"write"`` and ``"add"``
      compare the gradient and ``"null"`` checks nothing;
    * ``numeric_eps`` is the *full* width of the central difference:
      ``(f(x + eps/2) - f(x - eps/2)) / eps``;
    * ``numeric_eps``, ``rtol`` and ``atol`` are numbers or dicts by dtype; the defaults
      by ``dtype`` are: float16 / float32 / float64 step 2⁻⁶ / 2⁻⁹ / 2⁻¹⁴, rtol 1e-2 /
      1e-4 / 1e-5, atol 1e-1 / 1e-3 / 1e-20; a float16 or float32 step below 1e-5 is
      refused;
    * each element must satisfy ``|numeric - analytic| <= atol + rtol·|analytic|``, and
      NaN never equals NaN unless ``equal_nan=True``.

    Where functrans differs: the numerical side is computed in the inputs' dtype with the
    differences accumulated in float64, all elements at once with vmap; functions may
    return several outputs (each is projected); complex arguments follow the library's
    convention; dict keys may be dtypes or types (MXNet silently ignores a key written as
    ``np.float64`` rather than ``np.dtype(np.float64)``).

    >>> import numpy as np, functrans.numpy as fnp
    >>> check_numeric_gradient(lambda x, w: fnp.tanh(x @ w),
    ...                        [np.ones((2, 3)) * 0.1, np.eye(3)], dtype=np.float64)
    """
    what = "check_numeric_gradient"
    names, values = _located(fun, location, what)
    values = _cast_location(values, dtype)
    if grad_nodes is None:
        nodes = [n for n, v in zip(names, values) if is_inexact(get_aval(v).dtype)]
    else:
        nodes = list(grad_nodes)
        unknown = [n for n in nodes if n not in names]
        if unknown:
            raise ValueError(f"{what}: grad_nodes {unknown} are not arguments of the function "
                             f"({names})")
        if isinstance(grad_nodes, dict):
            bad = {n: r for n, r in grad_nodes.items() if r not in ("write", "add", "null")}
            if bad:
                raise ValueError(f"{what}: grad_req must be 'write', 'add' or 'null', got {bad}")
            nodes = [n for n in nodes if grad_nodes[n] != "null"]  # nothing to compare
            if not nodes:
                return
    rng = backend.default_rng(resolve_seed(seed), like=placement(values))
    outs = fun(*values)
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    projections = tuple(rng.uniform(0.5, 1.5, get_aval(y).shape).astype(
        np.result_type(get_aval(y).dtype, np.float16)) if is_inexact(get_aval(y).dtype)
        else None for y in outs)
    active = [names.index(n) for n in nodes]

    partial_fun = partial_over(fun, values, active)

    checked_values = [values[i] for i in active]
    base = np.dtype(np.result_type(*[get_aval(v).dtype for v in checked_values]))
    base = np.dtype(base.type(0).real.dtype)
    eps = _mx_tolerance(numeric_eps, base, _MX_EPS)
    if base in (np.dtype(np.float16), np.dtype(np.float32)) and eps < 1e-5:
        raise ValueError(f"{what}: numeric_eps={eps:g} is too small for {base.name} "
                         "finite differences (MXNet requires at least 1e-5)")
    rtol = _mx_tolerance(rtol, base, _MX_RTOL)
    atol = _mx_tolerance(atol, base, _MX_ATOL)
    out, vjp_fun = api.vjp(partial_fun, *checked_values)
    cts = tuple(backend.zeros(get_aval(y).shape, get_aval(y).dtype, like=y) if p is None else
                p.astype(get_aval(y).dtype) for p, y in zip(projections, outs))
    analytic = vjp_fun(cts if isinstance(out, (tuple, list)) else cts[0])
    # MXNet's numeric_eps is the full width of the difference: x ± eps/2.
    numeric = numerical_grad(partial_fun, checked_values, projections, eps / 2)
    for n, a, num in zip(nodes, analytic, numeric):
        try:  # relative to the analytic gradient, as MXNet's np.allclose(numeric, analytic)
            assert_allclose(backend.to_host(num), backend.to_host(a), rtol=rtol, atol=atol,
                            equal_nan=equal_nan,
                            err_msg=f"{what}: gradient of {n!r} (numeric_eps={eps}: "
                                    f"x ± {eps / 2:g})",
                            names=("numeric", "analytic"))
        except AssertionError as e:
            raise GradcheckError(str(e)) from None


# ------------------------------------------------------------------------------------------
# pytest helpers
# ------------------------------------------------------------------------------------------


def seed_for(key: str = "", session_seed: int | None = None) -> int:
    """A reproducible seed for ``key`` (e.g. a test's node id): a hash of ``key`` and the
    session seed, which is ``session_seed`` if given, else ``FUNCTRANS_TEST_SEED`` (an
    integer, or ``random``; the pytest option ``--functrans-seed`` sets it), else 0.  The
    same key and session seed give the same seed, alone or among other tests; different
    keys give unrelated seeds.

    >>> seed_for("test_sin") == seed_for("test_sin") != seed_for("test_cos")
    True
    >>> seed_for("test_sin", session_seed=1) == seed_for("test_sin", session_seed=2)
    False
    """
    session = resolve_seed(session_seed)
    entropy = [session, zlib.crc32(key.encode())]
    return int(np.random.SeedSequence(entropy).generate_state(1)[0]) & 0x7FFFFFFF


def make_rng(key: str = "", session_seed: int | None = None
             ) -> tuple[np.random.Generator, int]:
    """``(numpy Generator, seed)`` seeded by :func:`seed_for` ``(key, session_seed)``.

    >>> rng, seed = make_rng("test_example")
    >>> rng.standard_normal(2).shape
    (2,)
    """
    seed = seed_for(key, session_seed)
    return np.random.default_rng(seed), seed


def random_array(rng: np.random.Generator, shape, dtype=np.float64) -> np.ndarray:
    """Standard-normal values of ``shape`` and ``dtype`` (complex: both parts normal;
    integers: small values; booleans: fair coins).

    >>> random_array(np.random.default_rng(0), (2, 3), np.complex64).dtype
    dtype('complex64')
    """
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -3, 4, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _shape_id(shape) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"


def parametrize_dtypes_shapes(dtypes: Sequence = FLOAT_DTYPES,
                              shapes: Sequence[tuple] = ((), (3,), (2, 3)),
                              argnames: str = "dtype,shape"):
    """A ``pytest.mark.parametrize`` over every (dtype, shape) pair, with readable ids
    such as ``float32-2x3``.

    >>> mark = parametrize_dtypes_shapes((np.float64,), ((2,),))
    >>> mark.args
    ('dtype,shape', [(<class 'numpy.float64'>, (2,))])
    """
    import pytest
    cases = [(d, tuple(s)) for d in dtypes for s in shapes]
    ids = [f"{np.dtype(d).name}-{_shape_id(s)}" for d, s in cases]
    return pytest.mark.parametrize(argnames, cases, ids=ids)


def _make_rng_fixture():
    import pytest

    @pytest.fixture
    def rng(request):
        """The ``rng`` fixture for a session without functrans's pytest plugin (which
        provides the same fixture and its report itself)."""
        session = resolve_seed(None)
        if request.config.getoption("functrans_seed", "absent") == "absent":
            request.node.add_report_section(
                "setup", "functrans seed",
                f"session seed {session}: rerun with {SEED_ENV_VAR}={session} to reproduce")
        return make_rng(request.node.nodeid, session)[0]

    return rng


# ------------------------------------------------------------------------------------------
# hypothesis strategies
# ------------------------------------------------------------------------------------------

#: Value domains for :func:`arrays`, as closed intervals (a union of two for
#: ``away_from_zero``).  Each keeps a central difference with steps up to 1e-2 inside the
#: domain of the functions it is meant for and values moderate enough that tolerances mean
#: the same thing everywhere: ``real`` (anything smooth), ``positive`` (log, sqrt, powers),
#: ``unit`` (arcsin, arccos, arctanh), ``away_from_zero`` (1/x, and abs or sign away from
#: their kink).
DOMAINS = {
    "real": ((-3.0, 3.0),),
    "positive": ((0.1, 3.0),),
    "unit": ((-0.9, 0.9),),
    "away_from_zero": ((-3.0, -0.1), (0.1, 3.0)),
}


def _hypothesis():
    try:
        import hypothesis.extra.numpy as hnp
        import hypothesis.strategies as st
    except ImportError:
        raise ImportError('functrans.testing\'s strategies need hypothesis: pip install '
                          '"functrans[test]" (or hypothesis)') from None
    return st, hnp


def _real_elements(st, domain, width: int):
    if isinstance(domain, str):
        if domain not in DOMAINS:
            raise ValueError(f"arrays: unknown elements domain {domain!r}; use one of "
                             f"{sorted(DOMAINS)}, a (low, high) pair or a strategy")
        intervals = DOMAINS[domain]
    else:
        low, high = domain
        intervals = ((float(low), float(high)),)
    parts = [st.floats(*_inside(low, high, width), width=width, allow_nan=False,
                       allow_infinity=False, allow_subnormal=False) for low, high in intervals]
    return parts[0] if len(parts) == 1 else st.one_of(*parts)


def _inside(low: float, high: float, width: int) -> tuple[float, float]:
    """``[low, high]`` shrunk to the nearest values a float of ``width`` bits represents."""
    real = {16: np.float16, 32: np.float32, 64: np.float64}[width]
    lo, hi = real(low), real(high)
    if float(lo) < low:
        lo = np.nextafter(lo, real(np.inf))
    if float(hi) > high:
        hi = np.nextafter(hi, real(-np.inf))
    return float(lo), float(hi)


def array_shapes(*, min_dims: int = 0, max_dims: int = 3, min_side: int = 1,
                 max_side: int = 4):
    """A hypothesis strategy for array shapes small enough for full Jacobians (at most
    ``max_side ** max_dims`` elements; ``()`` included unless ``min_dims > 0``).

    >>> from hypothesis import given, settings
    >>> @settings(max_examples=5, deadline=None, database=None)
    ... @given(array_shapes(min_dims=2, max_dims=3))
    ... def check(shape):
    ...     assert 2 <= len(shape) <= 3
    ...
    >>> check()
    """
    _st, hnp = _hypothesis()
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


def arrays(shape=None, dtype=np.float64, elements="real"):
    """A hypothesis strategy for NumPy arrays to check derivatives at.

    * ``shape``: a tuple, an int, or a strategy of shapes (default :func:`array_shapes`);
    * ``dtype``: a dtype or a strategy of dtypes (e.g. ``sampled_from(FLOAT_DTYPES)``);
      float16/32/64 and complex64/128 (both parts drawn from the domain);
    * ``elements``: a domain name from :data:`DOMAINS` (``"real"``, ``"positive"``,
      ``"unit"``, ``"away_from_zero"``), a ``(low, high)`` pair, or a strategy of floats.

    NaN, infinities and subnormals are never drawn.  Shrinking moves values towards 0 (or
    the domain's end nearest to it); pair ``"real"`` with
    ``check_grads(..., detect_nondifferentiable=True)`` when the function has a kink there.

    >>> import numpy as np
    >>> from hypothesis import given, settings
    >>> import functrans.numpy as fnp
    >>> @settings(max_examples=10, deadline=None)
    ... @given(arrays(shape=(3,), elements="positive"))
    ... def test_log_derivative(x):
    ...     assert x.min() >= 0.1
    ...     check_grads(fnp.log, (x,), order=1)
    ...
    >>> test_log_derivative()
    """
    st, hnp = _hypothesis()
    if shape is None:
        shape = array_shapes()

    def with_dtype(dtype):
        dtype = np.dtype(dtype)
        if dtype.kind not in "fc":
            raise TypeError(f"arrays: dtype must be floating or complex, got {dtype.name}")
        width = 8 * dtype.itemsize // (2 if dtype.kind == "c" else 1)
        if isinstance(elements, st.SearchStrategy):
            values = elements
        else:
            values = _real_elements(st, elements, width)
        if dtype.kind == "c":
            values = st.builds(complex, values, values)
        return hnp.arrays(dtype, shape, elements=values)

    if isinstance(dtype, st.SearchStrategy):
        return dtype.flatmap(with_dtype)
    return with_dtype(dtype)


def __dir__() -> list[str]:
    return sorted(__all__)


def __getattr__(name: str) -> Any:
    # The pytest fixture is built on first use, so importing functrans never imports pytest.
    # functrans's pytest plugin provides it without an import; this name is for sessions
    # that run without the plugin (`from functrans.testing import rng` in a conftest.py).
    if name == "rng":
        fixture = _make_rng_fixture()
        globals()["rng"] = fixture
        return fixture
    raise AttributeError(f"module 'functrans.testing' has no attribute {name!r}")
