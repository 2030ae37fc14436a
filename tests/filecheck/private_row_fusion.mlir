// PASS: private-row-fusion
// CONFIG: work_items=128
// Private row fusion (private_row_fusion.py): a work-item's loops over the rounds of its
// private rows (a masked load's zero fill and copy, the sum, the store) become one loop,
// the fill's branch inside it, and each private tile one row.

// CHECK-LABEL: func.func @vector_add
// CHECK-DAG:   %[[X:.*]] = memref.alloca() : memref<1x4xf32>
// CHECK-DAG:   %[[SUM:.*]] = memref.alloca() : memref<1x4xf32>
// CHECK:       scf.for %[[R:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:    scf.if %{{.*}} {
// CHECK-NEXT:      vector.store %{{.*}}, %[[X]][%[[ZERO:.*]], %c0]
// CHECK:         vector.load %{{.*}}[%{{.*}}] : memref<1024xf32
// CHECK:         vector.store %{{.*}}, %[[X]][%[[ZERO]], %c0]
// CHECK:         vector.load %[[X]][%[[ZERO]], %c0]
// CHECK:         vector.store %{{.*}}, %[[SUM]][%[[ROW:.*]], %c0]
// CHECK:         vector.load %[[SUM]][%[[ROW]], %c0]
// CHECK:         vector.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<1024xf32
// CHECK-NEXT:  }
// CHECK-NOT:   scf.for
// CHECK:       return
func.func @vector_add(%x: memref<1024xf32>, %out: memref<1024xf32>, %partial: i1, %lid: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant dense<0.0> : vector<4xf32>
  %x_tile = memref.alloca() : memref<2x4xf32>
  scf.if %partial {
    scf.for %r = %c0 to %c2 step %c1 {
      vector.store %zero, %x_tile[%r, %c0] : memref<2x4xf32>, vector<4xf32>
    }
  }
  scf.for %r = %c0 to %c2 step %c1 {
    %0 = arith.muli %r, %c128 : index
    %1 = arith.addi %0, %lid : index
    %2 = arith.muli %1, %c4 : index
    %v = vector.load %x[%2] : memref<1024xf32>, vector<4xf32>
    vector.store %v, %x_tile[%r, %c0] : memref<2x4xf32>, vector<4xf32>
  }
  %sum = memref.alloca() : memref<2x4xf32>
  scf.for %r = %c0 to %c2 step %c1 {
    %a = vector.load %x_tile[%r, %c0] : memref<2x4xf32>, vector<4xf32>
    %s = arith.addf %a, %a : vector<4xf32>
    vector.store %s, %sum[%r, %c0] : memref<2x4xf32>, vector<4xf32>
  }
  scf.for %r = %c0 to %c2 step %c1 {
    %0 = arith.muli %r, %c128 : index
    %1 = arith.addi %0, %lid : index
    %2 = arith.muli %1, %c4 : index
    %s = vector.load %sum[%r, %c0] : memref<2x4xf32>, vector<4xf32>
    vector.store %s, %out[%2] : memref<1024xf32>, vector<4xf32>
  }
  return
}

// A buffer that one loop writes and another reads (here `out`, stored then loaded
// back) keeps the loops apart: a work-item's global accesses keep their order.
// CHECK-LABEL: func.func @store_then_load_back
// CHECK:       scf.for
// CHECK:       scf.for
// CHECK:       return
func.func @store_then_load_back(%out: memref<1024xf32>, %lid: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %t = memref.alloca() : memref<2x4xf32>
  %u = memref.alloca() : memref<2x4xf32>
  scf.for %r = %c0 to %c2 step %c1 {
    %i = arith.muli %r, %c4 : index
    %v = vector.load %t[%r, %c0] : memref<2x4xf32>, vector<4xf32>
    vector.store %v, %out[%i] : memref<1024xf32>, vector<4xf32>
  }
  scf.for %r = %c0 to %c2 step %c1 {
    %i = arith.muli %r, %c4 : index
    %v = vector.load %out[%i] : memref<1024xf32>, vector<4xf32>
    vector.store %v, %t[%r, %c0] : memref<2x4xf32>, vector<4xf32>
  }
  return
}

// A private tile read at another row than the round's (a shifted read) keeps the loops
// apart; so does a barrier between them.
// CHECK-LABEL: func.func @shifted_row
// CHECK:       scf.for
// CHECK:       scf.for
// CHECK:       return
func.func @shifted_row(%out: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %cst = arith.constant dense<1.0> : vector<4xf32>
  %t = memref.alloca() : memref<3x4xf32>
  scf.for %r = %c0 to %c2 step %c1 {
    vector.store %cst, %t[%r, %c0] : memref<3x4xf32>, vector<4xf32>
  }
  scf.for %r = %c0 to %c2 step %c1 {
    %next = arith.addi %r, %c1 : index
    %v = vector.load %t[%next, %c0] : memref<3x4xf32>, vector<4xf32>
    vector.store %v, %out[%c0] : memref<1024xf32>, vector<4xf32>
  }
  return
}

// CHECK-LABEL: func.func @barrier_between
// CHECK:       scf.for
// CHECK:       gpu.barrier
// CHECK:       scf.for
// CHECK:       return
func.func @barrier_between(%out: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %cst = arith.constant dense<1.0> : vector<4xf32>
  %t = memref.alloca() : memref<2x4xf32>
  scf.for %r = %c0 to %c2 step %c1 {
    vector.store %cst, %t[%r, %c0] : memref<2x4xf32>, vector<4xf32>
  }
  gpu.barrier
  scf.for %r = %c0 to %c2 step %c1 {
    %v = vector.load %t[%r, %c0] : memref<2x4xf32>, vector<4xf32>
    vector.store %v, %out[%c0] : memref<1024xf32>, vector<4xf32>
  }
  return
}
