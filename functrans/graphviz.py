"""Jaxprs as Graphviz graphs: :func:`to_dot` writes the DOT language, :func:`render` draws
it with Graphviz's ``dot`` program (SVG, PNG, PDF).

Importing functrans installs both as methods of :class:`~functrans.core.Jaxpr` and
:class:`~functrans.core.ClosedJaxpr` (``make_jaxpr(f)(x).to_dot()``), so that the core,
which knows nothing of pictures, stays free of them.

In the graph each equation is a box naming its primitive and parameters, each input,
constant and output an oval, and each variable an edge from the equation that makes it to
each one that reads it, labelled with its name and type (``b:f64[3]``, the names of the
text form).  A literal is a small plain node.  The jaxprs inside an equation (the body of
``jit``, the branches of ``cond``, ...) are drawn as boxed clusters, joined to their
equation by a dashed edge.

>>> import numpy as np, functrans as ft, functrans.numpy as fnp
>>> dot = ft.make_jaxpr(lambda x: fnp.sin(x) * 2.0)(np.ones(3)).to_dot()
>>> print(dot.splitlines()[0])
digraph jaxpr {
>>> [line.strip() for line in dot.splitlines() if "label=\\"sin" in line]
['e1 [label="sin", shape=box, style="rounded,filled", fillcolor="#deebf7"];']
"""
from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import tempfile

import numpy as np

from functrans import core

__all__ = ["to_dot", "render"]

#: parameter values longer than this are shortened in the picture
MAX_PARAM_CHARS = 40
FORMATS = ("svg", "png", "pdf")


