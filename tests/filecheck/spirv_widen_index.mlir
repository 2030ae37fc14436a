// PASS: spirv-widen-index
// `index` becomes i64 (index_width.py): arguments, constants, loops, arithmetic; it
// stays only where an op requires it: the accesses' indices (a cast right before) and
// the gpu id ops (a cast right after).

// CHECK-LABEL: func.func @k(%arg0: memref<?xf32>, %arg1: i64)
// CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : i64
// CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : i64
// CHECK:       %[[B:.*]] = gpu.block_id  x
// CHECK-NEXT:  %[[BW:.*]] = arith.index_cast %[[B]] : index to i64
// CHECK-NEXT:  scf.for %[[I:.*]] = %[[C0]] to %arg1 step %[[C1]]  : i64 {
// CHECK-NEXT:    %[[J:.*]] = arith.addi %[[I]], %[[BW]] : i64
// CHECK-NEXT:    %[[JX:.*]] = arith.index_cast %[[J]] : i64 to index
// CHECK-NEXT:    %[[V:.*]] = memref.load %arg0[%[[JX]]] : memref<?xf32>
// CHECK-NEXT:    %[[IX:.*]] = arith.index_cast %[[I]] : i64 to index
// CHECK-NEXT:    memref.store %[[V]], %arg0[%[[IX]]] : memref<?xf32>
func.func @k(%x: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = gpu.block_id x
  scf.for %i = %c0 to %n step %c1 {
    %j = arith.addi %i, %b : index
    %v = memref.load %x[%j] : memref<?xf32>
    memref.store %v, %x[%i] : memref<?xf32>
  }
  return
}

// -----

// index_cast between an integer and an index: an extension, a truncation or nothing.

// CHECK-LABEL: func.func @casts
// CHECK-NEXT:  %[[W:.*]] = arith.extsi %arg0 : i32 to i64
// CHECK-NEXT:  %[[U:.*]] = arith.extui %arg0 : i32 to i64
// CHECK-NEXT:  %[[S:.*]] = arith.addi %[[W]], %[[U]] : i64
// CHECK-NEXT:  %[[T:.*]] = arith.trunci %[[S]] : i64 to i32
// CHECK-NEXT:  return %[[T]], %arg1 : i32, i64
func.func @casts(%a: i32, %b: i64) -> (i32, i64) {
  %i = arith.index_cast %a : i32 to index
  %u = arith.index_castui %a : i32 to index
  %s = arith.addi %i, %u : index
  %t = arith.index_cast %s : index to i32
  %same = arith.index_cast %b : i64 to index
  %back = arith.index_cast %same : index to i64
  return %t, %back : i32, i64
}
