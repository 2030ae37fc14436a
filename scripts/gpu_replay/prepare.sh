#!/usr/bin/env bash
# Run here, before going to the GPU machine: records the GPU-shaped kernels of every family into
# .gpu_replay/ (scripts/gpu_replay/record.py; arguments go to it) and downloads into
# .whl/ the wheels run_on_gpu.sh installs there: pyopencl, at the version installed
# here, for CPython 3.12 on manylinux x86_64, and its pure-Python dependencies (and
# siphash24, which pytools requires). Prints what will travel and its size (the
# whole carried tree is limited to 64 MiB).
set -eu
cd "$(dirname "$0")/../.."
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-/tmp/tritoncache-gpu-replay}
PY_VERSION=${GPU_PYTHON_VERSION:-3.12}

python3 scripts/gpu_replay/record.py "$@"

version() { python3 -c "import importlib.metadata as m; print(m.version('$1'))"; }
mkdir -p .whl
rm -f .whl/pyopencl-*.whl .whl/pytools-*.whl .whl/platformdirs-*.whl .whl/typing_extensions-*.whl .whl/siphash24-*.whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$PY_VERSION" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d .whl \
    "pyopencl==$(version pyopencl)" "pytools==$(version pytools)" "platformdirs==$(version platformdirs)" \
    "typing_extensions==$(version typing_extensions)" "siphash24==$(version siphash24)"

echo "== Requires-Dist of the wheels (each must be here or on the GPU machine: numpy is)"
for wheel in .whl/*.whl; do
    python3 - "$wheel" <<'PY'
import sys, zipfile
wheel = zipfile.ZipFile(sys.argv[1])
metadata = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
needs = [line.split(":", 1)[1].strip() for line in wheel.read(metadata).decode().splitlines()
         if line.startswith("Requires-Dist:") and "extra ==" not in line and "python_version <" not in line]
print(f"  {sys.argv[1].split('/')[-1]}: {', '.join(needs) or '-'}")
PY
done
echo "== to carry"
du -sh .gpu_replay .whl
du -sh .gpu_replay/* | sort -h | tail -12
