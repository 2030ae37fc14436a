#!/usr/bin/env bash
# Installs everything triton-spirv needs on a fresh Debian machine (run as root or with sudo):
# an OpenCL device (PoCL on the CPU) when none is usable, then the Python package.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then SUDO=sudo; fi

have_opencl_device() {
  python3 - <<'PY' 2>/dev/null
import sys
try:
    import pyopencl as cl
    sys.exit(0 if any(p.get_devices() for p in cl.get_platforms()) else 1)
except Exception:
    sys.exit(1)
PY
}

apt_packages="pocl-opencl-icd ocl-icd-libopencl1 ocl-icd-opencl-dev clinfo"
# liboclgrind-dev and g++: the warp-model plugin (tests/test_warp_*.py)
if [ "${WITH_OCLGRIND:-0}" = 1 ]; then apt_packages="$apt_packages oclgrind liboclgrind-dev g++"; fi
if ! have_opencl_device || [ "${WITH_OCLGRIND:-0}" = 1 ]; then
  if command -v apt-get >/dev/null; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $apt_packages
  else
    echo "No usable OpenCL device and no apt-get: install an OpenCL ICD (e.g. PoCL) by hand." >&2
  fi
fi

# WITH_BROWSER=1: Debian's chromium, in which tests/test_viewer.py loads the stage viewer's
# pages headless (without it those tests skip).
if [ "${WITH_BROWSER:-0}" = 1 ] && ! command -v chromium >/dev/null; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium
fi

# torch first, pinned to the CPU build: a bare 'torch' requirement may pull a CUDA build.
python3 -m pip install -q "torch==2.13.0"
extras="${EXTRAS:-}"
python3 -m pip install -q -e ".${extras:+[$extras]}"

# WITH_INTEL_OPENCL=1: Intel's OpenCL CPU runtime from PyPI (OpenCL 3.x, SPIR-V IL, fp16), a
# second device next to PoCL. The wheel's own ICD file names a build-machine path, so an ICD
# file naming the installed library is written where the loader looks.
if [ "${WITH_INTEL_OPENCL:-0}" = 1 ]; then
  python3 -m pip install -q intel-opencl-rt intel-cmplr-lib-rt
  intel_lib="$(python3 -c 'import sys, os; print(os.path.join(sys.prefix, "lib", "libintelocl.so"))')"
  if [ ! -e "$intel_lib" ]; then echo "intel-opencl-rt installed no $intel_lib" >&2; exit 1; fi
  $SUDO mkdir -p /etc/OpenCL/vendors
  echo "$intel_lib" | $SUDO tee /etc/OpenCL/vendors/intel-cpu.icd >/dev/null
  # spirv-val checks every SPIR-V module the tests build for this device (tests/test_spirv.py).
  if ! command -v spirv-val >/dev/null && command -v apt-get >/dev/null; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends spirv-tools
  fi
fi
