// PASS: uniform-full-rows
// CONFIG: work_items=128
// Uniform full rows (uniform_full_rows.py): a loop over a work-item's private rows whose
// rounds test `row end <= extent` gets a version for `extent == C` (the group decides
// alike): there each test is its vector arm, the partial tile's zero fill is gone and
// the private rows are arrays of its own; the loop as it was runs otherwise.

// CHECK-LABEL: func.func @vector_add
// CHECK:       %[[FULL:.*]] = arith.cmpi eq, %[[EXTENT:.*]], %c1024
// CHECK:       scf.if %[[FULL]] {
// CHECK-NEXT:    scf.for
// CHECK-NOT:       scf.if
// CHECK:           vector.load %{{.*}} : memref<1024xf32
// CHECK-NEXT:      vector.store %{{.*}}, %[[OWN:.*]][%c0, %c0] : memref<1x4xf32>
// CHECK-NEXT:      vector.load %[[OWN]][%c0, %c0]
// CHECK-NOT:       scf.if
// CHECK:         }
// CHECK-NEXT:  } else {
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      scf.if %{{.*}} {
// CHECK:           scf.if %{{.*}} {
// CHECK:           } else {
// CHECK:             scf.for
func.func @vector_add(%x: memref<1024xf32>, %out: memref<1024xf32>, %mask_bound: index) attributes {opencl.local_size = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant dense<0.0> : vector<4xf32>
  %lid = gpu.thread_id x
  %t = memref.alloca() : memref<1x4xf32>
  %clamped = arith.maxsi %mask_bound, %c0 : index
  %extent = arith.minsi %clamped, %c1024 : index
  %partial = arith.cmpi ne, %extent, %c1024 : index
  scf.for %r = %c0 to %c2 step %c1 {
    scf.if %partial {
      vector.store %zero, %t[%c0, %c0] : memref<1x4xf32>, vector<4xf32>
    }
    %0 = arith.muli %r, %c128 : index
    %1 = arith.addi %0, %lid : index
    %2 = arith.muli %1, %c4 : index
    %3 = arith.addi %2, %c4 : index
    %row_in = arith.cmpi sle, %3, %extent : index
    scf.if %row_in {
      %v = vector.load %x[%2] : memref<1024xf32>, vector<4xf32>
      vector.store %v, %t[%c0, %c0] : memref<1x4xf32>, vector<4xf32>
    } else {
      scf.for %j = %c0 to %c4 step %c1 {
        %e = arith.addi %2, %j : index
        %in = arith.cmpi slt, %e, %extent : index
        scf.if %in {
          %s = memref.load %x[%e] : memref<1024xf32>
          memref.store %s, %t[%c0, %j] : memref<1x4xf32>
        }
      }
    }
    %w = vector.load %t[%c0, %c0] : memref<1x4xf32>, vector<4xf32>
    vector.store %w, %out[%2] : memref<1024xf32>, vector<4xf32>
  }
  return
}

// Rows that can pass the tile's end (3 rounds of 128 x 4 against 1024 elements) are
// not known to be full when the extent is: no version.
// CHECK-LABEL: func.func @rows_past_the_tile
// CHECK-NOT:   arith.cmpi eq
// CHECK:       return
func.func @rows_past_the_tile(%x: memref<1536xf32>, %mask_bound: index) attributes {opencl.local_size = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %c1024 = arith.constant 1024 : index
  %lid = gpu.thread_id x
  %t = memref.alloca() : memref<1x4xf32>
  %extent = arith.minsi %mask_bound, %c1024 : index
  scf.for %r = %c0 to %c3 step %c1 {
    %0 = arith.muli %r, %c128 : index
    %1 = arith.addi %0, %lid : index
    %2 = arith.muli %1, %c4 : index
    %3 = arith.addi %2, %c4 : index
    %row_in = arith.cmpi sle, %3, %extent : index
    scf.if %row_in {
      %v = vector.load %x[%2] : memref<1536xf32>, vector<4xf32>
      vector.store %v, %t[%c0, %c0] : memref<1x4xf32>, vector<4xf32>
    } else {
      %v = vector.load %x[%c0] : memref<1536xf32>, vector<4xf32>
      vector.store %v, %t[%c0, %c0] : memref<1x4xf32>, vector<4xf32>
    }
  }
  return
}

// A private array read after the loop (`kept`) stays the one both versions write; the
// row only the loop uses (`t`) gets a copy in the full tiles' version.
// CHECK-LABEL: func.func @kept_after_the_loop
// CHECK-DAG:   %[[KEPT:.*]] = memref.alloca() {{.*}}memref<2xf32>
// CHECK-DAG:   %[[T:.*]] = memref.alloca() : memref<1x4xf32>
// CHECK-DAG:   %[[OWN:.*]] = memref.alloca() : memref<1x4xf32>
// CHECK:       scf.if
// CHECK:         vector.store %{{.*}}, %[[OWN]][%c0, %c0]
// CHECK:         memref.store %{{.*}}, %[[KEPT]][%{{.*}}]
// CHECK:       } else {
// CHECK:         memref.store %{{.*}}, %[[KEPT]][%{{.*}}]
// CHECK:       memref.load %[[KEPT]][%c0]
func.func @kept_after_the_loop(%x: memref<1024xf32>, %out: memref<1xf32>, %mask_bound: index) attributes {opencl.local_size = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %c1024 = arith.constant 1024 : index
  %lid = gpu.thread_id x
  %kept = memref.alloca() {alignment = 4 : i64} : memref<2xf32>
  %t = memref.alloca() : memref<1x4xf32>
  %extent = arith.minsi %mask_bound, %c1024 : index
  scf.for %r = %c0 to %c2 step %c1 {
    %0 = arith.muli %r, %c128 : index
    %1 = arith.addi %0, %lid : index
    %2 = arith.muli %1, %c4 : index
    %3 = arith.addi %2, %c4 : index
    %row_in = arith.cmpi sle, %3, %extent : index
    scf.if %row_in {
      %v = vector.load %x[%2] : memref<1024xf32>, vector<4xf32>
      vector.store %v, %t[%c0, %c0] : memref<1x4xf32>, vector<4xf32>
    } else {
      %v = vector.load %x[%c0] : memref<1024xf32>, vector<4xf32>
      vector.store %v, %t[%c0, %c0] : memref<1x4xf32>, vector<4xf32>
    }
    %s = memref.load %t[%c0, %c1] : memref<1x4xf32>
    memref.store %s, %kept[%r] : memref<2xf32>
  }
  %k = memref.load %kept[%c0] : memref<2xf32>
  memref.store %k, %out[%c0] : memref<1xf32>
  return
}

// A loop holding a barrier is not versioned: both versions would hold it, barriers in
// the arms of a uniform branch.
// CHECK-LABEL: func.func @barrier_in_the_loop
// CHECK-NOT:   arith.cmpi eq
// CHECK:       return
func.func @barrier_in_the_loop(%x: memref<1024xf32>, %mask_bound: index) attributes {opencl.local_size = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %c1024 = arith.constant 1024 : index
  %lid = gpu.thread_id x
  %t = memref.alloca() : memref<1x4xf32>
  %extent = arith.minsi %mask_bound, %c1024 : index
  scf.for %r = %c0 to %c2 step %c1 {
    %0 = arith.muli %r, %c128 : index
    %1 = arith.addi %0, %lid : index
    %2 = arith.muli %1, %c4 : index
    %3 = arith.addi %2, %c4 : index
    %row_in = arith.cmpi sle, %3, %extent : index
    scf.if %row_in {
      %v = vector.load %x[%2] : memref<1024xf32>, vector<4xf32>
      vector.store %v, %t[%c0, %c0] : memref<1x4xf32>, vector<4xf32>
    } else {
      %v = vector.load %x[%c0] : memref<1024xf32>, vector<4xf32>
      vector.store %v, %t[%c0, %c0] : memref<1x4xf32>, vector<4xf32>
    }
    gpu.barrier
  }
  return
}
