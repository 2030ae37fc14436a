// PASS: work-group-sharing,canonicalize,cse
// CONFIG: work_items=128
// Loops distributed over the 128 work-items of a work-group (work_group_sharing.py,
// then canonicalize and cse as the pipeline runs them).

// A tile only its owners touch becomes each work-item's private array; the loops that
// index it count their rounds from 0 (1024 iterations, one per work-item and round:
// 8 rounds of 128, all full, no bounds check), the array indexed by the round: constants
// once a GPU compiler unrolls the rounds. The lanes of a round take consecutive
// elements, lid + 128 * round (coalesced).

// CHECK-LABEL: func.func @even
// CHECK:       %[[MINE:.*]] = memref.alloca() : memref<8xf32>
// CHECK-NEXT:  scf.for %[[K:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:    %[[ROUND:.*]] = arith.muli %[[K]], %c128 : index
// CHECK-NEXT:    %[[I:.*]] = arith.addi %[[ROUND]], %thread_id_x : index
// CHECK-NEXT:    %[[X:.*]] = memref.load %arg0[%[[I]]]
// CHECK-NEXT:    %[[Y:.*]] = arith.addf %[[X]], %{{.*}} : f32
// CHECK-NEXT:    memref.store %[[Y]], %[[MINE]][%[[K]]]
// CHECK-NEXT:  }
// CHECK-NEXT:  scf.for %[[K:.*]] = %c0 to %c8 step %c1 {
// CHECK:           memref.load %[[MINE]][%[[K]]]
// CHECK-NOT:   gpu.barrier
// CHECK:       return
func.func @even(%out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  %one = arith.constant 1.0 : f32
  %p = memref.alloc() : memref<1024xf32>
  scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
    %x = memref.load %out[%i] : memref<?xf32>
    %y = arith.addf %x, %one : f32
    memref.store %y, %p[%i] : memref<1024xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
    %y = memref.load %p[%i] : memref<1024xf32>
    %z = arith.mulf %y, %y : f32
    memref.store %z, %out[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----
// Without a private array the loop keeps its strided form: 300 iterations, the
// work-item's first at lid, then every 128.

// CHECK-LABEL: func.func @uneven
// CHECK:       scf.for %[[I:.*]] = %thread_id_x to %c300 step %c128 {
// CHECK-NEXT:    memref.store %{{.*}}, %arg0[%[[I]]]
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
// A copy between two 8x64 tiles in a loop's body (copy_loops.py, then distributed):
// element lid, lid + 128, ..., row-major, as the loop that fills the source tile
// distributes it, so each work-item copies what it wrote (no barrier between the two);
// one barrier before work-item 0 reads an element of the copy.

// CHECK-LABEL: func.func @spread
// CHECK:       %[[A:.*]] = memref.alloc() : memref<8x64xf32>
// CHECK-NEXT:  %[[B:.*]] = memref.alloc() : memref<8x64xf32>
// CHECK-NOT:   memref.copy
// CHECK:       memref.store %{{.*}}, %[[A]]
// CHECK-NEXT:  }
// CHECK-NEXT:  scf.for %[[I:.*]] = %thread_id_x to %c512 step %c128 {
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
