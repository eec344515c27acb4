"""Forward-mode automatic differentiation (JVP), symbolic zeros and linearization.

Type of the transforms here::

    jvp       : (f, primals, tangents)  -> (f(primals), ∂f(primals)·tangents)
    linearize : (f, primals)            -> (f(primals), a linear jaxpr for t ↦ ∂f(primals)·t)

Each primitive has one JVP rule, ``rule(primals, tangents, **params) -> (primal_out,
tangent_out)``.  Reverse mode (``transpose.py``) is derived from these rules, so forward and
reverse mode cannot disagree.  A tangent may be a symbolic ``Zero``: it costs nothing until a
rule needs its value, and a primitive whose tangents are all zero is not differentiated.
"""
from __future__ import annotations

from contextlib import nullcontext
from typing import Callable, Sequence

import numpy as np

from functrans import core
from functrans.core import (Primitive, ShapedArray, Trace, Tracer, eval_jaxpr, get_aval,
                            tangent_aval)
from functrans.interpreters.eval import RecordingEvalTrace
from functrans.interpreters.partial_eval import JaxprTrace, unshare_outputs

#: primitive -> rule(primals, tangents, **params) -> (primal_out, tangent_out)
class _JVPRules(dict):
    """The table of JVP rules; registering a rule also sets ``prim.zero_derivative`` from
    it (True for the rules of ``defjvp_zero``, whose results are constants), so the mark
    stays true to the rule a primitive has now, whoever registered it."""

    def __setitem__(self, prim: Primitive, rule: Callable) -> None:
        prim.zero_derivative = getattr(rule, "zero_derivative", False)
        super().__setitem__(prim, rule)


jvp_rules: dict[Primitive, Callable] = _JVPRules()

#: The AD system's own two primitives; their rules are registered with their families
#: (``add_any`` in ``primitives/elementwise.py``, ``zeros_like`` in ``primitives/conversion.py``).
#: ``add_any`` adds two tangents (or cotangents) of the same type; ``zeros_like[shape, dtype]``
#: gives zeros on the device of its operand, i.e. the value of a symbolic zero.
add_any_p = Primitive("add_any", origin="library")
zeros_like_p = Primitive("zeros_like", origin="library")


