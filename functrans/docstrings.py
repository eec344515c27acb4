"""Parameters sections for the public docstrings, from one glossary.

Hundreds of public functions share a few dozen parameters (``a``, ``x``, ``axis``,
``dtype``, ``keepdims``, ``key``, ...) that mean the same thing wherever they appear.
Rather than repeat the same sentence in every docstring, ``complete_docstrings`` (run once
when ``functrans`` is imported) gives each public function a NumPy-style ``Parameters``
section: entries its docstring already has are kept as written, and every other parameter
of its signature is described from, in order,

1. ``SPECIFIC[public name][parameter]``: text for one function's parameter;
2. ``FAMILY[module][parameter]``, for the function's module and then each enclosing
   package (``functrans.numpy.fft``, then ``functrans.numpy``): what a name means within
   a family (``n`` is a transform length in the FFT modules);
3. ``GLOSSARY[parameter]``: what a name means everywhere in functrans.

A family entry of None blocks the glossary entry for that family, where the common
meaning would be wrong (``a`` in ``scipy.special`` is a shape parameter, not "the input
array"): such parameters need a specific entry.  A parameter found nowhere is left out, and
``tests/test_docstring_parameters.py`` lists it; nothing is ever described by a
placeholder.

The section goes where NumPy's docstring standard puts it: before the first other section,
or before the examples (which then get an ``Examples`` heading, so that Sphinx's napoleon
does not read them as parameters), or at the end.  ``help()`` and the reference site show
the same text.
"""
from __future__ import annotations

import enum
import functools
import importlib
import inspect
import re
import types
from typing import Any, Callable, Iterable

from functrans._parameter_glossary import FAMILY, GLOSSARY, SPECIFIC

__all__ = ["complete_docstrings", "completed_docstring", "documented_parameters",
           "signature_parameters", "describe", "public_namespaces", "public_functions",
           "CORE_NAMESPACES", "SCIPY_NAMESPACES", "EXAMPLE_LIBRARIES_NAMESPACES", "GLOSSARY",
           "FAMILY", "SPECIFIC"]

_HEADER = re.compile(r"^(?P<title>[A-Z][A-Za-z ]+)\n(?P<rule>-{3,})$", re.M)
_FIELD = re.compile(r"^(\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*(?::.*)?$")


def signature_parameters(obj: Callable) -> list[str]:
    """The names a Parameters section must describe, as written there (``*args``,
    ``**kwargs``); ``self`` and ``cls`` are left out.  Empty when there is no signature."""
    code = getattr(obj, "__code__", None)
    if code is not None and not hasattr(obj, "__wrapped__") and isinstance(obj, types.FunctionType):
        # a plain function: its code object says it, ~20x faster than inspect.signature
        # (this runs for every public function at import)
        count = code.co_argcount + code.co_kwonlyargcount
        names = list(code.co_varnames[:count])
        if code.co_flags & inspect.CO_VARARGS:
            names.insert(code.co_argcount, "*" + code.co_varnames[count])
            count += 1
        if code.co_flags & inspect.CO_VARKEYWORDS:
            names.append("**" + code.co_varnames[count])
        return [n for n in names if n not in ("self", "cls")]
    try:
        params = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return []
    names = []
    for p in params:
        if p.name in ("self", "cls"):
            continue
        prefix = ("*" if p.kind == p.VAR_POSITIONAL else
                  "**" if p.kind == p.VAR_KEYWORD else "")
        names.append(prefix + p.name)
    return names


def _sections(doc: str) -> list[tuple[str, int, int]]:
    """(title, start, end) of each NumPy-style section of a cleaned docstring, as offsets
    (start: the title line; end: the next section's title line, or the end)."""
    heads = [(m.group("title"), m.start()) for m in _HEADER.finditer(doc)
             if len(m.group("rule")) >= len(m.group("title")) - 1]
    return [(title, start, heads[i + 1][1] if i + 1 < len(heads) else len(doc))
            for i, (title, start) in enumerate(heads)]


