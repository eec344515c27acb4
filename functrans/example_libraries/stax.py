"""``functrans.example_libraries.stax``: the neural-network layers of JAX's
``jax.example_libraries.stax``.

A layer is a pair ``(init_fun, apply_fun)`` of functions:

* ``init_fun(rng, input_shape)`` returns ``(output_shape, params)``: the shape of the
  layer's output for inputs of ``input_shape`` (a tuple), and its parameters (a pytree,
  drawn with the :mod:`functrans.random` key ``rng``);
* ``apply_fun(params, inputs, **kwargs)`` computes the layer; the keyword ``rng`` is a key
  for the layers that draw random numbers (:func:`Dropout`).

Layer constructors are CamelCase (``Dense(10)``, ``Conv(32, (3, 3))``); layers without
parameters to choose are the pairs themselves (``Relu``, ``Flatten``, ``Identity``,
``FanInSum``).  :func:`serial` and :func:`parallel` combine layers into layers.  Layouts
are JAX's: images ``NHWC`` and kernels ``HWIO`` for :func:`Conv`, ``NHWC`` for the pools.

Initializers draw with :mod:`functrans.random`, which has JAX's bits, so for the same key
the parameters are JAX's up to rounding (float64 by default, JAX's with
``jax_enable_x64``; pass initializers with ``dtype=np.float32`` for JAX's float32 ones).

>>> import numpy as np
>>> import functrans.random as random
>>> from functrans.example_libraries import stax
>>> init_fun, apply_fun = stax.serial(stax.Dense(16), stax.Relu, stax.Dense(3),
...                                   stax.LogSoftmax)
>>> out_shape, params = init_fun(random.PRNGKey(0), (-1, 4))
>>> out_shape
(-1, 3)
>>> apply_fun(params, np.ones((5, 4))).shape
(5, 3)
"""
from __future__ import annotations

import math

import numpy as np  # noqa: F401  (the examples' namespace)

from functrans import lax, random
from functrans import numpy as fnp
from functrans.nn import (elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax,
                          softplus, standardize)
from functrans.nn_initializers import glorot_normal, normal, ones, zeros

__all__ = [
    # layers and layer constructors
    "Dense", "GeneralConv", "Conv", "GeneralConvTranspose", "Conv1DTranspose",
    "ConvTranspose", "BatchNorm", "elementwise", "Tanh", "Relu", "Exp", "LogSoftmax",
    "Softmax", "Softplus", "Sigmoid", "Elu", "LeakyRelu", "Selu", "Gelu", "MaxPool",
    "SumPool", "AvgPool", "Flatten", "Identity", "FanOut", "FanInSum", "FanInConcat",
    "Dropout",
    # combinators
    "serial", "parallel", "shape_dependent",
    # JAX's stax re-exports these (jax.nn's functions and initializers), and its aliases
    "relu", "log_softmax", "softmax", "softplus", "sigmoid", "elu", "leaky_relu", "selu",
    "gelu", "standardize", "glorot_normal", "normal", "ones", "zeros", "glorot", "randn",
    "logsoftmax",
]


def __dir__() -> list:
    return sorted(__all__)


# The older names JAX's stax keeps.  (Plain comments: a "#:" one would make the reference
# site document these objects a second time, here, and misdirect their source's links.)
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


def _split(rng):
    first, second = random.split(rng)
    return first, second


# -- layers with parameters ---------------------------------------------------------------


