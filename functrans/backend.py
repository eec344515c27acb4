"""The one place that knows NumPy from CuPy.

Everything that differs between the array libraries lives here: which module computes with
given inputs, creating arrays on the device of given inputs, scatter-add, cumulative
maximum and minimum, writeability and views, random numbers for gradient checks, and the
explicit copy to the host.  Rules, transforms and checkers never create a host array for
device inputs: they ask this module, passing ``like=`` an input whose device to use.

CuPy is optional and only imported when a CuPy array is actually seen.  Other array types
that behave like CuPy (the test suite's NumPy-backed stand-in) are registered with
``register_array_library``.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = [
    "ArrayLibrary", "register_array_library", "array_module", "library_of", "is_array",
    "is_device_array", "coerce", "asarray", "zeros", "ones", "full", "empty", "arange",
    "eye", "tri", "scatter_add", "scatter_apply", "cumulative_max", "cumulative_min",
    "is_writeable", "memory_owner", "owned", "default_rng", "to_host", "special_module",
    "triangular_solver", "triangular_multiplier", "synchronize",
]


class ArrayLibrary:
    """An array module (``numpy``, ``cupy`` or a stand-in) with the few operations that are
    spelled differently in each: ``scatter_add(target, index, updates)`` accumulates in
    place (duplicates add up), ``to_host(x)`` copies to a NumPy array, and
    ``default_rng(seed)`` makes a generator whose ``standard_normal(shape, dtype)`` gives
    arrays of this module."""

    __slots__ = ("xp", "scatter_add", "to_host", "default_rng", "has_ufunc_methods")

    def __init__(self, xp, scatter_add: Callable, to_host: Callable, default_rng: Callable,
                 has_ufunc_methods: bool):
        self.xp = xp
        self.scatter_add = scatter_add
        self.to_host = to_host
        self.default_rng = default_rng
        self.has_ufunc_methods = has_ufunc_methods

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


def _lookup(t: type) -> ArrayLibrary | None:
    library = _libraries.get(t)
    if library is None and t.__module__.startswith("cupy"):
        library = _cupy_library(t)
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
        return kind
    return NUMPY


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
    return array_module(like).asarray(x, dtype=dtype)


def zeros(shape, dtype=float, like=None):
    """Zeros of ``shape`` and ``dtype`` on the device of ``like``."""
    return array_module(like).zeros(shape, dtype)


def ones(shape, dtype=float, like=None):
    """Ones of ``shape`` and ``dtype`` on the device of ``like``."""
    return array_module(like).ones(shape, dtype)


def full(shape, fill_value, dtype=None, like=None):
    """``fill_value`` repeated to ``shape`` on the device of ``like``."""
    return array_module(like).full(shape, fill_value, dtype)


def empty(shape, dtype=float, like=None):
    """An uninitialised array of ``shape`` and ``dtype`` on the device of ``like``."""
    return array_module(like).empty(shape, dtype)


def arange(*args, dtype=None, like=None):
    """``arange(start, stop, step)`` on the device of ``like``."""
    return array_module(like).arange(*args, dtype=dtype)


def eye(n: int, m: int | None = None, k: int = 0, dtype=float, like=None):
    """The ``n x m`` identity (ones on diagonal ``k``) on the device of ``like``."""
    return array_module(like).eye(n, m, k, dtype=dtype)


def tri(n: int, m: int | None = None, k: int = 0, dtype=float, like=None):
    """Ones at and below diagonal ``k`` of an ``n x m`` array, on the device of ``like``."""
    return array_module(like).tri(n, m, k, dtype=dtype)


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
    read-only); device arrays have no such flag and are always writeable."""
    return x.flags.writeable if isinstance(x, np.ndarray) else True


def memory_owner(x):
    """The array that owns the memory of ``x`` (``x`` itself unless it is a view)."""
    base = x.base
    while base is not None and is_array(base):
        x, base = base, base.base
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
    that random directions are drawn where the arrays live."""
    return library_of(like).default_rng(seed)


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
    xp = array_module(*args)
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
