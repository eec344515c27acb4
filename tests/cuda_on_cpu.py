"""Running functrans's generated CuPy kernels on the CPU: their CUDA C compiled by the host's
C++ compiler, so that what the kernels compute is tested without a GPU.

A kernel's source (``codegen.CudaKernel``) is CUDA C++ of a narrow kind: declarations of
scalars of C's arithmetic types, C's operators, casts, the conditional operator, CUDA's math
functions (whose C++ overloads by argument type are the C++ library's in ``<cmath>``) and
``__longlong_as_double``.  Here each kernel's operation (or, for a reduction, its map
function, reduce expression and identity) is put in a plain loop over the elements, as
CuPy's generated kernel puts it in a loop over a GPU's threads, and compiled with ``g++``.
Only the order of a reduction's additions differs (CuPy's is a tree, this loop's is
sequential), and the math library's last bits.

``kernel_classes(...)`` gives stand-ins for CuPy's two kernel classes that run so: set as
the CuPy stand-in's attributes, they make ``CudaKernel`` call them as it calls CuPy's
(instead of the stand-in's equation-by-equation fallback), so a jitted program's fused
regions compute with the translated C, and its results can be compared with NumPy's.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading

import numpy as np

from functrans.interpreters import codegen

_PRELUDE = r"""
#include <cmath>
#include <cstring>
using namespace std;
#define __device__ static inline
static inline double __longlong_as_double(long long bits) {
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}
"""


def unavailable() -> str | None:
    """None where kernels can run here (a C++ compiler), else why not."""
    return None if shutil.which("g++") else "no C++ compiler (g++) on this machine"


def _params(text: str) -> list:
    """``"float64 x0, bool x1"`` -> [(C type, name), ...]."""
    out = []
    for part in text.split(","):
        dtype, name = part.split()
        out.append((codegen._C_TYPES[np.dtype(dtype).name], name))
    return out


def _source(spec: dict, symbol: str) -> str:
    """The C++ function ``symbol`` computing a kernel (``spec``: the arguments of CuPy's
    kernel class) on contiguous arrays: elementwise, ``symbol(inputs, outputs, n)``; a
    reduction, ``symbol(inputs, outputs, outer, inner)`` reducing each run of ``inner``
    elements."""
    ins = _params(spec["in_params"])
    outs = _params(spec["out_params"])
    reads = "".join(f"        const {t} {n} = static_cast<const {t} *>(ins[{i}])[k];\n"
                    for i, (t, n) in enumerate(ins))
    if "operation" in spec:
        writes = "".join(f"        {t} &{n} = static_cast<{t} *>(outs[{j}])[k];\n"
                         for j, (t, n) in enumerate(outs))
        return (f'extern "C" void {symbol}(void **ins, void **outs, long long n) {{\n'
                f"    for (long long k = 0; k < n; ++k) {{\n{reads}{writes}"
                f"        {spec['operation']}\n    }}\n}}\n")
    (out_type, out_name), = outs
    return (f"{spec['preamble']}\n"
            f"#define REDUCE(a, b) ({spec['reduce_expr']})\n"
            f"#define POST_MAP(a) ({spec['post_map_expr']})\n"
            f'extern "C" void {symbol}(void **ins, void **outs, long long outer, '
            f"long long inner) {{\n"
            f"    typedef {spec['reduce_type']} _type_reduce;\n"
            f"    for (long long o = 0; o < outer; ++o) {{\n"
            f"        _type_reduce s = _type_reduce({spec['identity']});\n"
            f"        for (long long k = o * inner; k < (o + 1) * inner; ++k) {{\n"
            f"{reads}"
            f"            _type_reduce a = static_cast<_type_reduce>({spec['map_expr']});\n"
            f"            s = REDUCE(s, a);\n        }}\n"
            f"        {out_type} &{out_name} = static_cast<{out_type} *>(outs[0])[o];\n"
            f"        POST_MAP(s);\n    }}\n}}\n")


@functools.lru_cache(maxsize=None)
def _compiled(source: str, directory: str):
    """The shared library of ``source`` (compiled once per source in ``directory``)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    path = os.path.join(directory, f"k{digest}.so")
    if not os.path.exists(path):
        # each caller compiles into its own files, and the library appears under its name
        # whole (dask's threads may ask for one kernel at once)
        own = os.path.join(directory, f"k{digest}-{os.getpid()}-{threading.get_ident()}")
        with open(own + ".cpp", "w") as f:
            f.write(source)
        # IEEE arithmetic as CUDA's without fast-math: no contraction of a * b + c into a
        # fused multiply-add (nvcc would contract; NVRTC's default does too: where it
        # matters the tests compare with a tolerance)
        subprocess.run(["g++", "-O0", "-ffp-contract=off", "-fno-fast-math", "-shared",
                        "-fPIC", "-o", own + ".so", own + ".cpp"], check=True,
                       capture_output=True, text=True)
        os.replace(own + ".so", path)
    return ctypes.CDLL(path)


