"""Primitive families.  Each module defines its primitives with all of their rules (impl,
abstract eval, JVP, transpose if linear, batching) registered next to each other, plus the
``lax``-level functions that bind them."""
from functrans.primitives import (conversion, shape, elementwise, reductions, linalg,  # noqa: F401
                                  indexing, cumulative,
                                  control_flow, custom_derivatives, checkpoint)
