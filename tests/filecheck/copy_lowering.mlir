// PASS: copy-lowering
// Every memref.copy in its one form, the memref stage's last pass (memref_stage/
// copy_lowering.py; copy_loops.py builds the loops): vector rows, a marked work-group
// async copy, a copy shared by a group's work-items, element loops.

// One work-item per group: rows of unit stride that reach 16 elements move in vectors
// of 16; 32 columns are two whole vectors, no rest loop.

// CHECK-LABEL: func.func @rows
// CHECK-NOT:   memref.copy
// CHECK:       scf.for %[[R:.*]] = %{{.*}} to %c4 step %{{.*}} {
// CHECK:         scf.for %[[C:.*]] = %{{.*}} to %c32 step %c16 {
// CHECK-NEXT:      %[[V:.*]] = vector.load %{{.*}}[%[[R]], %[[C]]] : memref<4x32xf32, strided<[64, 1], offset: ?>>, vector<16xf32>
// CHECK-NEXT:      vector.store %[[V]], %alloc[%[[R]], %[[C]]] : memref<4x32xf32>, vector<16xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NEXT:  return
func.func @rows(%x: memref<?xf32>, %off: index) {
  %tile = memref.alloc() : memref<4x32xf32>
  %src = memref.reinterpret_cast %x to offset: [%off], sizes: [4, 32], strides: [64, 1]
      : memref<?xf32> to memref<4x32xf32, strided<[64, 1], offset: ?>>
  memref.copy %src, %tile : memref<4x32xf32, strided<[64, 1], offset: ?>> to memref<4x32xf32>
  return
}

// -----

// A run-time row length (the tile's pitch of 64 can hold vectors): n / 16 * 16 columns
// in vectors (the end computed once, before the rows), the rest of each row one by
// one; the length is the view's size.

// CHECK-LABEL: func.func @masked
// CHECK:       %[[DST:.*]] = memref.subview
// CHECK:       %[[N:.*]] = memref.dim %[[DST]], %c1
// CHECK:       %[[Q:.*]] = arith.divsi %[[N]], %c16
// CHECK-NEXT:  %[[END:.*]] = arith.muli %[[Q]], %c16
// CHECK:       scf.for %[[R:.*]] = %{{.*}} to %c4
// CHECK-NEXT:    scf.for %[[C:.*]] = %{{.*}} to %[[END]] step %c16 {
// CHECK-NEXT:      vector.load %{{.*}}[%[[R]], %[[C]]]
// CHECK-NEXT:      vector.store
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %[[K:.*]] = %[[END]] to %[[N]] step
// CHECK-NEXT:      %[[X:.*]] = memref.load %{{.*}}[%[[R]], %[[K]]]
// CHECK-NEXT:      memref.store %[[X]], %[[DST]][%[[R]], %[[K]]]
func.func @masked(%x: memref<?xf32>, %n: index) {
  %tile = memref.alloc() : memref<4x64xf32>
  %src = memref.reinterpret_cast %x to offset: [0], sizes: [4, %n], strides: [%n, 1]
      : memref<?xf32> to memref<4x?xf32, strided<[?, 1]>>
  %dst = memref.subview %tile[0, 0] [4, %n] [1, 1] : memref<4x64xf32> to memref<4x?xf32, strided<[64, 1]>>
  memref.copy %src, %dst : memref<4x?xf32, strided<[?, 1]>> to memref<4x?xf32, strided<[64, 1]>>
  return
}

// -----

// 64 work-items: a copy from global memory into a tile that every work-item reaches
// stays a copy, marked as the work-group's async copy, of one row where both sides
// are one dense block by their types (one async copy, not one per row); the copy in
// work-item 0's section is its own, and one dense block too: one row of 32, two
// vectors.

// CHECK-LABEL: func.func @shared
// CHECK:       %[[ROW:.*]] = memref.collapse_shape %reinterpret_cast {{\[}}[0, 1]] : memref<4x8xf32, strided<[8, 1]>> into memref<32xf32, strided<[1]>>
// CHECK-NEXT:  %[[TILE_ROW:.*]] = memref.collapse_shape %alloc {{\[}}[0, 1]] : memref<4x8xf32> into memref<32xf32>
// CHECK-NEXT:  memref.copy %[[ROW]], %[[TILE_ROW]] {opencl.async_work_group_copy}
// CHECK:       scf.if
// CHECK-NEXT:    %[[SRC:.*]] = memref.collapse_shape %alloc {{\[}}[0, 1]] : memref<4x8xf32> into memref<32xf32>
// CHECK-NEXT:    %[[DST:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0, 1]] : memref<4x8xf32, strided<[8, 1]>> into memref<32xf32, strided<[1]>>
// CHECK-NOT:     gpu.barrier
// CHECK:         scf.for %[[C:.*]] = %{{.*}} to %c32 step %c16 {
// CHECK-NEXT:      %[[V:.*]] = vector.load %[[SRC]][%[[C]]]
// CHECK-NEXT:      vector.store %[[V]], %[[DST]][%[[C]]]
// CHECK-NEXT:    }
// CHECK-NEXT:  } {opencl.single_work_item}
func.func @shared(%x: memref<?xf32>) attributes {opencl.local_size = array<i64: 64, 1, 1>} {
  %c0 = arith.constant 0 : index
  %tile = memref.alloc() : memref<4x8xf32>
  %src = memref.reinterpret_cast %x to offset: [0], sizes: [4, 8], strides: [8, 1]
      : memref<?xf32> to memref<4x8xf32, strided<[8, 1]>>
  memref.copy %src, %tile : memref<4x8xf32, strided<[8, 1]>> to memref<4x8xf32>
  %t = gpu.thread_id x
  %first = arith.cmpi eq, %t, %c0 : index
  scf.if %first {
    memref.copy %tile, %src : memref<4x8xf32> to memref<4x8xf32, strided<[8, 1]>>
  } {opencl.single_work_item}
  return
}

