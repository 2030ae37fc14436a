"""The `clbin` artefact: what the compiler hands the runtime for one kernel.

A UTF-8 JSON document:

    {"format": "triton-spirv-clbin-1",
     "name": kernel name (the OpenCL kernel function),
     "source": OpenCL C source,
     "binary": base64 of the device program binary, or null,
     "binary_sha256": hex sha256 of the binary (with it): a binary that does not
                      match is not loaded (a driver may crash on a damaged one),
     "device": identity of the device the binary is for (device.device_identity),
     "arg_types": OpenCL C parameter types, e.g. ["__global float*", "int"],
     "local_size": [x, y, z] work-group size the kernel is written for,
     "local_mem_bytes": __local memory the kernel declares,
     "build_options": optional list of OpenCL C compiler options (default none),
     "bounds": optional; present for bounds-checked kernels (launcher/bounds.py):
               {"params": kernel parameter of each hidden extent parameter,
                "sites": the checked accesses},
     "spirv": optional; base64 of the kernel's SPIR-V module (the `spv` stage): the
              program is then created from it (launcher/il.py) and `binary` is what
              the device built from it,
     "program": the program format asked for (auto, spirv, source; launcher/il.py)}

The source always travels, so an artefact stays runnable on another device or
driver; the binary only saves the OpenCL C compile on the device it was made for.
"""

import base64
import hashlib
import json

from .errors import ClbinFormatError

CLBIN_FORMAT = "triton-spirv-clbin-1"


def pack_clbin(name, source, arg_types, local_size=(1, 1, 1), local_mem_bytes=0, binary=None, device=None,
               build_options=(), bounds=None, spirv=None, program="auto"):
    """Serialise one kernel. `device` is an OpenCLDevice, an identity string or None."""
    local_size = _normalise_local_size(local_size)
    document = {
        "format": CLBIN_FORMAT,
        "name": name,
        "source": source,
        "binary": base64.b64encode(binary).decode("ascii") if binary else None,
        "binary_sha256": binary_checksum(binary) if binary else None,
        "device": getattr(device, "identity", device),
        "arg_types": list(arg_types),
        "local_size": list(local_size),
        "local_mem_bytes": int(local_mem_bytes),
    }
    if build_options:
        document["build_options"] = list(build_options)
    if spirv:
        document["spirv"] = base64.b64encode(spirv).decode("ascii")
        document["program"] = program
    if bounds is not None:
        document["bounds"] = {"params": [int(p) for p in bounds["params"]], "sites": list(bounds["sites"])}
    return json.dumps(document, indent=1).encode("utf-8")


def unpack_clbin(data):
    """Parse a clbin (bytes or str). `binary` comes back as bytes or None,
    `local_size` as a 3-tuple."""
    try:
        document = json.loads(data if isinstance(data, str) else bytes(data).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ClbinFormatError(f"not a clbin document (expected UTF-8 JSON): {exc}") from None
    if not isinstance(document, dict) or document.get("format") != CLBIN_FORMAT:
        found = document.get("format") if isinstance(document, dict) else type(document).__name__
        raise ClbinFormatError(f"clbin format is {found!r}, expected {CLBIN_FORMAT!r}")
    for key in ("name", "source"):
        if not isinstance(document.get(key), str):
            raise ClbinFormatError(f"clbin field {key!r} must be a string")
    return clbin_fields(
        document["name"], document["source"], document.get("arg_types") or [],
        local_size=document.get("local_size") or (1, 1, 1),
        local_mem_bytes=document.get("local_mem_bytes") or 0,
        binary=_checked_binary(document), device=document.get("device"),
        build_options=document.get("build_options") or (), bounds=document.get("bounds"),
        spirv=base64.b64decode(document["spirv"]) if document.get("spirv") else None,
        program=document.get("program") or "auto")


def binary_checksum(binary):
    return hashlib.sha256(binary).hexdigest()


def _checked_binary(document):
    """The document's binary as bytes (None without one); ClbinFormatError where it
    does not match the checksum recorded with it."""
    encoded = document.get("binary")
    if not encoded:
        return None
    try:
        binary = base64.b64decode(encoded, validate=True)
    except (ValueError, TypeError) as exc:
        raise ClbinFormatError(f"clbin field 'binary' is not base64 ({exc})") from None
    if document.get("binary_sha256") != binary_checksum(binary):
        raise ClbinFormatError(f"the program binary ({len(binary)} bytes) does not match its recorded "
                               "checksum (binary_sha256)")
    return binary


def clbin_fields(name, source, arg_types, local_size=(1, 1, 1), local_mem_bytes=0, binary=None, device=None,
                 build_options=(), bounds=None, spirv=None, program="auto"):
    """One kernel as the loader takes it (launch.load_kernel): what `unpack_clbin` gives,
    made from its parts without a document (kernels.py). `binary` and `spirv` are bytes."""
    return {
        "format": CLBIN_FORMAT,
        "name": name,
        "source": source,
        "binary": binary,
        "device": device,
        "arg_types": list(arg_types),
        "local_size": _normalise_local_size(local_size),
        "local_mem_bytes": int(local_mem_bytes),
        "build_options": tuple(build_options),
        "bounds": _bounds_field(bounds),
        "spirv": spirv,
        "program": str(program),
    }


def _bounds_field(bounds):
    if bounds is None:
        return None
    if (not isinstance(bounds, dict) or not isinstance(bounds.get("params"), list)
            or not isinstance(bounds.get("sites"), list)):
        raise ClbinFormatError("clbin field 'bounds' must hold lists 'params' and 'sites'")
    return {"params": [int(p) for p in bounds["params"]], "sites": list(bounds["sites"])}


def _normalise_local_size(local_size):
    sizes = [int(s) for s in local_size]
    if not 1 <= len(sizes) <= 3 or any(s < 1 for s in sizes):
        raise ClbinFormatError(f"local_size must be 1 to 3 positive integers, got {list(local_size)}")
    return tuple(sizes + [1] * (3 - len(sizes)))