def documented_parameters(doc: str | None) -> list[str]:
    """The names the Parameters (and Other Parameters) sections of a docstring describe, in
    order (``x, y : array`` counts for both)."""
    if not doc or "Parameters\n" not in doc:
        return []  # the common case, without the cost of parsing (import time)
    doc = inspect.cleandoc(doc)
    names: list[str] = []
    for title, start, end in _sections(doc):
        if title not in ("Parameters", "Other Parameters"):
            continue
        body = doc[start:end].split("\n")[2:]
        for line in body:
            if not line.strip() or line[0].isspace():
                continue
            field = _FIELD.match(line.rstrip())
            if field:
                names += [n.strip() for n in field.group(1).split(",")]
    return names


def _lookup(table: dict, key: str, name: str):
    entries = table.get(key)
    if entries is None or name not in entries:
        return False, None
    return True, entries[name]


def describe(public_name: str, name: str) -> tuple[str, str] | None:
    """The (type, description) of parameter ``name`` of the function ``public_name``
    (``functrans.numpy.sum``), or None when no table describes it."""
    bare = name.lstrip("*")
    for key in (name, bare):
        found, entry = _lookup(SPECIFIC, public_name, key)
        if found:
            return entry
    module = public_name.rpartition(".")[0]
    while module:
        for key in (name, bare):
            found, entry = _lookup(FAMILY, module, key)
            if found:
                return entry  # None: the glossary's meaning does not hold here
        module = module.rpartition(".")[0]
    return GLOSSARY.get(name) or GLOSSARY.get(bare)


@functools.lru_cache(maxsize=None)  # most entries repeat (``x``, ``axis``, ...)
def _format(name: str, entry: tuple[str, str], indent: str = "") -> tuple[str, ...]:
    kind, text = entry
    lines = [f"{indent}{name} : {kind}" if kind else f"{indent}{name}"]
    words, line = text.split(), ""
    for word in words:  # wrap at 88 columns, indented by 4 under the name
        if line and len(indent) + 4 + len(line) + 1 + len(word) > 88:
            lines.append(f"{indent}    {line}")
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(f"{indent}    {line}")
    return tuple(lines)


def _dedent(doc: str) -> str:
    """``inspect.cleandoc`` for the docstrings here (the first line unindented, the others
    by a common indentation), in a fraction of its time."""
    first, _, rest = doc.strip("\n").partition("\n")
    lines = rest.split("\n")
    indent = min((len(line) - len(line.lstrip(" ")) for line in lines if line.strip()),
                 default=0)
    return "\n".join([first.strip()] + [line[indent:].rstrip() for line in lines]).strip("\n")


def completed_docstring(obj: Callable, public_name: str) -> str | None:
    """``obj``'s docstring with a Parameters section for every parameter the tables
    describe, or None when nothing would change."""
    if not obj.__doc__:
        return None
    wanted = signature_parameters(obj)
    have = set(documented_parameters(obj.__doc__))
    missing = [n for n in wanted if n not in have and n.lstrip("*") not in have]
    entries = [(n, describe(public_name, n)) for n in missing]
    new_lines: list[str] = []
    for name, entry in entries:
        if entry is not None:
            new_lines += _format(name, entry)
    if not new_lines:
        return None
    doc = _dedent(obj.__doc__)
    sections = _sections(doc) if "---\n" in doc else []
    params = [s for s in sections if s[0] == "Parameters"]
    if params:  # add to the end of the existing section
        _, start, end = params[0]
        head, tail = doc[:end].rstrip("\n"), doc[end:]
        return head + "\n" + "\n".join(new_lines) + ("\n\n" + tail if tail else "\n")
    block = "Parameters\n----------\n" + "\n".join(new_lines) + "\n"
    if sections:
        start = sections[0][1]
        return doc[:start] + block + "\n" + doc[start:]
    example = re.search(r"^>>>", doc, re.M)
    if example:
        start = example.start()
        return doc[:start] + block + "\nExamples\n--------\n" + doc[start:]
    return doc.rstrip("\n") + "\n\n" + block