def kernel_spec(kernel) -> dict:
    """The arguments CuPy's kernel class is given for ``kernel`` (a ``CudaKernel``)."""
    if kernel.kind == "elementwise":
        return dict(in_params=kernel.in_params, out_params=kernel.out_params,
                    operation=kernel.operation)
    return dict(in_params=kernel.in_params, out_params=kernel.out_params,
                map_expr=kernel.map_expr, reduce_expr=kernel.reduce_expr,
                post_map_expr="r0 = a", identity=kernel.identity,
                reduce_type=kernel.reduce_type, preamble=kernel.preamble)


def _symbol(spec: dict) -> str:
    return "k" + hashlib.sha256(repr(sorted(spec.items())).encode()).hexdigest()[:16]


class Emulator:
    """Runs kernels with the host's C++ compiler (libraries kept in a temporary directory
    for the emulator's life) and counts those it ran."""

    def __init__(self):
        self._directory = tempfile.mkdtemp(prefix="functrans-cuda-on-cpu-")
        self._functions: dict = {}  # symbol -> the compiled function
        self.ran = {"elementwise": 0, "reduction": 0}

    def close(self):
        shutil.rmtree(self._directory, ignore_errors=True)

    def precompile(self, specs: list) -> None:
        """Compiles the kernels ``specs`` in one library: one C++ compilation instead of one
        each (the compiler's start and ``<cmath>`` are most of a small kernel's time)."""
        units = {}
        for spec in specs:
            symbol = _symbol(spec)
            if symbol not in self._functions and symbol not in units:
                units[symbol] = (f"#undef REDUCE\n#undef POST_MAP\nnamespace {symbol}_unit {{\n"
                                 f"{_source(spec, symbol)}}}\n")
        if units:
            library = _compiled(_PRELUDE + "".join(units.values()), self._directory)
            self._functions.update((symbol, getattr(library, symbol)) for symbol in units)

    def _function(self, spec: dict):
        symbol = _symbol(spec)
        if symbol not in self._functions:
            self._functions[symbol] = getattr(
                _compiled(_PRELUDE + _source(spec, symbol), self._directory), symbol)
        return self._functions[symbol]

    @staticmethod
    def _inputs(spec: dict, inputs: list, shape: tuple) -> tuple:
        dtypes = [np.dtype(p.split()[0]) for p in spec["in_params"].split(",")]
        arrays = [np.ascontiguousarray(np.broadcast_to(np.asarray(x, d), shape))
                  for x, d in zip(inputs, dtypes)]
        return arrays, (ctypes.c_void_p * max(len(arrays), 1))(*[a.ctypes.data
                                                                  for a in arrays])

    def elementwise(self, spec: dict, inputs: list, shape: tuple) -> list:
        """An ``ElementwiseKernel`` of ``spec`` on NumPy ``inputs`` broadcast to ``shape``:
        its outputs."""
        kernel = self._function(spec)
        arrays, pointers = self._inputs(spec, inputs, shape)
        outs = [np.empty(shape, np.dtype(p.split()[0]))
                for p in spec["out_params"].split(",")]
        kernel(pointers, (ctypes.c_void_p * len(outs))(*[o.ctypes.data for o in outs]),
               ctypes.c_longlong(int(np.prod(shape))))
        self.ran["elementwise"] += 1
        return outs

    def reduction(self, spec: dict, inputs: list, axes: tuple) -> np.ndarray:
        """A ``ReductionKernel`` of ``spec`` on NumPy ``inputs`` (of one shape) over
        ``axes`` (trailing ones: the only ones functrans's kernels reduce)."""
        kernel = self._function(spec)
        shape = np.broadcast_shapes(*[np.shape(x) for x in inputs])
        keep = len(shape) - len(axes)
        assert sorted(a % max(len(shape), 1) for a in axes) == list(range(keep, len(shape)))
        arrays, pointers = self._inputs(spec, inputs, shape)
        out = np.empty(shape[:keep], np.dtype(spec["out_params"].split()[0]))
        kernel(pointers, (ctypes.c_void_p * 1)(out.ctypes.data),
               ctypes.c_longlong(int(np.prod(shape[:keep]))),
               ctypes.c_longlong(int(np.prod(shape[keep:]))))
        self.ran["reduction"] += 1
        return out