def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A dense (fully connected) layer: ``inputs @ W + b``, on the last axis.

    Parameters
    ----------
    out_dim : int
        The number of outputs (the last axis of the output).
    W_init : callable, optional
        The initializer of ``W``, of shape ``(input_shape[-1], out_dim)``.
    b_init : callable, optional
        The initializer of ``b``, of shape ``(out_dim,)``.

    Returns
    -------
    tuple
        The layer ``(init_fun, apply_fun)``; its parameters are ``(W, b)``.

    Examples
    --------
    >>> init_fun, apply_fun = Dense(3)
    >>> out_shape, (W, b) = init_fun(random.PRNGKey(0), (5, 2))
    >>> out_shape, W.shape, b.shape
    ((5, 3), (2, 3), (3,))
    >>> bool(np.allclose(apply_fun((W, b), np.ones((5, 2))), W.sum(0) + b))
    True
    """
    def init_fun(rng, input_shape):
        k_w, k_b = _split(rng)
        W = W_init(k_w, (input_shape[-1], out_dim))
        b = b_init(k_b, (out_dim,))
        return tuple(input_shape[:-1]) + (out_dim,), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return fnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _kernel_shape(specs, out_chan, filter_shape, input_shape):
    lhs_spec, rhs_spec, _ = specs
    spatial = iter(filter_shape)
    return [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
            else next(spatial) for c in rhs_spec]


def _conv_layer(kind, dimension_numbers, out_chan, filter_shape, strides, padding,
                W_init, b_init):
    _, rhs_spec, out_spec = dimension_numbers
    ones_ = (1,) * len(filter_shape)
    strides = strides or ones_
    if W_init is None:
        W_init = glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(dimension_numbers, out_chan, filter_shape, input_shape)
        shape_of = (lax.conv_general_shape_tuple if kind == "conv"
                    else lax.conv_transpose_shape_tuple)
        output_shape = shape_of(input_shape, kernel_shape, strides, padding,
                                dimension_numbers)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k_w, k_b = _split(rng)
        return output_shape, (W_init(k_w, kernel_shape), b_init(k_b, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        if kind == "conv":
            out = lax.conv_general_dilated(inputs, W, strides, padding, ones_, ones_,
                                           dimension_numbers=dimension_numbers)
        else:
            out = lax.conv_transpose(inputs, W, strides, padding,
                                     dimension_numbers=dimension_numbers)
        return out + b
    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=normal(1e-6)):
    """A convolution layer in any layout (``lax.conv_general_dilated``), with a bias per
    output channel.

    Parameters
    ----------
    dimension_numbers : tuple of str
        ``(lhs_spec, rhs_spec, out_spec)``: the layouts of the inputs, of the kernel and of
        the outputs, such as ``("NHWC", "HWIO", "NHWC")``.
    out_chan : int
        The number of output channels.
    filter_shape : tuple of int
        The kernel's spatial shape, in the order of the spatial axes of ``rhs_spec``.
    strides : tuple of int, optional
        The window strides (None: 1 along every spatial axis).
    padding : str or sequence of (int, int), optional
        ``"VALID"``, ``"SAME"``, ``"SAME_LOWER"`` or explicit ``(low, high)`` pairs.
    W_init : callable, optional
        The kernel's initializer (None: ``glorot_normal`` with the kernel's input and
        output channel axes).
    b_init : callable, optional
        The bias's initializer; the bias has the output's rank, ``out_chan`` along its
        ``C`` axis and 1 elsewhere.

    Returns
    -------
    tuple
        The layer ``(init_fun, apply_fun)``; its parameters are ``(W, b)``.

    Examples
    --------
    >>> init_fun, apply_fun = GeneralConv(("NCHW", "OIHW", "NCHW"), 4, (3, 3))
    >>> out_shape, (W, b) = init_fun(random.PRNGKey(0), (2, 1, 8, 8))
    >>> out_shape, W.shape, b.shape
    ((2, 4, 6, 6), (4, 1, 3, 3), (1, 4, 1, 1))
    """
    return _conv_layer("conv", dimension_numbers, out_chan, filter_shape, strides, padding,
                       W_init, b_init)


def Conv(out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
         b_init=normal(1e-6)):
    """A 2-D convolution layer on ``NHWC`` images with ``HWIO`` kernels:
    :func:`GeneralConv` with ``("NHWC", "HWIO", "NHWC")``.

    Parameters
    ----------
    out_chan : int
        The number of output channels.
    filter_shape : tuple of int
        The kernel's spatial shape ``(height, width)``.
    strides : tuple of int, optional
        The window strides (None: 1 along every spatial axis).
    padding : str or sequence of (int, int), optional
        ``"VALID"``, ``"SAME"``, ``"SAME_LOWER"`` or explicit ``(low, high)`` pairs.
    W_init : callable, optional
        The kernel's initializer (None: ``glorot_normal`` over ``I`` and ``O``).
    b_init : callable, optional
        The bias's initializer (the bias has shape ``(1, 1, 1, out_chan)``).

    Returns
    -------
    tuple
        The layer ``(init_fun, apply_fun)``; its parameters are ``(W, b)``.

    Examples
    --------
    >>> init_fun, apply_fun = Conv(8, (3, 3), padding="SAME")
    >>> out_shape, params = init_fun(random.PRNGKey(0), (2, 10, 10, 3))
    >>> out_shape, apply_fun(params, np.ones((2, 10, 10, 3))).shape
    ((2, 10, 10, 8), (2, 10, 10, 8))
    """
    return GeneralConv(("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides, padding,
                       W_init, b_init)


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=normal(1e-6)):
    """A transposed-convolution layer in any layout (``lax.conv_transpose``), with a bias
    per output channel: it maps shapes as the gradient of a convolution does (``strides``
    dilate the input), the usual upsampling layer.

    Parameters
    ----------
    dimension_numbers : tuple of str
        ``(lhs_spec, rhs_spec, out_spec)``, such as ``("NHWC", "HWIO", "NHWC")``.
    out_chan : int
        The number of output channels.
    filter_shape : tuple of int
        The kernel's spatial shape, in the order of the spatial axes of ``rhs_spec``.
    strides : tuple of int, optional
        The strides (None: 1 along every spatial axis).
    padding : str or sequence of (int, int), optional
        ``"VALID"``, ``"SAME"`` or explicit pairs, as ``lax.conv_transpose`` takes them.
    W_init : callable, optional
        The kernel's initializer (None: ``glorot_normal`` with the kernel's input and
        output channel axes).
    b_init : callable, optional
        The bias's initializer; the bias has the output's rank, ``out_chan`` along its
        ``C`` axis and 1 elsewhere.

    Returns
    -------
    tuple
        The layer ``(init_fun, apply_fun)``; its parameters are ``(W, b)``.

    Examples
    --------
    >>> init_fun, apply_fun = GeneralConvTranspose(("NHWC", "HWIO", "NHWC"), 2, (3, 3),
    ...                                            strides=(2, 2))
    >>> init_fun(random.PRNGKey(0), (1, 4, 4, 5))[0]
    (1, 9, 9, 2)
    """
    return _conv_layer("transpose", dimension_numbers, out_chan, filter_shape, strides,
                       padding, W_init, b_init)


def Conv1DTranspose(out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
                    b_init=normal(1e-6)):
    """A 1-D transposed-convolution layer on ``NHC`` inputs with ``HIO`` kernels:
    :func:`GeneralConvTranspose` with ``("NHC", "HIO", "NHC")``.

    Parameters
    ----------
    out_chan : int
        The number of output channels.
    filter_shape : tuple of int
        The kernel's length, ``(width,)``.
    strides : tuple of int, optional
        The stride (None: 1).
    padding : str or sequence of (int, int), optional
        ``"VALID"``, ``"SAME"`` or an explicit pair.
    W_init : callable, optional
        The kernel's initializer (None: ``glorot_normal`` over ``I`` and ``O``).
    b_init : callable, optional
        The bias's initializer (the bias has shape ``(1, 1, out_chan)``).

    Returns
    -------
    tuple
        The layer ``(init_fun, apply_fun)``; its parameters are ``(W, b)``.

    Examples
    --------
    >>> init_fun, apply_fun = Conv1DTranspose(3, (4,), strides=(2,), padding="SAME")
    >>> init_fun(random.PRNGKey(0), (2, 7, 5))[0]
    (2, 14, 3)
    """
    return GeneralConvTranspose(("NHC", "HIO", "NHC"), out_chan, filter_shape, strides,
                                padding, W_init, b_init)


def ConvTranspose(out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
                  b_init=normal(1e-6)):
    """A 2-D transposed-convolution layer on ``NHWC`` images with ``HWIO`` kernels:
    :func:`GeneralConvTranspose` with ``("NHWC", "HWIO", "NHWC")``.

    Parameters
    ----------
    out_chan : int
        The number of output channels.
    filter_shape : tuple of int
        The kernel's spatial shape ``(height, width)``.
    strides : tuple of int, optional
        The strides (None: 1 along both spatial axes).
    padding : str or sequence of (int, int), optional
        ``"VALID"``, ``"SAME"`` or explicit pairs.
    W_init : callable, optional
        The kernel's initializer (None: ``glorot_normal`` over ``I`` and ``O``).
    b_init : callable, optional
        The bias's initializer (the bias has shape ``(1, 1, 1, out_chan)``).

    Returns
    -------
    tuple
        The layer ``(init_fun, apply_fun)``; its parameters are ``(W, b)``.

    Examples
    --------
    >>> init_fun, apply_fun = ConvTranspose(4, (2, 2), strides=(2, 2))
    >>> out_shape, params = init_fun(random.PRNGKey(0), (1, 3, 3, 2))
    >>> out_shape, apply_fun(params, np.ones((1, 3, 3, 2))).shape
    ((1, 6, 6, 4), (1, 6, 6, 4))
    """
    return GeneralConvTranspose(("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides,
                                padding, W_init, b_init)


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Batch normalization: the inputs standardized over ``axis`` (by the batch's own mean
    and variance: there are no running averages), then scaled by ``gamma`` and shifted by
    ``beta``, which have the shape of the axes not normalized.

    Parameters
    ----------
    axis : int or tuple of int, optional
        The axes to normalize over (non-negative; the default suits ``NHWC`` images).
    epsilon : float, optional
        Added to the variance.
    center : bool, optional
        Whether to add a learned shift ``beta`` (else its parameter is ``()``).
    scale : bool, optional
        Whether to multiply by a learned scale ``gamma`` (else its parameter is ``()``).
    beta_init : callable, optional
        The initializer of ``beta``.
    gamma_init : callable, optional
        The initializer of ``gamma``.

    Returns
    -------
    tuple
        The layer ``(init_fun, apply_fun)``; its parameters are ``(beta, gamma)``.

    Examples
    --------
    >>> init_fun, apply_fun = BatchNorm(axis=0)
    >>> out_shape, (beta, gamma) = init_fun(random.PRNGKey(0), (4, 3))
    >>> beta.shape, gamma.shape
    ((3,), (3,))
    >>> y = apply_fun((beta, gamma), np.arange(12.0).reshape(4, 3))
    >>> bool(np.allclose(y.mean(0), 0) and np.allclose(y.std(0), 1, atol=1e-5))
    True
    """
    axes = (axis,) if fnp.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(n for i, n in enumerate(input_shape) if i not in axes)
        k_beta, k_gamma = _split(rng)
        beta = beta_init(k_beta, shape) if center else ()
        gamma = gamma_init(k_gamma, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        kept = tuple(None if i in axes else slice(None) for i in range(fnp.ndim(x)))
        z = standardize(x, axes, epsilon=epsilon)
        if scale:
            z = gamma[kept] * z
        if center:
            z = z + beta[kept]
        return z
    return init_fun, apply_fun


def Dropout(rate, mode="train"):
    """Dropout, as JAX's stax has it: in ``"train"`` mode each input is kept with
    probability ``rate`` and divided by ``rate``, else zeroed (so ``rate`` is the
    probability of *keeping*); in any other mode the layer is the identity.

    Parameters
    ----------
    rate : float
        The probability of keeping each input.
    mode : str, optional
        ``"train"`` to drop, anything else (``"test"``) to pass the inputs through.

    Returns
    -------
    tuple
        The layer ``(init_fun, apply_fun)``, without parameters.  ``apply_fun`` needs the
        keyword ``rng``, a :mod:`functrans.random` key (:func:`serial` passes one to each
        layer when it is given one).

    Raises
    ------
    ValueError
        (from ``apply_fun``) when it is called without ``rng``.

    Examples
    --------
    >>> init_fun, apply_fun = Dropout(0.5)
    >>> y = apply_fun((), np.ones(8), rng=random.PRNGKey(0))
    >>> sorted(set(y.tolist()))
    [0.0, 2.0]
    >>> Dropout(0.5, mode="test")[1]((), np.ones(2), rng=random.PRNGKey(0))
    array([1., 1.])
    """
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. "
                "That is, instead of `apply_fun(params, inputs)`, call it like "
                "`apply_fun(params, inputs, rng=key)` where `key` is a "
                "functrans.random key (e.g. from `functrans.random.key`).")
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, fnp.shape(inputs))
        return fnp.where(keep, inputs / rate, 0)
    return init_fun, apply_fun


