"""The texts of the generated Parameters sections (see ``functrans.docstrings``).

Each entry is ``(type, description)``.  GLOSSARY holds what a parameter name means across
functrans, FAMILY what it means within one module (None: the glossary's meaning does not
hold there), SPECIFIC what one function's parameter means.
"""
from __future__ import annotations

Entry = tuple[str, str]

_ARRAY = "array_like"
_INPUT = "The input: a NumPy or CuPy array, a tracer, a Python scalar or a nested sequence of them."

GLOSSARY: dict[str, Entry] = {
    # --- arrays ---------------------------------------------------------------------------
    "a": (_ARRAY, _INPUT),
    "x": (_ARRAY, _INPUT),
    "arr": (_ARRAY, _INPUT),
    "ary": (_ARRAY, "The array to split."),
    "m": (_ARRAY, _INPUT),
    "y": (_ARRAY, "The second operand; it broadcasts against the first (NumPy's rules)."),
    "x1": (_ARRAY, "The first operand; the two operands broadcast against each other."),
    "x2": (_ARRAY, "The second operand; the two operands broadcast against each other."),
    "a1": (_ARRAY, "The first array."),
    "a2": (_ARRAY, "The second array."),
    "ar1": (_ARRAY, "The first array (flattened)."),
    "ar2": (_ARRAY, "The second array (flattened)."),
    "arrays": ("sequence of array_like", "The arrays, all of compatible shapes."),
    "tup": ("sequence of array_like", "The arrays to join."),
    "arys": (_ARRAY, "One or more arrays, each converted separately."),
    "condition": (_ARRAY, "A boolean array (or values tested for truth) that selects elements."),
    "*args": ("", "Further positional arguments, passed on as described above."),
    "**kwargs": ("", "Further keyword arguments, passed on as described above."),
    # --- axes and shapes ------------------------------------------------------------------
    "axis": ("int or None, optional",
             "The axis the operation works along (negative values count from the last axis). "
             "For reductions None means all axes (the flattened array), and a tuple of ints "
             "several axes where NumPy accepts one."),
    "axes": ("tuple of int, optional",
             "The axes the operation works on or permutes (negative values count from the "
             "end)."),
    "axis1": ("int, optional", "The first of the two axes (negative values count from the end)."),
    "axis2": ("int, optional", "The second of the two axes (negative values count from the end)."),
    "keepdims": ("bool, optional",
                 "If True, the reduced axes stay in the result with length one, so that it "
                 "broadcasts against the input."),
    "shape": ("int or tuple of int",
              "The shape of the result (an int means a 1-D result of that length)."),
    "newshape": ("int or tuple of int", "The new shape; one entry may be -1 (inferred)."),
    "indices_or_sections": ("int or sequence of int",
                            "An int N splits into N equal parts (an error if the length is "
                            "not divisible, except for ``array_split``); a sorted sequence "
                            "gives the indices where the pieces start."),
    # --- dtypes, devices, copies ----------------------------------------------------------
    "dtype": ("dtype, optional",
              "The dtype of the result (NumPy's names and scalar types are accepted). None: "
              "the dtype NumPy's rules give for the inputs."),
    "device": ("Device, optional",
               "Where to place the result (one of ``functrans.devices()``; a CuPy device for "
               "GPU arrays). None: the device of the inputs (the host for Python values)."),
    "like": (_ARRAY + ", optional",
             "A reference array: the result is created with its array library and on its "
             "device (a CuPy array gives a CuPy result)."),
    "copy": ("bool or None, optional",
             "True: always a new array; False: never copy (an error when a copy is needed); "
             "None: copy only when needed. Traced values are never changed in place."),
    "order": ("str, optional",
              "The memory layout NumPy would use. functrans arrays are always C-ordered: "
              "'C' (and the defaults meaning C order) are accepted, others raise "
              "NotImplementedError."),
    # --- NumPy's ufunc and reduction options ----------------------------------------------
    "out": ("None",
            "NumPy's output array. functrans arrays are immutable, so only None is accepted "
            "(as in JAX); use the returned array."),
    "where": (_ARRAY + ", optional",
              "A boolean mask, broadcast against the input: only elements where it is True "
              "take part."),
    "promote_integers": ("bool, optional",
                         "If True (default), booleans and integers narrower than the default "
                         "integer are accumulated in the default (64-bit) integer type."),
    "initial": ("scalar, optional",
                "The starting value of the reduction, included in the result."),
    "ddof": ("int, optional",
             "Delta degrees of freedom: the divisor is ``N - ddof`` for N elements."),
    "correction": ("int or float, optional",
                   "The array API's name for ``ddof``: the divisor is ``N - correction``."),
    "overwrite_input": ("bool, optional",
                        "NumPy's permission to reorder the input in place; functrans never "
                        "changes its input, so this is ignored."),
    "equal_nan": ("bool, optional", "Whether two NaNs compare equal."),
    "rtol": ("float, optional",
             "The relative tolerance: values pass when ``|a - b| <= atol + rtol * |b|``."),
    "atol": ("float, optional",
             "The absolute tolerance: values pass when ``|a - b| <= atol + rtol * |b|``."),
    "assume_unique": ("bool, optional",
                      "If True, the inputs are taken to hold no repeated values, which skips "
                      "a deduplication (a wrong promise gives wrong results)."),
    # --- JAX's extra arguments ------------------------------------------------------------
    "precision": ("str or lax.Precision, optional",
                  "JAX's matmul precision hint; accepted for compatibility. functrans "
                  "computes in the operands' dtype, so it changes nothing."),
    "preferred_element_type": ("dtype, optional",
                               "The dtype of the result (and of the accumulation): operands "
                               "that convert to it safely are multiplied in it."),
    "out_sharding": ("optional",
                     "JAX's sharding of the result; functrans has one device per array, so it "
                     "is accepted and ignored."),
    "sharding": ("optional",
                 "JAX's sharding of the result; functrans has one device per array, so it is "
                 "accepted and ignored."),
    "size": ("int, optional",
             "JAX's static size: the number of results, fixed in advance so that the "
             "function works under ``vmap``, ``jit`` and in jaxprs; missing results are "
             "padded with ``fill_value``, extra ones dropped. Without it the size depends "
             "on the values, which only concrete inputs allow."),
    "fill_value": ("scalar or array_like, optional",
                   "The value of padding entries (see ``size``; by default 0, or what "
                   "NumPy's function gives there)."),
    "unique_indices": ("bool, optional",
                       "A promise that the indices hold no duplicates (JAX's hint for "
                       "faster code; functrans's results do not depend on it)."),
    "indices_are_sorted": ("bool, optional",
                           "A promise that the indices are sorted (JAX's hint for faster "
                           "code; functrans's results do not depend on it)."),
    # --- pytrees --------------------------------------------------------------------------
    "tree": ("pytree", "A pytree: nested tuples, lists, dicts, None, registered nodes and "
                       "leaves (arrays, scalars)."),
    "is_leaf": ("callable, optional",
                "Called on each subtree; where it returns True the subtree is treated as a "
                "leaf and not flattened further."),
    "is_leaf_takes_path": ("bool, optional",
                           "If True, ``is_leaf`` is called as ``is_leaf(path, subtree)`` "
                           "with the subtree's key path."),
    "rest": ("pytree", "Further trees with the structure of the first (or with the first "
                       "as a prefix); their leaves are passed to ``f`` after the first's."),
    "treedef": ("PyTreeDef", "A tree structure, as ``tree_flatten`` or ``tree_structure`` "
                             "return it."),
    "leaves": ("iterable", "The leaves, in the order ``tree_flatten`` gives them."),
    # --- SciPy's linear algebra options ---------------------------------------------------
    "check_finite": ("bool, optional",
                     "SciPy's check that the input has no infinities or NaNs; accepted for "
                     "compatibility and ignored (the check would need the values, which "
                     "tracers do not have)."),
    "overwrite_a": ("bool, optional",
                    "SciPy's permission to overwrite ``a``; functrans never changes its "
                    "input, so this is ignored."),
    "overwrite_b": ("bool, optional",
                    "SciPy's permission to overwrite ``b``; functrans never changes its "
                    "input, so this is ignored."),
    # --- creation -------------------------------------------------------------------------
    "start": ("array_like", "The first value of the sequence."),
    "stop": ("array_like", "The end of the sequence (included when ``endpoint`` is True)."),
    "num": ("int, optional", "The number of values."),
    "endpoint": ("bool, optional", "Whether ``stop`` is the last value."),
}

# Names whose common meaning does not hold in a module, and what they mean there.
_NOT_HERE = None
FAMILY: dict[str, dict[str, Entry | None]] = {
    "functrans.lax": {
        "x": (_ARRAY, "The operand: an array, a tracer or a Python scalar."),
        "y": (_ARRAY, "The second operand. JAX's lax wants the shape and dtype of ``x`` "
                      "(Python scalars adopt its dtype); functrans also broadcasts and "
                      "promotes as ``functrans.numpy`` does, which code meant for JAX should "
                      "not rely on."),
        "operand": (_ARRAY, "The operand array."),
        "dimension": ("int", "The axis the operation works along."),
        "dimensions": ("sequence of int", "The axes the operation works on."),
        "axes": ("sequence of int", "The axes the reduction runs over."),
        "axis": ("int", "The axis the operation works along."),
        "reverse": ("bool, optional", "If True, run from the last element backwards."),
        "index": ("int or array_like", "The index along the axis (may be traced)."),
        "allow_negative_indices": ("bool, optional",
                                   "If True (default), negative start indices count from "
                                   "the end of the axis, as in Python."),
        "a": _NOT_HERE, "m": _NOT_HERE,
    },
    "functrans.numpy.fft": {
        "a": (_ARRAY, "The input array (real or complex)."),
        "n": ("int, optional", "The length of the transformed axis: the input is cropped or "
                               "zero-padded to it. None: the input's length."),
        "s": ("sequence of int, optional", "The lengths of the transformed axes (the input "
                                           "is cropped or zero-padded). None: the input's."),
        "axis": ("int, optional", "The axis to transform (default: the last)."),
        "axes": ("sequence of int, optional", "The axes to transform (default: the last "
                                              "two for the 2-D transforms; the last "
                                              "``len(s)``, or all, for the n-D ones)."),
        "norm": ("str, optional", "The scaling: ``'backward'`` (default: none forward, 1/n "
                                  "inverse), ``'ortho'`` (1/sqrt(n) both ways) or "
                                  "``'forward'`` (1/n forward, none inverse)."),
        "d": ("float, optional", "The sample spacing (the inverse of the sampling rate)."),
    },
    "functrans.random": {
        "key": ("PRNG key", "A key from ``functrans.random.key`` or ``PRNGKey`` (or "
                            "``split``); the same key always gives the same numbers."),
        "shape": ("tuple of int, optional", "The shape of the sample (default: the broadcast "
                                            "shape of the parameters, or ``()``)."),
        "dtype": ("dtype, optional", "The dtype of the sample (float64 by default for "
                                     "floating samplers)."),
        "minval": (_ARRAY, "The lower bound of the range (included)."),
        "maxval": (_ARRAY, "The upper bound of the range (excluded)."),
        "mean": (_ARRAY, "The mean of the distribution."),
        "cov": (_ARRAY, "The covariance matrix (symmetric positive semi-definite), "
                        "batched over leading axes."),
        "a": _NOT_HERE, "p": _NOT_HERE,
    },
    "functrans.scipy.special": {
        "a": _NOT_HERE, "b": _NOT_HERE, "x": (_ARRAY, "The argument (evaluated elementwise)."),
        "n": _NOT_HERE, "m": _NOT_HERE, "v": _NOT_HERE, "p": _NOT_HERE, "q": _NOT_HERE,
        "y": (_ARRAY, "The second argument, broadcast against ``x``."),
        "z": (_ARRAY, "The (complex) argument, evaluated elementwise."),
    },
    "functrans.scipy.linalg": {
        "a": (_ARRAY, "The matrix (or a stack of matrices on the last two axes)."),
        "b": (_ARRAY, "The right-hand side (a vector or a matrix of columns)."),
        "lower": ("bool, optional", "Whether the lower triangle of ``a`` is used (True) or "
                                    "the upper (False)."),
    },
    "functrans.numpy.linalg": {
        "a": (_ARRAY, "The matrix, or a stack of matrices on the last two axes."),
        "x": (_ARRAY, "The matrix, or a stack of matrices on the last two axes."),
    },
    "functrans.nn": {
        "x": (_ARRAY, "The input (pre-activations), evaluated elementwise unless stated."),
        "axis": ("int or tuple of int, optional",
                 "The axis (or axes) the function normalizes (``softmax``, "
                 "``standardize``) or reduces (``logsumexp``) over."),
        "where": (_ARRAY + ", optional",
                  "A boolean mask, broadcast against the input: only elements where it is "
                  "True take part in the reduction."),
    },
    "functrans.scipy.signal": {
        "in1": (_ARRAY, "The first input."),
        "in2": (_ARRAY, "The second input (the kernel), of the same number of dimensions."),
        "mode": ("str, optional", "The size of the output: ``'full'`` (default: every "
                                  "overlap), ``'same'`` (the size of ``in1``, centred) or "
                                  "``'valid'`` (only complete overlaps)."),
        "method": ("str, optional", "``'auto'``, ``'direct'`` or ``'fft'``: how the "
                                    "convolution is computed; the values agree."),
        "fs": ("float, optional", "The sampling frequency (default 1.0)."),
        "window": ("str or array_like, optional", "The window: a name (``'hann'``) or its "
                                                  "values, of length ``nperseg``."),
        "nperseg": ("int, optional", "The length of each segment."),
        "noverlap": ("int, optional", "The number of points two segments share (default: "
                                      "half a segment)."),
        "nfft": ("int, optional", "The FFT length (at least ``nperseg``; default "
                                  "``nperseg``)."),
        "detrend": ("str or False, optional", "What to remove from each segment: "
                                              "``'constant'`` (its mean), ``'linear'`` or "
                                              "False (nothing)."),
        "return_onesided": ("bool, optional", "For real data, return only the non-negative "
                                              "frequencies."),
        "scaling": ("str, optional", "``'density'`` (power per Hz) or ``'spectrum'`` "
                                     "(power)."),
        "average": ("str, optional", "How segments are combined: ``'mean'`` or "
                                     "``'median'``."),
        "boundary": ("str or None, optional", "How the signal is extended at both ends "
                                              "before segmenting."),
        "padded": ("bool, optional", "Whether the signal is zero-padded to a whole number of "
                                     "segments."),
        "axis": ("int, optional", "The axis along which the signal runs (default: the "
                                  "last)."),
    },
    "functrans.ops": {
        "data": (_ARRAY, "The values to combine; the leading axis runs over the elements."),
        "segment_ids": (_ARRAY, "An integer array with one segment number per element of "
                                "``data``'s leading axis; out-of-range ids are dropped."),
        "num_segments": ("int, optional", "The number of segments, static (needed under "
                                          "``jit``/``vmap``; default: ``max(segment_ids) + "
                                          "1`` of concrete ids)."),
        "bucket_size": ("int, optional", "JAX's hint for splitting the work; accepted and "
                                         "ignored."),
        "mode": ("GatherScatterMode, optional", "How out-of-range segment ids are handled "
                                                "(dropped by default)."),
    },
}

SPECIFIC: dict[str, dict[str, Entry]] = {}


def _specific(functions: str, /, **params: Entry) -> None:
    """The same parameter texts for several functions (space-separated public names)."""
    for name in functions.split():
        SPECIFIC.setdefault(name, {}).update(params)


# --- the transforms -----------------------------------------------------------------------
_FUN = ("callable", "The function to transform. Its arguments and results are pytrees of "
                    "arrays (and Python scalars); it is traced, so it must use "
                    "``functrans.numpy`` / ``functrans.lax`` rather than NumPy on its "
                    "arguments.")
_ARGNUMS = ("int or sequence of int, optional",
            "Which positional argument(s) to differentiate with respect to (default 0). "
            "With a sequence the result is a tuple with one entry per argument. The others "
            "(and keyword arguments) are held fixed.")
_HAS_AUX = ("bool, optional",
            "If True, ``fun`` returns a pair ``(output, aux)``: only ``output`` is "
            "differentiated, and ``aux`` (any pytree) is returned alongside the result, "
            "undifferentiated.")
_HOLOMORPHIC = ("bool, optional",
                "If True, ``fun`` is promised to be holomorphic (complex differentiable) in "
                "complex inputs, and the complex derivative is returned; the inputs must "
                "be complex. If False (default), complex inputs are treated as pairs of "
                "reals (the gradient is the conjugate Wirtinger convention JAX uses).")
_ALLOW_INT = ("bool, optional",
              "If True, integer and boolean inputs are allowed; their gradients are zero "
              "arrays of dtype ``float0``. If False (default) they raise a TypeError.")
_PRIMALS = ("array_like or pytree", "The point: the arguments ``fun`` is evaluated at.")
_specific("functrans.grad functrans.value_and_grad functrans.jacrev functrans.jacobian",
          fun=_FUN, argnums=_ARGNUMS, has_aux=_HAS_AUX, holomorphic=_HOLOMORPHIC,
          allow_int=_ALLOW_INT)
_specific("functrans.jacfwd functrans.hessian",
          fun=_FUN, argnums=_ARGNUMS, has_aux=_HAS_AUX, holomorphic=_HOLOMORPHIC)
