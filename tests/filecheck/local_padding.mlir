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
