"""Primitive families.  Each module defines its primitives with all of their rules (impl,
abstract eval, JVP, transpose if linear, batching) registered next to each other, plus the
``lax``-level functions that bind them."""
# In dependency order: each family imports only the ones before it.
from functrans.primitives import (conversion, shape, elementwise, reductions,  # noqa: F401
                                  special, special_integrals, slicing, linalg, decompositions,
                                  matrix_functions, gather, sorting, indexing, cumulative, fft, prng, collectives,
                                  callbacks, control_flow, custom_derivatives, checkpoint, jit,
                                  linear_solve)
# Last: it wraps the impls of the families above for lazy (dask) arrays.
from functrans.primitives import chunked  # noqa: F401,E402