class Zero:
    """A symbolic zero tangent or cotangent of the given abstract value."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    @staticmethod
    def from_value(x) -> Zero:
        zero = _SCALAR_ZEROS.get(type(x))
        if zero is not None:  # constants such as the 2.0 of x * 2.0: one shared Zero each
            return zero
        aval = get_aval(x)
        return Zero(aval if aval.dtype.kind in "fc" else tangent_aval(aval))

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"


#: Python scalar type -> the Zero tangent of its values (Zeros are immutable)
_SCALAR_ZEROS = {t: Zero(tangent_aval(get_aval(t()))) for t in core.python_scalar_types}


def zeros(aval: ShapedArray, witness):
    """Zeros of type ``aval`` on the device of ``witness`` (any value on that device: only
    its array module matters, not its shape).  ``float0`` zeros hold no data: no device."""
    if aval.dtype == core.float0 or witness is None:
        return np.zeros(aval.shape, aval.dtype)
    return zeros_like_p.bind(witness, shape=aval.shape, dtype=aval.dtype,
                             weak_type=aval.weak_type)


def device_witness(values):
    """A value among ``values`` that carries their device (an array or a tracer rather
    than a Python scalar), for ``zeros``; None if there is none."""
    for x in values:
        if x is not None and type(x) is not Zero and not core.is_python_scalar(x):
            return x
    return None


def instantiate(t, like):
    """The value of a tangent: ``t`` itself, or real zeros if ``t`` is a symbolic ``Zero``
    (``like`` is a value on the right device, e.g. the primal)."""
    if type(t) is not Zero:
        return t
    return zeros(t.aval.update(weak_type=get_aval(like).weak_type), like)


def add_tangents(x, y):
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    return add_any_p.bind(x, y)


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace: JVPTrace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self) -> ShapedArray:
        return get_aval(self.primal)

    def device_witness(self):
        primal = self.primal
        return primal.device_witness() if isinstance(primal, Tracer) else primal

    def to_concrete_value(self, context: str):
        # Under differentiation the primal is concrete, so Python control flow still works.
        primal = self.primal
        if isinstance(primal, Tracer):
            return primal.to_concrete_value(context)
        return primal


class JVPTrace(Trace):
    __slots__ = ()
    transforms = "jvp, grad, vjp, linearize, jacfwd, jacrev, hessian"

    def process_primitive(self, prim: Primitive, args: Sequence, params: dict):
        primals, tangents = [], []
        for x in args:
            if type(x) is JVPTracer and x._trace is self:  # JVPTracer has no subclasses
                primals.append(x.primal)
                tangents.append(x.tangent)
            else:
                primals.append(x)
                tangents.append(Zero.from_value(x))
        try:
            rule = jvp_rules[prim]
        except KeyError:
            raise NotImplementedError(f"Differentiation rule for '{prim.name}' not implemented"
                                      ) from None
        counter = self.counter
        counter.internal += 1  # the rule's own operations on constants: plain arrays
        try:
            primal_out, tangent_out = rule(primals, tangents, **params)
        finally:
            counter.internal -= 1
        if prim.multiple_results:
            out = [self.pack(p, t) for p, t in zip(primal_out, tangent_out)]
        else:
            out = self.pack(primal_out, tangent_out)
        return out if counter.internal else core.handed_to_caller(out)

    def pack(self, primal, tangent):
        # A value with a zero tangent leaves the trace: later operations on it are not
        # differentiated at all.
        return primal if type(tangent) is Zero else JVPTracer(self, primal, tangent)

    def unpack(self, x) -> tuple:
        if type(x) is JVPTracer and x._trace is self:
            return x.primal, x.tangent
        return x, Zero.from_value(x)


# ------------------------------------------------------------------------------------------
# Rule factories
# ------------------------------------------------------------------------------------------


def defjvp(prim: Primitive, *derivatives, post: Callable | None = None) -> None:
    """Register a JVP rule from one tangent map per argument.

    ``derivatives[i](g, ans, *primals, **params)`` gives the tangent contribution of
    argument ``i`` with tangent ``g`` (``ans`` is the primal output); ``None`` marks an
    argument the primitive is not differentiable in.  ``post(t, ans)`` adjusts the summed
    tangent (e.g. broadcasting it to the output's shape).
    """
    if len(derivatives) == 1 and derivatives[0] is not None:
        derivative = derivatives[0]

        def unary_rule(primals, tangents, **params):  # the loop below, for one argument
            ans = prim.bind(*primals, **params)
            g = tangents[0]
            if type(g) is Zero:
                return ans, Zero.from_value(ans)
            out = derivative(g, ans, *primals, **params)
            return ans, (out if post is None else post(out, ans))
        jvp_rules[prim] = unary_rule
        return

    def rule(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        out = None
        for derivative, g in zip(derivatives, tangents):
            if derivative is None or type(g) is Zero:
                continue
            term = derivative(g, ans, *primals, **params)
            out = term if out is None else add_tangents(out, term)
        if out is None:
            return ans, Zero.from_value(ans)
        return ans, (out if post is None else post(out, ans))
    jvp_rules[prim] = rule


def deflinear_jvp(prim: Primitive) -> None:
    """Register the JVP of a primitive linear in all its arguments jointly: itself applied
    to the tangents (zero tangents instantiated when others are not).  Use
    ``transpose.deflinear`` to register this together with the transpose rule."""
    def rule(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        if all(type(g) is Zero for g in tangents):
            zero = [Zero.from_value(a) for a in ans] if prim.multiple_results else (
                Zero.from_value(ans))
            return ans, zero
        return ans, prim.bind(*[_linear_operand(g, p) for g, p in zip(tangents, primals)],
                              **params)
    jvp_rules[prim] = rule


def _linear_operand(g, primal):
    """The tangent ``g`` as an operand of a linear primitive.  The zero tangent of an integer
    operand (say, a padding value of 1) is zeros of the operand's own type, not float0."""
    if type(g) is Zero and g.aval.dtype == core.float0:
        return zeros(get_aval(primal), primal)
    return instantiate(g, primal)


def defjvp_zero(prim: Primitive) -> None:
    """A primitive with zero derivative everywhere (comparisons, sign, integer ops): marked
    ``prim.zero_derivative``."""
    def rule(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        if prim.multiple_results:
            return ans, [Zero.from_value(a) for a in ans]
        return ans, Zero.from_value(ans)
    rule.zero_derivative = True  # type: ignore[attr-defined]
    jvp_rules[prim] = rule


# ------------------------------------------------------------------------------------------
# The transforms, on flat lists of values
# ------------------------------------------------------------------------------------------


_NO_CONTEXT = nullcontext()


def jvp_flat(fun: Callable, primals: Sequence, tangents: Sequence) -> tuple[list, list]:
    """Run ``fun`` (flat list in, flat list out) on primals with the given tangents
    (``Zero`` allowed); return the output primals and tangents (``Zero`` where zero)."""
    with core.new_trace(JVPTrace) as trace:
        ins = [p if type(t) is Zero else JVPTracer(trace, p, t)
               for p, t in zip(primals, tangents)]
        outs = fun(*ins)
        pairs = [trace.unpack(x) for x in outs]
        del ins, outs, trace  # only leaked tracers may keep the trace alive (core.new_trace)
    return [p for p, _ in pairs], [t for _, t in pairs]


def linearize_flat(fun: Callable, primals: Sequence, has_tangent: Sequence[bool] | None = None,
                   snapshot: bool = False):
    """Evaluate ``fun`` at ``primals`` and stage its JVP as a jaxpr linear in the tangents.

    Returns ``(primals_out, jaxpr, consts, out_tangents)`` where the jaxpr maps one tangent
    per primal (``float0`` for integer ones) to the non-zero output tangents, and
    ``out_tangents`` holds, per output, ``Zero`` or ``None`` (its value comes from the jaxpr).
    ``has_tangent[i] = False`` makes the tangent of primal ``i`` a symbolic zero.
    ``snapshot=True`` (for ``vjp`` and ``linearize``, whose jaxpr outlives the call) copies
    the caller's mutable arrays that become residuals, so changing them later changes nothing.
    """
    recorder = RecordingEvalTrace(0) if snapshot else None
    # `recorder` is None exactly when `snapshot` is false.
    produced = recorder.produced if snapshot else None  # type: ignore[union-attr]
    with core.evaluating_with(recorder) if snapshot else _NO_CONTEXT, core.new_trace(
            JaxprTrace, linear=True, produced=produced) as jaxpr_trace:
        args = [jaxpr_trace.new_arg(tangent_aval(get_aval(p))) for p in primals]
        tangents = [a if a.aval.dtype != core.float0 and (has_tangent is None or has_tangent[i])
                    else Zero(a.aval) for i, a in enumerate(args)]
        primals_out, tangents_out = jvp_flat(fun, primals, tangents)
        for p in primals_out:
            if isinstance(p, Tracer) and p._trace is jaxpr_trace:
                raise AssertionError("linearize: a primal output depends on the tangents; a "
                                     "JVP rule mixed tangents into its primal result")
        jaxpr, consts = jaxpr_trace.to_jaxpr([t for t in tangents_out if type(t) is not Zero])
        out_tangents = [t if type(t) is Zero else None for t in tangents_out]
        del args, tangents, tangents_out, jaxpr_trace  # see jvp_flat
    if snapshot:
        consts = unshare_outputs(consts, primals_out)
    return primals_out, jaxpr, consts, out_tangents


def eval_linearized(jaxpr, consts: Sequence, out_tangents: Sequence, tangents: Sequence
                    ) -> list:
    """Apply a linearization from ``linearize_flat`` to concrete tangents (one per primal):
    the output tangents, ``Zero`` where an output's tangent is zero."""
    assert not any(type(t) is Zero for t in tangents), "eval_linearized takes concrete tangents"
    values = iter(eval_jaxpr(jaxpr, consts, *tangents))
    return [next(values) if t is None else t for t in out_tangents]
