"""The device and process queries of functrans/runtime.py (JAX's ``device_count``,
``local_devices``, ``process_index``, ``default_device``, ``typeof``, ...): one process,
the host's device, and GPUs only where CuPy sees one."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp


def test_counts_and_lists_agree_with_devices():
    host = ft.devices()
    assert ft.device_count() == ft.local_device_count() == len(host) == 1
    assert ft.device_count("cpu") == 1
    assert ft.local_devices() == ft.local_devices(process_index=0) == ft.local_devices(
        host_id=0) == host
    assert all(isinstance(d, ft.Device) for d in host)
    assert ft.Device is type(host[0])
    assert (ft.process_index(), ft.process_count(), ft.process_indices()) == (0, 1, [0])
    assert (ft.host_id(), ft.host_count(), ft.host_ids()) == (0, 1, [0])


def test_queries_refuse_what_does_not_exist():
    with pytest.raises(ValueError, match="local_devices: process index 1 does not exist"):
        ft.local_devices(process_index=1)
    with pytest.raises(ValueError, match="local_devices: process index 2 does not exist"):
        ft.local_devices(host_id=2)
    with pytest.raises(RuntimeError, match="device_count: unknown backend 'tpu'"):
        ft.device_count("tpu")
    try:
        gpus = ft.devices("gpu")
    except RuntimeError:
        with pytest.raises(RuntimeError, match="local_device_count: backend 'gpu' needs CuPy"):
            ft.local_device_count("gpu")
    else:
        assert ft.device_count("gpu") == len(gpus)


def test_default_device_accepts_the_host_only():
    for device in (ft.devices()[0], "cpu", None):
        with ft.default_device(device):
            made = fnp.ones(2)
            put = ft.device_put(np.zeros(2))
        assert type(made) is type(fnp.ones(2)) and isinstance(put, np.ndarray)
    with pytest.raises(NotImplementedError, match="default_device: functrans makes new arrays "
                                                  "on the host"):
        with ft.default_device(ft.Device("gpu", 0)):
            pass


def test_typeof_is_the_abstract_value():
    assert ft.typeof(np.ones((2, 3), np.float32)) == ft.core.ShapedArray((2, 3),
                                                                         np.dtype(np.float32))
    assert ft.typeof(1.0).weak_type and ft.typeof(1.0).shape == ()
    seen = []
    ft.jit(lambda x: seen.append(ft.typeof(x)) or x)(np.arange(3))
    assert seen[0].shape == (3,) and seen[0].dtype == np.arange(3).dtype


def test_environment_report_and_host_copy_hint():
    text = ft.print_environment_info(return_string=True)
    for name in ("functrans", "python", "numpy", "scipy", "cupy", "dask", "numba", "llvmlite",
                 "devices"):
        assert f"\n{name}: " in "\n" + text, name
    assert str(ft.devices()[0]) in text
    tree = {"w": np.ones(2), "n": 3}
    assert ft.copy_to_host_async(tree) is tree


def test_environment_report_prints(capsys):
    assert ft.print_environment_info() is None
    assert capsys.readouterr().out.startswith("functrans: ")
