"""Generates HLO test data that XLA:GPU prints: nested tuple outputs of multi-output
fusions and cuBLAS library calls (`__cublas$lt$matmul` with its epilogues), compiled for
an A100 without a GPU (JAX's compile-only CUDA client and a target description), with
Triton GEMM fusions off so that dots become library calls. For each function below it
writes tests/hlo/xla_gpu/<name>.hlo and <name>.npz (the inputs and JAX's outputs on the
CPU: the reference). Needs the CUDA plugin matching the installed jaxlib, e.g. in a
throwaway environment:

    python3 -m venv --system-site-packages /tmp/jaxgpu
    /tmp/jaxgpu/bin/pip install "jax-cuda12-plugin==$(python3 -c 'import jax; print(jax.__version__)')" \
        "jax-cuda12-pjrt==$(python3 -c 'import jax; print(jax.__version__)')"
    JAX_PLATFORMS=cpu /tmp/jaxgpu/bin/python tests/hlo/generate_xla_gpu.py

XLA:GPU on Ampere prints every GEMM as `__cublas$lt$matmul`; older pipelines print the
legacy `__cublas$gemm` with the same operands and backend_config. The `legacy_*` cases
are the Lt text with that target name (nothing else differs), so the frontend sees both.
Tests read the files without needing JAX.
"""
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import topologies
from jax.sharding import SingleDeviceSharding

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "xla_gpu")
rng = np.random.default_rng(4321)

# What XLA:GPU needs to know of the target (an A100 80GB, compute capability 8.0).
A100 = """
gpu_device_info {
  threads_per_block_limit: 1024 threads_per_warp: 32 shared_memory_per_block: 49152
  shared_memory_per_core: 167936 threads_per_core_limit: 2048 core_count: 108
  fpus_per_core: 64 block_dim_limit_x: 2147483647 block_dim_limit_y: 65535
  block_dim_limit_z: 65535 memory_bandwidth: 2039000000000 l2_cache_size: 41943040
  clock_rate_ghz: 1.1105 device_memory_size: 79050250240
  shared_memory_per_block_optin: 166912 cuda_compute_capability { major: 8 }
  registers_per_core_limit: 65536 registers_per_block_limit: 65536 dnn_version: "8.9.4"
}
platform_name: "CUDA"
dnn_version_info { major: 8 minor: 9 patch: 4 }
device_description_str: "A100 80GB"
"""
OPTIONS = {"xla_gpu_enable_triton_gemm": False}


