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

``install(monkeypatch)`` makes ``CudaKernel`` calls on the CuPy stand-in run so, instead of
the stand-in's equation-by-equation fallback: a jitted program's fused regions then compute
with the translated C, and the program's results can be compared with NumPy's.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile

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


def _source(kernel, symbol: str) -> str:
    """The C++ function ``symbol`` computing ``kernel`` on contiguous arrays: elementwise,
    ``symbol(inputs, outputs, n)``; a reduction, ``symbol(inputs, outputs, outer, inner)``
    reducing each run of ``inner`` elements."""
    ins = _params(kernel.in_params)
    outs = _params(kernel.out_params)
    reads = "".join(f"        const {t} {n} = static_cast<const {t} *>(ins[{i}])[k];\n"
                    for i, (t, n) in enumerate(ins))
    if kernel.kind == "elementwise":
        writes = "".join(f"        {t} &{n} = static_cast<{t} *>(outs[{j}])[k];\n"
                         for j, (t, n) in enumerate(outs))
        return (f'extern "C" void {symbol}(void **ins, void **outs, long long n) {{\n'
                f"    for (long long k = 0; k < n; ++k) {{\n{reads}{writes}"
                f"        {kernel.operation}\n    }}\n}}\n")
    (out_type, out_name), = outs
    return (f"{kernel.preamble}\n"
            f"#undef REDUCE\n#define REDUCE(a, b) ({kernel.reduce_expr})\n"
            f'extern "C" void {symbol}(void **ins, void **outs, long long outer, '
            f"long long inner) {{\n"
            f"    typedef {kernel.reduce_type} _type_reduce;\n"
            f"    for (long long o = 0; o < outer; ++o) {{\n"
            f"        _type_reduce s = _type_reduce({kernel.identity});\n"
            f"        for (long long k = o * inner; k < (o + 1) * inner; ++k) {{\n"
            f"{reads}"
            f"            _type_reduce a = static_cast<_type_reduce>({kernel.map_expr});\n"
            f"            s = REDUCE(s, a);\n        }}\n"
            f"        {out_type} &{out_name} = static_cast<{out_type} *>(outs[0])[o];\n"
            f"        {out_name} = s;\n    }}\n}}\n")  # CuPy's post-map "r0 = a", a the sum


@functools.lru_cache(maxsize=None)
def _compiled(source: str, directory: str):
    """The shared library of ``source`` (compiled once per source in ``directory``)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    path = os.path.join(directory, f"k{digest}.so")
    if not os.path.exists(path):
        cpp = os.path.join(directory, f"k{digest}.cpp")
        with open(cpp, "w") as f:
            f.write(source)
        # IEEE arithmetic as CUDA's without fast-math: no contraction of a * b + c into a
        # fused multiply-add (nvcc would contract; NVRTC's default does too: where it
        # matters the tests compare with a tolerance)
        subprocess.run(["g++", "-O0", "-ffp-contract=off", "-fno-fast-math", "-shared",
                        "-fPIC", "-o", path, cpp], check=True, capture_output=True, text=True)
    return ctypes.CDLL(path)


class Emulator:
    """Runs ``CudaKernel`` objects with the host's C++ compiler (libraries kept in a
    temporary directory for the emulator's life)."""

    def __init__(self):
        self._directory = tempfile.mkdtemp(prefix="functrans-cuda-on-cpu-")
        self.ran = {"elementwise": 0, "reduction": 0}

    def close(self):
        shutil.rmtree(self._directory, ignore_errors=True)

    def run(self, kernel, inputs: list, shape: tuple) -> tuple:
        """``kernel`` on NumPy ``inputs`` (broadcast to ``shape``, the region's): its
        outputs, as the CuPy kernel's call returns them."""
        symbol = "kernel"
        library = _compiled(_PRELUDE + _source(kernel, symbol), self._directory)
        dtypes = [np.dtype(d) for d, _ in (p.split() for p in kernel.in_params.split(","))]
        arrays = [np.ascontiguousarray(np.broadcast_to(np.asarray(x, d), shape))
                  for x, d in zip(inputs, dtypes)]
        ins = (ctypes.c_void_p * max(len(arrays), 1))(*[a.ctypes.data for a in arrays])
        self.ran[kernel.kind] += 1
        if kernel.kind == "elementwise":
            outs = [np.empty(shape, d) for d in kernel.out_dtypes]
            pointers = (ctypes.c_void_p * len(outs))(*[o.ctypes.data for o in outs])
            getattr(library, symbol)(ins, pointers, ctypes.c_longlong(int(np.prod(shape))))
            return tuple(outs)
        keep = len(shape) - len(kernel.axes)
        assert tuple(kernel.axes) == tuple(range(keep, len(shape))), (kernel.axes, shape)
        out = np.empty(shape[:keep], kernel.out_dtypes[0])
        pointers = (ctypes.c_void_p * 1)(out.ctypes.data)
        getattr(library, symbol)(ins, pointers, ctypes.c_longlong(int(np.prod(shape[:keep]))),
                                 ctypes.c_longlong(int(np.prod(shape[keep:]))))
        return (out,)


def install(monkeypatch, emulator: Emulator, to_host, to_device) -> None:
    """Makes ``CudaKernel`` calls run on ``emulator``, their inputs copied to the host with
    ``to_host`` and their outputs back with ``to_device`` (the CuPy stand-in's)."""
    def call(kernel, *args):
        *inputs, shape = args
        host = [to_host(x) if hasattr(x, "shape") and not isinstance(x, np.ndarray)
                else np.asarray(x) for x in inputs]
        return tuple(to_device(o) for o in emulator.run(kernel, host, tuple(shape)))

    monkeypatch.setattr(codegen.CudaKernel, "__call__", call)
