"""``functrans.numpy``: NumPy-named functions that work on arrays and on tracers alike.

Code written for ``numpy`` (or ``jax.numpy``) runs under every transform after swapping the
import.  Dtypes follow NumPy: float32 stays float32, and Python scalars do not upcast arrays.

>>> import numpy as np, functrans.numpy as fnp
>>> fnp.sum(fnp.sin(np.zeros(3, np.float32)) * 2.0).dtype
dtype('float32')

The functions live in private modules by family; a new function goes into its family's
module and its ``__all__``, which this namespace re-exports whole:

- ``_elementwise``: ufunc-like math, arithmetic, comparisons, logical functions
- ``_reductions``: sums, means, extrema, truth tests, running sums and products
- ``_statistics``: weighted averages, covariance and correlation, the nan-skipping reductions
- ``_shape``: reshaping, transposing, joining, splitting, repeating
- ``_padding``: ``pad`` in every NumPy mode
- ``_indexing``: static indexing of tracers, ``where``, diagonals and triangles
- ``_index_tricks``: ``nonzero`` and friends (with ``size=``), ``select``, ``choose``,
  index builders (``indices``, ``ix_``, ``unravel_index``, ...), ``s_``, ``mgrid``, ``r_``,
  ``bincount`` and histograms
- ``_contractions``: ``matmul``, ``dot``, ``tensordot``, ``einsum``, ...
- ``_sorting``: sorting, ``searchsorted``, quantiles and medians, ``unique`` and set operations
- ``_creation``: ``asarray``, ``zeros``, ``arange``, ... and the ``*_like`` functions
- ``_dtypes``: dtype names, ``result_type``, ``finfo``, ``astype``
- ``_polynomial``: ``polyval``, ``polyfit``, ... and sampled calculus (``interp``, ``gradient``)
- ``_functional``: ``vectorize``, ``apply_along_axis``, ``apply_over_axes``
- ``_array_api``: ``__array_namespace_info__`` (not in ``__all__``: a dunder) and
  ``from_dlpack``, the array API's own objects
- ``_devices``: ``device=`` and ``.device`` (the array API's devices), for every family
- ``_array_methods``: the operators and methods of tracers and NumPy's dispatch to us
- ``_util``: argument helpers the families share
- ``linalg``: the public ``functrans.numpy.linalg``
- ``fft``: the public ``functrans.numpy.fft``
"""
from functrans.numpy._dtypes import *  # noqa: F401,F403
from functrans.numpy._creation import *  # noqa: F401,F403
from functrans.numpy._elementwise import *  # noqa: F401,F403
from functrans.numpy._reductions import *  # noqa: F401,F403
from functrans.numpy._statistics import *  # noqa: F401,F403
from functrans.numpy._shape import *  # noqa: F401,F403
from functrans.numpy._padding import *  # noqa: F401,F403
from functrans.numpy._indexing import *  # noqa: F401,F403
from functrans.numpy._index_tricks import *  # noqa: F401,F403
from functrans.numpy._contractions import *  # noqa: F401,F403
from functrans.numpy._sorting import *  # noqa: F401,F403
from functrans.numpy._polynomial import *  # noqa: F401,F403
from functrans.numpy._functional import *  # noqa: F401,F403
from functrans.numpy._array_api import *  # noqa: F401,F403
from functrans.numpy._array_api import namespace_info as _namespace_info
from functrans.numpy import linalg
from functrans.numpy import fft
from functrans.numpy._array_methods import install_tracer_methods as _install_tracer_methods
from functrans.numpy import (_array_api, _contractions, _creation, _dtypes, _elementwise,
                             _functional, _index_tricks, _indexing, _padding, _polynomial,
                             _reductions, _shape, _sorting, _statistics)

_FAMILIES = (_dtypes, _creation, _elementwise, _reductions, _statistics, _shape, _padding,
             _indexing, _index_tricks, _contractions, _sorting, _polynomial, _functional,
             _array_api)
__all__ = [name for family in _FAMILIES for name in family.__all__] + ["linalg", "fft"]

#: the revision of the array API standard that functrans.numpy follows (docs/array_api.md)
__array_api_version__ = "2024.12"
#: the array API's inspection object (a dunder, so not in __all__)
__array_namespace_info__ = _namespace_info


def __dir__() -> list:
    return sorted(__all__)


# Functions report where users find them (help(), reprs, pickles), not the family module.
for _name in __all__:
    _value = globals()[_name]
    if getattr(_value, "__module__", "").startswith("functrans.numpy._"):
        _value.__module__ = __name__
del _name, _value

_install_tracer_methods()
