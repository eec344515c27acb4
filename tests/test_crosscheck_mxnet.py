"""Optional: functrans.testing.check_numeric_gradient gives MXNet's verdicts (skipped unless
``FUNCTRANS_MXNET_PYTHON`` names a Python with MXNet 1.9.1; CI does not set it).

MXNet 1.9.1 needs NumPy < 1.24 (and has wheels up to Python 3.8 only), functrans NumPy >=
2, so MXNet runs in its own interpreter, as a subprocess that prints its verdicts as JSON.
Set it up with ``python3.8 -m venv V && V/bin/pip install "numpy<1.24" mxnet==1.9.1``."""
from __future__ import annotations

import json
import os
import subprocess
import textwrap

import numpy as np
import pytest

import functrans.numpy as fnp
from functrans.testing import check_numeric_gradient

MXNET_PYTHON = os.environ.get("FUNCTRANS_MXNET_PYTHON", "")
pytestmark = pytest.mark.skipif(not MXNET_PYTHON or not os.path.exists(MXNET_PYTHON),
                                reason="set FUNCTRANS_MXNET_PYTHON to a Python with MXNet")

ZEROS = [0.0, 0.0, 0.0]
NEGATIVE = [-1.0, -4.0]
POINT = [0.3, -0.7, 1.1]

# Each case: (function of MXNet symbols or of functrans arrays, location, options).
MXNET_SCRIPT = textwrap.dedent("""
    import json, warnings
    import numpy as np
    import mxnet as mx
    from mxnet.test_utils import check_numeric_gradient
    warnings.simplefilter("ignore")
    np.random.seed(0)
    f64, d64 = np.float64, np.dtype(np.float64)
    x = mx.sym.Variable("x")
    zeros, negative, point = np.array(%r), np.array(%r), np.array(%r)

    def verdict(sym, location, **options):
        try:
            check_numeric_gradient(sym, [location], **options)
            return "pass"
        except AssertionError:
            return "fail"
        except Exception as e:
            return type(e).__name__

    cases = {
        "cube_full_width_within": verdict(x ** 3, zeros, numeric_eps=0.2, rtol=0.0,
                                          atol=0.02, dtype=f64),
        "cube_full_width_beyond": verdict(x ** 3, zeros, numeric_eps=0.2, rtol=0.0,
                                          atol=0.0009, dtype=f64),
        "sqrt_nan": verdict(mx.sym.sqrt(x), negative, dtype=f64),
        "tanh_float32_defaults": verdict(mx.sym.tanh(x), point),
        "tanh_float64_defaults": verdict(mx.sym.tanh(x), point, dtype=f64),
        "tanh_float16_defaults": verdict(mx.sym.tanh(x), point, dtype=np.float16),
        "tanh_dicts_fine": verdict(mx.sym.tanh(x), point, numeric_eps={d64: 1e-6},
                                   rtol={d64: 1e-6}, atol={d64: 1e-9}, dtype=f64),
        "tanh_dicts_coarse": verdict(mx.sym.tanh(x), point, numeric_eps={d64: 0.5},
                                     rtol={d64: 0.0}, atol={d64: 1e-9}, dtype=f64),
        "tanh_dicts_type_keys": verdict(mx.sym.tanh(x), point, numeric_eps={f64: 0.5},
                                        rtol={f64: 0.0}, atol={f64: 1e-9}, dtype=f64),
        "exp_coarse_step": verdict(mx.sym.exp(x), point, numeric_eps=0.1, dtype=f64),
    }
    print(json.dumps(cases))
""") % (ZEROS, NEGATIVE, POINT)


def _verdict(fun, location, **options) -> str:
    try:
        with np.errstate(invalid="ignore"):
            check_numeric_gradient(fun, [np.array(location)], **options)
        return "pass"
    except AssertionError:
        return "fail"
    except Exception as e:  # noqa: BLE001 - the type is the verdict
        return type(e).__name__


f64 = np.float64
FUNCTRANS_CASES = {
    "cube_full_width_within": lambda: _verdict(lambda x: x ** 3, ZEROS, numeric_eps=0.2,
                                               rtol=0.0, atol=0.02, dtype=f64),
    "cube_full_width_beyond": lambda: _verdict(lambda x: x ** 3, ZEROS, numeric_eps=0.2,
                                               rtol=0.0, atol=0.0009, dtype=f64),
    "sqrt_nan": lambda: _verdict(fnp.sqrt, NEGATIVE, dtype=f64),
    "tanh_float32_defaults": lambda: _verdict(fnp.tanh, POINT),
    "tanh_float64_defaults": lambda: _verdict(fnp.tanh, POINT, dtype=f64),
    "tanh_float16_defaults": lambda: _verdict(fnp.tanh, POINT, dtype=np.float16),
    "tanh_dicts_fine": lambda: _verdict(fnp.tanh, POINT, numeric_eps={f64: 1e-6},
                                        rtol={f64: 1e-6}, atol={f64: 1e-9}, dtype=f64),
    "tanh_dicts_coarse": lambda: _verdict(fnp.tanh, POINT, numeric_eps={f64: 0.5},
                                          rtol={f64: 0.0}, atol={f64: 1e-9}, dtype=f64),
    "tanh_dicts_type_keys": lambda: _verdict(fnp.tanh, POINT, numeric_eps={f64: 0.5},
                                             rtol={f64: 0.0}, atol={f64: 1e-9}, dtype=f64),
    "exp_coarse_step": lambda: _verdict(fnp.exp, POINT, numeric_eps=0.1, dtype=f64),
}
# Deliberate differences, documented in check_numeric_gradient: MXNet looks dict keys up
# by np.dtype, so a key written as the type np.float64 is silently ignored there (its
# defaults apply); functrans accepts either spelling.
KNOWN_DIFFERENCES = {"tanh_dicts_type_keys": ("fail", "pass")}


@pytest.fixture(scope="module")
def mxnet_results() -> dict:
    done = subprocess.run([MXNET_PYTHON, "-c", MXNET_SCRIPT], capture_output=True, text=True,
                          timeout=600, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case", sorted(FUNCTRANS_CASES))
def test_verdict_matches_mxnet(case, mxnet_results):
    ours, theirs = FUNCTRANS_CASES[case](), mxnet_results[case]
    if case in KNOWN_DIFFERENCES:
        assert (ours, theirs) == KNOWN_DIFFERENCES[case]
        return
    assert ours == theirs, f"functrans: {ours}, MXNet: {theirs}"
