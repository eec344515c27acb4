"""SciPy's differentiable functions, as ``jax.scipy`` offers them (SciPy is an optional
dependency: ``pip install "functrans[scipy]"``; on CuPy arrays the kernels come from
``cupyx.scipy``).

Each submodule is imported on its own, as in JAX: ``import functrans.scipy.special``.
"""

from functrans.scipy import (cluster, fft, integrate, interpolate, linalg, ndimage, optimize,
                             signal, sparse, special, stats)

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize",
           "signal", "sparse", "special", "stats"]