def normal(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def arg_max_min(x, axis):
    return (jnp.argmax(x, axis), jnp.argmin(x, axis), jnp.max(x, axis), jnp.min(x, axis))


def gelu_loss(a, b, c):
    h = jax.nn.gelu(a @ b + c)
    return jnp.sum(h * h)


CASES = {
    # Multi-output fusions of variadic reductions: ((f32[N], s32[N]), (f32[N], s32[N]))
    # (XLA:GPU fuses the row reductions; the column ones stay two flat fusions).
    "nested_arg_max_min_rows": (lambda x: arg_max_min(x, 1), [normal(8, 40)]),
    "arg_max_min_columns": (lambda x: arg_max_min(x, 0), [normal(33, 12)]),
    "nested_arg_max_min_sum": (lambda x: arg_max_min(x, 1) + (jnp.sum(x, 1),), [normal(6, 50)]),
    # cuBLAS GEMMs and their epilogues.
    "gemm_default": (lambda a, b: a @ b, [normal(16, 32), normal(32, 24)]),
    "gemm_bias": (lambda a, b, c: a @ b + c, [normal(16, 32), normal(32, 24), normal(24)]),
    "gemm_relu": (lambda a, b: jax.nn.relu(a @ b), [normal(16, 32), normal(32, 24)]),
    "gemm_bias_relu": (lambda a, b, c: jax.nn.relu(a @ b + c),
                       [normal(16, 32), normal(32, 24), normal(24)]),
    "gemm_gelu": (lambda a, b: jax.nn.gelu(a @ b), [normal(16, 32), normal(32, 24)]),
    "gemm_bias_gelu": (lambda a, b, c: jax.nn.gelu(a @ b + c),
                       [normal(16, 32), normal(32, 24), normal(24)]),
    "gemm_alpha_beta": (lambda a, b, c: 2.0 * (a @ b) + c,
                        [normal(16, 32), normal(32, 24), normal(16, 24)]),
    "gemm_transposed": (lambda a, b: a.T @ b.T, [normal(64, 32), normal(48, 64)]),
    "gemm_batched_transposed": (lambda a, b: jnp.einsum("bji,bkj->bik", a, b),
                                [normal(4, 64, 32), normal(4, 48, 64)]),
    "gemm_gelu_grad": (jax.grad(gelu_loss, argnums=(0, 1, 2)),
                       [normal(16, 32), normal(32, 24), normal(24)]),
    "gemm_bf16_bias_relu": (lambda a, b, c: jax.nn.relu(a @ b + c),
                            [normal(16, 64).astype(jnp.bfloat16),
                             normal(64, 32).astype(jnp.bfloat16), normal(32).astype(jnp.bfloat16)]),
    "gemm_int8": (lambda a, b: jax.lax.dot(a, b, preferred_element_type=jnp.int32),
                  [rng.integers(-128, 128, (16, 32)).astype(np.int8),
                   rng.integers(-128, 128, (32, 24)).astype(np.int8)]),
    # The value before the activation is an output too: the *_AUX epilogues.
    "gemm_gelu_aux": (lambda a, b: (jax.nn.gelu(a @ b), a @ b), [normal(16, 32), normal(32, 24)]),
    "gemm_bias_gelu_aux": (lambda a, b, c: (jax.nn.gelu(a @ b + c), a @ b + c),
                           [normal(16, 32), normal(32, 24), normal(24)]),
    # beta * C and a bias in one call: operands (A, B, C, bias).
    "gemm_beta_bias_relu": (lambda a, b, c, d: jax.nn.relu(a @ b + d + c),
                            [normal(16, 32), normal(32, 24), normal(24), normal(16, 24)]),
    # A rank-3 operand reshaped (bitcast) to rows for the call.
    "gemm_bias_rank3": (lambda a, b, c: jnp.einsum("bij,jk->bik", a, b) + c,
                        [normal(4, 16, 32), normal(32, 24), normal(24)]),
}
LEGACY = {"legacy_gemm_default": "gemm_default", "legacy_gemm_alpha_beta": "gemm_alpha_beta"}


def gpu_text(fn, args, device) -> str:
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=SingleDeviceSharding(device))
             for a in args]
    lowered = jax.jit(fn).trace(*specs).lower(lowering_platforms=("cuda",))
    return lowered.compile(compiler_options=OPTIONS).as_text()


def reference(fn, args):
    """JAX's outputs on the CPU, dots at full f32 precision."""
    with jax.default_matmul_precision("highest"):
        return jax.jit(fn)(*args)


def as_stored(array):
    """numpy has no bfloat16: bf16 arrays are stored widened to float32 (exactly)."""
    return np.asarray(array.astype(jnp.float32) if array.dtype == jnp.bfloat16 else array)


def write(name, text, args, outputs):
    outputs = outputs if isinstance(outputs, (tuple, list)) else [outputs]
    with open(os.path.join(HERE, f"{name}.hlo"), "w") as f:
        f.write(text)
    arrays = {f"arg{k}": as_stored(a) for k, a in enumerate(args)}
    arrays.update({f"out{k}": as_stored(o) for k, o in enumerate(outputs)})
    np.savez(os.path.join(HERE, f"{name}.npz"), **arrays)
    print(name, len(text.splitlines()), "lines")


def main():
    os.makedirs(HERE, exist_ok=True)
    topology = topologies.get_topology_desc("a100", "cuda", target_config=A100,
                                            topology="1x1x1")
    device = topology.devices[0]
    texts = {}
    for name, (fn, args) in CASES.items():
        texts[name] = gpu_text(fn, args, device)
        write(name, texts[name], args, reference(fn, args))
    for name, source in LEGACY.items():
        text = texts[source].replace('custom_call_target="__cublas$lt$matmul"',
                                     'custom_call_target="__cublas$gemm"')
        fn, args = CASES[source]
        write(name, text, args, reference(fn, args))


if __name__ == "__main__":
    main()
