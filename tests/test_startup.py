"""Tests of what a warm start reuses from disk: Triton's key, the backend's source hash
(launcher/file_memo.py, launcher/triton_key_cache.py) and the device probe's binary;
and of what a compile imports (triton_spirv/dialect_modules, ttir_to_linalg/linalg_ops.py).

Each must give exactly what computing it afresh gives, and be computed again as soon as
anything it covers changes. Nothing here is timed.
"""

import hashlib
import json
import os
import subprocess
import sys
import sysconfig
import textwrap
import types

import pytest

from launcher import file_memo, triton_key_cache


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A private Triton cache directory, with changes trusted at once (no racy window,
    whatever the clocks of the file system and the host say)."""
    import triton

    directory = tmp_path / "cache"
    monkeypatch.setenv("TRITON_CACHE_DIR", str(directory))
    monkeypatch.setattr(triton.knobs.cache, "dir", str(directory))  # other tests may have pinned it
    monkeypatch.setattr(file_memo, "RECENT_CHANGE_NS", -3600 * 10**9)
    return directory


class Counting:
    """compute() for remembered(): the sha256 of the files, counting its calls."""

    def __init__(self, paths):
        self.paths, self.calls = paths, 0

    def __call__(self):
        self.calls += 1
        digest = hashlib.sha256()
        for path in self.paths:
            with open(path, "rb") as f:
                digest.update(f.read())
        return digest.hexdigest()


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def shift_mtime(path, seconds=-10):
    """Only the modification time changes."""
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + seconds * 10**9))


# ----------------------------------------------------------------------------
# file_memo.remembered
# ----------------------------------------------------------------------------

def test_value_is_remembered_until_a_file_changes(tmp_path, cache_dir):
    paths = [write(tmp_path / "a.py", "one"), write(tmp_path / "b.py", "two")]
    compute = Counting(paths)
    first = file_memo.remembered("t", "id", paths, compute)
    assert file_memo.remembered("t", "id", paths, compute) == first and compute.calls == 1
    # Same size, new content: the stat changes, so the value is computed again.
    write(tmp_path / "a.py", "uno")
    changed = file_memo.remembered("t", "id", paths, compute)
    assert compute.calls == 2 and changed == Counting(paths)() != first
    assert file_memo.remembered("t", "id", paths, compute) == changed and compute.calls == 2


@pytest.mark.parametrize("change", ["mtime", "replace", "add", "remove", "identity"])
def test_every_kind_of_change_recomputes(tmp_path, cache_dir, change):
    paths = [write(tmp_path / "a.py", "one"), write(tmp_path / "b.py", "two")]
    compute = Counting(paths)
    identity = "id"
    file_memo.remembered("t", identity, paths, compute)
    if change == "mtime":  # contents and size as before, only the time differs
        shift_mtime(paths[0])
    elif change == "replace":  # a new file renamed over the old one (what pip does)
        write(tmp_path / "new.py", "one")
        os.replace(tmp_path / "new.py", paths[0])
    elif change == "add":
        paths = paths + [write(tmp_path / "c.py", "three")]
    elif change == "remove":
        paths = paths[:1]
    else:
        identity = "another version"
    compute.paths = paths
    assert file_memo.remembered("t", identity, paths, compute) == Counting(paths)()
    assert compute.calls == 2


def test_recent_changes_are_not_trusted(tmp_path, cache_dir, monkeypatch):
    """A file changed within the timestamp granularity could change again unseen."""
    monkeypatch.setattr(file_memo, "RECENT_CHANGE_NS", 3600 * 10**9)
    paths = [write(tmp_path / "a.py", "one")]
    compute = Counting(paths)
    file_memo.remembered("t", "id", paths, compute)
    file_memo.remembered("t", "id", paths, compute)
    assert compute.calls == 2 and not (cache_dir / file_memo.SUBDIRECTORY).exists()


def test_a_file_changing_during_compute_is_not_recorded(tmp_path, cache_dir):
    paths = [write(tmp_path / "a.py", "one")]

    def compute_while_edited():
        value = Counting(paths)()
        shift_mtime(paths[0])
        return value

    file_memo.remembered("t", "id", paths, compute_while_edited)
    compute = Counting(paths)
    file_memo.remembered("t", "id", paths, compute)
    assert compute.calls == 1


@pytest.mark.parametrize("content", [b"", b"not json", b'{"format": "other", "fingerprint": "x", "value": "y"}',
                                     b'{"format": "triton-spirv-file-memo-1", "fingerprint": 1, "value": 2}'])
def test_a_bad_record_is_ignored(tmp_path, cache_dir, content):
    paths = [write(tmp_path / "a.py", "one")]
    compute = Counting(paths)
    file_memo.remembered("t", "id", paths, compute)
    (record,) = (cache_dir / file_memo.SUBDIRECTORY).iterdir()
    record.write_bytes(content)
    assert file_memo.remembered("t", "id", paths, compute) == Counting(paths)() and compute.calls == 2
    file_memo.remembered("t", "id", paths, compute)
    assert compute.calls == 2  # rewritten


def test_a_missing_file_means_computing(tmp_path, cache_dir):
    paths = [write(tmp_path / "a.py", "one"), str(tmp_path / "gone.py")]
    calls = []
    assert file_memo.remembered("t", "id", paths, lambda: calls.append(1) or "v") == "v"
    assert file_memo.remembered("t", "id", paths, lambda: calls.append(1) or "v") == "v"
    assert len(calls) == 2


def test_files_under_skips_bytecode_and_follows_links(tmp_path):
    write(tmp_path / "pkg" / "a.py", "")
    write(tmp_path / "pkg" / "sub" / "b.so", "")
    write(tmp_path / "pkg" / "__pycache__" / "a.cpython-311.pyc", "")
    write(tmp_path / "elsewhere" / "c.py", "")
    os.symlink(tmp_path / "elsewhere", tmp_path / "pkg" / "linked")
    os.symlink(tmp_path / "pkg", tmp_path / "pkg" / "sub" / "cycle")
    found = [os.path.relpath(p, tmp_path / "pkg") for p in file_memo.files_under(str(tmp_path / "pkg"))]
    assert found == ["a.py", os.path.join("linked", "c.py"), os.path.join("sub", "b.so")]
    assert file_memo.files_under(str(tmp_path / "pkg"), ".so") == [str(tmp_path / "pkg" / "sub" / "b.so")]


# ----------------------------------------------------------------------------
# triton_key
# ----------------------------------------------------------------------------

def fake_triton_tree(root):
    """The files triton_key() reads, laid out as in the triton package."""
    ext = sysconfig.get_config_var("EXT_SUFFIX").split(".")[-1]
    write(root / "runtime" / "cache.py", "def triton_key(): ...")
    write(root / "compiler" / "compiler.py", "compile")
    write(root / "backends" / "nvidia" / "driver.py", "driver")
    write(root / "language" / "core.py", "core")
    write(root / "_C" / f"libtriton.{ext}", "library")
    return str(root / "runtime" / "cache.py")


@pytest.mark.parametrize("edit", ["libtriton", "cache.py", "backends/nvidia/driver.py",
                                  "language/extra/new.py", "compiler/compiler.py", "version"])
def test_triton_key_is_recomputed_when_triton_changes(tmp_path, cache_dir, edit):
    cache_file = fake_triton_tree(tmp_path / "triton")
    compute = Counting(triton_key_cache.covered_files(cache_file))
    ext = sysconfig.get_config_var("EXT_SUFFIX").split(".")[-1]

    def new_process_key(version="3.9.0"):
        # A new replacement stands for a new process (each has its own lru_cache).
        return triton_key_cache.remembering_triton_key(compute, cache_file, version)()

    first = new_process_key()
    assert new_process_key() == first and compute.calls == 1
    version = "3.9.0"
    if edit == "version":
        version = "3.9.1"
    elif edit == "libtriton":
        shift_mtime(tmp_path / "triton" / "_C" / f"libtriton.{ext}")
    elif edit == "cache.py":
        write(tmp_path / "triton" / "runtime" / "cache.py", "def triton_key(): return 1")
    else:
        write(tmp_path / "triton" / edit, "edited")
    new_process_key(version)
    assert compute.calls == 2
    new_process_key(version)
    assert compute.calls == 2


def test_bytecode_caches_do_not_change_the_triton_key(tmp_path, cache_dir):
    cache_file = fake_triton_tree(tmp_path / "triton")
    compute = Counting(triton_key_cache.covered_files(cache_file))
    triton_key_cache.remembering_triton_key(compute, cache_file, "3.9.0")()
    write(tmp_path / "triton" / "compiler" / "__pycache__" / "compiler.cpython-311.pyc", "bytecode")
    triton_key_cache.remembering_triton_key(compute, cache_file, "3.9.0")()
    assert compute.calls == 1


def test_the_key_computed_ahead_is_tritons(cache_dir):
    """The key computed with libtriton hashed in the background is Triton's own."""
    import triton.runtime.cache as cache

    original = getattr(cache.triton_key, "original", cache.triton_key)
    libtriton = triton_key_cache.BackgroundDigest(triton_key_cache.libtriton_path(cache.__file__))
    assert triton_key_cache.computed_triton_key(cache.__file__, cache.__version__, libtriton.result()) == original()


