"""``functrans.lax``: the primitives' own functions, with JAX's ``jax.lax`` names.

Unlike ``functrans.numpy`` these do no implicit dtype promotion beyond NumPy's rules for
the operation itself, and shape operations take explicit static parameters.
"""
from functrans.primitives.control_flow import cond, fori_loop, scan, switch, while_loop
from functrans.primitives.conversion import convert_element_type, stop_gradient, zeros_like
from functrans.primitives.elementwise import (abs, add, atan, bitwise_and, bitwise_not,
                                              bitwise_or, complex, conj, cos, cosh, div, eq,
                                              exp, expm1, ge, gt, imag, integer_pow, le, log,
                                              log1p, logistic, lt, max, min, mul, ne, neg, pow,
                                              real, select, sign, sin, sinh, sqrt, sub, tan,
                                              tanh)
from functrans.primitives.indexing import dynamic_slice, dynamic_update_slice
from functrans.primitives.linalg import dot_general
from functrans.primitives.reductions import (argmax, argmin, reduce_max, reduce_min,
                                             reduce_sum)
from functrans.primitives.shape import (broadcast, broadcast_in_dim, concatenate, expand_dims,
                                        pad, reshape, rev, slice, squeeze)
from functrans.primitives.shape import transpose_axes as transpose

__all__ = [
    "abs", "add", "argmax", "argmin", "atan", "bitwise_and", "bitwise_not", "bitwise_or",
    "broadcast", "broadcast_in_dim", "complex", "cond", "fori_loop", "scan", "switch",
    "while_loop", "concatenate", "conj", "convert_element_type",
    "cos", "cosh", "div", "dot_general", "dynamic_slice", "dynamic_update_slice", "eq", "exp", "expand_dims", "expm1", "ge", "gt",
    "imag", "integer_pow", "le", "log", "log1p", "logistic", "lt", "max", "min", "mul", "ne",
    "neg", "pad", "pow", "real", "reduce_max", "reduce_min", "reduce_sum", "reshape", "rev",
    "select", "sign", "sin", "sinh", "slice", "sqrt", "squeeze", "stop_gradient", "sub", "tan",
    "tanh", "transpose", "zeros_like",
]
