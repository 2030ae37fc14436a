"""Triton's own environment variables behave as with its GPU backends: TRITON_KERNEL_DUMP /
TRITON_DUMP_DIR, TRITON_ALWAYS_COMPILE, MLIR_ENABLE_DUMP (+ MLIR_DUMP_PATH) and
TRITON_PRINT_AUTOTUNING. Each runs in a fresh process, as a user's script would."""
import json
import os
import re
import subprocess
import sys
import textwrap


HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)

SCRIPT = textwrap.dedent("""
    import json, os, sys
    import torch, triton, triton.language as tl

    hits = []
    triton.knobs.compilation.listener = lambda **kw: hits.append(kw["cache_hit"])

    @triton.jit
    def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3.0, mask=mask)

    x = torch.rand(1000)
    out = torch.empty_like(x)
    compiled = scale_kernel[(8,)](x, out, 1000, BLOCK=128)
    assert torch.allclose(out, x * 3.0)
    print(json.dumps({"cache_hits": hits, "cl": compiled.asm["cl"], "memref": compiled.asm["memref"]}))
""")

AUTOTUNED = textwrap.dedent("""
    import torch, triton, triton.language as tl

    @triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 256})], key=["n"])
    @triton.jit
    def tuned_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)

    x = torch.rand(1000)
    out = torch.empty_like(x)
    tuned_kernel[lambda meta: (triton.cdiv(1000, meta["BLOCK"]),)](x, out, 1000)
    assert torch.allclose(out, x + 1.0)
""")

_OURS = ("TRITON_KERNEL_DUMP", "TRITON_DUMP_DIR", "TRITON_ALWAYS_COMPILE", "MLIR_ENABLE_DUMP",
         "MLIR_DUMP_PATH", "TRITON_PRINT_AUTOTUNING")


