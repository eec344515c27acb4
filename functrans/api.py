"""The public transforms: jvp, linearize, vjp, grad, value_and_grad, vmap, jacfwd, jacrev,
hessian, linear_transpose, make_jaxpr and eval_shape.

Each one flattens its pytree arguments, runs a flat transform from ``interpreters/`` and
unflattens the results; the checks here turn bad input into errors that name the transform,
the argument and the shapes or dtypes involved.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Hashable, Literal, Sequence, TypeVar, cast, overload

import numpy as np
from typing_extensions import ParamSpec

from functrans import array_types, backend, core, reverse_mode
from functrans.api_util import argnums_tuple, partial_over
from functrans.backend import is_array, owned
from functrans.core import ClosedJaxpr, ShapeDtypeStruct, ShapedArray, float0, get_aval
from functrans.interpreters import ad, batching, partial_eval, transpose
from functrans.interpreters.ad import Zero
from functrans.interpreters.batching import not_mapped
from functrans.primitives import shape as shape_ops
from functrans.primitives import slicing
from functrans.primitives.conversion import convert_element_type, zeros_like
from functrans.tree_util import (PyTreeDef, flatten_up_to, keystr, tree_flatten,
                                 tree_flatten_with_path, tree_structure, tree_unflatten)

__all__ = ["jvp", "linearize", "vjp", "grad", "value_and_grad", "vmap", "jacfwd", "jacrev",
           "jacobian", "hessian", "linear_transpose", "make_jaxpr", "eval_shape"]

# The types of the public signatures: a transform keeps the wrapped function's parameters
# (P) where the result takes the same arguments, and says what it returns (R: the wrapped
# function's result; A: its auxiliary data with has_aux=True). Pytrees are typed Any.
F = TypeVar("F", bound=Callable)
P = ParamSpec("P")
R = TypeVar("R")
A = TypeVar("A")


# ------------------------------------------------------------------------------------------
# Flattening helpers
# ------------------------------------------------------------------------------------------


#: Values that are pytree leaves, for the fast paths of _flatten and _unflatten below
_LEAF_TYPES = frozenset({np.ndarray, array_types.Array, float, int, complex, bool})
_LEAF_TREE = tree_structure(0.0)
#: n -> the structure of a tuple of n leaves, the usual arguments of a transformed function
_TUPLE_TREES: dict[int, PyTreeDef] = {}


def _is_plain_leaf(x) -> bool:
    return type(x) in _LEAF_TYPES or isinstance(x, core.Tracer)


def _flatten(tree) -> tuple[list, PyTreeDef]:
    """``tree_flatten(tree)``, without walking the tree when it is a leaf or a tuple of
    leaves (the common arguments and results of transformed functions)."""
    if _is_plain_leaf(tree):
        return [tree], _LEAF_TREE
    if type(tree) is tuple and len(tree) < 8 and all(map(_is_plain_leaf, tree)):
        treedef = _TUPLE_TREES.get(len(tree))
        if treedef is None:
            treedef = _TUPLE_TREES[len(tree)] = tree_structure(tuple(0.0 for _ in tree))
        return list(tree), treedef
    return tree_flatten(tree)


def _unflatten(treedef: PyTreeDef, leaves: list):
    """``tree_unflatten(treedef, leaves)`` for a list of leaves, with _flatten's fast paths."""
    if treedef is _LEAF_TREE and len(leaves) == 1:
        return leaves[0]
    if _TUPLE_TREES.get(len(leaves)) is treedef:
        return tuple(leaves)
    return tree_unflatten(treedef, leaves)


class _Store:
    """Records the output structure of a flattened function once it has run."""

    __slots__ = ("out_tree", "aux_tree", "num_out")

    def __init__(self):
        self.out_tree = self.aux_tree = self.num_out = None


def _flatten_fun(fun: Callable, in_tree: PyTreeDef, has_aux: bool = False, name: str = ""
                 ) -> tuple[Callable, _Store]:
    """``fun`` as a function of flat leaves returning flat leaves (aux leaves last)."""
    store = _Store()

    def flat_fun(*leaves):
        out = fun(*_unflatten(in_tree, leaves))
        aux_leaves: list = []
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError(f"{name}: with has_aux=True the function must return a pair "
                                f"(output, auxiliary data), got {type(out).__name__}")
            out, aux = out
            aux_leaves, store.aux_tree = tree_flatten(aux)
        out_leaves, store.out_tree = _flatten(out)
        for leaf in out_leaves:
            _check_leaf(leaf, name, "output")
        store.num_out = len(out_leaves)
        return out_leaves + aux_leaves

    return flat_fun, store


def _check_leaf(x, name: str, what: str) -> None:
    t = type(x)
    if t is np.ndarray or t in core.python_scalar_types or isinstance(x, core.Tracer):
        if t is np.ndarray:
            _check_dtype(x.dtype, name, what)
        return
    if isinstance(x, np.matrix):
        raise TypeError(f"{name}: {what} is a numpy.matrix of shape {x.shape}; matrices keep "
                        "two axes under every operation, so results would have other shapes "
                        "than for arrays. Pass np.asarray(m) instead.")
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(f"{name}: {what} is a masked array (shape {x.shape}); transforms "
                        "would silently drop its mask. Pass m.filled(value), or the data and "
                        "the mask as two arrays and combine them with functrans.numpy.where.")
    if isinstance(x, ShapeDtypeStruct):
        raise TypeError(f"{name}: {what} is a ShapeDtypeStruct {x}, which has a shape and a "
                        "dtype but no values to differentiate or map over. Pass an array, "
                        "or use functrans.eval_shape / make_jaxpr to trace with shapes only.")
    if not (isinstance(x, (np.ndarray, np.generic)) or is_array(x)):
        raise TypeError(f"{name}: {what} {x!r} of type {t.__name__} is not an array; "
                        "leaves must be NumPy/CuPy arrays or Python scalars")
    if backend.is_lazy(x):
        backend.check_known_chunks(x, f"{name}: {what}")
    _check_dtype(get_aval(x).dtype, name, what)


