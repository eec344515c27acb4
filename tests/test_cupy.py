"""The device tests of ``tests/test_standin.py`` (and ``tests/test_example_libraries.py``),
run on real CuPy arrays.

Skipped where CuPy or a GPU is missing (CI has neither); run on a GPU machine with
``pip install cupy-cuda12x && FUNCTRANS_FUSION=1 pytest tests/test_cupy.py`` (with
``FUNCTRANS_FUSION=1`` jit's fused regions are CuPy kernels, compiled and run; the suite
otherwise runs jit unfused), or with the benchmarks: ``bash benchmarks/gpu_check.sh``.  CuPy cannot count transfers, so
here the tests check results (on the device, equal to NumPy's) and that nothing converts
implicitly; the stand-in's tests check the counts.
"""
from __future__ import annotations

import pytest

from conftest import Device

cp = pytest.importorskip("cupy")
try:
    if cp.cuda.runtime.getDeviceCount() < 1:
        pytest.skip("no CUDA device", allow_module_level=True)
except Exception as e:  # noqa: BLE001 (no driver, no runtime: skip, don't fail)
    pytest.skip(f"CUDA unavailable: {e}", allow_module_level=True)

import test_example_libraries  # noqa: E402
import test_standin  # noqa: E402

# The device tests of test_standin, collected here too (with this module's `device`), and
# those of the other modules that have some.
globals().update({name: getattr(test_standin, name) for name in test_standin.DEVICE_TESTS})
globals().update({name: getattr(test_example_libraries, name)
                  for name in test_example_libraries.DEVICE_TESTS})

CUPY = Device("cupy", cp, cp.ndarray, cp.asnumpy)


@pytest.fixture
def device() -> Device:
    return CUPY
