// PASS: branch-barrier-splitting
// CONFIG: work_items=128 quirks=barrier_in_uniform_branch
// Quirk barrier_in_uniform_branch (triton_spirv/target.py; branch_barrier_splitting.py):
// an scf.if holding barriers is split at them. The stretches of both branches between
// barriers pair up in guarded scf.ifs (a branch with no work at a point: the guard is
// on the negation), the paired barriers become one with the wider fence, values a
// stretch passes on leave its scf.if as results, buffers and their views move before
// the branch, and the branch's results are selects.

// CHECK-LABEL: func.func @early_return
// CHECK:       %[[NOT:.*]] = arith.xori %[[C:.*]], %true
// CHECK-NEXT:  scf.if %[[NOT]] {
// CHECK-NEXT:    memref.store
// CHECK-NEXT:  }
// CHECK-NEXT:  gpu.barrier
// CHECK-NOT:   opencl.local_fence
// CHECK-NEXT:  scf.if %[[NOT]] {
// CHECK-NEXT:    memref.load
// CHECK-NEXT:    memref.store
// CHECK-NEXT:  }
// CHECK-NEXT:  return
func.func @early_return(%c: i1, %tile: memref<128xf32>, %out: memref<128xf32>) {
  %i = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  scf.if %c {
    gpu.barrier {opencl.local_fence}
  } else {
    memref.store %f, %tile[%i] : memref<128xf32>
    gpu.barrier
    %x = memref.load %tile[%i] : memref<128xf32>
    memref.store %x, %out[%i] : memref<128xf32>
  }
  return
}

// CHECK-LABEL: func.func @passed_on
// CHECK:       %[[ALLOC:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:  %[[R:.*]]:2 = scf.if %[[C:.*]] -> (f32, f32) {
// CHECK:         %[[T:.*]] = memref.load
// CHECK-NEXT:    memref.store %{{.*}}, %[[ALLOC]]
// CHECK:         scf.yield %[[T]], %{{.*}} : f32, f32
// CHECK-NEXT:  } else {
// CHECK:         %[[E:.*]] = arith.addf
// CHECK:         scf.yield %{{.*}}, %[[E]] : f32, f32
// CHECK-NEXT:  }
// CHECK-NEXT:  gpu.barrier {opencl.local_fence}
// CHECK-NEXT:  scf.if %[[C]] {
// CHECK-NEXT:    memref.load %[[ALLOC]]
// CHECK-NEXT:    memref.store %[[R]]#0
// CHECK-NEXT:  }
// CHECK-NEXT:  %[[S:.*]] = arith.select %[[C]], %[[R]]#0, %[[R]]#1 : f32
// CHECK-NEXT:  return %[[S]]
func.func @passed_on(%c: i1, %tile: memref<128xf32>, %f: f32) -> f32 {
  %i = arith.constant 0 : index
  %r = scf.if %c -> f32 {
    %t = memref.load %tile[%i] : memref<128xf32>
    %a = memref.alloc() : memref<4xf32>
    memref.store %t, %a[%i] : memref<4xf32>
    gpu.barrier {opencl.local_fence}
    %u = memref.load %a[%i] : memref<4xf32>
    memref.store %t, %tile[%i] : memref<128xf32>
    scf.yield %t : f32
  } else {
    %e = arith.addf %f, %f : f32
    gpu.barrier {opencl.local_fence}
    scf.yield %e : f32
  }
  return %r : f32
}

// A loop holding barriers leaves the branch with no trip where it is not taken; the
// branches' items then follow each other.
// CHECK-LABEL: func.func @loop
// CHECK:       scf.if %[[C:[^ ]*]] {
// CHECK-NEXT:    memref.store
// CHECK-NEXT:  }
// CHECK-NEXT:  %[[UB:.*]] = arith.select %[[C]], %[[N:.*]], %[[LB:.*]] : index
// CHECK-NEXT:  scf.for %{{.*}} = %[[LB]] to %[[UB]]
// CHECK-NEXT:    gpu.barrier
// CHECK-NEXT:    memref.load
// CHECK-NEXT:  }
// CHECK:       %[[NOT:.*]] = arith.xori %[[C]], %true
// CHECK-NEXT:  scf.if %[[NOT]] {
// CHECK-NEXT:    memref.store
// CHECK-NEXT:  }
// CHECK-NEXT:  return
func.func @loop(%c: i1, %tile: memref<128xf32>, %n: index) {
  %i = arith.constant 0 : index
  %one = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.if %c {
    memref.store %f, %tile[%i] : memref<128xf32>
    scf.for %k = %i to %n step %one {
      gpu.barrier
      %x = memref.load %tile[%k] : memref<128xf32>
    }
  } else {
    memref.store %f, %tile[%one] : memref<128xf32>
  }
  return
}

// A branch whose buffer's shape needs a value it loads keeps its barriers (the
// double-barriers pass handles it).
// CHECK-LABEL: func.func @loaded_shape
// CHECK:       scf.if
// CHECK-NEXT:    memref.load
// CHECK-NEXT:    arith.index_cast
// CHECK-NEXT:    memref.alloc
// CHECK-NEXT:    gpu.barrier
func.func @loaded_shape(%c: i1, %sizes: memref<4xi32>) {
  %i = arith.constant 0 : index
  scf.if %c {
    %s = memref.load %sizes[%i] : memref<4xi32>
    %n = arith.index_cast %s : i32 to index
    %a = memref.alloc(%n) : memref<?xf32>
    gpu.barrier
    %x = memref.load %a[%i] : memref<?xf32>
  }
  return
}

// An i1 crosses a barrier as an i8 (PoCL loses a `bool` both branches set).
// CHECK-LABEL: func.func @flag
// CHECK:       %[[R:.*]] = scf.if %[[C:.*]] -> (i8) {
// CHECK:         %[[W:.*]] = arith.extui %{{.*}} : i1 to i8
// CHECK:         scf.yield %[[W]] : i8
// CHECK:       } else {
// CHECK:       %[[F:.*]] = arith.trunci %[[R]] : i8 to i1
// CHECK-NEXT:  gpu.barrier
// CHECK-NEXT:  scf.if %[[C]] {
// CHECK-NEXT:    scf.if %[[F]] {
func.func @flag(%c: i1, %lid: index, %tile: memref<128xf32>) {
  %i = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  scf.if %c {
    %first = arith.cmpi eq, %lid, %i : index
    gpu.barrier
    scf.if %first {
      memref.store %f, %tile[%i] : memref<128xf32>
    }
  }
  return
}
