"""Compiling functrans's generated CuPy kernels with NVRTC, as CuPy would, without a GPU.

CI has no GPU, so the fused regions' CuPy kernels (``codegen.CudaKernel``) never run there:
the CuPy stand-in runs their equations one by one.  What can still be checked is that
their CUDA source compiles.  Where CuPy and NVRTC are installed (CuPy imports without a
driver; NVRTC is a library: the ``nvrtc`` extra installs both wheels), this module
builds each kernel's complete source with CuPy's own code generation (the ``extern "C"
__global__`` function that ``ElementwiseKernel`` or ``ReductionKernel`` wraps around the
kernel's operation, CuPy's headers before it) and compiles it with NVRTC for a Hopper GPU
(``compute_90``, to PTX: no device is asked which architecture it has).

CuPy's code generation is reached through its private functions
(``cupy._core._kernel._get_elementwise_kernel_code`` and the reduction's counterpart);
``unavailable()`` says why the check cannot run (no CuPy, no NVRTC, or a CuPy whose
private functions changed), and the tests skip with that reason.
"""
from __future__ import annotations

import functools

import numpy as np

#: the architecture compiled for: Hopper (the H100 and H200)
ARCH = "90"


@functools.lru_cache(maxsize=None)
def unavailable() -> str | None:
    """None where kernels can be compiled here, else the reason they cannot."""
    try:
        import cupy  # noqa: F401
        from cupy._core import _kernel, _reduction, core  # noqa: F401
        from cupy.cuda import compiler
    except Exception as e:  # noqa: BLE001 (any failure to import: no check here)
        return f"CuPy cannot be imported: {e}"
    needed = [(_kernel, "_get_elementwise_kernel_code"), (_kernel, "_ArgInfo"),
              (_kernel, "_TypeMap"), (_reduction, "_ReductionKernel_get_cached_function_code"),
              (core, "_cupy_header_list"), (core, "assemble_cupy_compiler_options"),
              (compiler, "compile_using_nvrtc"), (compiler, "_get_arch_for_options_for_nvrtc")]
    missing = [f"{m.__name__}.{name}" for m, name in needed if not hasattr(m, name)]
    if missing:
        return f"this CuPy ({cupy.__version__}) lacks {', '.join(missing)}"
    try:
        _compile("extern \"C\" __global__ void probe(double *x) { x[0] = exp(x[0]); }",
                 syntax_only=False)
    except Exception as e:  # noqa: BLE001 (no NVRTC library, or it failed to load)
        return f"NVRTC cannot compile here: {type(e).__name__}: {str(e)[:200]}"
    return None


def _compile(code: str, syntax_only: bool | None = None) -> None:
    """Compiles ``code`` as CuPy's ``compile_with_cache`` would: CuPy's headers first, its
    compiler options, for ``ARCH`` (CuPy asks the device for its architecture; here the
    answer is given).  With ``syntax_only`` (by default, where NVRTC has the option) NVRTC
    stops after C++'s checks, before writing PTX: what a kernel's source can get wrong
    (an undefined name, no function of those argument types, a bad conversion) is found
    there, in a fifth of the time."""
    from cupy._core import core
    from cupy.cuda import compiler

    if syntax_only is None:
        syntax_only = _has_syntax_only()
    source = "".join(f"#include <{h}>\n" for h in core._cupy_header_list) + code
    options = core.assemble_cupy_compiler_options(())
    if syntax_only:
        options += ("-fdevice-syntax-only",)
    original = compiler._get_arch_for_options_for_nvrtc
    compiler._get_arch_for_options_for_nvrtc = lambda arch=None: (
        f"-arch=compute_{ARCH}", "ptx")
    try:
        compiler.compile_using_nvrtc(source, options, arch=ARCH)
    finally:
        compiler._get_arch_for_options_for_nvrtc = original


@functools.lru_cache(maxsize=None)
def _has_syntax_only() -> bool:
    """Whether this NVRTC takes ``-fdevice-syntax-only`` (CUDA 12.4's NVRTC and later)."""
    try:
        _compile("__device__ int probe() { return 1; }", syntax_only=True)
    except Exception:  # noqa: BLE001 (an NVRTC that refuses the option)
        return False
    return True


