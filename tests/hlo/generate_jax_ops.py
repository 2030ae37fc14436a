"""Generates the HLO test data of sort, convolution and batched gather: for each
function below, the HLO that XLA prints for it, the inputs and JAX's outputs (the
reference), in tests/hlo/jax_ops/:

    <name>.cpu.hlo      XLA:CPU after optimization (`jit(f).lower(*args).compile().as_text()`)
    <name>.lowered.hlo  unoptimized (`jit(f).lower(*args).as_text(dialect="hlo")`)
    <name>.gpu.hlo      XLA:GPU after optimization for an A100 (GPU_CASES, and the
                        cuDNN activation variants, see ACTIVATION_VARIANTS)
    <name>.npz          inputs arg0.. and JAX:CPU outputs out0..

Run with JAX installed (CPU text, inputs, outputs):

    python tests/hlo/generate_jax_ops.py

and, for the XLA:GPU text, with the CUDA plugin of the same version as jaxlib (no GPU
needed: XLA:GPU compiles for the target description below), e.g. in a throwaway venv:

    python3 -m venv /tmp/jaxgpu && /tmp/jaxgpu/bin/pip install jax==V jaxlib==V \\
        jax-cuda12-plugin==V jax-cuda12-pjrt==V
    JAX_PLATFORMS=cpu JAX_SKIP_CUDA_CONSTRAINTS_CHECK=1 XLA_FLAGS=--xla_gpu_autotune_level=0 \\
        /tmp/jaxgpu/bin/python tests/hlo/generate_jax_ops.py --gpu

Tests read the files without needing JAX.
"""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_ops")
rng = np.random.default_rng(4321)


