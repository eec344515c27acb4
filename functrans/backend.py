"""The one place that knows NumPy from CuPy.

Everything that differs between the array libraries lives here: which module computes with
given inputs, creating arrays on the device of given inputs, scatter-add, cumulative
maximum and minimum, writeability and views, random numbers for gradient checks, and the
explicit copy to the host.  Rules, transforms and checkers never create a host array for
device inputs: they ask this module, passing ``like=`` an input whose device to use.

CuPy is optional and only imported when a CuPy array is actually seen.  Other array types
that behave like CuPy (the test suite's NumPy-backed stand-in) are registered with
``register_array_library``.

``dask.array`` is the third library, registered the same way when a dask array is first
seen (importing functrans never imports dask).  It is *lazy*: its arrays are task graphs,
so operations build graphs and compute nothing, results are handed out as plain
``dask.array.Array``s, and nothing is ever written in place.  The array's ``_meta`` (a
NumPy or CuPy array of no elements) says where its chunks live (``chunk_library``).
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import math
from typing import Any, Callable, Iterator

import numpy as np

__all__ = [
    "ArrayLibrary", "register_array_library", "array_module", "library_of", "is_array",
    "is_device_array", "is_mutable", "is_lazy", "coerce", "asarray", "zeros", "ones", "full",
    "empty", "arange", "eye", "tri", "copy", "ascontiguous", "scatter_add", "scatter_apply",
    "cumulative_max", "cumulative_min", "is_writeable", "memory_owner", "owned",
    "default_rng", "LazyGenerator", "to_host", "special_module", "linalg_kernel", "lapack_kernel",
    "triangular_solver", "triangular_multiplier",
    "synchronize", "ArrayLibraryError", "ChunkedAxisError", "UnknownChunkSizesError",
    "MixedArrayLibrariesError", "check_known_chunks", "map_chunked",
    "map_elementwise",
]


class ArrayLibrary:
    """An array module (``numpy``, ``cupy`` or a stand-in) with the few operations that are
    spelled differently in each: ``scatter_add(target, index, updates)`` accumulates in
    place (duplicates add up), ``to_host(x)`` copies to a NumPy array, and
    ``default_rng(seed)`` makes a generator whose ``standard_normal(shape, dtype)`` gives
    arrays of this module.

    ``lazy`` libraries (dask) build task graphs: their arrays are immutable values, never
    written in place, and handed out as they are (no subclass with ``.at``)."""

    __slots__ = ("xp", "scatter_add", "to_host", "default_rng", "has_ufunc_methods", "lazy")

    def __init__(self, xp, scatter_add: Callable, to_host: Callable, default_rng: Callable,
                 has_ufunc_methods: bool, lazy: bool = False):
        self.xp = xp
        self.scatter_add = scatter_add
        self.to_host = to_host
        self.default_rng = default_rng
        self.has_ufunc_methods = has_ufunc_methods
        self.lazy = lazy

    def __repr__(self):
        return f"ArrayLibrary({self.xp.__name__})"


def _numpy_scatter_add(target, index, updates) -> None:
    """``np.add.at(target, index, updates)``, through ``np.bincount`` of the flat positions
    where that is faster (floating targets receiving many updates: several times faster
    than ``add.at``, and summed in float64)."""
    index = index if isinstance(index, tuple) else (index,)
    kind = target.dtype.kind
    if (kind not in "fc" or not target.size
            or 8 * np.size(updates) < target.size or target.dtype.itemsize > 16):
        np.add.at(target, index, updates)
        return
    k = len(index)
    rest = int(np.prod(target.shape[k:], dtype=np.int64))
    shape = np.broadcast_shapes(*[np.shape(i) for i in index])
    updates = np.broadcast_to(updates, shape + target.shape[k:])
    rows = np.ravel_multi_index([np.broadcast_to(i, shape) for i in index], target.shape[:k])
    positions = (rows.reshape(-1, 1) * rest + np.arange(rest)).reshape(-1)
    flat = updates.reshape(-1)
    parts = [flat.real, flat.imag] if kind == "c" else [flat]
    sums = [np.bincount(positions, part, minlength=target.size) for part in parts]
    total = sums[0] if kind != "c" else sums[0] + 1j * sums[1]
    target += total.reshape(target.shape).astype(target.dtype, copy=False)


NUMPY = ArrayLibrary(np, _numpy_scatter_add, np.asarray, np.random.default_rng,
                     has_ufunc_methods=True)

#: array type -> its library, for the device array types seen so far or registered
_libraries: dict[type, ArrayLibrary] = {}


def register_array_library(array_type: type, library: ArrayLibrary) -> None:
    """Make ``array_type`` a device array type computed on with ``library``.  If the type
    has ``view(type=...)`` and can be subclassed (as ``cupy.ndarray`` can), functrans hands
    out its results as a subclass with ``.at`` (``array_types.device_result_type``)."""
    _libraries[array_type] = library
    _kinds.clear()


def _cupy_library(array_type: type) -> ArrayLibrary | None:
    if not array_type.__module__.startswith("cupy"):
        return None
    import cupy
    import cupyx
    library = ArrayLibrary(cupy, cupyx.scatter_add, cupy.asnumpy, cupy.random.default_rng,
                           has_ufunc_methods=False)
    register_array_library(cupy.ndarray, library)
    return library


def _dask_library(array_type: type) -> ArrayLibrary | None:
    # A dask array exists, so dask is imported already: this import costs nothing.
    import dask.array as da
    if not issubclass(array_type, da.Array):
        return None
    library = ArrayLibrary(da, _lazy_scatter_add, _dask_to_host, _dask_default_rng,
                           has_ufunc_methods=False, lazy=True)
    register_array_library(da.Array, library)
    return library


def _lazy_scatter_add(target, index, updates) -> None:
    raise TypeError("backend scatters write in place, and dask arrays are immutable task "
                    "graphs: the scatter primitives run on dask arrays chunk by chunk through "
                    "the core-axes table (functrans.primitives.chunked)")


def _dask_to_host(x):
    return to_host(x.compute())


def _dask_default_rng(seed):
    import dask.array as da
    return da.random.default_rng(seed)


def _lookup(t: type) -> ArrayLibrary | None:
    library = _libraries.get(t)
    if library is None:
        module = t.__module__
        if module.startswith("cupy"):
            library = _cupy_library(t)
        elif module.startswith("dask."):
            library = _dask_library(t)
    return library


#: type -> its library, _HOST for host values, or _WITNESS for types that name the array
#: behind them (tracers): classified once per type, since array_module runs in every impl.
_kinds: dict = {}
_HOST, _WITNESS = object(), object()


def _kind(t: type):
    kind = _kinds.get(t)
    if kind is None:
        kind = _lookup(t) or (_WITNESS if hasattr(t, "device_witness") else _HOST)
        _kinds[t] = kind
    return kind


def _library_of(args) -> ArrayLibrary:
    found = first = None
    for x in args:
        t = type(x)
        if t is np.ndarray:
            continue
        kind = _kinds.get(t) or _kind(t)
        if kind is _HOST:
            continue
        if kind is _WITNESS:
            witness = x.device_witness()
            if witness is None or type(witness) is np.ndarray:
                continue
            kind = _kind(type(witness))
            if kind is _HOST or kind is _WITNESS:
                continue
            x = witness
        if found is None:
            found, first = kind, x
        elif kind is not found:
            raise MixedArrayLibrariesError(
                f"arrays of two libraries in one operation: a {_describe(first)} and a "
                f"{_describe(x)}; no library computes with both. Move one to the other's "
                "library first (dask.array.from_array(x) makes a dask array of a CuPy one). "
                "Nothing was computed.")
    return found or NUMPY


def _describe(x) -> str:
    return (f"{type(x).__module__}.{type(x).__name__} of shape {getattr(x, 'shape', ())} "
            f"({_kind(type(x)).xp.__name__})")


def library_of(*args) -> ArrayLibrary:
    """The library of the first device array among ``args`` (looking through tracers at the
    arrays behind them), else NumPy's."""
    return _library_of(args)


