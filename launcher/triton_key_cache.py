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

Names bound to the function are replaced where they exist (triton.runtime.cache and
any module that imported it by name, e.g. triton.runtime.autotuner); modules imported
later bind the replacement. It is only installed over the exact function this was
written against (its source is checked), so a Triton whose key covers other files
keeps its own. TRITON_SPIRV_TRITON_KEY_CACHE=0 keeps Triton's own function.
"""

import functools
import hashlib
import inspect
import os
import sys
import sysconfig

from .file_memo import files_under, remembered

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
    replacement = remembering_triton_key(original, cache.__file__, cache.__version__)
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


def remembering_triton_key(original, cache_file, version):
    """A triton_key() that returns original()'s value, remembered while nothing it covers changes."""

    @functools.lru_cache()
    def triton_key():
        try:
            paths = covered_files(cache_file)
        except OSError:
            return original()
        return remembered("triton_key", f"{version}\0{triton_root(cache_file)}", paths, original)

    triton_key._remembered = True
    triton_key.original = original
    return triton_key


def triton_root(cache_file):
    """The triton package directory, as triton_key() computes it from cache.py's path."""
    return os.path.dirname(os.path.dirname(os.path.abspath(cache_file)))


def covered_files(cache_file):
    """Every file triton_key() may read: a superset (all files of the hashed packages)."""
    root = triton_root(cache_file)
    ext = sysconfig.get_config_var("EXT_SUFFIX").split(".")[-1]
    paths = [os.path.abspath(cache_file), os.path.join(root, "_C", f"libtriton.{ext}")]
    for package in HASHED_PACKAGES:
        paths.extend(files_under(os.path.join(root, package)))
    return paths
