"""Triton's `triton_key()` without re-reading libtriton in every process.

Every Triton compile-cache key starts with `triton_key()` (triton/runtime/cache.py): a
sha256 over triton/runtime/cache.py, the modules under triton/compiler,
triton/backends and triton/language, and the whole of triton/_C/libtriton (~500 MB),
prefixed with Triton's version. It takes about 0.4 s, in every new process, and so
dominated a warm start (every kernel found in Triton's cache).

`install()` (called when Triton imports the backend) replaces it with a function that
returns the same string, remembered on disk by file_memo.py: it is computed again,
by Triton's own function, whenever any file under those directories (not only the
modules Triton hashes), cache.py or libtriton changes, or Triton's version does.

A process that has to compute it (an empty cache directory, a changed Triton) starts
hashing libtriton in a background thread when the backend is imported, and computes the
rest of the key, the same string as Triton's function, when Triton first asks for it: the
0.3-0.4 s of hashing overlap the rest of the start-up (pyopencl, the ICD loader, the
device). The thread hashes the mapped file in one call, which releases the GIL
throughout; reading it in chunks as Triton does would wait for the GIL after each one.

Names bound to the function are replaced where they exist (triton.runtime.cache and
any module that imported it by name, e.g. triton.runtime.autotuner); modules imported
later bind the replacement. It is only installed over the exact function this was
written against (its source is checked), so a Triton whose key covers other files
keeps its own. TRITON_SPIRV_TRITON_KEY_CACHE=0 keeps Triton's own function.
"""

import functools
import hashlib
import inspect
import mmap
import os
import sys
import sysconfig
import threading

from .file_memo import files_under, remembered, stored

ENV_VAR = "TRITON_SPIRV_TRITON_KEY_CACHE"
# sha256 of inspect.getsource(triton.runtime.cache.triton_key) in the Triton releases
# whose key reads exactly the files listed by covered_files() (3.9.0).
KNOWN_SOURCES = frozenset({"7d2c8021b5b5b005dc2a4457bc365b3d78ac10d2613df98d5bb216e343fe1140"})
# Directories (under the triton package) whose modules triton_key() hashes.
HASHED_PACKAGES = ("compiler", "backends", "language")


def install():
    """Replace Triton's triton_key by the remembered one; False where it was left alone."""
    if os.environ.get(ENV_VAR, "1") == "0":
        return False
    cache = sys.modules.get("triton.runtime.cache")
    if cache is None:
        import triton.runtime.cache as cache
    original = cache.triton_key
    if getattr(original, "_remembered", False):
        return True
    if not is_known_triton_key(original):
        return False
    replacement = remembering_triton_key(original, cache.__file__, cache.__version__, ahead=True)
    for module in list(sys.modules.values()):
        if getattr(module, "triton_key", None) is original:
            module.triton_key = replacement
    return True


def is_known_triton_key(function):
    try:
        source = inspect.getsource(inspect.unwrap(function))
    except (OSError, TypeError):
        return False
    return hashlib.sha256(source.encode("utf-8")).hexdigest() in KNOWN_SOURCES


def remembering_triton_key(original, cache_file, version, ahead=False):
    """A triton_key() that returns original()'s value, remembered while nothing it covers
    changes. With `ahead`, the record is looked up now, and where it does not hold the
    value, libtriton's hash starts now (computing_ahead); else both wait for the call."""
    known, compute = computing_ahead(cache_file, version) if ahead else (None, original)

    @functools.lru_cache()
    def triton_key():
        if known is not None:
            return known
        try:
            paths = covered_files(cache_file)
        except OSError:
            return original()
        return remembered("triton_key", _identity(cache_file, version), paths, compute)

    triton_key._remembered = True
    triton_key.original = original
    return triton_key


def _identity(cache_file, version):
    return f"{version}\0{triton_root(cache_file)}"


def computing_ahead(cache_file, version):
    """(the remembered key, None), or (None, a function giving Triton's key) whose hash
    of libtriton has started in a background thread."""
    try:
        known = stored("triton_key", _identity(cache_file, version), covered_files(cache_file))
    except OSError:
        known = None
    if known is not None:
        return known, None
    libtriton = BackgroundDigest(libtriton_path(cache_file))
    return None, lambda: computed_triton_key(cache_file, version, libtriton.result())


def computed_triton_key(cache_file, version, libtriton_digest):
    """What Triton's triton_key() returns (the function of KNOWN_SOURCES), given the
    sha256 of libtriton: its version, then the sha256 of cache.py, of each module of
    triton.compiler and triton.backends, libtriton's, and those of triton.language."""
    import pkgutil

    root = triton_root(cache_file)

    def module_digests(package):
        for info in pkgutil.walk_packages([os.path.join(root, package)], prefix=f"triton.{package}."):
            yield file_sha256(info.module_finder.find_spec(info.name).origin)

    contents = [file_sha256(os.path.abspath(cache_file)), *module_digests("compiler"), *module_digests("backends"),
                libtriton_digest, *module_digests("language")]
    return version + "-".join(contents)


def file_sha256(path):
    """sha256 of a file, hex; large files in one call over their mapped pages."""
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return hashlib.sha256().hexdigest()
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return hashlib.sha256(data).hexdigest()


class BackgroundDigest:
    """file_sha256(path), computed in a daemon thread from construction on."""

    def __init__(self, path):
        self.path, self._digest = path, None
        self._thread = threading.Thread(target=self._run, name="libtriton-sha256", daemon=True)
        self._thread.start()

    def _run(self):
        try:
            self._digest = file_sha256(self.path)
        except OSError:
            pass  # result() reports it

    def result(self):
        """The digest; computed here when the thread could not (an error, or a process
        forked from the one that started it, where the thread does not run)."""
        self._thread.join()
        return self._digest or file_sha256(self.path)


def libtriton_path(cache_file):
    ext = sysconfig.get_config_var("EXT_SUFFIX").split(".")[-1]
    return os.path.join(triton_root(cache_file), "_C", f"libtriton.{ext}")


def triton_root(cache_file):
    """The triton package directory, as triton_key() computes it from cache.py's path."""
    return os.path.dirname(os.path.dirname(os.path.abspath(cache_file)))


def covered_files(cache_file):
    """Every file triton_key() may read: a superset (all files of the hashed packages)."""
    root = triton_root(cache_file)
    paths = [os.path.abspath(cache_file), libtriton_path(cache_file)]
    for package in HASHED_PACKAGES:
        paths.extend(files_under(os.path.join(root, package)))
    return paths
