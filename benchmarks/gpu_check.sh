#!/usr/bin/env bash
# What a session lent a GPU checks, as one command of under 10 minutes (the device tool's
# limit), from the repository root:
#
#   bash benchmarks/gpu_check.sh        # logs under $OUT (the device tool's), else ./gpu-check
#
# Needs NumPy, CuPy, pytest (pytest-xdist, hypothesis and SciPy used where present) and
# optionally JAX with CUDA: the device machine's image has them all.  It has no dask: for
# the test of dask arrays of CuPy chunks, download dask's pure-Python wheels into .whl
# first (on this machine, .whl ignored by git, then `carry: [".whl"]`):
#   echo /.whl/ >> .git/info/exclude
#   python3 -m pip download --no-deps -d .whl dask==2026.8.0 partd locket
# and this script installs them.  In order, each step bounded by its own timeout so that
# the later ones run:
#   1. the GPU and the versions (gpu.txt);
#   2. the fused regions' CuPy kernels compiled and run by CuPy, against NumPy
#      (test_fused_regions_on_the_device, with jit's fusion on), the transforms, the MLP
#      and dask arrays of CuPy chunks (fused.log);
#   3. benchmarks/run.py on the GPU: hand-written CuPy, functrans eager, jit (fused
#      kernels), jit unfused and JAX (its GPU), one table (bench.md);
#   4. every device test of tests/test_cupy.py and tests/test_jax_names_cupy.py, fused, for
#      the time left (tests.log).
set -uo pipefail
out="${OUT:-gpu-check}"
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 FUNCTRANS_FUSION=1
python=python3
if ls .whl/*.whl > /dev/null 2>&1; then
    "$python" -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl \
        && export PYTHONPATH="$PYTHONPATH:/tmp/site"
fi
xdist=()
if "$python" -c "import xdist" 2>/dev/null; then xdist=(-n 8); fi

{
    nvidia-smi || echo "no nvidia-smi"
    "$python" - <<'PY'
import importlib, sys
print("Python", sys.version.split()[0])
for name in ("numpy", "cupy", "jax", "numba", "llvmlite", "scipy", "dask"):
    try:
        print(name, importlib.import_module(name).__version__)
    except Exception as e:  # noqa: BLE001
        print(name, "missing:", type(e).__name__, e)
try:
    import jax
    print("jax devices:", jax.devices())
except Exception as e:  # noqa: BLE001
    print("jax devices: none:", e)
PY
} > "$out/gpu.txt" 2>&1
cat "$out/gpu.txt"

echo "--- fused kernels on CuPy"
timeout 150 "$python" -m pytest -q -p no:cacheprovider -rs tests/test_cupy.py \
    -k "fused_regions or transforms or mlp or dask" 2>&1 | tee "$out/fused.log" | tail -25

echo "--- benchmarks on the GPU"
timeout 210 "$python" benchmarks/run.py --device cupy --rounds 7 --markdown 2>&1 \
    | tee "$out/bench.md"

echo "--- every device test, fused"
timeout 180 "$python" -m pytest -q -p no:cacheprovider -rs "${xdist[@]}" \
    tests/test_cupy.py tests/test_jax_names_cupy.py 2>&1 | tee "$out/tests.log" | tail -40
exit 0
