"""What a test should expect from the SPIR-V stage on the current device."""


def kernels_go_as_spirv() -> bool:
    """Whether kernels get a SPIR-V module here: the device takes SPIR-V (Intel's OpenCL
    runtime does, PoCL does not) and the program mode (TRITON_SPIRV_PROGRAM) allows it."""
    from launcher import get_device
    from launcher.il import requested_mode, uses_spirv
    return uses_spirv(requested_mode(), get_device(), "any kernel")


def spirv_stages(*names: str) -> set:
    """`names` (spvasm, spv) where kernels go as SPIR-V, none elsewhere."""
    return set(names) if kernels_go_as_spirv() else set()
