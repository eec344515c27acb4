"""Write tests/jax_names.json: the public names of the JAX namespaces that docs/coverage.md
compares functrans with, each with its kind, and the JAX version they come from.

The test suite must not need JAX, so the names are stored in the repository; regenerate them
with a Python that has JAX when JAX's API moves::

    /path/to/python-with-jax tests/jax_names.py

then ``python tests/coverage_table.py --write`` to regenerate the page.
"""
from __future__ import annotations

import importlib
import json
import numbers
import pathlib
import sys
import types

__all__ = ["NAMESPACES", "PATH", "kind_of", "collect", "main"]

#: JAX's namespaces, in the order the coverage page shows them.
NAMESPACES = ["jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.nn", "jax.scipy.special",
              "jax.tree"]
PATH = pathlib.Path(__file__).with_name("jax_names.json")


def kind_of(value) -> str:
    """``module``, ``constant`` (numbers and ``newaxis``), ``type`` (classes, dtypes),
    ``function`` (anything else callable) or ``object`` (index helpers such as ``r_``)."""
    if isinstance(value, types.ModuleType):
        return "module"
    if value is None or isinstance(value, numbers.Number):
        return "constant"
    if isinstance(value, type):
        return "type"
    return "function" if callable(value) else "object"


def collect() -> dict:
    """The names (``dir`` without underscores) of each namespace, with their kinds."""
    import jax
    names = {}
    for namespace in NAMESPACES:
        module = importlib.import_module(namespace)
        names[namespace] = {n: kind_of(getattr(module, n)) for n in sorted(dir(module))
                            if not n.startswith("_")}
    return {"jax_version": jax.__version__, "namespaces": names}


def main() -> int:
    data = collect()
    PATH.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    total = sum(len(v) for v in data["namespaces"].values())
    print(f"wrote {PATH} ({total} names of JAX {data['jax_version']})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