# -- elementwise layers -------------------------------------------------------------------


def elementwise(fun, **fun_kwargs):
    """A layer without parameters applying ``fun(inputs, **fun_kwargs)``, whose output has
    the input's shape.

    Parameters
    ----------
    fun : callable
        The function of the inputs (an elementwise one, or any that keeps the shape).
    **fun_kwargs
        Keyword arguments passed to ``fun`` at every call.

    Returns
    -------
    tuple
        The layer ``(init_fun, apply_fun)``; its parameters are ``()``.

    Examples
    --------
    >>> init_fun, apply_fun = elementwise(leaky_relu, negative_slope=0.5)
    >>> init_fun(random.PRNGKey(0), (3,))
    ((3,), ())
    >>> apply_fun((), np.array([-2.0, 0.0, 2.0]))
    array([-1.,  0.,  2.])
    """
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


#: The layer ``tanh`` (a pair ``(init_fun, apply_fun)``, no parameters).
Tanh = elementwise(fnp.tanh)
#: The layer ``functrans.nn.relu``.
Relu = elementwise(relu)
#: The layer ``exp``.
Exp = elementwise(fnp.exp)
#: The layer ``functrans.nn.log_softmax`` over the last axis.
LogSoftmax = elementwise(log_softmax, axis=-1)
#: The layer ``functrans.nn.softmax`` over the last axis.
Softmax = elementwise(softmax, axis=-1)
#: The layer ``functrans.nn.softplus``.
Softplus = elementwise(softplus)
#: The layer ``functrans.nn.sigmoid``.
Sigmoid = elementwise(sigmoid)
#: The layer ``functrans.nn.elu`` (``alpha=1``).
Elu = elementwise(elu)
#: The layer ``functrans.nn.leaky_relu`` (``negative_slope=0.01``).
LeakyRelu = elementwise(leaky_relu)
#: The layer ``functrans.nn.selu``.
Selu = elementwise(selu)
#: The layer ``functrans.nn.gelu`` (its tanh approximation, ``approximate=True``).
Gelu = elementwise(gelu)


