"""Fixtures shared by the test modules: ``device``, the array library that device tests run on
(the CuPy stand-in here; ``tests/test_cupy.py`` overrides it with real CuPy).  The ``rng``
fixture and ``--functrans-seed`` come from functrans's pytest plugin."""
from __future__ import annotations

import atexit
import contextlib
import os
from importlib.metadata import entry_points

import numpy as np
import pytest

import cuda_on_cpu
import cupy_standin
from functrans import config
from functrans.tree_util import tree_map

# jit's fusion compiles each fused region (LLVM: tens of milliseconds per new structure on
# a cold cache, numba: about a second): thousands of jitted tests on a fresh machine would
# add minutes.  The
# suite runs jit unfused unless FUNCTRANS_FUSION says otherwise; tests/test_fusion.py fuses
# on purpose (the jit sweep too: every sixteenth case, all with FUNCTRANS_FUSION_SWEEP=all).
if "FUNCTRANS_FUSION" not in os.environ:
    config.fusion = False

PLUGIN = "functrans.pytest_plugin"
# An installed functrans registers its plugin through the pytest11 entry point; a source
# tree on PYTHONPATH has none, so the suite registers it here (never twice).
if not any(ep.value == PLUGIN for ep in entry_points(group="pytest11")):
    pytest_plugins = [PLUGIN]


class Device:
    """An array library that device tests run on: copies to and from it, and (where the
    library can count them) the transfers made inside a block."""

    def __init__(self, name: str, xp, array_type: type, to_host, transfers=None,
                 protocols=None):
        self.name, self.xp, self.array_type = name, xp, array_type
        self._to_host = to_host
        self._transfers = transfers
        self._protocols = protocols

    def __repr__(self):
        return f"Device({self.name})"

    @property
    def counts_transfers(self) -> bool:
        return self._transfers is not None

    def put(self, tree):
        """``tree`` with its NumPy arrays and NumPy scalars copied to the device (Python
        scalars stay Python scalars)."""
        return tree_map(lambda x: self.xp.asarray(x) if isinstance(x, (np.ndarray, np.generic))
                        else x, tree)

    def get(self, tree):
        """``tree`` with its device arrays copied to the host."""
        return tree_map(lambda x: self._to_host(x) if isinstance(x, self.array_type) else x,
                        tree)

    def transfers(self):
        """A context manager counting the transfers inside it (``h2d``, ``d2h``); with a
        library that cannot count them it yields None."""
        return self._transfers() if self._transfers else contextlib.nullcontext()

    def protocols(self):
        """A context manager inside which NumPy's functions and ufuncs applied to device
        arrays run on the device (as dask applies them to chunks): CuPy's always do; the
        stand-in's only inside its ``array_protocols()`` block."""
        return self._protocols() if self._protocols else contextlib.nullcontext()


STANDIN = Device("standin", cupy_standin, cupy_standin.ndarray, cupy_standin.asnumpy,
                 cupy_standin.transfers, cupy_standin.array_protocols)

# FUNCTRANS_CUDA_ON_CPU=1: the stand-in's CuPy kernels run their CUDA C on the CPU
_CUDA_ON_CPU = cuda_on_cpu.install_on_the_standin()
if _CUDA_ON_CPU is not None:
    atexit.register(_CUDA_ON_CPU.close)


@pytest.fixture
def device() -> Device:
    return STANDIN