def test_the_key_is_computed_ahead_only_when_not_remembered(tmp_path, cache_dir, monkeypatch):
    cache_file = fake_triton_tree(tmp_path / "triton")
    started = []
    digest_class = triton_key_cache.BackgroundDigest
    monkeypatch.setattr(triton_key_cache, "BackgroundDigest", lambda path: started.append(path) or digest_class(path))
    compute = Counting(triton_key_cache.covered_files(cache_file))
    key = triton_key_cache.remembering_triton_key(compute, cache_file, "3.9.0", ahead=True)
    assert started == [triton_key_cache.libtriton_path(cache_file)] and compute.calls == 0
    libtriton = triton_key_cache.file_sha256(started[0])
    assert libtriton == hashlib.sha256(b"library").hexdigest()
    value = key()
    assert value == triton_key_cache.computed_triton_key(cache_file, "3.9.0", libtriton) and libtriton in value
    # A new process finds it remembered: nothing is hashed, ahead or later.
    again = triton_key_cache.remembering_triton_key(compute, cache_file, "3.9.0", ahead=True)
    assert again() == value and len(started) == 1 and compute.calls == 0
    write(tmp_path / "triton" / "language" / "core.py", "edited")
    changed = triton_key_cache.remembering_triton_key(compute, cache_file, "3.9.0", ahead=True)()
    assert len(started) == 2 and changed != value


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_digest_started_before_a_fork_is_computed_in_the_child(tmp_path):
    path = write(tmp_path / "big.bin", "x" * (8 << 20))
    digest = triton_key_cache.BackgroundDigest(path)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the thread did not come along
        try:
            os.write(write_end, digest.result().encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        from_child = pipe.read()
    os.waitpid(pid, 0)
    assert from_child == digest.result() == hashlib.sha256(b"x" * (8 << 20)).hexdigest()


def test_triton_uses_the_remembered_key_everywhere_and_it_is_exact():
    import triton.runtime.autotuner as autotuner
    import triton.runtime.cache as cache

    import triton_spirv.compiler  # noqa: F401  (Triton imports it while discovering backends)

    if os.environ.get(triton_key_cache.ENV_VAR) == "0":
        pytest.skip(f"{triton_key_cache.ENV_VAR}=0 keeps Triton's own triton_key")
    key = cache.triton_key
    assert getattr(key, "_remembered", False), "the backend did not install the remembered triton_key"
    assert autotuner.triton_key is key
    assert key() == key.original()  # the value Triton itself computes


def test_install_replaces_every_binding_of_the_original(monkeypatch):
    import triton.runtime.cache as cache

    original = cache.triton_key.original
    bound_by_name = types.ModuleType("module_that_imported_triton_key")
    bound_by_name.triton_key = original
    monkeypatch.setitem(sys.modules, bound_by_name.__name__, bound_by_name)
    monkeypatch.setattr(cache, "triton_key", original)
    assert triton_key_cache.install()
    assert cache.triton_key is not original and cache.triton_key.original is original
    assert bound_by_name.triton_key is cache.triton_key


def test_install_leaves_a_changed_triton_key_alone(monkeypatch):
    """A triton_key() other than the one the covered files were worked out for."""
    import triton.runtime.cache as cache

    def changed_triton_key():
        return "some other key"

    monkeypatch.setattr(cache, "triton_key", changed_triton_key)
    assert not triton_key_cache.install() and cache.triton_key is changed_triton_key


def test_install_can_be_disabled(monkeypatch):
    import triton.runtime.cache as cache

    original = cache.triton_key.original
    monkeypatch.setattr(cache, "triton_key", original)
    monkeypatch.setenv(triton_key_cache.ENV_VAR, "0")
    assert not triton_key_cache.install() and cache.triton_key is original


def test_backend_source_hash_is_the_hash_of_the_sources(cache_dir):
    from triton_spirv import compiler

    paths = compiler._source_files()
    assert paths and all(p.endswith(".py") for p in paths)
    assert compiler._source_hash() == compiler._hash_sources(paths) == compiler._source_hash()


# ----------------------------------------------------------------------------
# The device probe's binary
# ----------------------------------------------------------------------------

class RecordingCL:
    """pyopencl, recording how each cl.Program is made (from source or from binaries)."""

    def __init__(self, cl):
        self._cl, self.programs = cl, []

    def __getattr__(self, name):
        return getattr(self._cl, name)

    def Program(self, context, *args):  # noqa: N802 (pyopencl's name)
        self.programs.append("source" if len(args) == 1 else "binary")
        return self._cl.Program(context, *args)


def test_probe_binary_is_reused_and_a_bad_one_is_replaced(cache_dir):
    import pyopencl as cl
    from launcher import device as device_module

    dev = device_module.get_device()
    queue = cl.CommandQueue(dev.context, dev.device)
    identity = device_module.device_identity(dev.platform, dev.device)
    stored = device_module._probe_binary_path(identity)
    assert stored.startswith(str(cache_dir))
    if os.path.exists(stored):  # this process chose its device with this cache directory
        os.unlink(stored)

    def probe():
        recording = RecordingCL(cl)
        zero_copy = device_module._probe(recording, dev.context, queue, identity)
        return zero_copy, recording.programs

    assert probe() == (dev.zero_copy, ["source"])
    assert os.path.getsize(stored) > 0
    assert probe() == (dev.zero_copy, ["binary"])
    with open(stored, "rb") as f:
        good = f.read()
    with open(stored, "wb") as f:   # cut short (a killed writer): never handed to the driver
        f.write(good[:len(good) // 2])
    assert probe() == (dev.zero_copy, ["source"])
    assert probe() == (dev.zero_copy, ["binary"])


# ----------------------------------------------------------------------------
# What a compile imports
# ----------------------------------------------------------------------------

def _build_linalg(linalg, case):
    """A module holding one op of `case`, built by `linalg` (upstream's module or ours),
    in generic form (the op's body included), and the kind of value the builder gave."""
    from mlir import ir
    from mlir.dialects import arith, memref, tensor

    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        f16, f32 = ir.F16Type.get(), ir.F32Type.get()
        with ir.InsertionPoint(module.body):
            if case in ("fill", "fill_memref"):
                value = arith.ConstantOp(f32, 1.5).result
                init = (memref.AllocOp(ir.MemRefType.get([4, 8], f32), [], []).result if case == "fill_memref"
                        else tensor.EmptyOp([4, 8], f32).result)
                result = linalg.fill(value, outs=[init])
            elif case == "transpose":
                source = tensor.EmptyOp([4, 8], f32).result
                result = linalg.transpose(source, outs=[tensor.EmptyOp([8, 4], f32).result], permutation=[1, 0])
            else:  # a contraction, f16 operands widened into an f32 accumulator for "contract_f16"
                batch = [4] if case == "batch_contract" else []
                operand = f16 if case == "contract_f16" else f32
                a = tensor.EmptyOp(batch + [16, 8], operand).result
                b = tensor.EmptyOp(batch + [8, 32], operand).result
                acc = tensor.EmptyOp(batch + [16, 32], f32).result
                dims = [ir.AffineDimExpr.get(d) for d in range(len(batch) + 3)]
                lead, (m, k, n) = dims[:len(batch)], dims[len(batch):]
                maps = [ir.AffineMap.get(len(dims), 0, lead + list(d)) for d in ((m, k), (k, n), (m, n))]
                result = linalg.contract(a, b, outs=[acc], indexing_maps=maps)
        module.operation.verify()
        kind = type(result).__name__ if not isinstance(result, ir.OpView) else result.operation.name
        return module.operation.get_asm(print_generic_op_form=True), kind


@pytest.mark.parametrize("case", ["fill", "fill_memref", "transpose", "contract", "contract_f16", "batch_contract"])
def test_linalg_ops_build_what_upstream_builds(case):
    from mlir.dialects import linalg as upstream

    from triton_spirv.ttir_to_linalg import linalg_ops

    ours = _build_linalg(linalg_ops, case)
    assert "linalg." in ours[0] and ours == _build_linalg(upstream, case)


# Runs the stages of a kernel in a new process and reports which modules it imported,
# and how often a module was looked for.
_COMPILE_AND_REPORT = textwrap.dedent("""
    import collections, json, sys
    looked_for = collections.Counter()

    class Recorder:
        def find_spec(self, name, path=None, target=None):
            looked_for[name] += 1

    sys.meta_path.insert(0, Recorder())
    from triton_spirv.stages import linalg_to_memref_text, memref_to_opencl, memref_to_spirv, ttir_to_linalg_text
    memref = linalg_to_memref_text(ttir_to_linalg_text(open(sys.argv[1]).read()))
    source, spirv = memref_to_opencl(memref).source, memref_to_spirv(memref).binary.hex()
    print(json.dumps({"source": source, "spirv": spirv, "modules": sorted(sys.modules), "looked_for": looked_for}))
""")


def test_a_compile_imports_neither_opdsl_nor_spirv_classes_and_looks_for_no_tt_module(tmp_path):
    import ttir_kernels

    from triton_spirv.stages import linalg_to_memref_text, memref_to_opencl, memref_to_spirv, ttir_to_linalg_text

    ttir = ttir_kernels.ttir("matmul", True).text
    (tmp_path / "matmul.ttir").write_text(ttir)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    run = subprocess.run([sys.executable, "-c", _COMPILE_AND_REPORT, str(tmp_path / "matmul.ttir")],
                         capture_output=True, text=True, cwd=root, timeout=300,
                         env=dict(os.environ, PYTHONPATH=root))
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    # The same kernel as this process compiles, whatever it imported before.
    memref = linalg_to_memref_text(ttir_to_linalg_text(ttir))
    assert report["source"] == memref_to_opencl(memref).source
    assert bytes.fromhex(report["spirv"]) == memref_to_spirv(memref).binary
    modules = set(report["modules"])
    assert "mlir.dialects._linalg_ops_gen" in modules  # the converter built linalg ops
    assert not {"mlir.dialects.linalg", "yaml", "mlir.dialects.complex", "mlir.dialects.spirv"} & modules
    assert "tt.load" in ttir and report["looked_for"].get("mlir.dialects.tt", 0) == 0


_LINALG_AFTER_LIGHT_MODULES = textwrap.dedent("""
    import json
    from mlir import ir
    from mlir._mlir_libs import _mlir
    from triton_spirv.dialect_modules import use_light_dialect_modules
    search = list(_mlir.globals.dialect_search_modules)
    use_light_dialect_modules()
    text = ('func.func @f(%x: f32, %t: tensor<4xf32>) -> tensor<4xf32> {'
            '  %0 = linalg.fill ins(%x : f32) outs(%t : tensor<4xf32>) -> tensor<4xf32>'
            '  return %0 : tensor<4xf32> }')

    def first_op(module):
        return module.body.operations[0].regions[0].blocks[0].operations[0]
    with ir.Context():
        modules = [ir.Module.parse(text)]
        classes = [type(first_op(modules[0])).__qualname__]
        from triton_spirv.ttir_to_linalg import linalg_ops  # the converter's import
        modules.append(ir.Module.parse(text))
        from mlir.dialects import linalg  # upstream's module, imported after
        modules.append(ir.Module.parse(text))
        walked = [first_op(module) for module in modules]
    print(json.dumps({"search": [search, list(_mlir.globals.dialect_search_modules)],
                      "classes": classes + [type(op).__qualname__ for op in walked],
                      "upstream": all(type(op) is linalg.FillOp for op in walked)}))
""")


def test_light_dialect_modules_give_upstreams_classes_once_imported_and_restore_the_search():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    run = subprocess.run([sys.executable, "-c", _LINALG_AFTER_LIGHT_MODULES], capture_output=True,
                         text=True, cwd=root, timeout=120, env=dict(os.environ, PYTHONPATH=root))
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["search"][0] == report["search"][1] == ["mlir.dialects"]
    # Before any module registered linalg's classes, a plain OpView; then upstream's class.
    assert report["classes"] == ["OpView", "FillOp", "FillOp", "FillOp"] and report["upstream"]