// -----

// 64 work-items: a copy between two tiles that every work-item reaches is shared
// between barriers (work-item w moves elements w, w + 64, ... of the 4x8 block, split
// row-major); f16 rows from global memory convert 16 elements per vector in any group
// (each work-item moves them all).

// CHECK-LABEL: func.func @tiles
// CHECK:       gpu.barrier
// CHECK:       %[[TX:.*]] = gpu.thread_id  x
// CHECK:       %[[LID:.*]] = arith.addi %[[TX]]
// CHECK:       %[[W:.*]] = arith.muli %block_dim_x
// CHECK:       scf.for %[[E:.*]] = %[[LID]] to %c32 step %[[W]] {
// CHECK-NEXT:    %[[J:.*]] = arith.remsi %[[E]], %c8
// CHECK-NEXT:    %[[I:.*]] = arith.divsi %[[E]], %c8
// CHECK-NEXT:    %[[X:.*]] = memref.load %alloc[%[[I]], %[[J]]]
// CHECK-NEXT:    memref.store %[[X]], %alloc_0[%[[I]], %[[J]]]
// CHECK-NEXT:  }
// CHECK-NEXT:  gpu.barrier
// CHECK-NOT:   memref.copy
// CHECK:       scf.for %[[R:.*]] = %{{.*}} to %c2
// CHECK-NEXT:    scf.for %[[C:.*]] = %{{.*}} to %c16 step %c16 {
// CHECK-NEXT:      %[[V:.*]] = vector.load %{{.*}}[%[[R]], %[[C]]] : memref<2x16xf16, strided<[64, 1]>>, vector<16xf16>
// CHECK-NEXT:      vector.store %[[V]], %alloc_1[%[[R]], %[[C]]]
func.func @tiles(%x: memref<?xf16>) attributes {opencl.local_size = array<i64: 64, 1, 1>} {
  %a = memref.alloc() : memref<4x8xf32>
  %b = memref.alloc() : memref<4x8xf32>
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  %h = memref.alloc() : memref<2x16xf16>
  %src = memref.reinterpret_cast %x to offset: [0], sizes: [2, 16], strides: [64, 1]
      : memref<?xf16> to memref<2x16xf16, strided<[64, 1]>>
  memref.copy %src, %h : memref<2x16xf16, strided<[64, 1]>> to memref<2x16xf16>
  return
}

// -----

// One work-item per group: a tile into a dense global block is one row of 32 (two
// vectors); rows of 8 out of a wider global block are too short for vectors: the
// work-group's async copy.

// CHECK-LABEL: func.func @merged
// CHECK:       %[[SRC:.*]] = memref.collapse_shape %alloc {{\[}}[0, 1]] : memref<4x8xf32> into memref<32xf32>
// CHECK-NEXT:  %[[DST:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0, 1]] : memref<4x8xf32, strided<[8, 1], offset: ?>> into memref<32xf32, strided<[1], offset: ?>>
// CHECK:       scf.for %[[C:.*]] = %{{.*}} to %c32 step %c16 {
// CHECK-NEXT:    %[[V:.*]] = vector.load %[[SRC]][%[[C]]]
// CHECK-NEXT:    vector.store %[[V]], %[[DST]][%[[C]]]
// CHECK-NEXT:  }
// CHECK:       memref.copy %{{.*}}, %alloc {opencl.async_work_group_copy} : memref<4x8xf32, strided<[32, 1], offset: ?>> to memref<4x8xf32>
func.func @merged(%x: memref<?xf32>, %off: index) {
  %tile = memref.alloc() : memref<4x8xf32>
  %dst = memref.reinterpret_cast %x to offset: [%off], sizes: [4, 8], strides: [8, 1]
      : memref<?xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
  memref.copy %tile, %dst : memref<4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
  %short = memref.reinterpret_cast %x to offset: [%off], sizes: [4, 8], strides: [32, 1]
      : memref<?xf32> to memref<4x8xf32, strided<[32, 1], offset: ?>>
  memref.copy %short, %tile : memref<4x8xf32, strided<[32, 1], offset: ?>> to memref<4x8xf32>
  return
}

// -----

// A dense block of a run-time number of bf16 rows (no vector form): element loops over
// the views as they are, no collapsed view left behind.

// CHECK-LABEL: func.func @no_vector_form
// CHECK-NOT:   memref.collapse_shape
// CHECK:       %[[N:.*]] = memref.dim %{{.*}}, %c0
// CHECK:       scf.for %[[R:.*]] = %{{.*}} to %[[N]]
// CHECK-NEXT:    scf.for %[[C:.*]] = %{{.*}} to %c8
// CHECK-NEXT:      %[[X:.*]] = memref.load %{{.*}}[%[[R]], %[[C]]]
// CHECK-NEXT:      memref.store %[[X]], %{{.*}}[%[[R]], %[[C]]]
// CHECK-NOT:   memref.collapse_shape
func.func @no_vector_form(%n: index) {
  %a = memref.alloc() : memref<4x8xbf16>
  %b = memref.alloc() : memref<4x8xbf16>
  %sa = memref.subview %a[0, 0] [%n, 8] [1, 1] : memref<4x8xbf16> to memref<?x8xbf16, strided<[8, 1]>>
  %sb = memref.subview %b[0, 0] [%n, 8] [1, 1] : memref<4x8xbf16> to memref<?x8xbf16, strided<[8, 1]>>
  memref.copy %sa, %sb : memref<?x8xbf16, strided<[8, 1]>> to memref<?x8xbf16, strided<[8, 1]>>
  return
}
