"""Errors for kernels that ask more of the device than it has (local memory, work-items).

They are Triton's OutOfResources (which the autotuner takes as "skip this config"), with
a message that names the kernel, the tiles or work-group size asking for it, the device
and its limit.
"""

import re
import sys

from .errors import GridError

# `__local float x_tile[256];` / `__local int tile0[16 * 16];  // k.py:9: x = ...` as the
# emitter prints them: the comment is the source line that made the tile.
_LOCAL_ARRAY = re.compile(r"^\s*__local\s+(\w+)\s+(\w+)\[([0-9 *]+)\];(?:[ \t]*//[ \t]*(.*))?$",
                          re.MULTILINE)
_C_BYTES = {"char": 1, "uchar": 1, "bool": 1, "short": 2, "ushort": 2, "half": 2, "int": 4, "uint": 4,
            "float": 4, "long": 8, "ulong": 8, "double": 8}


def local_tiles(source):
    """[(name, C type, shape text, bytes, source line or "")] of the kernel-scope __local
    arrays, largest first."""
    tiles = []
    for ctype, name, extent, origin in _LOCAL_ARRAY.findall(source or ""):
        count = 1
        for part in extent.split("*"):
            count *= int(part)
        tiles.append((name, ctype, extent.replace(" ", ""), count * _C_BYTES.get(ctype, 4),
                      origin.strip()))
    return sorted(tiles, key=lambda t: -t[3])


def _describe_tile(name, ctype, shape, size, origin):
    return f"{name} {ctype}[{shape}] = {size} bytes" + (f" from {origin}" if origin else "")


def describe(required, limit, what, name, source, local_size, device, tiles=None):
    """`tiles`: descriptions of the kernel's tiles, largest first; by default read from
    the source's `__local` declarations. Every tile is named with its source line: the
    one left out may be the one to shrink."""
    if what == "shared memory":
        if tiles is None:
            tiles = [_describe_tile(*tile) for tile in local_tiles(source)]
        listed = ", ".join(tiles)
        return (f"kernel '{name}' needs {required} bytes of __local memory for its tiles"
                + (f" ({listed})" if listed else "")
                + f", but {device} allows {limit} bytes per work-group. Use smaller block sizes "
                "(the constexpr tile shapes).")
    return (f"kernel '{name}' is written for work-groups of {list(local_size)} "
            f"= {required} work-items, but {device} allows {limit}.")


def out_of_resources(required, limit, what, handle):
    """The exception to raise for a loaded kernel (launcher.launch.KernelHandle)."""
    return limit_error(required, limit, what, handle.name, handle.source, handle.local_size, handle.device.name)


def check_local_memory(name, source, local_mem_bytes, device):
    """At compile time: raise when the kernel's tiles do not fit the device's local memory
    (before Triton's own check, which names neither the kernel nor the tiles)."""
    limit = int(device.device.local_mem_size)
    if int(local_mem_bytes) > limit:
        raise limit_error(int(local_mem_bytes), limit, "shared memory", name, source, (1, 1, 1), device.name)


def limit_error(required, limit, what, name, source, local_size, device, tiles=None):
    """Triton's OutOfResources when Triton is loaded (its autotuner skips a config on
    it), else GridError: the launcher does not load Triton itself (the HLO frontend runs
    without it)."""
    message = describe(required, limit, what, name, source, local_size, device, tiles)
    if "triton" not in sys.modules:
        return GridError(message)
    try:
        from triton.runtime.errors import OutOfResources
    except ImportError:  # Triton half-loaded
        return GridError(message)

    class DeviceLimitExceeded(OutOfResources):
        def __init__(self, required, limit, name, message):
            super().__init__(required, limit, name)
            self.message = message

        def __str__(self):
            return self.message

        def __reduce__(self):
            return (out_of_resources_from_message, (self.required, self.limit, self.name, self.message))

    return DeviceLimitExceeded(required, limit, what, message)


def out_of_resources_from_message(required, limit, name, message):
    from triton.runtime.errors import OutOfResources

    error = OutOfResources(required, limit, name)
    error.args = (message,)
    return error
