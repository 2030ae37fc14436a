"""The build process of isolated builds (launcher/isolated_build.py starts it).

Run as a script, it imports nothing of the launcher and not pyopencl (their imports
cost more than the process): it reads one JSON request per line on stdin, finds the
device by its identity through the OpenCL ICD loader (ctypes), builds the OpenCL C
source, asks for the program binary (PoCL compiles its work-group functions then,
where it may abort) and writes it to the request's `binary` path, then answers with
its status, one line on the file descriptor given as its argument: 0 built; REJECTED
the compiler rejected the source (the build log is at the request's `log` path);
NOT_FOUND no such device. It serves requests until stdin closes, so that the driver's
start (PoCL reads its kernel library) is paid once per parent process. A driver that
aborts kills this process alone; the parent sees its answer channel close.

Request: {"loader": path of the OpenCL ICD loader the parent uses, "identity":
launcher.device.device_identity of the device, "source": OpenCL C, "options": the
build options as one string, "binary": path, "log": path}.
"""
import ctypes
import json
import os
import sys

REJECTED = 3
NOT_FOUND = 4

CL_DEVICE_TYPE_ALL = 0xFFFFFFFF
CL_PLATFORM_VERSION = 0x0901
CL_PLATFORM_NAME = 0x0902
CL_DEVICE_NAME = 0x102B
CL_DRIVER_VERSION = 0x102D
CL_DEVICE_VERSION = 0x102F
CL_PROGRAM_BINARY_SIZES = 0x1165
CL_PROGRAM_BINARIES = 0x1166
CL_PROGRAM_BUILD_LOG = 0x1183

_handle = ctypes.c_void_p


def main(reply_fd):
    cl = None
    devices = {}    # identity -> (device, context)
    for line in iter(sys.stdin.readline, ""):
        request = json.loads(line)
        if cl is None:
            cl = _opencl(request["loader"])
        if request["identity"] not in devices:
            devices[request["identity"]] = _open(cl, request["identity"])
        status = _build_one(cl, *devices[request["identity"]], request)
        sys.stdout.flush()
        sys.stderr.flush()
        os.write(reply_fd, f"{status}\n".encode())
    # Without the drivers' teardown at exit, which may crash after the work is done.
    os._exit(0)


def _build_one(cl, device, context, request):
    if device is None:
        print(f"no OpenCL device with identity {request['identity']!r}", file=sys.stderr)
        return NOT_FOUND
    program = _program(cl, context, request["source"])
    try:
        status = cl.clBuildProgram(program, 1, ctypes.byref(device), request["options"].encode(), None, None)
        if status != 0:
            log = _info_text(lambda size, value, size_ret: cl.clGetProgramBuildInfo(
                program, device, CL_PROGRAM_BUILD_LOG, size, value, size_ret))
            with open(request["log"], "w", encoding="utf-8") as f:
                f.write(log.strip() or f"clBuildProgram failed with status {status}")
            return REJECTED
        with open(request["binary"], "wb") as f:
            f.write(_binary(cl, program))
        return 0
    finally:
        cl.clReleaseProgram(program)


def _opencl(loader):
    cl = ctypes.CDLL(loader)
    cl.clCreateContext.restype = _handle
    cl.clCreateContext.argtypes = [_handle, ctypes.c_uint32, ctypes.POINTER(_handle), _handle, _handle,
                                   ctypes.POINTER(ctypes.c_int32)]
    cl.clCreateProgramWithSource.restype = _handle
    cl.clCreateProgramWithSource.argtypes = [_handle, ctypes.c_uint32, ctypes.POINTER(ctypes.c_char_p),
                                             ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_int32)]
    cl.clBuildProgram.argtypes = [_handle, ctypes.c_uint32, ctypes.POINTER(_handle), ctypes.c_char_p,
                                  _handle, _handle]
    cl.clGetProgramBuildInfo.argtypes = [_handle, _handle, ctypes.c_uint32, ctypes.c_size_t, _handle,
                                         ctypes.POINTER(ctypes.c_size_t)]
    cl.clReleaseProgram.argtypes = [_handle]
    cl.clGetProgramInfo.argtypes = [_handle, ctypes.c_uint32, ctypes.c_size_t, _handle,
                                    ctypes.POINTER(ctypes.c_size_t)]
    for query in (cl.clGetPlatformInfo, cl.clGetDeviceInfo):
        query.argtypes = [_handle, ctypes.c_uint32, ctypes.c_size_t, _handle, ctypes.POINTER(ctypes.c_size_t)]
    cl.clGetPlatformIDs.argtypes = [ctypes.c_uint32, ctypes.POINTER(_handle), ctypes.POINTER(ctypes.c_uint32)]
    cl.clGetDeviceIDs.argtypes = [_handle, ctypes.c_uint64, ctypes.c_uint32, ctypes.POINTER(_handle),
                                  ctypes.POINTER(ctypes.c_uint32)]
    return cl


