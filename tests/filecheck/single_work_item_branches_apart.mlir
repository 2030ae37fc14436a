// PASS: work-group-sharing,canonicalize,cse
// CONFIG: work_items=64 quirks=uniform_branches_in_work_item_branch
// On a device that runs the branches on uniform conditions inside a branch on the
// work-item on every work-item (quirk uniform_branches_in_work_item_branch,
// triton_spirv/target.py), a single-work-item section's conditional writes are
// sections of their own, guarded by `lid == 0 & condition` (single_work_item.py);
// unconditional writes beside them keep one section.

// CHECK-LABEL: func.func @masked_counts
// CHECK:       %[[LID:.*]] = gpu.thread_id x
// CHECK:       %[[FIRST:.*]] = arith.cmpi eq, %[[LID]], %c0
// CHECK:       %[[POSITIVE:.*]] = arith.andi %[[FIRST]], %arg1
// CHECK:       scf.if %[[POSITIVE]] {
// CHECK-NEXT:    memref.atomic_rmw addi
// CHECK-NEXT:  } {opencl.single_work_item}
// CHECK:       %[[NEGATIVE:.*]] = arith.andi %[[FIRST]], %arg2
// CHECK:       scf.if %[[NEGATIVE]] {
// CHECK-NEXT:    memref.atomic_rmw addi
// CHECK-NEXT:  } {opencl.single_work_item}
// CHECK:       scf.if %[[FIRST]] {
// CHECK-NEXT:    memref.store
// CHECK-NEXT:    memref.store
// CHECK-NEXT:  } {opencl.single_work_item}
// CHECK:       return

func.func @masked_counts(%counts: memref<?xi32>, %positive: i1, %negative: i1, %total: f32,
                         %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  scf.if %positive {
    %old = memref.atomic_rmw addi %one, %counts[%c0] : (i32, memref<?xi32>) -> i32
  }
  scf.if %negative {
    %old = memref.atomic_rmw addi %one, %counts[%c1] : (i32, memref<?xi32>) -> i32
  }
  memref.store %total, %out[%c0] : memref<?xf32>
  memref.store %total, %out[%c1] : memref<?xf32>
  return
}
