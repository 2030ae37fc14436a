// PASS: work-group-sharing,canonicalize,cse
// CONFIG: work_items=128
// The barriers of async work-group copies (work_group_barriers.py): the analysis puts a
// barrier before a copy only where an access pending there conflicts with it (none at
// the group's start), none after it (the emitter's wait_group_events completes it for
// every work-item), and marks the copy `opencl.copy_barriers_placed` so that the
// emitter adds none of its own. A barrier that only the accesses of a branch without an
// else need (a partial tile's fill) goes to that branch's end; what was written before
// the branch stays pending after it (the work-groups that skip the branch skip that
// barrier) and gets a barrier of its own where it is read.

// CHECK-LABEL: func.func @copy_at_start
// CHECK-NOT:   gpu.barrier
// CHECK:       memref.copy %{{.*}} {opencl.copy_barriers_placed}
// CHECK-NOT:   gpu.barrier
// CHECK:       memref.load %alloc
// CHECK-LABEL: func.func @fill_in_branch
// CHECK:       scf.if
// CHECK:       memref.store %{{.*}}, %alloc
// CHECK:       gpu.barrier {opencl.local_fence}
// CHECK-NEXT:  }
// CHECK-NOT:   gpu.barrier
// CHECK:       memref.copy %{{.*}} {opencl.copy_barriers_placed}
// CHECK-NOT:   gpu.barrier
// CHECK:       memref.load %alloc
// CHECK-LABEL: func.func @written_before_fill_in_branch
// CHECK:       memref.store %{{.*}}, %alloc[%{{.*}}] : memref<128xi32>
// CHECK:       scf.if
// CHECK:       gpu.barrier {opencl.local_fence}
// CHECK-NEXT:  }
// CHECK:       memref.copy %{{.*}} {opencl.copy_barriers_placed}
// CHECK:       gpu.barrier {opencl.local_fence}
// CHECK:       memref.load %alloc[%{{.*}}] : memref<128xi32>
// CHECK-LABEL: func.func @reads_then_copy
// CHECK:       memref.load %alloc
// CHECK:       gpu.barrier
// CHECK-NEXT:  memref.copy %{{.*}} {opencl.copy_barriers_placed}
// CHECK-NOT:   gpu.barrier
// CHECK:       return

func.func @copy_at_start(%x: memref<256xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c255 = arith.constant 255 : index
  %c256 = arith.constant 256 : index
  %t = memref.alloc() : memref<256xf32>
  memref.copy %x, %t : memref<256xf32> to memref<256xf32>
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    %j = arith.subi %c255, %i : index
    %v = memref.load %t[%j] : memref<256xf32>
    memref.store %v, %out[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

func.func @fill_in_branch(%x: memref<256xf32>, %out: memref<?xf32>, %partial: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c255 = arith.constant 255 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<256xf32>
  scf.if %partial {
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      memref.store %zero, %t[%i] : memref<256xf32>
      scf.reduce
    }
  }
  memref.copy %x, %t : memref<256xf32> to memref<256xf32>
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    %j = arith.subi %c255, %i : index
    %v = memref.load %t[%j] : memref<256xf32>
    memref.store %v, %out[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

func.func @written_before_fill_in_branch(%x: memref<256xf32>, %out: memref<?xf32>,
                                         %idx: memref<?xi32>, %partial: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c127 = arith.constant 127 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %rows = memref.alloc() : memref<128xi32>
  scf.parallel (%i) = (%c0) to (%c128) step (%c1) {
    %f = arith.index_cast %i : index to i32
    memref.store %f, %rows[%i] : memref<128xi32>
    scf.reduce
  }
  %t = memref.alloc() : memref<256xf32>
  scf.if %partial {
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      memref.store %zero, %t[%i] : memref<256xf32>
      scf.reduce
    }
  }
  memref.copy %x, %t : memref<256xf32> to memref<256xf32>
  scf.parallel (%i) = (%c0) to (%c128) step (%c1) {
    %j = arith.subi %c127, %i : index
    %r = memref.load %rows[%j] : memref<128xi32>
    %v = memref.load %t[%i] : memref<256xf32>
    memref.store %v, %out[%i] : memref<?xf32>
    memref.store %r, %idx[%i] : memref<?xi32>
    scf.reduce
  }
  return
}

func.func @reads_then_copy(%x: memref<256xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %t = memref.alloc() : memref<256xf32>
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    %v = memref.load %t[%i] : memref<256xf32>
    memref.store %v, %out[%i] : memref<?xf32>
    scf.reduce
  }
  memref.copy %x, %t : memref<256xf32> to memref<256xf32>
  return
}
