"""Checking evaluation for ``debug_nans`` and ``debug_infs``: while either switch is on,
``core.EvalTrace.process_primitive`` (and NumPy's operators on ``Array``) are replaced by
versions that raise ``FloatingPointError`` naming the operation that made a NaN or an
infinity from finite operands; turning the switches off puts the originals back, so they
cost nothing when off.  Call primitives (``jit``) register in ``locate_nonfinite_rules``
how to re-run their body operation by operation to name the culprit."""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from functrans import backend, config
from functrans.array_types import Array
from functrans.core import EvalTrace, Primitive, Tracer

__all__ = ["nonfinite_kind", "locate_nonfinite_rules"]

_ndarray = np.ndarray


def nonfinite_kind(values: Sequence, nans: bool, infs: bool) -> str | None:
    """``"nan"`` if a floating-point value among ``values`` holds a NaN (looked for when
    ``nans``), ``"inf"`` if one holds an infinity (when ``infs``), else None.  Tracers,
    integers, booleans and lazy arrays (dask: checking would compute them) are skipped; a
    device array is checked on its device (one scalar comes back)."""
    for x in values:
        t = type(x)
        if t is _ndarray or t is Array:  # the common case first
            if x.dtype.kind in "fc":
                x = x.view(_ndarray)  # (an Array's ufuncs would be checked in turn)
                if nans and np.isnan(x).any():
                    return "nan"
                if infs and np.isinf(x).any():
                    return "inf"
            continue
        if t is float or t is complex:
            z = complex(x)
            if nans and z != z:
                return "nan"
            if infs and (math.isinf(z.real) or math.isinf(z.imag)):
                return "inf"
            continue
        dtype = getattr(x, "dtype", None)
        if (dtype is None or dtype.kind not in "fc" or isinstance(x, Tracer)
                or backend.is_lazy(x)):
            continue
        if isinstance(x, np.ndarray):  # a weakly typed one: NumPy's own isnan
            xp, x = np, x.view(_ndarray)
        else:
            xp = backend.array_module(x)
        if nans and bool(xp.isnan(x).any()):
            return "nan"
        if infs and bool(xp.isinf(x).any()):
            return "inf"
    return None


#: call primitive -> ``rule(args, **params)`` re-running its body operation by operation
#: (each checked), to name the operation that made a NaN or an infinity
locate_nonfinite_rules: dict[Primitive, Callable] = {}


def _call_name(prim: Primitive, params: dict) -> str:
    name = params.get("name")
    return f"{prim.name}({name})" if isinstance(name, str) else prim.name


_unchecked_process_primitive = EvalTrace.process_primitive


def _checked_process_primitive(self, prim: Primitive, args: Sequence, params: dict):
    out = _unchecked_process_primitive(self, prim, args, params)
    nans, infs = config.debug_nans, config.debug_infs
    kind = nonfinite_kind(out if prim.multiple_results else (out,), nans, infs)
    if kind is None or nonfinite_kind(args, kind == "nan", kind == "inf"):
        return out  # none made, or passed on from an operand
    switch = "debug_nans" if kind == "nan" else "debug_infs"
    locate = locate_nonfinite_rules.get(prim)
    if locate is not None:
        try:
            locate(args, **params)
        except FloatingPointError as error:
            raise FloatingPointError(f"{error}, in {_call_name(prim, params)}") from None
        raise FloatingPointError(
            f"invalid value ({kind}) encountered in {_call_name(prim, params)}; run "
            "operation by operation, it made none (the compiled code computed "
            f"differently). functrans.config.{switch} is on.")
    raise FloatingPointError(
        f"invalid value ({kind}) encountered in {prim.name} (functrans.config.{switch} is "
        "on)")


def _plain_operand(x):
    if isinstance(x, Array):
        return x.view(np.ndarray)
    if type(x) is tuple:  # out=(...)
        return tuple(_plain_operand(a) for a in x)
    return x


def _as_array(x):
    if type(x) is np.ndarray or isinstance(x, np.generic):
        return np.asarray(x).view(Array)  # as Array.__array_wrap__ gives them
    return x


def _checked_array_ufunc(self, ufunc, method, *inputs, **kwargs):
    # Array.__array_ufunc__ while debug_nans or debug_infs is on: NumPy's operators and
    # ufuncs on the arrays functrans hands out (x / y outside transforms) are checked too.
    out = getattr(ufunc, method)(*[_plain_operand(x) for x in inputs],
                                 **{k: _plain_operand(v) for k, v in kwargs.items()})
    outs = out if type(out) is tuple else (out,)
    kind = nonfinite_kind(outs, config.debug_nans, config.debug_infs)
    if kind is not None and not nonfinite_kind(inputs, kind == "nan", kind == "inf"):
        switch = "debug_nans" if kind == "nan" else "debug_infs"
        raise FloatingPointError(
            f"invalid value ({kind}) encountered in {ufunc.__name__} (NumPy's, on a "
            f"functrans array; functrans.config.{switch} is on)")
    return tuple(_as_array(o) for o in out) if type(out) is tuple else _as_array(out)


def _install_checks() -> None:
    """Evaluate through the checking ``process_primitive`` (and NumPy's operators on
    ``Array`` through a checking ``__array_ufunc__``) while ``debug_nans`` or
    ``debug_infs`` is on, the plain ones otherwise (the switches cost nothing when off)."""
    checking = config.debug_nans or config.debug_infs
    setattr(EvalTrace, "process_primitive",
            _checked_process_primitive if checking else _unchecked_process_primitive)
    if checking:
        setattr(Array, "__array_ufunc__", _checked_array_ufunc)
    elif "__array_ufunc__" in Array.__dict__:
        del Array.__array_ufunc__


config.on_change("debug_nans", _install_checks)
config.on_change("debug_infs", _install_checks)