def _quote(text: str) -> str:
    """A DOT string literal; newlines become DOT's centred line breaks."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _names():
    letters = "abcdefghijklmnopqrstuvwxyz"
    for n in itertools.count(1):
        for chars in itertools.product(letters, repeat=n):
            yield "".join(chars)


def _as_jaxpr(x):
    return x.jaxpr if isinstance(x, core.ClosedJaxpr) else x


def _nested(value) -> list:
    """The jaxprs a parameter value holds (one, a tuple of them, or none)."""
    items = value if isinstance(value, tuple) else (value,)
    found = [_as_jaxpr(v) for v in items if isinstance(v, (core.Jaxpr, core.ClosedJaxpr))]
    return found if len(found) == len(items) else []


def _param_text(value) -> str:
    if isinstance(value, np.dtype):
        return value.name
    text = repr(value)
    return text if len(text) <= MAX_PARAM_CHARS else text[:MAX_PARAM_CHARS - 1] + "…"


class _Writer:
    def __init__(self):
        self.lines: list[str] = []
        self.ids = itertools.count()
        self.clusters = itertools.count()

    def node(self, prefix: str, label: str, indent: str, **attrs) -> str:
        name = f"{prefix}{next(self.ids)}"
        extra = "".join(f", {k}={_quote(v) if not v.isidentifier() else v}"
                        for k, v in attrs.items())
        self.lines.append(f"{indent}{name} [label={_quote(label)}{extra}];")
        return name

    def edge(self, src: str, dst: str, label: str, indent: str, **attrs) -> None:
        extra = "".join(f", {k}={v}" for k, v in attrs.items())
        self.lines.append(f"{indent}{src} -> {dst} [label={_quote(label)}{extra}];")

    def jaxpr(self, jaxpr: core.Jaxpr, indent: str) -> str:
        """Draw ``jaxpr``; returns one of its nodes (for edges into its cluster)."""
        producer: dict = {}  # Var -> (node making it, its name)
        fresh = _names()

        def bind(v, node: str) -> None:
            producer[v] = (node, f"{next(fresh)}:{v.aval.str_short()}")

        first = None
        for kind, variables in (("const", jaxpr.constvars), ("in", jaxpr.invars)):
            for v in variables:
                name = next(fresh)
                node = self.node("v", f"{kind} {name}: {v.aval.str_short()}", indent,
                                 shape="ellipse", style="dashed" if kind == "const" else "solid")
                producer[v] = (node, f"{name}:{v.aval.str_short()}")
                first = first or node
        for eqn in jaxpr.eqns:
            params, inner = [], []
            for key, value in eqn.params.items():
                jaxprs = _nested(value)
                if jaxprs:
                    inner.append((key, jaxprs))
                else:
                    params.append(f"{key}={_param_text(value)}")
            label = "\n".join([eqn.primitive.name, *params])
            node = self.node("e", label, indent, shape="box", style="rounded,filled",
                             fillcolor="#deebf7")
            first = first or node
            for x in eqn.invars:
                if isinstance(x, core.Literal):
                    value = x.val.item() if isinstance(x.val, (np.ndarray, np.generic)) else x.val
                    lit = self.node("l", repr(value), indent, shape="plaintext")
                    self.edge(lit, node, x.aval.str_short(), indent)
                else:
                    src, text = producer[x]
                    self.edge(src, node, text, indent)
            for key, jaxprs in inner:
                for k, sub in enumerate(jaxprs):
                    cluster = next(self.clusters)
                    title = key if len(jaxprs) == 1 else f"{key}[{k}]"
                    self.lines.append(f"{indent}subgraph cluster_{cluster} {{")
                    inside = indent + "  "
                    self.lines.append(f"{inside}label={_quote(f'{eqn.primitive.name}: {title}')};")
                    self.lines.append(f'{inside}style="rounded"; color="#9ecae1";')
                    target = self.jaxpr(sub, inside)
                    self.lines.append(f"{indent}}}")
                    self.lines.append(f"{indent}{node} -> {target} [style=dashed, "
                                      f"lhead=cluster_{cluster}, arrowhead=empty];")
            for v in eqn.outvars:
                bind(v, node)
        for k, x in enumerate(jaxpr.outvars):
            out = self.node("o", f"out {k}", indent, shape="ellipse", style="bold")
            first = first or out
            if isinstance(x, core.Literal):
                lit = self.node("l", repr(x.val), indent, shape="plaintext")
                self.edge(lit, out, x.aval.str_short(), indent)
            else:
                src, text = producer[x]
                self.edge(src, out, text, indent)
        if first is None:  # no inputs and no outputs: a node to point the cluster edge at
            first = self.node("o", "(no values)", indent, shape="plaintext")
        return first


def to_dot(jaxpr) -> str:
    """The DOT text of a jaxpr (a :class:`~functrans.core.Jaxpr` or a
    :class:`~functrans.core.ClosedJaxpr`): equations as boxes, variables as labelled
    edges, nested jaxprs as clusters.  Paste it into any Graphviz viewer, or draw it with
    :func:`render`.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> closed = ft.make_jaxpr(lambda x: fnp.sum(x ** 2))(np.ones(3))
    >>> print(to_dot(closed))  # doctest: +NORMALIZE_WHITESPACE
    digraph jaxpr {
      rankdir=TB; compound=true; graph [fontname="Helvetica", fontsize=10];
      node [fontname="Helvetica", fontsize=11]; edge [fontname="Helvetica", fontsize=9];
      v0 [label="in a: f64[3]", shape=ellipse, style=solid];
      e1 [label="integer_pow\\ny=2", shape=box, style="rounded,filled", fillcolor="#deebf7"];
      v0 -> e1 [label="a:f64[3]"];
      e2 [label="reduce_sum\\naxes=(0,)", shape=box, style="rounded,filled", fillcolor="#deebf7"];
      e1 -> e2 [label="b:f64[3]"];
      o3 [label="out 0", shape=ellipse, style=bold];
      e2 -> o3 [label="c:f64[]"];
    }
    """
    if not isinstance(jaxpr, (core.Jaxpr, core.ClosedJaxpr)):
        raise TypeError(f"to_dot: expected a Jaxpr or ClosedJaxpr (from make_jaxpr), got "
                        f"{type(jaxpr).__name__}")
    writer = _Writer()
    writer.jaxpr(_as_jaxpr(jaxpr), "  ")
    head = ["digraph jaxpr {",
            '  rankdir=TB; compound=true; graph [fontname="Helvetica", fontsize=10];',
            '  node [fontname="Helvetica", fontsize=11]; '
            'edge [fontname="Helvetica", fontsize=9];']
    return "\n".join(head + writer.lines + ["}"])


def render(jaxpr, path, format: str | None = None) -> str:
    """Draw a jaxpr to ``path`` with Graphviz's ``dot`` program (install Graphviz: the
    ``graphviz`` package of apt, brew or conda).  ``format`` is ``"svg"``, ``"png"`` or
    ``"pdf"``, by default the extension of ``path``.  Returns ``path``.

    >>> import os, shutil, tempfile, numpy as np, functrans as ft, functrans.numpy as fnp
    >>> closed = ft.make_jaxpr(fnp.tanh)(np.ones(2))
    >>> if shutil.which("dot"):
    ...     path = closed.render(os.path.join(tempfile.mkdtemp(), "tanh.svg"))
    ...     assert open(path).read().lstrip().startswith("<?xml")
    ...
    """
    path = os.fspath(path)
    if format is None:
        format = os.path.splitext(path)[1].lstrip(".").lower()
    if format not in FORMATS:
        raise ValueError(f"render: format must be one of {FORMATS} (or given by the file's "
                         f"extension), got {format!r} for {path!r}")
    dot = shutil.which("dot")
    if dot is None:
        raise FileNotFoundError("render: Graphviz's `dot` program was not found on PATH; "
                                "install Graphviz (apt install graphviz, brew install "
                                "graphviz or conda install graphviz), or write to_dot()'s "
                                "text to a .dot file and draw it elsewhere")
    with tempfile.NamedTemporaryFile("w", suffix=".dot", delete=False) as f:
        f.write(to_dot(jaxpr))
    try:
        done = subprocess.run([dot, f"-T{format}", "-o", path, f.name], capture_output=True,
                              text=True)
    finally:
        os.unlink(f.name)
    if done.returncode != 0:
        raise RuntimeError(f"render: dot failed (exit status {done.returncode}): "
                           f"{done.stderr.strip()}")
    return path


# The methods ``Jaxpr.to_dot`` / ``.render`` and the same on ClosedJaxpr.
for _cls in (core.Jaxpr, core.ClosedJaxpr):
    _cls.to_dot = to_dot  # type: ignore[union-attr]
    _cls.render = render  # type: ignore[union-attr]
del _cls