#: public module name -> the module that implements it, for the namespaces whose functions
#: get Parameters sections; ``functrans.scipy``'s are completed when it is imported
#: (``import functrans`` does not import it).
CORE_NAMESPACES = {
    "functrans": "functrans", "functrans.numpy": "functrans.numpy",
    "functrans.numpy.linalg": "functrans.numpy.linalg", "functrans.numpy.fft": "functrans.numpy.fft",
    "functrans.lax": "functrans.lax", "functrans.lax.linalg": "functrans.lax_linalg",
    "functrans.nn": "functrans.nn", "functrans.nn.initializers": "functrans.nn_initializers",
    "functrans.random": "functrans.random", "functrans.tree": "functrans.tree",
    "functrans.tree_util": "functrans.tree_util", "functrans.testing": "functrans.testing",
    "functrans.gradcheck": "functrans.gradcheck", "functrans.config": "functrans.config",
    "functrans.ops": "functrans.ops", "functrans.image": "functrans.image",
    "functrans.debug": "functrans.debug", "functrans.dtypes": "functrans.dtypes",
    "functrans.flatten_util": "functrans.flatten_util",
}
SCIPY_NAMESPACES = {f"functrans.scipy.{name}": f"functrans.scipy.{name}" for name in (
    "special", "linalg", "signal", "sparse.linalg", "optimize", "fft", "ndimage",
    "interpolate", "integrate", "cluster.vq", "spatial.transform", "stats")}
#: ``functrans.example_libraries``'s modules (imported on their own, as in JAX): their
#: docstrings describe every parameter themselves; tests/test_docstring_parameters.py
#: checks them with the others.
EXAMPLE_LIBRARIES_NAMESPACES = {f"functrans.example_libraries.{name}":
                                f"functrans.example_libraries.{name}"
                                for name in ("optimizers", "stax")}


def public_namespaces(table: dict[str, str]) -> list[tuple[str, types.ModuleType]]:
    """(public name, module) for each entry of a namespace table, with the distributions of
    ``functrans.scipy.stats`` (one module each)."""
    out = []
    for public, path in table.items():
        module = importlib.import_module(path)
        out.append((public, module))
        if public == "functrans.scipy.stats":
            out += [(f"{public}.{name}", getattr(module, name)) for name in module.__all__]
    return out


def public_functions(namespaces: Iterable[tuple[str, types.ModuleType]]
                     ) -> list[tuple[str, Any]]:
    """(public name, function or class) for the callables of functrans's own that the
    namespaces export, each object once, under the first name found.  A class's
    parameters are its constructor's; exception classes, enums and records whose
    docstring lists their fields (an ``Attributes`` section) are left out."""
    seen: set[int] = set()
    out = []
    for public, module in namespaces:
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if obj is None or inspect.ismodule(obj) or not callable(obj):
                continue
            if inspect.isclass(obj) and (issubclass(obj, (BaseException, enum.Enum))
                                         or "Attributes\n" in (obj.__doc__ or "")):
                continue  # errors and enums; records document their fields instead
            owner = getattr(obj, "__module__", None) or ""
            if not owner.startswith("functrans") or id(obj) in seen:
                continue
            seen.add(id(obj))
            out.append((f"{public}.{name}", obj))
    return out


def complete_docstrings(namespaces: Iterable[tuple[str, types.ModuleType]]) -> None:
    """Give every public function of ``namespaces`` its Parameters section (see the module
    docstring).  Objects whose ``__doc__`` cannot be set are left as they are."""
    for public_name, obj in public_functions(namespaces):
        doc = completed_docstring(obj, public_name)
        if doc is not None:
            try:
                obj.__doc__ = doc
            except (AttributeError, TypeError):
                pass