def normal(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def with_specials(x):
    """NaN, signed zeros and ties, which a sort must order like XLA."""
    x = x.copy()
    x.flat[3] = np.nan
    x.flat[5], x.flat[6] = -0.0, 0.0
    x.flat[10:16] = 1.0
    return x


def conv(x, w, strides, padding, dims, **kw):
    return lax.conv_general_dilated(x, w, strides, padding, dimension_numbers=dims, **kw)


def cnn_layer(x, w, b):
    """NHWC, stride 2, SAME padding, bias and ReLU."""
    return jax.nn.relu(conv(x, w, (2, 2), "SAME", ("NHWC", "HWIO", "NHWC")) + b)


def conv_bias_side(x, w, b, s, activation=jax.nn.relu):
    y = conv(x, w, (1, 1), "SAME", ("NCHW", "OIHW", "NCHW"))
    return activation(y * 0.5 + b[None, :, None, None] + s * 2.0)


def grouped_loss(x, w):
    y = conv(x, w, (1, 1), "SAME", ("NHWC", "HWIO", "NHWC"), feature_group_count=2)
    return jnp.sum(y ** 2)


def strided_loss(x, w):
    return jnp.sum(conv(x, w, (2, 2), "SAME", ("NHWC", "HWIO", "NHWC")) ** 2)


def by_key_descending(k, v):
    """A comparator of our own: descending by key (total order), ties by value."""
    return lax.sort((-k, v), num_keys=2)


def sample_top_k(logits, u):
    """Top-k sampling: the k best logits, softmax over them, inverse-CDF choice with
    the uniforms `u`, and the chosen token id gathered from the top-k indices."""
    values, indices = lax.top_k(logits, 8)
    probs = jax.nn.softmax(values, axis=-1)
    choice = jnp.sum(jnp.cumsum(probs, axis=-1) < u[:, None], axis=-1)
    choice = jnp.minimum(choice, 7)
    return jnp.take_along_axis(indices, choice[:, None], axis=1)[:, 0], values


def sort_then_gather(x, idx):
    """argsort, then gather the sorted values back through the permutation."""
    order = jnp.argsort(x, axis=1, stable=True)
    return jnp.take_along_axis(x, order, axis=1), jnp.take_along_axis(order, idx, axis=1)


CASES = {
    # sort
    "sort_axis0": (lambda x: jnp.sort(x, axis=0), [with_specials(normal(9, 6))]),
    "sort_axis1": (lambda x: jnp.sort(x, axis=1), [with_specials(normal(6, 37))]),
    "sort_descending": (lambda x: jnp.sort(x, axis=1, descending=True),
                        [with_specials(normal(5, 40))]),
    "sort_key_value": (lambda k, v: lax.sort((k, v), num_keys=1),
                       [rng.integers(0, 5, (4, 33)).astype(np.int32), normal(4, 33)]),
    "sort_by_key_descending": (by_key_descending,
                               [with_specials(normal(3, 21)), normal(3, 21)]),
    "argsort": (lambda x: jnp.argsort(x, axis=-1, stable=True), [with_specials(normal(7, 30))]),
    # rows longer than one run of the rank sort: sorted in passes (rank sort, merges)
    "sort_long_rows": (lambda x: jnp.sort(x, axis=1), [with_specials(normal(3, 1000))]),
    "argsort_long_ties": (lambda x: jnp.argsort(x, axis=1, stable=True, descending=True),
                          [rng.integers(0, 9, (4, 300)).astype(np.float32)]),
    "sort_key_value_long_axis0": (lambda k, v: lax.sort((k, v), dimension=0, num_keys=1),
                                  [rng.integers(0, 5, (257, 2)).astype(np.int32),
                                   normal(257, 2)]),
    "argsort_3d_axis1": (lambda x: jnp.argsort(x, axis=1, stable=True),
                         [rng.integers(0, 3, (2, 17, 3)).astype(np.float32)]),
    "top_k": (lambda x: lax.top_k(x, 5), [with_specials(normal(6, 50))]),
    "top_k_f16": (lambda x: lax.top_k(x, 7), [with_specials(normal(3, 64)).astype(np.float16)]),
    "sort_bf16": (lambda x: jnp.sort(x.astype(jnp.bfloat16), axis=1), [with_specials(normal(4, 30))]),
    "sample_top_k": (sample_top_k, [normal(4, 100), rng.random(4).astype(np.float32)]),
    "sort_then_gather": (sort_then_gather,
                         [normal(5, 12), rng.integers(0, 12, (5, 3)).astype(np.int32)]),
    # convolution
    "conv_cnn_nhwc": (cnn_layer, [normal(2, 9, 9, 3), normal(3, 3, 3, 4), normal(4)]),
    "conv_cnn_bf16": (lambda x, w, b: cnn_layer(*(a.astype(jnp.bfloat16) for a in (x, w, b))),
                      [normal(2, 9, 9, 3), normal(3, 3, 3, 4), normal(4)]),
    "conv_nchw_dilated": (lambda x, w: conv(x, w, (1, 1), ((1, 2), (0, 1)), ("NCHW", "OIHW", "NCHW"),
                                            lhs_dilation=(2, 1), rhs_dilation=(1, 2)),
                          [normal(2, 3, 6, 7), normal(4, 3, 2, 3)]),
    "conv_depthwise": (lambda x, w: conv(x, w, (1, 1), "SAME", ("NHWC", "HWIO", "NHWC"),
                                         feature_group_count=4),
                       [normal(1, 6, 6, 4), normal(3, 3, 1, 8)]),
    "conv_1d": (lambda x, w: conv(x, w, (2,), "VALID", ("NWC", "WIO", "NWC")),
                [normal(2, 11, 3), normal(3, 3, 5)]),
    "conv_no_spatial": (lambda x, w: conv(x, w, (), "VALID", ("NC", "OI", "NC")),
                        [normal(3, 4), normal(5, 4)]),
    "conv_3d": (lambda x, w: conv(x, w, (1, 2, 1), "SAME", ("NDHWC", "DHWIO", "NDHWC")),
                [normal(1, 4, 5, 6, 2), normal(2, 3, 2, 2, 3)]),
    "conv_batch_groups": (lambda x, w: conv(x, w, (1, 1), "VALID", ("NHWC", "HWIO", "NHWC"),
                                            batch_group_count=2),
                          [normal(4, 5, 5, 3), normal(2, 2, 3, 6)]),
    "conv_grouped_grad_filter": (jax.grad(grouped_loss, argnums=1),
                                 [normal(2, 5, 5, 4), normal(3, 3, 2, 6)]),
    "conv_grouped_grad_input": (jax.grad(grouped_loss, argnums=0),
                                [normal(2, 5, 5, 4), normal(3, 3, 2, 6)]),
    "conv_bias_side_input": (conv_bias_side,
                             [normal(2, 3, 8, 8), normal(4, 3, 3, 3), normal(4), normal(2, 4, 8, 8)]),
    "conv_strided_grad_filter": (jax.grad(strided_loss, argnums=1),
                                 [normal(2, 9, 9, 4), normal(3, 3, 4, 6)]),
    "conv_strided_grad_input": (jax.grad(strided_loss, argnums=0),
                                [normal(2, 9, 9, 4), normal(3, 3, 4, 6)]),
    # gather with batching dimensions
    "gather_take_along_axis": (lambda x, i: jnp.take_along_axis(x, i, axis=2),
                               [normal(3, 10, 5), rng.integers(-5, 5, (3, 10, 2)).astype(np.int32)]),
    "gather_vmap": (jax.vmap(lambda x, i: x[i]),
                    [normal(3, 10, 5), rng.integers(0, 10, (3, 4)).astype(np.int32)]),
}

# XLA:GPU text too (its convolutions are cuDNN custom-calls).
GPU_CASES = ["conv_cnn_nhwc", "conv_cnn_bf16", "conv_depthwise", "conv_bias_side_input", "conv_1d", "conv_3d",
             "conv_nchw_dilated", "conv_batch_groups", "conv_grouped_grad_filter",
             "conv_grouped_grad_input", "conv_strided_grad_filter", "conv_strided_grad_input",
             "sort_axis0", "sort_key_value", "argsort", "sort_long_rows", "argsort_long_ties",
             "sort_key_value_long_axis0", "top_k", "top_k_f16", "sort_bf16",
             "sample_top_k",
             "sort_then_gather", "gather_take_along_axis", "gather_vmap"]

# cuDNN activation modes other than ReLU: XLA:GPU fuses them into the convolution
# only with cuDNN runtime fusion (newer GPUs, f16), which it does not do for this
# target. Their text is conv_bias_side_input's XLA:GPU text with `activation_mode`
# (and `leakyrelu_alpha`) replaced; the reference is JAX with that activation.
LEAKY_ALPHA = 0.25
ACTIVATION_VARIANTS = {
    "kNone": lambda y: y,
    "kRelu6": jax.nn.relu6,
    "kSigmoid": jax.nn.sigmoid,
    "kTanh": jnp.tanh,
    "kElu": jax.nn.elu,
    "kLeakyRelu": lambda y: jax.nn.leaky_relu(y, LEAKY_ALPHA),
    "kGeluExact": lambda y: jax.nn.gelu(y, approximate=False),
}


def activation_variant(mode: str) -> str:
    return f"conv_cudnn_activation_{mode[1:].lower()}"


# The target XLA:GPU compiles for (xla/backends/gpu/target_config specs, A100 80 GB).
A100 = """gpu_device_info {
  threads_per_block_limit: 1024 threads_per_warp: 32 shared_memory_per_block: 49152
  shared_memory_per_core: 167936 threads_per_core_limit: 2048 core_count: 108
  fpus_per_core: 64 block_dim_limit_x: 2147483647 block_dim_limit_y: 65535
  block_dim_limit_z: 65535 memory_bandwidth: 2039000000000 l2_cache_size: 41943040
  clock_rate_ghz: 1.41 device_memory_size: 79050250240
  shared_memory_per_block_optin: 166912 cuda_compute_capability { major: 8 }
  registers_per_core_limit: 65536 registers_per_block_limit: 65536
}
platform_name: "CUDA"
dnn_version_info { major: 9 minor: 3 }
device_description_str: "NVIDIA A100-SXM4-80GB"
"""


def write(name: str, kind: str, text: str) -> None:
    with open(os.path.join(HERE, f"{name}.{kind}.hlo"), "w") as f:
        f.write(text)


def main_cpu() -> None:
    os.makedirs(HERE, exist_ok=True)
    for name, (fn, args) in CASES.items():
        jitted = jax.jit(fn)
        write(name, "cpu", jitted.lower(*args).compile().as_text())
        write(name, "lowered", jitted.lower(*args).as_text(dialect="hlo"))
        outputs = jitted(*args)
        outputs = outputs if isinstance(outputs, (tuple, list)) else [outputs]
        arrays = {f"arg{k}": np.asarray(a) for k, a in enumerate(args)}
        arrays.update({f"out{k}": np.asarray(o.astype(jnp.float32) if o.dtype == jnp.bfloat16 else o)
                       for k, o in enumerate(outputs)})
        np.savez(os.path.join(HERE, f"{name}.npz"), **arrays)
        print(name)
    args = CASES["conv_bias_side_input"][1]
    for mode, activation in ACTIVATION_VARIANTS.items():
        out = jax.jit(lambda *a: conv_bias_side(*a, activation=activation))(*args)
        np.savez(os.path.join(HERE, f"{activation_variant(mode)}.npz"),
                 **{f"arg{k}": a for k, a in enumerate(args)}, out0=np.asarray(out))


def main_gpu() -> None:
    from jax.experimental import topologies
    from jax.sharding import SingleDeviceSharding
    device = topologies.get_topology_desc("a100", "cuda", target_config=A100,
                                          topology="1x1x1").devices[0]
    for name in GPU_CASES:
        fn, _ = CASES[name]
        data = np.load(os.path.join(HERE, f"{name}.npz"))
        specs = [jax.ShapeDtypeStruct(data[f"arg{k}"].shape, data[f"arg{k}"].dtype,
                                      sharding=SingleDeviceSharding(device))
                 for k in range(len(CASES[name][1]))]
        lowered = jax.jit(fn).trace(*specs).lower(lowering_platforms=("cuda",))
        write(name, "gpu", lowered.compile().as_text())
        print(name, "(XLA:GPU)")
    with open(os.path.join(HERE, "conv_bias_side_input.gpu.hlo")) as f:
        text = f.read()
    assert '"activation_mode":"kRelu"' in text
    for mode in ACTIVATION_VARIANTS:
        write(activation_variant(mode), "gpu",
              text.replace('"activation_mode":"kRelu"', f'"activation_mode":"{mode}"')
                  .replace('"leakyrelu_alpha":0', f'"leakyrelu_alpha":{LEAKY_ALPHA}'))


if __name__ == "__main__":
    main_gpu() if "--gpu" in sys.argv else main_cpu()
