"""Sweep cases of the convolution family: ``lax.conv_general_dilated`` over strides,
padding (explicit, negative, "SAME"), both dilations, feature and batch groups, 1 to 3
spatial axes and every form of ``dimension_numbers``, plus ``conv``,
``conv_with_general_padding`` and ``conv_transpose``; and ``functrans.scipy.signal``'s
convolutions (every mode and method) against SciPy.

The sweep differentiates both operands (the convolution is bilinear: its second derivative
is the mixed one), and vmaps over each operand alone and both together, which reaches every
batching rule: into the batch, into the output features, into the feature groups and into
the batch groups.
"""
from __future__ import annotations

import functools

import numpy as np

from functrans import lax
import scipy.signal

from functrans.scipy import signal
from sweep import C128, F32, F64, A, Case, numpy_case

COMPLEX = (F64, F32, C128)


def _conv(name, lhs, rhs, strides, padding, lhs_dilation=None, rhs_dilation=None,
          dimension_numbers=None, groups=1, batch_groups=1, dtypes=(F64, F32)) -> Case:
    fun = functools.partial(lax.conv_general_dilated, window_strides=strides, padding=padding,
                            lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
                            dimension_numbers=dimension_numbers,
                            feature_group_count=groups, batch_group_count=batch_groups)
    return Case(f"conv_general_dilated_{name}", fun, [A(*lhs), A(*rhs)], dtypes=dtypes)


PRIMITIVE_CASES = [
    _conv("1d_valid", (2, 3, 6), (2, 3, 3), (1,), "VALID", dtypes=COMPLEX),
    _conv("1d_stride_pad", (2, 2, 7), (3, 2, 3), (2,), [(1, 2)]),
    _conv("1d_negative_pad", (1, 2, 8), (2, 2, 2), (3,), [(-1, 1)]),
    _conv("1d_lhs_dilation", (1, 2, 4), (2, 2, 3), (1,), [(2, 1)], lhs_dilation=(2,)),
    _conv("1d_both_dilations_stride", (2, 1, 5), (2, 1, 2), (2,), [(1, 0)], (3,), (2,)),
    _conv("2d_same", (2, 2, 4, 5), (3, 2, 3, 2), (1, 1), "SAME", dtypes=COMPLEX),
    _conv("2d_same_lower_stride", (1, 2, 5, 4), (2, 2, 2, 3), (2, 2), "SAME_LOWER"),
    _conv("2d_rhs_dilation", (1, 2, 6, 5), (2, 2, 2, 2), (1, 2), [(0, 1), (1, 0)],
          rhs_dilation=(2, 1)),
    _conv("2d_feature_groups", (2, 4, 4, 4), (6, 2, 2, 2), (1, 1), [(1, 0), (0, 1)],
          groups=2),
    _conv("2d_depthwise", (1, 3, 4, 4), (3, 1, 3, 3), (1, 1), "SAME", groups=3),
    _conv("2d_batch_groups", (4, 2, 4, 3), (4, 2, 2, 2), (1, 1), "VALID", batch_groups=2),
    _conv("2d_batch_groups_strided_dilated", (4, 1, 5, 4), (2, 1, 2, 2), (2, 1),
          [(1, 1), (0, 0)], (1, 2), (1, 2), batch_groups=2),
    _conv("2d_nhwc", (2, 4, 3, 2), (2, 2, 2, 3), (1, 1), "SAME",
          dimension_numbers=("NHWC", "HWIO", "NHWC")),
    _conv("2d_mixed_layouts_groups", (2, 4, 3, 4), (3, 2, 2, 4), (2, 1), [(1, 0), (0, 1)],
          dimension_numbers=("NWHC", "WHIO", "CNHW"), groups=2),
    _conv("2d_spec_numbers", (4, 2, 2, 3), (2, 3, 2, 2), (1, 1), "VALID",
          dimension_numbers=lax.ConvDimensionNumbers((3, 2, 0, 1), (1, 0, 2, 3),
                                                     (1, 0, 2, 3))),
    _conv("3d", (1, 2, 3, 4, 3), (2, 2, 2, 2, 2), (1, 2, 1), [(0, 1), (1, 0), (1, 1)],
          rhs_dilation=(1, 1, 2)),
    # patches and the locally connected layer (built on conv_general_dilated and dot_general)
    Case("conv_general_dilated_patches_nhwc",
         lambda x: lax.conv_general_dilated_patches(x, (2, 2), (1, 2), "SAME",
                                                    rhs_dilation=(1, 2),
                                                    dimension_numbers=("NHWC", "HWIO",
                                                                       "NCHW")),
         [A(2, 3, 4, 2)], linear=True),
    Case("conv_general_dilated_local_1d",
         lambda x, w: lax.conv_general_dilated_local(x, w, (2,), [(1, 0)], (2,)),
         [A(2, 3, 5), A(4, 6, 3)]),
    Case("conv", lambda x, w: lax.conv(x, w, (2, 1), "SAME"), [A(1, 2, 5, 4), A(2, 2, 3, 3)]),
    Case("conv_with_general_padding",
         lambda x, w: lax.conv_with_general_padding(x, w, (1, 1), [(1, 1), (0, 2)], (2, 1),
                                                    (1, 2)),
         [A(1, 1, 3, 3), A(2, 1, 2, 2)]),
    Case("conv_transpose_same", lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME"),
         [A(1, 3, 2, 2), A(3, 2, 2, 2)]),
    Case("conv_transpose_kernel_valid",
         lambda x, w: lax.conv_transpose(x, w, (2,), "VALID", transpose_kernel=True),
         [A(2, 3, 2), A(3, 1, 2)]),
]


def _signal(name, ours, theirs, *args, dtypes=COMPLEX):
    return numpy_case(f"scipy.signal.{name}", lambda m, *xs: ours(*xs), *args, dtypes=dtypes,
                      reference=theirs)


NUMPY_CASES = [
    *[_signal(f"{f}_{mode}_{method}", functools.partial(getattr(signal, f), mode=mode,
                                                        method=method),
              functools.partial(getattr(scipy.signal, f), mode=mode, method=method), *args)
      for f in ("convolve", "correlate") for mode in ("full", "same", "valid")
      for method, args in (("direct", (A(5), A(2))), ("fft", (A(3, 4), A(2, 2))),
                           ("auto", (A(2), A(4))))],
    *[_signal(f"{f}_{mode}", functools.partial(getattr(signal, f), mode=mode),
              functools.partial(getattr(scipy.signal, f), mode=mode), A(3, 4), A(2, 3))
      for f in ("convolve2d", "correlate2d") for mode in ("full", "same", "valid")],
    _signal("correlate2d_valid_swapped", functools.partial(signal.correlate2d, mode="valid"),
            functools.partial(scipy.signal.correlate2d, mode="valid"), A(2, 2), A(3, 4)),
    *[_signal(f"fftconvolve_{mode}", functools.partial(signal.fftconvolve, mode=mode),
              functools.partial(scipy.signal.fftconvolve, mode=mode), A(2, 5), A(2, 3))
      for mode in ("full", "same", "valid")],
    _signal("fftconvolve_axes", functools.partial(signal.fftconvolve, mode="same", axes=1),
            functools.partial(scipy.signal.fftconvolve, mode="same", axes=1), A(3, 5), A(1, 2)),
]
