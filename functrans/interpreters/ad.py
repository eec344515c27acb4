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

from typing import Callable, Sequence

from functrans import core
from functrans.core import Primitive, ShapedArray, Trace, Tracer, get_aval, tangent_aval

#: primitive -> rule(primals, tangents, **params) -> (primal_out, tangent_out)
jvp_rules: dict[Primitive, Callable] = {}

#: Adds two tangents (or cotangents) of the same type; the AD system's own primitive.
#: Its rules live in ``functrans/primitives/elementwise.py`` with the other arithmetic.
add_any_p = Primitive("add_any")


class Zero:
    """A symbolic zero tangent or cotangent of the given abstract value."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    @staticmethod
    def from_value(x) -> Zero:
        return Zero(tangent_aval(get_aval(x)))

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"


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

    def to_concrete_value(self, context: str):
        # Under differentiation the primal is concrete, so Python control flow still works.
        primal = self.primal
        if isinstance(primal, Tracer):
            return primal.to_concrete_value(context)
        return primal


class JVPTrace(Trace):
    __slots__ = ()

    def process_primitive(self, prim: Primitive, args: Sequence, params: dict):
        primals, tangents = [], []
        for x in args:
            if isinstance(x, JVPTracer) and x._trace is self:
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
        primal_out, tangent_out = rule(primals, tangents, **params)
        if prim.multiple_results:
            return [self.pack(p, t) for p, t in zip(primal_out, tangent_out)]
        return self.pack(primal_out, tangent_out)

    def pack(self, primal, tangent):
        # A value with a zero tangent leaves the trace: later operations on it are not
        # differentiated at all.
        return primal if type(tangent) is Zero else JVPTracer(self, primal, tangent)

    def unpack(self, x) -> tuple:
        if isinstance(x, JVPTracer) and x._trace is self:
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
    """A primitive linear in its single argument is its own JVP."""
    def rule(primals, tangents, **params):
        (g,) = tangents
        ans = prim.bind(*primals, **params)
        return ans, (Zero.from_value(ans) if type(g) is Zero else prim.bind(g, **params))
    jvp_rules[prim] = rule


def defjvp_zero(prim: Primitive) -> None:
    """A primitive with zero derivative everywhere (comparisons, sign, integer ops)."""
    def rule(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        if prim.multiple_results:
            return ans, [Zero.from_value(a) for a in ans]
        return ans, Zero.from_value(ans)
    jvp_rules[prim] = rule


# ------------------------------------------------------------------------------------------
# The transforms, on flat lists of values
# ------------------------------------------------------------------------------------------


def jvp_flat(fun: Callable, primals: Sequence, tangents: Sequence) -> tuple[list, list]:
    """Run ``fun`` (flat list in, flat list out) on primals with the given tangents
    (``Zero`` allowed); return the output primals and tangents (``Zero`` where zero)."""
    with core.new_trace(JVPTrace) as trace:
        ins = [p if type(t) is Zero else JVPTracer(trace, p, t)
               for p, t in zip(primals, tangents)]
        outs = fun(*ins)
        pairs = [trace.unpack(x) for x in outs]
    return [p for p, _ in pairs], [t for _, t in pairs]


def linearize_flat(fun: Callable, primals: Sequence):
    """Evaluate ``fun`` at ``primals`` and stage its JVP as a jaxpr linear in the tangents.

    Returns ``(primals_out, jaxpr, consts, out_tangents)`` where the jaxpr maps one tangent
    per primal (``float0`` for integer ones) to the non-zero output tangents, and
    ``out_tangents`` holds, per output, ``Zero`` or ``None`` (its value comes from the jaxpr).
    """
    from functrans.interpreters.partial_eval import JaxprTrace
    with core.new_trace(JaxprTrace) as jaxpr_trace:
        tangents = []
        for p in primals:
            aval = tangent_aval(get_aval(p))
            arg = jaxpr_trace.new_arg(aval)
            tangents.append(arg if aval.dtype != core.float0 else Zero(aval))
        primals_out, tangents_out = jvp_flat(fun, primals, tangents)
        for p in primals_out:
            if isinstance(p, Tracer) and p._trace is jaxpr_trace:
                raise AssertionError("linearize: a primal output depends on the tangents; a "
                                     "JVP rule mixed tangents into its primal result")
        jaxpr, consts = jaxpr_trace.to_jaxpr([t for t in tangents_out if type(t) is not Zero])
    out_tangents = [t if type(t) is Zero else None for t in tangents_out]
    return primals_out, jaxpr, consts, out_tangents