def array_module(*args):
    """The array module (``numpy``, ``cupy``, ...) that computes with ``args``."""
    for x in args:  # the common case inline: every impl calls this (3% of a scan's time)
        if type(x) is not np.ndarray and (_kinds.get(type(x)) or _kind(type(x))) is not _HOST:
            return _library_of(args).xp
    return np


def is_array(x) -> bool:
    """Whether ``x`` is a NumPy array or a device array."""
    return isinstance(x, np.ndarray) or _lookup(type(x)) is not None


def is_mutable(x) -> bool:
    """Whether ``x`` is an array of one or more axes that may be written in place (after a
    copy the caller owns): NumPy and device arrays, not lazy ones (dask's graphs)."""
    if isinstance(x, np.ndarray):
        return x.ndim > 0
    library = _lookup(type(x))
    return library is not None and not library.lazy and x.ndim > 0


def is_lazy(x) -> bool:
    """Whether ``x`` is an array of a lazy library (a dask array)."""
    return _kind_is_lazy(type(x))


def is_device_array(x) -> bool:
    """Whether ``x`` is an array of a device library (CuPy or a registered stand-in)."""
    return not isinstance(x, np.ndarray) and _lookup(type(x)) is not None


def coerce(xp, *args) -> tuple:
    """``args`` ready for ``xp``: with a device module, host (NumPy) arrays among them, such
    as the constants that rules create, are moved to the device; with NumPy nothing
    changes.  NumPy scalars stay scalars, and 0-d host arrays (the 0-d ``Array`` results
    of functrans's own calls) become them: device kernels take scalars as arguments, so
    copying them to the device first would be a wasted transfer."""
    if xp is np:
        return args
    return tuple((xp.asarray(a) if a.ndim else _ndarray_getitem(a, ()))
                 if isinstance(a, np.ndarray) else a for a in args)


_ndarray_getitem = np.ndarray.__getitem__  # a 0-d array's scalar, for subclasses too


def asarray(x, dtype=None, like=None):
    """``x`` as an array on the device of ``like`` (NumPy when ``like`` is None or a host
    value).  A host value is copied to the device once; a device array stays put."""
    out = array_module(like).asarray(x, dtype=dtype)
    if dtype is not None and out.dtype != dtype:  # dask before 2024.9 keeps a dask array's
        out = out.astype(dtype)                   # own dtype
    return out


def _placement(like, shape, square: bool = False, meta: str = "meta") -> dict:
    """The keywords placing a new array of ``shape`` beside ``like``: none for NumPy and
    CuPy; for a lazy library (dask) its chunk policy (``like``'s chunks along the axes
    where the shapes agree, chunks as long as like's along the others that like splits,
    dask's "auto" along the rest; for a shape of another rank, ``chunk_hints``'s chunks
    along the axes of their lengths) and, for chunks that are not NumPy arrays, ``like``'s
    meta, as the keyword ``meta`` (dask's ``zeros``, ``ones``, ``full`` and ``empty``
    take it; their ``like=`` makes chunks of functions on CuPy) or ``like`` (``tri``,
    ``arange``).
    ``square``: dask takes one chunk size for both axes (eye, tri)."""
    like = _concrete_like(like)
    if like is None or not _kind_is_lazy(type(like)):
        return {}
    shape = tuple(shape) if np.ndim(shape) else (int(shape),)
    chunks: Any = "auto"
    if tuple(like.shape) == shape:
        chunks = like.chunks
    elif like.ndim == len(shape):  # like's chunks along the axes of like's size
        chunks = tuple(c if n == s else _chunk_length(c, s)
                       for c, n, s in zip(like.chunks, like.shape, shape))
    hints = _CHUNK_HINTS.get()
    if chunks == "auto" and hints and any(n in hints for n in shape):
        # (a gradient's zeros of the data's shape: the data's chunks, as broadcasts take)
        chunks = tuple(hints.get(n, "auto") for n in shape)
    if square:  # one int; and none beyond the short side (dask's eye drops blocks then)
        chunks = min(*shape, max(like.chunksize) if chunks != "auto" else 4096) or 1
    chunk_meta = like._meta
    if type(chunk_meta) is np.ndarray:
        return {"chunks": chunks}
    return {"chunks": chunks, meta: chunk_meta}