def _check_dtype(dtype: np.dtype, name: str, what: str) -> None:
    if dtype.kind in "OSUVMm" and dtype != float0:
        raise TypeError(f"{name}: {what} has dtype {dtype}, which no functrans operation "
                        "computes with; pass numeric or boolean arrays")


def _hand_out(values: list, others=(), check_aliasing: bool = True) -> list:
    """A transform's flat results as it hands them to the user: arrays the caller owns
    (``backend.owned``), viewed as the types functrans hands out (``array_types``)."""
    return array_types.hand_out(owned(values, others, check_aliasing))


def _split_aux(leaves: list, store: _Store):
    return leaves[:store.num_out], leaves[store.num_out:]


def _zeros_for(primal, ct):
    """A materialized cotangent/tangent: ``ct``, or zeros matching ``primal``.  The
    (co)tangent of a Python float or complex is one too, whichever path computed it."""
    if type(ct) is not Zero:
        if type(primal) in (float, complex) and (
                isinstance(ct, np.generic) or (isinstance(ct, np.ndarray) and ct.ndim == 0)):
            return ct.item()
        if type(primal) in array_types.WEAK_ARRAY_TYPES and not isinstance(ct, core.Tracer):
            # weakly typed as its primal (a Python scalar ct: computed from scalars alone)
            return array_types.weak_result(ct if backend.is_array(ct) else
                                           np.asarray(ct, primal.dtype))
        return ct
    if ct.aval.dtype == float0:
        # Host by design, as in JAX: float0 holds no bytes and CuPy has no void dtypes.
        return np.zeros(ct.aval.shape, float0)
    return zeros_like(primal)


#: types of values that live on the host (no device to create arrays on)
_HOST_VALUES = frozenset({np.ndarray, array_types.Array, float, complex, np.float64, np.float32,
                          np.complex128, np.complex64})


def _device_like(values):
    """A concrete device array among ``values`` (looking through JVP and batching tracers),
    for creating arrays on its device; None when all are host values or abstract."""
    for x in values:
        if isinstance(x, core.Tracer):
            x = x.device_witness()
        if backend.is_device_array(x):
            return x
    return None


def _cast(x, dtype, weak_type: bool, like=None):
    """A weakly typed tangent or cotangent (a Python scalar, or a tracer of one) as ``dtype``
    (for the primal ``like``)."""
    if isinstance(x, core.Tracer):
        return convert_element_type(x, dtype, weak_type)
    # Not convert_element_type: evaluated on a Python scalar it gives a Python scalar back.
    value = np.asarray(x, dtype)
    if weak_type:
        return value.item()
    # With a device primal a NumPy scalar: device kernels take it without a host array.
    return value[()] if _device_like([like]) is not None else value


# ------------------------------------------------------------------------------------------
# Forward mode
# ------------------------------------------------------------------------------------------


def _check_tangents(name: str, primals: list, tangents: list, primal_tree, tangent_tree):
    if primal_tree != tangent_tree:
        raise TypeError(f"{name}: primal and tangent arguments must have the same tree "
                        f"structure; primals have {primal_tree}, tangents have {tangent_tree}")
    out = []
    for i, (p, t) in enumerate(zip(primals, tangents)):
        _check_leaf(p, name, "primal")
        _check_leaf(t, name, "tangent")
        pa, ta = get_aval(p), get_aval(t)
        if pa.shape != ta.shape:
            raise ValueError(f"{name}: primal and tangent leaf {i} must have equal shapes; "
                             f"got primal shape {pa.shape} and tangent shape {ta.shape}")
        expected = core.tangent_dtype(pa.dtype)
        if ta.dtype != expected and not (ta.weak_type and core.is_inexact(expected)):
            raise TypeError(f"{name}: the tangent of a {pa.dtype.name} primal (leaf {i}) must "
                            f"have dtype {expected.name if expected != float0 else 'float0'}, "
                            f"got {ta.dtype.name}")
        if expected == float0:
            out.append(Zero(core.tangent_aval(pa)))
        else:
            # A Python scalar tangent takes the primal's dtype (no float32 -> float64 leak).
            out.append(t if ta.dtype == expected else _cast(t, expected, pa.weak_type, p))
    return out


