"""Segment reductions, as JAX's ``jax.ops``: ``segment_sum``, ``segment_prod``,
``segment_max`` and ``segment_min`` combine the rows of ``data`` that share a segment id.

Each is one scatter (add, mul, max, min) of ``data`` into an array of ``num_segments``
rows holding the reduction's identity, so derivatives (of ``data``) and batching (of
``data`` and of ``segment_ids``) are the scatters' own.  Ids out of range are dropped
(``mode=None`` or "drop"; negative ids are out of range too) or clamped (``mode="clip"``).
Empty segments hold the identity: 0, 1, the lowest value (-inf) and the highest (+inf).

>>> import numpy as np
>>> from functrans import ops
>>> ops.segment_sum(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 0, 2, 1]))
array([3., 4., 3.])
"""
from __future__ import annotations

import numpy as np

from functrans import backend, lax
from functrans.core import Tracer
from functrans.numpy._util import arg, dtype_of, shape_of
from functrans.primitives import shape as shape_ops
from functrans.primitives.gather import mode_name

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


def _num_segments(name: str, segment_ids, num_segments) -> int:
    if num_segments is not None:
        if isinstance(num_segments, Tracer):
            raise TypeError(f"{name}: num_segments must be a concrete int (it is the shape "
                            "of the result), not a traced value")
        return int(num_segments)
    if isinstance(segment_ids, Tracer):
        raise TypeError(f"{name}: with traced segment_ids, pass num_segments (the result's "
                        "shape cannot depend on their values)")
    ids = backend.to_host(segment_ids)
    return int(ids.max()) + 1 if ids.size else 0


def _identity(name: str, dtype: np.dtype):
    if name == "segment_sum":
        return 0
    if name == "segment_prod":
        return 1
    low = name == "segment_max"
    if dtype.kind in "fc":
        return -np.inf if low else np.inf
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if low else info.max
    return not low  # booleans: max starts at False, min at True


_SCATTERS = {"segment_sum": lax.scatter_add, "segment_prod": lax.scatter_mul,
             "segment_max": lax.scatter_max, "segment_min": lax.scatter_min}


def _segment(name: str, data, segment_ids, num_segments, mode):
    data = arg(data)
    if not isinstance(segment_ids, Tracer) and not backend.is_array(segment_ids):
        segment_ids = np.asarray(segment_ids)
    if dtype_of(segment_ids).kind not in "iu":
        raise TypeError(f"{name}: segment_ids must be integers, got {dtype_of(segment_ids)}")
    rows = shape_of(data)[:1]
    if len(shape_of(segment_ids)) != 1 or shape_of(segment_ids) != rows:
        raise ValueError(f"{name}: segment_ids must be 1-D with one id per row of data "
                         f"(shape {shape_of(data)}), got shape {shape_of(segment_ids)}")
    key = mode_name(mode)
    if key not in (None, "drop", "fill", "fill_or_drop", "clip", "promise_in_bounds"):
        raise ValueError(f"{name}: mode={mode!r} is not one of 'drop', 'fill', 'clip' or "
                         "'promise_in_bounds' (or a GatherScatterMode)")
    n = _num_segments(name, segment_ids, num_segments)
    dtype = dtype_of(data)
    init = backend.full((n,) + tuple(shape_of(data)[1:]), _identity(name, dtype), dtype,
                        like=data)  # made on the data's device
    positions = shape_ops.expand_dims(segment_ids, (1,))
    clamp = key in ("clip", "promise_in_bounds") and n > 0  # (no segment to clamp into)
    return _SCATTERS[name](init, positions, data, mode="clip" if clamp else "drop")


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """The sum of the rows of ``data`` in each segment: ``out[s] = sum of data[i] for
    segment_ids[i] == s``.  ``num_segments`` (needed when ``segment_ids`` are traced)
    defaults to ``max(segment_ids) + 1``; ``indices_are_sorted``, ``unique_indices`` and
    ``bucket_size`` are accepted and change nothing.

    >>> import numpy as np
    >>> from functrans import ops
    >>> ops.segment_sum(np.ones((3, 2)), np.array([1, 1, 5]), num_segments=3)
    array([[0., 0.],
           [2., 2.],
           [0., 0.]])
    """
    return _segment("segment_sum", data, segment_ids, num_segments, mode)


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False,
                 unique_indices=False, bucket_size=None, mode=None):
    """The product of the rows of ``data`` in each segment (1 for an empty one); arguments
    as for ``segment_sum``.

    >>> import numpy as np
    >>> from functrans import ops
    >>> ops.segment_prod(np.array([2.0, 3.0, 4.0]), np.array([0, 0, 2]))
    array([6., 1., 4.])
    """
    return _segment("segment_prod", data, segment_ids, num_segments, mode)


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """The maximum of the rows of ``data`` in each segment (-inf, or the lowest integer, for
    an empty one); ties share the derivative.  Arguments as for ``segment_sum``.

    >>> import numpy as np
    >>> from functrans import ops
    >>> ops.segment_max(np.array([2.0, 3.0, 4.0]), np.array([0, 0, 2]))
    array([  3., -inf,   4.])
    """
    return _segment("segment_max", data, segment_ids, num_segments, mode)


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """The minimum of the rows of ``data`` in each segment (+inf, or the highest integer,
    for an empty one); ties share the derivative.  Arguments as for ``segment_sum``.

    >>> import numpy as np
    >>> from functrans import ops
    >>> ops.segment_min(np.array([2.0, 3.0, 4.0]), np.array([0, 0, 2]))
    array([ 2., inf,  4.])
    """
    return _segment("segment_min", data, segment_ids, num_segments, mode)
