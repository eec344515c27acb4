"""SciPy's differentiable functions, as ``jax.scipy`` offers them (SciPy is an optional
dependency: ``pip install "functrans[scipy]"``; on CuPy arrays the kernels come from
``cupyx.scipy``).

Each submodule is imported on its own, as in JAX: ``import functrans.scipy.special``.
"""

from functrans.scipy import (cluster, fft, integrate, interpolate, linalg, ndimage, optimize,
                             signal, sparse, spatial, special, stats)

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize",
           "signal", "sparse", "spatial", "special", "stats"]

# Every public function's docstring gets a Parameters section (functrans/docstrings.py).
from functrans import docstrings as _docstrings  # noqa: E402
_docstrings.complete_docstrings(_docstrings.public_namespaces(_docstrings.SCIPY_NAMESPACES))
del _docstrings
