// PASS: work-group-sharing
// Loops distributed over the 128 work-items of a work-group (work_group_sharing.py,
// then canonicalize and cse as the pipeline runs them) count their rounds from 0:
// `for k < ceil(total / (128 * chunk))`, the work-item's chunk starting at
// `(k * 128 + lid) * chunk`. A static trip count lets a GPU compiler unroll the rounds.

// 1024 iterations in chunks of 4: 2 rounds of 512, both full (no bounds check).

// CHECK-LABEL: func.func @even
// CHECK:       %[[START:.*]] = arith.muli %thread_id_x, %c4 : index
// CHECK-NEXT:  scf.for %[[K:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:    %[[ROUND:.*]] = arith.muli %[[K]], %c512 : index
// CHECK-NEXT:    %[[BASE:.*]] = arith.addi %[[ROUND]], %[[START]] : index
// CHECK-NEXT:    scf.for %[[J:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:      %[[I:.*]] = arith.addi %[[BASE]], %[[J]] : index
// CHECK-NEXT:      %[[X:.*]] = memref.load %arg0[%[[I]]]
// CHECK-NEXT:      %[[Y:.*]] = arith.addf %[[X]], %{{.*}} : f32
// CHECK-NEXT:      memref.store %[[Y]], %arg0[%[[I]]]
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NEXT:  return
func.func @even(%out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
    %x = memref.load %out[%i] : memref<?xf32>
    %y = arith.addf %x, %one : f32
    memref.store %y, %out[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----
// 300 iterations in chunks of 2: 2 rounds of 256; in the second, only the work-items
// whose chunk starts below 300 (128 * 2 does not divide 300).

// CHECK-LABEL: func.func @uneven
// CHECK:       %[[START:.*]] = arith.muli %thread_id_x, %c2 : index
// CHECK-NEXT:  scf.for %[[K:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:    %[[ROUND:.*]] = arith.muli %[[K]], %c256 : index
// CHECK-NEXT:    %[[BASE:.*]] = arith.addi %[[ROUND]], %[[START]] : index
// CHECK-NEXT:    %[[INSIDE:.*]] = arith.cmpi slt, %[[BASE]], %c300 : index
// CHECK-NEXT:    scf.if %[[INSIDE]] {
// CHECK-NEXT:      scf.for %[[J:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:        %[[I:.*]] = arith.addi %[[BASE]], %[[J]] : index
// CHECK-NEXT:        memref.store %{{.*}}, %arg0[%[[I]]]
func.func @uneven(%out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c300 = arith.constant 300 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c300) step (%c1) {
    memref.store %one, %out[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----
// A copy between two 8x64 tiles in a loop's body (copy_loops.py, then distributed in
// chunks of one element): 4 rounds of 128 elements, element k * 128 + lid, row-major,
// between the barriers its neighbours need.

// CHECK-LABEL: func.func @spread
// CHECK:       %[[A:.*]] = memref.alloc() : memref<8x64xf32>
// CHECK-NEXT:  %[[B:.*]] = memref.alloc() : memref<8x64xf32>
// CHECK-NOT:   memref.copy
// CHECK:       memref.store %{{.*}}, %[[A]]
// CHECK-NEXT:  }
// CHECK-NEXT:  gpu.barrier
// CHECK-NEXT:  scf.for %[[K:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:    %[[ROUND:.*]] = arith.muli %[[K]], %c128 : index
// CHECK-NEXT:    %[[I:.*]] = arith.addi %[[ROUND]], %thread_id_x : index
// CHECK-NEXT:    %[[COL:.*]] = arith.remui %[[I]], %c64 : index
// CHECK-NEXT:    %[[ROW:.*]] = arith.divui %[[I]], %c64 : index
// CHECK-NEXT:    %[[X:.*]] = memref.load %[[A]][%[[ROW]], %[[COL]]]
// CHECK-NEXT:    memref.store %[[X]], %[[B]][%[[ROW]], %[[COL]]]
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  gpu.barrier
// CHECK-NOT:   memref.copy
func.func @spread(%out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<8x64xf32>
  %b = memref.alloc() : memref<8x64xf32>
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.for %r = %c0 to %c4 step %c1 {
    scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c64) step (%c1, %c1) {
      memref.store %zero, %a[%i, %j] : memref<8x64xf32>
      scf.reduce
    }
    memref.copy %a, %b : memref<8x64xf32> to memref<8x64xf32>
  }
  %x = memref.load %b[%c1, %c1] : memref<8x64xf32>
  memref.store %x, %out[%c0] : memref<?xf32>
  return
}
