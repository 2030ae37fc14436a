"""The backend under the name `cpu`, which is where PyTorch's Inductor looks for Triton.

With `torch._inductor.config.cpu_backend = "triton"`, Inductor writes Triton kernels for
CPU tensors, finds the backend as `triton.backends.backends["cpu"]` and compiles them
for `GPUTarget("cpu", "", 32)` (torch's CPU device has no compute capability; 32 is
Inductor's default warp size). The `cpu` entry point names this package; its two
modules, `compiler.py` and `driver.py`, are what Triton's discovery imports.

The classes here are thin subclasses of the OpenCL backend's, so that both names
compile and launch through one implementation while Triton still sees:
- exactly one active driver: the `cpu` driver is never active on its own, Inductor
  makes it active (`triton_helpers.set_driver_to_cpu`) when it compiles or runs a
  kernel, in the main process and in its compile workers;
- exactly one compiler per target: `opencl` targets go to the OpenCL backend, `cpu`
  targets to the subclass, which replaces Inductor's placeholder arch and warp size
  with the OpenCL device's (so cache keys name the device and its target description).
"""