def kernel_classes(emulator: Emulator, to_host, to_device) -> tuple:
    """Stand-ins for ``cupy.ElementwiseKernel`` and ``cupy.ReductionKernel`` (their
    constructors' arguments, their calls' conventions) that run on ``emulator``, copying
    the device arrays' data with ``to_host`` and the results back with ``to_device``: set
    as the CuPy stand-in's attributes, they make its fused regions run the way they run
    on CuPy, through ``CudaKernel``'s own calls."""

    def host(x):
        if isinstance(x, np.ndarray):  # as CuPy's kernels refuse them (0-d ones too)
            raise TypeError(f"a CuPy kernel was given a NumPy array (shape {x.shape}, "
                            f"{x.dtype}): copy it to the device or pass a scalar")
        return x if np.ndim(x) == 0 and not hasattr(x, "shape") else to_host(x)

    class ElementwiseKernel:
        def __init__(self, in_params, out_params, operation, name="kernel", **options):
            self.spec = dict(in_params=in_params, out_params=out_params,
                             operation=operation)
            self.nin = len(in_params.split(","))

        def __call__(self, *args):
            inputs, outs = args[:self.nin], args[self.nin:]
            assert len(outs) == len(self.spec["out_params"].split(",")), "outputs given"
            shape = tuple(outs[0].shape)
            for out, value in zip(outs, emulator.elementwise(
                    self.spec, [host(x) for x in inputs], shape)):
                out[...] = to_device(value)
            return outs[0] if len(outs) == 1 else tuple(outs)

    class ReductionKernel:
        def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr,
                     identity, name="reduce_kernel", reduce_type=None, reduce_dims=True,
                     preamble="", **options):
            assert reduce_type is not None  # CuPy's default (the input's type): not used
            self.spec = dict(in_params=in_params, out_params=out_params, map_expr=map_expr,
                             reduce_expr=reduce_expr, post_map_expr=post_map_expr,
                             identity=identity, reduce_type=reduce_type, preamble=preamble)

        def __call__(self, *inputs, axis=None):
            shape = np.broadcast_shapes(*[np.shape(x) for x in inputs])
            axes = tuple(range(len(shape))) if axis is None else tuple(np.atleast_1d(axis))
            return to_device(emulator.reduction(self.spec, [host(x) for x in inputs], axes))

    return ElementwiseKernel, ReductionKernel


def install_on_the_standin() -> Emulator | None:
    """With ``FUNCTRANS_CUDA_ON_CPU=1`` (and a C++ compiler), the CuPy stand-in's kernel
    classes for the whole test session: ``FUNCTRANS_CUDA_ON_CPU=1 FUNCTRANS_FUSION=1 pytest
    tests/test_standin.py`` then runs every device test with jit's fused regions computed
    by their CUDA C, as tests/test_cupy.py runs them on a GPU.  The emulator's own copies
    are not counted as transfers (a GPU's kernels make none).  None otherwise."""
    if os.environ.get("FUNCTRANS_CUDA_ON_CPU") != "1":
        return None
    reason = unavailable()
    if reason:
        raise RuntimeError(f"FUNCTRANS_CUDA_ON_CPU=1: {reason}")
    import cupy_standin
    emulator = Emulator()
    elementwise, reduction = kernel_classes(
        emulator, lambda x: x._data, lambda v: cupy_standin.ndarray._new(np.asarray(v), None))
    cupy_standin.ElementwiseKernel = elementwise
    cupy_standin.ReductionKernel = reduction
    return emulator
