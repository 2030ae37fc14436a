// PASS: work-group-sharing,canonicalize,cse
// CONFIG: work_items=128 quirks=barrier_in_fill_branch
// On Intel's runtime, whose compiler crashes on values a work-item keeps across
// barriers at the end of partial tiles' fill branches (quirk barrier_in_fill_branch,
// triton_spirv/target.py), the barrier after a partial tile's fill stays after its
// branch (work_group_barriers.py, _barriers_in_branches);
// work_group_copy_barriers.mlir has the plain form.

// CHECK-LABEL: func.func @fill_in_branch
// CHECK:       scf.if
// CHECK-NOT:   gpu.barrier
// CHECK:       memref.store %{{.*}}, %alloc
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  gpu.barrier {opencl.local_fence}
// CHECK-NEXT:  memref.copy %{{.*}} {opencl.copy_barriers_placed}
// CHECK-NOT:   gpu.barrier
// CHECK:       return

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