# -- pooling ------------------------------------------------------------------------------


def _with_unit_axes(dims: tuple, axes, fill=1) -> tuple:
    """``dims`` of the spatial axes with ``fill`` inserted at each of ``axes``."""
    for i in sorted(axes):
        dims = dims[:i] + (fill,) + dims[i:]
    return dims


def _pooling(name, computation, init_value, average=False):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        spatial_window = tuple(window_shape)
        spatial_strides = tuple(strides) if strides else (1,) * len(spatial_window)
        if spec is None:
            batch_and_channel = (0, len(spatial_window) + 1)
        else:
            batch_and_channel = (spec.index("N"), spec.index("C"))
        window = _with_unit_axes(spatial_window, batch_and_channel)
        window_strides = _with_unit_axes(spatial_strides, batch_and_channel)
        if isinstance(padding, str):
            pads = spatial_pads = padding
        else:  # explicit pairs, of the spatial axes or of every axis (which JAX's
            # reduce_window takes, though its pooling layers' init_fun refuses them)
            pairs = tuple(tuple(p) for p in padding)
            if len(pairs) == len(spatial_window):
                spatial_pads = pairs
                pads = _with_unit_axes(pairs, batch_and_channel, fill=(0, 0))
            else:
                pads = pairs
                spatial_pads = tuple(p for i, p in enumerate(pairs)
                                     if i not in batch_and_channel)

        def init_fun(rng, input_shape):
            pairs = (lax.padtype_to_pads(input_shape, window, window_strides, pads)
                     if isinstance(pads, str) else pads)
            unit = (1,) * len(window)
            return lax.reduce_window_shape_tuple(input_shape, window, window_strides, pairs,
                                                 unit, unit), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_value, computation, window, window_strides,
                                    pads)
            if not average:
                return out
            # divide by the number of inputs each window covers (padding excluded)
            spatial_shape = tuple(n for i, n in enumerate(fnp.shape(inputs))
                                  if i not in batch_and_channel)
            counts = lax.reduce_window(fnp.ones_like(inputs, shape=spatial_shape), 0.0,
                                       lax.add, spatial_window, spatial_strides,
                                       spatial_pads)
            return out / fnp.expand_dims(counts, tuple(sorted(batch_and_channel)))
        return init_fun, apply_fun

    PoolingLayer.__name__ = PoolingLayer.__qualname__ = name
    return PoolingLayer