def _handles(list_function):
    """The handles a clGet*IDs-style function lists (none where it fails)."""
    count = ctypes.c_uint32(0)
    if list_function(0, None, ctypes.byref(count)) != 0 or count.value == 0:
        return []
    handles = (_handle * count.value)()
    if list_function(count.value, handles, None) != 0:
        return []
    return [_handle(h) for h in handles]


def _info_text(query):
    size = ctypes.c_size_t(0)
    if query(0, None, ctypes.byref(size)) != 0:
        return ""
    text = ctypes.create_string_buffer(size.value)
    if query(size.value, ctypes.cast(text, _handle), None) != 0:
        return ""
    return text.value.decode("utf-8", "replace")


def _find_device(cl, identity):
    """The device whose identity (platform name and version, device name and version,
    driver version; launcher.device.device_identity) is `identity`."""
    for platform in _handles(cl.clGetPlatformIDs):
        about_platform = [_info_text(lambda s, v, r, q=q: cl.clGetPlatformInfo(platform, q, s, v, r))
                          for q in (CL_PLATFORM_NAME, CL_PLATFORM_VERSION)]
        devices = _handles(lambda n, out, count: cl.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, out, count))
        for device in devices:
            about_device = [_info_text(lambda s, v, r, q=q: cl.clGetDeviceInfo(device, q, s, v, r))
                            for q in (CL_DEVICE_NAME, CL_DEVICE_VERSION, CL_DRIVER_VERSION)]
            if " | ".join(t.strip() for t in about_platform + about_device) == identity:
                return device
    return None


def _open(cl, identity):
    """(device, context) of the device whose identity is `identity`; (None, None)."""
    device = _find_device(cl, identity)
    if device is None:
        return None, None
    status = ctypes.c_int32(0)
    context = cl.clCreateContext(None, 1, ctypes.byref(device), None, None, ctypes.byref(status))
    if status.value != 0:
        raise SystemExit(f"clCreateContext failed with status {status.value}")
    return device, _handle(context)


def _program(cl, context, source):
    status = ctypes.c_int32(0)
    text = source.encode("utf-8")
    program = cl.clCreateProgramWithSource(context, 1, ctypes.byref(ctypes.c_char_p(text)),
                                           ctypes.byref(ctypes.c_size_t(len(text))), ctypes.byref(status))
    if status.value != 0:
        raise SystemExit(f"clCreateProgramWithSource failed with status {status.value}")
    return _handle(program)


def _binary(cl, program):
    size = ctypes.c_size_t(0)
    if cl.clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, ctypes.sizeof(size), ctypes.byref(size), None) != 0:
        raise SystemExit("clGetProgramInfo(CL_PROGRAM_BINARY_SIZES) failed")
    data = ctypes.create_string_buffer(size.value)
    pointer = ctypes.c_void_p(ctypes.addressof(data))
    if cl.clGetProgramInfo(program, CL_PROGRAM_BINARIES, ctypes.sizeof(pointer), ctypes.byref(pointer), None) != 0:
        raise SystemExit("clGetProgramInfo(CL_PROGRAM_BINARIES) failed")
    return data.raw[:size.value]


if __name__ == "__main__":
    main(int(sys.argv[1]))
