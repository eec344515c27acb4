"""Write tests/jax_signatures.json: the signature (parameter names, kinds and defaults) of
every public function of the JAX namespaces that tests/test_signature_parity.py compares
functrans with, and the JAX version they come from.

The test suite must not need JAX, so the signatures are stored in the repository;
regenerate them with a Python that has JAX when JAX's API moves::

    /path/to/python-with-jax tests/jax_signatures.py

then run ``python -m pytest tests/test_signature_parity.py`` and update
tests/signature_exceptions.py as it says.

Each function is stored as a list of ``[name, kind, default]`` triples (``[name, kind]``
for a parameter without a default), with ``kind`` one of ``positional_only``,
``positional_or_keyword``, ``var_positional``, ``keyword_only``, ``var_keyword`` and
``default`` the encoding of :func:`encode_default`.  A ``jax.numpy.ufunc`` object
(``jnp.add``) is stored as the call it accepts: ``nin`` positional-only operands ``x1, x2, ...`` then ``out`` and ``where``.
"""
from __future__ import annotations

import importlib
import inspect
import json
import math
import pathlib
import sys
import types

__all__ = ["NAMESPACES", "CLASSES", "PATH", "KINDS", "encode_default", "encode_signature",
           "collect", "main"]

#: JAX's namespaces whose functions are compared, in the order the report lists them.
NAMESPACES = [
    "jax", "jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.lax", "jax.lax.linalg",
    "jax.nn", "jax.nn.initializers", "jax.random",
    "jax.scipy.cluster.vq", "jax.scipy.fft", "jax.scipy.integrate", "jax.scipy.interpolate",
    "jax.scipy.linalg", "jax.scipy.ndimage", "jax.scipy.optimize", "jax.scipy.signal",
    "jax.scipy.sparse.linalg", "jax.scipy.special", "jax.scipy.stats",
    *(f"jax.scipy.stats.{d}" for d in (
        "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
        "gamma", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic",
        "multinomial", "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t",
        "truncnorm", "uniform", "vonmises", "wrapcauchy")),
    "jax.example_libraries.optimizers", "jax.example_libraries.stax",
]

#: Classes whose constructor users call like a function (decorators, estimators), by
#: namespace.
CLASSES = {"jax": ["custom_jvp", "custom_vjp", "ShapeDtypeStruct"],
           "jax.scipy.stats": ["gaussian_kde"]}

PATH = pathlib.Path(__file__).with_name("jax_signatures.json")

KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional_only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional_or_keyword",
    inspect.Parameter.VAR_POSITIONAL: "var_positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword_only",
    inspect.Parameter.VAR_KEYWORD: "var_keyword",
}


def encode_default(value):
    """A JSON value standing for a default: ``None``, booleans, integers, strings and
    finite floats as themselves (tuples and lists as lists); a dtype or scalar type as
    ``"dtype:<name>"`` (Python's ``float``, ``int``, ... as ``"type:<name>"``); a set as a
sorted list; a non-finite float as ``"float:<repr>"``; anything else (sentinel
    objects, functions, JAX-only objects) as ``"<TypeName>"``."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else f"float:{value!r}"
    if isinstance(value, (tuple, list)):
        return [encode_default(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(encode_default(v) for v in value)
    if value in (bool, int, float, complex):
        return f"type:{value.__name__}"
    try:
        import numpy as np
        if isinstance(value, np.generic):
            return encode_default(value.item())
        if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(
                value, np.generic)) or getattr(value, "dtype", None) is not None and (
                isinstance(value, type) or hasattr(value, "type")):
            return f"dtype:{np.dtype(value).name}"
    except TypeError:
        pass
    return f"<{type(value).__name__}>"


def encode_signature(fun) -> list | None:
    """``fun``'s parameters as ``[name, kind, default]`` triples, ``[name, kind]`` for one
    without a default (None when Python cannot read a signature)."""
    import jax.numpy as jnp
    if isinstance(fun, jnp.ufunc):
        return ([[f"x{i + 1}", "positional_only"] for i in range(fun.nin)]
                + [["out", "keyword_only", None], ["where", "keyword_only", None]])
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        return None
    return [[p.name, KINDS[p.kind]] + ([] if p.default is inspect.Parameter.empty
                                        else [encode_default(p.default)])
            for p in sig.parameters.values()]


def _is_function(value) -> bool:
    return callable(value) and not isinstance(value, (type, types.ModuleType))


def collect() -> dict:
    """Every public function (``dir`` without underscores) of each namespace, with its
    signature."""
    import jax
    signatures = {}
    for namespace in NAMESPACES:
        module = importlib.import_module(namespace)
        table = {}
        for name in sorted(dir(module)):
            if name.startswith("_"):
                continue
            value = getattr(module, name)
            if _is_function(value) or name in CLASSES.get(namespace, ()):
                sig = encode_signature(value)
                if sig is not None:
                    table[name] = sig
        signatures[namespace] = table
    return {"jax_version": jax.__version__, "signatures": signatures}


def main() -> int:
    data = collect()
    lines = ["{", f' "jax_version": {json.dumps(data["jax_version"])},', ' "signatures": {']
    namespaces = list(data["signatures"].items())
    for i, (namespace, table) in enumerate(namespaces):
        lines.append(f"  {json.dumps(namespace)}: {{")
        items = list(table.items())
        for j, (name, sig) in enumerate(items):
            comma = "," if j < len(items) - 1 else ""
            lines.append(f"   {json.dumps(name)}: {json.dumps(sig)}{comma}")
        lines.append("  }" + ("," if i < len(namespaces) - 1 else ""))
    lines += [" }", "}"]
    PATH.write_text("\n".join(lines) + "\n")
    total = sum(len(v) for v in data["signatures"].values())
    print(f"wrote {PATH} ({total} functions of JAX {data['jax_version']})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
