"""The public names of JAX's namespaces that functrans does not provide on purpose, each with
the reason it cannot (or need not) exist here.  docs/coverage.md shows them as "excluded";
a JAX name that is neither provided nor listed here shows as "missing".

A reason is one short sentence the coverage page prints as it is.  tests/test_coverage_page.py
checks that every name here is a name of JAX's namespace and is absent from functrans (an
exclusion of something functrans provides would hide a real status).
"""
from __future__ import annotations

__all__ = ["EXCLUSIONS", "reason"]

_XLA_DTYPE = ("an XLA-only dtype: NumPy and CuPy have no such arrays (ml_dtypes types are not "
              "understood by their kernels)")
_QUANTIZED = ("block-scaled quantization configured for XLA's float8/float4 dtypes, which "
              "NumPy and CuPy do not have")

#: namespace (JAX's module name) -> {name: reason}
EXCLUSIONS: dict[str, dict[str, str]] = {
    "jax.numpy": {
        **{name: _XLA_DTYPE for name in (
            "bfloat16", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4",
            "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
            "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "int1", "int2", "int4",
            "uint1", "uint2", "uint4")},
        "ufunc": "functrans.numpy's functions are plain Python functions that transforms trace, "
                 "not ufunc objects (no .reduce/.accumulate/.at methods)",
        "frompyfunc": "builds a ufunc object (see ufunc); numpy.vectorize-style mapping is "
                      "functrans.numpy.vectorize, built on vmap",
        "ComplexWarning": "a NumPy warning class, not an array function: use "
                          "numpy.exceptions.ComplexWarning",
        "save": "file I/O of concrete arrays, not a transformable function: use numpy.save "
                "(or cupy.save) on the values",
        "savez": "file I/O of concrete arrays, not a transformable function: use numpy.savez "
                 "(or cupy.savez) on the values",
        "load": "file I/O of concrete arrays, not a transformable function: use numpy.load "
                "(or cupy.load)",
        "fromfile": "file I/O of concrete arrays: use numpy.fromfile (or cupy.fromfile)",
        "array_repr": "printing of concrete arrays: use numpy.array_repr on the values",
        "array_str": "printing of concrete arrays: use numpy.array_str on the values",
        "set_printoptions": "printing options belong to the array library: use "
                            "numpy.set_printoptions",
        "get_printoptions": "printing options belong to the array library: use "
                            "numpy.get_printoptions",
        "printoptions": "printing options belong to the array library: use "
                        "numpy.printoptions",
    },
    "jax.numpy.linalg": {},
    "jax.numpy.fft": {},
    "jax.nn": {
        "get_scaled_dot_general_config": _QUANTIZED,
        "scaled_dot_general": _QUANTIZED,
    },
    "jax.scipy.special": {},
    "jax.tree": {},
}


def reason(namespace: str, name: str) -> str | None:
    """Why ``name`` of JAX's ``namespace`` is not in functrans, or None if it should be."""
    return EXCLUSIONS.get(namespace, {}).get(name)
