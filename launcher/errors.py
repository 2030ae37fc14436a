"""Exceptions raised by the OpenCL runtime.

Each one carries a message meant for the person who launched the kernel: it names
the kernel, the argument or the device involved and, where possible, what to do.
"""


class OpenCLRuntimeError(RuntimeError):
    """Base class of the runtime's own errors (device, build, launch)."""


class NoOpenCLDeviceError(OpenCLRuntimeError):
    """No OpenCL device could be found, or none of the candidates works."""


class OpenCLBuildError(OpenCLRuntimeError):
    """The OpenCL C compiler of the device rejected a program.

    `log` is the device's build log; `source_lines` maps line numbers that the log
    blames to the text of those lines in the OpenCL C source.
    """

    def __init__(self, message, log="", source_lines=None):
        super().__init__(message)
        self.log = log
        self.source_lines = dict(source_lines or {})


class KernelBuildCrash(OpenCLBuildError):
    """The OpenCL compiler of the device died building a program (in the child process
    of an isolated build, launcher/isolated_build.py): `log` is what the driver
    printed, `returncode` the child's status (-N: killed by signal N), `source_path`
    where the OpenCL C was saved (None where it could not be)."""

    def __init__(self, message, log="", name=None, device=None, returncode=None, source_path=None):
        super().__init__(message, log)
        self.name = name
        self.device = device
        self.returncode = returncode
        self.source_path = source_path


class KernelArgumentError(TypeError, ValueError):
    """A kernel argument does not fit its declared Triton type.

    It is both a TypeError (wrong kind of value) and a ValueError (value out of
    range) so that callers catching either of the usual exceptions see it.
    """


class GridError(ValueError):
    """The launch grid is malformed or exceeds what the device can run."""


class ClbinFormatError(ValueError):
    """The compiled artefact is not a clbin document this runtime understands."""
