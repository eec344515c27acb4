"""The differences between functrans's signatures and JAX's that tests/test_signature_parity.py
accepts, each with its reason: ``EXCEPTIONS[function][difference] = reason``, the function
named by its JAX path and the difference by the code tests/signature_parity.py gives it
(``missing:<parameter>``, ``kind:<parameter>``, ``default:<parameter>``,
``extra:<parameter>``).

The table only shrinks: the test fails on a difference that is not listed here and on an
entry that no longer applies (implemented, or JAX changed), so that implementing a
parameter means deleting its line.  Entries are grouped by how likely a program written for
JAX is to hit them, most likely first; a reason starting "not implemented yet" is a backlog
item and says what it needs.
"""
from __future__ import annotations

import numpy as np

__all__ = ["EXCEPTIONS", "PARTIAL"]

#: JAX function -> {difference: reason}
EXCEPTIONS: dict[str, dict[str, str]] = {
    # -- more likely: calls that appear in ported programs --------------------------------
    "jax.numpy.linalg.matrix_rank": {
        "kind:rtol": "the second positional argument agrees: JAX compares the singular "
                     "values with its rtol as an absolute bound (not relative, although "
                     "its docs say so), which is what functrans's (NumPy's) tol at that "
                     "position does; functrans's keyword rtol is NumPy's relative one",
    },
    "jax.numpy.linalg.pinv": {
        "kind:rtol": "the second positional argument is the relative cutoff in both "
                     "(NumPy's name for it is rcond), and rtol= works by keyword",
        "default:rtol": "the default cutoff is NumPy's (1e-15 relative) rather than JAX's "
                        "(10 max(M, N) eps): only nearly singular matrices tell them apart",
    },
    "jax.make_jaxpr": {
        "missing:axis_env": "not implemented yet: needs named axes bound while tracing "
                            "outside vmap, for collectives in the traced function",
        "kind:return_shape": "comes after axis_env in JAX: a positional return_shape (the "
                             "fourth argument there) follows once axis_env exists",
    },
    # -- less likely: options of rarely used modes ----------------------------------------
    "jax.lax.linalg.qr": {
        "missing:pivoting": "not implemented yet: needs column-pivoted QR (LAPACK geqp3, "
                            "which neither NumPy nor CuPy exposes) and its derivative",
    },
    "jax.jit": {
        "missing:device": "functrans's jit runs where its inputs are (jit(f, device=...) "
                          "is deprecated in JAX too); use device_put on the arguments",
        "missing:backend": "as device: deprecated in JAX; the backend is that of the inputs",
        "missing:compiler_options": "XLA compiler flags: functrans generates NumPy/CuPy "
                                    "code, there is no XLA compiler to configure",
    },
    "jax.nn.standardize": {
        "default:algorithm": "functrans keeps the two-pass variance ('stable'): the same "
                             "value up to rounding, without the one-pass formula's "
                             "cancellation when the mean is large; algorithm='fast' gives "
                             "JAX's default",
    },
    "jax.example_libraries.stax.standardize": {
        "default:algorithm": "stax re-exports jax.nn.standardize: see that entry",
    },
    "jax.numpy.astype": {
        "default:copy": "JAX's arrays are immutable, so no JAX program can tell a copy "
                        "from the input; functrans arrays are mutable NumPy/CuPy arrays, "
                        "and copy=True (NumPy's and the array API's default) keeps the "
                        "result independent of the input",
    },
    "jax.lax.all_gather": {
        "missing:to": "JAX's varying-manual-axes type system (shard_map's 'varying' values) "
                      "has no counterpart: functrans's collectives run under vmap",
    },
    "jax.ShapeDtypeStruct": {
        "missing:is_ref": "JAX's mutable array references (jax.new_ref) do not exist here: "
                          "functrans arrays are NumPy/CuPy arrays",
    },
}


def _call(module: str, name: str, *args, **kwargs):
    """A call of functrans's ``module.name`` that functrans refuses and JAX accepts."""
    def call():
        import importlib
        return getattr(importlib.import_module(module), name)(*args, **kwargs)
    return call


#: Parameters functrans has with JAX's signature but with values JAX accepts that it
#: refuses (NotImplementedError), which the signature comparison cannot see:
#: ``"<JAX function>:<parameter>" -> (reason, a call that must still be refused)``.  The
#: test checks both signatures have the parameter and that the call is still refused, so
#: this list only shrinks too.
PARTIAL: dict[str, tuple] = {
    "jax.numpy.unique:axis": (
        "not implemented yet: needs the unique slices along an axis (a lexicographic sort "
        "of the slices); axis=None works",
        _call("functrans.numpy", "unique", np.ones((2, 2)), axis=0)),
    "jax.scipy.linalg.qr:pivoting": (
        "not implemented yet: needs column-pivoted QR (LAPACK geqp3, which CuPy lacks); its "
        "permutation has no derivative",
        _call("functrans.scipy.linalg", "qr", np.eye(3), pivoting=True)),
    "jax.random.key:dtype": (
        "functrans keys are their raw uint32[2] data: there are no key dtypes to choose "
        "from; dtype=None works",
        _call("functrans.random", "key", 0, dtype="key<fry>")),
    "jax.random.wrap_key_data:dtype": (
        "functrans keys are their raw uint32[2] data: there are no key dtypes to choose "
        "from; dtype=None works",
        _call("functrans.random", "wrap_key_data", np.zeros(2, np.uint32), dtype="key<fry>")),
}

