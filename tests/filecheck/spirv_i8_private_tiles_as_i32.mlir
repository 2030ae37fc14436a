// PASS: spirv-i8-private-tiles-as-i32
// Quirk i8_private_arrays (Intel's CPU runtime loses the stores of kernels reading
// Function-storage i8 arrays; private_bytes.py; the stage runs this step only for
// targets with the quirk): a private i8 array only loaded and stored holds i32, its
// stores widen (extui), its loads narrow (trunci).

// CHECK-LABEL: func.func @private_bytes
// CHECK:       %[[A:.*]] = memref.alloca() : memref<4xi32, #spirv.storage_class<Function>>
// CHECK-NEXT:  %[[W:.*]] = arith.extui %arg1 : i8 to i32
// CHECK-NEXT:  memref.store %[[W]], %[[A]][%arg2]
// CHECK-NEXT:  %[[L:.*]] = memref.load %[[A]][%arg2]
// CHECK-NEXT:  %[[N:.*]] = arith.trunci %[[L]] : i32 to i8
// CHECK-NEXT:  memref.store %[[N]], %arg0[%arg2] : memref<?xi8>
func.func @private_bytes(%x: memref<?xi8>, %v: i8, %i: index) {
  %a = memref.alloca() : memref<4xi8, #spirv.storage_class<Function>>
  memref.store %v, %a[%i] : memref<4xi8, #spirv.storage_class<Function>>
  %l = memref.load %a[%i] : memref<4xi8, #spirv.storage_class<Function>>
  memref.store %l, %x[%i] : memref<?xi8>
  return
}

// -----

// Work-group i8 tiles (alloc) and i16 private arrays stay.

// CHECK-LABEL: func.func @others
// CHECK:       memref.alloc() : memref<4xi8, 3>
// CHECK:       memref.alloca() : memref<4xi16, #spirv.storage_class<Function>>
// CHECK-NOT:   arith.extui
// CHECK-NOT:   arith.trunci
func.func @others(%v: i8, %w: i16, %i: index) {
  %t = memref.alloc() : memref<4xi8, 3>
  memref.store %v, %t[%i] : memref<4xi8, 3>
  %a = memref.alloca() : memref<4xi16, #spirv.storage_class<Function>>
  memref.store %w, %a[%i] : memref<4xi16, #spirv.storage_class<Function>>
  return
}
