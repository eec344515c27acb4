"""Compare the signatures of functrans's public functions with JAX's (stored in
tests/jax_signatures.json by tests/jax_signatures.py), as a user swapping the import would
meet them.

:func:`differences` returns, for one function, the differences that a call written for JAX
can hit, each as a short code:

- ``missing:<p>``: JAX's parameter ``p`` has no counterpart (a keyword call with it, or a
  positional call that reaches it, fails); ``missing:*<p>`` / ``missing:**<p>``: JAX takes
  any number of positional / keyword arguments there and functrans does not;
- ``kind:<p>``: functrans has ``p`` but a call JAX allows fails: by keyword (functrans's
  ``p`` is positional-only) or by position (functrans's is keyword-only, or sits at another
  position);
- ``default:<p>``: JAX's ``p`` is optional and functrans's is required, or both are
  optional with different defaults;
- ``extra:<p>``: functrans requires a parameter ``p`` that JAX does not have.

Differences no user call can hit are not reported: a functrans parameter JAX lacks but
with a default (an extension), a JAX positional-only parameter that functrans names
differently (or lets be passed by keyword too), a JAX keyword-only parameter that
functrans also lets be passed by position, a default JAX writes as a sentinel object (only
whether there is a default is compared).  :data:`NORMALISED` lists JAX parameters that are
left out of the comparison, each with its reason.

Run ``python tests/signature_parity.py`` from the repository root for the full report
(``--skeleton`` prints the differences not yet in tests/signature_exceptions.py as
entries to fill in; ``--write`` regenerates the summary in docs/jax_names.md).
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import json
import pathlib
import sys
import textwrap
from dataclasses import dataclass

_TESTS = str(pathlib.Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from jax_signatures import KINDS, encode_default  # noqa: E402

__all__ = ["PATH", "NORMALISED", "OPAQUE", "stored", "functrans_module", "Param", "jax_params",
           "functrans_params", "differences", "compare_all", "Comparison", "PAGE", "BEGIN",
           "END", "summary", "page_with_summary", "main"]

PATH = pathlib.Path(__file__).with_name("jax_signatures.json")

POS_ONLY, POS_OR_KW, VAR_POS, KW_ONLY, VAR_KW = (
    "positional_only", "positional_or_keyword", "var_positional", "keyword_only",
    "var_keyword")
POSITIONAL = (POS_ONLY, POS_OR_KW)
#: a stored default JAX writes as an object of its own (a sentinel, a JAX-only type)
_OPAQUE_PREFIX = "<"

_SHARDING = "a sharding over several devices' meshes: functrans runs on one device"
_NONE_ONLY_OUT = ("JAX accepts only out=None (it raises for an array): NumPy's in-place "
                  "outputs do not exist for immutable arrays")
_DEPRECATED = "deprecated in JAX, which raises when it is given"

#: JAX parameters left out of the comparison, keyed by (namespace, function or "*" for
#: every function of the namespace, parameter), each with the reason no call written for
#: JAX can notice (JAX's private parameters, with a leading underscore, and the ``where``
#: of a ``jax.numpy.ufunc`` call, which must be None, are left out too).
NORMALISED: dict[tuple[str, str, str], str] = {
    ("jax.numpy", "*", "out"): _NONE_ONLY_OUT,
    **{(ns, "*", "out_sharding"): _SHARDING for ns in (
        "jax.numpy", "jax.numpy.linalg", "jax.lax", "jax.random", "jax.nn.initializers",
        "jax.example_libraries.stax")},
    ("jax", "vmap", "spmd_axis_name"): _SHARDING,
    ("jax", "jit", "in_shardings"): _SHARDING,
    ("jax", "jit", "out_shardings"): _SHARDING,
    ("jax", "ShapeDtypeStruct", "sharding"): _SHARDING,
    ("jax", "ShapeDtypeStruct", "manual_axis_type"): _SHARDING,
    **{("jax", f, "reduce_axes"): "JAX accepts only the default, reduce_axes=() (it raises "
       "NotImplementedError for any other)" for f in (
           "grad", "value_and_grad", "vjp", "linear_transpose")},
    ("jax", "checkpoint", "concrete"): _DEPRECATED,
    ("jax", "remat", "concrete"): _DEPRECATED,
    ("jax.numpy", "array", "args"): "JAX's deprecated positional copy, order and ndmin, "
                                    "which functrans takes positionally as named parameters",
}

#: JAX functions whose signature says nothing a call can be checked against, each with the
#: reason; they are counted as compared but not as differing.
OPAQUE: dict[str, str] = {
    "jax.lax.random_gamma_grad": "JAX's is a broadcasting wrapper written (*args); calls "
                                 "pass (a, x), which functrans takes",
    "jax.numpy.fromiter": "JAX's raises NotImplementedError whatever it is given (an "
                          "iterator is not pure); functrans has NumPy's "
                          "fromiter(iterable, dtype, count)",
}


def _normalised(namespace: str, name: str, param: str, ufunc: bool) -> bool:
    if param.startswith("_"):
        return True   # JAX's private parameters (einsum's _dot_general, ...)
    if ufunc and param == "where":
        return True   # a jax.numpy.ufunc call accepts only where=None
    return ((namespace, "*", param) in NORMALISED
            or (namespace, name, param) in NORMALISED)


def stored() -> dict:
    """tests/jax_signatures.json."""
    return json.loads(PATH.read_text())


def functrans_module(namespace: str):
    """The functrans module answering to a JAX namespace (None where functrans has none)."""
    target = "functrans" + namespace[len("jax"):]
    try:
        return importlib.import_module(target)
    except ImportError:
        parent, _, attr = target.rpartition(".")
        try:
            return getattr(importlib.import_module(parent), attr, None)
        except ImportError:
            return None


@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    has_default: bool
    default: object = None
    #: False for a JAX parameter after a left-out positional one (``keepdims`` after
    #: ``out``): a call reaches it by position only by passing the left-out one too, so
    #: only its name is compared.
    by_position: bool = True

    @property
    def positional(self) -> bool:
        return self.kind in POSITIONAL

    @property
    def keyword(self) -> bool:
        return self.kind in (POS_OR_KW, KW_ONLY)


def _param(entry: list, by_position: bool = True) -> Param:
    return Param(entry[0], entry[1], len(entry) == 3, entry[2] if len(entry) == 3 else None,
                 by_position)


def _is_ufunc(entry: list) -> bool:
    return bool(entry) and entry[0][0] == "x1" and entry[-1][0] == "where" and all(
        p[1] == POS_ONLY for p in entry[:-2])


def jax_params(namespace: str, name: str, entry: list) -> list[Param]:
    """JAX's parameters of one function, less the normalised ones."""
    ufunc = _is_ufunc(entry)
    out, by_position = [], True
    for e in entry:
        if _normalised(namespace, name, e[0], ufunc):
            by_position = by_position and e[1] not in POSITIONAL
        else:
            out.append(_param(e, by_position))
    return out