_POOL_DOC = """{summary}

    Parameters
    ----------
    window_shape : tuple of int
        The window's shape along the spatial axes.
    strides : tuple of int, optional
        The window strides along the spatial axes (None: 1 along each).
    padding : str or sequence of (int, int), optional
        ``"VALID"``, ``"SAME"`` or explicit ``(low, high)`` pairs for the spatial axes.
    spec : str, optional
        The inputs' layout, such as ``"NCHW"``: where the batch (``N``) and channel
        (``C``) axes are, which are not pooled (None: the batch axis first and the channel
        axis last, ``NHWC``).

    Returns
    -------
    tuple
        The layer ``(init_fun, apply_fun)``; its parameters are ``()``.

    Examples
    --------
{examples}"""

MaxPool = _pooling("MaxPool", lax.max, -fnp.inf)
MaxPool.__doc__ = _POOL_DOC.format(
    summary="A max-pooling layer: the maximum of each window (``lax.reduce_window`` with "
            "``lax.max``).",
    examples="""    >>> init_fun, apply_fun = MaxPool((2, 2), strides=(2, 2))
    >>> init_fun(random.PRNGKey(0), (1, 4, 4, 3))[0]
    (1, 2, 2, 3)
    >>> x = np.arange(16.0).reshape(1, 4, 4, 1)
    >>> apply_fun((), x)[0, :, :, 0]
    array([[ 5.,  7.],
           [13., 15.]])
""")
SumPool = _pooling("SumPool", lax.add, 0.0)
SumPool.__doc__ = _POOL_DOC.format(
    summary="A sum-pooling layer: the sum of each window (``lax.reduce_window`` with "
            "``lax.add``).",
    examples="""    >>> init_fun, apply_fun = SumPool((2, 2), strides=(2, 2))
    >>> x = np.arange(16.0).reshape(1, 4, 4, 1)
    >>> apply_fun((), x)[0, :, :, 0]
    array([[10., 18.],
           [42., 50.]])
""")
AvgPool = _pooling("AvgPool", lax.add, 0.0, average=True)
AvgPool.__doc__ = _POOL_DOC.format(
    summary="An average-pooling layer: the mean of each window, over the inputs the "
            "window covers (padding, with ``\"SAME\"``, is not counted).",
    examples="""    >>> init_fun, apply_fun = AvgPool((2, 2), strides=(2, 2))
    >>> x = np.arange(16.0).reshape(1, 4, 4, 1)
    >>> apply_fun((), x)[0, :, :, 0]
    array([[ 2.5,  4.5],
           [10.5, 12.5]])
    >>> AvgPool((2,), padding="SAME")[1]((), np.array([[[1.0], [3.0]]]))[0, :, 0]
    array([2., 3.])
""")


