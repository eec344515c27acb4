"""Primitive families.  Each module defines its primitives with all of their rules (impl,
abstract eval, JVP, transpose if linear, batching) registered next to each other, plus the
``lax``-level functions that bind them."""
# In dependency order: each family imports only the ones before it.
from functrans.primitives import (conversion, shape, elementwise, reductions, slicing,  # noqa: F401
                                  linalg, decompositions, gather, indexing, cumulative, fft, prng,
                                  control_flow, custom_derivatives, checkpoint, jit)