_specific("functrans.grad functrans.value_and_grad",
          fun=("callable", "The function to differentiate; it must return a real scalar "
                           "(a 0-d array or Python float), or a complex one with "
                           "``holomorphic=True``."))
_specific("functrans.jvp",
          fun=_FUN,
          primals=("tuple or list", "The arguments ``fun`` is evaluated at, one entry per "
                                    "positional argument."),
          tangents=("tuple or list", "The direction: one tangent per primal, with the "
                                     "primal's structure, shapes and dtypes."),
          has_aux=_HAS_AUX)
_specific("functrans.vjp functrans.linearize",
          fun=_FUN,
          primals=("array_like or pytree", "The arguments ``fun`` is evaluated at (passed "
                                           "positionally)."),
          has_aux=_HAS_AUX)
_specific("functrans.linear_transpose",
          fun=("callable", "A function linear in its arguments (its jaxpr may use only "
                           "linear primitives in them)."),
          primals=("array_like or pytree", "Example arguments: only their shapes and "
                                           "dtypes are used."))
_specific("functrans.vmap",
          fun=_FUN,
          in_axes=("int, None or sequence, optional",
                   "Which axis of each argument is mapped: an int for all positional "
                   "arguments, None for none, or a tuple with one entry per positional "
                   "argument (a pytree prefix of it, so a dict argument can map each leaf "
                   "differently); None entries are not mapped. Keyword arguments are always "
                   "mapped over their leading axis."),
          out_axes=("int, None or pytree, optional",
                    "Where the batch axis goes in each output (a pytree prefix of the "
                    "output); None means the output is the same for every batch member "
                    "and is returned once."),
          axis_name=("hashable, optional",
                     "A name for the batch axis, used by the collectives of "
                     "``functrans.lax`` (``psum``, ``pmean``, ``all_gather``, "
                     "``axis_index``, ...) inside ``fun``."),
          axis_size=("int, optional",
                     "The batch size, needed only when no argument is mapped "
                     "(``in_axes=None``)."))
_specific("functrans.make_jaxpr",
          fun=_FUN,
          static_argnums=("int or sequence of int, optional",
                          "Positional arguments that are not traced: their Python values "
                          "are used as constants of the jaxpr (and are left out of its "
                          "inputs)."),
          return_shape=("bool, optional",
                        "If True, also return the output's structure of "
                        "``ShapeDtypeStruct`` leaves: ``(jaxpr, shapes)``."))
_specific("functrans.eval_shape",
          fun=_FUN,
          **{"*args": ("pytree", "The arguments: arrays or ``ShapeDtypeStruct`` leaves (only "
                                 "shapes and dtypes are used; nothing is computed)."),
             "**kwargs": ("pytree", "Keyword arguments, treated like ``args``.")})
_specific("functrans.eval_jaxpr",
          jaxpr=("Jaxpr", "The jaxpr to evaluate (a ``ClosedJaxpr``'s ``.jaxpr``)."),
          consts=("sequence", "Values for the jaxpr's ``constvars`` (a ``ClosedJaxpr``'s "
                              "``.consts``)."),
          **{"*args": (_ARRAY, "One value per input variable of the jaxpr.")})
_specific("functrans.check_jaxpr",
          jaxpr=("Jaxpr", "The jaxpr to type-check: every variable defined once before use, "
                          "and every equation's output types what its primitive's abstract "
                          "evaluation gives."))
_specific("functrans.jit",
          fun=("callable, optional", "The function to compile. Omitted (``jit(static_argnums"
                                     "=...)``), ``jit`` returns a decorator."),
          static_argnums=("int or sequence of int, optional",
                          "Positional arguments whose Python values are baked into the "
                          "compiled code: each new value (which must be hashable) compiles "
                          "again."),
          static_argnames=("str or sequence of str, optional",
                           "Keyword arguments treated like ``static_argnums``."),
          donate_argnums=("int or sequence of int, optional",
                          "JAX's permission to reuse the arguments' buffers; accepted and "
                          "ignored (functrans never writes into its inputs)."),
          inline=("bool, optional",
                  "If True, a call inside another traced function is inlined into the "
                  "outer jaxpr instead of staying one ``jit`` equation."),
          keep_unused=("bool, optional",
                       "JAX's option to keep unused arguments as inputs of the compiled "
                       "code; accepted (functrans's code takes every argument anyway)."))
_specific("functrans.checkpoint functrans.remat",
          fun=("callable", "The function whose intermediate values are recomputed during "
                           "the backward pass instead of stored."),
          prevent_cse=("bool, optional",
                       "JAX's guard against the compiler merging the recomputation with the "
                       "forward computation; accepted (functrans does not merge them)."),
          policy=("callable, optional",
                  "Which intermediates may be saved after all: one of "
                  "``checkpoint_policies`` (say ``dots_saveable``, or "
                  "``save_only_these_names(...)`` with ``checkpoint_name``). None: save "
                  "nothing but the inputs."),
          static_argnums=("int or sequence of int, optional",
                          "Positional arguments that are Python values (flags, sizes), not "
                          "traced."))
_specific("functrans.checkpoint_name",
          x=("array_like or pytree", "The value to name; it is returned unchanged."),
          name=("str", "The name a policy such as ``save_only_these_names`` refers to."))
_specific("functrans.tag",
          value=("array_like or pytree", "The intermediate value to tag; it is returned "
                                         "unchanged."),
          name=("str", "The name under which ``intermediate_grads`` reports its gradient."))
_specific("functrans.intermediate_grads",
          fun=("callable", "A scalar function that tags intermediates with ``tag``."),
          argnums=_ARGNUMS, has_aux=_HAS_AUX)
_specific("functrans.custom_gradient",
          fun=("callable", "A function returning ``(value, vjp)``: its output and a function "
                           "mapping the output cotangent to the input cotangents."))
_specific("functrans.closure_convert",
          fun=("callable", "A function that may close over traced values."),
          **{"*example_args": ("pytree", "Example arguments (only shapes and dtypes are "
                                         "used) to trace ``fun`` at.")})
_specific("functrans.disable_jit",
          disable=("bool, optional", "True (default): ``jit`` functions run eagerly, "
                                     "operation by operation, inside the ``with`` block."))
_specific("functrans.device_put",
          x=("pytree", "Arrays (and scalars) to place."),
          device=("Device, optional", "The target: one of ``functrans.devices()`` (a CuPy "
                                      "device for the GPU). None: the default device."),
          src=("optional", "JAX's source device; accepted and ignored (an array knows its "
                           "device)."),
          donate=("bool, optional", "JAX's permission to reuse the input's buffer; accepted "
                                    "and ignored."),
          may_alias=("bool or None, optional", "Whether the result may share memory with the "
                                               "input when no move is needed (None: it "
                                               "may)."))
_specific("functrans.device_get",
          x=("pytree", "Arrays to bring to the host as NumPy arrays."))
_specific("functrans.devices",
          backend=("str, optional", "``'cpu'`` or ``'gpu'`` (CuPy); None: the default "
                                    "backend's devices."))
_BACKEND = ("str, optional", "``'cpu'`` or ``'gpu'`` (CuPy); None: the default backend.")
_specific("functrans.device_count functrans.local_device_count functrans.process_index "
          "functrans.process_count functrans.process_indices functrans.host_id "
          "functrans.host_count functrans.host_ids", backend=_BACKEND)
_specific("functrans.local_devices", backend=_BACKEND,
          process_index=("int, optional", "The process whose devices are listed: None or 0 "
                                          "(functrans runs in one process)."),
          host_id=("int, optional", "JAX's older name of ``process_index``."))
_specific("functrans.Device",
          platform=("str", "``'cpu'`` (the host) or ``'gpu'`` (a CuPy GPU)."),
          id=("int, optional", "The device's number on its platform (default 0)."))
_specific("functrans.default_device",
          new_val=("Device or str, optional", "The default device inside the block: the host "
                                              "device, ``'cpu'`` or None (no change)."))
_specific("functrans.print_environment_info",
          return_string=("bool, optional", "If True, return the report instead of "
                                            "printing it."))
_specific("functrans.pmap",
          fun=_FUN,
          axis_name=("hashable, optional", "The name of the mapped axis, for the collectives "
                                           "of ``functrans.lax`` inside ``fun``."),
          in_axes=("int, None or sequence, optional",
                   "As ``vmap``'s: which axis of each positional argument is mapped (a "
                   "tuple has an entry per positional argument, static ones included); None "
                   "entries are broadcast."),
          out_axes=("int, None or pytree, optional",
                    "As ``vmap``'s: where the mapped axis goes in each output."),
          static_broadcasted_argnums=("int or sequence of int, optional",
                                      "Positions of arguments that are Python values the "
                                      "trace depends on (hashable), passed to every member."),
          devices=("sequence of Device, optional", "Accepted if they are this machine's "
                                                   "devices (``functrans.devices()``); the "
                                                   "computation runs where its inputs are."),
          backend=("str, optional", "``'cpu'``, or ``'gpu'`` where CuPy sees a GPU; it "
                                    "chooses nothing (inputs decide)."),
          axis_size=("int, optional", "The number of members, needed only when no argument "
                                      "is mapped."),
          donate_argnums=("int or sequence of int, optional", "JAX's buffer donation; "
                                                              "accepted and ignored."))
_specific("functrans.block_until_ready",
          x=("pytree", "Arrays to wait for (GPU work is asynchronous); returned unchanged."))
_specific("functrans.default_matmul_precision",
          new_val=("str, optional", "JAX's precision name; accepted and ignored (functrans "
                                    "computes in the operands' dtype)."))
_specific("functrans.pure_callback",
          callback=("callable", "A Python function of concrete NumPy/CuPy arrays, called at "
                                "run time, even inside traced code."),
          result_shape_dtypes=("pytree", "The shapes and dtypes of its result "
                                         "(``ShapeDtypeStruct`` leaves or arrays)."),
          sharding=("optional", "JAX's sharding of the result; accepted and ignored."),
          vmap_method=("str, optional",
                       "How ``vmap`` calls it: ``'sequential'`` (one call per batch member), "
                       "``'expand_dims'`` / ``'broadcast_all'`` (one call on the batch, the "
                       "callback being vectorized)."),
          **{"*args": ("pytree", "The callback's positional arguments."),
             "**kwargs": ("pytree", "The callback's keyword arguments.")})
_specific("functrans.named_call",
          fun=("callable", "The function to name."),
          name=("str, optional", "The name shown in jaxprs (default: the function's)."))
_specific("functrans.named_scope",
          name=("str", "The name of the scope shown in jaxprs."))

# --- control flow -------------------------------------------------------------------------
_OPERANDS = ("pytree", "The arguments passed to the chosen function (each branch takes the "
                       "same ones).")
_specific("functrans.lax.cond",
          pred=("bool or scalar array", "Which branch runs: ``true_fun`` when true. A traced "
                                        "``pred`` stages both branches."),
          true_fun=("callable", "The branch for a true ``pred``."),
          false_fun=("callable", "The branch for a false ``pred``; it must return the same "
                                 "structure, shapes and dtypes as ``true_fun``."),
          **{"*operands": _OPERANDS})
_specific("functrans.lax.switch",
          index=("int or scalar int array", "Which branch runs; clamped to ``[0, "
                                            "len(branches) - 1]``."),
          branches=("sequence of callable", "The branches, all returning the same structure, "
                                            "shapes and dtypes."),
          **{"*operands": _OPERANDS})
_specific("functrans.lax.scan",
          f=("callable", "The step ``f(carry, x) -> (carry, y)``: the carry keeps its "
                         "structure, shapes and dtypes; the ``y``s are stacked."),
          init=("pytree", "The initial carry."),
          xs=("pytree, optional", "Values scanned over along their leading axis (None: no "
                                  "inputs, then ``length`` is needed)."),
          length=("int, optional", "The number of steps (when ``xs`` is None, or to check "
                                   "it)."),
          reverse=("bool, optional", "If True, scan from the last element to the first "
                                     "(the stacked ``ys`` keep ``xs``'s order)."),
          unroll=("int, optional", "How many steps a loop iteration runs (JAX's hint; the "
                                   "results do not depend on it)."))
_specific("functrans.lax.while_loop",
          cond_fun=("callable", "``cond_fun(val) -> bool``: whether to run another "
                                "iteration."),
          body_fun=("callable", "``body_fun(val) -> val``, keeping ``val``'s structure, "
                                "shapes and dtypes."),
          init_val=("pytree", "The initial loop value."))
_specific("functrans.lax.fori_loop",
          lower=("int", "The first index."),
          upper=("int", "The end index (excluded)."),
          body_fun=("callable", "``body_fun(i, val) -> val``."),
          init_val=("pytree", "The initial loop value."))
_specific("functrans.lax.map",
          f=("callable", "The function applied to each slice of ``xs`` along its leading "
                         "axis."),
          xs=("pytree", "The values to map over (leading axis)."),
          batch_size=("int, optional", "If given, ``f`` is applied with ``vmap`` to batches "
                                       "of this many slices at a time."))
_specific("functrans.lax.associative_scan",
          fn=("callable", "An associative binary function ``fn(a, b)`` of pytrees "
                          "(elementwise over the leading axis)."),
          elems=("pytree", "The values to scan over along ``axis``."),
          reverse=("bool, optional", "If True, scan from the end."),
          axis=("int, optional", "The axis scanned over (default 0)."))
_specific("functrans.lax.custom_linear_solve",
          matvec=("callable", "The linear map ``A`` as a function: ``matvec(x) -> A x``."),
          b=("pytree", "The right-hand side."),
          solve=("callable", "``solve(matvec, b) -> x`` with ``A x = b``; any algorithm "
                             "(it is not differentiated)."),
          transpose_solve=("callable, optional", "The same for the transpose of ``A`` (needed "
                                                 "for reverse mode unless ``symmetric``)."),
          symmetric=("bool, optional", "If True, ``A`` is symmetric and ``solve`` serves "
                                       "for its transpose too."),
          has_aux=("bool, optional", "If True, ``solve`` returns ``(x, aux)`` and the aux "
                                     "data is returned undifferentiated."))
_specific("functrans.lax.custom_root",
          f=("callable", "The function whose root is sought: ``f(x) = 0``."),
          initial_guess=("pytree", "The starting point of ``solve``."),
          solve=("callable", "``solve(f, initial_guess) -> root`` (not differentiated: the "
                             "derivative comes from the implicit function theorem)."),
          tangent_solve=("callable", "``tangent_solve(g, y) -> x`` solving the linear system "
                                     "``g(x) = y`` (``g`` is the linearized ``f``)."),
          has_aux=("bool, optional", "If True, ``solve`` returns ``(root, aux)``."))
_specific("functrans.lax.stop_gradient",
          x=("pytree", "The value; it is returned unchanged, but every transform treats it "
                       "as a constant (its derivative is zero)."))
_COLLECTIVE = dict(
    x=("pytree", "The value of this batch member."),
    axis_name=("hashable", "The name of a ``vmap`` axis (its ``axis_name``)."),
    axis_index_groups=("optional", "JAX's groups of devices; only None is supported."))
_specific("functrans.lax.psum functrans.lax.pmean functrans.lax.pmax functrans.lax.pmin",
          **_COLLECTIVE)
_specific("functrans.lax.all_gather", **_COLLECTIVE,
          axis=("int, optional", "Where the gathered axis goes in the result (default 0)."),
          tiled=("bool, optional", "If True, concatenate along ``axis`` instead of stacking "
                                   "a new axis."))
_specific("functrans.lax.axis_index",
          axis_name=("hashable or tuple", "The name of a ``vmap`` axis: the result is this "
                                          "batch member's position along it (a tuple of "
                                          "names: along their product, the first major)."))
_specific("functrans.lax.axis_size",
          axis_name=("hashable or tuple", "The name of a ``vmap`` axis (or a tuple of names: "
                                          "the product of their sizes)."))
_PERM_AXIS = dict(x=_COLLECTIVE["x"], axis_name=("hashable", "The name of one ``vmap`` axis."))
_specific("functrans.lax.ppermute", **_PERM_AXIS,
          perm=("sequence of (int, int)", "``(source, destination)`` member index pairs; "
                                          "each source and each destination at most once."))
_specific("functrans.lax.pshuffle", **_PERM_AXIS,
          perm=("sequence of int", "``perm[i]`` is the member whose value member ``i`` "
                                   "gets; every member index exactly once."))
_specific("functrans.lax.pbroadcast", **_PERM_AXIS,
          source=("int", "The member whose value every member gets."))
_specific("functrans.lax.all_to_all", x=_COLLECTIVE["x"],
          axis_name=("hashable or tuple", "The name of a ``vmap`` axis, or a tuple of names "
                                          "(their product, the first name major)."),
          axis_index_groups=_COLLECTIVE["axis_index_groups"],
          split_axis=("int", "The axis of ``x`` split among the members (of the axis size; "
                             "with ``tiled``, divisible by it)."),
          concat_axis=("int", "Where the received pieces are stacked in the result (with "
                              "``tiled``: the existing axis they are concatenated along)."),
          tiled=("bool, optional", "If True, split into chunks and concatenate instead of "
                                   "removing and adding an axis."))
