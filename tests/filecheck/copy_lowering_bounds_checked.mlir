// PASS: copy-lowering
// CONFIG: bounds_check=true
// Copies of bounds-checked kernels (memref_stage/copy_lowering.py): no vector rows,
// whose accesses the emitter could only check as a whole; a copy between global
// memory and a tile stays the work-group's async copy (the emitter clamps its count),
// the rest are element loops.

// CHECK-LABEL: func.func @rows
// CHECK-NOT:   vector.
// CHECK:       memref.copy %{{.*}}, %alloc {opencl.async_work_group_copy}
// CHECK:       scf.for %[[R:.*]] = %{{.*}} to %c4
// CHECK-NEXT:    scf.for %[[C:.*]] = %{{.*}} to %c32
// CHECK-NEXT:      %[[X:.*]] = memref.load %alloc[%[[R]], %[[C]]]
// CHECK-NEXT:      memref.store %[[X]], %alloc_0[%[[R]], %[[C]]]
// CHECK-NOT:   vector.
func.func @rows(%x: memref<?xf32>, %off: index) {
  %tile = memref.alloc() : memref<4x32xf32>
  %src = memref.reinterpret_cast %x to offset: [%off], sizes: [4, 32], strides: [64, 1]
      : memref<?xf32> to memref<4x32xf32, strided<[64, 1], offset: ?>>
  memref.copy %src, %tile : memref<4x32xf32, strided<[64, 1], offset: ?>> to memref<4x32xf32>
  %other = memref.alloc() : memref<4x32xf32>
  memref.copy %tile, %other : memref<4x32xf32> to memref<4x32xf32>
  return
}
