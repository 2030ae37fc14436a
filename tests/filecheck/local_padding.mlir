// PASS: local-padding
// __local tiles of GPU-shaped kernels padded against bank conflicts (local_padding.py).

// A transpose through a 32x32 tile: the rows filled by an async copy (a subview), read
// along a column by consecutive lanes (element lid of a round is [lid % 32][lid / 32]),
// every lane in one bank. Rows of 33 floats put the lanes in 32 banks; the copy's
// subview takes the row stride of 33.

// CHECK-LABEL: func.func @transpose
// CHECK:       %[[TILE:.*]] = memref.alloc() : memref<32x33xf32>
// CHECK:       memref.subview %[[TILE]][0, 0] [%{{.*}}, %{{.*}}] [1, 1] : memref<32x33xf32> to memref<?x?xf32, strided<[33, 1]>>
// CHECK:       memref.load %[[TILE]][%{{.*}}, %{{.*}}] : memref<32x33xf32>
func.func @transpose(%in: memref<32x32xf32, strided<[?, 1], offset: ?>>, %out: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %lid = gpu.thread_id x
  %tile = memref.alloc() : memref<32x32xf32>
  %rows = memref.subview %in[0, 0] [%n, %n] [1, 1] : memref<32x32xf32, strided<[?, 1], offset: ?>> to memref<?x?xf32, strided<[?, 1], offset: ?>>
  %into = memref.subview %tile[0, 0] [%n, %n] [1, 1] : memref<32x32xf32> to memref<?x?xf32, strided<[32, 1]>>
  memref.copy %rows, %into : memref<?x?xf32, strided<[?, 1], offset: ?>> to memref<?x?xf32, strided<[32, 1]>>
  gpu.barrier
  scf.for %k = %c0 to %c8 step %c1 {
    %round = arith.muli %k, %c128 : index
    %i = arith.addi %round, %lid : index
    %col = arith.remui %i, %c32 : index
    %row = arith.divui %i, %c32 : index
    %x = memref.load %tile[%col, %row] : memref<32x32xf32>
    memref.store %x, %out[%i] : memref<?xf32>
  }
  return
}

// -----
// Read along its rows by consecutive lanes ([lid / 32][lid % 32]): no conflict, no
// padding.

// CHECK-LABEL: func.func @rows
// CHECK:       memref.alloc() : memref<32x32xf32>
func.func @rows(%out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %lid = gpu.thread_id x
  %tile = memref.alloc() : memref<32x32xf32>
  scf.for %k = %c0 to %c8 step %c1 {
    %round = arith.muli %k, %c128 : index
    %i = arith.addi %round, %lid : index
    %col = arith.remui %i, %c32 : index
    %row = arith.divui %i, %c32 : index
    %x = memref.load %tile[%row, %col] : memref<32x32xf32>
    memref.store %x, %out[%i] : memref<?xf32>
  }
  return
}

// -----
// A dot's left operand of f16, read along a column by groups of four lanes (rows 0, 4,
// 8, ... of 32 halves = 16 words, the eight rows of a warp in one bank): one half
// more per row (rows 0, 4, 8, ... start 0, 66, 132, ... words: even banks, all
// distinct) is the fewest that spreads them.

// CHECK-LABEL: func.func @dot_operand
// CHECK:       memref.alloc() : memref<64x33xf16>
func.func @dot_operand(%out: memref<?xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %lid = gpu.thread_id x
  %a = memref.alloc() : memref<64x32xf16>
  scf.for %j = %lid to %c64 step %c128 {
    %block = arith.divui %j, %c4 : index
    %row = arith.muli %block, %c4 : index
    scf.for %k = %c0 to %c32 step %c1 {
      %x = memref.load %a[%row, %k] : memref<64x32xf16>
      memref.store %x, %out[%k] : memref<?xf16>
    }
  }
  return
}

// -----
// A tile filled by one copy of the whole tile (an async copy of 32 contiguous rows) and
// read along a column (a transpose): the copy goes through a 32x64 subview of the
// padded rows (copy_lowering.py then copies row by row).

