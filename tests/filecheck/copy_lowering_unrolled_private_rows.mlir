// PASS: copy-lowering
// CONFIG: work_items=128 quirks=register_blocks_for_every_work_item
// Under PoCL's quirk register_blocks_for_every_work_item (memref_stage/copy_lowering.py,
// `unroll_private_rows`): a row between two private arrays of at most four vectors is
// straight-line vector copies, no loop (PoCL 3.1 loses a __local store of some
// work-items beside a loop of two: tests/test_pocl_register_blocks_every_work_item.py).
// Longer private rows, and rows with a side that is not private, keep their loop.

// The attention's 4 x float8 accumulator: one dense block, one row of 32, two float16
// copies at 0 and 16.

// CHECK-LABEL: func.func @two_vectors
// CHECK:       %[[SRC:.*]] = memref.collapse_shape %alloca
// CHECK-NEXT:  %[[DST:.*]] = memref.collapse_shape %alloca_0
// CHECK-NOT:   scf.for
// CHECK:       %[[V0:.*]] = vector.load %[[SRC]][%c0] : memref<32xf32>, vector<16xf32>
// CHECK-NEXT:  vector.store %[[V0]], %[[DST]][%c0] : memref<32xf32>, vector<16xf32>
// CHECK-NEXT:  %[[V1:.*]] = vector.load %[[SRC]][%c16] : memref<32xf32>, vector<16xf32>
// CHECK-NEXT:  vector.store %[[V1]], %[[DST]][%c16] : memref<32xf32>, vector<16xf32>
// CHECK-NEXT:  return
func.func @two_vectors() attributes {opencl.local_size = array<i64: 128, 1, 1>} {
  %acc = memref.alloca() : memref<1x4x8xf32>
  %carried = memref.alloca() : memref<1x4x8xf32>
  memref.copy %acc, %carried : memref<1x4x8xf32> to memref<1x4x8xf32>
  return
}

// -----

// 80 floats: five vectors, more than four, stay a loop.

// CHECK-LABEL: func.func @five_vectors
// CHECK:       scf.for %[[C:.*]] = %c0 to %c80 step %c16 {
// CHECK-NEXT:    vector.load %alloca[%[[C]]]
// CHECK-NEXT:    vector.store
// CHECK-NEXT:  }
func.func @five_vectors() attributes {opencl.local_size = array<i64: 128, 1, 1>} {
  %acc = memref.alloca() : memref<80xf32>
  %carried = memref.alloca() : memref<80xf32>
  memref.copy %acc, %carried : memref<80xf32> to memref<80xf32>
  return
}

// -----

// 4 rows of 40 floats out of rows of 48 (not one dense block), each two vectors and a
// rest of 8: the two vectors of each row unrolled, the rest one by one.

// CHECK-LABEL: func.func @rows_with_a_rest
// CHECK:       scf.for %[[R:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:    %[[V0:.*]] = vector.load %subview[%[[R]], %c0]
// CHECK-NEXT:    vector.store %[[V0]], %alloca_0[%[[R]], %c0]
// CHECK-NEXT:    %[[V1:.*]] = vector.load %subview[%[[R]], %c16]
// CHECK-NEXT:    vector.store %[[V1]], %alloca_0[%[[R]], %c16]
// CHECK-NEXT:    scf.for %[[K:.*]] = %c32 to %c40 step %c1 {
// CHECK-NEXT:      memref.load %subview[%[[R]], %[[K]]]
// CHECK-NEXT:      memref.store
// CHECK-NEXT:    }
// CHECK-NEXT:  }
func.func @rows_with_a_rest() attributes {opencl.local_size = array<i64: 128, 1, 1>} {
  %acc = memref.alloca() : memref<4x48xf32>
  %view = memref.subview %acc[0, 0] [4, 40] [1, 1] : memref<4x48xf32> to memref<4x40xf32, strided<[48, 1]>>
  %carried = memref.alloca() : memref<4x40xf32>
  memref.copy %view, %carried : memref<4x40xf32, strided<[48, 1]>> to memref<4x40xf32>
  return
}

// -----

// From global memory into a private array: not private on both sides, a loop.

// CHECK-LABEL: func.func @from_global
// CHECK:       scf.for %[[C:.*]] = %c0 to %c32 step %c16 {
// CHECK-NEXT:    vector.load %{{.*}}[%[[C]]]
// CHECK-NEXT:    vector.store %{{.*}}, %alloca[%[[C]]]
// CHECK-NEXT:  }
func.func @from_global(%x: memref<?xf32>) attributes {opencl.local_size = array<i64: 128, 1, 1>} {
  %src = memref.reinterpret_cast %x to offset: [0], sizes: [32], strides: [1]
      : memref<?xf32> to memref<32xf32, strided<[1]>>
  %carried = memref.alloca() : memref<32xf32>
  memref.copy %src, %carried : memref<32xf32, strided<[1]>> to memref<32xf32>
  return
}