def functrans_params(fun) -> list[Param] | None:
    """functrans's parameters of one function (None where Python cannot read them)."""
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        return None
    return [Param(p.name, KINDS[p.kind], p.default is not inspect.Parameter.empty,
                  None if p.default is inspect.Parameter.empty else encode_default(p.default))
            for p in sig.parameters.values()]


def differences(jax: list[Param], ours: list[Param]) -> list[str]:
    """The differences (codes, see the module docstring) a call written for JAX can hit."""
    out: list[str] = []
    by_name = {p.name: p for p in ours}
    ours_pos = [p for p in ours if p.positional]
    ours_var_pos = any(p.kind == VAR_POS for p in ours)
    ours_var_kw = any(p.kind == VAR_KW for p in ours)
    matched: set[str] = set()
    jax_pos = []
    for p in jax:
        if p.kind == VAR_POS:
            break
        if p.positional:
            jax_pos.append(p)

    def compare_default(p: Param, q: Param) -> None:
        if p.has_default and not q.has_default:
            out.append(f"default:{p.name}")
        elif (p.has_default and q.has_default and p.default != q.default
              and not (isinstance(p.default, str) and p.default.startswith(_OPAQUE_PREFIX))):
            out.append(f"default:{p.name}")

    for i, p in enumerate(jax_pos):
        if p.kind == POS_ONLY:
            # By position only: the name is JAX's business; functrans's parameter at the
            # same position (or a *args there) takes it.
            q = by_name.get(p.name)
            if q is None or not q.positional:
                q = ours_pos[i] if i < len(ours_pos) else None
            if q is None:
                if not ours_var_pos:
                    out.append(f"missing:{p.name}")
                continue
            matched.add(q.name)
            if ours_pos.index(q) != i:
                out.append(f"kind:{p.name}")
            compare_default(p, q)
            continue
        q = by_name.get(p.name)
        if q is None:
            if not ours_var_kw:
                out.append(f"missing:{p.name}")
            continue
        matched.add(q.name)
        if (q.kind not in (POS_OR_KW, KW_ONLY) if not p.by_position else
                q.kind != POS_OR_KW or ours_pos.index(q) != i):
            out.append(f"kind:{p.name}")
        compare_default(p, q)
    for p in jax:
        if p.kind == VAR_POS:
            if not ours_var_pos:
                out.append(f"missing:*{p.name}")
        elif p.kind == VAR_KW:
            if not ours_var_kw:
                out.append(f"missing:**{p.name}")
        elif p.kind == KW_ONLY:
            q = by_name.get(p.name)
            if q is None or q.kind in (VAR_POS, VAR_KW):
                if not ours_var_kw:
                    out.append(f"missing:{p.name}")
                continue
            matched.add(q.name)
            if q.kind == POS_ONLY:
                out.append(f"kind:{p.name}")
            compare_default(p, q)
    jax_names = {p.name for p in jax}
    for q in ours:
        if (q.kind in (POS_ONLY, POS_OR_KW, KW_ONLY) and not q.has_default
                and q.name not in matched and q.name not in jax_names):
            out.append(f"extra:{q.name}")
    return out


