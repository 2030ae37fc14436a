"""Register blocking of contraction loop nests at the memref stage.

`tt.dot` (and HLO `dot`) become a Linalg generic that upstream lowers to the affine nest

    affine.for %j = 0 to M {            // rows of the accumulator
      affine.for %k = 0 to K {          // the reduction
        affine.for %l = 0 to N {        // columns, unit stride in memory
          %c = affine.load %acc[%j, %l]
          ... %a = affine.load %lhs[%j, %k]; %b = affine.load %rhs[%k, %l]; ...
          affine.store (%c + %a * %b), %acc[%j, %l]

which reloads and stores the accumulator at every `k`. This rewrite gives the nest the
shape of a register-blocked micro-kernel: `ROWS` rows by `WIDTH` columns of the
accumulator are held in vector registers (`affine.for` iter_args) for the whole `k`
loop, each `k` loads one vector of the right operand and one scalar per row of the left:

    affine.for %j0 = 0 to M - M % ROWS step ROWS {
      affine.for %l0 = 0 to N step WIDTH {
        %c_r = affine.vector_load %acc[%j0 + r, %l0]            (r < ROWS)
        %res:ROWS = affine.for %k = 0 to K iter_args(%c_r ...) {
          %b = affine.vector_load %rhs[%k, %l0]                 (shared by the rows)
          %a_r = vector.broadcast (affine.load %lhs[%j0 + r, %k])
          affine.yield math.fma(%a_r, %b, %c_r) ...
        }
        affine.vector_store %res#r, %acc[%j0 + r, %l0]
    affine.for %j0 = M - M % ROWS to M step M % ROWS { ... }   (the last M % ROWS rows)

A product added to the accumulator (`%c + %a * %b`, floats) becomes one `math.fma`:
the emitter prints each op as its own statement, so OpenCL compilers (which contract
only within one expression) would otherwise keep a multiply and an add.

Upstream MLIR has no pass for this on affine loops (`affine-loop-unroll-jam` keeps the
accumulator in memory; the Linalg route through `vector.contract` needs the vector
dialect's 2-D types, which the OpenCL emitter does not print). The result is plain
affine/vector/arith IR, so the rest of the pipeline and the memref-stage contract are
unchanged. A nest is rewritten only when the analysis below proves it is a
read-modify-write of one accumulator tile; anything else is left as it was.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import affine, math, vector

from ..ir_helpers import named, root_buffer
from .affine_nests import body_ops, constant_extent, induction_var, is_alloc
from .full_tile_copies import version_tile_copies
from .next_block_prefetch import RowBlocks, prefetch_next_blocks

# Vector widths tried for the column loop, widest first; narrower tiles fall back to
# the next width that divides them.
WIDTHS = (16, 8, 4)
# Rows per block where one work-item runs the whole nest (CPU shapes): six rows of 16
# floats are 12 of the 16 AVX2 registers as accumulators, two for the right operand's
# vector and one for a broadcast, and 12 FMAs per 8 loads. Measured on tutorial 03's
# 128x64x64 tiles (kernel CPU time) against 4, 5, 7 and 8x8 rows, on the default CPU runtime and Intel's
# runtime alike. Extents that 6 does not divide end with one block of the rest.
CPU_ROWS = 6
# Where the work-items of a group share the blocks (GPU shapes), rows and widths are
# divisors of the extents, so that the blocks form one parallel loop with no remainder
# block, and the block's size follows the group (gpu_block): each work-item gets at
# least one block where the tile has enough elements, up to GPU_MAX_BLOCK of them.
GPU_ROWS = (8, 4, 2, 1)
GPU_WIDTHS = (16, 8, 4, 2)
# The most accumulator elements of one block: 4 rows of float16 before the block
# followed the group (registers, and PoCL's quirk register_blocks_beside_private_loops
# was found and checked on blocks of 64 floats).
GPU_MAX_BLOCK = 64
# Widths by preference between blocks of one size. The distribution hands consecutive
# column blocks to consecutive work-items (blocks in row-major order), so the lanes of a
# warp read a row of the right operand and of the accumulator as consecutive vectors,
# and the rows of a block as scalars of the left operand, the same for the lanes of one
# row of blocks. Per k step a warp then reads `rows` scalar loads and one vector load:
# tutorial 03's 64x64x32 tile over 128 work-items as 4 rows of float8 took 27% fewer
# local-memory passes than 8 rows of float4 on the warp model (benchmarks/warp_model.py;
# 10828 against 14924 wavefronts, both conflict-free and balanced) and ran as fast on
# Intel's CPU runtime. float16 last: 64 floats a row are 4 loads of 16 bytes each.
GPU_WIDTH_PREFERENCE = (8, 4, 2, 16)
# Element types OpenCL C can load as vectors from the tiles (bf16/i1 have no vector form
# in the emitter).
_VECTOR_ELEMENTS = ("f32", "f64", "f16", "i8", "i16", "i32", "i64")


@dataclass
class Nest:
    """A matched nest: loops (rows, reduction, columns) and the accumulator accesses."""
    rows: ir.OpView
    reduction: ir.OpView
    columns: ir.OpView
    acc_load: ir.OpView
    acc_store: ir.OpView
    body: list = field(default_factory=list)      # ops of the column loop, no terminator
    depends: dict = field(default_factory=dict)    # value -> set of loop ivs it depends on


def block_contractions(module: ir.Module) -> int:
    """Rewrites every matching contraction nest in `module` into blocks of CPU_ROWS
    rows (and one block of the rest), versions the copies that fill its operand
    tiles on filling them whole (full_tile_copies.py) and spreads prefetches of the
    blocks the next k iteration copies over the first loop of row blocks
    (next_block_prefetch.py); returns how many nests."""
    nests = _matched_nests(module)
    nest_tiles = [operand_tiles(nest) for nest in nests]
    first_row_blocks = [rewrite_nest(nest, row_blocks(constant_extent(nest.rows)),
                                     _pick(constant_extent(nest.columns), WIDTHS))[0]
                        for nest in nests]
    whole_copies = {tile: version_tile_copies(tile)
                    for tile in dict.fromkeys(tile for tiles in nest_tiles for tile in tiles)}
    for tiles, first_blocks in zip(nest_tiles, first_row_blocks):
        for tile in tiles:
            prefetch_next_blocks(whole_copies[tile], first_blocks)
    return len(nests)


def block_contractions_exactly(module: ir.Module, work_items: int) -> int:
    """As block_contractions, for work-groups of `work_items` that share the blocks:
    blocks whose rows and width divide the extents, as many as gpu_block makes them."""
    nests = _matched_nests(module)
    for nest in nests:
        rows_extent, columns_extent = constant_extent(nest.rows), constant_extent(nest.columns)
        rows, width = gpu_block(rows_extent, columns_extent, work_items)
        rewrite_nest(nest, [(0, rows_extent, rows)], width)
    return len(nests)


def gpu_block(rows_extent: int, columns_extent: int, work_items: int) -> tuple[int, int]:
    """(rows, width) of the register blocks of a `rows_extent` x `columns_extent`
    accumulator that `work_items` share: the largest blocks (at most GPU_MAX_BLOCK
    elements) of which there are at least `work_items`, else (a tile too small for
    that) the smallest; between blocks of one size, the width GPU_WIDTH_PREFERENCE
    puts first. 64x64 over 128 work-items: 4 rows of float8, 128 blocks."""
    share = rows_extent * columns_extent // work_items      # elements per work-item
    candidates = [(rows, width) for rows in GPU_ROWS for width in GPU_WIDTHS
                  if rows_extent % rows == 0 and columns_extent % width == 0
                  and rows * width <= GPU_MAX_BLOCK]

    def preference(block):
        size = block[0] * block[1]
        enough = size <= share
        return (enough, size if enough else -size, -GPU_WIDTH_PREFERENCE.index(block[1]))
    return max(candidates, key=preference)


def _matched_nests(module: ir.Module) -> list:
    return [nest for op in _affine_loops(module.body) if (nest := match_nest(op))]


def operand_tiles(nest: Nest) -> list:
    """The work-group tiles the nest reads besides its accumulator."""
    return [op.operands[0] for op in nest.body
            if op.operation.name == "affine.load" and op != nest.acc_load
            and is_alloc(op.operands[0])]


# ------------------------------------------------------------------------- matching

def _affine_loops(block: ir.Block):
    """Every affine.for under `block`, outermost first."""
    for op in block.operations:
        if op.operation.name == "affine.for":
            yield op
        for region in op.regions:
            for inner in region.blocks:
                yield from _affine_loops(inner)


def _only_loop(loop: ir.OpView):
    """The affine.for that is the whole body of `loop`, else None."""
    ops = body_ops(loop)
    if len(ops) == 1 and ops[0].operation.name == "affine.for":
        return ops[0]
    return None


def match_nest(rows_loop: ir.OpView) -> Nest | None:
    """The contraction nest rooted at `rows_loop`, or None when it is not one."""
    reduction = _only_loop(rows_loop)
    columns = _only_loop(reduction) if reduction is not None else None
    if columns is None:
        return None
    if any(constant_extent(loop) is None for loop in (rows_loop, reduction, columns)):
        return None
    if _pick(constant_extent(columns), WIDTHS) == 1:
        return None  # no vector width divides the columns
    nest = Nest(rows_loop, reduction, columns, None, None, body_ops(columns))
    if not _classify(nest) or not _find_accumulator(nest):
        return None
    if not _vectorizable(nest):
        return None
    return nest


def _loop_ivs(nest: Nest) -> tuple[ir.Value, ir.Value, ir.Value]:
    """The (rows, reduction, columns) induction variables."""
    return induction_var(nest.rows), induction_var(nest.reduction), induction_var(nest.columns)


def _classify(nest: Nest) -> bool:
    """Records which loop ivs each body value depends on. Fails on ops the rewrite does
    not know how to clone (regions, side effects other than the accumulator store, ivs
    used outside load/store indices)."""
    ivs = list(_loop_ivs(nest))
    for iv in ivs:
        nest.depends[iv] = {iv}
    for op in nest.body:
        name = op.operation.name
        if op.regions or len(op.results) > 1:
            return False
        if name not in ("affine.load", "affine.store") and not _is_elementwise(name):
            return False
        if name not in ("affine.load", "affine.store") and any(v in ivs for v in op.operands):
            return False
        deps = set()
        for value in op.operands:
            deps |= nest.depends.get(value, set())
        for result in op.results:
            nest.depends[result] = deps
    return True


def _is_elementwise(name: str) -> bool:
    dialect = name.split(".")[0]
    return dialect in ("arith", "math") and name != "arith.constant"


def _find_accumulator(nest: Nest) -> bool:
    """One store in the body, to a work-group tile at (rows iv, columns iv), which is
    read once at the same place and nowhere else in the nest."""
    stores = [op for op in nest.body if op.operation.name == "affine.store"]
    if len(stores) != 1:
        return False
    store = stores[0]
    acc = store.operands[1]
    if not is_alloc(acc):
        return False
    loads = [op for op in nest.body
             if op.operation.name == "affine.load" and root_buffer(op.operands[0]) == acc]
    if len(loads) != 1 or loads[0].operands[0] != acc or not _same_access(loads[0], store, 1, 2):
        return False
    rows_iv, reduction_iv, columns_iv = _loop_ivs(nest)
    indices = list(store.operands)[2:]
    if reduction_iv in indices or rows_iv not in indices or columns_iv not in indices:
        return False
    nest.acc_load, nest.acc_store = loads[0], store
    return True


def _same_access(load: ir.OpView, store: ir.OpView, load_first: int, store_first: int) -> bool:
    return (load.attributes["map"] == store.attributes["map"]
            and list(load.operands)[load_first:] == list(store.operands)[store_first:])


def _vectorizable(nest: Nest) -> bool:
    """Every access that depends on the columns iv is unit-stride along the last,
    contiguous dimension of its memref; element types have OpenCL vector forms."""
    columns_iv = induction_var(nest.columns)
    for op in nest.body:
        name = op.operation.name
        first = {"affine.load": 1, "affine.store": 2}.get(name)
        if first is not None and columns_iv in list(op.operands)[first:]:
            if not unit_stride_last(op, first, columns_iv):
                return False
        values = list(op.results) if name != "affine.store" else [op.operands[0]]
        for value in values:
            if columns_iv in nest.depends.get(value, set()) and \
                    str(value.type) not in _VECTOR_ELEMENTS:
                return False
    return True


def unit_stride_last(op: ir.OpView, first: int, columns_iv: ir.Value) -> bool:
    memref = op.operands[first - 1]
    mtype = ir.MemRefType(memref.type)
    strides, _ = mtype.get_strides_and_offset()
    if strides[-1] != 1:
        return False
    amap = ir.AffineMapAttr(op.attributes["map"]).value
    indices = list(op.operands)[first:]
    positions = [i for i, v in enumerate(indices) if v == columns_iv]
    if len(positions) != 1 or positions[0] >= amap.n_dims:
        return False
    column_dim = ir.AffineDimExpr.get(positions[0])
    results = list(amap.results)
    if str(results[-1]) != str(column_dim):
        return False
    return all(str(column_dim) not in str(expr) for expr in results[:-1])


# -------------------------------------------------------------------------- rewrite

def _pick(extent: int, choices: tuple[int, ...]) -> int:
    return next(c for c in choices + (1,) if extent % c == 0)


def row_blocks(extent: int) -> list[tuple[int, int, int]]:
    """(first row, end, rows per block) of each loop of blocks covering `extent` rows
    (CPU shapes)."""
    whole = extent - extent % CPU_ROWS
    blocks = [(0, whole, CPU_ROWS)] if whole else []
    if whole != extent:
        blocks.append((whole, extent, extent - whole))
    return blocks


def rewrite_nest(nest: Nest, blocks: list[tuple[int, int, int]], width: int) -> list[RowBlocks]:
    """Replaces the nest by its loops of row blocks, which it returns: for each
    (first row, end, rows per block) of `blocks`, blocks of that many rows by `width`
    columns."""
    columns_extent = constant_extent(nest.columns)
    loc = nest.rows.location
    loops = []
    for first, end, rows in blocks:
        with named("row", loc), ir.InsertionPoint(nest.rows):
            outer = affine.AffineForOp(first, end, rows)
        loops.append(RowBlocks(outer, first, end, rows))
        with named("col", loc), ir.InsertionPoint(outer.body):
            inner = affine.AffineForOp(0, columns_extent, width)
            with loc, ir.InsertionPoint(inner.body):
                _emit_micro_kernel(nest, outer.induction_variable,
                                   inner.induction_variable, rows, width)
                affine.AffineYieldOp([])
            affine.AffineYieldOp([])
    nest.rows.operation.erase()
    return loops


def _row_ivs(row0: ir.Value, rows: int, loc: ir.Location) -> list[ir.Value]:
    ivs = [row0]
    for r in range(1, rows):
        shifted = ir.AffineMap.get(1, 0, [ir.AffineDimExpr.get(0) + r])
        ivs.append(affine.AffineApplyOp(shifted, [row0], loc=named("row", loc)).result)
    return ivs


def _emit_micro_kernel(nest: Nest, row0: ir.Value, column0: ir.Value, rows: int,
                       width: int) -> None:
    rows_iv, reduction_iv, columns_iv = _loop_ivs(nest)
    loc = nest.rows.location
    row_ivs = _row_ivs(row0, rows, loc)
    acc_type = nest.acc_load.results[0].type
    acc_vector = ir.VectorType.get([width], acc_type)
    acc_map = nest.acc_store.attributes["map"]
    acc_memref = nest.acc_store.operands[1]

    def acc_indices(r):
        return [row_ivs[r] if v == rows_iv else column0 if v == columns_iv else v
                for v in list(nest.acc_store.operands)[2:]]

    initial = [affine.AffineVectorLoadOp(acc_vector, acc_memref, acc_indices(r), acc_map,
                                         loc=named("acc", loc)).result for r in range(rows)]
    with named("k", loc):
        reduction = affine.AffineForOp(0, constant_extent(nest.reduction), 1, initial)
    with ir.InsertionPoint(reduction.body):
        rebuilt = _Rebuilder(nest, width, {columns_iv: column0,
                                           reduction_iv: reduction.induction_variable})
        carried = list(reduction.inner_iter_args)
        finals = []
        for r in range(rows):
            rebuilt.start_row(rows_iv, row_ivs[r], nest.acc_load.results[0], carried[r])
            for op in nest.body:
                if op != nest.acc_load and op != nest.acc_store:
                    rebuilt.op(op)
            finals.append(rebuilt.value(nest.acc_store.operands[0]))
        affine.AffineYieldOp(finals)
    for r in range(rows):
        affine.AffineVectorStoreOp(reduction.results[r], acc_memref, acc_indices(r), acc_map)


def _name_of(value: ir.Value) -> str:
    owner = value.owner
    loc = owner.location if isinstance(owner, (ir.OpView, ir.Operation)) else None
    return loc.name_str if loc is not None and loc.is_a_name() else "v"


class _Rebuilder:
    """Clones the column-loop body for one row at a time: ops that do not depend on the
    rows iv are built once and shared by all rows; ops that depend on the columns iv
    are built on WIDTH-wide vectors; scalars meeting vectors are broadcast."""

    def __init__(self, nest: Nest, width: int, shared: dict):
        self.nest = nest
        self.width = width
        self.columns_iv = induction_var(nest.columns)
        self.rows_iv = induction_var(nest.rows)
        self.shared = dict(shared)      # values that are the same for every row
        self.row: dict = {}             # values of the current row
        self.broadcasts: dict = {}
        self.fused = fused_products(nest.body)   # addf result -> the mulf it absorbs
        self.absorbed = {mul.results[0] for mul in self.fused.values()}

    def start_row(self, rows_iv, row_iv, acc_value, carried) -> None:
        self.row = {rows_iv: row_iv, acc_value: carried}

    def value(self, old: ir.Value) -> ir.Value:
        if old in self.row:
            return self.row[old]
        return self.shared.get(old, old)

    def _vector(self, old: ir.Value) -> bool:
        return self.columns_iv in self.nest.depends.get(old, set())

    def _as_vector(self, old: ir.Value) -> ir.Value:
        new = self.value(old)
        if self._vector(old):
            return new
        if new not in self.broadcasts:
            vtype = ir.VectorType.get([self.width], new.type)
            loc = named(f"{_name_of(new)}_splat", old.owner.location)
            self.broadcasts[new] = vector.BroadcastOp(vtype, new, loc=loc).result
        return self.broadcasts[new]

    def op(self, op: ir.OpView) -> None:
        result = op.results[0]
        if result in self.absorbed:
            return  # built as part of the fma of its one user
        # The accumulator depends on the rows iv, so everything computed from it is
        # per row too.
        per_row = self.rows_iv in self.nest.depends[result]
        if not per_row and result in self.shared:
            return
        target = self.row if per_row else self.shared
        if op.operation.name == "affine.load":
            target[result] = self._load(op)
        elif result in self.fused:
            target[result] = self._fma(op, self.fused[result])
        elif self._vector(result):
            target[result] = self._vector_elementwise(op)
        else:
            clone = op.operation.clone()
            for i, v in enumerate(op.operands):
                clone.operands[i] = self.value(v)
            target[result] = clone.results[0]

    def _load(self, op: ir.OpView) -> ir.Value:
        indices = [self.value(v) for v in list(op.operands)[1:]]
        # Named by role: a vector of the right operand's row, a scalar of the left's.
        if self._vector(op.results[0]):
            vtype = ir.VectorType.get([self.width], op.results[0].type)
            return affine.AffineVectorLoadOp(vtype, op.operands[0], indices, op.attributes["map"],
                                             loc=named("rhs", op.location)).result
        return affine.AffineLoadOp(op.results[0].type, op.operands[0], indices,
                                   op.attributes["map"], loc=named("lhs", op.location)).result

    def _vector_elementwise(self, op: ir.OpView) -> ir.Value:
        operands = [self._as_vector(v) for v in op.operands]
        vtype = ir.VectorType.get([self.width], op.results[0].type)
        attributes = {name: op.attributes[name] for name in op.attributes}
        return ir.Operation.create(op.operation.name, results=[vtype], operands=operands,
                                   attributes=attributes).results[0]

    def _fma(self, add: ir.OpView, mul: ir.OpView) -> ir.Value:
        """`add` of `mul`'s product and its other operand, as one math.fma."""
        addend = next(v for v in add.operands if v != mul.results[0])
        operands = list(mul.operands) + [addend]
        if self._vector(add.results[0]):
            operands = [self._as_vector(v) for v in operands]
        else:
            operands = [self.value(v) for v in operands]
        return math.fma(*operands, loc=named("acc", add.location))


def fused_products(body: list) -> dict:
    """The float additions of `body` with an operand that is a product used nowhere
    else: addf result -> that mulf."""
    products = {op.results[0]: op for op in body if op.operation.name == "arith.mulf"}
    fused = {}
    for op in body:
        if op.operation.name != "arith.addf":
            continue
        for value in op.operands:
            mul = products.get(value)
            if mul is not None and len(list(value.uses)) == 1 and mul not in fused.values():
                fused[op.results[0]] = mul
                break
    return fused