_specific("functrans.lax.pswapaxes", **_PERM_AXIS,
          axis_index_groups=_COLLECTIVE["axis_index_groups"],
          axis=("int", "The axis of ``x`` (of the axis size) swapped with the batch axis."))
_specific("functrans.lax.psum_scatter", **_PERM_AXIS,
          axis_index_groups=_COLLECTIVE["axis_index_groups"],
          scatter_dimension=("int, optional", "The axis of the sum that is scattered over "
                                              "the members (default 0)."),
          tiled=("bool, optional", "If True, each member keeps a chunk and the axis stays; "
                                   "else it keeps one index and the axis goes."))

# --- gradient checking --------------------------------------------------------------------
_CHECK_F = ("callable", "The function to check: arrays (pytrees) in, arrays out.")
_SEED = ("int, optional", "The seed of the random directions and cotangents (default: the "
                          "``FUNCTRANS_TEST_SEED`` environment variable, else 0).")
_EPS = ("float, optional", "The finite-difference step.")
_DETECT = ("bool, optional", "If True, first look for kinks (points where the one-sided "
                             "derivatives differ) and raise ``NondifferentiableError`` "
                             "naming the element instead of reporting a false failure.")
_TEST_MODES = ("sequence of str, optional", "``'fwd'`` and/or ``'rev'``; default both, "
                                            "skipping (with a ``ForwardModeSkipped`` "
                                            "warning) forward mode where the function has "
                                            "no forward-mode rule.")
_specific("functrans.testing.check_grads",
          f=_CHECK_F,
          args=("sequence", "The point: the positional arguments of ``f``."),
          order=("int", "The highest derivative order checked (1 or 2)."),
          modes=_TEST_MODES, atol=("float, optional", "The absolute tolerance (default per "
                                                      "dtype)."),
          rtol=("float, optional", "The relative tolerance (default per dtype)."),
          eps=_EPS, detect_nondifferentiable=_DETECT)
_specific("functrans.testing.check_jvp functrans.testing.check_vjp",
          f=_CHECK_F,
          args=("sequence", "The point: the positional arguments of ``f``."),
          atol=("float, optional", "The absolute tolerance (default per dtype)."),
          rtol=("float, optional", "The relative tolerance (default per dtype)."),
          eps=_EPS,
          err_msg=("str, optional", "Text added to the error message."),
          seed=_SEED)
_specific("functrans.testing.check_jvp",
          f_jvp=("callable", "``f_jvp(primals, tangents) -> (out, tangent_out)``, such as "
                             "``functools.partial(functrans.jvp, f)``."))
_specific("functrans.testing.check_vjp",
          f_vjp=("callable", "``f_vjp(*primals) -> (out, pullback)``, such as "
                             "``functools.partial(functrans.vjp, f)``."))
_specific("functrans.testing.numerical_jvp",
          f=_CHECK_F,
          primals=("sequence", "The point."),
          tangents=("sequence", "The direction, one tangent per primal."),
          eps=_EPS)
_CHAINER = dict(
    func=("callable", "The function (Chainer's convention: arrays in, an array or a tuple "
                      "of arrays out)."),
    x_data=("array_like or tuple", "The inputs."),
    y_grad=("array_like or tuple or None", "The output gradients (cotangents); None for a "
                                           "scalar output (a gradient of 1)."),
    params=("tuple, optional", "Further inputs that are differentiated but not passed as "
                               "``x_data`` (Chainer's parameters)."),
    eps=_EPS,
    atol=("float, optional", "The absolute tolerance."),
    rtol=("float, optional", "The relative tolerance."),
    no_grads=("sequence of bool, optional", "Per input, True where it is not "
                                            "differentiated."),
    dtype=("dtype, optional", "The dtype the inputs are cast to for the numerical side."),
    detect_nondifferentiable=_DETECT,
    seed=_SEED)
_specific("functrans.testing.check_backward", **_CHAINER)
_specific("functrans.testing.check_double_backward", **_CHAINER,
          x_grad_grad=("array_like or tuple", "The cotangents of the input gradients (the "
                                              "direction of the second derivative)."),
          params_grad_grad=("tuple, optional", "The same for ``params``."))
_specific("functrans.testing.numerical_grad",
          f=("callable", "A function of no arguments that reads ``inputs`` (Chainer's "
                         "convention)."),
          inputs=("sequence of arrays", "The arrays perturbed in place."),
          grad_outputs=("sequence", "The output gradients (cotangents)."),
          eps=_EPS, detect_nondifferentiable=_DETECT,
          diff_atol=("float, optional", "Absolute tolerance of the kink detection."),
          diff_rtol=("float, optional", "Relative tolerance of the kink detection."))
_MXNET = dict(
    fun=("callable", "The function (MXNet's convention: arrays in, an array or a tuple out)."),
    location=("sequence or dict", "The inputs, positional or by name."),
    rtol=("float, optional", "The relative tolerance."),
    atol=("float, optional", "The absolute tolerance."),
    equal_nan=("bool, optional", "Whether NaNs in the same places compare equal."),
    dtype=("dtype, optional", "The dtype the computation runs in (MXNet's default "
                              "float32)."),
    seed=_SEED)
_specific("functrans.testing.check_symbolic_backward", **_MXNET,
          out_grads=("sequence", "The head gradients (output cotangents)."),
          expected=("sequence or dict", "The expected input gradients."),
          grad_req=("str or dict, optional", "``'write'``, ``'add'`` or ``'null'`` (per "
                                             "input with a dict): MXNet's gradient requests."),
          grad_buffers=("sequence or dict, optional", "Existing gradients ``'add'`` adds to."))
_specific("functrans.testing.check_numeric_gradient", **_MXNET,
          numeric_eps=("float, optional", "The finite-difference step."),
          grad_nodes=("sequence, optional", "The inputs to check (default: all)."))
_specific("functrans.testing.assert_allclose",
          actual=(_ARRAY, "The computed values."),
          desired=(_ARRAY, "The expected values."),
          rtol=("float, optional", "The relative tolerance."),
          atol=("float, optional", "The absolute tolerance."),
          equal_nan=("bool, optional", "Whether NaNs in the same places compare equal."),
          err_msg=("str, optional", "Text added to the error message."),
          names=("tuple of str, optional", "What the two arrays are called in the message."))
_specific("functrans.testing.seed_for functrans.testing.make_rng",
          key=("str, optional", "What the seed is for (a test's node id): different keys "
                                "give unrelated seeds."),
          session_seed=("int, optional", "The session's seed (default: the "
                                         "``FUNCTRANS_TEST_SEED`` environment variable, else "
                                         "0)."))
_specific("functrans.testing.random_array",
          rng=("numpy.random.Generator", "The generator to draw from."),
          shape=("tuple of int", "The shape."),
          dtype=("dtype, optional", "A float or complex dtype (complex arrays draw both "
                                    "parts)."))
_specific("functrans.testing.parametrize_dtypes_shapes",
          dtypes=("sequence of dtype, optional", "The dtypes to run with."),
          shapes=("sequence of tuple, optional", "The shapes to run with."),
          argnames=("str, optional", "The test's parameter names, comma-separated."))
_specific("functrans.testing.arrays",
          shape=("tuple or strategy, optional", "The shape (default ``array_shapes()``)."),
          dtype=("dtype or strategy, optional", "A float or complex dtype."),
          elements=("str, tuple or strategy, optional",
                    "A domain name of ``DOMAINS`` (``'real'``, ``'positive'``, ``'unit'``, "
                    "``'away_from_zero'``), a ``(low, high)`` pair or a strategy of "
                    "floats."))
_specific("functrans.testing.array_shapes",
          min_dims=("int, optional", "The fewest axes."),
          max_dims=("int, optional", "The most axes."),
          min_side=("int, optional", "The shortest axis length."),
          max_side=("int, optional", "The longest axis length."))

# --- pytrees ------------------------------------------------------------------------------
_MAP_F = ("callable", "Called with the leaves at the same position of ``tree`` and of each "
                      "of ``rest``; its results form the output tree.")
for _name in ("functrans.tree_util.tree_map", "functrans.tree.map"):
    _specific(_name, f=_MAP_F)
for _name in ("functrans.tree_util.tree_map_with_path", "functrans.tree.map_with_path"):
    _specific(_name, f=("callable", "Called as ``f(path, leaf, *rest_leaves)`` with each "
                                    "leaf's key path; its results form the output tree."))

# --- functrans.numpy ----------------------------------------------------------------------
_K_DIAG = ("int, optional", "The diagonal: 0 the main one, positive above it, negative "
                            "below.")
_INDEX_MODE = ("str, optional",
               "What out-of-bounds indices do: ``'fill'`` (gathers return ``fill_value``, "
               "scatters drop the update), ``'clip'`` (clamped to the valid range) or "
               "``'wrap'`` (taken modulo the length, where NumPy's function allows it). By "
               "default (None, or ``'raise'``) concrete out-of-bounds indices raise an "
               "IndexError, and traced ones fill, as in JAX.")
_INPLACE = ("bool", "NumPy's in-place update; functrans arrays are immutable, so it must be "
                    "False (True raises): the updated array is returned.")
_MATMUL_B = (_ARRAY, "The second operand.")
_FAMILY_NUMPY: dict[str, Entry | None] = {
    "b": _MATMUL_B,
    "k": _K_DIAG,
    "indices": (_ARRAY + " of int", "The indices (may be traced); negative ones count from "
                                    "the end."),
    "mode": _NOT_HERE,
    "inplace": _INPLACE,
    "values": (_ARRAY, "The values to insert or write, broadcast to the places they go."),
    "weights": (_ARRAY + ", optional", "One weight per element of the input (default: all "
                                       "equal); differentiable."),
    "bins": ("int or array_like, optional", "The number of equal-width bins, or the "
                                            "increasing bin edges."),
    "range": ("(float, float), optional", "The lower and upper edge of the bins (default: "
                                          "the data's minimum and maximum)."),
    "density": ("bool, optional", "If True, normalize so that the histogram integrates to "
                                  "1 over the range."),
    "offset": ("int, optional", "The diagonal: 0 the main one, positive above it, negative "
                                "below."),
    "decimals": ("int, optional", "The number of decimals to round to (negative: to tens, "
                                  "hundreds, ...)."),
    "kind": ("str, optional", "NumPy's sorting algorithm; accepted (the result is the same "
                              "for any stable sort)."),
    "stable": ("bool, optional", "Whether equal elements keep their order (functrans always "
                                 "sorts stably)."),
    "descending": ("bool, optional", "If True, sort from largest to smallest (equal "
                                     "elements still in their original order)."),
    "kth": ("int or sequence of int", "The position(s) whose element is put in its sorted "
                                      "place, smaller elements before it and larger ones "
                                      "after."),
    "q": (_ARRAY, "The quantile(s) to compute, in [0, 1] (in [0, 100] for percentiles)."),
    "method": _NOT_HERE,
    "v": _NOT_HERE, "p": _NOT_HERE, "n": _NOT_HERE, "M": _NOT_HERE, "N": _NOT_HERE,
    "A": _NOT_HERE,
    "subscripts": ("str", "The Einstein summation string, such as ``'ij,jk->ik'``."),
    "*operands": (_ARRAY, "The arrays the subscripts describe, in order."),
    "optimize": ("bool or str, optional", "Whether (and how) to choose a contraction order "
                                          "for several operands: ``'greedy'``, "
                                          "``'optimal'``, True or False (in the given "
                                          "order)."),
    "condlist": ("sequence of array_like", "Boolean arrays: where the i-th is True, the i-th "
                                           "choice (or function) gives the result."),
    "sparse": ("bool, optional", "If True, return arrays with length-one axes that "
                                 "broadcast against each other, instead of full grids."),
    "rowvar": ("bool, optional", "If True (default), each row is a variable and each column "
                                 "an observation; False swaps them."),
    "bias": ("bool, optional", "If True, normalize by N instead of N - 1 (overridden by "
                               "``ddof``)."),
    "obj": ("int, slice or array_like of int", "Where to insert or which to delete: indices "
                                               "along ``axis``."),
    "bitorder": ("str, optional", "``'big'`` (default: the first bit is the most "
                                  "significant) or ``'little'``."),
    "count": ("int, optional", "How many items to read (-1: all)."),
    "include_initial": ("bool, optional", "If True, the result starts with the identity (0 "
                                          "for sums, 1 for products) and is one longer."),
    "right": ("bool, optional", "Which side of a bin an edge belongs to: False (default) "
                                "``bins[i-1] <= x < bins[i]``, True ``bins[i-1] < x <= "
                                "bins[i]``."),
    "trim_leading_zeros": ("bool, optional", "If True, leading zero coefficients are removed "
                                             "from the result (needs concrete values)."),
    "period": ("float, optional", "The period of periodic data."),
    "dx": ("float, optional", "The spacing of the samples when ``x`` is None."),
    "array": (_ARRAY, "The array to pad."),
    "pad_width": ("int or sequence", "How many values to add before and after each axis: "
                                     "an int for all, ``(before, after)`` for all axes, or "
                                     "one pair per axis."),
    "constant_values": ("scalar or sequence, optional", "The padding value(s) of "
                                                        "``mode='constant'``, per axis and "
                                                        "side like ``pad_width``."),
    "shift": ("int or tuple of int", "By how many places to roll (negative: backwards), per "
                                     "axis of ``axis``."),
    "source": ("int or sequence of int", "The axes to move."),
    "destination": ("int or sequence of int", "Where they go."),
    "reps": ("int or tuple of int", "How many times to repeat along each axis."),
    "repeats": ("int or array_like of int", "How many times each element is repeated: one "
                                            "count, or one per element along the axis (may "
                                            "be traced, then ``total_repeat_length`` is "
                                            "needed)."),
    "total_repeat_length": ("int, optional", "The static length of the result, needed for "
                                             "traced ``repeats``: the output is cut to it, "
                                             "or filled with the last element."),
    "new_shape": ("int or tuple of int", "The shape of the result; the input is repeated "
                                         "(or cut) to fill it."),
    "filt": (_ARRAY, "A 1-D array."),
    "trim": ("str, optional", "Which ends to trim: ``'fb'`` (both, default), ``'f'`` "
                              "(front) or ``'b'`` (back)."),
    "min": (_ARRAY + ", optional", "The lower bound (None: no lower bound)."),
    "max": (_ARRAY + ", optional", "The upper bound (None: no upper bound)."),
    "a_min": (_ARRAY + ", optional", "NumPy's name for ``min``."),
    "a_max": (_ARRAY + ", optional", "NumPy's name for ``max``."),
    "element": (_ARRAY, "The values to look up."),
    "test_elements": (_ARRAY, "The values to look for."),
    "invert": ("bool, optional", "If True, the result is negated (True where *not* "
                                 "found)."),
    "return_indices": ("bool, optional", "If True, also return the indices of the common "
                                         "values in each input."),
    "ar": (_ARRAY, "The input array (flattened unless ``axis`` is given)."),
    "return_index": ("bool, optional", "Also return the index of each unique value's first "
                                       "occurrence."),
    "return_inverse": ("bool, optional", "Also return, for each input element, the index of "
                                         "its unique value (the input is "
                                         "``unique[inverse]``)."),
    "return_counts": ("bool, optional", "Also return how often each unique value occurs."),
    "sorted": ("bool, optional", "Whether the unique values are sorted (functrans always "
                                 "sorts them)."),
    "side": ("str, optional", "For values equal to an element: ``'left'`` (default) gives "
                              "the first suitable index, ``'right'`` the last."),
    "sorter": (_ARRAY + " of int, optional", "Indices that sort ``a`` (when ``a`` is not "
                                             "sorted itself)."),
    "xp": (_ARRAY, "The x-coordinates of the data points, increasing."),
    "fp": (_ARRAY, "The y-coordinates of the data points."),
    "left": ("float, optional", "The value for ``x < xp[0]`` (default ``fp[0]``)."),
    "choices": ("sequence of array_like", "The arrays to choose from."),
    "choicelist": ("sequence of array_like", "The values, one per condition."),
    "default": ("scalar or array_like, optional", "The value where no condition holds."),
    "funclist": ("sequence", "Functions (or constants), one per condition, plus optionally "
                             "one more for where none holds."),
    "**kw": ("", "Keyword arguments passed to each function."),
    "minlength": ("int, optional", "The least length of the result."),
    "length": ("int, optional", "The static length of the result (JAX's; needed under "
                                "``jit`` and ``vmap``); larger values are dropped."),
    "full": ("bool, optional", "If True, also return the residuals, rank, singular values "
                               "and ``rcond``."),
    "w": (_ARRAY + ", optional", "Weights of the data points."),
    "cov": ("bool or str, optional", "If True, also return the covariance of the "
                                     "coefficients."),
    "increasing": ("bool, optional", "If True, the powers increase from left to right."),
    "unroll": ("int or bool, optional", "JAX's loop-unrolling hint; accepted (results do "
                                        "not depend on it)."),
    "rcond": ("float, optional", "Singular values below ``rcond`` times the largest are "
                                 "treated as zero."),
    "prototype": (_ARRAY, "The array whose shape (and dtype, unless given) the result "
                          "takes."),
    "step": ("array_like, optional", "The spacing between values (default 1)."),
    "retstep": ("bool, optional", "If True, also return the step."),
    "base": (_ARRAY + ", optional", "The base of the powers (default 10)."),
    "dims": ("tuple of int", "The shape the indices refer to."),
    "multi_index": ("tuple of array_like", "One integer array per axis."),
    "ndim": ("int, optional", "The number of dimensions."),
    "mask_func": ("callable", "``mask_func(a, k)`` returns a masked copy of an ``(n, n)`` "
                              "array, such as ``triu`` or ``tril``."),
    "*xi": (_ARRAY, "The 1-D coordinate arrays, one per axis of the grid."),
    "indexing": ("str, optional", "``'xy'`` (default: Cartesian, the first two axes "
                                  "swapped) or ``'ij'`` (matrix indexing)."),
    "function": ("callable", "Called once with one index array per axis (all of "
                             "``shape``)."),
    "*shapes": ("tuple of int", "The shapes to broadcast together."),
    "*arrays_and_dtypes": ("array_like or dtype", "Arrays, scalars and dtypes whose result "
                                                  "dtype is wanted."),
    "from_": ("dtype or array_like", "The dtype (or an array of it) cast from."),
    "to": ("dtype", "The dtype cast to."),
    "casting": ("str, optional", "NumPy's casting rule: ``'no'``, ``'equiv'``, ``'safe'`` "
                                 "(default), ``'same_kind'`` or ``'unsafe'``."),
    "equal_nan": ("bool, optional", "Whether NaNs in the same places compare equal."),
    "nan": ("float, optional", "The value that replaces NaN (default 0.0)."),
    "posinf": ("float, optional", "The value that replaces +inf (default: the largest finite "
                                  "value of the dtype)."),
    "neginf": ("float, optional", "The value that replaces -inf (default: the most negative "
                                  "finite value)."),
    "prepend": (_ARRAY + ", optional", "Values put before ``a`` along ``axis`` before "
                                       "differencing (a scalar, or the shape of ``a`` with "
                                       "any length along the axis)."),
    "append": (_ARRAY + ", optional", "Values put after ``a`` along ``axis`` before "
                                      "differencing."),
    "returned": ("bool, optional", "If True, also return the sum of the weights."),
    "fweights": (_ARRAY + " of int, optional", "Frequency weights: how often each "
                                               "observation occurs."),
    "aweights": (_ARRAY + ", optional", "Observation weights (relative importance)."),
    "axisa": ("int, optional", "The axis of ``a`` holding the vectors (default last)."),
    "axisb": ("int, optional", "The axis of ``b`` holding the vectors (default last)."),
    "axisc": ("int, optional", "The axis of the result holding the vectors (default "
                               "last)."),
    "ind": (_ARRAY + " of int", "Indices into the flattened array."),
    "mask": (_ARRAY + " of bool", "Where to write."),
    "vals": (_ARRAY, "The values written, in order, where ``mask`` is True."),
    "val": ("scalar or array_like", "The value(s) written on the diagonal."),
    "wrap": ("bool, optional", "For tall matrices, whether the diagonal wraps after N "
                               "columns."),
    "to_end": (_ARRAY + ", optional", "Values appended to the differences."),
    "to_begin": (_ARRAY + ", optional", "Values put before the differences."),
    "discont": ("float, optional", "The largest jump left alone (default ``period / 2``)."),
    "edge_order": ("int, optional", "The accuracy order (1 or 2) of the one-sided "
                                    "differences at the edges."),
    "*varargs": ("scalar or array_like", "The sample spacing: one scalar for all axes, one "
                                         "per axis, or coordinate arrays."),
    "pyfunc": ("callable", "The function of scalars (or of core arrays with ``signature``) "
                           "to vectorize."),
    "excluded": ("set of int or str, optional", "Positional indices or keyword names of "
                                                "arguments passed through unvectorized."),
    "signature": ("str, optional", "A generalized-ufunc signature such as "
                                   "``'(n),(n)->()'``: the core dimensions of each argument "
                                   "and output."),
    "func1d": ("callable", "A function of 1-D arrays, applied to each 1-D slice along "
                           "``axis``."),
    "func": ("callable", "A function ``func(a, axis)`` applied repeatedly, one axis at a "
                         "time."),
    "buffer": ("bytes-like", "The bytes to read."),
    "iterable": ("iterable", "The values to read."),
    "string": ("str", "The text to read."),
    "sep": ("str", "The separator between numbers in the text."),
    "independent": ("bool, optional", "If True, each slice along the axis is permuted "
                                      "independently."),
    "assume_unique_indices": ("bool, optional", "A promise that ``obj`` holds no duplicate "
                                                "indices (JAX's hint)."),
    "z": (_ARRAY, "The (complex) input."),
    "sample": (_ARRAY, "The data: N points of D coordinates, shape (N, D)."),
    "seq_of_zeros": (_ARRAY, "The roots (or a square matrix, whose eigenvalues are used)."),
    "strip_zeros": ("bool, optional", "If True, leading zero coefficients are removed first "
                                      "(needs concrete values)."),
    "u": (_ARRAY, "The dividend's coefficients, highest power first."),
}
FAMILY["functrans.numpy"] = _FAMILY_NUMPY
_specific("functrans.numpy.eye functrans.numpy.tri",
          N=("int", "The number of rows."),
          M=("int, optional", "The number of columns (default ``N``)."))