@dataclass
class Comparison:
    """One function's comparison."""
    namespace: str
    name: str
    jax: list
    ours: list | None
    diffs: list
    left_out: int = 0   # JAX parameters left out (NORMALISED)

    @property
    def key(self) -> str:
        return f"{self.namespace}.{self.name}"


def compare_all(data: dict | None = None) -> list[Comparison]:
    """Every function JAX and functrans both have, compared."""
    data = stored() if data is None else data
    out = []
    for namespace, table in data["signatures"].items():
        module = functrans_module(namespace)
        if module is None:
            continue
        for name, entry in table.items():
            value = getattr(module, name, None)
            if value is None or not callable(value) or inspect.ismodule(value):
                continue
            jax = jax_params(namespace, name, entry)
            ours = functrans_params(value)
            if f"{namespace}.{name}" in OPAQUE:
                diffs = []
            else:
                diffs = ["unreadable"] if ours is None else differences(jax, ours)
            out.append(Comparison(namespace, name, jax, ours, diffs, len(entry) - len(jax)))
    return out


PAGE = pathlib.Path(__file__).resolve().parent.parent / "docs" / "jax_names.md"
BEGIN = "<!-- signature-parity:begin (generated by `python tests/signature_parity.py --write`) -->"
END = "<!-- signature-parity:end -->"


def _group(namespace: str) -> str:
    """The row of the summary a namespace counts in (``jax.scipy.stats.norm`` in
    ``jax.scipy.stats``)."""
    return "jax.scipy.stats" if namespace.startswith("jax.scipy.stats.") else namespace