#: axis length -> the chunks along it of the lazy arrays a gradient is taken at
_CHUNK_HINTS: contextvars.ContextVar = contextvars.ContextVar("functrans_chunk_hints",
                                                             default=None)


@contextlib.contextmanager
def chunk_hints(values) -> Iterator[None]:
    """Inside the block, a lazy broadcast to a new axis (``broadcast_chunks``) takes the
    chunks that a dask array among ``values`` has along an axis of that length, so that it
    meets them without a rechunk: a gradient's seed, broadcast back over the rows of the
    data, arrives in the rows' chunks.  Chunks never change values, only the graph."""
    hints: dict = {}
    for x in values:
        if is_lazy(x):
            for n, c in zip(x.shape, x.chunks):
                if len(c) > 1 and not math.isnan(n):
                    hints.setdefault(int(n), tuple(int(k) for k in c))
    token = _CHUNK_HINTS.set({**(_CHUNK_HINTS.get() or {}), **hints} if hints
                             else _CHUNK_HINTS.get())
    try:
        yield
    finally:
        _CHUNK_HINTS.reset(token)


def broadcast_chunks(chunks: tuple, shape: tuple):
    """The chunks for broadcasting a lazy array of ``chunks`` (as many axes as ``shape``,
    size 1 where it is broadcast) to ``shape``: its own along its axes, ``chunk_hints``'s
    along the broadcast ones; None where no hint applies (dask's one chunk per new axis)."""
    hints = _CHUNK_HINTS.get()
    if not hints:
        return None
    out, hinted = [], False
    for c, n in zip(chunks, shape):
        if sum(c) == n:
            out.append(c)
        elif n in hints:
            out.append(hints[n])
            hinted = True
        else:
            out.append((n,))
    return tuple(out) if hinted else None


def lazy_broadcast(x, shape: tuple, dims: tuple, chunks: tuple | None = None):
    """A lazy ``x`` broadcast to ``shape``, its axis ``i`` becoming axis ``dims[i]``
    (``lax.broadcast_in_dim``), in ``chunks`` (default: ``x``'s own along its axes, one
    chunk along the others).  Blockwise layers only, one task per chunk, each a view of one
    chunk of ``x`` (of one element for a gradient's seed): unlike
    ``dask.array.broadcast_to``, whose graph is a materialised layer, dask's optimizer
    fuses them into the elementwise operation that reads them, so the broadcast costs no
    task and no array of its own.  The tasks call NumPy's ``reshape`` and ``broadcast_to``
    (CuPy's for CuPy chunks, through ``__array_function__``): the workers need no
    functrans for them."""
    from dask.array.utils import meta_from_array

    shape, dims = tuple(int(n) for n in shape), tuple(int(d) for d in dims)
    own = dict(zip(dims, x.chunks))
    chunks = tuple(own[d] if d in own and sum(own[d]) == n
                   else (chunks[d] if chunks is not None else (n,))
                   for d, n in enumerate(shape))
    index = tuple(range(len(shape)))
    meta = meta_from_array(x._meta, ndim=len(shape))
    if dims != index[len(index) - len(dims):]:  # size-1 axes where x has none, in place
        # (NumPy's reshape of each chunk, its shape from a chunk-shape argument that spans
        # every axis; not a blockwise with new_axes: dask's culling loses blocks of a chain
        # from one.  Trailing axes need none, a 0-d x above all: broadcast_to adds leading
        # axes itself)
        expanded = tuple(own.get(d, (1,)) for d in index)
        x = _chunk_shaped(np.reshape, x, dims, expanded, meta)
        dims = index
    return _chunk_shaped(np.broadcast_to, x, dims, chunks, meta)


def lazy_squeeze(x, axes: tuple):
    """A lazy ``x`` without its ``axes`` (of length 1): NumPy's ``reshape`` of each chunk, a
    blockwise layer that dask's optimizer fuses into the tasks around it (a squeeze that
    contracts the dropped axes, like ``map_blocks(..., drop_axis=)``, makes a layer that
    fuses with none; see ``_dropped_labels``)."""
    from dask.array.utils import meta_from_array

    axes = tuple(a % x.ndim for a in axes)
    dims = _dropped_labels(x, axes)
    if dims is None:
        return _contracting_squeeze(x, axes)
    chunks = tuple(c for d, c in enumerate(x.chunks) if d not in axes)
    return _chunk_shaped(np.reshape, x, dims, chunks, meta_from_array(x._meta, ndim=len(chunks)))


def lazy_reduce(func, x, axes: tuple, dtype):
    """``func(chunk, axis=axes)`` (NumPy's ``sum``, ``max``, ``min``) of a lazy ``x`` whose
    ``axes`` are one chunk each: a blockwise layer that fuses (see ``lazy_squeeze``), or
    None where it would contract."""
    import dask.array
    from dask.array.utils import meta_from_array
    from dask.base import tokenize
    from dask.blockwise import blockwise
    from dask.highlevelgraph import HighLevelGraph

    axes = tuple(a % x.ndim for a in axes)
    dims = _dropped_labels(x, axes)
    if dims is None:
        return None
    chunks = tuple(c for d, c in enumerate(x.chunks) if d not in axes)
    name = f"{getattr(func, '__name__', 'reduce')}-{tokenize(func, x.name, axes)}"
    layer = blockwise(func, name, tuple(range(len(chunks))), x.name, dims,
                      numblocks={x.name: x.numblocks}, axis=axes)
    graph = HighLevelGraph.from_collections(name, layer, dependencies=[x])
    return dask.array.Array(graph, name, chunks, dtype=dtype,
                            meta=meta_from_array(x._meta, ndim=len(chunks), dtype=dtype))


