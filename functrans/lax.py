"""``functrans.lax``: the primitives' own functions, with JAX's ``jax.lax`` names.

Unlike ``functrans.numpy`` these do no implicit dtype promotion beyond NumPy's rules for
the operation itself, and shape operations take explicit static parameters.
"""
from functrans import lax_linalg as linalg
from functrans.primitives.collectives import (all_gather, axis_index, pmax, pmean, pmin,
                                              psum)
from functrans.primitives.control_flow import cond, fori_loop, scan, switch, while_loop
from functrans.primitives.conversion import convert_element_type, stop_gradient, zeros_like
from functrans.primitives.elementwise import (RoundingMethod, abs, acos, acosh, add, asin, asinh,
                                              atan, atan2, atanh, bitwise_and, bitwise_not,
                                              bitwise_or, bitwise_xor, cbrt, ceil, clz, complex,
                                              conj, cos, cosh, div, eq, exp, exp2, expm1, floor,
                                              ge, gt, imag, integer_pow, is_finite, le, log, log1p,
                                              logistic, lt, max, min, mul, ne, neg, nextafter,
                                              population_count, pow, real, rem, round, select,
                                              shift_left, shift_right_arithmetic,
                                              shift_right_logical, sign, sin, sinh, sqrt, sub, tan,
                                              tanh)
from functrans.primitives.cumulative import cummax, cummin, cumprod, cumsum, reduce_prod
from functrans.primitives.fft import FftType, fft
from functrans.primitives.gather import (GatherScatterMode, gather, iota, scatter, scatter_add,
                                         scatter_max, scatter_min, scatter_mul)
from functrans.primitives.indexing import dynamic_slice, dynamic_update_slice
from functrans.primitives.linalg import dot_general
from functrans.primitives.reductions import argmax, argmin, reduce_max, reduce_min
from functrans.primitives.shape import (broadcast, broadcast_in_dim, expand_dims, reduce_sum,
                                        reshape, rev, squeeze)
from functrans.primitives.slicing import concatenate, pad, slice
from functrans.primitives.special import (bessel_i0e, bessel_i1e, betainc, digamma, erf,
                                          erf_inv, erfc, igamma, igamma_grad_a, igammac,
                                          lgamma, polygamma, random_gamma_grad, zeta)
from functrans.primitives.sorting import sort, sort_key_val, top_k
from functrans.primitives.shape import transpose_axes as _transpose_axes

__all__ = [
    "FftType", "GatherScatterMode", "RoundingMethod", "abs", "acos", "acosh", "add", "all_gather", "argmax",
    "argmin", "asin", "asinh", "atan", "atan2", "atanh", "axis_index", "bessel_i0e",
    "bessel_i1e", "betainc", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor",
    "broadcast", "broadcast_in_dim", "cbrt", "ceil", "clz", "complex", "concatenate", "cond",
    "conj", "convert_element_type", "cos", "cosh", "cummax", "cummin", "cumprod", "cumsum",
    "digamma", "div", "dot_general", "dynamic_slice", "dynamic_update_slice", "eq", "erf",
    "erf_inv", "erfc", "exp", "exp2", "expand_dims", "expm1", "fft", "floor", "fori_loop", "gather",
    "ge", "gt", "igamma", "igamma_grad_a", "igammac", "imag", "integer_pow", "iota",
    "is_finite", "le", "lgamma", "linalg", "log", "log1p", "logistic", "lt", "max", "min",
    "mul", "ne", "neg", "nextafter", "pad", "pmax", "pmean", "pmin", "polygamma",
    "population_count", "pow", "psum", "random_gamma_grad", "real", "reduce_max", "reduce_min",
    "reduce_prod", "reduce_sum", "rem", "reshape", "rev", "round", "scan", "scatter",
    "scatter_add", "scatter_max", "scatter_min", "scatter_mul", "select", "shift_left",
    "shift_right_arithmetic", "shift_right_logical", "sign", "sin", "sinh", "slice", "sort",
    "sort_key_val", "sqrt", "squeeze", "stop_gradient", "sub", "switch", "tan", "tanh",
    "top_k", "transpose", "while_loop", "zeros_like", "zeta",
]


def transpose(operand, permutation):
    """Permute the axes of ``operand``: output axis ``i`` is input axis ``permutation[i]``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.transpose(np.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    return _transpose_axes(operand, permutation)


def __dir__() -> list[str]:
    return sorted(__all__)