def summary(comparisons: list[Comparison], version: str) -> str:
    """The generated block of docs/jax_names.md: counts per namespace and the accepted
    differences."""
    rows: dict[str, list] = {}
    for c in comparisons:
        row = rows.setdefault(_group(c.namespace), [0, 0, 0])
        row[0] += 1
        row[1] += not c.diffs
        row[2] += len(c.diffs)
    total = [sum(r[i] for r in rows.values()) for i in range(3)]
    opaque = sum(c.key in OPAQUE for c in comparisons)
    left_out = sum(c.left_out for c in comparisons)
    intro = textwrap.fill(
             f"Compared with JAX {version}: **{total[0]}** functions that both have, of which "
             f"**{total[1]}** accept every call JAX accepts (with the same meaning of each "
             f"positional and keyword argument and the same defaults); {opaque} of these "
             "have a JAX signature that says nothing checkable (a `*args` wrapper). "
             f"{left_out} JAX parameters no call can tell apart (`out=`, and a "
             "ufunc's `where=`, that must be None, private ones, shardings, arguments JAX "
             "deprecated and refuses) are left out; "
             f"the other **{total[2]}** differences are listed below, each with its reason "
             "in `tests/signature_exceptions.py`.", width=90)
    lines = [BEGIN, "", intro, "",
             "| namespace | functions compared | same signature | differences |",
             "|---|---|---|---|"]
    for name, (n, same, diffs) in rows.items():
        lines.append(f"| `{name}` | {n} | {same} | {diffs} |")
    lines.append(f"| all | {total[0]} | {total[1]} | {total[2]} |")
    lines += ["", textwrap.fill(
        "The differences, by function (`missing`: a parameter functrans lacks; `kind`: one "
        "a call cannot pass the same way, by position or by keyword; `default`: a "
        "different default; `extra`: a parameter functrans requires and JAX does not "
        "have):", width=90), ""]
    for c in comparisons:
        if c.diffs:
            kinds = [d.split(":", 1) for d in c.diffs]
            lines.append(textwrap.fill(f"- `{c.key}`: " + ", ".join(
                f"{k} `{p}`" for k, p in kinds), width=90, subsequent_indent="  ",
                break_on_hyphens=False))
    from signature_exceptions import PARTIAL
    lines += ["", textwrap.fill(
        "Parameters both have, of which functrans refuses values JAX accepts (it raises "
        "NotImplementedError; listed in `PARTIAL` of the same file):", width=90), ""]
    for key in PARTIAL:
        function, param = key.split(":")
        lines.append(f"- `{function}`: `{param}`")
    lines += ["", END]
    return "\n".join(lines)


def page_with_summary(page: str, block: str) -> str:
    """docs/jax_names.md with its generated block replaced by ``block``."""
    start, end = page.index(BEGIN), page.index(END) + len(END)
    return page[:start] + block + page[end:]


def _describe(p: Param | None) -> str:
    if p is None:
        return "-"
    text = {POS_ONLY: "{}, /", VAR_POS: "*{}", KW_ONLY: "*, {}", VAR_KW: "**{}"}.get(
        p.kind, "{}").format(p.name)
    return text + (f"={p.default!r}" if p.has_default else "")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skeleton", action="store_true",
                        help="print the differences not in the exceptions table")
    parser.add_argument("--write", action="store_true",
                        help="regenerate the summary in docs/jax_names.md")
    args = parser.parse_args(argv)
    from signature_exceptions import EXCEPTIONS
    comparisons = compare_all()
    if args.write:
        block = summary(comparisons, stored()["jax_version"])
        PAGE.write_text(page_with_summary(PAGE.read_text(), block))
        print(f"wrote the summary in {PAGE}", file=sys.stderr)
        return 0
    total = len(comparisons)
    exact = sum(not c.diffs for c in comparisons)
    print(f"{total} functions compared, {exact} match, "
          f"{sum(len(c.diffs) for c in comparisons)} differences", file=sys.stderr)
    for c in comparisons:
        todo = [d for d in c.diffs if d not in EXCEPTIONS.get(c.key, {})] if args.skeleton \
            else c.diffs
        if not todo:
            continue
        if args.skeleton:
            print(f"    {c.key!r}: {{")
            for d in todo:
                print(f"        {d!r}: \"\",")
            print("    },")
        else:
            jax_by = {p.name: p for p in c.jax}
            ours_by = {p.name: p for p in (c.ours or [])}
            for d in todo:
                pname = d.split(":", 1)[-1].lstrip("*")
                print(f"{c.key}: {d}  (JAX {_describe(jax_by.get(pname))}; functrans "
                      f"{_describe(ours_by.get(pname))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
