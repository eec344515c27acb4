"""functrans: composable function transformations (grad, jvp, vjp, vmap, ...) for NumPy and
CuPy arrays, in pure Python.

>>> import numpy as np, functrans as ft, functrans.numpy as fnp
>>> ft.grad(lambda x: fnp.sum(fnp.tanh(x)))(np.zeros(3))
array([1., 1., 1.])
"""
from functrans import core
from functrans.array_types import Array
from functrans import primitives as _primitives  # registers every primitive's rules
from functrans.api import (eval_shape, grad, hessian, jacfwd, jacobian, jacrev, jvp,
                           linear_transpose, linearize, make_jaxpr, value_and_grad, vjp, vmap)
from functrans import config
from functrans.config import checking_leaks
from functrans.core import (ClosedJaxpr, ConcretizationTypeError, Jaxpr, ShapeDtypeStruct,
                            TracerArrayConversionError, UnexpectedTracerError, check_jaxpr,
                            float0)
from functrans.core import eval_jaxpr
from functrans.intermediates import intermediate_grads, tag
from functrans.primitives.checkpoint import (checkpoint, checkpoint_name, checkpoint_policies,
                                             remat)
from functrans.primitives.jit import jit
from functrans.parallel import pmap
from functrans.primitives.custom_derivatives import custom_jvp, custom_vjp
from functrans import lax, tree, tree_util
from functrans import numpy  # noqa: F401  (also installs the array methods of tracers)
from functrans import nn  # noqa: F401
from functrans import ops  # noqa: F401
from functrans import random  # noqa: F401
from functrans.gradcheck import (Check, GradcheckError, GradcheckResult,
                                 NondifferentiableError, gradcheck)
from functrans import testing  # noqa: F401
from functrans import graphviz as _graphviz  # adds .to_dot() and .render() to jaxprs
from functrans import ad_checkpoint, test_util  # noqa: F401
from functrans import image  # noqa: F401
from functrans import custom_derivatives, debug, dtypes, flatten_util, typing  # noqa: F401
from functrans.custom_derivatives import closure_convert, custom_gradient
from functrans.runtime import (Device, block_until_ready, clear_caches, copy_to_host_async,
                               default_backend, default_device, default_matmul_precision,
                               device_count, device_get, device_put, devices, disable_jit,
                               ensure_compile_time_eval, host_count, host_id, host_ids,
                               local_device_count, local_devices, named_call, named_scope,
                               print_environment_info, process_count, process_index,
                               process_indices, pure_callback, typeof)
from functrans.runtime import (check_tracer_leaks, debug_infs, debug_nans, default_prng_impl,
                               enable_x64, log_compiles, numpy_dtype_promotion,
                               numpy_rank_promotion)
from functrans import errors  # noqa: F401

__version__ = "0.1.0"

__all__ = [
    "Array", "ClosedJaxpr", "ConcretizationTypeError", "Jaxpr", "ShapeDtypeStruct",
    "TracerArrayConversionError", "UnexpectedTracerError", "check_jaxpr", "checking_leaks",
    "ad_checkpoint", "checkpoint", "checkpoint_name", "config",
    "checkpoint_policies", "custom_jvp",
    "custom_vjp", "eval_jaxpr",
    "eval_shape", "float0", "grad", "hessian", "intermediate_grads", "jacfwd", "jacobian", "jacrev",
    "jit", "jvp", "lax", "pmap",
    "linear_transpose", "linearize", "make_jaxpr", "nn", "numpy", "ops", "random", "remat",
    "tag", "tree",
    "tree_util",
    "value_and_grad",
    "vjp", "vmap",
    "Check", "GradcheckError", "GradcheckResult", "NondifferentiableError", "gradcheck",
    "test_util", "testing",
    "block_until_ready", "clear_caches", "closure_convert", "custom_derivatives",
    "custom_gradient", "debug", "default_backend", "default_matmul_precision", "device_get",
    "device_put", "devices", "disable_jit", "dtypes", "ensure_compile_time_eval",
    "flatten_util", "named_call", "named_scope", "pure_callback", "typing",
]
__all__ += ["image"]
__all__ += ["Device", "copy_to_host_async", "default_device", "device_count", "host_count",
            "host_id", "host_ids", "local_device_count", "local_devices",
            "print_environment_info", "process_count", "process_index", "process_indices",
            "typeof"]
__all__ += ["check_tracer_leaks", "debug_infs", "debug_nans", "default_prng_impl", "enable_x64",
            "errors", "log_compiles", "numpy_dtype_promotion", "numpy_rank_promotion"]

del _primitives, _graphviz

# Every public function's docstring gets a Parameters section (functrans/docstrings.py).
from functrans import docstrings as _docstrings  # noqa: E402
_docstrings.complete_docstrings(_docstrings.public_namespaces(_docstrings.CORE_NAMESPACES))
del _docstrings


def __dir__() -> list[str]:
    return sorted(__all__)