@overload
def jvp(fun: Callable[..., R], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: Literal[False] = False) -> tuple[R, R]: ...
@overload
def jvp(fun: Callable[..., tuple[R, A]], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: Literal[True]) -> tuple[R, R, A]: ...
@overload
def jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool) -> tuple[Any, ...]: ...
def jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple[Any, ...]:
    """Forward mode: evaluate ``fun`` and its directional derivative.

    Returns ``(fun(*primals), J·tangents)`` (plus the auxiliary data if ``has_aux``).

    >>> import functrans as ft, functrans.numpy as fnp
    >>> y, dy = ft.jvp(fnp.sin, (0.0,), (2.0,))
    >>> float(y), float(dy)
    (0.0, 2.0)
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primal and tangent arguments must be tuples or lists; got "
                        f"{type(primals).__name__} and {type(tangents).__name__}")
    primals_flat, in_tree = _flatten(tuple(primals))
    tangents_flat, tangent_tree = _flatten(tuple(tangents))
    tangents_flat = _check_tangents("jvp", primals_flat, tangents_flat, in_tree, tangent_tree)
    flat_fun, store = _flatten_fun(fun, in_tree, has_aux, "jvp")
    out_p, out_t = ad.jvp_flat(flat_fun, primals_flat, tangents_flat)
    out_p, aux = _split_aux(out_p, store)
    out_t = _hand_out([_zeros_for(p, t) for p, t in zip(out_p, out_t[:store.num_out])],
                  primals_flat + tangents_flat + out_p)
    result = (_unflatten(store.out_tree, array_types.hand_out(out_p)),
              _unflatten(store.out_tree, out_t))
    return result + (_unflatten(store.aux_tree, aux),) if has_aux else result


@overload
def linearize(fun: Callable[..., R], *primals: Any,
              has_aux: Literal[False] = False) -> tuple[R, Callable[..., R]]: ...
@overload
def linearize(fun: Callable[..., tuple[R, A]], *primals: Any,
              has_aux: Literal[True]) -> tuple[R, Callable[..., R], A]: ...
@overload
def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool) -> tuple[Any, ...]: ...
def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False
              ) -> tuple[Any, ...]:
    """Evaluate ``fun`` and stage its JVP at ``primals`` as a linear function.

    Type: ``(f, x) -> (f(x), t ↦ ∂f(x)·t)``.  The linear function evaluates a jaxpr of the
    tangent computation only; the primal work is done once.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> y, f_jvp = ft.linearize(fnp.exp, 0.0)
    >>> float(f_jvp(3.0))
    3.0
    """
    primals_flat, in_tree = _flatten(primals)
    for p in primals_flat:
        _check_leaf(p, "linearize", "primal")
    flat_fun, store = _flatten_fun(fun, in_tree, has_aux, "linearize")
    # The linear function outlives this call: it keeps copies of the caller's arrays.
    out_p, jaxpr, consts, out_tangents = ad.linearize_flat(flat_fun, primals_flat, snapshot=True)
    out_p, aux = _split_aux(out_p, store)
    num_out = store.num_out

    def f_jvp(*tangents):
        tangents_flat, tangent_tree = _flatten(tangents)
        tangents_flat = _check_tangents("linearize", primals_flat, tangents_flat, in_tree,
                                        tangent_tree)
        args = [_zeros_for(p, t) for p, t in zip(primals_flat, tangents_flat)]
        with core.computing_internally():
            outs_t = ad.eval_linearized(jaxpr, consts, out_tangents, args)
        outs = [_zeros_for(p, t) for p, t in zip(out_p, outs_t[:num_out])]
        return _unflatten(store.out_tree, _hand_out(outs, tangents_flat + out_p))

    result = (_unflatten(store.out_tree, array_types.hand_out(out_p)), f_jvp)
    return result + (_unflatten(store.aux_tree, aux),) if has_aux else result


# ------------------------------------------------------------------------------------------
# Reverse mode
# ------------------------------------------------------------------------------------------


def _check_cotangents(name: str, outs: list, cts: list, out_tree, ct_tree) -> list:
    if out_tree != ct_tree:
        raise TypeError(f"{name}: the cotangent must have the structure of the primal "
                        f"output {out_tree}, got {ct_tree}")
    checked = []
    for i, (o, ct) in enumerate(zip(outs, cts)):
        _check_leaf(ct, name, "cotangent")
        oa, ca = get_aval(o), get_aval(ct)
        if oa.shape != ca.shape:
            raise ValueError(f"{name}: cotangent leaf {i} has shape {ca.shape}, but the "
                             f"primal output has shape {oa.shape}")
        expected = core.tangent_dtype(oa.dtype)
        if expected == float0:
            checked.append(Zero(core.tangent_aval(oa)))
            continue
        if ca.dtype != expected and not ca.weak_type:
            raise TypeError(f"{name}: cotangent leaf {i} has dtype {ca.dtype.name}, but the "
                            f"primal output has dtype {oa.dtype.name}")
        # A Python scalar cotangent takes the output's dtype; the transpose rules require it.
        checked.append(ct if ca.dtype == expected else _cast(ct, expected, oa.weak_type, o))
    return checked


@overload
def vjp(fun: Callable[..., R], *primals: Any,
        has_aux: Literal[False] = False) -> tuple[R, Callable[[Any], tuple[Any, ...]]]: ...
@overload
def vjp(fun: Callable[..., tuple[R, A]], *primals: Any,
        has_aux: Literal[True]) -> tuple[R, Callable[[Any], tuple[Any, ...]], A]: ...
@overload
def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool) -> tuple[Any, ...]: ...
def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """Reverse mode: evaluate ``fun`` and return a function pulling cotangents back.

    Returns ``(fun(*primals), vjp_fun)`` where ``vjp_fun(ct)`` is the tuple of
    ``ctᵀ·∂fun/∂primals[i]``, one entry per primal (plus aux data if ``has_aux``).  It is
    linearize followed by transposition of the linear jaxpr.

    >>> import numpy as np, functrans as ft
    >>> y, f_vjp = ft.vjp(lambda x: x * x, np.array([1.0, 2.0]))
    >>> f_vjp(np.ones(2))
    (array([2., 4.]),)
    """
    primals_flat, in_tree = _flatten(primals)
    for p in primals_flat:
        _check_leaf(p, "vjp", "primal")
    flat_fun, store = _flatten_fun(fun, in_tree, has_aux, "vjp")
    # The pullback outlives this call: it keeps copies of the caller's arrays.
    out_p, pullback = reverse_mode.planned_vjp(flat_fun, primals_flat, snapshot=True)
    out_p, aux = _split_aux(out_p, store)

    def vjp_fun(ct):
        cts_flat, ct_tree = _flatten(ct)
        cts_flat = _check_cotangents("vjp", out_p, cts_flat, store.out_tree, ct_tree)
        cts_in = pullback(cts_flat + [Zero.from_value(a) for a in aux])
        cts_in = [_zeros_for(p, c) for p, c in zip(primals_flat, cts_in)]
        return _unflatten(in_tree, _hand_out(cts_in, cts_flat + primals_flat + out_p))

    result = (_unflatten(store.out_tree, array_types.hand_out(out_p)), vjp_fun)
    return result + (_unflatten(store.aux_tree, aux),) if has_aux else result


def _check_grad_inputs(name: str, leaves: list, holomorphic: bool, allow_int: bool) -> None:
    for x in leaves:
        t = type(x)
        if (t is np.ndarray or t is array_types.Array or t is float) and not holomorphic and (
                t is float or x.dtype.kind == "f"):
            continue  # the common case: a real floating array or a Python float
        _check_leaf(x, name, "argument")
        dtype = get_aval(x).dtype
        if holomorphic:
            if dtype.kind != "c":
                raise TypeError(f"{name} with holomorphic=True requires complex inputs, got "
                                f"{dtype.name}")
        elif not core.is_inexact(dtype) and not allow_int:
            raise TypeError(f"{name} requires real- or complex-valued inputs (a floating "
                            f"dtype), got {dtype.name}. To differentiate with respect to "
                            "integer or boolean inputs, set allow_int=True (their gradient "
                            "is a float0 zero) or use vjp")


def value_and_grad(fun: Callable[P, Any], argnums: int | Sequence[int] = 0,
                   has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False) -> Callable[P, tuple[Any, Any]]:
    """Like :func:`grad`, but the function returns ``(value, gradient)``.

    >>> import functrans as ft
    >>> ft.value_and_grad(lambda x: x ** 3)(2.0)
    (8.0, 12.0)
    """
    return _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, hand_out_value=True)


def _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, hand_out_value: bool):
    """``value_and_grad``; ``grad``, which drops the value, does not hand it out (about 1 %
    of a small gradient)."""
    name = "grad" if not getattr(fun, "__name__", "") else f"grad of {fun.__name__}"
    code = _code_of(fun)

    @functools.wraps(fun)
    def value_and_grad_fun(*args, **kwargs):
        if argnums == 0 and len(args) == 1 and not kwargs and type(argnums) is int:
            f, dyn = fun, args  # the common call grad(f)(x), without the wrappers below
        else:
            nums = argnums_tuple(argnums, len(args), "grad")
            f = partial_over(functools.partial(fun, **kwargs) if kwargs else fun, args, nums)
            dyn = tuple(args[i] for i in nums)
        leaves, in_tree = _flatten(dyn)
        _check_grad_inputs("grad", leaves, holomorphic, allow_int)
        flat_fun, store = _flatten_fun(f, in_tree, has_aux, "grad")
        out_p, pullback = reverse_mode.planned_vjp(flat_fun, leaves, code)
        if store.num_out != 1:
            raise TypeError(f"{name}: grad requires a single scalar output, got a pytree "
                            f"with {store.num_out} leaves ({store.out_tree})")
        value, aux = out_p[0], out_p[1:]
        aval = get_aval(value)
        if aval.shape != ():
            raise TypeError(f"{name}: grad requires a scalar output, got shape {aval.shape}. "
                            "Use vjp, jacrev or jacfwd for non-scalar outputs")
        if holomorphic:
            if aval.dtype.kind != "c":
                raise TypeError(f"{name} with holomorphic=True requires a complex output, got "
                                f"{aval.dtype.name}")
        elif not (core.is_inexact(aval.dtype) and aval.dtype.kind != "c"):
            raise TypeError(f"{name}: grad requires a real-valued floating output, got "
                            f"{aval.dtype.name}" + ("; for holomorphic functions pass "
                                                    "holomorphic=True" if aval.dtype.kind == "c"
                                                    else ""))
        # A weakly typed output (from Python scalars) gets a weak cotangent, so Python
        # scalars in give Python scalars out, as the primal computation does.
        like = None if type(value) in _HOST_VALUES else _device_like([value])
        one = ((complex(1) if aval.dtype.kind == "c" else 1.0) if aval.weak_type else
               aval.dtype.type(1) if like is None else backend.ones((), aval.dtype, like=like))
        cts = pullback([one] + [Zero.from_value(a) for a in aux])
        flat = _hand_out([_zeros_for(p, c) for p, c in zip(leaves, cts)], leaves)
        if len(core.trace_stack()) == 1:  # the value and aux are handed out as results are
            if hand_out_value:
                value = array_types.hand_out([value])[0]
            if aux:
                aux = array_types.hand_out(aux)
        grads = _unflatten(in_tree, flat)
        g = grads[0] if isinstance(argnums, int) else grads
        if has_aux:
            return (value, tree_unflatten(store.aux_tree, aux)), g
        return value, g

    return value_and_grad_fun


def _code_of(fun):
    """What identifies a function across calls for ``reverse_mode.planned_vjp``: its code object (also
    of a bound method or a ``functools.partial``), or None."""
    code = getattr(fun, "__code__", None)
    if code is None:
        code = getattr(getattr(fun, "func", None), "__code__", None)
    return code


def grad(fun: Callable[P, Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False) -> Callable[P, Any]:
    """The gradient of a scalar function with respect to positional argument(s) ``argnums``.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> ft.grad(fnp.sin)(0.0)
    1.0
    >>> ft.grad(lambda x, y: x * y, argnums=(0, 1))(2.0, 3.0)
    (3.0, 2.0)
    """
    vg = _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, hand_out_value=False)

    @functools.wraps(fun)
    def grad_fun(*args, **kwargs):
        out = vg(*args, **kwargs)
        if has_aux:
            (_, aux), g = out
            return g, aux
        return out[1]

    return grad_fun


# ------------------------------------------------------------------------------------------
# Batching
# ------------------------------------------------------------------------------------------


def _broadcast_prefix(name: str, what: str, prefix, tree) -> list:
    """One entry of ``prefix`` per leaf of ``tree`` (``prefix`` is a tree prefix of it)."""
    prefix_leaves, prefix_tree = tree_flatten(prefix, is_leaf=lambda x: x is None)
    try:
        subtrees = flatten_up_to(prefix_tree, tree)
    except ValueError as e:
        raise ValueError(f"{name}: {what} {prefix!r} must be a tree prefix of the value it "
                         f"applies to, of structure {tree_structure(tree)} ({e})") from None
    out = []
    for axis, sub in zip(prefix_leaves, subtrees):
        out.extend([axis] * len(tree_flatten(sub)[0]))
    return out


def vmap(fun: F, in_axes: int | None | Sequence[Any] = 0, out_axes: Any = 0,
         axis_name: Hashable | None = None, axis_size: int | None = None,
         sum_match: bool = False) -> F:
    """Vectorize ``fun`` over a batch axis of its arguments.

    ``in_axes``: an int, None, or a tuple with one entry (a pytree prefix) per positional
    argument saying which axis of each leaf is mapped (None: not mapped).  Keyword
    arguments are always mapped over their leading axis, as in JAX.  ``out_axes`` likewise
    for the output.  ``axis_name`` names the batch axis for the collectives of
    ``functrans.lax`` (``psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``,
    ``axis_index``, ``ppermute``, ``all_to_all``, ``psum_scatter``, ...), which act across
    the batch members inside ``fun``.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp, functrans.lax as lax
    >>> ft.vmap(fnp.dot, in_axes=(0, None))(np.eye(2), np.array([1.0, 2.0]))
    array([1., 2.])
    >>> ft.vmap(lambda x: x / lax.psum(x, "i"), axis_name="i")(np.array([1.0, 3.0]))
    array([0.25, 0.75])
    """
    if not (in_axes is None or isinstance(in_axes, (int, tuple, list, dict))):
        raise TypeError(f"vmap: in_axes must be an int, None, or a tuple of entries per "
                        f"positional argument, got {in_axes!r}")

    @functools.wraps(fun)
    def batched_fun(*args, **kwargs):
        if isinstance(in_axes, list) and len(in_axes) == len(args):
            axes_prefix = tuple(in_axes)
        elif isinstance(in_axes, (tuple, list)):
            if len(in_axes) != len(args):
                raise ValueError(f"vmap: in_axes has {len(in_axes)} entries but the function "
                                 f"was called with {len(args)} positional arguments")
            axes_prefix = tuple(in_axes)
        else:
            axes_prefix = (in_axes,) * len(args)
        call, args = _with_kwargs(fun, args, kwargs)
        if kwargs:
            axes_prefix += (0,)
        args_flat, in_tree = _flatten(args)
        if in_tree is _TUPLE_TREES.get(len(args)) and all(
                a is None or type(a) is int for a in axes_prefix):
            dims = list(axes_prefix)  # every argument a leaf: one axis each
        else:
            dims = _broadcast_prefix("vmap", "in_axes", axes_prefix, args)
        size, dims = _mapped_size(args_flat, dims, axis_size)
        flat_fun, store = _flatten_fun(call, in_tree, name="vmap")
        outs, out_dims = batching.batch_flat(flat_fun, size, args_flat, dims, axis_name)
        target = [out_axes] * len(outs) if out_axes is None or type(out_axes) is int else (
            _broadcast_prefix("vmap", "out_axes", out_axes, _unflatten(store.out_tree, outs)))
        moved = [_move_batch_axis(x, d, t, size, sum_match)
                 for x, d, t in zip(outs, out_dims, target)]
        return _unflatten(store.out_tree, _hand_out(moved, args_flat))

    return cast(F, batched_fun)  # same parameters; shapes are not part of the types


def _mapped_size(args_flat: list, dims: list, axis_size: int | None):
    if axis_size is not None and (isinstance(axis_size, (bool, np.bool_)) or not isinstance(
            axis_size, (int, np.integer)) or axis_size < 0):
        raise TypeError(f"vmap: axis_size must be a non-negative int (the number of batch "
                        f"members), got {axis_size!r} of type {type(axis_size).__name__}")
    sizes: list[tuple[int, int, int, tuple[int, ...]]] = []  # (leaf, size, axis, shape)
    normalized: list[int | None] = []  # None: not_mapped
    for i, (x, d) in enumerate(zip(args_flat, dims)):
        _check_leaf(x, "vmap", "argument")
        if d is None:
            normalized.append(not_mapped)
            continue
        shape = get_aval(x).shape
        if not isinstance(d, (int, np.integer)) or not -len(shape) <= d < len(shape):
            raise ValueError(f"vmap: in_axes {d!r} is out of range for argument leaf {i} of "
                             f"shape {shape} (rank {len(shape)})")
        d = int(d) % len(shape)
        sizes.append((i, shape[d], d, shape))
        normalized.append(d)
    if not sizes:
        if axis_size is None:
            raise ValueError("vmap: no argument is mapped (all in_axes are None); pass "
                             "axis_size to say how many batch members to make")
        return int(axis_size), normalized
    size = sizes[0][1] if axis_size is None else int(axis_size)
    if any(s != size for _, s, _, _ in sizes):
        detail = "; ".join(f"leaf {i} of shape {shape} has size {s} on axis {d}"
                           for i, s, d, shape in sizes)
        raise ValueError(f"vmap got inconsistent sizes for the mapped axes: {detail}"
                         + (f" (axis_size={axis_size})" if axis_size is not None else ""))
    return size, normalized


def _move_batch_axis(x, dim, target, size: int, sum_match: bool = False):
    if target is None:
        if dim is not not_mapped:
            if sum_match:  # JAX's sum_match: the members' outputs summed
                return shape_ops.reduce_sum(x, (dim,))
            raise ValueError("vmap: an output is batched, but its out_axes is None; only "
                             "outputs that do not depend on mapped inputs may use None "
                             "(or pass sum_match=True to sum it over the batch)")
        return x
    ndim = len(get_aval(x).shape) + (dim is not_mapped)
    if not -ndim <= target < ndim:
        raise ValueError(f"vmap: out_axes {target} is out of range for an output of rank "
                         f"{ndim - 1} (plus the batch axis)")
    target %= ndim
    if dim is not_mapped:
        x = shape_ops.broadcast(x, (size,))
        dim = 0
    return shape_ops.moveaxis(x, dim, target)


# ------------------------------------------------------------------------------------------
# Jacobians
# ------------------------------------------------------------------------------------------


def _std_basis(leaves: list, name: str):
    """Unit vectors for all input elements: per leaf, an array of shape (N, *leaf.shape)."""
    sizes = [get_aval(x).size for x in leaves]
    total = sum(sizes)
    like = _device_like(leaves)
    out, offset = [], 0
    for x, n in zip(leaves, sizes):
        aval = get_aval(x)
        basis = backend.zeros((total, n), aval.dtype, like=like)
        basis[offset:offset + n] = backend.eye(n, dtype=aval.dtype, like=like)
        out.append(basis.reshape((total,) + aval.shape))
        offset += n
    return out, sizes


def _split_jacobian(jac, axis: int, sizes: list, shapes: list) -> list:
    """Split axis ``axis`` of size sum(sizes) into blocks reshaped to ``shapes``."""
    pieces, offset = [], 0
    jac_shape = get_aval(jac).shape
    for n, shp in zip(sizes, shapes):
        start = [0] * len(jac_shape)
        limit = list(jac_shape)
        start[axis], limit[axis] = offset, offset + n
        block = slicing.slice(jac, start, limit)
        pieces.append(shape_ops.reshape(block, jac_shape[:axis] + tuple(shp) + jac_shape[axis + 1:]))
        offset += n
    return pieces


def _check_jac_inputs(name: str, leaves: list, holomorphic: bool, allow_int: bool = False
                      ) -> None:
    for x in leaves:
        _check_leaf(x, name, "argument")
        dtype = get_aval(x).dtype
        if allow_int and dtype.kind in "biu":
            continue
        if holomorphic and dtype.kind != "c":
            raise TypeError(f"{name} with holomorphic=True requires complex inputs, got "
                            f"{dtype.name}")
        if not holomorphic and not (core.is_inexact(dtype) and dtype.kind != "c"):
            raise TypeError(f"{name} requires real-valued floating inputs, got {dtype.name}"
                            + ("; for holomorphic functions pass holomorphic=True"
                               if dtype.kind == "c" else ""))


def jacfwd(fun: Callable[P, Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable[P, Any]:
    """The Jacobian of ``fun`` by forward mode (vmap of jvp over input unit vectors).

    The result has the output's structure outside and the input's inside; each block has
    shape ``out.shape + in.shape``.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> ft.jacfwd(lambda x: x ** 2)(np.array([1.0, 2.0]))
    array([[2., 0.],
           [0., 4.]])
    """
    def jac_fun(*args, **kwargs):
        nums = argnums_tuple(argnums, len(args), "jacfwd")
        dyn = tuple(args[i] for i in nums)
        leaves, in_tree = tree_flatten(dyn)
        _check_jac_inputs("jacfwd", leaves, holomorphic)
        f = functools.partial(fun, **kwargs) if kwargs else fun
        flat_fun, store = _flatten_fun(partial_over(f, args, nums), in_tree, has_aux, "jacfwd")
        basis, sizes = _std_basis(leaves, "jacfwd")

        def pushforward(*tangents):
            out_p, out_t = ad.jvp_flat(flat_fun, leaves, list(tangents))
            return out_p, [_zeros_for(p, t) for p, t in zip(out_p, out_t)]

        # The values do not depend on the tangents, so they come out unbatched.
        values, jac_flat = vmap(pushforward, out_axes=(None, 0))(*basis)
        outs, aux = _split_aux(values, store)
        jac_flat = jac_flat[:store.num_out]
        return _assemble(store, outs, aux, jac_flat, sizes, leaves, in_tree, argnums, has_aux,
                         axis_first=True)

    return jac_fun


def _assemble(store, outs, aux, jac_flat, sizes, leaves, in_tree, argnums, has_aux, axis_first):
    in_shapes = [get_aval(x).shape for x in leaves]
    blocks = []
    for out, jac in zip(outs, jac_flat):
        out_shape = get_aval(out).shape
        if axis_first:  # jac: (N, *out_shape) -> (*out_shape, N)
            jac = shape_ops.moveaxis(jac, 0, len(out_shape))
            parts = _split_jacobian(jac, len(out_shape), sizes, in_shapes)
        else:
            parts = jac  # already one block per input, shaped (*out_shape, *in_shape)
        per_input = tree_unflatten(in_tree, _hand_out(parts, check_aliasing=False))
        blocks.append(per_input[0] if isinstance(argnums, int) else per_input)
    result = tree_unflatten(store.out_tree, blocks)
    return (result, tree_unflatten(store.aux_tree, aux)) if has_aux else result


def jacrev(fun: Callable[P, Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False) -> Callable[P, Any]:
    """The Jacobian of ``fun`` by reverse mode (vmap of the pullback over output unit
    vectors); same layout as :func:`jacfwd`.

    >>> import numpy as np, functrans as ft
    >>> ft.jacrev(lambda x: x[0] * x[1])(np.array([2.0, 3.0]))
    array([3., 2.])
    """
    def jac_fun(*args, **kwargs):
        nums = argnums_tuple(argnums, len(args), "jacrev")
        dyn = tuple(args[i] for i in nums)
        leaves, in_tree = tree_flatten(dyn)
        _check_jac_inputs("jacrev", leaves, holomorphic, allow_int)
        f = functools.partial(fun, **kwargs) if kwargs else fun
        flat_fun, store = _flatten_fun(partial_over(f, args, nums), in_tree, has_aux, "jacrev")
        values, pullback = reverse_mode.planned_vjp(flat_fun, leaves)
        outs, aux = _split_aux(values, store)
        for out in outs:
            dtype = get_aval(out).dtype
            if not holomorphic and not (core.is_inexact(dtype) and dtype.kind != "c"):
                raise TypeError(f"jacrev requires real-valued floating outputs, got "
                                f"{dtype.name}")
        basis, sizes = _std_basis(outs, "jacrev")

        # Integer inputs (allow_int=True) get float0 blocks, made here rather than batched.
        inexact = [core.is_inexact(get_aval(x).dtype) for x in leaves]

        def pull(*cts):
            cts_in = pullback(list(cts) + [Zero.from_value(a) for a in aux])
            return [_zeros_for(p, c) for p, c, d in zip(leaves, cts_in, inexact) if d]

        batched = iter(vmap(pull)(*basis))  # per inexact input leaf: (N_out, *in_shape)
        out_shapes = [get_aval(o).shape for o in outs]
        # Split the output axis: for each output, blocks (out_shape + in_shape) per input.
        split = [_split_jacobian(next(batched), 0, sizes, out_shapes) if d else
                 [np.zeros(shp + get_aval(x).shape, float0) for shp in out_shapes]
                 for x, d in zip(leaves, inexact)]
        jac_flat = [[split[k][i] for k in range(len(leaves))] for i in range(len(outs))]
        return _assemble(store, outs, aux, jac_flat, sizes, leaves, in_tree, argnums, has_aux,
                         axis_first=False)

    return jac_fun


#: JAX's ``jax.jacobian``: the Jacobian by reverse mode, :func:`jacrev` under another name.
jacobian = jacrev


def hessian(fun: Callable[P, Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable[P, Any]:
    """The Hessian of a scalar function: ``jacfwd(jacrev(fun))``.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> ft.hessian(lambda x: fnp.sum(x ** 3))(np.array([1.0, 2.0]))
    array([[ 6.,  0.],
           [ 0., 12.]])
    """
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)


# ------------------------------------------------------------------------------------------
# Staging
# ------------------------------------------------------------------------------------------


def _abstractify(x) -> ShapedArray:
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, x.dtype, x.weak_type)
    return get_aval(x)


def _with_kwargs(fun: Callable, args: tuple, kwargs: dict) -> tuple[Callable, tuple]:
    """``fun`` taking its keyword arguments as one extra positional dict, and the arguments
    with that dict appended: transforms then treat keyword arguments like the others."""
    if not kwargs:
        return fun, args
    n = len(args)

    def positional(*all_args):
        return fun(*all_args[:n], **all_args[n])

    return positional, args + (dict(kwargs),)


def _function_source(fun: Callable) -> str | None:
    """``"name at file:line"`` for a Python function, else its name (or None)."""
    target = inspect.unwrap(fun) if callable(fun) else fun
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    code = getattr(target, "__code__", None)
    if code is None:
        return name
    return f"{name} at {code.co_filename}:{code.co_firstlineno}"


def _argument_names(fun: Callable, args: tuple, kwargs: dict, static: set) -> tuple[str, ...]:
    """One name per leaf of the dynamic arguments, in flattening order: the parameter's name
    (``args[i]`` past a ``*args``, the keyword for keyword arguments) and the leaf's pytree
    path, as JAX's debug info names a jaxpr's inputs (``"params['w']"``)."""
    try:
        parameters = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    positional = [p for p in parameters
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    star = next((p.name for p in parameters if p.kind == p.VAR_POSITIONAL), "args")

    def parameter_name(i: int) -> str:
        if i < len(positional):
            return positional[i].name
        return f"{star}[{i - len(positional)}]"

    dyn = [(parameter_name(i), a) for i, a in enumerate(args) if i not in static]
    dyn += sorted(kwargs.items())  # the keyword dict flattens in sorted key order
    names = []
    for parameter, value in dyn:
        pairs, _ = tree_flatten_with_path(value)
        names += [parameter + keystr(path) for path, _ in pairs]
    return tuple(names)


def _result_paths(out_tree: PyTreeDef) -> tuple[str, ...]:
    pairs, _ = tree_flatten_with_path(tree_unflatten(out_tree, [0] * out_tree.num_leaves))
    return tuple("result" + keystr(path) for path, _ in pairs)


def _trace(fun: Callable, args: tuple, name: str, static_argnums=(), kwargs=None):
    static = set(argnums_tuple(static_argnums, len(args), name)) if static_argnums != () else set()
    user_fun, user_args = fun, args
    fun, args = _with_kwargs(fun, args, kwargs or {})
    dyn_nums = tuple(i for i in range(len(args)) if i not in static)
    dyn = tuple(args[i] for i in dyn_nums)
    leaves, in_tree = tree_flatten(dyn)
    for x in leaves:
        if isinstance(x, ShapeDtypeStruct):
            _check_dtype(x.dtype, name, "argument")
        else:
            _check_leaf(x, name, "argument")
    flat_fun, store = _flatten_fun(partial_over(fun, args, dyn_nums), in_tree, name=name)
    closed, out_avals = partial_eval.trace_to_jaxpr(flat_fun, [_abstractify(x) for x in leaves])
    arg_names = _argument_names(user_fun, user_args, kwargs or {}, static)
    if len(arg_names) == len(closed.jaxpr.invars):  # a custom pytree may flatten unusually
        closed.jaxpr.debug_info = core.DebugInfo(name, _function_source(user_fun), arg_names,
                                                 _result_paths(store.out_tree))
    return closed, out_avals, store, in_tree


@overload
def make_jaxpr(fun: Callable[P, Any], static_argnums: int | Sequence[int] = (),
               return_shape: Literal[False] = False) -> Callable[P, ClosedJaxpr]: ...
@overload
def make_jaxpr(fun: Callable[P, Any], static_argnums: int | Sequence[int] = (), *,
               return_shape: Literal[True]) -> Callable[P, tuple[ClosedJaxpr, Any]]: ...
@overload
def make_jaxpr(fun: Callable[P, Any], static_argnums: int | Sequence[int],
               return_shape: Literal[True]) -> Callable[P, tuple[ClosedJaxpr, Any]]: ...
def make_jaxpr(fun: Callable[P, Any], static_argnums: int | Sequence[int] = (),
               return_shape: bool = False) -> Callable[P, Any]:
    """A function returning the jaxpr of ``fun`` traced at its arguments' shapes and dtypes.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> print(ft.make_jaxpr(fnp.sin)(np.zeros(3)))
    { lambda ; a:f64[3]. let
        b:f64[3] = sin a
      in (b,) }
    """
    def make_jaxpr_fun(*args, **kwargs):
        closed, out_avals, store, _ = _trace(fun, args, "make_jaxpr", static_argnums, kwargs)
        if return_shape:
            shapes = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in out_avals]
            return closed, tree_unflatten(store.out_tree, shapes)
        return closed

    return make_jaxpr_fun


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes of ``fun(*args, **kwargs)``, found by tracing without computing.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> ft.eval_shape(fnp.dot, ft.ShapeDtypeStruct((2, 3), np.float32), np.ones(3, np.float32))
    ShapeDtypeStruct(shape=(2,), dtype=float32)
    """
    _, out_avals, store, _ = _trace(fun, args, "eval_shape", kwargs=kwargs)
    return tree_unflatten(store.out_tree,
                          [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in out_avals])


