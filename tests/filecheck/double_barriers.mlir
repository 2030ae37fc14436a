// PASS: double-barriers
// CONFIG: work_items=128 quirks=barrier_in_uniform_branch
// Quirk barrier_in_uniform_branch (triton_spirv/target.py; work_group_barriers.py): in a
// branch of an scf.if that holds barriers, every barrier is followed by a second one
// (also in loops inside the branch); barriers outside such branches stay single.

// CHECK-LABEL: func.func @branch
// CHECK:       gpu.barrier
// CHECK-NEXT:  memref.store
// CHECK-NEXT:  scf.if
// CHECK-NEXT:    memref.store
// CHECK-NEXT:    gpu.barrier
// CHECK-NEXT:    gpu.barrier
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      gpu.barrier
// CHECK-NEXT:      gpu.barrier
// CHECK-NEXT:      memref.load
// CHECK:       } else {
// CHECK-NEXT:    memref.store
// CHECK-NEXT:  }
// CHECK-NEXT:  gpu.barrier
// CHECK-NEXT:  return
func.func @branch(%c: i1, %tile: memref<128xf32>, %n: index) {
  %i = arith.constant 0 : index
  %one = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  gpu.barrier
  memref.store %f, %tile[%i] : memref<128xf32>
  scf.if %c {
    memref.store %f, %tile[%i] : memref<128xf32>
    gpu.barrier
    scf.for %k = %i to %n step %one {
      gpu.barrier
      %x = memref.load %tile[%k] : memref<128xf32>
    }
  } else {
    memref.store %f, %tile[%one] : memref<128xf32>
  }
  gpu.barrier
  return
}