def kernel_code(kernel, ndim: int, name: str | None = None) -> str:
    """The CUDA source CuPy generates for ``kernel`` (a ``codegen.CudaKernel``) called on
    arrays of ``ndim`` dimensions (its reduction reducing ``len(kernel.axes)`` of them),
    its ``__global__`` function named ``name`` (by default the kernel's name)."""
    name = name or kernel.name
    import cupy
    from cupy._core import _carray, _kernel, _reduction, _scalar

    ndarray, indexer = 1, 2  # CuPy's argument kinds (_kernel.pxd's _ArgKind)
    scalar = 3

    def array(dtype, n):
        return _kernel._ArgInfo(ndarray, cupy.ndarray, np.dtype(dtype), n, True, True)

    def index(n):
        return _kernel._ArgInfo(indexer, _carray.Indexer, None, n, True, True)

    if kernel.kind == "elementwise":
        wrapper = cupy.ElementwiseKernel(kernel.in_params, kernel.out_params,
                                         kernel.operation, kernel.name)
        infos = tuple(array(p.dtype, ndim) for p in wrapper.params[:-1]) + (index(ndim),)
        return _kernel._get_elementwise_kernel_code(
            infos, _kernel._TypeMap(()), wrapper.params, kernel.operation, name, "")
    wrapper = cupy.ReductionKernel(kernel.in_params, kernel.out_params, kernel.map_expr,
                                   kernel.reduce_expr, "r0 = a", kernel.identity,
                                   kernel.name, reduce_type=kernel.reduce_type,
                                   preamble=kernel.preamble)
    params = wrapper._params
    nin = len(wrapper.in_params)
    kept = ndim - len(kernel.axes)
    infos = (tuple(array(p.dtype, ndim) for p in params[:nin])
             + (array(params[nin].dtype, kept), index(ndim), index(kept),
                _kernel._ArgInfo(scalar, _scalar.CScalar, np.dtype(np.int32), 0, True,
                                 True)))
    index_type = _kernel._TypeMap((("IndexT", np.int32),))  # CuPy's, under 2**31 elements
    return _reduction._ReductionKernel_get_cached_function_code(
        nin, 1, params, infos, index_type, name, 512, kernel.reduce_type,
        kernel.identity, kernel.map_expr, kernel.reduce_expr, "r0 = a", kernel.preamble,
        ())


def compile_kernel(kernel, ndim: int) -> None:
    """Compiles ``kernel`` as CuPy would for arrays of ``ndim`` dimensions; CuPy's
    ``CompileException`` (with NVRTC's log and the source) where it does not compile."""
    _compile(kernel_code(kernel, ndim))


def compile_kernels(kernels: list, batch: int = 64) -> list:
    """Compiles ``kernels`` (pairs of a kernel and its arrays' ``ndim``), ``batch`` of them
    in one NVRTC program (each in a namespace of its own, its ``__global__`` function
    numbered, CuPy's reduction macros undefined between them: most of a compilation's time
    is the headers'); a program that fails is compiled kernel by kernel.  Returns the
    pairs of a kernel that does not compile and its ``CompileException``."""
    failures = []
    for start in range(0, len(kernels), batch):
        group = kernels[start:start + batch]
        units = [f"#undef REDUCE\n#undef POST_MAP\n#undef _REDUCE\nnamespace unit{i} {{\n"
                 f"{kernel_code(kernel, ndim, f'{kernel.name}_{i}')}\n}}\n"
                 for i, (kernel, ndim) in enumerate(group)]
        try:
            _compile("".join(units))
        except Exception:  # noqa: BLE001 (which kernel fails: each alone)
            for kernel, ndim in group:
                try:
                    compile_kernel(kernel, ndim)
                except Exception as e:  # noqa: BLE001 (CuPy's CompileException)
                    failures.append((kernel, e))
    return failures