def linear_transpose(fun: Callable[..., Any], *primals: Any
                     ) -> Callable[..., tuple[Any, ...]]:
    """The transpose of a linear function, traced at the shapes and dtypes of ``primals``.

    >>> import numpy as np, functrans as ft
    >>> f_t = ft.linear_transpose(lambda x: 2.0 * x, np.zeros(2))
    >>> f_t(np.array([1.0, 3.0]))
    (array([2., 6.]),)
    """
    closed, out_avals, store, in_tree = _trace(fun, primals, "linear_transpose")
    in_avals = closed.in_avals
    for aval in in_avals:
        if not core.is_inexact(aval.dtype):
            raise TypeError(f"linear_transpose requires floating inputs, got {aval.dtype.name}")

    def transposed(*cts):
        ct = cts[0] if len(cts) == 1 else cts
        cts_flat, ct_tree = tree_flatten(ct)
        if ct_tree != store.out_tree:
            raise TypeError(f"linear_transpose: cotangent structure {ct_tree} differs from "
                            f"the output structure {store.out_tree}")
        for i, (c, aval) in enumerate(zip(cts_flat, out_avals)):
            _check_leaf(c, "linear_transpose", "cotangent")
            ca = get_aval(c)
            if ca.shape != aval.shape:
                raise ValueError(f"linear_transpose: cotangent leaf {i} has shape "
                                 f"{ca.shape}, expected {aval.shape}")
            if ca.dtype != aval.dtype:
                if not ca.weak_type:
                    raise TypeError(f"linear_transpose: cotangent leaf {i} has dtype "
                                    f"{ca.dtype.name}, but the function's output has dtype "
                                    f"{aval.dtype.name}; cast it with astype")
                cts_flat[i] = _cast(c, aval.dtype, aval.weak_type)
        undefined = [transpose.UndefinedPrimal(a) for a in in_avals]
        with core.computing_internally():
            cts_in = transpose.backward_pass(closed.jaxpr, closed.consts, undefined, cts_flat)
        like = _device_like(cts_flat)
        return tree_unflatten(in_tree, _hand_out([
            backend.zeros(a.shape, a.dtype, like=like) if type(c) is Zero else c
            for c, a in zip(cts_in, in_avals)], cts_flat))

    return transposed