def _dropped_labels(x, axes: tuple) -> tuple | None:
    """The labels of ``x``'s axes in a graph-level blockwise whose result drops ``axes``
    (one block each) without contracting them: each kept axis its place in the result,
    the dropped ones that of a kept axis of one block, else (one dropped axis; dask from
    2024.12) the first kept axis, along whose blocks their one block broadcasts.  None
    where neither holds (dask's blockwise loses blocks where several axes broadcast, or
    before 2024.12)."""
    kept = [d for d in range(x.ndim) if d not in axes]
    place = {d: q for q, d in enumerate(kept)}
    single = [place[d] for d in kept if x.numblocks[d] == 1]
    if not single and not (kept and len(axes) == 1 and _broadcasts_one_block()):
        return None
    label = (single or [0])[0]
    return tuple(place.get(d, label) for d in range(x.ndim))


@functools.cache
def _broadcasts_one_block() -> bool:
    """Whether dask's blockwise broadcasts one block of an argument along an index of many
    when that index repeats within the argument (dask before 2024.12 loses blocks)."""
    import dask
    return tuple(int(p) for p in dask.__version__.split(".")[:2]) >= (2024, 12)


def _contracting_squeeze(x, axes: tuple):
    """``lazy_squeeze`` as NumPy's ``squeeze`` of each chunk, the dropped axes contracted
    (a layer of its own, or dask's squeeze for a result without axes)."""
    from dask.array.core import blockwise
    from dask.base import tokenize
    if len(axes) == x.ndim:
        return array_module(x).squeeze(x, axis=axes)
    index = tuple(f"i{j}" for j in range(x.ndim))
    return blockwise(np.squeeze, tuple(i for j, i in enumerate(index) if j not in axes), x,
                     index, axis=axes, concatenate=True, dtype=x.dtype, meta=x._meta,
                     name=f"squeeze-{tokenize(x, axes)}")


def _chunk_shaped(func, x, dims: tuple, chunks: tuple, meta):
    """The dask array of ``chunks`` whose block ``b`` is ``func(block of x, shape of block
    b)``, ``x``'s axis ``i`` along axis ``dims[i]``: one blockwise layer (dask's
    graph-level ``blockwise``, which takes the chunk shapes as a dependency computed from
    the block index; ``dask.array.blockwise`` only does from dask 2025 on)."""
    import dask.array
    from dask.base import tokenize
    from dask.blockwise import blockwise
    from dask.highlevelgraph import HighLevelGraph
    from dask.layers import ArrayChunkShapeDep

    index = tuple(range(len(chunks)))
    name = f"{func.__name__}-{tokenize(func, x.name, dims, chunks)}"
    layer = blockwise(func, name, index, x.name, dims, ArrayChunkShapeDep(chunks), index,
                      numblocks={x.name: x.numblocks})
    graph = HighLevelGraph.from_collections(name, layer, dependencies=[x])
    return dask.array.Array(graph, name, chunks, dtype=x.dtype, meta=meta)


