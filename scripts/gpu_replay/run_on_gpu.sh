#!/usr/bin/env bash
# The one command on a GPU machine, from the repository root, with .gpu_replay/ and
# .whl/ carried along (scripts/gpu_replay/prepare.sh makes both):
#
#     bash scripts/gpu_replay/run_on_gpu.sh
#
# 1. installs the carried wheels (pyopencl and its pure-Python dependencies) into
#    /tmp/gpu_replay_site, without a package registry; where they do not fit this
#    Python but pyopencl is importable already, uses that one;
# 2. registers NVIDIA's OpenCL library with the ICD loader when no ICD names it
#    (pyopencl's wheel carries its own ocl-icd loader, which reads /etc/OpenCL/vendors
#    or the folder OCL_ICD_VENDORS names); GPU_REPLAY_SKIP_ICD=1 skips this step
#    (e.g. to run against PoCL, with GPU_REPLAY_DEVICE=pocl);
# 3. replays every bundle (scripts/gpu_replay/replay_kit.py): checks each kernel's
#    results, times it with OpenCL events and torch's CUDA equivalent with CUDA
#    events where torch has CUDA; prints the table and writes $OUT/gpu_replay.json
#    when OUT is set. Bounded by GPU_REPLAY_TIMEOUT seconds (default 420).
set -u
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
SITE=${GPU_REPLAY_SITE:-/tmp/gpu_replay_site}

echo "== python: $($PYTHON --version 2>&1); numpy $($PYTHON -c 'import numpy; print(numpy.__version__)' 2>&1)"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

install_wheels() {
    mkdir -p "$SITE"
    if $PYTHON -m pip --version >/dev/null 2>&1; then
        $PYTHON -m pip install -q --no-index --no-deps --disable-pip-version-check --target "$SITE" .whl/*.whl
    else   # a wheel is a zip archive: unpacked, it imports
        $PYTHON -c 'import sys, zipfile; [zipfile.ZipFile(w).extractall(sys.argv[1]) for w in sys.argv[2:]]' \
            "$SITE" .whl/*.whl
    fi
}

if ls .whl/*.whl >/dev/null 2>&1 && install_wheels 2>/tmp/gpu_replay_pip.log \
        && PYTHONPATH="$SITE" $PYTHON -c 'import pyopencl' 2>>/tmp/gpu_replay_pip.log; then
    export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
    echo "== pyopencl from the carried wheels ($SITE)"
elif $PYTHON -c 'import pyopencl' 2>/dev/null; then
    echo "== the carried wheels do not install here ($(tail -1 /tmp/gpu_replay_pip.log 2>/dev/null)); using the installed pyopencl"
else
    echo "no usable pyopencl: the wheels in .whl/ failed to install:" >&2
    cat /tmp/gpu_replay_pip.log >&2
    exit 2
fi

find_nvidia_opencl() {
    ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so\.1 /{print $NF; exit}'
    for dir in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/nvidia/lib64 /usr/local/nvidia/lib \
               /usr/local/cuda/compat /usr/local/cuda/lib64 /usr/lib/wsl/lib; do
        ls "$dir"/libnvidia-opencl.so.1 "$dir"/libnvidia-opencl.so.* 2>/dev/null
    done
}

if [ "${GPU_REPLAY_SKIP_ICD:-0}" != 1 ]; then
    if grep -qs nvidia /etc/OpenCL/vendors/*.icd ${OCL_ICD_VENDORS:+"$OCL_ICD_VENDORS"/*.icd}; then
        echo "== an ICD names NVIDIA's OpenCL already: $(grep -ls nvidia /etc/OpenCL/vendors/*.icd | tr '\n' ' ')"
    else
        LIB=$(find_nvidia_opencl | head -1)
        if [ -z "$LIB" ]; then
            echo "== libnvidia-opencl.so.1 not found (ldconfig -p, the usual folders); the replay sees" \
                 "only the OpenCL devices registered otherwise" >&2
        elif mkdir -p /etc/OpenCL/vendors 2>/dev/null && echo "$LIB" > /etc/OpenCL/vendors/nvidia.icd 2>/dev/null; then
            echo "== wrote /etc/OpenCL/vendors/nvidia.icd -> $LIB"
        else   # not root: a vendors folder of our own
            mkdir -p /tmp/gpu_replay_icd && echo "$LIB" > /tmp/gpu_replay_icd/nvidia.icd
            export OCL_ICD_VENDORS=/tmp/gpu_replay_icd
            echo "== OCL_ICD_VENDORS=/tmp/gpu_replay_icd -> $LIB"
        fi
    fi
fi

exec timeout "${GPU_REPLAY_TIMEOUT:-420}" $PYTHON scripts/gpu_replay/replay_kit.py "${GPU_REPLAY_BUNDLES:-.gpu_replay}" "$@"