_specific("functrans.numpy.identity", n=("int", "The number of rows and columns."))
_specific("functrans.numpy.bartlett functrans.numpy.blackman functrans.numpy.hamming "
          "functrans.numpy.hanning functrans.numpy.kaiser",
          M=("int", "The number of points of the window."))
_specific("functrans.numpy.kaiser", beta=("float", "The shape parameter of the window "
                                                  "(larger: narrower main lobe)."))
_specific("functrans.numpy.diff", n=("int, optional", "How many times to difference (default "
                                                      "1)."))
_specific("functrans.numpy.diag functrans.numpy.diagflat",
          v=(_ARRAY, "A 1-D array (placed on the diagonal) or a 2-D one (whose diagonal is "
                     "taken)."))
_specific("functrans.numpy.take functrans.numpy.take_along_axis functrans.numpy.put_along_axis "
          "functrans.numpy.choose functrans.numpy.ravel_multi_index", mode=_INDEX_MODE)
_specific("functrans.numpy.put",
          mode=_INDEX_MODE,
          v=(_ARRAY, "The values, written in order to the places of ``ind``."))
_specific("functrans.numpy.unravel_index",
          indices=(_ARRAY + " of int", "Flat indices into an array of ``shape``."))
_specific("functrans.numpy.diag_indices functrans.numpy.tril_indices "
          "functrans.numpy.triu_indices functrans.numpy.mask_indices",
          n=("int", "The number of rows (and columns) of the matrix."))
_specific("functrans.numpy.tril_indices functrans.numpy.triu_indices",
          m=("int, optional", "The number of columns (default ``n``)."))
_specific("functrans.numpy.pad",
          mode=("str or callable, optional",
                "How to fill the padding: ``'constant'`` (default, ``constant_values``), "
                "``'edge'`` (the edge value), ``'reflect'`` / ``'symmetric'`` (mirror "
                "without / with the edge), ``'wrap'`` (periodic), ``'linear_ramp'`` (to "
                "``end_values``), ``'maximum'``, ``'mean'``, ``'median'``, ``'minimum'`` "
                "(of ``stat_length`` edge values), ``'empty'``, or a function of each 1-D "
                "slice that returns the padded slice (see above)."))
_specific("functrans.numpy.convolve functrans.numpy.correlate",
          v=(_ARRAY, "The second 1-D input."),
          mode=("str, optional", "``'full'`` (every overlap), ``'same'`` (the length of the "
                                 "longer input) or ``'valid'`` (complete overlaps only)."))
_specific("functrans.numpy.searchsorted",
          v=(_ARRAY, "The values to insert."),
          method=("str, optional", "JAX's choice of algorithm (``'scan'``, "
                                   "``'scan_unrolled'``, ``'sort'``, "
                                   "``'compare_all'``); the results agree."))
_specific("functrans.numpy.digitize",
          method=("str, optional", "JAX's choice of search algorithm; the results agree."))
_specific("functrans.numpy.isin",
          method=("str, optional", "JAX's choice of algorithm (``'auto'``, "
                                   "``'compare_all'``, ``'binary_search'``, ``'sort'``); "
                                   "the results agree."))
_QUANTILE_METHOD = ("str, optional",
                    "How a quantile between two data points is taken: ``'linear'`` "
                    "(default), ``'lower'``, ``'higher'``, ``'midpoint'``, ``'nearest'`` "
                    "(and NumPy's other estimators where supported).")
_specific("functrans.numpy.quantile functrans.numpy.percentile functrans.numpy.nanquantile "
          "functrans.numpy.nanpercentile", method=_QUANTILE_METHOD,
          weights=(_ARRAY + ", optional", "One weight per element (NumPy's weighted "
                                          "quantiles, ``method='inverted_cdf'`` only)."))
_POLY = (_ARRAY, "The polynomial's coefficients, highest power first.")
_specific("functrans.numpy.polyval functrans.numpy.polyder functrans.numpy.polyint "
          "functrans.numpy.roots", p=_POLY)
_specific("functrans.numpy.polydiv", v=(_ARRAY, "The divisor's coefficients, highest power "
                                                "first."))
_specific("functrans.numpy.polyder functrans.numpy.polyint",
          m=("int, optional", "How many times to differentiate (integrate)."))
_specific("functrans.numpy.polyint",
          k=("scalar or array_like, optional", "The integration constants, one per "
                                               "integration (default 0)."))
_specific("functrans.numpy.vander", N=("int, optional", "The number of columns (default "
                                                         "``len(x)``)."))
_specific("functrans.numpy.unwrap", p=(_ARRAY, "The phase angles."))
_specific("functrans.numpy.interp",
          right=("float, optional", "The value for ``x > xp[-1]`` (default ``fp[-1]``)."))
_specific("functrans.numpy.gradient", f=(_ARRAY, "The sampled values."))
_specific("functrans.numpy.tile", A=(_ARRAY, "The array to repeat."))
_specific("functrans.numpy.rot90", k=("int, optional", "The number of quarter turns "
                                                      "(counter-clockwise)."))
_specific("functrans.numpy.fromfunction",
          function=("callable", "Called once with one index array per axis of ``shape``."))
_specific("functrans.numpy.isscalar", element=("object", "The object to test."))
_specific("functrans.numpy.isdtype",
          kind=("str, dtype or tuple", "A dtype, or a kind name of the array API "
                                       "(``'bool'``, ``'signed integer'``, ``'unsigned "
                                       "integer'``, ``'integral'``, ``'real floating'``, "
                                       "``'complex floating'``, ``'numeric'``), or a tuple "
                                       "of them."))
_specific("functrans.numpy.promote_types",
          a=("dtype", "The first dtype."), b=("dtype", "The second dtype."))
_specific("functrans.numpy.lexsort",
          keys=("sequence of array_like", "The sort keys; the last is the primary one."))
_specific("functrans.numpy.indices",
          dimensions=("tuple of int", "The shape of the grid."))

# --- functrans.numpy.linalg ---------------------------------------------------------------
_HERMITIAN = ("bool, optional", "If True, ``a`` is promised to be Hermitian (real "
                                "symmetric), which allows a faster, eigenvalue-based "
                                "computation.")
_UPLO = ("str, optional", "Which triangle of the matrix is read: ``'L'`` (default) or "
                          "``'U'``.")
_ORD = ("int, float, str or None, optional",
        "The kind of norm: None (2-norm for vectors, Frobenius for matrices), ``'fro'``, "
        "``'nuc'``, ``inf``, ``-inf``, or a number p (the p-norm of vectors; 1, 2, -1, -2 "
        "for matrices).")
FAMILY["functrans.numpy.linalg"].update({
    "b": (_ARRAY, "The right-hand side (a vector or matrix, batched like ``a``)."),
    "rcond": ("float, optional", "Singular values at most ``rcond`` times the largest are "
                                 "treated as zero (default: a multiple of the dtype's "
                                 "epsilon)."),
    "hermitian": _HERMITIAN,
    "UPLO": _UPLO,
    "ord": _ORD,
    "offset": ("int, optional", "The diagonal: 0 the main one, positive above it, negative "
                                "below."),
    "full_matrices": ("bool, optional", "If True, ``u`` and ``vh`` are square; if False "
                                        "(reduced), only the first ``min(M, N)`` columns / "
                                        "rows."),
    "compute_uv": ("bool, optional", "If False, only the singular values are returned."),
    "upper": ("bool, optional", "If True, return the upper factor ``U`` (``a = U^H U``) "
                                "instead of the lower one."),
    "tol": ("float, optional", "Singular values below this count as zero (default: from "
                               "the largest singular value and the dtype)."),
    "mode": ("str, optional", "``'reduced'`` (default), ``'complete'``, ``'r'`` (only R) or "
                              "``'raw'``."),
    "ind": ("int, optional", "How many of the leading axes form the 'rows' of the "
                             "tensor."),
})
_specific("functrans.numpy.linalg.matrix_power",
          n=("int", "The exponent (negative: a power of the inverse)."))
_specific("functrans.numpy.linalg.cond",
          p=("int, float, str or None, optional", "The norm used: None (2-norm, from the "
                                                  "singular values), ``'fro'``, ``'nuc'``, "
                                                  "``inf``, ``-inf``, 1, -1, 2, -2."))
_specific("functrans.numpy.linalg.matrix_rank",
          M=(_ARRAY, "The matrix, or a stack of them."))

# --- functrans.lax ------------------------------------------------------------------------
_PADDING = ("str or sequence of (int, int)",
            "``'SAME'`` (output size ``ceil(in / stride)``), ``'VALID'`` (no padding), or "
            "one ``(low, high)`` pair per spatial axis.")
_STRIDES = ("sequence of int", "The step between windows, one per spatial axis.")
_DILATION = ("sequence of int, optional", "Dilation factors, one per spatial axis (None: "
                                          "all 1).")
_DIMNUMS = ("ConvDimensionNumbers or tuple of str, optional",
            "The layouts of input, kernel and output, such as ``('NCHW', 'OIHW', "
            "'NCHW')`` (the default).")
FAMILY["functrans.lax"].update({
    "batch_dims": ("int, optional", "The number of leading axes that the operand and the "
                                    "indices (and a scatter's updates) share, of equal "
                                    "sizes: row ``a`` of them is indexed by row ``a`` of "
                                    "the indices alone (TensorFlow's name for JAX's "
                                    "``operand_batching_dims``; default 0)."),
    "lhs": (_ARRAY, "The left operand (for convolutions: the input, batch and feature "
                    "axes first by default)."),
    "rhs": (_ARRAY, "The right operand (for convolutions: the kernel, ``OIHW`` by "
                    "default)."),
    "window_strides": _STRIDES,
    "padding": _PADDING,
    "lhs_dilation": ("sequence of int, optional", "Input dilation per spatial axis (a "
                                                  "transposed convolution)."),
    "rhs_dilation": ("sequence of int, optional", "Kernel dilation per spatial axis (an "
                                                  "atrous convolution)."),
    "dimension_numbers": _DIMNUMS,
    "feature_group_count": ("int, optional", "Split the features into this many groups "
                                             "convolved separately (depthwise: one per "
                                             "feature)."),
    "batch_group_count": ("int, optional", "Split the batch into this many groups (used "
                                           "by the kernel gradient of grouped "
                                           "convolutions)."),
    "lhs_shape": ("tuple of int", "The input's shape."),
    "rhs_shape": ("tuple of int", "The kernel's shape."),
    "start_index": ("int or array_like", "Where the slice starts along the axis (may be "
                                         "traced; clamped so the slice fits)."),
    "start_indices": ("sequence of int or array_like", "Where the slice starts, one per "
                                                       "axis (may be traced; clamped so "
                                                       "the slice fits)."),
    "slice_size": ("int", "The length of the slice (static)."),
    "slice_sizes": ("sequence of int", "The slice's shape (static)."),
    "update": (_ARRAY, "The values written into the slice."),
    "updates": (_ARRAY, "The values scattered into the operand."),
    "indices": (_ARRAY + " of int", "The index array of the gather/scatter, laid out as "
                                    "``dimension_numbers`` says."),
    "mode": ("GatherScatterMode or str, optional", "What out-of-bounds indices do: "
                                                   "``'clip'``, ``'fill'`` / "
                                                   "``'drop'``, or "
                                                   "``'promise_in_bounds'``."),
    "limit_index": ("int", "Where the slice ends (excluded)."),
    "limit_indices": ("sequence of int", "Where the slice ends on each axis (excluded)."),
    "stride": ("int, optional", "The step (default 1)."),
    "strides": ("sequence of int, optional", "The step on each axis (default 1)."),
    "permutation": ("sequence of int", "The new order of the axes."),
    "new_dtype": ("dtype", "The dtype to convert to."),
    "weak_type": ("bool, optional", "Whether the result is weakly typed (as a Python "
                                    "scalar's value, which then adopts the other operand's "
                                    "dtype)."),
    "index_dtype": ("dtype", "The integer dtype of the result."),
    "sizes": ("sequence of int", "The sizes of the new leading axes (``broadcast``) or of "
                                 "the pieces (``split``)."),
    "broadcast_dimensions": ("sequence of int", "For each axis of the operand, the axis of "
                                                "the result it becomes."),
    "new_sizes": ("sequence of int", "The new shape."),
    "operands": ("sequence of array_like", "The operands."),
    "padding_value": ("scalar", "The value of the padding."),
    "padding_config": ("sequence of (int, int, int)", "One ``(low, high, interior)`` per "
                                                      "axis; negative low/high crop."),
    "k": ("int", "How many of the largest (smallest) values to return."),
    "is_stable": ("bool, optional", "Whether equal keys keep their order."),
    "num_keys": ("int, optional", "How many of the leading operands are sort keys (the "
                                  "others are sorted along)."),
    "keys": (_ARRAY, "The sort keys."),
    "values": (_ARRAY, "Values sorted along with the keys."),
    "init_value": ("scalar", "The identity of ``computation`` (0 for sums, -inf for "
                             "maxima)."),
    "init_values": ("sequence of scalar", "The identities of ``computation``, one per "
                                          "operand."),
    "computation": ("callable", "The binary reduction (``lax.add``, ``lax.max``, or a "
                                "monoid of several operands)."),
    "window_dimensions": ("sequence of int", "The window's shape, one entry per axis."),
    "base_dilation": ("sequence of int, optional", "Dilation of the operand per axis."),
    "window_dilation": ("sequence of int, optional", "Dilation of the window per axis."),
    "operand_shape": ("tuple of int", "The operand's shape."),
    "min": (_ARRAY, "The lower bound."),
    "max": (_ARRAY, "The upper bound."),
    "pred": (_ARRAY + " of bool", "The condition, of the operands' shape (or a scalar)."),
    "on_true": (_ARRAY, "Values where ``pred`` is True."),
    "on_false": (_ARRAY, "Values where ``pred`` is False."),
    "which": (_ARRAY, "Which case each element takes (bool for two cases, int for more)."),
    "*cases": (_ARRAY, "The candidate arrays, all of one shape and dtype."),
    "fft_type": ("FftType or str", "``FFT``, ``IFFT``, ``RFFT`` or ``IRFFT``."),
    "fft_lengths": ("sequence of int", "The lengths of the transformed trailing axes."),
    "rounding_method": ("RoundingMethod or int, optional", "``AWAY_FROM_ZERO`` (0, "
                                                           "default) or ``TO_NEAREST_EVEN`` "
                                                           "(1) for halves."),
    "accuracy": ("optional", "JAX's accuracy request; accepted and ignored."),
    "src": (_ARRAY, "The array indexed."),
    "idxs": ("tuple of array_like", "One integer array per axis in ``axes``."),
    "transpose_kernel": ("bool, optional", "If True, the kernel's spatial axes are flipped "
                                           "and its in/out feature axes swapped (the "
                                           "gradient of a convolution)."),
    "use_consistent_padding": ("bool, optional", "JAX's padding convention switch for "
                                                 "transposed convolutions."),
    "in_shape": ("sequence of int", "The input's spatial shape."),
    "window_shape": ("sequence of int", "The window's shape."),
    "reduction_dimension": ("int, optional", "The axis searched (default: the last)."),
    "recall_target": ("float, optional", "JAX's accuracy target of the approximate search; "
                                         "functrans's results are exact."),
    "reduction_input_size_override": ("int, optional", "JAX's hint; accepted and ignored."),
    "aggregate_to_topk": ("bool, optional", "Whether the result is cut to ``k`` values "
                                            "(functrans's always is)."),
})
_specific("functrans.lax.betainc", a=(_ARRAY, "The first shape parameter (positive)."),
          b=(_ARRAY, "The second shape parameter (positive)."))