# -- shape layers and fan-in/out ----------------------------------------------------------


def _flatten_init(rng, input_shape):
    return (input_shape[0], math.prod(input_shape[1:])), ()


def _flatten_apply(params, inputs, **kwargs):
    return fnp.reshape(inputs, (fnp.shape(inputs)[0], -1))


#: The layer flattening every axis but the first (the batch axis).
Flatten = (_flatten_init, _flatten_apply)


def _identity_init(rng, input_shape):
    return input_shape, ()


def _identity_apply(params, inputs, **kwargs):
    return inputs


#: The identity layer.
Identity = (_identity_init, _identity_apply)


def FanOut(num):
    """A layer copying its input into a list of ``num`` inputs (for :func:`parallel`).

    Parameters
    ----------
    num : int
        The number of copies.

    Returns
    -------
    tuple
        The layer ``(init_fun, apply_fun)``; its parameters are ``()``.

    Examples
    --------
    >>> init_fun, apply_fun = FanOut(2)
    >>> init_fun(random.PRNGKey(0), (3,))
    ([(3,), (3,)], ())
    """
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num
    return init_fun, apply_fun


def _fan_in_sum_init(rng, input_shape):
    return input_shape[0], ()


def _fan_in_sum_apply(params, inputs, **kwargs):
    return sum(inputs)


#: The layer summing a list of inputs of one shape (after :func:`parallel`).
FanInSum = (_fan_in_sum_init, _fan_in_sum_apply)


