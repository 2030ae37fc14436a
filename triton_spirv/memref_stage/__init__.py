"""The memref stage: Linalg on tensors -> upstream MLIR memref/affine/scf module.

Both frontends (TTIR -> Linalg, HLO) meet here, and the emitters (OpenCL C, SPIR-V) read
only what this package produces. `passes.py` is the one place the pass pipeline is
written down (the registry of passes, each with the config it applies to), `pipeline.py`
walks it; the other modules are the rewrites it runs on the affine and scf stages
(register blocking, stream forwarding, elementwise vectors, work-group sharing, branch
tiles) and the loop-nest queries they share (`affine_nests.py`). What the stage may
contain: docs/memref-stage.md.
"""