_specific("functrans.lax.igamma functrans.lax.igammac functrans.lax.igamma_grad_a "
          "functrans.lax.random_gamma_grad",
          a=(_ARRAY, "The shape parameter (positive)."))
_specific("functrans.lax.polygamma", m=(_ARRAY, "The order of the derivative (a "
                                                "non-negative integer value)."))
_specific("functrans.lax.zeta", q=(_ARRAY, "The shift of Hurwitz's zeta function, "
                                           "``sum((n + q) ** -x)``."))

# --- functrans.random ---------------------------------------------------------------------
_RANDOM_MODE = ("str, optional", "JAX's choice of the bits' algorithm; accepted (functrans "
                                 "uses JAX's default, so samples match JAX's).")
# --- lax.gather / lax.scatter* in XLA's form -----------------------------------------------
_AXES = "tuple of int"
_specific("functrans.lax.GatherDimensionNumbers",
          offset_dims=(_AXES, "The result's axes holding the slice's axes that are neither "
                              "collapsed nor batching (sorted)."),
          collapsed_slice_dims=(_AXES, "Operand axes whose slice has size 1 and no axis in "
                                       "the result (sorted)."),
          start_index_map=(_AXES, "For each entry of an index vector, the operand axis "
                                  "whose start it gives."),
          operand_batching_dims=(_AXES + ", optional", "Operand axes paired one to one with "
                                                       "``start_indices_batching_dims``."),
          start_indices_batching_dims=(_AXES + ", optional", "Axes of the indices paired "
                                                             "with ``operand_batching_dims`` "
                                                             "(equal sizes)."))
_specific("functrans.lax.ScatterDimensionNumbers",
          update_window_dims=(_AXES, "The updates' axes holding a window (sorted); the "
                                     "others match the indices' batch axes."),
          inserted_window_dims=(_AXES, "Operand axes of window size 1 that the updates do "
                                       "not have (sorted)."),
          scatter_dims_to_operand_dims=(_AXES, "For each entry of an index vector, the "
                                               "operand axis whose start it gives."),
          operand_batching_dims=(_AXES + ", optional", "Operand axes paired one to one with "
                                                       "``scatter_indices_batching_dims``."),
          scatter_indices_batching_dims=(_AXES + ", optional", "Axes of the indices paired "
                                                               "with "
                                                               "``operand_batching_dims`` "
                                                               "(equal sizes)."))
_SCATTER_INDICES = ("array_like of int", "The positions: with ``dimension_numbers`` the start "
                                         "of each window (last axis: the index vectors), "
                                         "else functrans's ``(*batch, k)`` index array.")
_specific("functrans.lax.scatter functrans.lax.scatter_add functrans.lax.scatter_sub "
          "functrans.lax.scatter_mul functrans.lax.scatter_min functrans.lax.scatter_max "
          "functrans.lax.scatter_apply", scatter_indices=_SCATTER_INDICES,
          dimension_numbers=("ScatterDimensionNumbers, optional",
                             "XLA's form: how the indices and the updates' windows map to "
                             "axes (None: functrans's form; required by scatter_apply)."))
_specific("functrans.lax.gather",
          start_indices=("array_like of int", "The positions: with ``dimension_numbers`` the "
                                              "start of each slice (last axis: the index "
                                              "vectors), else functrans's ``(*batch, k)`` "
                                              "index array."),
          dimension_numbers=("GatherDimensionNumbers, optional", "XLA's form: how the "
                                                                 "indices and slices map to "
                                                                 "axes (None: functrans's "
                                                                 "form)."),
          slice_sizes=("sequence of int, optional", "With ``dimension_numbers``: the "
                                                    "slice's size on each operand axis."))
_specific("functrans.lax.scatter_apply",
          func=("callable", "Applied elementwise to each element a window reaches."),
          update_shape=("tuple of int, optional", "The shape the updates of the equivalent "
                                                  "scatter would have."))

_specific("functrans.lax.conv_general_dilated_patches functrans.lax.conv_general_dilated_local",
          filter_shape=("sequence of int", "The kernel's spatial shape (the window), in the "
                                           "order the kernel layout lists its spatial "
                                           "axes."))
_specific("functrans.lax.conv_general_dilated_local",
          rhs=(_ARRAY, "The unshared kernel: output features, input features times the "
                       "window (channel-major), and one spatial axis per output spatial "
                       "axis."))
_specific("functrans.lax.conv_shape_tuple",
          pads=("str or sequence of (int, int)", "A padding string or one (low, high) pair "
                                                 "per spatial axis."))

# --- lax.ragged_dot* and JAX's product types ------------------------------------------------
_specific("functrans.lax.ragged_dot functrans.lax.ragged_dot_general",
          group_sizes=("array_like of int", "The sizes of the consecutive groups that the "
                                            "ragged axis of ``lhs`` is cut into (1-d)."),
          group_offset=("None", "JAX's first group to compute (TPU only); not supported."))
_specific("functrans.lax.ragged_dot_general",
          ragged_dot_dimension_numbers=("RaggedDotDimensionNumbers",
                                        "The product's axes, the ragged axis of ``lhs`` and "
                                        "the group axis of ``rhs``."))
_specific("functrans.lax.RaggedDotDimensionNumbers",
          dot_dimension_numbers=("tuple", "``((lhs_contracting, rhs_contracting), "
                                          "(lhs_batch, rhs_batch))``, as ``dot_general``'s."),
          lhs_ragged_dimensions=("sequence of int", "The one ``lhs`` axis cut into groups."),
          rhs_group_dimensions=("sequence of int", "The ``rhs`` axis of the groups' kernels "
                                                   "(empty when the ragged axis is "
                                                   "contracted)."))
_ALGO = "recorded, no effect on NumPy or CuPy."
_specific("functrans.lax.DotAlgorithm",
          lhs_precision_type=("dtype", "The type ``lhs`` is rounded to; " + _ALGO),
          rhs_precision_type=("dtype", "The type ``rhs`` is rounded to; " + _ALGO),
          accumulation_type=("dtype", "The accumulator's type; " + _ALGO),
          lhs_component_count=("int, optional", "Parts ``lhs`` is split into; " + _ALGO),
          rhs_component_count=("int, optional", "Parts ``rhs`` is split into; " + _ALGO),
          num_primitive_operations=("int, optional", "Products computed; " + _ALGO),
          allow_imprecise_accumulation=("bool, optional", "Whether the accumulator may be "
                                                          "less precise; " + _ALGO))

FAMILY["functrans.random"].update({
    "seed": ("int", "The seed (any Python int or integer array value)."),
    "keys": ("PRNG key", "Typed keys."),
    "data": ("int", "The integer folded into the key."),
    "mode": _RANDOM_MODE,
    "replace": ("bool, optional", "Whether a value may be drawn more than once."),
    "independent": ("bool, optional", "If True, each slice along ``axis`` is permuted "
                                      "independently."),
    "lower": (_ARRAY, "The lower truncation point (in standard deviations)."),
    "upper": (_ARRAY, "The upper truncation point (in standard deviations)."),
    "method": ("str, optional", "How the covariance is factored: ``'cholesky'`` (default), "
                                "``'eigh'`` or ``'svd'``."),
    "logits": (_ARRAY, "Unnormalized log probabilities of the categories, along "
                       "``axis``."),
    "alpha": (_ARRAY, "The concentration parameters (positive), one per category along the "
                      "last axis."),
    "impl": ("str, optional", "The PRNG implementation's name (``'threefry2x32'``)."),
    "key_bits_array": (_ARRAY, "The raw key data (uint32), as ``key_data`` gives it."),
})
_specific("functrans.random.bernoulli", p=(_ARRAY, "The probability of True, in [0, 1]."))
_specific("functrans.random.choice",
          a=("int or array_like", "The values to draw from (an int n: ``arange(n)``)."),
          p=(_ARRAY + ", optional", "The probability of each value (default uniform)."))
_specific("functrans.random.gamma functrans.random.loggamma",
          a=(_ARRAY, "The shape parameter (positive); samples are differentiable in it."))
_specific("functrans.random.beta",
          a=(_ARRAY, "The first shape parameter (positive)."),
          b=(_ARRAY, "The second shape parameter (positive)."))
_specific("functrans.random.orthogonal", n=("int", "The size of the square matrices."))
_specific("functrans.random.poisson",
          lam=(_ARRAY, "The rate (the mean), >= 0; computed in float32, as JAX."))
_specific("functrans.random.binomial",
          n=(_ARRAY, "The number of trials (floored; a float array is fine)."),
          p=(_ARRAY, "The success probability of each trial, in [0, 1]."))
_specific("functrans.random.multinomial",
          n=(_ARRAY, "The number of trials, broadcast to the result's shape less its last "
                     "axis."),
          p=(_ARRAY, "The probability of each outcome, along the last axis."),
          unroll=("int or bool, optional", "JAX's scan unrolling; accepted, changes no "
                                           "value."))
_specific("functrans.random.geometric",
          p=(_ARRAY, "The success probability of each trial, in (0, 1]."))
_specific("functrans.random.t functrans.random.chisquare",
          df=(_ARRAY, "The degrees of freedom (positive); samples are differentiable in it."))
_specific("functrans.random.f",
          dfnum=(_ARRAY, "The numerator's degrees of freedom (positive)."),
          dfden=(_ARRAY, "The denominator's degrees of freedom (positive)."))
_specific("functrans.random.lognormal",
          sigma=(_ARRAY + ", optional", "The standard deviation of the draw's logarithm "
                                        "(default 1)."))
_specific("functrans.random.wald", mean=(_ARRAY, "The mean, positive (the shape is 1)."))
_specific("functrans.random.pareto", b=(_ARRAY, "The shape (tail index), positive."))
_specific("functrans.random.rayleigh", scale=(_ARRAY, "The scale (the mode), positive."))
_specific("functrans.random.weibull_min",
          scale=(_ARRAY, "The scale, positive."),
          concentration=(_ARRAY, "The shape (concentration), positive."))
_specific("functrans.random.double_sided_maxwell",
          loc=(_ARRAY, "The centre."), scale=(_ARRAY, "The scale, positive."))
_specific("functrans.random.generalized_normal",
          p=(_ARRAY, "The shape: the density is proportional to ``exp(-|x| ** p)``."))
_specific("functrans.random.triangular",
          left=(_ARRAY, "The lower end of the support."),
          mode=(_ARRAY, "The peak of the density, between ``left`` and ``right``."),
          right=(_ARRAY, "The upper end of the support (above ``left``)."))
_specific("functrans.random.ball",
          d=("int", "The dimension of the ball (the result's last axis)."),
          p=("float or array_like, optional", "The norm's exponent (default 2)."))

# --- functrans.nn -------------------------------------------------------------------------
FAMILY["functrans.nn"].update({
    "alpha": ("float, optional", "The scale of the negative part."),
    "approximate": ("bool, optional", "If True (default), the tanh approximation; False: "
                                      "the exact form with ``erf``."),
    "negative_slope": ("float, optional", "The slope for negative inputs."),
    "b": (_ARRAY + ", optional", "Scale factors of the exponentials (``log(sum(b * "
                                 "exp(x)))``)."),
    "return_sign": ("bool, optional", "If True, return ``(log|result|, sign)`` (allowing "
                                      "negative ``b``)."),
    "num_classes": ("int", "The number of classes (the length of the new axis)."),
    "mean": (_ARRAY + ", optional", "The mean to subtract (default: computed over "
                                    "``axis``)."),
    "variance": (_ARRAY + ", optional", "The variance to divide by (default: computed)."),
    "epsilon": ("float, optional", "Added to the variance before the square root."),
    "query": (_ARRAY, "Queries, shape ``(batch, query length, heads, head dim)``."),
    "key": (_ARRAY, "Keys, shape ``(batch, key length, kv heads, head dim)``."),
    "value": (_ARRAY, "Values, of the keys' shape."),
    "bias": (_ARRAY + ", optional", "Added to the attention logits (broadcast to "
                                    "``(batch, heads, query length, key length)``)."),
    "mask": (_ARRAY + " of bool, optional", "Where False, a query does not attend to a "
                                            "key."),
    "scale": ("float, optional", "The logits' scale (default ``1 / sqrt(head dim)``)."),
    "is_causal": ("bool, optional", "If True, a query attends only to keys at or before "
                                    "its position."),
    "query_seq_lengths": (_ARRAY + " of int, optional", "The valid length of each batch "
                                                        "member's queries."),
    "key_value_seq_lengths": (_ARRAY + " of int, optional", "The valid length of each "
                                                            "batch member's keys."),
    "local_window_size": ("int or (int, int), optional", "Attend only to keys within this "
                                                         "many positions (before, after)."),
    "implementation": ("str, optional", "JAX's backend choice; only None / ``'xla'`` (the "
                                        "plain computation)."),
    "return_residual": ("bool, optional", "If True, also return the logsumexp of the "
                                          "logits per query."),
    "lhs_scales": (_ARRAY, "Block scale factors of ``lhs``."),
    "rhs_scales": (_ARRAY, "Block scale factors of ``rhs``."),
})

