"""Rebuilding a clbin that does not unpack (a corrupted or truncated cache entry).

Triton's file cache hands back whatever bytes are on disk: a truncated or overwritten
`.clbin` reaches `load_binary` as is. The clbin stage's input, the OpenCL C source, is
in the same cache entry (`<name>.cl`) together with the launch facts in the metadata
(`<name>.json`), so the artefact can be packed again from them; the rebuilt bytes
replace the bad file, so later processes load it normally.

Triton gives `load_binary` only the kernel's name and bytes. Just before each load it
calls its `kernel_load_start_hook` with the cache entry's files; the driver passes them
on to `expect_load` (triton_spirv/driver.py), and `load_binary` takes them back with
`take_expected`.

A clbin whose program binary does not match the checksum recorded with it (clbin.py)
does not unpack either: it is rebuilt the same way, never handed to the driver (PoCL
aborts the process loading a truncated binary).
"""

import json
import os
import threading
import warnings

from .clbin import pack_clbin, unpack_clbin
from .device import get_device
from .errors import ClbinFormatError
from .program import build_program

# The cache entry of the load about to happen in this thread: (kernel name, files).
_expected = threading.local()


def expect_load(name, files):
    """The next load of kernel `name` in this thread comes from the cache entry whose
    files are `files` (file name -> path, Triton's metadata group)."""
    _expected.entry = (name, dict(files or {}))


def take_expected(name):
    """The files `expect_load` announced for kernel `name`, or None; forgets them, so
    that a later load never sees another load's entry."""
    entry, _expected.entry = getattr(_expected, "entry", None), None
    return entry[1] if entry is not None and entry[0] == name else None


def rebuild_clbin(name, error, files):
    """The unpacked clbin rebuilt from the kernel's OpenCL C source in its cache entry
    (`files`, from take_expected); re-raises `error` (with what to do) when there is
    nothing to rebuild from."""
    source = _read(_file_with_suffix(files, ".cl"))
    metadata = _read(_file_with_suffix(files, ".json"))
    if not isinstance(source, str) or "__kernel" not in source or metadata is None:
        raise ClbinFormatError(f"the compiled kernel '{name}' is corrupted ({error}) and its OpenCL C source is "
                               "not at hand to rebuild it; delete its entry in the Triton cache "
                               "(TRITON_CACHE_DIR, default ~/.triton/cache) to recompile") from None
    try:
        metadata = json.loads(metadata)
        kernel_name = metadata.get("name", name)
        options = tuple(metadata.get("build_options") or ())
        facts = dict(arg_types=list(metadata["arg_types"]), local_size=tuple(metadata["local_size"]),
                     local_mem_bytes=int(metadata["shared"]), build_options=options, bounds=metadata.get("bounds"))
        pack_clbin(kernel_name, source, **facts)     # the facts are checked before the build
    except (ValueError, KeyError, TypeError) as exc:
        raise ClbinFormatError(f"the compiled kernel '{name}' is corrupted ({error}) and so is its metadata "
                               f"({type(exc).__name__}: {exc}); delete its entry in the Triton cache "
                               "(TRITON_CACHE_DIR, default ~/.triton/cache) to recompile") from None
    # Built now (in a child process where the device's compiler may abort), so that the
    # rewritten entry holds a binary again and later processes load it.
    device = get_device()
    _program, binary = build_program(source, device, options, name=kernel_name)
    data = pack_clbin(kernel_name, source, binary=binary, device=device, **facts)
    path = _file_with_suffix(files, ".clbin")
    if path:
        tmp = f"{path}.tmp.{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    warnings.warn(f"the cached binary of kernel '{name}' was corrupted ({error}); rebuilt it from its "
                  "OpenCL C source" + (f" and rewrote {path}" if path else ""), RuntimeWarning, stacklevel=3)
    return unpack_clbin(data)


def _file_with_suffix(files, suffix):
    return next((path for key, path in (files or {}).items() if key.endswith(suffix)), None)


def _read(path):
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None
