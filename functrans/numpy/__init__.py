"""``functrans.numpy``: NumPy-named functions that work on arrays and on tracers alike.

Code written for ``numpy`` (or ``jax.numpy``) runs under every transform after swapping the
import.  Dtypes follow NumPy: float32 stays float32, and Python scalars do not upcast arrays.

>>> import numpy as np, functrans.numpy as fnp
>>> fnp.sum(fnp.sin(np.zeros(3, np.float32)) * 2.0).dtype
dtype('float32')

The functions live in private modules by family; a new function goes into its family's
module and its ``__all__``, and is imported and listed here:

- ``_elementwise``: ufunc-like math, arithmetic, comparisons, logical functions
- ``_reductions``: sums, means, extrema, truth tests, running sums and products
- ``_statistics``: weighted averages, covariance and correlation, the nan-skipping reductions
- ``_shape``: reshaping, transposing, joining, splitting, repeating, padding
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
from functrans.numpy._dtypes import (bool_, complex64, complex128, dtype, float16, float32,
                                     float64, int8, int16, int32, int64, uint8, uint32, uint64,
                                     ndarray, result_type, iscomplexobj, issubdtype, finfo, iinfo,
                                     astype, bool, single, double, csingle, cdouble, float_,
                                     complex_, int_, uint, uint16, generic, number, inexact,
                                     floating, complexfloating, integer, signedinteger,
                                     unsignedinteger, character, flexible, object_, promote_types,
                                     can_cast, broadcast_shapes, isdtype, iterable)
from functrans.numpy._creation import (asarray, array, zeros, ones, full, empty, arange, linspace,
                                       eye, identity, zeros_like, ones_like, full_like,
                                       empty_like, copy, tri, meshgrid, fromfunction,
                                       logspace, geomspace, bartlett, blackman, hamming, hanning,
                                       kaiser, frombuffer, fromiter, fromstring)
from functrans.numpy._elementwise import (e, inf, nan, pi, sin, cos, tan, tanh, sinh, cosh, exp,
                                          expm1, log, log1p, sqrt, arctan, arcsin, arccos, arctan2,
                                          floor, ceil, round, around, log2, log10, exp2, negative,
                                          positive, absolute, abs, sign, real, imag, conjugate,
                                          conj, square, reciprocal, add, subtract, multiply,
                                          true_divide, divide, power, maximum, minimum, logaddexp,
                                          clip, equal, not_equal, less, less_equal, greater,
                                          greater_equal, logical_and, logical_or, logical_not,
                                          isnan, isfinite)
from functrans.numpy._elementwise import (arcsinh, arccosh, arctanh, asin, acos, atan, atan2,
                                          asinh, acosh, atanh, pow, euler_gamma, cbrt, hypot,
                                          signbit, copysign, fabs, heaviside, sinc, fmax, fmin,
                                          fmod, mod, remainder, floor_divide, divmod, trunc, fix,
                                          rint, modf, ldexp, frexp, nextafter, spacing,
                                          float_power, logaddexp2, logical_xor, deg2rad, rad2deg,
                                          radians, degrees, angle, i0, nan_to_num, isinf, isposinf,
                                          isneginf, isreal, iscomplex, isrealobj, isscalar,
                                          isclose, allclose, array_equal, array_equiv, bitwise_and,
                                          bitwise_or, bitwise_xor, invert, bitwise_not,
                                          bitwise_invert, left_shift, right_shift,
                                          bitwise_left_shift, bitwise_right_shift, bitwise_count,
                                          gcd, lcm)
from functrans.numpy._reductions import (sum, mean, prod, cumsum, cumprod, var, std, max, min,
                                         amax, amin, any, all, argmax, argmin, diff, trace)
from functrans.numpy._reductions import cumulative_sum, cumulative_prod
from functrans.numpy._statistics import (average, ptp, cov, corrcoef, nansum, nanprod, nanmean,
                                         nanvar, nanstd, nanmin, nanmax, nanargmin, nanargmax,
                                         nancumsum, nancumprod)
from functrans.numpy._shape import (reshape, ravel, transpose, swapaxes, moveaxis, broadcast_to,
                                    broadcast_arrays, expand_dims, squeeze, atleast_1d, atleast_2d,
                                    concatenate, stack, hstack, vstack, split, tile, repeat, roll,
                                    flip, pad, shape, ndim, size, append, insert, delete, resize,
                                    trim_zeros, block, column_stack, dstack, array_split, hsplit,
                                    vsplit, dsplit, unstack, rot90, fliplr, flipud, rollaxis,
                                    matrix_transpose, permute_dims, concat, atleast_3d, kron,
                                    packbits, unpackbits)
from functrans.numpy._indexing import (newaxis, where, diagonal, diag, diagflat, tril, triu, take,
                                       take_along_axis, put_along_axis, put, place,
                                       fill_diagonal)
from functrans.numpy._index_tricks import (nonzero, argwhere, flatnonzero, compress, extract,
                                           count_nonzero, select, choose, piecewise, indices,
                                           ix_, unravel_index, ravel_multi_index, diag_indices,
                                           diag_indices_from, tril_indices, triu_indices,
                                           tril_indices_from, triu_indices_from, mask_indices,
                                           s_, index_exp, mgrid, ogrid, r_, c_, bincount,
                                           histogram, histogram_bin_edges, histogram2d,
                                           histogramdd)
from functrans.numpy._contractions import (matmul, dot, vdot, inner, outer, tensordot, einsum)
from functrans.numpy._contractions import (convolve, correlate, einsum_path, matvec, vecmat,
                                           vecdot, cross)
from functrans.numpy._polynomial import (polyval, polyadd, polysub, polymul, polydiv, polyder,
                                         polyint, poly, roots, polyfit, vander, interp, gradient,
                                         trapezoid, ediff1d, unwrap)
from functrans.numpy._functional import vectorize, apply_along_axis, apply_over_axes
from functrans.numpy._sorting import (sort, argsort, lexsort, sort_complex, partition,
                                      argpartition, searchsorted, digitize, median, quantile,
                                      percentile, nanmedian, nanquantile, nanpercentile,
                                      unique, unique_values, unique_counts, unique_inverse,
                                      unique_all, isin, intersect1d, union1d, setdiff1d,
                                      setxor1d)
from functrans.numpy._array_api import from_dlpack
from functrans.numpy._array_api import namespace_info as _namespace_info
from functrans.numpy import linalg
from functrans.numpy import fft
from functrans.numpy._array_methods import install_tracer_methods as _install_tracer_methods

__all__ = [
    "cumulative_sum", "cumulative_prod", "average", "ptp", "cov", "corrcoef", "nansum",
    "nanprod", "nanmean", "nanvar", "nanstd", "nanmin", "nanmax", "nanargmin", "nanargmax",
    "nancumsum", "nancumprod",
    "arcsinh", "arccosh", "arctanh", "asin", "acos", "atan", "atan2", "asinh", "acosh",
    "atanh", "pow", "euler_gamma", "cbrt", "hypot", "signbit", "copysign", "fabs",
    "heaviside", "sinc", "fmax", "fmin", "fmod", "mod", "remainder", "floor_divide",
    "divmod", "trunc", "fix", "rint", "modf", "ldexp", "frexp", "nextafter", "spacing",
    "float_power", "logaddexp2", "logical_xor", "deg2rad", "rad2deg", "radians", "degrees",
    "angle", "i0", "nan_to_num", "isinf", "isposinf", "isneginf", "isreal", "iscomplex",
    "isrealobj", "isscalar", "isclose", "allclose", "array_equal", "array_equiv",
    "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "bitwise_not", "bitwise_invert",
    "left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift",
    "bitwise_count", "gcd", "lcm",
    "fft", "convolve", "correlate",
    "argwhere", "bincount", "c_", "histogram", "histogram2d", "histogram_bin_edges",
    "histogramdd", "choose", "compress", "count_nonzero", "diag_indices",
    "diag_indices_from", "extract", "flatnonzero", "index_exp", "indices", "ix_",
    "mask_indices", "mgrid", "nonzero", "ogrid", "piecewise", "r_", "ravel_multi_index", "s_",
    "select", "tril_indices", "tril_indices_from", "triu_indices", "triu_indices_from",
    "unravel_index",
    "argpartition", "argsort", "digitize", "lexsort", "median", "nanmedian", "nanpercentile",
    "nanquantile", "partition", "percentile", "quantile", "searchsorted", "sort",
    "sort_complex", "unique", "unique_values", "unique_counts", "unique_inverse",
    "unique_all", "isin", "intersect1d", "union1d", "setdiff1d", "setxor1d",
    "abs", "absolute", "add", "all", "amax", "amin", "any", "arange", "arccos", "arcsin",
    "arctan", "arctan2", "argmax", "argmin", "around", "array", "asarray", "astype",
    "atleast_1d", "atleast_2d", "bool_", "broadcast_arrays", "broadcast_to", "ceil", "clip",
    "complex128", "complex64", "concatenate", "conj", "conjugate", "cos", "cosh", "cumprod",
    "cumsum", "diag", "diagonal", "diff", "divide", "dot", "dtype", "e", "einsum", "empty",
    "equal", "exp", "exp2", "expand_dims", "expm1", "eye", "finfo", "flip", "float16",
    "float32", "float64", "floor", "full", "full_like", "greater", "greater_equal", "hstack",
    "identity", "iinfo", "imag", "inf", "inner", "int16", "int32", "int64", "int8",
    "iscomplexobj", "isfinite", "isnan", "issubdtype", "less", "less_equal", "linalg",
    "linspace", "log", "log10", "log1p", "log2", "logaddexp", "logical_and", "logical_not",
    "logical_or", "matmul", "max", "maximum", "mean", "min", "minimum", "moveaxis", "multiply",
    "nan", "ndarray", "ndim", "negative", "newaxis", "not_equal", "ones", "ones_like", "outer",
    "pad", "pi", "positive", "power", "prod", "ravel", "real", "reciprocal", "repeat",
    "reshape", "result_type", "roll", "round", "shape", "sign", "sin", "sinh", "size", "split",
    "sqrt", "square", "squeeze", "stack", "std", "subtract", "sum", "swapaxes", "take", "take_along_axis", "tan", "tanh",
    "tensordot", "tile", "trace", "transpose", "tril", "triu", "true_divide", "uint32",
    "uint64", "uint8", "var", "vdot", "vstack", "where", "zeros", "zeros_like",
    # shape, creation and dtype functions of session 4
    "append", "insert", "delete", "resize", "trim_zeros", "block", "column_stack", "dstack",
    "array_split", "hsplit", "vsplit", "dsplit", "unstack", "rot90", "fliplr", "flipud",
    "rollaxis", "matrix_transpose", "permute_dims", "concat", "atleast_3d", "kron",
    "empty_like", "copy", "tri", "diagflat", "meshgrid", "fromfunction", "logspace",
    "geomspace", "bartlett", "blackman", "hamming", "hanning", "kaiser", "frombuffer",
    "fromiter", "fromstring", "packbits", "unpackbits", "cross",
    "bool", "single", "double", "csingle", "cdouble", "float_", "complex_", "int_", "uint",
    "uint16", "generic", "number", "inexact", "floating", "complexfloating", "integer",
    "signedinteger", "unsignedinteger", "character", "flexible", "object_", "promote_types",
    "can_cast", "broadcast_shapes", "isdtype", "iterable", "einsum_path", "matvec", "vecmat",
    "vecdot", "polyval", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint",
    "poly", "roots", "polyfit", "vander", "interp", "gradient", "trapezoid", "ediff1d", "unwrap",
    "vectorize", "apply_along_axis", "apply_over_axes",
    "fill_diagonal", "place", "put", "put_along_axis",
    "from_dlpack",
]

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