# --- pytrees ------------------------------------------------------------------------------
for _prefix in ("functrans.tree_util", "functrans.tree"):
    FAMILY[_prefix] = {
        "function": ("callable", "A binary function combining the accumulated value with "
                                 "the next leaf."),
        "initializer": ("optional", "The starting value (default: the first leaf)."),
        "nodetype": ("type", "The class to register."),
        "flatten_func": ("callable", "``flatten(node) -> (children, aux_data)``: the "
                                     "children (a sequence of subtrees) and hashable static "
                                     "data."),
        "unflatten_func": ("callable", "``unflatten(aux_data, children) -> node``."),
        "flatten_with_keys": ("callable", "``flatten_with_keys(node) -> (((key, child), "
                                          "...), aux_data)``: children with their keys."),
        "data_fields": ("sequence of str", "The fields holding children (arrays, "
                                           "subtrees)."),
        "meta_fields": ("sequence of str", "The fields holding static, hashable data (part "
                                           "of the structure)."),
        "drop_fields": ("sequence of str, optional", "Fields left out of both (not "
                                                     "``init`` fields)."),
        "keys": ("tuple", "A key path, as ``tree_flatten_with_path`` gives it."),
        "simple": ("bool, optional", "If True, the keys are joined with ``separator`` "
                                     "without brackets or quotes."),
        "separator": ("str, optional", "What ``simple=True`` puts between keys."),
        "prefix_tree": ("pytree", "A tree prefix of ``full_tree``."),
        "full_tree": ("pytree", "The tree whose structure the result takes."),
        "operation": ("callable", "An associative binary function."),
        "identity": ("optional", "The result for an empty tree."),
        "outer_treedef": ("PyTreeDef", "The structure of the outer level."),
        "inner_treedef": ("PyTreeDef", "The structure of the inner level."),
        "pytree_to_transpose": ("pytree", "A tree of outer structure whose subtrees have the "
                                          "inner structure."),
        "iterable": ("iterable", "The values to test, such as a list of leaves."),
        "typ": ("type", "The type to ask about (a class, not an instance)."),
        "treedefs": ("iterable of PyTreeDef", "The structures of the tuple's elements, in "
                                              "order."),
    }
_specific("functrans.flatten_util.ravel_pytree",
          pytree=("pytree", "The tree whose leaves are flattened into one 1-D array."))
_specific("functrans.numpy.polyfit", deg=("int", "The degree of the polynomial."))
_specific("functrans.numpy.angle", deg=("bool, optional", "If True, the angle is in degrees "
                                                          "(default radians)."))

# --- functrans.lax.linalg -----------------------------------------------------------------
FAMILY["functrans.lax.linalg"] = {
    "x": (_ARRAY, "The matrix, or a stack of matrices on the last two axes."),
    "a": (_ARRAY, "The triangular matrix (batched like ``b``)."),
    "b": (_ARRAY, "The right-hand side."),
    "symmetrize_input": ("bool, optional", "If True (default), ``x`` is replaced by ``(x + "
                                           "xᴴ) / 2`` first; if False, only one triangle of "
                                           "``x`` is read."),
    "lower": ("bool, optional", "Whether the lower triangle is read (True) or the upper."),
    "full_matrices": ("bool, optional", "If True (default), the full square factors; False: "
                                        "the reduced ones (``min(m, n)`` columns/rows)."),
    "compute_uv": ("bool, optional", "If False, only the singular values."),
    "compute_left_eigenvectors": ("bool, optional", "Whether to return the left "
                                                    "eigenvectors."),
    "compute_right_eigenvectors": ("bool, optional", "Whether to return the right "
                                                     "eigenvectors."),
    "enable_eigvec_derivs": ("bool, optional", "JAX's switch for eigenvector derivatives; "
                                               "accepted."),
    "left_side": ("bool, optional", "If True, solve ``op(a) x = b``; if False, ``x op(a) = "
                                    "b``."),
    "transpose_a": ("bool, optional", "If True, use the transpose of ``a``."),
    "conjugate_a": ("bool, optional", "If True, use the complex conjugate of ``a``."),
    "unit_diagonal": ("bool, optional", "If True, ``a``'s diagonal is taken to be ones (not "
                                        "read)."),
}

# --- functrans.nn.initializers ------------------------------------------------------------
FAMILY["functrans.nn.initializers"] = {
    "dtype": ("dtype, optional", "The dtype of the values the initializer makes (default "
                                 "float64; the call's own ``dtype`` argument overrides "
                                 "it)."),
    "in_axis": ("int or sequence of int, optional", "The axes of the weight shape that count "
                                                    "as inputs (fan-in)."),
    "out_axis": ("int or sequence of int, optional", "The axes that count as outputs "
                                                     "(fan-out)."),
    "batch_axis": ("int or sequence of int, optional", "Axes counted in neither fan (such "
                                                       "as a stack of kernels)."),
    "stddev": ("float, optional", "The standard deviation."),
    "lower": ("float, optional", "The lower truncation point, in standard deviations."),
    "upper": ("float, optional", "The upper truncation point, in standard deviations."),
    "column_axis": ("int, optional", "The axis holding the orthonormal columns."),
    "mode": ("str", "The fan the variance is divided by: ``'fan_in'``, ``'fan_out'``, "
                    "``'fan_avg'`` or ``'fan_geo_avg'``."),
    "distribution": ("str", "``'truncated_normal'``, ``'normal'`` or ``'uniform'``."),
}
FAMILY["functrans.nn"].update({
    "lhs": (_ARRAY, "The left operand, shape ``(B, M, K)``."),
    "rhs": (_ARRAY, "The right operand, shape ``(B, N, K)``."),
})

# --- configuration, debugging, dtypes, images ---------------------------------------------
_specific("functrans.config.fusion_set", on=("bool", "Whether ``jit`` fuses elementwise "
                                                     "regions into compiled loops."))
_specific("functrans.config.update",
          name=("str", "JAX's option name, e.g. ``'jax_enable_x64'`` or ``'jax_debug_nans'``."),
          val=("any", "The option's new value (a bool for switches, a string for modes)."))
_specific("functrans.config.on_change",
          name=("str", "The switch of ``functrans.config`` to watch, e.g. ``'debug_nans'``."),
          watcher=("callable", "Called with no arguments after each assignment to it."))
_specific("functrans.config.reverse_mode_set",
          mode=("str", "``'auto'``, ``'linearize'``, ``'compiled'`` or ``'tape'``: the "
                       "reverse-mode plan ``grad`` and ``vjp`` use."))
_DEBUG = dict(ordered=("bool, optional", "JAX's ordering flag; calls always happen in "
                                         "program order here."),
              partitioned=("bool, optional", "JAX's sharding flag; accepted and ignored."))
_specific("functrans.debug.callback", **_DEBUG,
          callback=("callable", "Called with the values of ``args`` and ``kwargs``; its "
                                "result is ignored."),
          **{"*args": ("pytree", "Values passed to ``callback``."),
             "**kwargs": ("pytree", "Keyword values passed to ``callback``.")})
_specific("functrans.debug.print", **_DEBUG,
          fmt=("str", "A ``str.format`` template."),
          skip_format_check=("bool, optional", "JAX's switch to skip checking the template "
                                               "against the arguments; accepted."),
          **{"*args": ("pytree", "Values formatted into ``fmt``."),
             "**kwargs": ("pytree", "Keyword values formatted into ``fmt``.")})
_specific("functrans.debug.breakpoint", ordered=_DEBUG["ordered"],
          backend=("str, optional", "The debugger: None or ``'cli'``, the command-line one "
                                    "(the only one functrans has)."),
          filter_frames=("bool, optional", "Leave functrans's own frames out of those the "
                                           "debugger shows (default True)."),
          num_frames=("int, optional", "Show at most this many frames, innermost first "
                                       "(default: all)."),
          token=("None", "JAX's deprecated ordering token; must be None."),
          **{"**kwargs": ("IO", "``stdin`` and ``stdout``: the debugger's input and output "
                                "instead of the terminal.")})
_specific("functrans.dtypes.canonicalize_dtype",
          dtype=("dtype", "Anything ``numpy.dtype`` accepts."),
          allow_extended_dtype=("bool, optional", "JAX's flag for its extended dtypes (key "
                                                  "types); accepted."))
_specific("functrans.dtypes.result_type",
          return_weak_type_flag=("bool, optional", "If True, also return whether the result "
                                                   "is weakly typed."))
_specific("functrans.dtypes.issubdtype",
          a=("dtype", "The dtype (or type) to test."),
          b=("dtype or type", "The dtype or abstract kind (``numpy.floating``, ...) to test "
                              "against."))
FAMILY["functrans.image"] = {
    "image": (_ARRAY, "The image (any number of dimensions, batch and channel axes "
                      "included)."),
    "shape": ("sequence of int", "The shape of the result, one entry per dimension of "
                                 "``image``."),
    "method": ("str or ResizeMethod", "The interpolation: ``'nearest'``, ``'linear'``, "
                                      "``'cubic'``, ``'lanczos3'``, ``'lanczos5'`` (and "
                                      "their aliases)."),
    "antialias": ("bool, optional", "If True (default), downsampling widens the kernel by "
                                    "the shrink factor, so it averages instead of "
                                    "skipping samples."),
    "spatial_dims": ("sequence of int", "The axes that are scaled and translated."),
    "scale": (_ARRAY, "The scale factor of each spatial axis (may be traced)."),
    "translation": (_ARRAY, "The translation of each spatial axis, in output pixels (may "
                            "be traced)."),
}

# --- functrans.scipy ----------------------------------------------------------------------
FAMILY["functrans.scipy.linalg"].update({
    "*arrs": (_ARRAY, "The blocks, in order along the diagonal."),
    "c_and_lower": ("tuple", "``(c, lower)`` as ``cho_factor`` returns it."),
    "lu_and_piv": ("tuple", "``(lu, piv)`` as ``lu_factor`` returns it."),
    "trans": ("int or str, optional", "0 / ``'N'``: solve ``a x = b``; 1 / ``'T'``: ``aᵀ x "
                                      "= b``; 2 / ``'C'``: ``aᴴ x = b``."),
    "unit_diagonal": ("bool, optional", "If True, ``a``'s diagonal is taken to be ones (not "
                                        "read)."),
    "debug": ("optional", "SciPy's debugging flag; accepted and ignored."),
    "assume_a": ("str, optional", "What ``a`` is: ``'gen'`` (general, LU), ``'sym'``, "
                                  "``'her'`` or ``'pos'`` (positive definite, Cholesky)."),
    "eigvals_only": ("bool, optional", "If True, return only the eigenvalues."),
    "turbo": ("bool, optional", "SciPy's algorithm switch; accepted and ignored."),
    "eigvals": ("optional", "A subset of eigenvalues; only None (all) is supported."),
    "type": ("int, optional", "The generalized problem's type; only 1 (with ``b`` None) is "
                              "supported."),
    "A": (_ARRAY, "The square matrix, or a stack of them."),
    "E": (_ARRAY, "The direction of the derivative, of ``A``'s shape."),
    "method": ("str, optional", "SciPy's algorithm name; accepted (the block method is "
                                "always used)."),
    "compute_expm": ("bool, optional", "If True, also return ``expm(A)``."),
    "upper_triangular": ("bool, optional", "JAX's promise that ``A`` is upper triangular; "
                                           "accepted, not needed."),
    "max_squarings": ("int, optional", "JAX's limit on the squarings; accepted (the number "
                                       "is chosen from ``A``'s norm)."),
    "permute_l": ("bool, optional", "If True, return ``(p @ l, u)`` instead of ``(p, l, "
                                    "u)``."),
    "lwork": ("optional", "LAPACK's work size; accepted and ignored."),
    "mode": ("str, optional", "``'full'`` (default), ``'economic'`` or ``'r'``."),
    "pivoting": ("bool, optional", "Column pivoting; only False is supported."),
    "full_matrices": ("bool, optional", "If True (default), square ``u`` and ``vh``; False: "
                                        "the reduced factors."),
    "compute_uv": ("bool, optional", "If False, only the singular values."),
    "lapack_driver": ("str, optional", "SciPy's LAPACK routine; accepted (the array library "
                                       "chooses)."),
})
FAMILY["functrans.scipy.linalg"].update({
    "c": (_ARRAY, "The first column, ``(..., N)``: a vector, or a stack of them on the "
                  "leading axes."),
    "n": ("int", "The order: the size of the matrix (a static Python integer)."),
    "kind": ("str or None, optional", "``'symmetric'`` (None, the default), ``'lower'`` or "
                                      "``'upper'``."),
})
_COEFFICIENTS = (_ARRAY, "The polynomial's coefficients, highest power first, ``(..., N)``; "
                         "leading axes are a batch.")
_specific("functrans.scipy.linalg.companion functrans.scipy.linalg.fiedler_companion",
          a=_COEFFICIENTS)
_specific("functrans.scipy.linalg.fiedler",
          a=(_ARRAY, "The vector ``(..., N)``; leading axes are a batch."))
_specific("functrans.scipy.linalg.toeplitz",
          r=(_ARRAY + " or None, optional", "The first row, ``(..., M)`` (its first entry is "
                                            "not read); None: ``conj(c)``."))
_specific("functrans.scipy.linalg.hankel",
          r=(_ARRAY + " or None, optional", "The last row, ``(..., M)`` (its first entry is "
                                            "not read); None: zeros."))
_specific("functrans.scipy.linalg.leslie",
          f=(_ARRAY, "The fecundity coefficients, ``(..., N)`` with ``N >= 2``: the first "
                     "row."),
          s=(_ARRAY, "The survival coefficients, ``(..., N - 1)``: the first subdiagonal."))
_specific("functrans.scipy.linalg.convolution_matrix",
          a=(_ARRAY, "The kernel to convolve with, ``(..., m)``; leading axes are a batch."),
          n=("int", "The length of the vectors convolved: the number of columns."),
          mode=("str, optional", "``'full'`` (default: every overlap), ``'same'`` (``max(m, "
                                 "n)`` rows, centred) or ``'valid'`` (only complete "
                                 "overlaps)."))
_specific("functrans.scipy.linalg.hadamard",
          n=("int", "The order, a power of two."),
          dtype=("dtype, optional", "The dtype of the result (default int, that is int64)."))
_specific("functrans.scipy.linalg.helmert",
          full=("bool, optional", "If True, the orthogonal ``(n, n)`` matrix with the row "
                                  "``1 / sqrt(n)`` first; False: the ``(n - 1, n)`` "
                                  "contrasts."))
_specific("functrans.scipy.linalg.dft",
          scale=("str or None, optional", "None (default: unscaled), ``'sqrtn'`` (divided by "
                                          "``sqrt(n)``: unitary) or ``'n'`` (divided by "
                                          "``n``)."),
          dtype=("dtype, optional", "A complex dtype for the result (None: complex128)."))
_specific("functrans.scipy.linalg.polar",
          side=("str, optional", "``'right'`` (default): ``a = u p``; ``'left'``: ``a = p "
                                 "u``."),
          method=("str, optional", "JAX's ``'qdwh'`` (default) or ``'svd'``; accepted, the "
                                   "SVD is always used."),
          eps=("float, optional", "The QDWH iteration's tolerance; accepted and not needed."),
          max_iterations=("int, optional", "The QDWH iteration's limit; accepted and not "
                                           "needed."))
_specific("functrans.scipy.linalg.schur",
          output=("str, optional", "``'real'`` (default: the real Schur form of real ``a``, "
                                   "with 2 x 2 blocks) or ``'complex'`` (upper triangular "
                                   "``T``; ``a`` is converted to complex first)."))
_specific("functrans.scipy.linalg.rsf2csf",
          T=(_ARRAY, "The real Schur form, ``(..., N, N)``, as ``schur(a)`` returns it."),
          Z=(_ARRAY, "The matching unitary matrix, ``(..., N, N)``; its leading axes "
                     "broadcast against ``T``'s."))
_specific("functrans.scipy.linalg.hessenberg",
          calc_q=("bool, optional", "If True, return ``(H, Q)``; False (default): ``H``."))
_specific("functrans.scipy.linalg.sqrtm",
          blocksize=("int, optional", "SciPy's block size; only 1 (default) is accepted, as "
                                      "JAX: larger values raise ``NotImplementedError``."))
_specific("functrans.scipy.linalg.funm",
          func=("callable", "The scalar function, applied to the array of eigenvalues "
                            "(``(..., N)``, complex) with ``functrans.numpy`` operations "
                            "(``fnp.exp``, ``lambda x: x * x``)."),
          disp=("bool, optional", "If True (default), return ``F``; False: ``(F, err)`` "
                                  "with the error estimate. Nothing is printed."))
_specific("functrans.scipy.linalg.solve_sylvester",
          B=(_ARRAY, "The square matrix multiplying ``X`` from the right, ``(..., N, N)``."),
          C=(_ARRAY, "The right-hand side, ``(..., M, N)``."),
          method=("str, optional", "JAX's ``'schur'`` (default) or ``'eigen'``; both solve "
                                   "by Bartels and Stewart's method here."),
          tol=("float, optional", "The solution is NaN where some ``λ(A) + μ(B)`` is within "
                                  "``tol`` of zero (JAX's rule; default 1e-8, 0 turns it "
                                  "off); a static number."))
_specific("functrans.scipy.linalg.eigh_tridiagonal",
          d=(_ARRAY, "The diagonal, ``(..., N)`` (its real part is read), float32, float64, "
                     "complex64 or complex128."),
          e=(_ARRAY, "The entries above the diagonal, ``(..., N - 1)``, of ``d``'s dtype "
                     "(``conj(e)`` is below)."),
          select=("str, optional", "``'a'`` (default: all eigenvalues) or ``'i'`` (those of "
                                   "the indices in ``select_range``); ``'v'`` raises "
                                   "``NotImplementedError``, as JAX."),
          select_range=("pair of int, optional", "For ``select='i'``: the first and last "
                                                 "index kept (both included)."),
          tol=("float, optional", "JAX's bisection tolerance; accepted, not needed (the "
                                  "eigenvalues are LAPACK's, to rounding)."),
          key=("optional", "JAX's random key for the inverse iteration's start; accepted, not "
                           "needed."))
