// PASS: barrier-before-uniform-loops
// CONFIG: work_items=128 quirks=uniform_loop_after_branch
// Quirk uniform_loop_after_branch (PoCL): a loop without barriers whose bounds are the
// same for every work-item, entered after a branch on the work-item with no barrier
// between, gets a local-fence barrier before it (PoCL's implicit loop barriers lose the
// branch's private results otherwise: tests/test_pocl_f32_attention_reduced.py).
// Not after a uniform branch (%flag), not inside the distributed loop (not every
// work-item reaches it).
// CHECK-LABEL: func.func @k
// CHECK:       gpu.barrier
// CHECK-NEXT:  scf.for %{{.*}} = %{{.*}} to %c16 step %c128
// CHECK:       gpu.barrier {opencl.local_fence}
// CHECK-NEXT:  scf.for %{{.*}} = %c0 to %c8 step %c1
// CHECK:       gpu.barrier
// CHECK-NEXT:  scf.if %arg1
// CHECK:       }
// CHECK-NEXT:  scf.for %{{.*}} = %c0 to %c16 step %c1
// CHECK:       scf.if
// CHECK:       gpu.barrier {opencl.local_fence}
// CHECK-NEXT:  scf.for %{{.*}} = %c0 to %c128 step %c1
func.func @k(%out: memref<?xf32>, %flag: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %lid = gpu.thread_id x
  gpu.barrier
  scf.for %j = %lid to %c16 step %c128 {
    memref.store %one, %out[%j] : memref<?xf32>
    scf.for %k = %c0 to %c8 step %c1 {
      memref.store %one, %out[%k] : memref<?xf32>
    }
  }
  scf.for %j = %c0 to %c8 step %c1 {
    memref.store %two, %out[%j] : memref<?xf32>
  }
  gpu.barrier
  scf.if %flag {
    memref.store %one, %out[%c0] : memref<?xf32>
  }
  scf.for %j = %c0 to %c16 step %c1 {
    memref.store %two, %out[%j] : memref<?xf32>
  }
  %first = arith.cmpi ult, %lid, %c8 : index
  scf.if %first {
    memref.store %one, %out[%lid] : memref<?xf32>
  }
  scf.for %j = %c0 to %c128 step %c1 {
    memref.store %two, %out[%j] : memref<?xf32>
  }
  return
}
// -----
// Kernels without barriers get none: PoCL adds implicit loop barriers only to kernels
// holding barriers.
// CHECK-LABEL: func.func @no_barriers
// CHECK-NOT:   gpu.barrier
func.func @no_barriers(%out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %one = arith.constant 1.0 : f32
  %lid = gpu.thread_id x
  %first = arith.cmpi ult, %lid, %c8 : index
  scf.if %first {
    memref.store %one, %out[%lid] : memref<?xf32>
  }
  scf.for %j = %c0 to %c128 step %c1 {
    memref.store %one, %out[%j] : memref<?xf32>
  }
  return
}
