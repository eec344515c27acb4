"""Evaluation: the interpreter at the bottom of every stack, and the jaxpr evaluator."""
from __future__ import annotations

import weakref
from typing import Sequence

import numpy as np

from functrans import core
from functrans.core import Jaxpr, Literal, Primitive, Trace, impl_rules, python_scalar_types


class EvalTrace(Trace):
    """Applies each primitive's impl rule to concrete values (NumPy, CuPy, Python scalars)."""

    __slots__ = ()

    def process_primitive(self, prim: Primitive, args: Sequence, params: dict):
        try:
            impl = impl_rules[prim]
        except KeyError:
            raise NotImplementedError(f"Evaluation rule for '{prim.name}' not implemented"
                                      ) from None
        try:
            out = impl(*args, **params)
        except Exception as error:
            _explain_failure(prim, args, params, error)
            raise
        # An operation on Python scalars alone gives a weakly typed value, as it would when
        # traced: keep it a Python scalar so that e.g. `sin(2.0) * x_f32` stays float32.
        if not prim.multiple_results and type(out) in _WEAK_RESULT_TYPES:
            for x in args:
                if type(x) not in python_scalar_types:
                    return out
            return out.item()
        return out


# NumPy scalar types a Python-scalar computation can produce; other dtypes were asked for.
_WEAK_RESULT_TYPES = frozenset({np.float64, np.int64, np.complex128, np.bool_})


class RecordingEvalTrace(EvalTrace):
    """Evaluates like ``EvalTrace`` and remembers the NumPy arrays it created, so that
    ``vjp`` and ``linearize`` can tell their own intermediates from the caller's arrays."""

    __slots__ = ("produced",)

    def __init__(self, level: int):
        super().__init__(level)
        self.produced: dict[int, weakref.ref] = {}  # id -> weak reference (ids get reused)

    def process_primitive(self, prim: Primitive, args: Sequence, params: dict):
        out = EvalTrace.process_primitive(self, prim, args, params)
        for x in out if prim.multiple_results else (out,):
            if type(x) is np.ndarray:
                for a in args:
                    if a is x:  # an impl may return its input (stop_gradient): not new
                        break
                else:
                    self.produced[id(x)] = weakref.ref(x)
        return out


def _explain_failure(prim: Primitive, args, params, error: Exception) -> None:
    """If the impl failed on invalid input, raise the abstract evaluation's clearer error
    (the one tracing gives) instead of the array library's."""
    try:
        prim.abstract_eval(*[core.get_aval(x) for x in args], **params)
    except (TypeError, ValueError) as clearer:
        raise clearer from error


core.set_base_trace_type(EvalTrace)


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence, *args) -> list:
    """Evaluate a jaxpr on values (concrete or tracers of enclosing transforms)."""
    assert len(consts) == len(jaxpr.constvars) and len(args) == len(jaxpr.invars), (
        "eval_jaxpr: wrong number of constants or arguments")
    env = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x

    def read(x):
        return x.val if type(x) is Literal else env[x]

    for eqn in jaxpr.eqns:
        outs = eqn.primitive.bind(*[read(x) for x in eqn.invars], **eqn.params)
        if eqn.primitive.multiple_results:
            for v, out in zip(eqn.outvars, outs):
                env[v] = out
        else:
            env[eqn.outvars[0]] = outs
    return [read(x) for x in jaxpr.outvars]
