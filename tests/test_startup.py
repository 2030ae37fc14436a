"""Tests of what a warm start reuses from disk: Triton's key, the backend's source hash
(launcher/file_memo.py, launcher/triton_key_cache.py) and the device probe's binary.

Each must give exactly what computing it afresh gives, and be computed again as soon as
anything it covers changes. Nothing here is timed.
"""

import hashlib
import os
import sys
import sysconfig
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
    with open(stored, "wb") as f:
        f.write(b"not a program binary")
    assert probe() == (dev.zero_copy, ["binary", "source"])
    assert probe() == (dev.zero_copy, ["binary"])