def _chunk_length(like_chunks: tuple, size: int):
    """The chunk length along an axis of ``size`` beside one that ``like_chunks`` split:
    as long as like's longest chunk (at most 1000 chunks), so that a result indexed by
    like's positions (a gather's transpose) is split as finely as its operand; dask's
    "auto" where like is one chunk."""
    if len(like_chunks) < 2:
        return "auto"
    return max(max(like_chunks), -(-size // 1000), 1)


def _concrete_like(like):
    if like is not None and hasattr(type(like), "device_witness"):
        like = like.device_witness()
    return like


def _kind_is_lazy(t: type) -> bool:
    kind = _kind(t)
    return isinstance(kind, ArrayLibrary) and kind.lazy


def zeros(shape, dtype=float, like=None):
    """Zeros of ``shape`` and ``dtype`` on the device of ``like``."""
    return array_module(like).zeros(shape, dtype=dtype, **_placement(like, shape))


def ones(shape, dtype=float, like=None):
    """Ones of ``shape`` and ``dtype`` on the device of ``like``."""
    return array_module(like).ones(shape, dtype=dtype, **_placement(like, shape))


def full(shape, fill_value, dtype=None, like=None):
    """``fill_value`` repeated to ``shape`` on the device of ``like``.  A lazy (dask) 0-d
    ``fill_value`` stays lazy: broadcast, not read."""
    if _kind_is_lazy(type(fill_value)):
        shape = tuple(shape) if np.ndim(shape) else (int(shape),)
        chunks = _placement(like if is_lazy(like) else fill_value, shape).get("chunks")
        out = array_module(fill_value).broadcast_to(
            fill_value.astype(dtype or fill_value.dtype), shape)
        return out if chunks is None else out.rechunk(chunks)
    return array_module(like).full(shape, fill_value, dtype=dtype, **_placement(like, shape))


def empty(shape, dtype=float, like=None):
    """An uninitialised array of ``shape`` and ``dtype`` on the device of ``like``."""
    return array_module(like).empty(shape, dtype=dtype, **_placement(like, shape))


def arange(*args, dtype=None, like=None):
    """``arange(start, stop, step)`` on the device of ``like``."""
    xp = array_module(like)
    like = _concrete_like(like)
    if not _kind_is_lazy(type(like)):
        return xp.arange(*args, dtype=dtype)
    if type(like._meta) is np.ndarray:
        return xp.arange(*args, dtype=dtype, chunks="auto")
    return xp.arange(*args, dtype=dtype, chunks="auto", like=like._meta)


def eye(n: int, m: int | None = None, k: int = 0, dtype=float, like=None):
    """The ``n x m`` identity (ones on diagonal ``k``) on the device of ``like``."""
    # By keyword: dask's eye takes chunks second, so eye(n, m) would be n x n.
    placement = _placement(like, (n, n if m is None else m), square=True, meta="like")
    if "like" in placement:  # dask's eye makes NumPy chunks only: tri's difference
        xp = array_module(like)
        return (xp.tri(n, M=m, k=k, dtype=dtype, **placement)
                - xp.tri(n, M=m, k=k - 1, dtype=dtype, **placement))
    return array_module(like).eye(n, M=m, k=k, dtype=dtype, **placement)


def tri(n: int, m: int | None = None, k: int = 0, dtype=float, like=None):
    """Ones at and below diagonal ``k`` of an ``n x m`` array, on the device of ``like``."""
    return array_module(like).tri(n, M=m, k=k, dtype=dtype, **_placement(
        like, (n, n if m is None else m), square=True, meta="like"))


def copy(x):
    """An array equal to ``x`` that the caller may write into: a copy for NumPy and device
    arrays; for a lazy (dask) array a new array object over the same graph, whose
    item assignments replace its own graph, never ``x``'s."""
    if _kind_is_lazy(type(x)):
        return x.copy()
    return array_module(x).array(x, copy=True)


def ascontiguous(x):
    """``x`` in C order (``ascontiguousarray``); a lazy array has no memory layout and is
    returned as it is."""
    if _kind_is_lazy(type(x)):
        return x
    return array_module(x).ascontiguousarray(x)


def scatter_add(target, index, updates) -> None:
    """``target[index] += updates`` in place, with repeated indices accumulating."""
    library_of(target).scatter_add(target, index, updates)


#: scatter_apply's operations: the NumPy ufunc whose ``.at`` applies each, None for "set"
_SCATTER_UFUNCS: dict[str, Any] = {"set": None, "add": "add", "multiply": "multiply",
                                   "minimum": "minimum", "maximum": "maximum"}


def scatter_apply(op: str, target, index: tuple, updates, keep=None) -> None:
    """``target[index] = op(target[index], updates)`` in place, where repeated positions
    combine all their updates (``op`` is "add", "multiply", "minimum" or "maximum"), or for
    ``op="set"`` the last of them in row-major order of ``index`` wins.  ``index`` is a
    tuple of equally shaped integer arrays in range for the first axes of ``target``;
    ``keep``, a boolean array of that shape, drops the entries where it is False.

    NumPy uses its ufuncs' ``.at`` (and sequential assignment for "set"); a library without
    ufunc methods (CuPy) sorts the entries by position, combines each run of equal positions
    with a log-depth segmented scan, and writes once per position, with no host
    synchronisation."""
    if op not in _SCATTER_UFUNCS:
        raise ValueError(f"scatter_apply: unknown operation {op!r}; use one of "
                         f"{', '.join(_SCATTER_UFUNCS)}")
    library = library_of(target)
    if library.lazy:
        _lazy_scatter_add(target, index, updates)
    xp = library.xp
    if library.has_ufunc_methods:
        if keep is not None:
            index, updates = tuple(i[keep] for i in index), updates[keep]
        if op == "set":
            target[index] = updates
        elif op == "add":
            library.scatter_add(target, index, updates)
        else:
            getattr(xp, _SCATTER_UFUNCS[op]).at(target, index, updates)
        return
    k = len(index)
    rest = target.shape[k:]
    if op == "add":
        if keep is not None:
            keep = keep.reshape(keep.shape + (1,) * len(rest))
            updates = xp.where(keep, updates, xp.zeros((), dtype=updates.dtype))
        library.scatter_add(target, index, updates)
        return
    size = int(np.prod(target.shape[:k], dtype=np.int64))
    n = int(np.prod(np.shape(index[0]), dtype=np.int64)) if k else 0
    if n == 0:
        return
    flat = xp.zeros(np.shape(index[0]), dtype=np.int64)
    for i, d in zip(index, target.shape[:k]):
        flat = flat * d + i.astype(np.int64)
    flat = flat.reshape(n)
    updates = updates.reshape((n,) + rest)
    if keep is not None:  # dropped entries go to a spare row past the end
        flat = xp.where(keep.reshape(n), flat, size)
    # Unique keys (position, then entry number) make any sort stable.
    order = xp.argsort(flat * n + xp.arange(n, dtype=np.int64))
    flat, updates = flat[order], updates[order]
    if op != "set":
        combine = getattr(xp, _SCATTER_UFUNCS[op])
        shift = 1
        while shift < n:  # after this step entry i combines its run's last 2*shift entries
            same = (flat[shift:] == flat[:-shift]).reshape((n - shift,) + (1,) * len(rest))
            updates[shift:] = xp.where(same, combine(updates[shift:], updates[:-shift]),
                                       updates[shift:])
            shift *= 2
    last = xp.concatenate([flat[:-1] != flat[1:], xp.ones(1, dtype=bool)])
    rows = xp.where(last, flat, size)  # each position's run writes once, from its last entry
    grid = xp.concatenate([target.reshape((size,) + rest),
                           xp.zeros((1,) + rest, dtype=target.dtype)])
    grid[rows] = updates if op == "set" else combine(grid[rows], updates)
    target[...] = grid[:size].reshape(target.shape)


def _cumulative_extremum(x, axis: int, pick: str):
    library = library_of(x)
    xp = library.xp
    if library.lazy:  # dask's cumulative reduction: each chunk's, then the running carry
        dtype = x.dtype
        if dtype.kind in "fc":
            ident = -np.inf if pick == "maximum" else np.inf
        elif dtype.kind == "b":
            ident = pick != "maximum"
        else:
            ident = np.iinfo(dtype).min if pick == "maximum" else np.iinfo(dtype).max

        def chunk(block, axis, dtype=None):
            return _cumulative_extremum(block, axis, pick)
        return xp.reductions.cumreduction(chunk, getattr(np, pick), ident, x, axis=axis,
                                          dtype=dtype)
    if library.has_ufunc_methods:
        return getattr(xp, pick).accumulate(x, axis)
    # CuPy has no ufunc.accumulate: a log-depth prefix scan (Hillis-Steele) instead.
    x = xp.moveaxis(x, axis, -1).copy()
    n, shift = x.shape[-1], 1
    while shift < n:
        x[..., shift:] = getattr(xp, pick)(x[..., shift:], x[..., :-shift])
        shift *= 2
    return xp.moveaxis(x, -1, axis)


def cumulative_max(x, axis: int):
    """The running maximum of ``x`` along ``axis``."""
    return _cumulative_extremum(x, axis, "maximum")


def cumulative_min(x, axis: int):
    """The running minimum of ``x`` along ``axis``."""
    return _cumulative_extremum(x, axis, "minimum")


def is_writeable(x) -> bool:
    """Whether the caller may write into ``x``: NumPy's flag (broadcast views are
    read-only); device arrays have no such flag and are always writeable (lazy ones are
    never written: every operation on them makes a new graph)."""
    return x.flags.writeable if isinstance(x, np.ndarray) else True


def memory_owner(x):
    """The array that owns the memory of ``x`` (``x`` itself unless it is a view)."""
    base = getattr(x, "base", None)  # dask arrays have no memory of their own
    while base is not None and is_array(base):
        x, base = base, getattr(base, "base", None)
    return x


def owned(values: list, others=(), check_aliasing: bool = True) -> list:
    """``values`` as arrays the caller may freely write to.  A read-only NumPy array (a
    broadcast view, say) is copied; with ``check_aliasing``, so is an array sharing memory
    with one of ``others`` (the caller's inputs) or with an earlier entry of ``values``.
    Tracers, scalars and other values pass through unchanged."""
    seen = {id(memory_owner(x)) for x in others if is_array(x)} if check_aliasing else ()
    out = []
    for v in values:
        if is_array(v):
            if not is_writeable(v):
                v = v.copy()
            elif check_aliasing and id(memory_owner(v)) in seen:
                v = v.copy()
            if check_aliasing:
                seen.add(id(memory_owner(v)))  # type: ignore[union-attr]  # a set here
        out.append(v)
    return out


def default_rng(seed: Any, like=None):
    """A random generator of the library of ``like`` (NumPy's when ``like`` is None), so
    that random directions are drawn where the arrays live: for a lazy (dask) ``like``, a
    ``LazyGenerator`` drawing on the library of its chunks."""
    library = library_of(like)
    if library.lazy:
        return LazyGenerator(seed, getattr(like, "_meta", None))
    return library.default_rng(seed)


class LazyGenerator:
    """Random draws as dask arrays whose chunks are of the library of ``meta`` (a chunk
    type's empty array; None: NumPy), built without computing anything: with NumPy chunks
    dask's own generator's; with CuPy chunks each chunk drawn by CuPy's generator on the
    device, seeded by ``seed`` and the chunk's position (dask's generator would make NumPy
    chunks, to be copied over)."""

    def __init__(self, seed, meta=None):
        import dask.array as da
        self.seed, self.meta = seed, meta
        self._numpy = da.random.default_rng(seed)

    def standard_normal(self, shape, dtype=np.float64, chunks="auto"):
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        if self.meta is None or library_of(self.meta).xp is np:
            return self._numpy.standard_normal(shape, dtype=dtype, chunks=chunks)
        import dask.array as da
        meta = library_of(self.meta).xp.empty((0,) * len(shape), dtype=dtype)
        places = da.empty(shape, dtype=dtype, chunks=chunks, meta=meta)
        return da.map_blocks(_standard_normal_block, places, int(self.seed), dtype=dtype,
                             meta=meta)


def _standard_normal_block(place, seed: int, block_info=None):
    """Standard normal draws of ``place``'s shape and dtype on its library, seeded by
    ``seed`` and the chunk's position (``LazyGenerator``'s chunks)."""
    position = block_info[0]["chunk-location"]
    state = np.random.SeedSequence([seed % 2**63, *position]).generate_state(2, np.uint32)
    rng = library_of(place).default_rng(int(state[0]) << 32 | int(state[1]))
    return rng.standard_normal(place.shape, place.dtype)


def to_host(x):
    """An explicit copy of ``x`` to a NumPy array (for reports and comparisons); NumPy
    arrays and scalars are returned as NumPy arrays without a copy."""
    return library_of(x).to_host(x)


def synchronize(x) -> None:
    """Wait until the device work producing ``x`` is done (CuPy: the current stream of
    ``x``'s device); nothing for host arrays and for libraries without streams.  Nothing is
    copied."""
    if not is_device_array(x):
        return
    cuda = getattr(library_of(x).xp, "cuda", None)
    if cuda is None:
        return
    device = getattr(x, "device", None)
    if device is not None and hasattr(device, "__enter__"):
        with device:
            cuda.get_current_stream().synchronize()
    else:
        cuda.get_current_stream().synchronize()


_NO_SCIPY = ("{what} needs SciPy's special-function kernels, and SciPy is not installed; "
             'install it with: pip install "functrans[scipy]"')


def special_module(*args, what: str = "this special function"):
    """The module of special-function kernels (``erf``, ``gammaln``, ...) that computes with
    ``args``: ``scipy.special`` for NumPy arrays, ``cupyx.scipy.special`` for CuPy arrays,
    the ``special`` attribute of a registered stand-in's module.  Imported only when first
    needed, so that functrans imports without SciPy; ``what`` names the caller in the
    error raised when SciPy is missing."""
    library = library_of(*args)
    if library.lazy:
        return _LazySpecial(_chunk_special(args, what))
    xp = library.xp
    try:
        if xp is np:
            import scipy.special as special
        elif xp.__name__ == "cupy":
            import cupyx.scipy.special as special
        else:
            special = xp.special
    except ImportError:
        raise ImportError(_NO_SCIPY.format(what=what)) from None
    return special


def _chunk_special(args, what: str):
    """The special-function module of the chunks of the lazy arrays among ``args``."""
    metas = [x._meta for x in args if _kind_is_lazy(type(x))]
    return special_module(*metas, what=what)


class _LazySpecial:
    """A lazy library's ``special`` namespace: each function applied chunk by chunk
    (``dask.array.elemwise``, broadcasting as ufuncs do) with the kernels of the chunks'
    own library, so results stay lazy."""

    def __init__(self, chunk_special):
        self._chunk_special = chunk_special
        self.__name__ = f"dask.array of {chunk_special.__name__}"

    def __getattr__(self, name: str):
        from dask.array.core import elemwise
        kernel = getattr(self._chunk_special, name)
        outputs = getattr(kernel, "nout", 1)

        def apply(*args, **kwargs):
            if outputs == 1:
                return elemwise(kernel, *args, **kwargs)
            return tuple(elemwise(functools.partial(_output_of, kernel, i), *args, **kwargs)
                         for i in range(outputs))
        apply.__name__ = name
        return apply


def _output_of(kernel, i: int, *args, **kwargs):
    return kernel(*args, **kwargs)[i]


def linalg_kernel(name: str, *args, what: str):
    """SciPy's ``scipy.linalg.<name>`` (a LAPACK driver NumPy lacks: ``schur``,
    ``hessenberg``, ``solve_sylvester``) for the arrays ``args``: ``scipy.linalg``'s for
    NumPy arrays, ``cupyx.scipy.linalg``'s for CuPy arrays, the ``scipy.linalg`` namespace
    of a registered stand-in's module.  SciPy is imported only when first needed (functrans
    imports without it).  Raises ``ImportError`` when SciPy is missing and
    ``NotImplementedError`` when the arrays' library has no such kernel (CuPy has no Schur
    or Hessenberg decomposition: the arrays are not copied to the host behind the caller's
    back); ``what`` names the caller in both."""
    xp = array_module(*args)
    try:
        if xp is np:
            import scipy.linalg as module
        elif xp.__name__ == "cupy":
            import cupyx.scipy.linalg as module
        else:
            module = xp.scipy.linalg
    except (ImportError, AttributeError):
        if xp is np:
            raise ImportError(f"{what} needs SciPy's {name} (LAPACK), and SciPy is not "
                              'installed; install it with: pip install "functrans[scipy]"'
                              ) from None
        module = None
    kernel = getattr(module, name, None)
    if kernel is None:
        where = getattr(module, "__name__", f"{xp.__name__} (no scipy.linalg)")
        raise NotImplementedError(f"{what}: {where} has no {name} kernel for {xp.__name__} "
                                  "arrays; compute it on NumPy arrays")
    return kernel


def lapack_kernel(name: str, *args, what: str):
    """LAPACK's ``name`` (``gehrd``, ``sytrd``, ``hetrd`` without the type prefix) for the
    NumPy arrays ``args``, through ``scipy.linalg.lapack.get_lapack_funcs``: the packed
    Householder forms JAX returns and NumPy does not.  Raises ``ImportError`` when SciPy is
    missing and ``NotImplementedError`` for other arrays' libraries (CuPy calls no such
    routine; the arrays are not copied to the host behind the caller's back); ``what``
    names the caller in both."""
    xp = array_module(*args)
    if xp is not np:
        raise NotImplementedError(f"{what}: {xp.__name__} has no LAPACK {name} kernel; "
                                  "compute it on NumPy arrays")
    try:
        from scipy.linalg.lapack import get_lapack_funcs
    except ImportError:
        raise ImportError(f"{what} needs LAPACK's {name} through SciPy, and SciPy is not "
                          'installed; install it with: pip install "functrans[scipy]"'
                          ) from None
    return get_lapack_funcs((name,), args)[0]


#: SciPy's solve_triangular once looked up (None: not yet; False: SciPy is missing).
_scipy_solve_triangular = None


def triangular_solver(*args):
    """LAPACK's triangular solver (``trsm``) for ``args``, or None where there is none to
    call: ``scipy.linalg.solve_triangular`` for NumPy arrays when SciPy is installed (NumPy
    has no triangular solver), ``cupyx.scipy.linalg.solve_triangular`` for CuPy arrays, and
    ``scipy.linalg.solve_triangular`` of a registered stand-in's module when it has one.
    Each is called as ``solve(a, b, trans=..., lower=..., unit_diagonal=...,
    check_finite=False)`` on one ``(m, m)`` matrix ``a``.  Callers fall back on a method of
    their own on None: functrans works without SciPy."""
    global _scipy_solve_triangular
    xp = array_module(*args)
    if xp is np:
        if _scipy_solve_triangular is None:
            try:
                from scipy.linalg import solve_triangular
            except ImportError:
                solve_triangular = False
            _scipy_solve_triangular = solve_triangular
        return _scipy_solve_triangular or None
    if xp.__name__ == "cupy":
        from cupyx.scipy.linalg import solve_triangular
        return solve_triangular
    scipy_namespace = getattr(xp, "scipy", None)
    return None if scipy_namespace is None else scipy_namespace.linalg.solve_triangular


#: dtype character -> BLAS's trmm from SciPy (False: SciPy is missing).
_scipy_trmm: dict = {}


def triangular_multiplier(*args):
    """BLAS's triangular matrix product (``trmm``, half the work of a general product) for
    ``args``, or None where there is none to call (not NumPy arrays, or no SciPy).  The
    result is called as ``multiply(a, b, left_side, lower, trans)``: ``op(tri(a)) @ b``
    (``left_side``) or ``b @ op(tri(a))``, ``op`` being the identity, the transpose or the
    conjugate transpose for ``trans`` 0, 1 or 2, on one ``(m, m)`` matrix ``a``."""
    if array_module(*args) is not np:
        return None
    dtype = np.result_type(*args)
    trmm = _scipy_trmm.get(dtype.char)
    if trmm is None:
        try:
            from scipy.linalg.blas import get_blas_funcs
        except ImportError:
            trmm = False
        else:
            trmm = get_blas_funcs("trmm", dtype=dtype)
        _scipy_trmm[dtype.char] = trmm
    if trmm is False:
        return None

    def multiply(a, b, left_side: bool, lower: bool, trans: int):
        if trans != 2 and a.flags.c_contiguous and not a.flags.f_contiguous:
            # BLAS reads a column-major a: aᵀ is one, without the copy (10% of the time).
            a, lower, trans = a.T, not lower, 1 - trans
        return trmm(1.0, a, b, side=0 if left_side else 1, lower=int(lower), trans_a=trans)
    return multiply


# ------------------------------------------------------------------------------------------
# Lazy (dask) arrays: operations that need whole axes in one chunk
# ------------------------------------------------------------------------------------------


class ArrayLibraryError(Exception):
    """Input that the array libraries cannot compute with as given (the base of the errors
    below); the interpreter adds the name of the operation that met it."""


class ChunkedAxisError(ArrayLibraryError, ValueError):
    """An operation on a dask array needs an axis whole in one chunk (a sort along it, a
    matrix decomposition over it), and gathering it would make chunks bigger than dask's
    ``array.chunk-size``: nothing has been computed.  Rechunk the array so that the axis is
    one chunk (splitting the others more finely), or raise the limit with
    ``dask.config.set({"array.chunk-size": ...})``."""


class UnknownChunkSizesError(ArrayLibraryError, ValueError):
    """A dask array whose chunk sizes are unknown (NaN, after boolean indexing or
    ``unique``) reached an operation that needs its shape: nothing has been computed.  Call
    ``x.compute_chunk_sizes()`` first (one compute), or avoid data-dependent shapes."""


class MixedArrayLibrariesError(ArrayLibraryError, TypeError):
    """An operation received arrays of two device libraries (a dask array and a CuPy
    array, say), which no single library computes with.  Move one to the other's library
    first (``dask.array.from_array`` of the CuPy array, for example)."""


def _limit_bytes() -> int:
    import dask
    from dask.utils import parse_bytes
    return parse_bytes(dask.config.get("array.chunk-size"))


def check_known_chunks(x, what: str) -> None:
    """Raise ``UnknownChunkSizesError`` (naming ``what``) if the lazy array ``x`` has chunks
    of unknown size."""
    if any(math.isnan(d) for d in x.shape):
        raise UnknownChunkSizesError(
            f"{what}: the dask array {x!r} has chunks of unknown size (shape {x.shape}), "
            "and this operation needs its shape; call x.compute_chunk_sizes() first (one "
            "compute) or avoid data-dependent shapes. Nothing was computed.")


def map_chunked(what: str, fun: Callable, args: list, in_core: list, out_shapes: list,
                out_dtypes: list, out_core: list) -> list:
    """``fun`` (a NumPy/CuPy function of the chunks) applied to lazy arrays chunk by chunk
    over their *batch* axes, each array's *core* axes (``in_core[i]``, a tuple of axes of
    ``args[i]``) gathered into one chunk first.  Every array has the same number of batch
    axes (its axes outside the core, in order), of equal sizes; so does each result ``j``,
    of shape ``out_shapes[j]`` and dtype ``out_dtypes[j]`` with core axes ``out_core[j]``.
    ``fun`` returns the list of results of its block.  Arguments that are not arrays are
    passed to every call as they are.

    Gathering a core axis that spans several chunks raises ``ChunkedAxisError`` when a
    gathered chunk would exceed dask's ``array.chunk-size``, before anything is computed
    (``what`` names the operation)."""
    import dask.array as da
    from dask.array.core import blockwise

    arrays = [i for i, a in enumerate(args) if is_array(a)]
    lazy = [args[i] for i in arrays if _kind_is_lazy(type(args[i]))]
    meta = lazy[0]._meta
    chunk_xp = array_module(meta)
    limit = _limit_bytes()
    pairs: list = []
    nbatch = None
    for i, a in enumerate(args):
        if i not in arrays:
            pairs += [a, None]
            continue
        if not _kind_is_lazy(type(a)):
            a = da.from_array(a, chunks=-1, meta=meta)
        check_known_chunks(a, what)
        core = tuple(d % a.ndim for d in in_core[i]) if a.ndim else ()
        batch = [d for d in range(a.ndim) if d not in core]
        if nbatch is None:
            nbatch = len(batch)
        assert len(batch) == nbatch, (what, i, a.shape, core)
        split = [d for d in core if a.numblocks[d] > 1]
        if split:
            gathered = a.dtype.itemsize * math.prod(
                a.shape[d] if d in core else max(a.chunks[d]) for d in range(a.ndim))
            if gathered > limit:
                d = split[0]
                raise ChunkedAxisError(
                    f"{what}: axis {d} of the dask array of shape {a.shape} (chunks "
                    f"{a.chunks}, dtype {a.dtype}) has {a.numblocks[d]} chunks, and {what} "
                    f"needs it whole in one chunk: that chunk would hold {gathered} bytes, "
                    f"over dask's array.chunk-size of {limit} bytes. Rechunk so that axis {d} "
                    f"is one chunk (x.rechunk({{{d}: -1}}), splitting other axes finer), or "
                    "raise the limit with dask.config.set({'array.chunk-size': ...}). "
                    "Nothing was computed.")
            a = a.rechunk({d: -1 for d in core})
        pairs += [a, _indices(a.ndim, core, i)]
    nbatch = nbatch or 0
    batch_index = tuple(f"b{k}" for k in range(nbatch))

    def block(*blocks):
        return tuple(fun(*blocks))

    tuples = blockwise(block, batch_index, *pairs, concatenate=True, dtype=object,
                       meta=np.empty((0,) * nbatch, dtype=object))
    outs = []
    for j, (shape, dtype, core) in enumerate(zip(out_shapes, out_dtypes, out_core)):
        core = tuple(sorted(d % len(shape) for d in core)) if shape else ()
        batch_chunks = iter(tuples.chunks)
        chunks = tuple((shape[d],) if d in core else next(batch_chunks)
                       for d in range(len(shape)))
        outs.append(tuples.map_blocks(
            _pick, j, new_axis=list(core), chunks=chunks, dtype=dtype,
            meta=chunk_xp.empty((0,) * len(shape), dtype=dtype)))
    return outs


def map_elementwise(what: str, fun: Callable, args, dtype):
    """The elementwise NumPy/CuPy function ``fun`` applied to each chunk of the lazy arrays
    among ``args`` (broadcast together, as ufuncs do), giving ``dtype``; ``what`` names the
    tasks."""
    from dask.array.core import elemwise
    from dask.base import tokenize
    return elemwise(fun, *args, dtype=dtype, name=f"{what}-{tokenize(fun, *args)}")


def _indices(ndim: int, core: tuple, i: int) -> tuple:
    """blockwise's index of an argument: batch axes ``b0, b1, ...`` in order, each core
    axis its own name (gathered into the one chunk it has)."""
    names, k = [], 0
    for d in range(ndim):
        if d in core:
            names.append(f"c{i}_{d}")
        else:
            names.append(f"b{k}")
            k += 1
    return tuple(names)


def _pick(results, j: int):
    return results[j]