def FanInConcat(axis=-1):
    """A layer concatenating a list of inputs along ``axis``.

    Parameters
    ----------
    axis : int, optional
        The axis to concatenate along.

    Returns
    -------
    tuple
        The layer ``(init_fun, apply_fun)``; its parameters are ``()``.

    Examples
    --------
    >>> init_fun, apply_fun = FanInConcat()
    >>> init_fun(random.PRNGKey(0), [(2, 3), (2, 5)])
    ((2, 8), ())
    >>> apply_fun((), [np.zeros((2, 3)), np.ones((2, 5))]).shape
    (2, 8)
    """
    def init_fun(rng, input_shape):
        first = tuple(input_shape[0])
        ax = axis % len(first)
        size = sum(shape[ax] for shape in input_shape)
        return first[:ax] + (size,) + first[ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return fnp.concatenate(inputs, axis)
    return init_fun, apply_fun


# -- combinators --------------------------------------------------------------------------


def _layer_keys(rng, n):
    return (None,) * n if rng is None else random.split(rng, n)


def serial(*layers):
    """The layers one after the other: each one's output is the next one's input.

    ``init_fun`` splits its key once per layer (``rng, layer_rng = split(rng)``) and
    returns the list of the layers' parameters; ``apply_fun`` splits its ``rng`` keyword,
    when given, into one key per layer.

    Parameters
    ----------
    *layers : tuple
        The layers, each an ``(init_fun, apply_fun)`` pair.

    Returns
    -------
    tuple
        The composite layer ``(init_fun, apply_fun)``; its parameters are a list with
        each layer's.

    Examples
    --------
    >>> init_fun, apply_fun = serial(Dense(4), Tanh, Dense(1))
    >>> out_shape, params = init_fun(random.PRNGKey(0), (-1, 2))
    >>> out_shape, len(params), params[1]
    ((-1, 1), 3, ())
    >>> apply_fun(params, np.zeros((7, 2))).shape
    (7, 1)
    """
    init_funs = [layer[0] for layer in layers]
    apply_funs = [layer[1] for layer in layers]

    def init_fun(rng, input_shape):
        params = []
        shape = input_shape
        for init in init_funs:
            rng, layer_rng = _split(rng)
            shape, layer_params = init(layer_rng, shape)
            params.append(layer_params)
        return shape, params

    def apply_fun(params, inputs, **kwargs):
        rngs = _layer_keys(kwargs.pop("rng", None), len(apply_funs))
        for apply, layer_params, layer_rng in zip(apply_funs, params, rngs):
            inputs = apply(layer_params, inputs, rng=layer_rng, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """The layers side by side: a list of inputs, the ``k``-th to the ``k``-th layer, gives
    the list of their outputs (often between :func:`FanOut` and :data:`FanInSum` or
    :func:`FanInConcat`).

    Parameters
    ----------
    *layers : tuple
        The layers, each an ``(init_fun, apply_fun)`` pair.

    Returns
    -------
    tuple
        The composite layer ``(init_fun, apply_fun)``; its parameters are a tuple with each
        layer's, and its output shape the tuple of each layer's.

    Examples
    --------
    >>> init_fun, apply_fun = serial(FanOut(2), parallel(Dense(3), Identity), FanInConcat())
    >>> out_shape, params = init_fun(random.PRNGKey(0), (5, 2))
    >>> out_shape, apply_fun(params, np.ones((5, 2))).shape
    ((5, 5), (5, 5))
    """
    init_funs = [layer[0] for layer in layers]
    apply_funs = [layer[1] for layer in layers]

    def init_fun(rng, input_shape):
        rngs = random.split(rng, len(init_funs))
        results = [init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)]
        return tuple(shape for shape, _ in results), tuple(p for _, p in results)

    def apply_fun(params, inputs, **kwargs):
        rngs = _layer_keys(kwargs.pop("rng", None), len(apply_funs))
        return [apply(p, x, rng=r, **kwargs)
                for apply, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built only once the input's shape is known: ``make_layer(input_shape)``
    returns the layer, at initialization and at every application (with the inputs'
    shape).

    Parameters
    ----------
    make_layer : callable
        A function from an input shape (a tuple of int) to an ``(init_fun, apply_fun)``
        pair.

    Returns
    -------
    tuple
        The layer ``(init_fun, apply_fun)``.

    Examples
    --------
    >>> square = shape_dependent(lambda shape: Dense(shape[-1]))
    >>> out_shape, params = square[0](random.PRNGKey(0), (2, 5))
    >>> out_shape, square[1](params, np.ones((2, 5))).shape
    ((2, 5), (2, 5))
    """
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(fnp.shape(inputs))[1](params, inputs, **kwargs)
    return init_fun, apply_fun