def run_script(tmp_path, source=SCRIPT, cache="cache", **env):
    script = tmp_path / "user_script.py"
    script.write_text(source)
    environment = {k: v for k, v in os.environ.items() if k not in _OURS}
    environment.update(PYTHONPATH=REPO_ROOT, TRITON_CACHE_DIR=str(tmp_path / cache), **env)
    run = subprocess.run([sys.executable, str(script)], env=environment, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return run


def _result(run):
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_kernel_dump_writes_every_stage_to_the_dump_dir(tmp_path):
    dump = tmp_path / "dump"
    result = _result(run_script(tmp_path, TRITON_KERNEL_DUMP="1", TRITON_DUMP_DIR=str(dump)))
    written = {p.name: p for p in dump.rglob("scale_kernel.*")}
    assert {"scale_kernel.ttir", "scale_kernel.linalg", "scale_kernel.memref", "scale_kernel.cl",
            "scale_kernel.clbin"} <= set(written)
    assert written["scale_kernel.cl"].read_text() == result["cl"]


def test_always_compile_skips_the_cache(tmp_path):
    assert _result(run_script(tmp_path))["cache_hits"] == [False]
    assert _result(run_script(tmp_path))["cache_hits"] == [True]
    assert _result(run_script(tmp_path, TRITON_ALWAYS_COMPILE="1"))["cache_hits"] == [False]


_HEADER = re.compile(r"^// -----// IR Dump (Before|After) (.+?) \('builtin.module' operation\) //----- //$", re.M)


def _dumps(text):
    """[(Before/After, pass, IR text)] from an MLIR_ENABLE_DUMP stream."""
    heads = list(_HEADER.finditer(text))
    return [(m.group(1), m.group(2), text[m.end():heads[k + 1].start() if k + 1 < len(heads) else len(text)])
            for k, m in enumerate(heads)]


def _without_locations(mlir_text):
    from mlir import ir
    from triton_spirv.stages import new_context
    with new_context():
        return ir.Module.parse(mlir_text).operation.get_asm()


def test_mlir_enable_dump_prints_the_ir_after_each_pass(tmp_path):
    from triton_spirv.memref_stage.pipeline import upstream_names
    # The CPU shape's pipeline (GPU targets add the work-group sharing steps).
    run = run_script(tmp_path, MLIR_ENABLE_DUMP="1", TRITON_SPIRV_TARGET="cpu")
    dumps = _dumps(run.stderr)
    # MLIR names Triton's passes "Inliner (inline)"; ours are named by their pipeline text.
    ours = [name for when, name, _ in dumps if when == "After" and not re.fullmatch(r"\S+ \(.+\)", name)]
    # Triton's TTIR passes (its own pass manager) and every step of ours, in order.
    assert any(when == "Before" and "Inliner" in name for when, name, _ in dumps)
    assert ours[0] == "convert-ttir-to-linalg"
    upstream = upstream_names()
    assert [n for n in ours if n in upstream] == upstream
    assert "register-blocking" in ours and "stream-forwarding" in ours
    # The CPU shape's last steps: the kernel's work-groups loop over programs, then every
    # copy gets its one form (copy-lowering).
    assert "program-loops" in ours and ours[-1] == "copy-lowering"
    # The IR after the last step is the memref stage the compiler kept.
    last = [ir for when, name, ir in dumps if when == "After" and name == ours[-1]][-1]
    assert last.strip() == _without_locations(_result(run)["memref"]).strip()


def test_mlir_enable_dump_of_one_kernel_to_a_file(tmp_path):
    path = tmp_path / "ir.txt"
    run = run_script(tmp_path, MLIR_ENABLE_DUMP="scale_kernel", MLIR_DUMP_PATH=str(path))
    assert "IR Dump After canonicalize" in path.read_text()
    assert "IR Dump" not in run.stderr
    other = run_script(tmp_path, cache="cache2", MLIR_ENABLE_DUMP="another_kernel")
    assert "IR Dump" not in other.stderr


def test_print_autotuning_reports_the_best_config(tmp_path):
    run = run_script(tmp_path, AUTOTUNED, TRITON_PRINT_AUTOTUNING="1")
    assert "Triton autotuning for function tuned_kernel" in run.stdout
    assert re.search(r"best config selected: BLOCK: (64|256)", run.stdout), run.stdout
    quiet = run_script(tmp_path, AUTOTUNED, cache="cache2")
    assert "Triton autotuning" not in quiet.stdout


HLO_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import triton_spirv.hlo as hlo
    module = hlo.read_hlo_file(sys.argv[1])
    x = np.linspace(-3, 3, 6 * 512 * 4096, dtype=np.float32).reshape(6, 512, 4096)
    hlo.ModuleRunner(module).run([x])
""")


def test_mlir_enable_dump_covers_the_hlo_frontend(tmp_path):
    from triton_spirv.hlo.passes import PASSES
    script = tmp_path / "run_hlo.py"
    script.write_text(HLO_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in _OURS}
    env.update(PYTHONPATH=REPO_ROOT, MLIR_ENABLE_DUMP="1")
    run = subprocess.run([sys.executable, str(script), os.path.join(HERE, "hlo", "seed_gelu.hlo")],
                         env=env, capture_output=True, text=True, timeout=300, check=True)
    steps = [name for when, name, _ in _dumps(run.stderr) if when == "After"]
    assert steps[0] == "hlo-emitter"
    assert [s for s in steps if s.startswith("hlo-")][1:] == [f"hlo-{n}" for n, _ in PASSES if n != "memref"]
    # The shared pipeline's passes, then its last rewrites (pipeline.lower_to_memref),
    # those of the device's quirks among them (barrier-negations on Intel's runtime).
    from triton_spirv.hlo.target import emit_target
    from triton_spirv.memref_stage.passes import PASSES as MEMREF_PASSES, PipelineConfig
    config = PipelineConfig(quirks=emit_target().description.quirks)
    last = [p.name for p in MEMREF_PASSES if p.applies(config)][-2:]
    assert steps[-2:] == last and last[-1] == "copy-lowering"
    assert "func.func(convert-linalg-to-affine-loops)" in steps