// CHECK-LABEL: func.func @whole_tile_copy
// CHECK:       %[[TILE:.*]] = memref.alloc() : memref<32x65xf32>
// CHECK:       %[[ROWS:.*]] = memref.subview %[[TILE]][0, 0] [32, 64] [1, 1] : memref<32x65xf32> to memref<32x64xf32, strided<[65, 1]>>
// CHECK:       memref.copy %{{.*}}, %[[ROWS]] : memref<32x64xf32, strided<[64, 1]>> to memref<32x64xf32, strided<[65, 1]>>
// CHECK:       memref.load %[[TILE]][%{{.*}}, %{{.*}}] : memref<32x65xf32>
func.func @whole_tile_copy(%in: memref<32x64xf32, strided<[64, 1]>>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %lid = gpu.thread_id x
  %tile = memref.alloc() : memref<32x64xf32>
  memref.copy %in, %tile : memref<32x64xf32, strided<[64, 1]>> to memref<32x64xf32>
  gpu.barrier
  scf.for %k = %c0 to %c16 step %c1 {
    %round = arith.muli %k, %c128 : index
    %i = arith.addi %round, %lid : index
    %row = arith.remui %i, %c32 : index
    %col = arith.divui %i, %c32 : index
    %x = memref.load %tile[%row, %col] : memref<32x64xf32>
    memref.store %x, %out[%i] : memref<?xf32>
  }
  return
}

// -----
// Accesses through subviews are scored at the tile's indices: rows filled element by
// element through a subview at a dynamic row offset, a reduction's first column through
// a rank-reducing subview and its other columns through one offset by a column, read
// by lanes two per row (a row split of work_group_rows.py: [lid / 2][lid % 2 + ...]).
// Rows of 33 put the 16 rows of a warp in distinct banks; every subview takes the
// padded row stride.

// CHECK-LABEL: func.func @row_strips
// CHECK:       %[[TILE:.*]] = memref.alloc() : memref<64x33xf32>
// CHECK:       memref.subview %[[TILE]][%{{.*}}, 0] [64, 32] [1, 1] : memref<64x33xf32> to memref<64x32xf32, strided<[33, 1], offset: ?>>
// CHECK:       memref.subview %[[TILE]][0, 0] [64, 1] [1, 1] : memref<64x33xf32> to memref<64xf32, strided<[33]>>
// CHECK:       memref.subview %[[TILE]][0, 1] [64, 31] [1, 1] : memref<64x33xf32> to memref<64x31xf32, strided<[33, 1], offset: 1>>
func.func @row_strips(%in: memref<?xf32>, %out: memref<?xf32>, %first: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c2048 = arith.constant 2048 : index
  %lid = gpu.thread_id x
  %tile = memref.alloc() : memref<64x32xf32>
  %rows = memref.subview %tile[%first, 0] [64, 32] [1, 1] : memref<64x32xf32> to memref<64x32xf32, strided<[32, 1], offset: ?>>
  scf.for %i = %lid to %c2048 step %c128 {
    %r = arith.divui %i, %c32 : index
    %c = arith.remui %i, %c32 : index
    %x = memref.load %in[%i] : memref<?xf32>
    memref.store %x, %rows[%r, %c] : memref<64x32xf32, strided<[32, 1], offset: ?>>
  }
  gpu.barrier
  %column = memref.subview %tile[0, 0] [64, 1] [1, 1] : memref<64x32xf32> to memref<64xf32, strided<[32]>>
  %rest = memref.subview %tile[0, 1] [64, 31] [1, 1] : memref<64x32xf32> to memref<64x31xf32, strided<[32, 1], offset: 1>>
  scf.for %i = %lid to %c64 step %c128 {
    %x = memref.load %column[%i] : memref<64xf32, strided<[32]>>
    memref.store %x, %out[%i] : memref<?xf32>
  }
  scf.for %i = %lid to %c128 step %c128 {
    %r = arith.divui %i, %c2 : index
    %s = arith.remui %i, %c2 : index
    %x = memref.load %rest[%r, %s] : memref<64x31xf32, strided<[32, 1], offset: 1>>
    %o = arith.addi %i, %c64 : index
    memref.store %x, %out[%o] : memref<?xf32>
  }
  return
}