_specific("functrans.scipy.linalg.qr_multiply",
          c=(_ARRAY, "The matrix multiplied with ``Q``: ``(..., K, P)`` for ``mode='left'``, "
                     "``(..., P, M)`` for ``'right'``; a vector is one column or row."),
          mode=("str, optional", "``'right'`` (default): ``c @ Q``; ``'left'``: ``Q @ c``."),
          pivoting=("bool, optional", "Column pivoting; only False is supported."),
          conjugate=("bool, optional", "If True, multiply with ``conj(Q)`` instead."),
          overwrite_c=("bool, optional", "SciPy's permission to overwrite ``c``; accepted and "
                                         "ignored."))
_SHAPE_A = (_ARRAY, "The first shape parameter (positive).")
_SHAPE_B = (_ARRAY, "The second shape parameter (positive).")
_specific("functrans.scipy.special.beta functrans.scipy.special.betaln "
          "functrans.scipy.special.betainc", a=_SHAPE_A, b=_SHAPE_B)
_specific("functrans.scipy.special.gammainc functrans.scipy.special.gammaincc",
          a=(_ARRAY, "The shape parameter (positive)."))
_specific("functrans.scipy.special.hyp1f1 functrans.scipy.special.hyp2f1",
          a=(_ARRAY, "The first upper parameter."), b=(_ARRAY, "The second parameter (lower "
                                                               "for 1F1, upper for 2F1)."))
_specific("functrans.scipy.special.hyp2f1", c=(_ARRAY, "The lower parameter."))
_specific("functrans.scipy.special.logsumexp",
          a=(_ARRAY, "The input."),
          b=(_ARRAY + ", optional", "Scale factors of the exponentials: ``log(sum(b * "
                                    "exp(a)))``."),
          return_sign=("bool, optional", "If True, return ``(log|result|, sign)`` (allowing "
                                         "negative ``b``)."))
_specific("functrans.scipy.special.multigammaln",
          a=(_ARRAY, "The argument (greater than ``(d - 1) / 2``)."),
          d=("int", "The dimension."))
_specific("functrans.scipy.special.owens_t", h=(_ARRAY, "The first argument."),
          a=(_ARRAY, "The second argument."))
_specific("functrans.scipy.special.kl_div functrans.scipy.special.rel_entr",
          p=(_ARRAY, "The first argument (non-negative)."),
          q=(_ARRAY, "The second argument (non-negative)."))
_specific("functrans.scipy.special.ndtri", p=(_ARRAY, "The probability, in [0, 1]."))
_specific("functrans.scipy.special.poch", m=(_ARRAY, "The number of factors: ``poch(z, m) = "
                                                      "Gamma(z + m) / Gamma(z)``."))
_specific("functrans.scipy.special.polygamma functrans.scipy.special.expn",
          n=(_ARRAY, "The order (a non-negative integer value)."))
_specific("functrans.scipy.special.bernoulli", n=("int", "The highest index: ``B_0, ..., "
                                                         "B_n`` are returned."))
_specific("functrans.scipy.special.factorial",
          n=(_ARRAY, "The argument."),
          exact=("bool, optional", "SciPy's exact integer result; only False is supported "
                                   "(as in JAX)."))
_specific("functrans.scipy.special.comb",
          N=(_ARRAY, "The number of things."), k=(_ARRAY, "The number of elements taken."),
          repetition=("bool, optional", "If True, count multisets (choices with "
                                        "repetition)."))
_specific("functrans.scipy.special.zeta",
          q=(_ARRAY + ", optional", "The shift of Hurwitz's zeta function ``sum((n + q) ** "
                                    "-x)`` (None: Riemann's, ``q = 1``)."))
_specific("functrans.scipy.special.boxcox functrans.scipy.special.boxcox1p",
          lmbda=(_ARRAY, "The transformation's parameter."))
_specific("functrans.scipy.special.log_ndtr",
          series_order=("int, optional", "The order (0 to 30) of the asymptotic series used "
                                         "far in the lower tail."))
_specific("functrans.scipy.special.bessel_jn",
          v=("int", "The highest order: ``J_0, ..., J_v`` are returned."),
          n_iter=("int, optional", "JAX's number of recurrence steps; checked, not "
                                   "needed."))
_specific("functrans.scipy.special.sph_harm_y",
          n=(_ARRAY + " of int", "The degree."), m=(_ARRAY + " of int", "The order (``|m| "
                                                                         "<= n``)."),
          theta=(_ARRAY, "The colatitude (polar angle)."),
          phi=(_ARRAY, "The longitude (azimuthal angle)."),
          diff_n=("int, optional", "SciPy's derivative order; only 0 / None is supported."),
          n_max=("int, optional", "The largest degree (JAX's static bound, needed under "
                                  "``jit`` for traced ``n``)."))
_specific("functrans.scipy.signal.convolve2d functrans.scipy.signal.correlate2d",
          boundary=("str, optional", "How the input is extended; only ``'fill'`` is "
                                     "supported (as in JAX)."),
          fillvalue=("scalar, optional", "The fill value; only 0 is supported."))
_specific("functrans.scipy.signal.detrend",
          data=(_ARRAY, "The signal."),
          type=("str, optional", "``'linear'`` (default: the least-squares line) or "
                                 "``'constant'`` (the mean)."),
          bp=("int or sequence of int, optional", "Breakpoints (indices along ``axis``) "
                                                  "between which lines are fitted "
                                                  "separately."),
          overwrite_data=("optional", "SciPy's in-place flag; not supported (as in JAX)."))
_specific("functrans.scipy.signal.istft",
          Zxx=(_ARRAY, "The spectra, as ``stft`` returns them."),
          input_onesided=("bool, optional", "Whether ``Zxx`` holds only the non-negative "
                                            "frequencies."),
          boundary=("bool, optional", "Whether to remove the extension ``stft`` added at "
                                      "both ends."),
          time_axis=("int, optional", "The axis of the segments."),
          freq_axis=("int, optional", "The axis of the frequencies."))
FAMILY["functrans.scipy.sparse.linalg"] = {
    "A": ("array_like or callable", "The operator: a matrix, or a function ``x -> A x`` "
                                    "(of pytrees)."),
    "b": ("pytree", "The right-hand side."),
    "x0": ("pytree, optional", "The starting guess (default zeros)."),
    "tol": ("float, optional", "The relative tolerance: stop when ``|r| <= max(tol * |b|, "
                               "atol)``."),
    "atol": ("float, optional", "The absolute tolerance (see ``tol``)."),
    "maxiter": ("int, optional", "The most iterations (default: ten times the size of "
                                 "``b``)."),
    "M": ("array_like or callable, optional", "A preconditioner approximating ``A⁻¹``."),
    "restart": ("int, optional", "The dimension of the Krylov space built per cycle."),
    "solve_method": ("str, optional", "``'batched'`` (default) or ``'incremental'`` (Givens "
                                      "rotations, stopping a cycle early)."),
}
_specific("functrans.scipy.optimize.minimize",
          fun=("callable", "The objective ``fun(x, *args)``, a real scalar (differentiated "
                           "with ``grad``)."),
          x0=(_ARRAY, "The starting point, a real 1-D array."),
          args=("tuple, optional", "Further arguments of ``fun``."),
          method=("str", "``'BFGS'`` or ``'l-bfgs-experimental-do-not-rely-on-this'`` (JAX's "
                         "names)."),
          tol=("float, optional", "The gradient-norm tolerance of the convergence test."),
          options=("dict, optional", "``maxiter``, ``norm``, ``gtol``, "
                                     "``line_search_maxiter`` (and ``maxcor``, ``ftol``, "
                                     "``maxfun``, ``maxgrad``, ``maxls`` for L-BFGS)."))
FAMILY["functrans.scipy.fft"] = {
    "type": ("int, optional", "The DCT type (1, 2, 3 or 4; default 2)."),
    "n": ("int, optional", "The length of the transformed axis (the input is cropped or "
                           "zero-padded)."),
    "s": ("sequence of int, optional", "The lengths of the transformed axes."),
    "norm": ("str, optional", "None / ``'backward'`` (no scaling forward), ``'ortho'`` or "
                              "``'forward'``."),
}
_specific("functrans.scipy.ndimage.map_coordinates",
          input=(_ARRAY, "The array sampled."),
          coordinates=("sequence of array_like", "One array of positions (index units) per "
                                                 "axis of ``input``, broadcast together."),
          order=("int", "0 (nearest sample) or 1 (linear interpolation)."),
          mode=("str, optional", "What lies beyond the edges: ``'constant'`` (``cval``), "
                                 "``'nearest'``, ``'wrap'``, ``'mirror'`` or "
                                 "``'reflect'``."),
          cval=("scalar, optional", "The value outside the edges with ``'constant'``."))
_specific("functrans.scipy.integrate.trapezoid",
          dx=("float, optional", "The spacing of the samples when ``x`` is None."))
_specific("functrans.scipy.cluster.vq.vq",
          obs=(_ARRAY, "The observations, one per row (M, N)."),
          code_book=(_ARRAY, "The codes, one per row (K, N)."))
FAMILY["functrans.scipy.stats"] = {
    "loc": (_ARRAY + ", optional", "The location: the distribution is shifted by it."),
    "scale": (_ARRAY + ", optional", "The scale (positive): the distribution is stretched "
                                     "by it."),
    "k": (_ARRAY, "The value (count) at which the probability is evaluated."),
    "q": (_ARRAY, "The probability, in [0, 1]."),
    "mean": (_ARRAY + ", optional", "The mean vector."),
    "cov": (_ARRAY + ", optional", "The covariance matrix."),
    "allow_singular": ("bool, optional", "SciPy's permission for a singular covariance; "
                                         "only False is supported."),
    "df": (_ARRAY, "The degrees of freedom (positive)."),
    "mu": (_ARRAY, "The mean of the Poisson distribution."),
}
_specific(" ".join(f"functrans.scipy.stats.bernoulli.{n}" for n in ("cdf", "logpmf", "pmf",
                                                                     "ppf")),
          p=(_ARRAY, "The probability of 1."))
_specific(" ".join(f"functrans.scipy.stats.beta.{n}" for n in ("cdf", "logcdf", "logpdf",
                                                                "logsf", "pdf", "sf")),
          a=_SHAPE_A, b=_SHAPE_B)

# --- where the common meaning of x, y, a, m, order does not hold --------------------------
FAMILY["functrans.scipy.stats"].update({
    "x": (_ARRAY, "The value(s) at which the distribution is evaluated."),
    "a": _NOT_HERE, "b": _NOT_HERE,
})
_specific(" ".join(f"functrans.scipy.stats.gamma.{n}" for n in ("cdf", "logcdf", "logpdf",
                                                                 "logsf", "pdf", "sf")),
          a=(_ARRAY, "The shape parameter (positive)."))
_specific(" ".join(f"functrans.scipy.stats.gennorm.{n}" for n in ("cdf", "logpdf", "pdf")),
          beta=(_ARRAY, "The shape parameter (positive): the density falls as "
                        "``exp(-|x|^beta)``."))
_specific("functrans.scipy.stats.gumbel_l.ppf functrans.scipy.stats.gumbel_r.ppf",
          p=(_ARRAY, "The probability, in [0, 1]."))
_specific("functrans.scipy.stats.logistic.ppf functrans.scipy.stats.logistic.isf",
          x=(_ARRAY, "The probability, in [0, 1] (JAX's name for it)."))
_specific(" ".join(f"functrans.scipy.stats.pareto.{n}" for n in ("cdf", "logcdf", "logpdf",
                                                                  "logsf", "pdf", "ppf",
                                                                  "sf")),
          b=(_ARRAY, "The shape parameter (positive): the survival function falls as "
                     "``y^(-b)``."))
_specific(" ".join(f"functrans.scipy.stats.truncnorm.{n}" for n in ("cdf", "logcdf",
                                                                     "logpdf", "logsf",
                                                                     "pdf", "sf")),
          a=(_ARRAY, "The lower bound of the truncation, in standard units (``(bound - "
                     "loc) / scale``); may be ``-inf``."),
          b=(_ARRAY, "The upper bound of the truncation, in standard units; may be "
                     "``inf``."))
_specific("functrans.scipy.stats.vonmises.logpdf functrans.scipy.stats.vonmises.pdf",
          kappa=(_ARRAY, "The concentration (non-negative; 0 is the uniform "
                         "distribution)."))
_specific("functrans.scipy.stats.wrapcauchy.logpdf functrans.scipy.stats.wrapcauchy.pdf",
          c=(_ARRAY, "The concentration, in (0, 1)."))
_specific("functrans.numpy.iterable", y=("object", "The object to test."))
_specific("functrans.numpy.cov",
          m=(_ARRAY, "The observations: one variable per row (per column with "
                     "``rowvar=False``)."),
          y=(_ARRAY + ", optional", "More variables, stacked after those of ``m``."))
_specific("functrans.numpy.corrcoef",
          x=(_ARRAY, "The observations: one variable per row (per column with "
                     "``rowvar=False``)."),
          y=(_ARRAY + ", optional", "More variables, stacked after those of ``x``."))
_specific("functrans.numpy.where",
          x=(_ARRAY + ", optional", "The values where ``condition`` is True."),
          y=(_ARRAY + ", optional", "The values where ``condition`` is False. Without ``x`` "
                                    "and ``y``, ``where(condition)`` is "
                                    "``nonzero(condition)``."))
_specific("functrans.numpy.histogram2d",
          x=(_ARRAY, "The first coordinates of the points."),
          y=(_ARRAY, "The second coordinates of the points."))
_specific("functrans.numpy.polyfit",
          x=(_ARRAY, "The x-coordinates of the data points."),
          y=(_ARRAY, "The y-coordinates (one column per data set for 2-D ``y``)."))
_specific("functrans.numpy.trapezoid functrans.scipy.integrate.trapezoid",
          y=(_ARRAY, "The sampled values of the integrand."),
          x=(_ARRAY + ", optional", "The sample points (default: spaced by ``dx``)."))
_specific("functrans.numpy.polyval", x=(_ARRAY, "The points at which the polynomial is "
                                                "evaluated."))
_specific("functrans.numpy.interp", x=(_ARRAY, "The x-coordinates at which to "
                                               "interpolate."))
_specific("functrans.numpy.bincount", x=(_ARRAY + " of int", "Non-negative integers to "
                                                             "count."))
_specific("functrans.numpy.choose", a=(_ARRAY + " of int", "For each element, the index of "
                                                           "the choice it takes."))
_specific("functrans.numpy.sort functrans.numpy.argsort",
          order=("None", "NumPy's field order for structured arrays, which functrans does "
                         "not have; only None is accepted."))
_specific("functrans.scipy.signal.csd",
          x=(_ARRAY, "The first signal."), y=(_ARRAY, "The second signal."))
_specific("functrans.random.permutation",
          x=("int or array_like", "An array to shuffle along ``axis``, or an int n "
                                  "(``arange(n)`` is shuffled)."))
_specific("functrans.random.orthogonal",
          m=("int, optional", "The number of columns (default ``n``): the result has "
                              "orthonormal columns."))
_specific("functrans.numpy.ravel_multi_index",
          order=("str, optional", "``'C'`` (default: the last index varies fastest) or "
                                  "``'F'`` (the first does)."))
_specific("functrans.nn.squareplus",
          b=(_ARRAY + ", optional", "The smoothness: ``(x + sqrt(x**2 + b)) / 2`` (0 gives "
                                    "``relu``)."))
_specific("functrans.nn.one_hot",
          x=(_ARRAY + " of int", "The class labels (out-of-range labels give all-zero "
                                 "vectors)."),
          axis=("int, optional", "Where the new axis of length ``num_classes`` goes "
                                 "(default: last)."))
_specific("functrans.nn.glu", axis=("int, optional", "The axis split into the two halves "
                                                      "(default: the last)."))
FAMILY["functrans.nn.initializers"]["scale"] = (
    "float, optional", "The scale of the values (a factor, or the width of the range for "
                       "``uniform``).")
_specific("functrans.nn.initializers.ones functrans.nn.initializers.zeros",
          key=("PRNG key", "Accepted, as every initializer takes one, and not used."),
          shape=("tuple of int", "The shape of the result."),
          dtype=("dtype, optional", "The dtype of the result (default float64)."))
_specific("functrans.nn.initializers.constant",
          value=("scalar or array_like", "The value every element takes (broadcast to the "
                                         "shape)."))
FAMILY["functrans.nn.initializers"].update({"key": _NOT_HERE, "value": _NOT_HERE,
                                             "query": _NOT_HERE})
FAMILY["functrans.scipy.fft"].update({
    "axis": ("int, optional", "The axis to transform (default: the last)."),
    "axes": ("sequence of int, optional", "The axes to transform (default: all, or the last "
                                          "``len(s)``)."),
})

# --- classes users construct (their constructors' parameters) -----------------------------
_specific("functrans.ShapeDtypeStruct",
          shape=("tuple of int", "The shape of the array it stands for."),
          dtype=("dtype", "The dtype of the array it stands for."),
          weak_type=("bool, optional", "Whether it stands for a weakly typed value (a Python "
                                       "scalar's, which adopts the dtype of what it is "
                                       "combined with)."))
