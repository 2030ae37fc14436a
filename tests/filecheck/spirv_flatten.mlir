// PASS: spirv-flatten
// Views become index arithmetic on their root buffers (flatten.py): a load through a
// reinterpret_cast and a subview reads the argument at offset + i*stride + j; a
// work-group tile becomes a flat array in workgroup memory (OpenCL address space 3),
// a private array (alloca) one in Function storage; vector accesses get the element's
// alignment.

// CHECK-LABEL: func.func @views
// CHECK-NOT:   memref.reinterpret_cast
// CHECK-NOT:   memref.subview
// CHECK-DAG:   %[[TILE:.*]] = memref.alloc() : memref<32xf32, 3>
// CHECK-DAG:   %[[MINE:.*]] = memref.alloca() : memref<4xf32, #spirv.storage_class<Function>>
// CHECK:       %[[ROW:.*]] = arith.muli %arg2, %c16
// CHECK-NEXT:  %[[AT:.*]] = arith.addi %arg1, %[[ROW]]
// CHECK:       %[[E:.*]] = arith.addi %{{.*}}, %c2
// CHECK-NEXT:  %[[X:.*]] = memref.load %arg0[%[[E]]] : memref<?xf32>
// CHECK:       memref.store %[[X]], %[[TILE]][%{{.*}}] : memref<32xf32, 3>
// CHECK:       vector.load %[[TILE]][%{{.*}}] {alignment = 4 : i64} : memref<32xf32, 3>, vector<4xf32>
// CHECK:       vector.store %{{.*}}, %[[MINE]][%{{.*}}] {alignment = 4 : i64}
// CHECK-NOT:   memref.dealloc
func.func @views(%x: memref<?xf32>, %off: index, %row: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %view = memref.reinterpret_cast %x to offset: [%off], sizes: [4, 8], strides: [16, 1]
      : memref<?xf32> to memref<4x8xf32, strided<[16, 1], offset: ?>>
  %tile = memref.alloc() : memref<4x8xf32>
  %mine = memref.alloca() : memref<4xf32>
  %part = memref.subview %view[%row, 0] [1, 8] [1, 1]
      : memref<4x8xf32, strided<[16, 1], offset: ?>> to memref<8xf32, strided<[1], offset: ?>>
  %v = memref.load %part[%c2] : memref<8xf32, strided<[1], offset: ?>>
  memref.store %v, %tile[%c2, %c0] : memref<4x8xf32>
  %w = vector.load %tile[%c2, %c0] : memref<4x8xf32>, vector<4xf32>
  vector.store %w, %mine[%c0] : memref<4xf32>, vector<4xf32>
  memref.dealloc %tile : memref<4x8xf32>
  return
}

// -----

// Accesses on the kernel's own buffers and no views: nothing to rewrite.

// CHECK-LABEL: func.func @flat
// CHECK-NEXT:  %[[V:.*]] = memref.load %arg0[%arg1] : memref<?xi32>
// CHECK-NEXT:  memref.store %[[V]], %arg0[%arg1] : memref<?xi32>
// CHECK-NEXT:  return
func.func @flat(%x: memref<?xi32>, %i: index) {
  %v = memref.load %x[%i] : memref<?xi32>
  memref.store %v, %x[%i] : memref<?xi32>
  return
}