_specific("functrans.Jaxpr",
          constvars=("list of Var", "Variables bound to the constants (a ``ClosedJaxpr``'s "
                                    "``consts``)."),
          invars=("list of Var", "The input variables."),
          eqns=("list of JaxprEqn", "The equations, in order: each applies a primitive to "
                                    "variables or literals and binds new variables."),
          outvars=("list of Var or Literal", "The outputs."),
          debug_info=("DebugInfo or None, optional", "Where the program came from: the "
                      "traced function and one name per input and output (``make_jaxpr`` "
                      "records it; ``pretty_print(arg_names=True)`` shows it)."))
_specific("functrans.ClosedJaxpr",
          jaxpr=("Jaxpr", "The program."),
          consts=("list", "The values of its ``constvars``."))
_specific("functrans.numpy.finfo functrans.numpy.iinfo",
          type_or_array=("dtype or array_like", "A dtype (float/complex for ``finfo``, "
                                                "integer for ``iinfo``) or an array or tracer "
                                                "of it."))
_specific("functrans.lax.ConvDimensionNumbers",
          lhs_spec=("tuple of int", "The input's (batch axis, feature axis, spatial axes)."),
          rhs_spec=("tuple of int", "The kernel's (output feature axis, input feature axis, "
                                    "spatial axes)."),
          out_spec=("tuple of int", "The output's (batch axis, feature axis, spatial "
                                    "axes)."))
_specific("functrans.tree_util.DictKey", key=("hashable", "The dict key."))
_specific("functrans.tree_util.SequenceKey", idx=("int", "The position in the tuple or "
                                                         "list."))
_specific("functrans.tree_util.GetAttrKey", name=("str", "The attribute's name."))
_specific("functrans.tree_util.FlattenedIndexKey",
          key=("int", "The child's position among the node's flattened children."))
_specific("functrans.tree_util.Partial",
          func=("callable", "The function (static data of the tree)."),
          **{"*args": ("pytree", "Positional arguments bound first (children of the tree)."),
             "**kw": ("pytree", "Keyword arguments bound (children of the tree).")})
_specific("functrans.tree_util.PyTreeDef",
          node_type=("type or None", "The node's type (None for a leaf)."),
          node_data=("hashable", "The node's static data (a dict's keys, a registered "
                                 "node's aux data)."),
          children=("tuple of PyTreeDef", "The structures of the node's children."))
_specific("functrans.gradcheck.Entry",
          output_index=("str", "The output element, as the report prints it "
                               "(``out[1]``)."),
          input_index=("str", "The input element (``x[0]``)."),
          numeric=("float", "The finite-difference value."),
          analytic=("float", "The value functrans's derivative gives."),
          tolerance=("float", "``atol + rtol * |numeric|`` for this entry."))
_specific("functrans.scipy.optimize.OptimizeResults",
          x=(_ARRAY, "The solution."),
          success=("bool", "Whether the method converged."),
          status=("int", "0 converged, 1 maximum iterations reached; the method-specific "
                         "codes are listed above."),
          fun=("float", "The objective's value at ``x``."),
          jac=(_ARRAY, "The objective's gradient at ``x``."),
          hess_inv=(_ARRAY + " or None", "BFGS's estimate of the inverse Hessian (None for "
                                         "L-BFGS)."),
          nfev=("int", "The number of evaluations of ``fun``."),
          njev=("int", "The number of evaluations of its gradient."),
          nit=("int", "The number of iterations."))
_specific("functrans.scipy.interpolate.RegularGridInterpolator",
          points=("tuple of array_like", "The grid: one strictly increasing 1-D array per "
                                         "leading axis of ``values``."),
          values=(_ARRAY, "The values on the grid (trailing axes are carried along)."),
          method=("str, optional", "``'linear'`` (default) or ``'nearest'``."),
          bounds_error=("bool, optional", "Only False is supported (as in JAX): points "
                                          "outside the grid give ``fill_value``."),
          fill_value=("scalar or None, optional", "The value outside the grid (NaN by "
                                                  "default); None extrapolates from the edge "
                                                  "cells."))


# --- parameters that follow JAX's signatures ------------------------------------------------
_ACCEPTED = ("Accepted for JAX's signature; functrans has one kernel for this, so the value "
             "does not change the result.")
_specific("functrans.checkpoint functrans.remat",
          static_argnames=("str or sequence of str, optional",
                           "Like ``static_argnums``, by parameter name: those arguments are "
                           "passed as they are (hashable Python values) instead of traced."))
_specific("functrans.custom_jvp functrans.custom_vjp",
          nondiff_argnames=("sequence of str, optional",
                            "Like ``nondiff_argnums``, by parameter name: arguments that get "
                            "no derivative and reach the rules as they are (functions, "
                            "Python values)."))
_specific("functrans.jit",
          donate_argnames=("str or sequence of str, optional",
                           "Like ``donate_argnums``, by parameter name. " + _ACCEPTED[:-1]
                           + " or which buffers are reused: NumPy results are new arrays."))
_specific("functrans.vmap",
          sum_match=("bool, optional",
                     "With ``out_axes=None`` for an output that does depend on the batch: "
                     "if True, that output is summed over the batch instead of refused."))
_specific("functrans.numpy.array",
          object=("array_like", "The data: an array, a nested sequence of numbers, a "
                                "scalar, or a tracer."),
          ndmin=("int, optional", "The least number of axes of the result: leading axes of "
                                  "length 1 are added up to it (default 0)."))
_specific("functrans.numpy.var functrans.numpy.std functrans.numpy.nanvar "
          "functrans.numpy.nanstd",
          mean=("array_like, optional", "The mean of ``a`` over ``axis``, if already known, "
                                        "with ``keepdims=True``'s shape: it is used instead "
                                        "of being computed again."))
_specific("functrans.numpy.take_along_axis",
          wrap_negative_indices=("bool or None, optional",
                                 "Whether negative indices count from the end (None or "
                                 "True, as NumPy); with False they are out of bounds and "
                                 "``mode`` decides what they give."))
_specific("functrans.numpy.linalg.cholesky functrans.numpy.linalg.eigh "
          "functrans.numpy.linalg.eigvalsh",
          symmetrize_input=("bool, optional",
                            "If True (default), the input is replaced by ``(a + aᴴ) / 2`` "
                            "first, so that the derivative is that of a function of "
                            "symmetric matrices; with False only one triangle is read."))
_specific("functrans.numpy.linalg.lstsq",
          numpy_resid=("bool, optional",
                       "If True, the residuals are empty when the rank is below ``N``, as "
                       "NumPy returns them (the shape then depends on a value, so not under "
                       "``jit``/``vmap``); by default they are always returned."))
_specific("functrans.numpy.linalg.slogdet",
          method=("str or None, optional", "The factorisation used: ``'lu'`` (None, the "
                                           "default) or ``'qr'``."))
_specific("functrans.numpy.linalg.svd functrans.lax.linalg.svd functrans.lax.linalg.eigh",
          subset_by_index=("(int, int) or None, optional",
                           "``(start, end)``: only the singular values (eigenvalues) of "
                           "those positions in the sorted order, and their vectors."))
_specific("functrans.lax.fori_loop",
          unroll=("int or bool or None, optional",
                  "How many iterations each step of the loop runs (with concrete bounds, "
                  "where the loop is a ``scan``); the result is the same."))
_specific("functrans.lax.mul",
          out_dtype=("dtype, optional", "The dtype of the product: both operands are "
                                        "converted to it first (None: their common "
                                        "dtype)."))
_specific("functrans.lax.expand_dims functrans.lax.squeeze",
          array=("array_like", "The operand."))
_specific("functrans.lax.linalg.eig",
          implementation=("None or str, optional", _ACCEPTED),
          use_magma=("None or bool, optional", _ACCEPTED))
_specific("functrans.lax.linalg.eigh",
          sort_eigenvalues=("bool, optional", "If True (default), eigenvalues in ascending "
                                              "order, their vectors likewise."),
          implementation=("None or str, optional", _ACCEPTED))
_specific("functrans.lax.linalg.qr",
          use_magma=("None or bool, optional", _ACCEPTED))
_specific("functrans.lax.linalg.svd",
          algorithm=("None or SvdAlgorithm, optional", _ACCEPTED))
_specific("functrans.lax.linalg.tridiagonal_solve",
          dl=(_ARRAY, "The subdiagonal, ``(..., m)``: ``dl[i] = A[i, i - 1]`` (``dl[0]`` is "
                      "not read)."),
          d=(_ARRAY, "The diagonal, ``(..., m)``."),
          du=(_ARRAY, "The superdiagonal, ``(..., m)``: ``du[i] = A[i, i + 1]`` (``du[-1]`` "
                      "is not read)."),
          b=(_ARRAY, "The right-hand sides, ``(..., m, n)``."),
          perturb_singular=("bool, optional", "If True, pivots below ``eps`` times the "
                                              "largest entry of ``U`` are moved to that size "
                                              "(a finite answer for a singular ``A``); "
                                              "False (default): nan for a singular ``A``."))
_specific("functrans.lax.linalg.tridiagonal functrans.lax.linalg.hessenberg",
          a=(_ARRAY, "The square matrix, or a stack of them on the last two axes."))
_specific("functrans.lax.linalg.householder_product functrans.lax.linalg.ormqr",
          a=(_ARRAY, "The Householder reflectors' vectors below the diagonal of its "
                     "columns, ``(..., m, n)`` (``geqrf``'s packed output)."),
          taus=(_ARRAY, "The reflectors' scalar factors, ``(..., k)``, ``k <= n``."))
_specific("functrans.lax.linalg.ormqr",
          c=(_ARRAY, "The matrix multiplied by ``Q``: ``(..., m, s)`` (``left``) or ``(..., "
                     "r, m)``."),
          left=("bool, optional", "If True (default), ``Q c``; if False, ``c Q``."),
          transpose=("bool, optional", "If True, ``Qᴴ`` (``Qᵀ`` for real arrays) instead "
                                       "of ``Q``."))
_specific("functrans.lax.linalg.cholesky_update",
          r_matrix=(_ARRAY, "The upper Cholesky factor ``R`` of ``A = Rᵀ R``, ``(..., n, "
                            "n)``."),
          w_vector=(_ARRAY, "The vector ``w`` of the update ``A + w wᵀ``, ``(..., n)``."))
_specific("functrans.lax.linalg.symmetric_product",
          a_matrix=(_ARRAY, "The matrix ``a``, ``(..., m, n)``."),
          c_matrix=(_ARRAY, "The symmetric matrix ``c``, ``(..., m, m)``."),
          alpha=("float, optional", "The factor of ``a aᵀ`` (default 1)."),
          beta=("float, optional", "The factor of ``c`` (default 0)."),
          symmetrize_output=("bool, optional", "If True, the upper triangle is the "
                                               "transpose of the lower one."))
_specific("functrans.lax.linalg.qdwh",
          is_hermitian=("bool, optional", _ACCEPTED),
          max_iterations=("int or None, optional", _ACCEPTED),
          eps=("float or None, optional", _ACCEPTED),
          dynamic_shape=("None, optional", "JAX's true shape of a padded matrix; only None "
                                           "is accepted."))
_specific("functrans.lax.linalg.schur",
          compute_schur_vectors=("bool, optional", "If True (default), ``(t, vs)``; if "
                                                   "False, ``(t,)``."),
          sort_eig_vals=("bool, optional", "Must be False (sorting is refused, as by JAX "
                                           "on CPU)."),
          select_callable=("None, optional", "Must be None (sorting is refused)."))
_specific("functrans.lax.linalg.lu_pivots_to_permutation",
          pivots=(_ARRAY, "The row swaps, ``(..., k)``, 0-based, as ``lu`` returns them."),
          permutation_size=("int", "The length of the permutation, ``>= k``."))
_specific("functrans.nn.standardize",
          algorithm=("str, optional", "``'stable'`` (default: the variance as the mean of "
                                      "squared deviations, accurate far from zero) or "
                                      "``'fast'`` (``mean(x²) - mean(x)²``, JAX's default)."))

# --- functrans.scipy.stats: the discrete and multivariate distributions, the summaries ----
_STATS = "functrans.scipy.stats"
_TRIALS = (_ARRAY, "The number of trials (``>= 0``; a real number extends the log-factorials "
                   "by ``gammaln``, as in JAX).")
_SUCCESS = (_ARRAY, "The probability of success of each trial, in [0, 1].")
_specific(f"{_STATS}.binom.logpmf {_STATS}.binom.pmf", n=_TRIALS, p=_SUCCESS)
_specific(f"{_STATS}.betabinom.logpmf {_STATS}.betabinom.pmf", n=_TRIALS,
          a=(_ARRAY, "The first shape parameter (positive) of the beta distribution of the "
                     "probability of success."),
          b=(_ARRAY, "The second shape parameter (positive) of the beta distribution of the "
                     "probability of success."))
_specific(f"{_STATS}.nbinom.logpmf {_STATS}.nbinom.pmf",
          n=(_ARRAY, "The number of successes to wait for (positive, any real number)."),
          p=(_ARRAY, "The probability of success of each trial, in (0, 1]."))
_specific(f"{_STATS}.geom.logpmf {_STATS}.geom.pmf",
          p=(_ARRAY, "The probability of success of each trial, in (0, 1]."))
_specific(f"{_STATS}.multinomial.logpmf {_STATS}.multinomial.pmf",
          x=(_ARRAY, "The counts (integers), one per category along the last axis."),
          n=(_ARRAY, "The number of draws (an integer): the sum of the counts."),
          p=(_ARRAY, "The probabilities of the categories, along the last axis."))
_specific(f"{_STATS}.dirichlet.logpdf {_STATS}.dirichlet.pdf",
          x=(_ARRAY, "The points of the simplex: the categories on the first axis (all of "
                     "them, or all but the last)."),
          alpha=(_ARRAY, "The concentration parameters (positive), one per category (1-D)."))
_NAN_POLICY = ("str, optional", "What to do with nans: only ``'propagate'`` (the default) is "
                                "supported, as in JAX.")
_specific(f"{_STATS}.mode {_STATS}.rankdata {_STATS}.sem", a=(_ARRAY, _INPUT))
_specific(f"{_STATS}.mode {_STATS}.rankdata", nan_policy=_NAN_POLICY)
_specific(f"{_STATS}.sem",
          nan_policy=("str, optional", "What to do with nans: ``'propagate'`` (the default) "
                                       "or ``'omit'`` (leave them out), as in JAX."))
_specific(f"{_STATS}.rankdata",
          method=("str, optional", "How ties rank: ``'average'`` (default), ``'min'``, "
                                   "``'max'``, ``'dense'`` or ``'ordinal'``."))
_specific(f"{_STATS}.gaussian_kde",
          dataset=(_ARRAY, "The data: ``n`` points of ``d`` dimensions, shape ``(d, n)`` (or "
                           "``(n,)`` for ``d = 1``); real."),
          bw_method=("str, scalar or callable, optional",
                     "The bandwidth factor: ``'scott'`` (default), ``'silverman'``, the factor "
                     "itself (a scalar, possibly traced), or a callable taking the estimator "
                     "and returning it."),
          weights=(_ARRAY + ", optional", "One non-negative weight per data point (``(n,)``), "
                                          "normalized to sum 1; equal weights by default."))

# --- lax's small functions (functrans/lax_extra.py, the elementwise and conversion families)
_specific("functrans.lax.reduce_precision",
          exponent_bits=("int", "The exponent bits of the narrow format (at least 1): 5 for "
                                "float16, 8 for bfloat16."),
          mantissa_bits=("int", "The explicit mantissa bits of the narrow format (at least "
                                "0): 10 for float16, 7 for bfloat16."))
_specific("functrans.lax.broadcast_like",
          like_arr=(_ARRAY, "The array whose shape ``arr`` is broadcast to."))
SPECIFIC.setdefault("functrans.lax.broadcast_shapes", {})["*shapes"] = (
    "tuple of int", "The shapes to broadcast together (at least one).")
_specific("functrans.lax.broadcast_to_rank",
          rank=("int", "The rank of the result; ``x`` of that rank or more is returned as "
                       "it is."))
_specific("functrans.lax.collapse",
          start_dimension=("int", "The first axis merged (negative values count from the "
                                  "end)."),
          stop_dimension=("int or None, optional", "The axis after the last one merged "
                                                   "(None: through the last axis)."))
_specific("functrans.lax.composite",
          decomposition=("callable", "The function that computes the composite operation "
                                     "from primitives; its keyword arguments are static "
                                     "attributes."),
          name=("str", "The composite operation's name (``\"my.op\"``)."),
          version=("int, optional", "The version of the operation's definition (0 by "
                                    "default)."))
_specific("functrans.lax.platform_dependent",
          default=("callable, optional", "The branch for a platform that has none of its "
                                         "own."))
SPECIFIC["functrans.lax.platform_dependent"]["**per_platform"] = (
    "callable", "One branch per platform name (``cpu=...``, ``cuda=...``), each called with "
                "``*args``.")
_specific("functrans.lax.rng_bit_generator",
          key=(_ARRAY, "The generator's state: ``uint32[4]`` or ``uint64[2]``."),
          algorithm=("RandomAlgorithm, optional", "The algorithm asked for; functrans draws "
                                                  "the same threefry bits for each."))
_specific("functrans.lax.rng_uniform",
          a=("scalar", "The lower bound (included); of ``b``'s dtype."),
          b=("scalar", "The upper bound (excluded); of ``a``'s dtype."))
_specific("functrans.lax.tile",
          reps=("sequence of int", "How many copies along each axis (one count per axis)."))
